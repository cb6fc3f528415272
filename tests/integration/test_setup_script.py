"""scripts/setup.sh, run for real: its apt step waits for another package manager's locks (bounded),
and a second set-up (``make demo`` after ``make test``) installs nothing.

The apt tests point apt at a private copy of dpkg's state through ``APT_CONFIG`` (apt's own
way to read another configuration; ``Dir::State::status`` also moves dpkg's ``lock-frontend`` and
``lock`` next to it) with no package sources: apt-get then takes real fcntl locks and really
"installs" a package that is already there, without touching the machine's locks or packages.
The locks are held the way dpkg and apt hold them: ``fcntl`` F_SETLK write locks (``lockf``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "setup.sh"
HOLD = """
import fcntl, os, sys, time
fds = [os.open(p, os.O_RDWR | os.O_CREAT, 0o640) for p in sys.argv[2:]]
for fd in fds:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("held", flush=True)
time.sleep(float(sys.argv[1]))
"""


@pytest.fixture
def private_apt(tmp_path):
    """An ``APT_CONFIG`` whose dpkg state is a copy of this machine's (so ``wamerican``, which the
    set-up needs, is installed), with its own lists, cache and no sources; returns the env and the
    lock paths ``{"frontend", "dpkg", "lists"}``."""
    dpkg, lists, cache, parts = (tmp_path / n for n in ("dpkg", "lists", "cache", "sources.list.d"))
    for d in (dpkg, lists / "partial", cache / "archives" / "partial", parts):
        d.mkdir(parents=True)
    shutil.copy("/var/lib/dpkg/status", dpkg / "status")
    conf = tmp_path / "apt.conf"
    conf.write_text(f'Dir::State::status "{dpkg / "status"}";\nDir::State::Lists "{lists}";\n'
                    f'Dir::Cache "{cache}";\nDir::Etc::sourcelist "/dev/null";\nDir::Etc::sourceparts "{parts}";\n')
    env = {**os.environ, "APT_CONFIG": str(conf)}
    return env, {"frontend": dpkg / "lock-frontend", "dpkg": dpkg / "lock", "lists": lists / "lock"}


def hold(seconds: float, *paths: Path) -> subprocess.Popen:
    """A process holding fcntl write locks on ``paths`` for ``seconds``, once it has them."""
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(seconds), *map(str, paths)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def run_apt_step(env: dict, timeout_s: int, *pkgs: str) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    r = subprocess.run(["bash", str(SETUP), "--apt", *pkgs], env={**env, "LC_APT_LOCK_TIMEOUT_S": str(timeout_s)},
                       capture_output=True, text=True, timeout=120)
    return r, time.monotonic() - t0


def test_apt_step_waits_for_held_locks_then_installs(private_apt):
    env, locks = private_apt
    lists = hold(3, locks["lists"])  # another apt-get update
    dpkg = hold(8, locks["frontend"], locks["dpkg"])  # another apt-get install / unattended-upgrades
    try:
        r, took = run_apt_step(env, 60, "wamerican")
    finally:
        for p in (lists, dpkg):
            p.kill()
            p.wait()
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert took >= 7.5, took  # it waited for the holder, did not fail at once
    out = r.stdout
    assert "apt: installing wamerican" in out
    assert f"holds the lists lock; waiting up to 60 s: Could not get lock {locks['lists']}" in out, out
    assert f"holds the lock; waiting up to 60 s: Could not get lock {locks['frontend']}" in out, out
    assert f"held by process {dpkg.pid}" in out
    assert out.count("holds the lock; waiting") == 1  # said once, not once a second
    assert "gave up" not in r.stderr


def test_apt_step_gives_up_after_its_bound_with_a_clear_message(private_apt):
    env, locks = private_apt
    dpkg = hold(30, locks["frontend"], locks["dpkg"])
    try:
        r, took = run_apt_step(env, 2, "wamerican")
    finally:
        dpkg.kill()
        dpkg.wait()
    assert r.returncode != 0
    assert 1.5 <= took < 20, took
    assert "waiting up to 2 s" in r.stdout
    assert "apt: gave up after 2 s: another apt/dpkg still holds the package lock" in r.stderr, r.stderr


def test_second_set_up_installs_nothing():
    """``make test`` then ``make demo``: the base set-up after the test set-up finds everything
    installed (one stamp; the test extras include the base) and runs no pip; the test set-up
    again runs no npm either (node_modules has the lock file's linter)."""
    venv = ROOT / ".venv"
    assert Path(sys.prefix).resolve() == venv.resolve(), "run the tests from the set-up's .venv (make test)"
    runs = []
    for args in (["--test"], [], ["--test"]):  # make test, make demo, make test again
        r = subprocess.run(["bash", str(SETUP), *args], capture_output=True, text=True, timeout=1800)
        assert r.returncode == 0, (args, r.stdout, r.stderr)
        runs.append(r.stdout)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    for out in runs[1:]:
        assert "pip: installing" not in out and "pip: nothing to install" in out, out
        assert f"pyproject.toml {digest[:12]} with extras [deploy,test]" in out, out
    assert (venv / ".lc-installed").read_text().split() == [digest, "deploy,test"]
    assert "npm:" not in runs[1] and "npm: nothing to install" in runs[2], runs[2]
    lock = hashlib.sha256((ROOT / "package-lock.json").read_bytes()).hexdigest()
    assert (ROOT / "node_modules" / ".lc-lock").read_text().strip() == lock
