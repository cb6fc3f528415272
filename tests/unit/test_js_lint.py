"""The web client's JavaScript passes ESLint (``eslint.config.js``: the recommended rules, and
no-undef with the browser's globals from the ``globals`` package). ESLint is the one pinned in
package-lock.json, installed into node_modules by ``scripts/setup.sh --test`` (``npm ci``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ESLINT = ROOT / "node_modules" / "eslint" / "bin" / "eslint.js"
STATIC_JS = ROOT / "services" / "gateway" / "static"


def eslint(*args: str, stdin: str | None = None) -> list[dict]:
    """ESLint's JSON report (one entry per file linted) for ``args``, run from the repository root
    with its ``eslint.config.js``; fails the test when ESLint or Node is missing or ESLint itself fails."""
    node = shutil.which("node")
    if node is None or not ESLINT.exists():
        pytest.fail(f"node or {ESLINT.relative_to(ROOT)} missing: run scripts/setup.sh --test (make setup-test)")
    out = subprocess.run([node, str(ESLINT), "--format", "json", *args], cwd=ROOT, input=stdin,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode in (0, 1), out.stderr  # 1: problems found; 2: ESLint could not run
    return json.loads(out.stdout)


def problems(report: list[dict]) -> list[str]:
    """Every error in ``report`` as ``file:line:column rule message``."""
    return [f"{Path(f['filePath']).relative_to(ROOT)}:{m['line']}:{m['column']} {m.get('ruleId')} {m['message']}"
            for f in report for m in f["messages"] if m["severity"] == 2]


def test_the_web_client_passes_eslint():
    report = eslint(str(STATIC_JS.relative_to(ROOT)))
    linted = {Path(f["filePath"]).relative_to(STATIC_JS).as_posix() for f in report}
    assert {"js/main.js", "js/util.js", "js/ask.js", "js/player.js"} <= linted  # the modules are really read
    assert problems(report) == []


def test_eslint_catches_an_undefined_name_but_knows_the_browser():
    """The config applies to the client's modules: a name no module defines or imports is an error,
    the browser's globals (document, EventSource, ...) are not, nor an imported name."""
    code = ('import { api } from "./util.js";\n'
            "document.title = String(new EventSource('/x').readyState) + location.pathname;\n"
            "api(selectLecture);\n")
    report = eslint("--stdin", "--stdin-filename", "services/gateway/static/js/probe.js", stdin=code)
    assert [(m["ruleId"], m["line"]) for m in report[0]["messages"]] == [("no-undef", 3)]
    assert "selectLecture" in report[0]["messages"][0]["message"]
