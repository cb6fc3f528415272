"""Size limits of the code (issue 14): no function in ``services/``, ``lecturecopilot/`` or ``lecturecopilot_ops/`` over
:data:`MAX_FUNCTION_LINES` lines and no module over :data:`MAX_MODULE_LINES`, generated code
(``*_pb2*.py``) aside. A function's length is ``end_lineno - lineno + 1`` of its AST node
(decorators not counted, its docstring and nested functions counted). The web client's JavaScript
(every ``*.js`` under :data:`PACKAGES`: the ES modules in ``services/gateway/static/js``) is held to
the same module limit (issue 32).

Shape limits (issue 32, item 4): no function takes over :data:`MAX_PARAMETERS` parameters and none
nests blocks deeper than :data:`MAX_NESTING`.

* Parameters: every name in the signature (positional-only, positional, keyword-only) counts one,
  ``*args`` counts one and ``**kwargs`` counts one; a leading ``self`` or ``cls`` is not counted.
* Nesting: each ``for``/``while``/``if``/``with``/``try``/``match`` block inside a function body is one
  level deeper than the block around it (``async for``/``async with``/``try``-``except*`` too); an
  ``elif`` chain is one level, not one per ``elif`` (an ``if`` written inside an ``else:`` is a level);
  ``else``/``except``/``finally``/``case`` bodies sit at their statement's level. A nested
  ``def``, ``lambda`` or ``class`` starts its own count (a nested function is checked on its own).

The shape limits hold everywhere, with no exceptions (the last ones, in ``services/ask/examprep/``,
became parameter objects and helpers)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("services", "lecturecopilot", "lecturecopilot_ops")
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400
MAX_PARAMETERS = 7
MAX_NESTING = 4
EXEMPT: tuple[str, ...] = ()  # folders not yet held to the limits (none)

_BLOCKS = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try, ast.TryStar, ast.Match)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


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


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many parameters ``fn`` takes, counted as the module docstring says."""
    a = fn.args
    positional = a.posonlyargs + a.args
    n = len(positional) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
    return n - 1 if positional and positional[0].arg in ("self", "cls") else n


def _is_elif(parent: ast.AST, child: ast.AST) -> bool:
    """Whether ``child`` is ``parent``'s ``elif`` (alone in its ``orelse`` and at its column, which an
    ``if`` indented under ``else:`` is not)."""
    return (isinstance(parent, ast.If) and isinstance(child, ast.If) and parent.orelse == [child]
            and child.col_offset == parent.col_offset)


def _nesting(node: ast.AST, level: int = 0) -> int:
    """The deepest block level inside ``node`` (0: no block), nested scopes left out."""
    deepest = level
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _SCOPES):
            continue
        inner = level + 1 if isinstance(child, _BLOCKS) and not _is_elif(node, child) else level
        deepest = max(deepest, _nesting(child, inner))
    return deepest


def _misshapen(path: Path, root: Path = ROOT) -> list[tuple[str, str, str, int]]:
    """``path``'s functions over :data:`MAX_PARAMETERS` or :data:`MAX_NESTING`, as
    ``(file, function, "parameters" | "nesting", measured value)``."""
    rel = path.relative_to(root).as_posix()
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=rel)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if (n := _parameters(node)) > MAX_PARAMETERS:
                found.append((rel, node.name, "parameters", n))
            if (d := _nesting(node)) > MAX_NESTING:
                found.append((rel, node.name, "nesting", d))
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


def test_the_check_counts_parameters(tmp_path):
    f = tmp_path / "wide.py"
    f.write_text("def seven(a, b, c, d, e, f, g):\n    pass\n\n\n"
                 "def eight(a, /, b, c, *rest, d, e, f, **more):\n    pass\n\n\n"
                 "class K:\n    def method(self, a, b, c, d, e, f, g):\n        pass\n\n"
                 "    @classmethod\n    def make(cls, a, b, c, d, e, f, g, h):\n        pass\n")
    assert _misshapen(f, tmp_path) == [("wide.py", "eight", "parameters", 8), ("wide.py", "make", "parameters", 8)]


def test_the_check_measures_nesting(tmp_path):
    f = tmp_path / "deep.py"
    f.write_text(
        "def four(xs):\n"
        "    for x in xs:\n"
        "        with open(x) as fh:\n"
        "            try:\n"
        "                if x:\n"
        "                    pass\n"
        "                elif fh:\n"
        "                    pass\n"
        "                elif xs:\n"
        "                    pass\n"
        "                else:\n"
        "                    pass\n"
        "            except OSError:\n"
        "                def inner():\n"
        "                    if x:\n"
        "                        while x:\n"
        "                            pass\n"
        "                return lambda: [y for y in xs if y]\n"
        "\n\n"
        "def five(xs):\n"
        "    for x in xs:\n"
        "        if x:\n"
        "            pass\n"
        "        else:\n"
        "            if xs:\n"
        "                match x:\n"
        "                    case 1:\n"
        "                        while x:\n"
        "                            pass\n")
    assert _misshapen(f, tmp_path) == [("deep.py", "five", "nesting", 5)]


def test_no_function_over_the_shape_limits():
    found = sorted({x for p in _modules() for x in _misshapen(p)})
    assert not found, (f"over {MAX_PARAMETERS} parameters or {MAX_NESTING} levels of nesting (use a parameter "
                       "object; extract a helper):\n" + "\n".join(map(str, found)))
