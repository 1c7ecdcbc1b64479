"""rpcline.http's two ways of reading a POST give one verdict.

The Cython core folds exact-type headers in place and checks plain Mcp-Param-* values on
the bytes, and leaves anything else (other header types, escapes, base64, a mismatch) to
the general path the twin always takes. The scanner reads the members inside ``params``
during the validating pass. These tests hold both to the general path, to ``route`` and
to the SDK: the same verdict whichever way the headers come, the same parse errors at the
same bytes, the last of duplicate members winning, escaped member names read.
"""

from __future__ import annotations

import base64
import importlib
import json
from types import ModuleType

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_http import (
    CAPS_KEY,
    META,
    SCHEMA,
    TOOLS,
    VERSION_KEY,
    V,
    bodies,
    code,
    header_sets,
    headers_for,
    inbound,
    request,
    sdk_verdict,
)


def general_form(pairs: list) -> list:
    """The same pairs as bytearrays: no exact bytes, so the general fold reads them."""
    return [(bytearray(n), bytearray(v)) for n, v in pairs]


def fields(verdict: object) -> tuple:
    return (verdict.status, verdict.route, verdict.name, verdict.protocol_version,
            verdict.error, verdict.response)  # fmt: skip


@given(st.data())
def test_fast_and_general_paths_agree(hmod: ModuleType, data: st.DataObject) -> None:
    body, message = data.draw(bodies())
    pairs = data.draw(header_sets(message))
    fast = hmod.check_request(body, pairs, tools=TOOLS)
    general = hmod.check_request(body, general_form(pairs), tools=TOOLS)
    assert fields(fast) == fields(general), (body, pairs)


@pytest.mark.parametrize("form", [list, general_form, tuple])
def test_first_duplicated_routing_header_is_the_sdks(hmod: ModuleType, form) -> None:
    """Two routing headers sent twice: the reason names the one whose second copy came
    first, as find_duplicated_routing_header does (it used to depend on set order)."""
    base = headers_for()
    for order in ([0, 1, 2, 1, 0], [0, 1, 2, 0, 1], [2, 1, 0, 2, 1], [1, 2, 0, 1, 2]):
        pairs = [base[i] for i in order]
        expected = inbound.find_duplicated_routing_header(
            [(n.decode(), v.decode()) for n, v in pairs]
        )
        v = hmod.check_request(request(name="echo"), form(pairs))
        assert (v.status, code(v)) == (400, -32020)
        assert v.error.reason == f"{expected} header appears more than once", order


def raw(params: str, method: str = "tools/call") -> bytes:
    return f'{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{params}}}'.encode()


META_JSON = json.dumps(META)
NESTED = [
    # duplicate params: the last one is the message (no name, then no _meta)
    raw(f'{{"name":"echo","_meta":{META_JSON}}}')[:-1] + f',"params":{{"_meta":{META_JSON}}}}}'.encode(),
    raw(f'{{"name":"echo","_meta":{META_JSON}}}')[:-1] + b',"params":{"name":"echo"}}',
    raw(f'{{"name":"echo","_meta":{META_JSON}}}')[:-1] + b',"params":null}',
    # duplicate _meta, and _meta that stops being an object
    raw(f'{{"name":"echo","_meta":{META_JSON},"_meta":{{"{CAPS_KEY}":{{}}}}}}'),
    raw(f'{{"name":"echo","_meta":{META_JSON},"_meta":[1]}}'),
    raw(f'{{"name":"echo","_meta":[1],"_meta":{META_JSON}}}'),
    # duplicate names and versions: the last wins
    raw(f'{{"name":"other","name":"echo","_meta":{META_JSON}}}'),
    raw(f'{{"name":"echo","_meta":{{"{VERSION_KEY}":"2025-06-18","{VERSION_KEY}":"{V}",'
        f'"{CAPS_KEY}":{{}}}}}}'),
    # escaped member names mean the same members
    raw(f'{{"n\\u0061me":"echo","\\u005fmeta":{META_JSON}}}'),
    raw('{"name":"echo","_meta":{"io.modelcontextprotocol\\/protocolVersion":"%s",'
        '"io.modelcontextprotocol\\/clientCapabilities":{}}}' % V),
    raw('{"name":"ech\\u006f","_meta":{"io.modelcontextprotocol/protocolVersio\\u006e":'
        '"2026-07-2\\u0038","io.modelcontextprotocol/clientCapabilities":{}}}'),
    raw(f'{{"uri":"file:///a","_meta":{META_JSON}}}', "resources/read"),
    raw(f'{{"_meta":{META_JSON},"uri":"file:///b","uri":null}}', "resources/read"),
    # nested deeper than the members read: not confused with them
    raw(f'{{"arguments":{{"name":"x","_meta":{{}}}},"name":"echo","_meta":{META_JSON}}}'),
]


@pytest.mark.parametrize("body", NESTED)
def test_inner_members_as_json_reads_them(hmod: ModuleType, body: bytes) -> None:
    message = json.loads(body)
    params = message.get("params") or {}
    name = params.get("uri" if message["method"] == "resources/read" else "name")
    pairs = headers_for(message["method"], name if isinstance(name, str) else None)
    v = hmod.check_request(body, pairs, tools=TOOLS)
    assert (v.status, code(v)) == sdk_verdict(body, pairs, {}), body
    if v.status == 200:
        assert v.name == name and v.protocol_version == params["_meta"][VERSION_KEY]


