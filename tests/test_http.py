"""rpcline.http: the MCP 2026-07-28 HTTP ladder, rule by rule and against the official SDK.

Every test taking ``hmod`` (conftest.py) runs on both implementations (``http_c`` and
``http_py``).
The oracle tests feed hypothesis-generated bodies and header sets to ``check_request``
and to the SDK's own functions, called as ``mcp/server/_streamable_http_modern.py`` calls
them, and compare the HTTP status and the JSON-RPC error code; where rpcline differs on
purpose the difference is in DIFFERENCES (and in docs/gateways.md), and the oracle
accepts exactly those.
"""

from __future__ import annotations

import base64
import importlib
import json
import pickle
from types import ModuleType

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rpcline._core.http_schema import ParamHeaders

V = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
META = {VERSION_KEY: V, CAPS_KEY: {}}

# Where rpcline's verdict differs from the SDK's (mcp 2.3), and why. Same wording in
# docs/gateways.md, "HTTP gateways (MCP 2026-07-28)".
DIFFERENCES = {
    "params-not-object": "non-object params (request or notification): rpcline answers "
    "-32602 Invalid params (the card's code), the SDK -32600; both 400",
    "error-id": "an envelope refusal (posted response, bad params, bad jsonrpc or method) "
    "carries the request's id when it is readable; the SDK answers with id null",
    "json-validity": "validity is orjson's: NaN/Infinity, numbers infinite as doubles, lone "
    "surrogate escapes, a UTF-8 BOM and UTF-16/32 bodies are parse errors (400 -32700); "
    "json.loads accepts them",
    "big-ids": "ids beyond 64 bits are refused (400 -32600, as parse and route refuse "
    "them); the SDK accepts them",
    "invalid-schema": "ParamHeaders raises ValueError for a schema whose x-mcp-header "
    "annotations are invalid; the SDK silently skips Mcp-Param checks for that tool",
    "deep-nesting": "a body nested up to 1024 levels is valid (orjson's limit, as for parse "
    "and route); the SDK's json.loads raises RecursionError (400 -32700) from about 970 "
    "levels, depending on the depth of its caller's stack",
    "headers-none": "headers=None skips every header rung (classify_inbound_request's "
    "headers=None); notifications are then accepted without a version check",
}


