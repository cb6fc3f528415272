"""Every arrow points down, and none comes back round (issue 32, item 3).

The layers, top to bottom: ``lecturecopilot_ops/`` (the operator tooling: ``lecture-copilot`` commands,
the local stack, the demo), ``services/`` (each service its own room), ``lecturecopilot/`` (the
shared platform). A module imports only from its own layer or those below it; the one exception is
the wiring of ``lecturecopilot/__main__.py`` (``python -m lecturecopilot`` runs the tooling's CLI).

- No module of ``services/<x>/`` imports ``services.<y>`` (y ≠ x): a service reaches another one only
  over the wire (gRPC, HTTP, the bus) or through the shared ``lecturecopilot`` package.
- No import of project modules makes a circle (:mod:`graphlib` finds one).
- No project module is imported inside a function (outside ``__main__.py``): an import hidden there
  is how circles were kept out of sight.

The imports are read with :mod:`ast`, so an import inside a function counts too, and relative
imports are resolved against the module's package (``from .. import x`` in ``services/a/m.py``
names ``services.x``).
"""

from __future__ import annotations

import ast
import graphlib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"
LAYERS = ("lecturecopilot", "services", "lecturecopilot_ops")  # bottom to top
WIRING = ("lecturecopilot.__main__", "lecturecopilot_ops")  # the one import that points up


def _imports(path: Path, root: Path) -> list[tuple[int, str, bool]]:
    """``(line, dotted name, inside a function)`` of every import in ``path`` (a file under ``root``,
    the folder of a top-level package); ``from p import a, b`` gives ``p.a`` and ``p.b``; a relative
    import that climbs out of the package gives its name alone."""
    package = [root.name, *path.relative_to(root).parts[:-1]]
    found = []

    def visit(node: ast.AST, local: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name, local) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level and len(package) - (node.level - 1) < 1:
                found.append((node.lineno, root.name, local))
                return
            keep = len(package) - (node.level - 1)
            base = ".".join(package[:keep] + ([node.module] if node.module else [])) if node.level else node.module or ""
            found.extend((node.lineno, f"{base}.{a.name}", local) for a in node.names)
        inner = local or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), False)
    return found


def imported_modules(path: Path, root: Path) -> list[tuple[int, str]]:
    """``(line, dotted name)`` of every import in ``path`` (a file under ``root``, the ``services``
    folder), module-level or not (see :func:`_imports`)."""
    return [(line, name) for line, name, _ in _imports(path, root)]


def crossings(root: Path = SERVICES) -> list[str]:
    """``"services/x/m.py:12 imports services.y.z"`` for every import of something outside the
    module's own service but inside ``services``."""
    bad = []
    for service in sorted(p for p in root.iterdir() if (p / "__init__.py").exists()):
        for path in sorted(service.rglob("*.py")):
            for line, name in imported_modules(path, root):
                parts = name.split(".")
                if parts[0] == "services" and (len(parts) == 1 or parts[1] != service.name):
                    bad.append(f"services/{path.relative_to(root).as_posix()}:{line} imports {name}")
    return bad


def test_no_service_imports_another_service():
    assert crossings() == []


def test_the_check_sees_each_kind_of_crossing(tmp_path):
    root = tmp_path / "services"
    files = {"a/m.py": "import json\nfrom services.a import core\nfrom . import core\nfrom .sub import x\n",
             "a/sub/n.py": "from .. import core\nfrom ..m import y\n",
             "b/m.py": "import os\n\ndef f():\n    from services.a.core import g\n",
             "c/m.py": "from services import a\nimport services.b.m\n",
             "d/m.py": "from .. import a\nfrom ... import x\n"}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    for d in ("a", "a/sub", "b", "c", "d"):
        (root / d / "__init__.py").write_text("")
    assert crossings(root) == ["services/b/m.py:4 imports services.a.core.g", "services/c/m.py:1 imports services.a",
                               "services/c/m.py:2 imports services.b.m", "services/d/m.py:1 imports services.a",
                               "services/d/m.py:2 imports services"]


