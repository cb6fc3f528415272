"""The generated docs pages tell the truth: docs/settings.md, docs/api.md and docs/events-reference.md
are what scripts/gen_settings_doc.py, gen_api_doc.py and gen_events_doc.py write from the code today
(``make docs-pages`` rewrites them), the settings page has a row for every ``Settings`` field and for every
variable read straight from the environment (naming the module that reads it), and ``Settings`` declares
no field twice."""

from __future__ import annotations

import ast
import difflib
import fnmatch
import importlib.util
import re
import sys
from pathlib import Path

import pytest
from pydantic import AliasChoices

from lecturecopilot.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SETTINGS_PAGE = ROOT / "docs" / "settings.md"
ENV_READ = re.compile(r"""os\.environ(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]+)["']""")
SH_READ = re.compile(r"\$\{(LC_[A-Z0-9_]+)")  # ${LC_X:-default} in the shell scripts
GENERATED = {"gen_settings_doc": "settings.md", "gen_api_doc": "api.md", "gen_events_doc": "events-reference.md"}


def generator(name: str):
    """scripts/<name>.py as a module (scripts/ is not a package)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "scripts"))


@pytest.mark.parametrize("script", sorted(GENERATED))
def test_the_generated_page_is_current(script):
    fresh = generator(script).render()
    committed = (ROOT / "docs" / GENERATED[script]).read_text()
    diff = "".join(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True),
                                        f"docs/{GENERATED[script]}", "generated", n=1))
    assert fresh == committed, f"docs/{GENERATED[script]} is out of date; run `make docs-pages`:\n{diff[:3000]}"


def test_the_settings_generator_refuses_a_field_without_a_row(monkeypatch):
    gen = generator("gen_settings_doc")
    monkeypatch.setattr(gen, "ROWS", [row for row in gen.ROWS if "gate_threshold" not in row[0]])
    with pytest.raises(ValueError, match="gate_threshold"):
        gen.render()


def settings_rows() -> list[tuple[list[str], str]]:
    """The rows of docs/settings.md's table: (variable names in the first cell, whole row)."""
    rows = [line for line in SETTINGS_PAGE.read_text().splitlines()
            if line.startswith("|") and not line.startswith("|---")][1:]
    return [(re.findall(r"`([A-Z][A-Z0-9_*]*)`", row.split("|")[1]), row) for row in rows]


def env_names(name: str, field) -> list[str]:
    """The environment variables pydantic-settings reads for a field (its aliases, else LC_<NAME>)."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(a) for a in alias.choices]
    return [alias] if isinstance(alias, str) else [f"LC_{name.upper()}"]


def documented(var: str) -> str | None:
    """The settings-table row naming ``var`` (``LC_ASK_LIMIT_*`` covers ``LC_ASK_LIMIT_USER``), or None."""
    return next((row for names, row in settings_rows() if any(fnmatch.fnmatchcase(var, n) for n in names)), None)


def test_the_settings_table_has_a_row_for_every_settings_field():
    assert len(settings_rows()) > 20
    missing = [name for name, field in Settings.model_fields.items()
               if not any(documented(v) for v in env_names(name, field))]
    assert missing == [], f"Settings fields with no row in docs/settings.md: {missing}"


def test_the_settings_table_shows_the_code_defaults():
    row = documented("LC_GATE_THRESHOLD")
    assert f"| {Settings.model_fields['gate_threshold'].default} / " in row, row
    assert "| 2147483648 / 7200 |" in documented("LC_MAX_UPLOAD_BYTES")


def test_variables_read_outside_settings_are_in_the_table_with_their_module():
    found = {}
    for path in [*(ROOT / "lecturecopilot").rglob("*.py"), *(ROOT / "lecturecopilot_ops").rglob("*.py"),
                 *(ROOT / "services").rglob("*.py"),
                 *(ROOT / "scripts").glob("*.sh")]:
        pattern = SH_READ if path.suffix == ".sh" else ENV_READ
        for var in pattern.findall(path.read_text()):
            found.setdefault(var, set()).add(path.relative_to(ROOT).as_posix())
    assert {"OTEL_EXPORTER_OTLP_ENDPOINT", "LC_LOG_FORMAT", "LC_APT_LOCK_TIMEOUT_S"} <= set(found)  # the scan sees them
    wrong = {var: sorted(mods) for var, mods in found.items()
             if not (row := documented(var)) or not all(f"`{m}`" in row for m in mods)}
    assert wrong == {}, f"read from the environment, but no docs/settings.md row naming the module: {wrong}"


def test_settings_declares_no_field_twice():
    tree = ast.parse((ROOT / "lecturecopilot" / "settings.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Settings")
    names = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []
