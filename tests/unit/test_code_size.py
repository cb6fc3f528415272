"""Done-when limits of issue #14, measured from the AST: no function or method over
MAX_FUNCTION_LINES lines (decorators aside, nested functions counted in their parent too) and no
module over MAX_MODULE_LINES lines, in each folder of FOLDERS (generated code and static files
aside). A folder joins the list once it meets the limits."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ["services/gateway"]
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400
SKIP_PARTS = {"static", "__pycache__"}


def modules(folder: str) -> list[Path]:
    found = [p for p in sorted((ROOT / folder).rglob("*.py")) if not SKIP_PARTS & set(p.relative_to(ROOT).parts)
             and not p.name.endswith(("_pb2.py", "_pb2_grpc.py"))]
    assert found, f"no Python modules under {folder}"
    return found


def long_functions(path: Path) -> list[tuple[str, int]]:
    """``(name:line, length)`` of each function in ``path`` longer than MAX_FUNCTION_LINES."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return [(f"{node.name}:{node.lineno}", node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]


def test_the_measure_sees_a_long_function(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES + "\n\ndef g():\n    return 1\n")
    assert long_functions(f) == [("f:1", MAX_FUNCTION_LINES + 1)]


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_function_over_the_limit(folder):
    over = {str(p.relative_to(ROOT)): found for p in modules(folder) if (found := long_functions(p))}
    assert not over, f"functions over {MAX_FUNCTION_LINES} lines: {over}"


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_module_over_the_limit(folder):
    over = {str(p.relative_to(ROOT)): n for p in modules(folder) if (n := len(p.read_text().splitlines()))
            > MAX_MODULE_LINES}
    assert not over, f"modules over {MAX_MODULE_LINES} lines: {over}"