def request(method: str = "tools/call", id: object = 1, **params: object) -> bytes:
    params.setdefault("_meta", META)
    return orjson.dumps(
        {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
    )


def headers_for(
    method: str = "tools/call", name: str | None = "echo", version: str = V
) -> list:
    pairs = [
        (b"mcp-protocol-version", version.encode()),
        (b"mcp-method", method.encode()),
    ]
    if name is not None:
        pairs.append((b"mcp-name", name.encode()))
    return pairs


def code(verdict: object) -> int | None:
    return None if verdict.error is None else verdict.error.code


# --- each rung ----------------------------------------------------------------------------


def test_valid_request(hmod: ModuleType) -> None:
    v = hmod.check_request(request(name="echo"), headers_for())
    assert (v.status, v.error, v.response, v.name, v.protocol_version) == (
        200,
        None,
        None,
        "echo",
        V,
    )
    assert (v.route.kind, v.route.id, v.route.method) == ("request", 1, "tools/call")


def test_parse_error(hmod: ModuleType, impl: ModuleType) -> None:
    v = hmod.check_request(b'{"jsonrpc": "2.0", "id": 5', headers_for())
    assert (v.status, code(v), type(v.error)) == (400, -32700, impl.ParseError)
    assert orjson.loads(v.response)["id"] is None


def _sdk_rejection(body: bytes, pairs: list) -> str:
    """The SDK's own message for a forged header (mcp 2.3, its ladder as its server runs it)."""
    inbound = pytest.importorskip("mcp.shared.inbound")
    headers = {name.decode(): value.decode() for name, value in pairs}
    return inbound.classify_inbound_request(json.loads(body), headers=headers).message


@pytest.mark.parametrize(
    ("body", "pairs"),
    [
        (request(name="echo"), headers_for(version="2026-07-29")[:1] + headers_for()[1:]),
        (request(name="echo"), headers_for(method="tools/list")),
        (request(name="echo"), headers_for(name="other")),
        (request(name="echo", _meta={VERSION_KEY: V}), headers_for()),
        (request(name="echo", _meta=[]), headers_for()),
    ],
    ids=["version", "method", "name", "meta-key-missing", "meta-not-object"],
)
def test_a_refusal_says_its_detail_in_message_as_the_sdk_does(
    hmod: ModuleType, body: bytes, pairs: list
) -> None:
    # Issue 31 item 10: "message": "Header mismatch" with the detail in data lost the
    # detail for a client that logs only the message; the SDK puts it in the message.
    v = hmod.check_request(body, pairs)
    error = orjson.loads(v.response)["error"]
    assert error == {"code": v.error.code, "message": v.error.reason}
    assert error["message"] == _sdk_rejection(body, pairs)


def test_notification(hmod: ModuleType) -> None:
    body = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":null}'
    v = hmod.check_request(body, [(b"mcp-protocol-version", V.encode())])
    assert (v.status, v.error, v.response) == (202, None, None)
    v = hmod.check_request(body, [(b"mcp-protocol-version", b"2025-06-18")])
    assert (v.status, code(v)) == (400, -32022)
    assert orjson.loads(v.response) == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": [V], "requested": "2025-06-18"}}}  # fmt: skip
    v = hmod.check_request(body, {})  # no header: requested is ""
    assert (code(v), v.error.requested) == (-32022, "")
    v = hmod.check_request(
        b'{"jsonrpc":"2.0","method":"n","params":[1]}', headers_for()
    )
    assert (v.status, code(v)) == (400, -32602)


@pytest.mark.parametrize(
    ("body", "expected", "id"),
    [
        (b'{"jsonrpc":"2.0","id":3,"result":{}}', -32600, 3),  # a posted response
        (b'{"jsonrpc":"2.0","result":{}}', -32600, None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600, None),  # a batch
        (b'"hello"', -32600, None),
        (b'{"jsonrpc":"1.0","id":4,"method":"ping"}', -32600, 4),
        (b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":"a","method":5}', -32600, "a"),
        (b'{"jsonrpc":"2.0","id":6,"method":"ping","params":[]}', -32602, 6),
        (b'{"jsonrpc":"2.0","method":7}', -32600, None),
    ],
)
def test_invalid_envelope(
    hmod: ModuleType, body: bytes, expected: int, id: object
) -> None:
    v = hmod.check_request(body, headers_for())
    assert (v.status, code(v)) == (400, expected)
    assert orjson.loads(v.response)["id"] == id


@pytest.mark.parametrize("header", ["mcp-protocol-version", "Mcp-Method", "MCP-NAME"])
def test_duplicated_routing_header(hmod: ModuleType, header: str) -> None:
    pairs = [*headers_for(), (header, "x")]
    v = hmod.check_request(request(name="echo"), pairs)
    assert (v.status, code(v)) == (400, -32020)
    assert orjson.loads(v.response)["id"] == 1
    # A mapping folds duplicates away: only case variants of one name can show them.
    assert hmod.check_request(request(name="echo"), dict(headers_for())).status == 200


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({}, "params._meta must be an object"),
        ({"_meta": [1]}, "params._meta must be an object"),
        (
            {"_meta": {CAPS_KEY: {}}},
            f"missing the required envelope key(s): {VERSION_KEY}",
        ),
        (
            {"_meta": {VERSION_KEY: V}},
            f"missing the required envelope key(s): {CAPS_KEY}",
        ),
    ],
)
def test_meta_envelope(hmod: ModuleType, params: dict, reason: str) -> None:
    body = orjson.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params}
    )
    v = hmod.check_request(body, headers_for("tools/list", None))
    assert (v.status, code(v)) == (400, -32602)
    assert reason in v.error.reason
    no_params = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
    assert (
        code(hmod.check_request(no_params, headers_for("tools/list", None))) == -32602
    )


def test_mirrored_headers(hmod: ModuleType) -> None:
    body = request(name="echo")
    for pairs in (
        headers_for(version="2025-11-25"),
        headers_for(method="tools/list"),
        headers_for(name="other"),
        headers_for(name=None),
        headers_for()[1:],
        [(b"mcp-protocol-version", V.encode() + b" ")] + headers_for()[1:],
    ):
        v = hmod.check_request(body, pairs)
        assert (v.status, code(v)) == (400, -32020), pairs
    # Wrong case in the names is the same header; base64 in Mcp-Name is decoded.
    pairs = [
        ("MCP-Protocol-Version", V),
        ("mcp-METHOD", "tools/call"),
        ("Mcp-Name", "echo"),
    ]
    assert hmod.check_request(body, pairs).status == 200
    sentinel = "=?base64?" + base64.b64encode("é😀".encode()).decode() + "?="
    assert (
        hmod.check_request(request(name="é😀"), headers_for(name=sentinel)).status
        == 200
    )
    bad = "=?base64?" + "ZQ=" + "?="
    assert code(hmod.check_request(request(name="e"), headers_for(name=bad))) == -32020
    # resources/read mirrors uri; a non-string name never matches; a null one is not checked.
    uri = request("resources/read", uri="file:///a")
    assert (
        hmod.check_request(uri, headers_for("resources/read", "file:///a")).status
        == 200
    )
    assert code(hmod.check_request(request(name=5), headers_for(name="5"))) == -32020
    assert hmod.check_request(request(name=None), headers_for(name="x")).status == 200


