"""What stays in evals/ is what a maintainer reruns: every module imports (no retired harness left
behind as an import), says in its docstring what it measures, and is listed in evals/README.md; at most
two cross-validation experiments (``evals/cv_*.py``) are kept, and one current result per command."""

from __future__ import annotations

import importlib
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(p.stem for p in (ROOT / "evals").glob("*.py") if p.stem != "__init__")
HELPERS = {"slide_designs"}  # imported by other evals, not run on their own


@pytest.mark.parametrize("name", MODULES)
def test_every_evals_module_imports_and_says_what_it_measures(name):
    module = importlib.import_module(f"evals.{name}")
    assert (module.__doc__ or "").strip(), f"evals/{name}.py has no docstring"


def test_every_runnable_evals_module_is_in_the_evals_readme():
    readme = (ROOT / "evals" / "README.md").read_text()
    assert [n for n in MODULES if n not in HELPERS and f"evals.{n}`" not in readme
            and f"evals.{n} " not in readme] == []


def test_experiments_are_retired_once_finished():
    assert len(list((ROOT / "evals").glob("cv_*.py"))) <= 2
    tracked = subprocess.run(["git", "ls-files", "evals/results"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    # one current result per command, under 20 files (fields, heldout and examprep keep two each;
    # evals.disfluency prints its report, which takes seconds to make again)
    assert 0 < len(tracked) < 20, tracked