@dataclass(frozen=True)
class Arrow:
    """One import between project modules: ``source`` (dotted) imports ``target`` (the project
    module the imported name resolves to) at ``line``, ``local`` when inside a function."""

    source: str
    line: int
    target: str
    local: bool

    def __str__(self) -> str:
        return f"{self.source}:{self.line} imports {self.target}" + (" (inside a function)" if self.local else "")


def _module_name(path: Path, repo: Path) -> str:
    parts = list(path.relative_to(repo).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def arrows(repo: Path = ROOT) -> list[Arrow]:
    """Every import from one module of the :data:`LAYERS` packages under ``repo`` to another; an
    imported name resolves to the longest dotted prefix that is a module (``from p import a``: ``p.a``
    when it is a module, else ``p``)."""
    paths = {_module_name(p, repo): p for layer in LAYERS if (repo / layer).is_dir()
             for p in sorted((repo / layer).rglob("*.py"))}
    found = []
    for source, path in paths.items():
        for line, name, local in _imports(path, repo / source.split(".")[0]):
            target = name
            while target and target not in paths:
                target = target.rpartition(".")[0]
            if target and target != source:
                found.append(Arrow(source, line, target, local))
    return found


def _layer(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


def upward(found: list[Arrow]) -> list[str]:
    """The imports that point up a layer (``lecturecopilot`` importing a service or the tooling, a
    service importing the tooling), :data:`WIRING` aside."""
    return [str(a) for a in found if _layer(a.target) > _layer(a.source)
            and not (a.source == WIRING[0] and a.target.split(".")[0] == WIRING[1])]


def hidden(found: list[Arrow]) -> list[str]:
    """The imports of project modules inside a function, those of ``__main__`` modules aside."""
    return [str(a) for a in found if a.local and not a.source.endswith("__main__")]


def circle(found: list[Arrow]) -> list[str]:
    """One circle of imports (``[a, b, a]``), or [] when there is none."""
    graph: dict[str, set[str]] = {}
    for a in found:
        graph.setdefault(a.source, set()).add(a.target)
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as e:
        return list(e.args[1])
    return []


def test_every_arrow_points_down():
    found = arrows()
    assert any(a.source.startswith("lecturecopilot_ops.") and a.target.startswith("services.") for a in found)
    assert upward(found) == []


def test_no_project_import_hides_in_a_function():
    assert hidden(arrows()) == []


def test_no_imports_go_round_in_a_circle():
    assert circle(arrows()) == []


def test_the_arrow_checks_see_each_kind_of_fault(tmp_path):
    files = {"lecturecopilot/__init__.py": "", "lecturecopilot/__main__.py": "from lecturecopilot_ops.cli import main\n",
             "lecturecopilot/db.py": "import json\nfrom .settings import X\n",
             "lecturecopilot/settings.py": "def f():\n    from . import db\n",
             "lecturecopilot/worker.py": "from services.a import core\n",
             "services/__init__.py": "", "services/a/__init__.py": "",
             "services/a/core.py": "from lecturecopilot import db\nfrom lecturecopilot_ops import demo\n",
             "lecturecopilot_ops/__init__.py": "", "lecturecopilot_ops/demo.py": "",
             "lecturecopilot_ops/cli.py": "from services.a.core import run\nfrom lecturecopilot.db import pool\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = arrows(tmp_path)
    assert upward(found) == ["lecturecopilot.worker:1 imports services.a.core",
                             "services.a.core:2 imports lecturecopilot_ops.demo"]
    assert hidden(found) == ["lecturecopilot.settings:2 imports lecturecopilot.db (inside a function)"]
    assert sorted(circle(found)[:-1]) == ["lecturecopilot.db", "lecturecopilot.settings"]
    (tmp_path / "lecturecopilot/settings.py").write_text("X = 1\n")
    assert circle(arrows(tmp_path)) == []
