"""``rpcline.bridge.Options``: a bridge's options as one frozen object, checked once.

A value that cannot be served is refused when the object is made (not on a first
request); keywords given to ``StdioBridge`` are a copy of its options with those changed;
the object ``rpcline serve`` builds from its flags is what each of its bridges starts from.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import pytest

from rpcline.bridge import Options, StdioBridge

COMMAND = [sys.executable, "-c", "pass"]  # never started: nothing here sends a request


@pytest.mark.parametrize(("given", "said"), [
    ({"children": 0}, "children must be an int >= 1"),
    ({"children": 1.5}, "children must be an int >= 1"),
    ({"shutdown_grace": -1}, "shutdown_grace must be >= 0"),
    ({"shutdown_grace": float("nan")}, "shutdown_grace must be >= 0"),
    ({"isolation": "private"}, "isolation must be one of shared, session, identity"),
    ({"isolation": "session", "children": 2}, "children is for isolation='shared'"),
    ({"max_children": 0}, "max_children must be an int >= 1 or None"),
    ({"prestart": -1}, "prestart must be an int >= 0 or None"),
    ({"max_waiting": -1}, "max_waiting must be an int >= 0 or None"),
    ({"max_in_flight_per_client": 0}, "max_in_flight_per_client must be an int >= 1"),
    ({"session_idle_timeout": 0}, "session_idle_timeout must be > 0 seconds or None"),
    ({"child_stderr": "elsewhere"}, "child stderr must be inherit, prefix, discard or file"),
])
def test_a_value_that_cannot_be_served_is_refused_when_the_options_are_made(
        given: dict[str, Any], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        Options(**given)
    with pytest.raises(ValueError, match=said):  # the keyword form: the same check
        StdioBridge(COMMAND, **given)


def test_options_are_frozen_and_keyword_only() -> None:
    options = Options(children=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.children = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        Options(2)  # type: ignore[misc]
    with pytest.raises(TypeError, match="unexpected keyword argument 'childern'"):
        StdioBridge(COMMAND, childern=2)


def test_keywords_are_a_copy_of_the_options_with_those_changed() -> None:
    defaults = Options(request_timeout=60, max_in_flight_per_client=8, name="base")
    named = StdioBridge(COMMAND, defaults, name="github", isolation="session")
    assert named.options == dataclasses.replace(defaults, name="github", isolation="session")
    assert named.isolation == "session" and named.request_timeout == 60
    assert named.per_client.bound == 8 and named.name == "github"
    assert defaults.name == "base" and defaults.isolation == "shared"  # not changed
    plain = StdioBridge(COMMAND, children=2)
    assert plain.options == Options(children=2)
    assert len(plain.legacy.children) == len(plain.modern.children) == 2
    assert StdioBridge(COMMAND, defaults).options is defaults  # nothing to change: as given


def test_what_serve_builds_from_its_flags_is_every_server_s_starting_point() -> None:
    pytest.importorskip("uvicorn", reason="uvicorn (the serve extra) is not installed")
    from rpcline._cli.serve_apps import Apps
    from rpcline.cli import build_parser

    args = build_parser().parse_args(
        ["serve", "--request-timeout", "30", "--max-waiting", "5", "--isolation", "session",
         "--named-server", "a", "x", "--", *COMMAND])
    apps = Apps(args, {"token": "t"}, lambda line: None)
    assert apps.options.request_timeout == 30 and apps.options.token == "t"
    assert apps.options.isolation == "shared"  # the isolation is each server's (below)
    from rpcline._gateway.servers_config import ServerSpec

    router = apps.router(COMMAND, {"a": ServerSpec("a", ("x",)),
                                   "b": ServerSpec("b", ("y",), isolation="shared")})
    a, b, default = router.servers["a"], router.servers["b"], router.default
    assert a.options == dataclasses.replace(
        apps.options, env=a.options.env, name="a", isolation="session",
        session_idle_timeout=600.0)
    assert b.options.isolation == "shared" and b.options.max_waiting == 5
    assert default is not None and default.options.isolation == "session"
