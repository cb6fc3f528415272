"""Writes docs/settings.md, the table of every setting, from ``lecturecopilot.settings.Settings``
(variables, defaults) and the rows of scripts/settings_rows.py (grouping, meaning), adding the
modules that read the variables read straight from the environment. Fails (ValueError) when a field or
such a variable has no row, or a row names neither. ``--check`` writes nothing and exits 1 when the
committed page differs (tests/unit/test_docs_pages.py).

Usage: python scripts/gen_settings_doc.py [--check] [--out PATH]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from docgen import HEADER, ROOT, cell, run  # noqa: E402
from settings_rows import EXTERNAL, ROWS  # noqa: E402

OUT = ROOT / "docs" / "settings.md"
ENV_READ = re.compile(r"""os\.environ(?:\.get\(|\[)\s*["']([A-Z][A-Z0-9_]+)["']""")
SH_READ = re.compile(r"\$\{(LC_[A-Z0-9_]+)")  # ${LC_X:-default} in the shell scripts
INTRO = """# Settings

All from the environment, read by the one typed `Settings` in `lecturecopilot/settings.py` (prefix `LC_`)
unless the row names the module that reads it. Defaults are the code's own.

| variable | default | meaning |
|---|---|---|
"""


def environment_reads() -> dict[str, list[str]]:
    """Variables the code reads straight from the environment (``os.environ``, ``${LC_…}`` in the
    shell scripts) → the files that read each, relative to the repository."""
    found: dict[str, set[str]] = {}
    for path in [*(ROOT / "lecturecopilot").rglob("*.py"), *(ROOT / "lecturecopilot_ops").rglob("*.py"),
                 *(ROOT / "services").rglob("*.py"),
                 *(ROOT / "scripts").glob("*.sh")]:
        pattern = SH_READ if path.suffix == ".sh" else ENV_READ
        for var in pattern.findall(path.read_text()):
            found.setdefault(var, set()).add(path.relative_to(ROOT).as_posix())
    return {var: sorted(files) for var, files in found.items()}


def variables(name: str, field) -> list[str]:
    """The variables that set a field: its aliases but the ``LC_``-prefixed spare, else ``LC_<NAME>``."""
    from pydantic import AliasChoices

    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        names = [str(a) for a in alias.choices]
        return [a for a in names if a != f"LC_{name.upper()}"] or names
    return [alias] if isinstance(alias, str) else [f"LC_{name.upper()}"]


def shown(value) -> str:
    """A default as the page shows it: ``None`` and ``""`` are "unset", whole floats lose their ``.0``."""
    if value is None or value == "":
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    return f"`{value}`"


def render() -> str:
    """The whole page; raises ValueError when the rows and the code disagree."""
    from lecturecopilot.settings import Settings

    fields, reads = Settings.model_fields, environment_reads()
    named = [n for names, _ in ROWS for n in names]
    unknown = [n for n in named if n not in fields and n not in EXTERNAL]
    missing = [n for n in fields if n not in named] + [v for v in reads if v not in named]
    unlisted = [v for v in reads if v not in EXTERNAL] + [v for v in EXTERNAL if v not in named]
    if unknown or missing or unlisted or len(named) != len(set(named)):
        raise ValueError(f"settings rows: unknown {unknown}, missing {missing}, not in EXTERNAL or in no row "
                         f"{unlisted}, repeated {sorted({n for n in named if named.count(n) > 1})}")
    lines = []
    for names, meaning in ROWS:
        variables_ = [v for n in names for v in (variables(n, fields[n]) if n in fields else [n])]
        defaults = [shown(fields[n].default) if n in fields else EXTERNAL[n] for n in names]
        modules = sorted({m for n in names for m in reads.get(n, [])})
        where = f"read in {', '.join(f'`{m}`' for m in modules)}: " if modules else ""
        lines.append(f"| {' / '.join(f'`{v}`' for v in variables_)} | {cell(' / '.join(defaults))} "
                     f"| {cell(where + meaning)} |")
    return HEADER.format(script="scripts/gen_settings_doc.py") + INTRO + "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(run(render, OUT, __doc__.splitlines()[0]))
