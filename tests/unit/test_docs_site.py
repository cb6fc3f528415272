"""The docs site (mkdocs.yml, docs/) builds with ``mkdocs build --strict``: a broken link, a link to a
missing anchor, or a page left out of the nav is a warning, and a warning fails the build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build(project: Path, out: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of ``project`` into ``out`` (Material's end-of-life banner silenced)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(project / "mkdocs.yml"),
                           "-d", str(out)], capture_output=True, text=True, timeout=300, env=env)


def test_the_docs_site_builds_strictly(tmp_path):
    r = build(ROOT, tmp_path / "site")
    log = r.stdout + r.stderr
    assert r.returncode == 0 and "WARNING" not in log, log
    for page in ("index.html", "settings/index.html", "api/index.html", "experiments/index.html"):
        assert (tmp_path / "site" / page).is_file(), page


def test_a_broken_link_fails_the_strict_build(tmp_path):
    shutil.copytree(ROOT / "docs", tmp_path / "docs", ignore=shutil.ignore_patterns("screenshots"))
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    with (tmp_path / "docs" / "usage.md").open("a") as f:
        f.write("\nSee [the missing page](no-such-page.md).\n")
    r = build(tmp_path, tmp_path / "site")
    assert r.returncode != 0 and "no-such-page.md" in r.stdout + r.stderr, r.stdout + r.stderr