def test_version(hmod: ModuleType) -> None:
    old = orjson.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping",
                        "params": {"_meta": {VERSION_KEY: "2099-01-01", CAPS_KEY: {}}}})  # fmt: skip
    v = hmod.check_request(old, headers_for("ping", None, "2099-01-01"))
    assert (v.status, code(v), v.error.to_json()["data"]) == (
        400, -32022, {"supported": [V], "requested": "2099-01-01"})  # fmt: skip
    assert hmod.check_request(old, headers_for("ping", None, "2099-01-01"),
                              versions=[V, "2099-01-01"]).status == 200  # fmt: skip
    # Not a string: a header mismatch when headers are given, -32602 without them.
    numeric = old.replace(b'"2099-01-01"', b"20990101")
    assert (
        code(hmod.check_request(numeric, headers_for("ping", None, "20990101")))
        == -32020
    )
    assert code(hmod.check_request(numeric, None)) == -32602


SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        "deep": {"type": "object", "properties": {
            "id": {"type": "integer", "x-mcp-header": "Deep-Id"}}},
    },
}  # fmt: skip
TOOLS = {"echo": ParamHeaders(SCHEMA)}


@pytest.mark.parametrize(
    ("arguments", "params", "status"),
    [
        ({"region": "eu", "count": 42}, {"Region": "eu", "Count": "42"}, 200),
        ({"count": 42}, {"Count": "42.000"}, 200),
        ({"count": 42.0}, {"Count": "42"}, 200),
        ({"count": 2**60 + 1}, {"Count": str(2**60 + 1)}, 200),
        ({"count": 2**60 + 1}, {"Count": str(2**60)}, 400),
        ({"count": 42}, {"Count": "4.2e1"}, 400),
        ({"count": 42}, {"Count": "42.5"}, 400),
        ({"flag": True}, {"Flag": "true"}, 200),
        ({"flag": False}, {"Flag": "False"}, 400),
        ({"region": None}, {}, 200),
        ({"region": None}, {"Region": "x"}, 400),
        ({}, {"Region": "x"}, 400),
        ({"region": "eu"}, {}, 400),
        ({"region": ["eu"]}, {}, 200),
        ({"region": ["eu"]}, {"Region": "['eu']"}, 400),
        ({"region": "é"}, {"Region": "=?base64?w6k=?="}, 200),
        ({"region": "é"}, {"Region": "=?base64?w6k?="}, 400),
        ({"deep": {"id": 7}}, {"Deep-Id": "7"}, 200),
        ({"deep": 7}, {"Deep-Id": "7"}, 400),
        ({"deep": {"id": 7}}, {}, 400),
    ],
)
def test_param_headers(
    hmod: ModuleType, arguments: dict, params: dict, status: int
) -> None:
    pairs = headers_for() + [(f"Mcp-Param-{k}", v) for k, v in params.items()]
    v = hmod.check_request(
        request(name="echo", arguments=arguments), pairs, tools=TOOLS
    )
    assert (v.status, code(v)) == ((200, None) if status == 200 else (400, -32020))


