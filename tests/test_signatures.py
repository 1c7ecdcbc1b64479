"""``inspect.signature`` works on every public callable, with the same parameter names in
the Cython core and the pure-Python twin (help(), IDEs and ``functools.wraps`` need it)."""

from __future__ import annotations

import inspect
from importlib import import_module

import pytest

import rpcline
import rpcline.aio

# The twins by concern; a public name is looked up in the first module that has it.
CORE = ("rpcline._core.message_c", "rpcline._core.route_c", "rpcline._core.stream_c")
TWIN = ("rpcline._core.message_py", "rpcline._core.route_py", "rpcline._core.stream_py")
CALLABLES = [name for name in rpcline.__all__ if callable(getattr(rpcline, name))]


def lookup(modules: tuple[str, ...], name: str) -> object:
    for module in map(import_module, modules):
        if hasattr(module, name):
            return getattr(module, name)
    return getattr(rpcline, name)  # shared by both (read_messages)


def names(obj: object) -> list[str]:
    return list(inspect.signature(obj).parameters)


def public_methods(cls: type) -> list[str]:
    return sorted(n for n, v in vars(cls).items() if not n.startswith("_") and callable(v))


def test_every_public_callable_is_listed():
    # Guards the list below: parse, route, error_response, id_json, the classes, ...
    assert {"parse", "route", "error_response", "id_json", "parse_lines", "read_messages",
            "StreamParser", "Request", "Refused", "Route"} <= set(CALLABLES)


@pytest.mark.parametrize("name", CALLABLES)
def test_the_facade_has_signatures(name):
    inspect.signature(getattr(rpcline, name))  # whichever implementation is in use


@pytest.mark.c_extension
@pytest.mark.parametrize("name", CALLABLES)
def test_signatures_match_between_the_twins(name):
    core, twin = lookup(CORE, name), lookup(TWIN, name)
    assert names(core) == names(twin), name
    if isinstance(twin, type):
        assert public_methods(core) == public_methods(twin), name
        for method in public_methods(twin):
            assert names(getattr(core, method)) == names(getattr(twin, method)), method


@pytest.mark.c_extension
def test_stream_parser_defaults_are_the_cores():
    from rpcline._core import message_c, stream_c

    parameters = inspect.signature(stream_c.StreamParser).parameters
    assert parameters["classify"].default is message_c.parse
    assert parameters["classify"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["max_line_bytes"].default == 16 * 1024 * 1024


def test_the_readers_have_signatures():
    for function in (rpcline.read_messages, rpcline.aio.messages):
        assert names(function)[:3] in (["file", "max_line_bytes", "chunk_bytes"],
                                       ["reader", "max_line_bytes", "chunk_bytes"])


# The transports' modules: each public callable, core against twin, defaults included.
TRANSPORTS = [(facade, name) for facade in ("sse", "http")
              for name in import_module(f"rpcline.{facade}").__all__
              if callable(getattr(import_module(f"rpcline.{facade}"), name))]


@pytest.mark.parametrize(("facade", "name"), TRANSPORTS)
def test_the_transports_have_signatures(facade, name):
    inspect.signature(getattr(import_module(f"rpcline.{facade}"), name))


@pytest.mark.c_extension
@pytest.mark.parametrize(("facade", "name"), TRANSPORTS)
def test_the_transports_signatures_match_between_the_twins(facade, name):
    shared = getattr(import_module(f"rpcline.{facade}"), name)  # Guard, param_headers
    twin = getattr(import_module(f"rpcline._core.{facade}_py"), name, shared)
    core = getattr(import_module(f"rpcline._core.{facade}_c"), name, twin)  # shared: ParamHeaders
    core_parameters = inspect.signature(core).parameters
    twin_parameters = inspect.signature(twin).parameters
    assert list(core_parameters) == list(twin_parameters)
    for parameter in twin_parameters:
        core_default, twin_default = (core_parameters[parameter].default,
                                      twin_parameters[parameter].default)
        if callable(twin_default):  # each implementation's own parse
            core_default, twin_default = core_default.__name__, twin_default.__name__
        assert core_default == twin_default, parameter
