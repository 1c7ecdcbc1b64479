"""``rpcline.otel``'s library face: attributes read from a ``Route``, a traceparent spliced in.

The oracle is orjson: a spliced line decodes to the original message with the trace keys
set in ``params._meta`` (whatever the line's escapes, duplicates and whitespace), and every
byte outside ``params`` is the caller's.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rpcline
from rpcline import otel

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**53, 2**53) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=8)


def escaped(key: str) -> str:
    """A JSON object key written with every character escaped."""
    return '"' + "".join(f"\\u{ord(c):04x}" for c in key) + '"'


def test_attributes_of_a_tool_call() -> None:
    line = orjson.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                         "params": {"arguments": {"name": "not this"}, "name": "get_weather"}})
    r = rpcline.route(line)
    assert otel.span_name(r) == "tools/call get_weather"
    assert otel.attributes(r, protocol_version="2026-07-28", transport="tcp") == {
        "mcp.method.name": "tools/call", "jsonrpc.request.id": "7",
        "gen_ai.tool.name": "get_weather", "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": "2026-07-28", "network.transport": "tcp"}


@pytest.mark.parametrize(("message", "name", "extra"), [
    ({"method": "prompts/get", "params": {"name": "review"}}, "prompts/get review",
     {"gen_ai.prompt.name": "review"}),
    ({"method": "resources/read", "params": {"uri": "file:///a"}}, "resources/read",
     {"mcp.resource.uri": "file:///a"}),
    ({"method": "tools/list"}, "tools/list", {}),
    ({"method": "tools/call", "params": {"name": 5}}, "tools/call",
     {"gen_ai.operation.name": "execute_tool"}),
])
def test_names_and_targets(message: dict[str, Any], name: str, extra: dict[str, str]) -> None:
    r = rpcline.route(orjson.dumps({"jsonrpc": "2.0", "id": "a", **message}))
    assert otel.span_name(r) == name
    assert otel.attributes(r) == {"mcp.method.name": message["method"],
                                  "jsonrpc.request.id": "a", **extra}


def test_an_escaped_name_and_the_last_duplicate_are_read() -> None:
    line = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"first",'
            f'{escaped("name")}:"\\u00e9t\\u00e9"}}}}')
    assert otel.target(rpcline.route(line)) == "été" == orjson.loads(line)["params"]["name"]


def test_splice_adds_params_and_meta_where_absent() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    spliced = otel.splice_traceparent(line, PARENT, "k=v")
    assert orjson.loads(spliced) == {**orjson.loads(line), "params": {"_meta": {
        "traceparent": PARENT, "tracestate": "k=v"}}}
    assert spliced.startswith(line[:-1])
    empty = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{ }}'
    assert orjson.loads(otel.splice_traceparent(empty, PARENT))["params"] == {
        "_meta": {"traceparent": PARENT}}


def test_splice_replaces_every_duplicate_and_escaped_key() -> None:
    line = ('{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":'
            f'{{"traceparent":"old",{escaped("traceparent")}:"older","k":1}}}}}}')
    spliced = otel.splice_traceparent(line, PARENT)
    assert orjson.loads(spliced)["params"]["_meta"] == {"traceparent": PARENT, "k": 1}
    assert b"old" not in spliced


def test_a_non_object_meta_is_left_alone_and_a_response_refused() -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":null}}'
    assert otel.splice_traceparent(line, PARENT) == line
    with pytest.raises(ValueError):
        otel.splice_traceparent(b'{"jsonrpc":"2.0","id":1,"result":{}}', PARENT)


def test_trace_context_from_meta_else_headers() -> None:
    with_meta = rpcline.route(otel.splice_traceparent(
        b'{"jsonrpc":"2.0","id":1,"method":"x"}', PARENT, "a=b"))
    headers = [(b"traceparent", b"00-1-2-01"), (b"content-type", b"x")]
    assert otel.trace_context(with_meta, headers) == {"traceparent": PARENT, "tracestate": "a=b"}
    plain = rpcline.route(b'{"jsonrpc":"2.0","id":1,"method":"x"}')
    assert otel.trace_context(plain, headers) == {"traceparent": "00-1-2-01"}


@settings(max_examples=300, deadline=None)
@given(params=st.none() | st.dictionaries(st.text(max_size=6), json_values, max_size=4),
       meta=st.none() | st.dictionaries(st.sampled_from(["traceparent", "tracestate", "k", "é"]),
                                        json_values, max_size=3),
       state=st.none() | st.text(max_size=10), indent=st.booleans(), id=st.integers(0, 9))
def test_a_spliced_line_is_the_original_plus_the_trace_keys(
        params: dict[str, Any] | None, meta: dict[str, Any] | None, state: str | None,
        indent: bool, id: int) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": "tools/call"}
    if params is not None:
        params.pop("_meta", None)
        if meta is not None:
            params["_meta"] = meta
        message["params"] = params
    line = orjson.dumps(message, option=orjson.OPT_INDENT_2 if indent else 0)
    spliced = otel.splice_traceparent(line, PARENT, state)
    expected = orjson.loads(line)
    added = {"traceparent": PARENT} if state is None else {"traceparent": PARENT,
                                                           "tracestate": state}
    expected.setdefault("params", {}).setdefault("_meta", {}).update(added)
    assert orjson.loads(spliced) == expected
    r = rpcline.route(spliced)
    assert r.kind == "request" and r.id == id
    assert otel.trace_context(r)["traceparent"] == PARENT
    params_at = line.find(b'"params"')
    assert spliced[:params_at if params_at >= 0 else len(line) - 1] == line[
        :params_at if params_at >= 0 else len(line) - 1]


def test_telemetry_needs_only_the_api() -> None:
    pytest.importorskip("opentelemetry.trace", reason="opentelemetry-api is not installed")
    assert otel.Telemetry.__name__ == "Telemetry"
    assert "Telemetry" in dir(otel)


@pytest.mark.parametrize("params", [
    {"arguments": {"_meta": {"traceparent": "inner"}}},  # a nested _meta only
    {"arguments": {"_meta": {}}, "_meta": {"k": 1}},  # nested and top level
    {"_meta": {"k": "\"_meta\":"}, "name": "x"},  # the key's bytes inside a string
    {"\"_meta": 1, "_meta": {"k": 2}},  # a key ending in _meta
    {"arguments": {"text": "x" * 5000}, "_meta": {"traceparent": "old"}},  # walked: large
])
def test_only_params_own_meta_is_spliced(params: dict[str, Any]) -> None:
    line = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    expected = orjson.loads(line)
    expected["params"].setdefault("_meta", {})["traceparent"] = PARENT
    assert orjson.loads(otel.splice_traceparent(line, PARENT)) == expected


def test_a_large_params_target_is_walked() -> None:
    line = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "arguments": {"name": "inner", "blob": "x" * 10_000}, "name": "outer"}})
    assert otel.target(rpcline.route(line)) == "outer"


@pytest.mark.parametrize("params", [
    '{"name":"x"}',
    '{ "_meta" : {"name":"inner"} , "name" : "x" }',  # the key after a skipped member
    '{"arguments":{"name":"inner"}}',  # only a nested object's key: no target
    '{"arguments":{"t":"say \\"name\\": 1"}}',  # the bytes in a string, escaped quotes
    '{"arguments":{"\\"name\\"":1}}',  # a key with the name quoted in it
    '{"t":"a\\\\","name":"x"}',  # an escaped backslash just before the key
    '{"a":"\\"name","b":5}',  # "name" inside a value, never a key
    '{"name":5}',
    '{"name":"first","name":"last"}',
    '{}',
])
def test_the_target_is_what_a_parser_reads(params: str) -> None:
    line = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + params + "}"
    expected = orjson.loads(line)["params"].get("name")
    assert otel.target(rpcline.route(line)) == (expected if type(expected) is str else None)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["name", "_meta", "arguments", "x"]), json_values,
                       max_size=4), st.sampled_from(["tools/call", "resources/read"]))
def test_targets_agree_with_orjson(params: dict[str, Any], method: str) -> None:
    line = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    found = orjson.loads(line)["params"].get("name" if method == "tools/call" else "uri")
    assert otel.target(rpcline.route(line)) == (found if type(found) is str else None)
