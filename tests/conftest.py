"""One suite, two implementations: every test taking ``impl`` runs against both.

The idiom is aio-libs/propcache's: a session fixture parametrized over the Cython core
(id ``c-extension``, marked ``c_extension``) and the pure-Python twin (``pure-python``),
plus a ``--no-c-extensions`` option. Here the C-extension tests are *skipped* (not
deselected) when asked, so the summary says so; and when they are not skipped, a missing
or broken build makes them fail: a wheel without its extension must never pass quietly.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from importlib import import_module
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

C_EXT_MARK = pytest.mark.c_extension

# Modest example counts keep the whole suite well under a minute on two cores; CI can
# raise them with HYPOTHESIS_PROFILE=thorough.
settings.register_profile(
    "default",
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=3000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def anyio_backend() -> str:
    """The backend of every anyio test that does not choose its own: asyncio, as the gateway
    (the proxy, the bridge, their children) is asyncio's."""
    return "asyncio"


def no_extensions_requested(config: pytest.Config) -> bool:
    """True when the C-extension tests are to be skipped (option or environment)."""
    return not config.getoption("c_extensions") or bool(
        os.environ.get("RPCLINE_NO_EXTENSIONS")
    )


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--c-extensions",  # --no-c-extensions turns them off
        action=argparse.BooleanOptionalAction,
        default=True,
        dest="c_extensions",
        help="Test the Cython core too (on by default; also off when "
        "RPCLINE_NO_EXTENSIONS is non-empty)",
    )


def pytest_configure(config: pytest.Config) -> None:
    # pyproject.toml registers it too; this keeps --strict-markers happy without it.
    config.addinivalue_line("markers", "c_extension: needs the Cython core")


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not no_extensions_requested(config):
        return
    skip = pytest.mark.skip(reason="C extension tests disabled (--no-c-extensions or "
                            "RPCLINE_NO_EXTENSIONS)")
    for item in items:
        if item.get_closest_marker(C_EXT_MARK.name) is not None:
            item.add_marker(skip)


IMPLEMENTATIONS = {
    "c-extension": "rpcline._core.message_c",
    "pure-python": "rpcline._core.message_py",
}


@pytest.fixture(
    scope="session",
    params=[
        pytest.param("c-extension", marks=C_EXT_MARK, id="c-extension"),
        pytest.param("pure-python", id="pure-python"),
    ],
)
def impl(request: pytest.FixtureRequest) -> ModuleType:
    """The implementation module under test: ``rpcline._core.message_c`` or ``message_py``."""
    name = IMPLEMENTATIONS[request.param]
    try:
        return import_module(name)
    except ImportError as error:  # a missing build is a failure, never a skip
        pytest.fail(f"cannot import {name} (was the extension built?): {error!r}")


@pytest.fixture(scope="session")
def hmod(impl: ModuleType) -> ModuleType:
    """The http module of the implementation under test (http_c or http_py)."""
    return import_module(impl.__name__.replace(".message_", ".http_"))


@pytest.fixture(scope="session")
def c_module() -> ModuleType:
    """The Cython core itself, for tests that compare the two (mark them c_extension)."""
    try:
        return import_module("rpcline._core.message_c")
    except ImportError as error:
        pytest.fail(f"cannot import rpcline._core.message_c: {error!r}")


@pytest.fixture(scope="session")
def py_module() -> ModuleType:
    return import_module("rpcline._core.message_py")


def _utf8(line: str) -> bytes:
    # surrogatepass: a str holding lone surrogates becomes bytes that are invalid UTF-8,
    # so "bad text" stays bad in every input type.
    return line.encode("utf-8", "surrogatepass")


INPUT_TYPES: dict[str, Callable[[str], object]] = {
    "str": lambda line: line,
    "bytes": _utf8,
    "bytearray": lambda line: bytearray(_utf8(line)),
    "memoryview": lambda line: memoryview(_utf8(line)),
}


def convert(line: str, type_name: str) -> object:
    """The str ``line`` as the named input type."""
    return INPUT_TYPES[type_name](line)


@pytest.fixture(scope="session", params=list(INPUT_TYPES))
def input_type(request: pytest.FixtureRequest) -> str:
    """The name of an accepted input type: str, bytes, bytearray or memoryview."""
    return request.param


@pytest.fixture(scope="session")
def as_input(input_type: str) -> Callable[[str], object]:
    """A converter from a str line to the parametrized input type."""
    return INPUT_TYPES[input_type]
