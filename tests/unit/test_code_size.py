"""Size limits of the code (issue 14): no function in ``services/``, ``lecturecopilot/`` or ``lecturecopilot_ops/`` over
:data:`MAX_FUNCTION_LINES` lines and no module over :data:`MAX_MODULE_LINES`, generated code
(``*_pb2*.py``) aside. A function's length is ``end_lineno - lineno + 1`` of its AST node
(decorators not counted, its docstring and nested functions counted). The web client's JavaScript
(every ``*.js`` under :data:`PACKAGES`: the ES modules in ``services/gateway/static/js``) is held to
the same module limit (issue 32)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("services", "lecturecopilot", "lecturecopilot_ops")
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400
EXEMPT: tuple[str, ...] = ()  # folders not yet held to the limits (none)


def _modules() -> list[Path]:
    """The Python modules checked: every ``*.py`` under :data:`PACKAGES`, less generated code and
    :data:`EXEMPT` folders."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "_pb2" in path.name or any(rel == e or rel.startswith(e + "/") for e in EXEMPT):
                continue
            found.append(path)
    return found


def _js_modules() -> list[Path]:
    """The JavaScript files checked: every ``*.js`` under :data:`PACKAGES`."""
    return [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.js"))]


def _oversized_js(path: Path, root: Path = ROOT) -> list[str]:
    """``path`` as ``file: module (n lines > limit)`` when it has over :data:`MAX_MODULE_LINES` lines, else nothing."""
    n = len(path.read_text().splitlines())
    return [f"{path.relative_to(root).as_posix()}: module ({n} lines > {MAX_MODULE_LINES})"] if n > MAX_MODULE_LINES else []


def _oversized(path: Path, root: Path = ROOT) -> list[str]:
    """``path``'s functions over the limit and the module itself if it is, as ``file:line name (n lines)``."""
    text = path.read_text()
    rel = path.relative_to(root).as_posix()
    found = []
    n_module = len(text.splitlines())
    if n_module > MAX_MODULE_LINES:
        found.append(f"{rel}: module ({n_module} lines > {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(text, filename=rel)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > MAX_FUNCTION_LINES:
                found.append(f"{rel}:{node.lineno} {node.name} ({n} lines > {MAX_FUNCTION_LINES})")
    return found


def test_the_walk_finds_the_code():
    names = {p.relative_to(ROOT).as_posix() for p in _modules()}
    assert "lecturecopilot_ops/stack.py" in names and "services/ingest/app.py" in names
    assert not any("_pb2" in n for n in names)
    assert "services/gateway/app.py" in names and "services/ask/answer.py" in names


def test_the_check_catches_a_long_function_and_module(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    f = tmp_path / "long.py"
    f.write_text(f"def short():\n    pass\n\n\ndef long():\n{body}\n" + "\n" * MAX_MODULE_LINES)
    assert _oversized(f, tmp_path) == [f"long.py: module ({MAX_MODULE_LINES + 65} lines > {MAX_MODULE_LINES})",
                                       f"long.py:5 long ({MAX_FUNCTION_LINES + 1} lines > {MAX_FUNCTION_LINES})"]


def test_the_walk_finds_the_web_client():
    names = {p.relative_to(ROOT).as_posix() for p in _js_modules()}
    assert {"services/gateway/static/js/main.js", "services/gateway/static/js/util.js"} <= names


def test_the_check_catches_a_long_js_module(tmp_path):
    f = tmp_path / "long.js"
    f.write_text("const x = 1;\n" * MAX_MODULE_LINES)
    assert _oversized_js(f, tmp_path) == []
    f.write_text("const x = 1;\n" * (MAX_MODULE_LINES + 1))
    assert _oversized_js(f, tmp_path) == [f"long.js: module ({MAX_MODULE_LINES + 1} lines > {MAX_MODULE_LINES})"]


def test_no_function_or_module_over_the_limits():
    found = [x for p in _modules() for x in _oversized(p)] + [x for p in _js_modules() for x in _oversized_js(p)]
    assert not found, "over the size limits (split into named steps):\n" + "\n".join(found)