def test_param_headers_duplicate_and_scope(hmod: ModuleType) -> None:
    body = request(name="echo", arguments={"region": "eu"})
    pairs = headers_for() + [(b"mcp-param-region", b"eu"), (b"Mcp-Param-Region", b"eu")]
    assert code(hmod.check_request(body, pairs, tools=TOOLS)) == -32020
    # Another tool, no tools at all, or non-object arguments: not checked.
    assert (
        hmod.check_request(body, pairs[:3] + [(b"mcp-param-region", b"x")]).status
        == 200
    )
    other = request(name="other", arguments={"region": "eu"})
    assert (
        hmod.check_request(other, headers_for(name="other"), tools=TOOLS).status == 200
    )
    listed = request(name="echo", arguments=[1])
    assert hmod.check_request(listed, headers_for() + [(b"mcp-param-region", b"x")],
                              tools=TOOLS).status == 200  # fmt: skip


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "x-mcp-header": "Root"},
        {
            "type": "object",
            "properties": {"a": {"type": "number", "x-mcp-header": "A"}},
        },
        {
            "type": "object",
            "properties": {"a": {"type": "string", "x-mcp-header": "A B"}},
        },
        {"type": "object", "properties": {"a": {"x-mcp-header": "A"}}},
        {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": 5}}},
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "A"},
                "b": {"type": "string", "x-mcp-header": "a"},
            },
        },
        {"type": "object", "items": {"type": "string", "x-mcp-header": "I"}},
    ],
)
def test_invalid_schemas(schema: dict) -> None:
    with pytest.raises(ValueError, match="x-mcp-header"):
        ParamHeaders(schema)


def test_headers_forms(hmod: ModuleType) -> None:
    body = request(name="echo")
    as_str = [(n.decode(), v.decode()) for n, v in headers_for()]
    for form in (headers_for(), as_str, dict(as_str), dict(headers_for()),
                 [(bytearray(n), memoryview(v)) for n, v in headers_for()]):  # fmt: skip
        assert hmod.check_request(body, form).status == 200
    with pytest.raises(TypeError):
        hmod.check_request(body, [(5, "x")])
    with pytest.raises(TypeError):
        hmod.check_request(body, [("mcp-name", 5)])


def test_records(hmod: ModuleType, impl: ModuleType) -> None:
    v = hmod.check_request(request(name="echo"), headers_for(name="x"))
    assert (
        isinstance(v.error, impl.ProtocolError) and type(v.error) is hmod.HeaderMismatch
    )
    assert v.error == hmod.HeaderMismatch(v.error.reason) and v.error.code == -32020
    u = hmod.UnsupportedProtocolVersion("r", [V], "x")
    assert (u.supported, u.requested, u.code) == ((V,), "x", -32022)
    assert pickle.loads(pickle.dumps(u)) == u and pickle.loads(pickle.dumps(v)) == v
    assert isinstance(u, impl.ProtocolError) and "requested='x'" in repr(u)
    assert v == hmod.check_request(request(name="echo"), headers_for(name="x"))
    assert "status=400" in repr(v)


def test_facade() -> None:
    import rpcline
    from rpcline import http

    assert rpcline.http is http and http.ParamHeaders is ParamHeaders
    expected = "http_c" if rpcline.IMPLEMENTATION == "cython" else "http_py"
    assert http.check_request.__module__ == f"rpcline._core.{expected}"
    v = http.check_request(request(name="e"), headers_for(name="e"))
    assert v.route.__class__ is rpcline.Route


def test_twins_agree(py_module: ModuleType) -> None:
    """The two implementations give equal verdicts, field by field (reasons included)."""
    try:
        c = importlib.import_module("rpcline._core.http_c")
    except ImportError:
        pytest.skip("the Cython core was not built: only the twin runs here")
    p = importlib.import_module("rpcline._core.http_py")
    bodies = [request(name="echo", arguments={"region": "x"}), b"[]", b"{", request(name=5),
              b'{"jsonrpc":"2.0","method":"n"}', request("ping", _meta={})]  # fmt: skip
    for body in bodies:
        for pairs in (headers_for(), headers_for(name="x"), [], None):
            a, b = (
                c.check_request(body, pairs, tools=TOOLS),
                p.check_request(body, pairs, tools=TOOLS),
            )
            assert (a.status, a.name, a.protocol_version, a.response) == (
                b.status, b.name, b.protocol_version, b.response)  # fmt: skip


# --- the SDK as the oracle ----------------------------------------------------------------

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed: the oracle tests compare check_request with it")  # fmt: skip
from mcp.shared import inbound
from mcp_types import JSONRPCNotification, JSONRPCRequest
from pydantic import ValidationError
from starlette.datastructures import Headers