def test_parse_errors_are_routes_own(hmod: ModuleType, impl: ModuleType) -> None:
    """The scan that reads params' members refuses what route refuses, at the same byte
    and in the same words: every prefix of a request, and a bad byte at every offset."""
    body = raw('{"name":"echo","arguments":{"a":[1,{"b":"\\u00e9x"}],"c":-1.5e3},'
               f'"_meta":{META_JSON}}}')  # fmt: skip
    route = importlib.import_module(impl.__name__.replace(".message_", ".route_")).route
    damaged = [body[:cut] for cut in range(len(body))]
    damaged += [body[:i] + bad + body[i + 1:] for i in range(len(body))
                for bad in (b"\x00", b"}", b'"', b"\xff")]  # fmt: skip
    for line in damaged:
        verdict = hmod.check_request(line, None)
        assert verdict.route == route(line), line


def test_plain_param_values_on_the_bytes(hmod: ModuleType) -> None:
    """What the core decides on the bytes, next to what it must leave to the exact check."""
    body = request(name="echo", arguments={"region": "eu", "count": 42, "flag": True,
                                            "deep": {"id": 9}})  # fmt: skip
    agreeing = headers_for() + [(b"mcp-param-region", b"eu"), (b"mcp-param-count", b"42"),
                                (b"Mcp-Param-Flag", b"true"), (b"mcp-param-deep-id", b"9")]  # fmt: skip
    assert hmod.check_request(body, agreeing, tools=TOOLS).status == 200
    for name, value in [(b"mcp-param-count", b"42.0"), (b"mcp-param-region", b"=?base64?ZXU=?="),
                        (b"mcp-param-count", b"43"), (b"mcp-param-count", b"-0")]:  # fmt: skip
        pairs = [p for p in agreeing if p[0].lower() != name] + [(name, value)]
        ours = hmod.check_request(body, pairs, tools=TOOLS)
        assert (ours.status, code(ours)) == sdk_verdict(body, pairs, {"echo": SCHEMA})
        assert fields(ours) == fields(hmod.check_request(body, general_form(pairs), tools=TOOLS))


def test_response_carries_the_id(hmod: ModuleType) -> None:
    v = hmod.check_request(request(name="echo", id="abc"), headers_for(name="other"))
    assert orjson.loads(v.response)["id"] == "abc"


@pytest.mark.parametrize("length", range(0, 40))
def test_argument_values_are_skipped_to_their_end(hmod: ModuleType, length: int) -> None:
    """Annotated arguments after strings holding escaped quotes, backslash runs and
    non-ASCII text at every offset around where the skip turns from a byte at a time to
    strchr (16 bytes), bare and inside containers: found, and compared, as the twin does."""
    for tail in ("\\", '"', '\\"', '\\\\"', "é", '"\\'):
        text = "a" * length + tail
        arguments = {"note": text, "list": [text, {"k": text}], "region": "eu",
                     "count": 7, "deep": {"s": text, "id": 3}}  # fmt: skip
        body = request(name="echo", arguments=arguments)
        pairs = headers_for() + [(b"mcp-param-region", b"eu"), (b"mcp-param-count", b"7"),
                                 (b"mcp-param-deep-id", b"3")]  # fmt: skip
        assert hmod.check_request(body, pairs, tools=TOOLS).status == 200, text
        wrong = pairs[:-1] + [(b"mcp-param-deep-id", b"4")]
        assert code(hmod.check_request(body, wrong, tools=TOOLS)) == -32020, text


def b64(text: str) -> bytes:
    return b"=?base64?" + base64.b64encode(text.encode()) + b"?="


@pytest.mark.parametrize(("region", "sent", "status"), [
    ("eu", b64("eu"), 200), ("é", b64("é"), 200), ("😀 x ", b64("😀 x "), 200), ("", b64(""), 200),
    ("abc", b64("abc"), 200), ("abcd", b64("abcd"), 200), ("abcde", b64("abcde"), 200),
    ("eu", b"=?base64?ZXU?=", 400), ("eu", b"=?base64?ZXV=?=", 400), ("eu", b64("eu ")[:-1], 400),
    ("eu", b64("ev"), 400), ("é", "=?base64?w6k=?=".encode("utf-16-le"), 400),
    ("eu", b"=?base64?ZX\nU=?=", 400), ("eu", b"=?base64?ZXU=?= ", 400), ("e\\u", b64("e\\u"), 200),
])  # fmt: skip
def test_base64_values_on_the_bytes(hmod: ModuleType, region: str, sent: bytes, status: int) -> None:
    """The core compares a sentinel with the argument's bytes; the general path decodes it
    (the SDK's way): one verdict, with the reason, for matches and near misses alike."""
    body = request(name="é😀", arguments={"region": region, "count": 7, "flag": True})
    pairs = headers_for(name=None) + [(b"mcp-name", b64("é😀")), (b"mcp-param-region", sent),
                                      (b"mcp-param-count", b64("7")), (b"mcp-param-flag", b64("true"))]  # fmt: skip
    tools = {"é😀": TOOLS["echo"]}
    fast = hmod.check_request(body, pairs, tools=tools)
    assert fields(fast) == fields(hmod.check_request(body, general_form(pairs), tools=tools))
    assert fast.status == status
