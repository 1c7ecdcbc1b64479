"""rpcline's modules import one another in one direction only: down the wings.

The package is three wings of private modules under its public ones (docs/architecture.md):
``_core`` (the classifier and its twins) imports no other wing and no public module;
``_gateway`` (children, the relay, the bridge's pieces) imports ``_core`` and nothing above
it; ``_cli`` and the public modules may import both. A private name (``_x``) is shared
within its wing only, and never reaches a public module. No module-level import circle
(imports under ``if TYPE_CHECKING:`` and inside functions aside): a circle works only by the
order its modules happen to load in, and hides which module owns a name.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "src" / "rpcline"
WINGS = ("_core", "_gateway", "_cli")
# Top-level private modules every wing may import: they import nothing of rpcline.
LEAVES = frozenset({"_version"})
# What each wing may import beside itself and LEAVES (None: anything).
MAY_IMPORT: dict[str, frozenset[str] | None] = {
    "_core": frozenset(),
    "_gateway": frozenset({"_core"}),
    "_cli": None,
    "public": None,
    "top": None,
}
_PYX_IMPORT = re.compile(r"^\s*from\s+(rpcline(?:\.[\w.]+)?)\s+c?import\s+\(?([\w\s,]+)",
                         re.MULTILINE)

pytestmark = pytest.mark.skipif(not PACKAGE.is_dir(), reason="needs the source tree (a clone)")


@dataclass(frozen=True)
class Edge:
    source: str  # dotted below rpcline: "_core.scan_py"; "" for rpcline itself
    target: str  # the module imported; a name from a package is that package
    names: tuple[str, ...]  # what ``from ... import`` took
    module_level: bool  # runs at import (not in a function, not under TYPE_CHECKING)


def module_names() -> dict[str, Path]:
    found = {}
    for path in [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyx")]:
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _target(module: str, name: str, modules: dict[str, Path]) -> str:
    """``from module import name``: the submodule when ``name`` is one, else ``module``."""
    base = module.removeprefix("rpcline").lstrip(".")
    sub = f"{base}.{name}".lstrip(".")
    return sub if sub in modules else base


def _python_edges(source: str, path: Path, modules: dict[str, Path]) -> list[Edge]:
    edges = []

    def visit(node: ast.AST, module_level: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for part in child.body:  # type-only; its else branch runs
                    visit_one(part, False)
                for part in child.orelse:
                    visit_one(part, module_level)
                continue
            visit_one(child, module_level)

    def visit_one(node: ast.AST, module_level: bool) -> None:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
                node.module == "rpcline" or node.module.startswith("rpcline.")):
            for alias in node.names:
                edges.append(Edge(source, _target(node.module, alias.name, modules),
                                  (alias.name,), module_level))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "rpcline" or alias.name.startswith("rpcline."):
                    edges.append(Edge(source, alias.name.removeprefix("rpcline").lstrip("."),
                                      (), module_level))
        inner = module_level and not isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        visit(node, inner)

    visit(ast.parse(path.read_text()), True)
    return edges


def edges() -> list[Edge]:
    modules = module_names()
    found = []
    for source, path in modules.items():
        if path.suffix == ".pyx":  # cimports and imports alike, all at module level here
            for module, names in _PYX_IMPORT.findall(path.read_text()):
                for name in (n.split(" as ")[0].strip() for n in names.split(",")):
                    if name:
                        found.append(Edge(source, _target(module, name, modules), (name,), True))
        else:
            found += _python_edges(source, path, modules)
    return [edge for edge in found if edge.target != edge.source]


def wing(module: str) -> str:
    first = module.split(".")[0]
    if first in WINGS:
        return first
    return "top" if first.startswith("_") else "public"


def violations(all_edges: list[Edge]) -> list[str]:
    found = []
    for edge in all_edges:
        source, target = wing(edge.source), wing(edge.target)
        allowed = MAY_IMPORT[source]
        if (allowed is not None and target != source and target not in allowed
                and edge.target not in LEAVES):
            found.append(f"{edge.source or 'rpcline'} ({source}) imports "
                         f"{edge.target or 'rpcline'} ({target})")
        private = [n for n in edge.names if n.startswith("_") and not n.startswith("__")
                   and f"{edge.target}.{n}".lstrip(".") not in module_names()]
        if private and (source == "public" or source != target):
            found.append(f"{edge.source or 'rpcline'} takes the private {private} "
                         f"of {edge.target}")
    return found


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle, as the path that closes it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for other in sorted(graph.get(name, ())):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state and (found := visit(other)):
                return found
        state[name] = 2
        path.pop()
        return None

    for name in sorted(graph):
        if name not in state and (found := visit(name)):
            return found
    return None


def test_imports_point_down_the_wings():
    assert violations(edges()) == []


def test_no_module_level_import_circle():
    graph: dict[str, set[str]] = {}
    for edge in edges():
        if edge.module_level:
            graph.setdefault(edge.source, set()).add(edge.target)
    assert circle(graph) is None, " -> ".join(circle(graph) or [])


def test_what_the_twins_share_loads_neither_twin():
    # What a core module and its twin share imports nothing of rpcline but _core.shared,
    # which imports nothing of rpcline (nor does _version).
    shared = {"_version", "_core.shared", "_core.http_shared", "_core.sse_shared"}
    assert shared <= module_names().keys()
    taken = {(edge.source, edge.target) for edge in edges() if edge.source in shared}
    assert taken == {("_core.http_shared", "_core.shared")}


def test_at_most_three_private_modules_outside_the_wings():
    loose = sorted(p.name for p in PACKAGE.glob("_*.py") if p.stem not in ("__init__", "__main__"))
    assert len(loose) <= 3, loose
    assert all((PACKAGE / name / "__init__.py").is_file() for name in WINGS)


@pytest.mark.parametrize(("implementation", "other"), [("cython", "_py"), ("python", "_c")])
def test_a_twin_loads_only_where_it_is_the_implementation_in_use(implementation, other,
                                                                 monkeypatch):
    # Every public module imported on one implementation loads none of the other's modules.
    import rpcline

    if implementation == "cython":
        if rpcline.IMPLEMENTATION != "cython":
            pytest.skip("the Cython core is not built here")
        monkeypatch.delenv("RPCLINE_NO_EXTENSIONS", raising=False)
    else:
        monkeypatch.setenv("RPCLINE_NO_EXTENSIONS", "1")
    program = (
        "import sys, rpcline, rpcline.aio, rpcline.bridge, rpcline.cli, rpcline.corpus, "
        "rpcline.http, rpcline.proxy, rpcline.sdk, rpcline.sse\n"
        "assert rpcline.IMPLEMENTATION == sys.argv[1], rpcline.IMPLEMENTATION\n"
        "print(sorted(m for m in sys.modules if m.startswith('rpcline._core.') "
        "and m.endswith(sys.argv[2])))"
    )
    loaded = subprocess.run([sys.executable, "-c", program, implementation, other],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def test_the_checks_find_what_they_look_for():
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set()}) is None
    upward = [Edge("_core.scan_py", "_gateway.relay", (), True),
              Edge("_gateway.relay", "", ("route",), True),
              Edge("_gateway.relay", "_cli.shared", (), False),
              Edge("proxy", "_gateway.relay", ("_Session",), True),
              Edge("_gateway.relay", "_core.route_py", ("_routed",), True)]
    assert len(violations(upward)) == 5
    fine = [Edge("_gateway.relay", "_core.route", ("route",), True),
            Edge("_cli.bench", "", ("parse",), True),
            Edge("_core.route_py", "_core.scan_py", ("_Scan",), True),
            Edge("bridge", "_version", ("__version__",), True)]
    assert violations(fine) == []
