"""rpcline's modules import one another in one direction only: no import circle.

A circle works only by the order its modules happen to load in, and hides which module
owns a name. Shared pieces live in ``_core.shared`` (and ``_version``), which import nothing of
rpcline. Edges to the package itself (``import rpcline``) are left out: a submodule may
use the implementation the facade chose, at call time.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "src" / "rpcline"
_PYX_IMPORT = re.compile(r"^\s*(?:from\s+rpcline\.([\w.]+)\s+c?import|import\s+rpcline\.([\w.]+))",
                         re.MULTILINE)

pytestmark = pytest.mark.skipif(not PACKAGE.is_dir(), reason="needs the source tree (a clone)")


def imports(path: Path) -> set[str]:
    """The rpcline modules ``path`` imports, anywhere in it (TYPE_CHECKING included), as
    dotted names below ``rpcline.``: ``_core.scan_py``, or ``_core`` for a name of it."""
    if path.suffix == ".pyx":
        return {(a or b).lstrip(".") for a, b in _PYX_IMPORT.findall(path.read_text())}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "rpcline" or node.module.startswith("rpcline."):
                base = node.module.removeprefix("rpcline").lstrip(".")
                found |= {f"{base}.{alias.name}".lstrip(".") for alias in node.names}
                found.add(base)
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("rpcline.") for a in node.names
                      if a.name.startswith("rpcline.")}
    return found


def graph() -> dict[str, set[str]]:
    modules = {".".join(p.relative_to(PACKAGE).with_suffix("").parts): p
               for p in [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyx")]
               if p.stem != "__init__"}
    return {name: imports(path) & modules.keys() - {name}
            for name, path in modules.items()}


def circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle, as the path that closes it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for other in sorted(edges.get(name, ())):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state and (found := visit(other)):
                return found
        state[name] = 2
        path.pop()
        return None

    for name in sorted(edges):
        if name not in state and (found := visit(name)):
            return found
    return None


def test_no_import_circle_among_rpcline_modules():
    assert circle(graph()) is None, " -> ".join(circle(graph()) or [])


def test_the_shared_modules_import_nothing_of_rpcline():
    edges = graph()
    assert edges["_core.shared"] == set() and edges["_version"] == set()


def test_the_circle_finder_finds_one():
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set()}) is None
