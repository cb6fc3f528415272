"""The README is the front door: short, the screenshot before the first section, the two commands a
fresh machine needs, and links that lead somewhere. What it used to hold lives in docs/ (the docs site)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_readme_pictures_exist():
    pictures = re.findall(r"""(?:\]\(|src=")(docs/screenshots/[^)"]+\.png)""", README)
    assert pictures, "no screenshot in the README"
    assert [p for p in pictures if not (ROOT / p).is_file()] == []
    top = README.split("\n## ", 1)[0]
    assert any(p in top for p in pictures), "no screenshot before the first section"


def test_the_readme_stays_a_front_door():
    assert len(README.encode()) < 15_000, "README.md over 15,000 bytes: move the detail into docs/"
    top = README.split("\n## ", 1)[0]
    commands = re.search(r"```bash\n(.*?)```", top, re.S).group(1)
    assert [line.split()[:2] for line in commands.splitlines()] == [["make", "demo"], ["make", "test"]]


def test_every_relative_link_of_the_readme_exists():
    links = [t.split("#", 1)[0] for t in re.findall(r"\]\(([^)]+)\)", README) if "://" not in t]
    assert "docs/usage.md" in links and "docs/settings.md" in links
    assert [t for t in links if t and not (ROOT / t).exists()] == []