def sdk_verdict(body: bytes, pairs: list, schemas: dict) -> tuple[int, int | None]:
    """Status and code as _streamable_http_modern.handle_modern_request decides them."""
    headers = Headers(
        raw=[(bytes(n).lower(), bytes(v)) for n, v in pairs]
    )  # ASGI: lowercase
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return 400, -32700
    if isinstance(decoded, dict) and "id" not in decoded:
        try:
            JSONRPCNotification.model_validate(decoded)
        except ValidationError:
            return 400, -32600
        requested = headers.get("mcp-protocol-version", "")
        if inbound.unsupported_protocol_version_rejection(requested, [V]) is not None:
            return 400, -32022
        return 202, None
    try:
        req = JSONRPCRequest.model_validate(decoded)
    except ValidationError:
        return 400, -32600
    if inbound.find_duplicated_routing_header(headers.items()) is not None:
        return 400, -32020
    verdict = inbound.classify_inbound_request(decoded, headers=dict(headers),
                                               supported_modern_versions=[V])  # fmt: skip
    if isinstance(verdict, inbound.InboundLadderRejection):
        return inbound.ERROR_CODE_HTTP_STATUS[verdict.code], verdict.code
    params = req.params or {}
    name, arguments = params.get("name"), params.get("arguments")
    if (
        req.method == "tools/call"
        and isinstance(name, str)
        and name in schemas
        and (arguments is None or isinstance(arguments, dict))
    ):
        rejection = inbound.validate_mcp_param_headers(
            schemas[name], arguments or {}, headers
        )
        if rejection is not None:
            return 400, rejection.code
    return 200, None


def expected_from_sdk(body: bytes, sdk: tuple[int, int | None], ours: object) -> tuple:
    """The SDK's verdict, with the listed DIFFERENCES applied."""
    if (
        sdk == (400, -32600)
        and code(ours) == -32602
        and ours.error.reason == "params must be an object"
    ):
        return (400, -32602)  # DIFFERENCES["params-not-object"]
    return sdk


SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6),
)  # fmt: skip
ARGUMENTS = st.dictionaries(
    st.sampled_from(["region", "count", "flag", "deep", "other"]),
    st.one_of(
        SCALARS,
        st.dictionaries(st.sampled_from(["id", "x"]), SCALARS, max_size=2),
        st.lists(SCALARS, max_size=2),
    ),
    max_size=4,
)
METHODS = st.sampled_from(["tools/call", "prompts/get", "resources/read", "tools/list",
                           "server/discover", "subscriptions/listen", "ping"])  # fmt: skip
META_VALUES = st.one_of(
    st.just(META),
    st.fixed_dictionaries(
        {
            VERSION_KEY: st.sampled_from([V, "2025-06-18", 5, None]),
            CAPS_KEY: st.just({}),
        }
    ),
    st.sampled_from([{}, {CAPS_KEY: {}}, {VERSION_KEY: V}, [], "x", None]),
)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, dict]:
    method = draw(METHODS)
    message: dict = {"jsonrpc": "2.0", "method": method}
    params: dict = {}
    if draw(
        st.integers(0, 9)
    ):  # mostly a good envelope, so that later rungs are reached
        params["_meta"] = draw(
            st.one_of(st.just(META), META_VALUES)
            if draw(st.booleans())
            else st.just(META)
        )
    if method in ("tools/call", "prompts/get"):
        params["name"] = draw(
            st.one_of(st.just("echo"), st.sampled_from(["é😀", "a b"]), SCALARS)
        )
    if method == "resources/read":
        params["uri"] = draw(st.sampled_from(["file:///a", "ü", None, 3]))
    if method == "tools/call" and draw(st.integers(0, 4)):
        params["arguments"] = draw(st.one_of(ARGUMENTS, st.none(), st.just([1])))
    message["params"] = params
    envelope = draw(st.sampled_from(["ok"] * 12 + ["notification", "response", "batch",
                                     "params", "jsonrpc", "id", "parse", "method"]))  # fmt: skip
    message["id"] = draw(st.one_of(st.integers(-(2**63), 2**63), st.text(max_size=3)))
    if envelope == "notification":
        del message["id"]
    elif envelope == "response":
        message = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
    elif envelope == "params":
        message["params"] = draw(st.sampled_from([[], 5, "x", None]))
    elif envelope == "jsonrpc":
        message["jsonrpc"] = draw(st.sampled_from(["1.0", 2, None]))
    elif envelope == "id":
        message["id"] = draw(st.sampled_from([1.5, True, None, [1]]))
    elif envelope == "method":
        message["method"] = draw(st.sampled_from([None, 5, ["x"]]))
    body = json.dumps([message] if envelope == "batch" else message,
                      ensure_ascii=draw(st.booleans())).encode()  # fmt: skip
    if envelope == "parse":
        body = body[: draw(st.integers(0, len(body) - 1))]
    return body, message if isinstance(message, dict) else {}


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@st.composite
def header_sets(draw: st.DrawFn, message: dict) -> list:
    """The headers a conforming client sends for the message, then damaged."""
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    version = meta.get(VERSION_KEY, V)
    method = message.get("method") if isinstance(message.get("method"), str) else "x"
    pairs = [("mcp-protocol-version", version if isinstance(version, str) else V),
             ("mcp-method", method)]  # fmt: skip
    name_key = inbound.NAME_BEARING_METHODS.get(method)
    if name_key is not None and isinstance(params.get(name_key), str):
        pairs.append(("mcp-name", inbound.encode_header_value(params[name_key])))
    arguments = params.get("arguments")
    if isinstance(arguments, dict):
        emitted = inbound.mcp_param_headers(inbound.x_mcp_header_map(SCHEMA), arguments)
        pairs += sorted(emitted.items())
    for _ in range(draw(st.integers(0, 2))):
        if not pairs:
            break
        i = draw(st.integers(0, len(pairs) - 1))
        name, value = pairs[i]
        damage = draw(st.sampled_from(["drop", "change", "duplicate", "case", "b64", "bad-b64",
                                       "param", "number"]))  # fmt: skip
        if damage == "drop":
            del pairs[i]
        elif damage == "change":
            pairs[i] = (name, value + "x")
        elif damage == "duplicate":
            pairs.append((name, draw(st.sampled_from([value, "y"]))))
        elif damage == "case":
            pairs[i] = (name.upper(), value)
        elif damage == "b64":
            pairs[i] = (name, b64(value))
        elif damage == "bad-b64":
            pairs[i] = (
                name,
                "=?base64?" + draw(st.sampled_from(["!!", "ZQ=", "w6"])) + "?=",
            )
        elif damage == "param":
            pairs.append((draw(st.sampled_from(["Mcp-Param-Count", "mcp-param-deep-id",
                                                "Mcp-Param-Flag"])), draw(st.sampled_from(
                                                    ["42", "true", "-0", "7.0", ""]))))  # fmt: skip
        else:
            pairs[i] = (name, draw(st.sampled_from(["42", "42.0", "1e3", "true"])))
    return [(n.encode("latin-1"), v.encode("utf-8")) for n, v in pairs]


