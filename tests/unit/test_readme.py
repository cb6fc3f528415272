"""The README tells the truth about what it lists: every ``Settings`` field and every variable read
straight from the environment has a row in its settings table (the latter naming the module that
reads it), ``Settings`` declares no field twice, and the pictures it shows exist."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

from pydantic import AliasChoices

from lecturecopilot.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
ENV_READ = re.compile(r"""os\.environ(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]+)["']""")
SH_READ = re.compile(r"\$\{(LC_[A-Z0-9_]+)")  # ${LC_X:-default} in the shell scripts


def settings_rows() -> list[tuple[list[str], str]]:
    """The rows of the README's "Settings" table: (variable names in the first cell, whole row)."""
    section = README.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|") and not line.startswith("|---")][1:]
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
    assert missing == [], f"Settings fields with no row in README's settings table: {missing}"


def test_variables_read_outside_settings_are_in_the_table_with_their_module():
    found = {}
    for path in [*(ROOT / "lecturecopilot").rglob("*.py"), *(ROOT / "services").rglob("*.py"),
                 *(ROOT / "scripts").glob("*.sh")]:
        pattern = SH_READ if path.suffix == ".sh" else ENV_READ
        for var in pattern.findall(path.read_text()):
            found.setdefault(var, set()).add(path.relative_to(ROOT).as_posix())
    assert {"OTEL_EXPORTER_OTLP_ENDPOINT", "LC_LOG_FORMAT", "LC_APT_LOCK_TIMEOUT_S"} <= set(found)  # the scan sees them
    wrong = {var: sorted(mods) for var, mods in found.items()
             if not (row := documented(var)) or not all(f"`{m}`" in row for m in mods)}
    assert wrong == {}, f"read from the environment, but no README row naming the module: {wrong}"


def test_settings_declares_no_field_twice():
    tree = ast.parse((ROOT / "lecturecopilot" / "settings.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Settings")
    names = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


def test_readme_pictures_exist():
    pictures = re.findall(r"""(?:\]\(|src=")(docs/screenshots/[^)"]+\.png)""", README)
    assert pictures, "no screenshot in the README"
    assert [p for p in pictures if not (ROOT / p).is_file()] == []
    top = README.split("\n## ", 1)[0]
    assert any(p in top for p in pictures), "no screenshot before the first section"
