"""What ``http.Guard``, ``check_request`` and ``param_headers`` take (issue 29, items 11-13).

A ``str`` where an iterable of strings is wanted was taken as its characters, a tool
spec of the wrong type was accepted or failed at the first call, and ``param_headers``
dropped checks silently: each is refused or warned about when the object is made. Tests
taking ``hmod`` run on both implementations of ``check_request``.
"""

from __future__ import annotations

import warnings
from types import ModuleType
from typing import Any

import pytest
from test_guard import SCHEMA, App, body, call, chunks, modern, scope_for

from rpcline import http
from rpcline._core.http_schema import ParamHeaders

BAD = {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}
GEO = body(name="geo", arguments={"region": "eu"})


def geo_headers(region: bytes) -> list:
    return modern(name="geo", **{"mcp-param-region": region})


# --- item 12: arguments checked when the object is made -----------------------------------


@pytest.mark.parametrize("keyword", ["versions", "allowed_hosts", "allowed_origins"])
@pytest.mark.parametrize("value", ["2026-07-28", b"2026-07-28", ["2026-07-28", 5], 7])
def test_guard_refuses_a_bare_string_or_non_strings(keyword: str, value: object) -> None:
    with pytest.raises(TypeError, match=keyword):
        http.Guard(App(), **{keyword: value})


def test_guard_takes_iterables_of_strings() -> None:
    guard = http.Guard(App(), versions=iter(["2026-07-28"]), allowed_hosts={"h:*"},
                       allowed_origins=("https://a",))  # fmt: skip
    assert (guard.versions, guard.allowed_hosts, guard.allowed_origins) == (
        ("2026-07-28",), ("h:*",), ("https://a",))


@pytest.mark.parametrize("versions", ["2026-07-28", b"2026-07-28", [b"2026-07-28"], 5])
def test_check_request_refuses_a_bare_string_for_versions(hmod: ModuleType, versions: object) -> None:
    with pytest.raises(TypeError, match="versions"):
        hmod.check_request(GEO, geo_headers(b"eu"), versions=versions)


def test_check_request_versions_error_is_the_same_in_both(hmod: ModuleType) -> None:
    with pytest.raises(TypeError) as caught:
        hmod.check_request(GEO, None, versions="2026-07-28")
    assert str(caught.value) == (
        "versions must be an iterable of str such as ('2026-07-28',), not a str")


@pytest.mark.parametrize(("tools", "error"), [
    ({"t": 42}, TypeError),
    ({"t": "{}"}, TypeError),
    ({"t": ["x"]}, TypeError),
    ({5: SCHEMA}, TypeError),
    ([{"name": "t", "inputSchema": SCHEMA}], TypeError),
    ({"t": BAD}, ValueError),
])  # fmt: skip
def test_guard_refuses_bad_tools_when_made(tools: object, error: type) -> None:
    with pytest.raises(error, match="tools|x-mcp-header"):
        http.Guard(App(), tools=tools)  # type: ignore[arg-type]
    guard = http.Guard(App())
    with pytest.raises(error):
        guard.tools = tools  # type: ignore[assignment]


@pytest.mark.parametrize("tools", [{"geo": SCHEMA}, {"geo": ParamHeaders(SCHEMA)}])
def test_check_request_takes_what_the_guard_takes(hmod: ModuleType, tools: dict) -> None:
    """A raw inputSchema raised AttributeError on the first call of its tool."""
    assert hmod.check_request(GEO, geo_headers(b"eu"), tools=tools).status == 200
    refused = hmod.check_request(GEO, geo_headers(b"us"), tools=tools)
    assert (refused.status, refused.error.code) == (400, -32020)
    assert refused.error.reason == (
        "Mcp-Param-Region header does not match the request body's 'region' argument")


@pytest.mark.parametrize(("tools", "error"), [
    ({"geo": 42}, TypeError),
    ({"geo": BAD}, ValueError),
    ([{"name": "geo", "inputSchema": SCHEMA}], TypeError),
])  # fmt: skip
def test_check_request_refuses_bad_tools(hmod: ModuleType, tools: object, error: type) -> None:
    with pytest.raises(error):
        hmod.check_request(GEO, geo_headers(b"eu"), tools=tools)


def test_check_request_tools_errors_are_the_same_in_both(hmod: ModuleType) -> None:
    with pytest.raises(TypeError) as caught:
        hmod.check_request(GEO, geo_headers(b"eu"), tools={"geo": 42})
    assert str(caught.value) == "tools['geo'] must be a ParamHeaders or an inputSchema dict, not int"
    with pytest.raises(TypeError) as caught:
        hmod.check_request(body("tools/list"), None, tools=[])
    assert str(caught.value).startswith("tools must be a mapping of tool names")


# --- item 11: the first of tools sharing a name decides ------------------------------------


def test_param_headers_first_of_a_name_decides_even_when_invalid() -> None:
    with pytest.warns(UserWarning, match="'geo'"):
        tools = http.param_headers([{"name": "geo", "inputSchema": BAD},
                                    {"name": "geo", "inputSchema": SCHEMA}])  # fmt: skip
    assert tools == {}  # nothing is checked for that name, as in the SDK
    client = call(http.Guard(App(), tools=tools), scope_for(geo_headers(b"us")), chunks(GEO, 99))
    assert client.status == 200


# --- item 13: param_headers takes what an SDK gives it -----------------------------------


class Attributes:
    """An object with the attributes of a tool, without model_dump."""

    def __init__(self, name: str, schema: Any) -> None:
        self.name, self.inputSchema = name, schema


def test_param_headers_takes_sdk_tool_objects() -> None:
    mcp_types = pytest.importorskip("mcp_types", reason="the MCP SDK is not installed")
    sdk = [mcp_types.Tool(name="geo", input_schema=SCHEMA),
           mcp_types.Tool(name="plain", input_schema={"type": "object"})]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = http.param_headers(sdk)
        result = http.param_headers(mcp_types.ListToolsResult(tools=sdk))
    assert compiled["geo"].headers == result["geo"].headers == {"Mcp-Param-Region": ("region",)}
    assert sorted(compiled) == sorted(result) == ["geo", "plain"]


def test_param_headers_takes_objects_with_the_attributes() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = http.param_headers([Attributes("geo", SCHEMA)])
    assert compiled["geo"].headers == {"Mcp-Param-Region": ("region",)}


@pytest.mark.parametrize("entry", [
    {"name": "geo", "input_schema": SCHEMA},  # an SDK Tool dumped without by_alias=True
    {"name": "geo", "parameters": SCHEMA},  # a FastMCP 4.x FunctionTool's model_dump()
    {"name": "geo", "inputSchema": None},
    {"name": "geo"},
])  # fmt: skip
def test_param_headers_warns_on_an_entry_without_input_schema(entry: dict) -> None:
    with pytest.warns(UserWarning, match="'geo' has no inputSchema") as caught:
        assert http.param_headers([entry]) == {}
    assert len(caught) == 1