@given(st.data())
def test_oracle(hmod: ModuleType, data: st.DataObject) -> None:
    body, message = data.draw(bodies())
    pairs = data.draw(header_sets(message))
    ours = hmod.check_request(body, pairs, tools=TOOLS)
    sdk = sdk_verdict(body, pairs, {"echo": SCHEMA})
    assert (ours.status, code(ours)) == expected_from_sdk(body, sdk, ours), (
        body,
        pairs,
    )
    if ours.status == 400 and ours.error.code != -32700 and sdk[1] == code(ours):
        assert (
            ours.response is not None
            and orjson.loads(ours.response)["error"]["code"] == sdk[1]
        )


@given(st.lists(st.tuples(st.sampled_from([b"mcp-param-count", b"mcp-param-region",
                                           b"mcp-param-flag", b"mcp-param-deep-id"]),
                          st.one_of(st.sampled_from([b"42", b"42.0", b"-0", b"true", b"eu",
                                                     b"=?base64?ZXU=?="]),
                                    st.binary(max_size=4))), max_size=4),
       ARGUMENTS)  # fmt: skip
def test_oracle_param_headers(hmod: ModuleType, params: list, arguments: dict) -> None:
    """Mcp-Param-* alone, on arbitrary header sets: the SDK's validate_mcp_param_headers."""
    body = request(name="echo", arguments=arguments)
    pairs = headers_for() + params
    ours = hmod.check_request(body, pairs, tools=TOOLS)
    assert (ours.status, code(ours)) == sdk_verdict(body, pairs, {"echo": SCHEMA}), (
        body,
        pairs,
    )


@pytest.mark.parametrize("depth", [1000, 1024])
def test_deep_nesting_against_the_sdk(hmod: ModuleType, depth: int) -> None:
    # DIFFERENCES["deep-nesting"]: depth counts the message object as the first level.
    nested = "[" * (depth - 2) + "]" * (depth - 2)
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":%s,"x":%s}}' % (
        orjson.dumps(META), nested.encode())
    headers = headers_for("tools/list", None)
    assert hmod.check_request(body, headers).status == 200
    assert sdk_verdict(body, headers, {}) == (400, -32700)
    deeper = body.replace(b'"x":[', b'"x":[[', 1).replace(b"]}}", b"]]}}")
    assert code(hmod.check_request(deeper, headers)) == (-32700 if depth == 1024 else None)
