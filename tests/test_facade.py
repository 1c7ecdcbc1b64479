"""The ``rpcline`` facade: the public names, and which implementation it picked."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import rpcline

# DESIGN.md, "Public API (names are fixed)".
CORE_NAMES = {
    "IMPLEMENTATION",
    "ClientResponse",
    "Incoming",
    "InvalidParams",
    "InvalidRequest",
    "Notification",
    "ParseError",
    "ProtocolError",
    "Refused",
    "Request",
    "RequestId",
    "error_response",
    "id_json",
    "parse",
}
# DESIGN.md, "Beyond one line": documented names that may be exported once they exist.
LATER_NAMES = {"parse_lines", "StreamParser", "read_messages", "route", "Route"}
# The names each implementation module provides and the facade re-exports.
IMPLEMENTED = sorted(CORE_NAMES - {"IMPLEMENTATION", "Incoming", "RequestId"})
RESULT_CLASSES = ("Request", "Notification", "ClientResponse", "Refused")

PROBE = f"""
import json, rpcline
import rpcline._core.message_py as twin
names = {IMPLEMENTED!r}
report = {{"implementation": rpcline.IMPLEMENTATION,
          "twin": all(getattr(rpcline, n) is getattr(twin, n) for n in names)}}
try:
    import rpcline._core.message_c as core
except ImportError:
    report["core"] = None
else:
    report["core"] = all(getattr(rpcline, n) is getattr(core, n) for n in names)
print(json.dumps(report))
"""


def probe(tmp_path, value: str | None) -> dict:
    """Import rpcline in a fresh interpreter with RPCLINE_NO_EXTENSIONS set to ``value``."""
    env = {k: v for k, v in os.environ.items() if k != "RPCLINE_NO_EXTENSIONS"}
    if value is not None:
        env["RPCLINE_NO_EXTENSIONS"] = value
    completed = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=env,
        cwd=tmp_path,  # away from any source tree: the installed package is imported
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(completed.stdout)


@pytest.mark.c_extension
def test_c_extension_is_loaded():
    # The yarl idiom: with the extension built and not disabled, the facade must use it.
    from rpcline._core import message_c

    assert rpcline.IMPLEMENTATION == "cython"
    for name in IMPLEMENTED:
        assert getattr(rpcline, name) is getattr(message_c, name), name


@pytest.mark.c_extension
def test_c_extension_was_compiled_with_optimisation():
    # A CFLAGS in the build's environment once replaced Python's -O3 and shipped an -O0
    # wheel (route 26x slower); cibuildwheel runs this against every wheel it builds. Only
    # the debug build (RPCLINE_DEBUG_BUILD, set for its tests too) is meant to be -O0; MSVC
    # does not say (None).
    from rpcline._core import scan_c

    expected = not os.environ.get("RPCLINE_DEBUG_BUILD")
    assert scan_c.OPTIMIZED in (expected, None)


@pytest.mark.skipif(
    not os.environ.get("RPCLINE_NO_EXTENSIONS"), reason="RPCLINE_NO_EXTENSIONS is not set"
)
def test_facade_uses_the_twin_when_told():
    from rpcline._core import message_py

    assert rpcline.IMPLEMENTATION == "python"
    for name in IMPLEMENTED:
        assert getattr(rpcline, name) is getattr(message_py, name), name


@pytest.mark.parametrize("value", ["1", "0", "yes"])
def test_any_non_empty_value_forces_the_twin(tmp_path, value):
    report = probe(tmp_path, value)
    assert report["implementation"] == "python"
    assert report["twin"] is True
    assert report["core"] is not True


@pytest.mark.c_extension
@pytest.mark.parametrize("value", [None, ""], ids=["unset", "empty"])
def test_cython_is_the_default(tmp_path, value):
    report = probe(tmp_path, value)
    assert report == {"implementation": "cython", "twin": False, "core": True}


def test_all_lists_the_documented_names():
    exported = list(rpcline.__all__)
    assert len(exported) == len(set(exported)), "duplicates in __all__"
    assert CORE_NAMES <= set(exported), CORE_NAMES - set(exported)
    assert set(exported) <= CORE_NAMES | LATER_NAMES, set(exported) - CORE_NAMES - LATER_NAMES
    for name in exported:
        assert hasattr(rpcline, name), name


def test_star_import_gives_exactly_all():
    namespace: dict = {}
    exec("from rpcline import *", namespace)
    namespace.pop("__builtins__")
    assert set(namespace) == set(rpcline.__all__)


def test_implementation_value():
    assert rpcline.IMPLEMENTATION in ("cython", "python")


def test_request_id_alias():
    assert set(typing.get_args(rpcline.RequestId)) == {int, str}
    assert isinstance(1, rpcline.RequestId) and isinstance("1", rpcline.RequestId)
    assert not isinstance(1.0, rpcline.RequestId)


def test_incoming_alias_names_the_facades_classes():
    # Incoming is Request | Notification | ClientResponse | Refused of the implementation
    # in use, so isinstance() and runtime type checkers accept what parse returns.
    assert set(typing.get_args(rpcline.Incoming)) == {
        getattr(rpcline, name) for name in RESULT_CLASSES
    }
    for line in (
        '{"jsonrpc":"2.0","id":1,"method":"m"}',
        '{"jsonrpc":"2.0","method":"m"}',
        '{"jsonrpc":"2.0","id":1,"result":{}}',
        "INFO hello",
    ):
        assert isinstance(rpcline.parse(line), rpcline.Incoming), line


def test_facade_end_to_end():
    message = rpcline.parse(b'{"jsonrpc":"2.0","id":"a","method":"m","params":[]}\n')
    match message:
        case rpcline.Refused("a", rpcline.InvalidParams()):
            reply = rpcline.error_response(message)
        case _:
            pytest.fail(f"unexpected {message!r}")
    assert reply == (
        b'{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"Invalid params",'
        b'"data":"params must be an object"}}'
    )


LAZY_SUBMODULES = ("aio", "auth", "bridge", "corpus", "http", "otel", "proxy", "sdk", "sse")

LAZY_PROBE = """
import json, sys, rpcline
report = {"before": sorted(m for m in sys.modules if m.startswith("rpcline."))}
report["messages"] = callable(rpcline.aio.messages)
report["generate"] = callable(rpcline.corpus.generate)
report["proxy"] = rpcline.proxy.__name__
report["dir"] = dir(rpcline)
try:
    rpcline.no_such_name
