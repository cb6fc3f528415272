"""Each service is its own room: no module of ``services/<x>/`` imports ``services.<y>`` (y ≠ x).

A service reaches another one only over the wire (gRPC, HTTP, the bus) or through the shared
``lecturecopilot`` package. The imports are read with :mod:`ast`, so an import inside a function
counts too, and relative imports are resolved against the module's package (``from .. import x``
in ``services/a/m.py`` names ``services.x``).
"""

from __future__ import annotations

import ast
from pathlib import Path

SERVICES = Path(__file__).resolve().parents[2] / "services"


def imported_modules(path: Path, root: Path) -> list[tuple[int, str]]:
    """``(line, dotted name)`` of every import in ``path`` (a file under ``root``, the ``services``
    folder); ``from p import a, b`` gives ``p.a`` and ``p.b``; a relative import that climbs out of
    ``services`` gives ``services``."""
    package = ["services", *path.relative_to(root).parts[:-1]]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                keep = len(package) - (node.level - 1)
                if keep < 1:
                    found.append((node.lineno, "services"))
                    continue
                base = ".".join(package[:keep] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return found


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