except AttributeError as error:
    report["missing"] = str(error)
print(json.dumps(report))
"""


def test_submodules_are_imported_on_first_access_only(tmp_path):
    # PEP 562: `import rpcline` pays for none of them, `rpcline.aio.messages` still works.
    completed = subprocess.run(
        [sys.executable, "-c", LAZY_PROBE],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    report = json.loads(completed.stdout)
    for name in LAZY_SUBMODULES:
        assert f"rpcline.{name}" not in report["before"], report["before"]
    assert report["messages"] is True and report["generate"] is True
    assert report["proxy"] == "rpcline.proxy"
    assert report["missing"] == "module 'rpcline' has no attribute 'no_such_name'"


def test_dir_lists_public_names_only():
    names = dir(rpcline)
    assert set(rpcline.__all__) <= set(names)
    assert set(LAZY_SUBMODULES) <= set(names)
    assert "__version__" in names
    for helper in ("os", "version", "PackageNotFoundError", "Literal", "TYPE_CHECKING",
                   "TypeAlias", "NO_EXTENSIONS", "annotations"):
        assert helper not in names, helper
    assert all(not name.startswith("_") or name == "__version__" for name in names), names
    assert names == sorted(names)


# Every public module (a name without a leading underscore): its API and nothing else.
PUBLIC_MODULES = ("aio", "auth", "bridge", "cli", "corpus", "http", "otel", "proxy", "sdk",
                  "sse")


def test_every_public_module_is_listed():
    source = Path(rpcline.__file__).parent
    found = {p.stem for p in source.glob("*.py") if not p.stem.startswith("_")}
    assert found == set(PUBLIC_MODULES)


# What a public module needs beyond orjson (an extra), to be imported whole.
NEEDS = {"auth": ("httpx", "jwt"), "otel": ("opentelemetry",)}


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_dir_of_a_public_module_lists_its_api_only(name):
    # dir(rpcline.http) once listed TYPE_CHECKING and annotations; dir(rpcline.proxy)
    # asyncio, signal, subprocess, sys, Callable and Sequence (issue 31 item 12).
    for needed in NEEDS.get(name, ()):
        pytest.importorskip(needed, reason=f"rpcline.{name} needs its extra ({needed})")
    module = importlib.import_module(f"rpcline.{name}")
    assert dir(module) == sorted(module.__all__)
    assert all(hasattr(module, public) for public in module.__all__)


def test_type_checkers_see_every_lazy_submodule():
    # __getattr__ is hidden from type checkers (so typos stay errors); each lazy name is
    # imported for them instead, and the two lists must not drift apart.
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(rpcline))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
        for statement in node.body
        if isinstance(statement, ast.ImportFrom) and statement.module == "rpcline"
        for alias in statement.names
    }
    assert imported == set(rpcline._SUBMODULES) == set(LAZY_SUBMODULES)


IMPORT_PROBE = """
import sys
before = set(sys.modules)
import rpcline
print(" ".join(sorted(set(sys.modules) - before)))
"""


@pytest.mark.parametrize("twin", [False, True], ids=["default", "RPCLINE_NO_EXTENSIONS"])
def test_import_rpcline_does_not_import_importlib_metadata(tmp_path, twin):
    # It cost 29 of the 47 ms of `import rpcline`, for __version__ alone (issue 26).
    env = {k: v for k, v in os.environ.items() if k != "RPCLINE_NO_EXTENSIONS"}
    if twin:
        env["RPCLINE_NO_EXTENSIONS"] = "1"
    done = subprocess.run([sys.executable, "-c", IMPORT_PROBE], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    loaded = done.stdout.split()
    assert "importlib.metadata" not in loaded and "rpcline" in loaded
    if not twin and rpcline.IMPLEMENTATION == "cython":
        # On the core, none of the twin's rules and none of typing (orjson loads neither).
        assert not [m for m in loaded if m.endswith("_py") or m == "typing"], loaded


def test_version_is_the_one_the_build_wrote():
    import importlib.metadata

    assert rpcline.__version__ == importlib.metadata.version("rpcline")
