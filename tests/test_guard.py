"""rpcline.http.Guard driven directly as an ASGI 3 callable, and http.param_headers.

Every test taking ``guard_impl`` runs the Guard on both implementations of
``check_request`` (the Guard itself is plain Python). tests/test_guard_e2e.py runs it in
front of the official SDK's server under uvicorn.
"""

from __future__ import annotations

import json
import sys
import tracemalloc
import warnings
from types import ModuleType
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rpcline
from rpcline import http
from rpcline._core.http_schema import ParamHeaders
from rpcline._gateway import guard

V = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientCapabilities": {},
}
SCHEMA = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
}


@pytest.fixture
def guard_impl(hmod: ModuleType, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The Guard calling the check_request of the implementation under test."""
    monkeypatch.setattr(guard, "check_request", hmod.check_request)
    return hmod


def body(method: str = "tools/call", id: object = 7, **params: Any) -> bytes:
    params.setdefault("_meta", META)
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params})


def modern(method: str = "tools/call", name: str | None = "add", **extra: bytes) -> list:
    pairs = [(b"host", b"127.0.0.1:8000"), (b"mcp-protocol-version", V.encode()),
             (b"mcp-method", method.encode())]  # fmt: skip
    if name is not None:
        pairs.append((b"mcp-name", name.encode()))
    return pairs + [(k.encode(), v) for k, v in extra.items()]


def scope_for(headers: list, method: str = "POST", kind: str = "http") -> dict:
    return {"type": kind, "method": method, "path": "/mcp", "headers": headers}


class App:
    """The wrapped app: records what it was called with and what it read, answers 200."""

    def __init__(self, reads: int = 1) -> None:
        self.calls: list[tuple[dict, Any, Any]] = []
        self.read: list[dict] = []
        self.reads = reads

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        self.calls.append((scope, receive, send))
        for _ in range(self.reads):
            self.read.append(await receive())
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"app"})


class Client:
    """The server's side of one request: ``receive`` hands out ``messages`` then a
    disconnect, counting the calls; ``send`` records the Guard's or the app's answer."""

    def __init__(self, messages: list[dict]) -> None:
        self.messages = list(messages)
        self.received = 0
        self.sent: list[dict] = []

    async def receive(self) -> dict:
        self.received += 1
        return self.messages.pop(0) if self.messages else {"type": "http.disconnect"}

    async def send(self, message: dict) -> None:
        self.sent.append(message)

    @property
    def status(self) -> int | None:
        return self.sent[0]["status"] if self.sent else None

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent[1:])

    @property
    def content_type(self) -> bytes:
        return dict(self.sent[0]["headers"]).get(b"content-type", b"")


def chunks(data: bytes, size: int) -> list[dict]:
    parts = [data[i:i + size] for i in range(0, len(data), size)] or [b""]
    return [{"type": "http.request", "body": part, "more_body": i < len(parts) - 1}
            for i, part in enumerate(parts)]  # fmt: skip


def call(guard: http.Guard, scope: dict, messages: list[dict]) -> Client:
    """One request through the Guard. Nothing here waits on I/O, so the coroutine runs to
    its end in one step, without an event loop (and without anyio, which the wheel tests
    do not install)."""
    client = Client(messages)
    coroutine = guard(scope, client.receive, client.send)
    with pytest.raises(StopIteration):
        coroutine.send(None)
    return client


# --- what the Guard leaves alone ----------------------------------------------------------


def test_handshake_versions_are_the_sdks() -> None:
    version = pytest.importorskip("mcp_types.version", reason="the MCP SDK is not installed")
    assert guard.HANDSHAKE_PROTOCOL_VERSIONS == tuple(version.HANDSHAKE_PROTOCOL_VERSIONS)


@pytest.mark.parametrize("kind", ["lifespan", "websocket"])
def test_other_scopes_reach_the_app_untouched(kind: str) -> None:
    app = App(reads=0)
    guard = http.Guard(app, allowed_hosts=[], allowed_origins=[])  # would refuse any HTTP
    scope = {"type": kind, "headers": [(b"host", b"evil")]} if kind == "websocket" else {
        "type": kind}
    client = call(guard, scope, [])
    assert app.calls == [(scope, client.receive, client.send)]
    assert client.received == 0


ERA_2025 = {
    "no version header": [(b"host", b"h")],
    "2025-11-25": [(b"mcp-protocol-version", b"2025-11-25")],
    "2024-11-05": [(b"mcp-protocol-version", b"2024-11-05")],
    "the first header decides": [(b"mcp-protocol-version", b"2025-06-18"),
                                 (b"mcp-protocol-version", V.encode())],
}


@pytest.mark.parametrize("headers", ERA_2025.values(), ids=ERA_2025)
@pytest.mark.parametrize("method", ["POST", "GET", "DELETE"])
def test_2025_era_requests_are_not_read(headers: list, method: str) -> None:
    app = App(reads=0)
    scope = scope_for(headers, method)
    client = call(http.Guard(app), scope, chunks(b"not even JSON", 4))
    assert app.calls == [(scope, client.receive, client.send)]  # the caller's own receive
    assert client.received == 0 and client.status == 200


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_2026_era_requests_other_than_post_pass(method: str) -> None:
    app = App(reads=0)
    client = call(http.Guard(app), scope_for(modern(), method), [])
    assert len(app.calls) == 1 and app.calls[0][1] == client.receive


@pytest.mark.parametrize(("versions", "code"), [
    ([b"1999-01-01"], -32022),  # unknown: the SDK's 2026 entry refuses it as unsupported
    ([b"1999-01-01", b"2025-11-25"], -32020),  # the first decides; then it is sent twice
])  # fmt: skip
def test_2026_era_is_any_version_not_of_the_handshake(
    guard_impl: ModuleType, versions: list, code: int
) -> None:
    app = App()
    headers = [(b"mcp-protocol-version", v) for v in versions] + [(b"mcp-method", b"tools/list")]
    data = body("tools/list", _meta={**META, "io.modelcontextprotocol/protocolVersion": "1999-01-01"})
    client = call(http.Guard(app), scope_for(headers), chunks(data, 1000))
    assert app.calls == [] and client.status == 400
    assert json.loads(client.body)["error"]["code"] == code


# --- the allow-lists -----------------------------------------------------------------------

HOSTS = ["127.0.0.1:*", "localhost:8000", "example.com"]
ORIGINS = ["http://127.0.0.1:*", "https://app.example"]
ALLOW = {
    # (Host, Origin) -> status: the SDK's TransportSecurityMiddleware semantics
    ("127.0.0.1:8000", None): 200,
    ("127.0.0.1:1", "http://127.0.0.1:5173"): 200,
    ("localhost:8000", "https://app.example"): 200,
    ("example.com", ""): 200,  # an empty Origin counts as none
    ("127.0.0.1", None): 421,  # "host:*" wants a port
    ("127.0.0.10:80", None): 421,
    ("localhost:8001", None): 421,
    ("example.com:443", None): 421,
    (None, None): 421,  # no Host at all
    ("", None): 421,
    ("127.0.0.1:8000", "http://127.0.0.1"): 403,
    ("127.0.0.1:8000", "https://evil.example"): 403,
    ("127.0.0.1:8000", "null"): 403,
    ("evil:1", "https://evil.example"): 421,  # the Host is checked first
}


@pytest.mark.parametrize(("host", "origin"), ALLOW, ids=[f"{h}|{o}" for h, o in ALLOW])
@pytest.mark.parametrize("era", ["2025", "2026"])
@pytest.mark.parametrize("method", ["POST", "GET"])
def test_allow_lists(host: str | None, origin: str | None, era: str, method: str) -> None:
    headers = [] if host is None else [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    if era == "2026":
        headers.append((b"mcp-protocol-version", b"2026-07-28"))
    app = App(reads=0)
    guard = http.Guard(app, allowed_hosts=HOSTS, allowed_origins=ORIGINS)
    client = call(guard, scope_for(headers, method), [{"type": "http.request", "body": b"x"}])
    status = ALLOW[host, origin]
    if status == 200:  # allowed: the app, or the ladder for a 2026-era POST of "x"
        assert client.status == (400 if era == "2026" and method == "POST" else 200)
        return
    assert app.calls == [] and client.received == 0  # headers only, before any body
    assert client.status == status and client.content_type.startswith(b"text/plain")
    assert client.body == {421: b"Invalid Host header", 403: b"Invalid Origin header"}[status]


def test_allow_lists_are_independent() -> None:
    headers = [(b"host", b"anything"), (b"origin", b"https://evil.example")]
    only_hosts = call(http.Guard(App(0), allowed_hosts=["anything"]), scope_for(headers), [])
    assert only_hosts.status == 200
    only_origins = call(http.Guard(App(0), allowed_origins=[]), scope_for(headers), [])
    assert only_origins.status == 403
    assert call(http.Guard(App(0), allowed_hosts=[]), scope_for(headers), []).status == 421


# --- the body bound ------------------------------------------------------------------------


@pytest.mark.parametrize("declared", [b"1025", b"99999999999999999999", b"9" * 5000])
def test_declared_length_above_the_bound_is_413_before_reading(declared: bytes) -> None:
    app = App()
    headers = modern(**{"content-length": declared})
    client = call(http.Guard(app, max_body_bytes=1024), scope_for(headers), chunks(b"x", 1))
    assert (client.status, client.body, client.received, app.calls) == (
        413, b"Request body too large", 0, [])


@pytest.mark.parametrize("declared", [b"12x", b"-5", b" 5", b""])
def test_unreadable_declared_length_is_left_to_the_streamed_bound(declared: bytes) -> None:
    data = body(name="add")
    headers = modern(**{"content-length": declared})
    client = call(http.Guard(App(), max_body_bytes=10), scope_for(headers), chunks(data, 4))
    assert client.status == 413 and client.received == 3  # the third chunk crosses 10


@pytest.mark.parametrize("size", [1, 7, 64, 1000])
def test_the_bound_edge(guard_impl: ModuleType, size: int) -> None:
    data = body(name="add", arguments={"a": 1, "b": 2})
    exact = http.Guard(App(), max_body_bytes=len(data))
    passed = call(exact, scope_for(modern()), chunks(data, size))
    assert passed.status == 200 and exact.app.read[0]["body"] == data
    short = http.Guard(App(), max_body_bytes=len(data) - 1)
    refused = call(short, scope_for(modern()), chunks(data, size))
    crossing = -(-len(data) // size)  # the chunk that passes len(data) - 1 is the last one
    assert (refused.status, refused.received, short.app.calls) == (413, crossing, [])


@pytest.mark.parametrize("declared", [b"0000000000000000170", b"0" * 40 + b"170", b"00"])
def test_declared_length_with_leading_zeros_is_its_value(guard_impl: ModuleType,
                                                         declared: bytes) -> None:
    """RFC 9110 allows leading zeros; the SDK's limit middleware reads them with int()."""
    data = body(name="add")
    headers = modern(**{"content-length": declared})
    client = call(http.Guard(App(), max_body_bytes=len(data)), scope_for(headers),
                  chunks(data, 1000))  # fmt: skip
    assert client.status == 200  # the declared length is within the bound; the body is read
    too_small = http.Guard(App(), max_body_bytes=100)
    refused = call(too_small, scope_for(modern(**{"content-length": b"0" * 30 + b"101"})),
                   chunks(data, 1000))  # fmt: skip
    assert (refused.status, refused.received) == (413, 0)


def test_a_body_in_tiny_chunks_holds_the_bound_not_a_chunk_each() -> None:
    """Every 2-byte chunk kept as its own bytes object cost about 20x the bound (issue 29,
    item 8). Held now: one bytearray (over-allocated by at most 1/8) and, for the app, the
    one bytes copy of it, as the SDK's limit middleware holds them."""
    bound = 1024 * 1024
    data = body(name="add", pad="")
    data = body(name="add", pad="x" * (bound - len(data)))  # exactly the bound: it passes
    state = {"at": 0}

    async def receive() -> dict:
        at = state["at"]
        state["at"] = at + 2
        return {"type": "http.request", "body": data[at:at + 2], "more_body": at + 2 < bound}

    async def send(message: dict) -> None:
        sent.append(message)

    sent: list[dict] = []
    guard = http.Guard(App(), max_body_bytes=bound)
    tracemalloc.start()
    try:
        with pytest.raises(StopIteration):
            guard(scope_for(modern()), receive, send).send(None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(data) == bound and sent[0]["status"] == 200 and guard.app.read[0]["body"] == data
    assert peak < 2.5 * bound, f"peak {peak / bound:.2f}x the bound"


def test_nothing_is_read_after_the_crossing_chunk() -> None:
    messages = chunks(b"x" * 100, 10)
    client = call(http.Guard(App(), max_body_bytes=35), scope_for(modern()), messages)
    assert client.status == 413 and client.received == 4 and len(client.messages) == 6


def test_a_client_gone_mid_body_gets_nothing() -> None:
    app = App()
    client = call(http.Guard(app), scope_for(modern()), chunks(b"x" * 100, 10)[:3])
    assert client.sent == [] and app.calls == [] and client.received == 4


# --- the ladder and the replay -------------------------------------------------------------


def test_an_accepted_body_is_replayed_once_then_the_real_stream(guard_impl: ModuleType) -> None:
    data = body(name="add", arguments={"a": 1, "b": 2})
    app = App(reads=3)
    client = call(http.Guard(app), scope_for(modern()), chunks(data, 5))
    assert client.status == 200 and client.body == b"app"
    assert app.read == [{"type": "http.request", "body": data, "more_body": False},
                        {"type": "http.disconnect"}, {"type": "http.disconnect"}]  # fmt: skip
    assert client.received == len(chunks(data, 5)) + 2  # after the replay: the real receive


def test_the_verdict_is_handed_on_in_the_scope(guard_impl: ModuleType) -> None:
    # The app finds what the Guard decided, the body's Route with it: it need not read
    # and classify the body again (the bridge does not).
    data = body(name="add", arguments={"a": 1, "b": 2})
    app = App()
    call(http.Guard(app), scope_for(modern()), chunks(data, 5))
    verdict = app.calls[0][0]["rpcline.verdict"]
    assert isinstance(verdict, guard_impl.Verdict) and verdict.status == 200
    assert (verdict.route.kind, verdict.route.id, verdict.route.method) == ("request", 7,
                                                                            "tools/call")
    assert verdict.route.line == data and verdict.name == "add"


def test_the_bridge_classifies_a_2026_post_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Behind its Guard, the bridge takes the body's Route from the verdict: it neither
    # reads the body again nor routes it (rpcline.route is the bridge's way to route).
    from rpcline.bridge import StdioBridge

    def routed_again(line: object) -> None:
        raise AssertionError(f"the bridge routed {line!r} again")

    monkeypatch.setattr(rpcline, "route", routed_again)
    data = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": 1, "_meta": META}})  # fmt: skip
    headers = [*modern("notifications/cancelled", None), (b"accept", b"application/json"),
               (b"content-type", b"application/json")]
    bridge = StdioBridge([sys.executable, "-c", "pass"])  # never started: nothing to forward
    client = call(bridge, scope_for(headers), chunks(data, 4))  # type: ignore[arg-type]
    assert client.status == 202 and client.received == len(chunks(data, 4))


@pytest.mark.parametrize(("headers", "method"), [([], "POST"), (modern(), "GET")])
def test_no_verdict_for_what_the_guard_does_not_read(headers: list, method: str) -> None:
    app = App(reads=0)
    call(http.Guard(app), scope_for(headers, method), [])
    assert "rpcline.verdict" not in app.calls[0][0]


def test_a_notification_reaches_the_app(guard_impl: ModuleType) -> None:
    data = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": 1}})  # fmt: skip
    app = App()
    call(http.Guard(app), scope_for(modern("notifications/cancelled", None)), chunks(data, 9))
    assert app.read[0]["body"] == data


FORGED = {
    "method": (body("tools/list"), modern("tools/call", None), -32020),
    "name": (body(name="add"), modern(name="echo"), -32020),
    "version": (body("tools/list"), modern("tools/list", None, **{
        "mcp-protocol-version": b"2026-07-28"}), -32020),  # sent twice
    "unsupported": (body("tools/list", _meta={**META, "io.modelcontextprotocol/"
                    "protocolVersion": "2030-01-01"}), [(b"mcp-protocol-version", b"2030-01-01"),
                    (b"mcp-method", b"tools/list")], -32022),  # fmt: skip
    "param": (body(name="geo", arguments={"region": "eu"}), modern(name="geo", **{
        "mcp-param-region": b"us"}), -32020),
    "parse error": (b"{", modern(), -32700),
    "batch": (b"[]", modern(), -32600),
    "meta missing": (body(name="add", _meta=None), modern(), -32602),
}


@pytest.mark.parametrize(("data", "headers", "code"), FORGED.values(), ids=FORGED)
def test_refusals_are_sent_by_the_guard(
    guard_impl: ModuleType, data: bytes, headers: list, code: int
) -> None:
    app = App()
    guard = http.Guard(app, tools={"geo": SCHEMA})
    client = call(guard, scope_for(headers), chunks(data, 1000))
    verdict = guard_impl.check_request(data, headers, tools=guard.tools)
    assert app.calls == [] and client.status == verdict.status == 400
    assert client.content_type == b"application/json" and client.body == verdict.response
    reply = json.loads(client.body)
    assert reply["error"]["code"] == code
    assert reply["id"] == (None if code == -32700 or data == b"[]" else 7)


def test_versions_are_the_guards() -> None:
    data = body("tools/list", _meta={**META, "io.modelcontextprotocol/protocolVersion": "2030-01-01"})
    headers = [(b"mcp-protocol-version", b"2030-01-01"), (b"mcp-method", b"tools/list")]
    app = App()
    guard = http.Guard(app, versions=["2026-07-28", "2030-01-01"])
    assert call(guard, scope_for(headers), chunks(data, 1000)).status == 200 and app.read


# --- tools ---------------------------------------------------------------------------------


def test_tools_take_schemas_or_compiled_headers() -> None:
    guard = http.Guard(App(), tools={"a": SCHEMA, "b": ParamHeaders(SCHEMA)})
    assert guard.tools is not None
    assert {name: spec.headers for name, spec in guard.tools.items()} == {
        "a": {"Mcp-Param-Region": ("region",)}, "b": {"Mcp-Param-Region": ("region",)}}
    with pytest.raises(ValueError, match="RFC 9110 token"):
        http.Guard(App(), tools={"bad": {"properties": {
            "x": {"type": "string", "x-mcp-header": "no spaces"}}}})
    guard.tools = None
    assert guard.tools is None
    with pytest.raises(ValueError, match="max_body_bytes"):
        http.Guard(App(), max_body_bytes=-1)


BAD = {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}


def test_param_headers_from_a_tools_list_result() -> None:
    tools = [
        {"name": "geo", "inputSchema": SCHEMA},
        {"name": "plain", "inputSchema": {"type": "object"}},
        {"name": "bad", "inputSchema": BAD},
        {"name": "geo", "inputSchema": BAD},  # the first of a name counts, as in the SDK
        {"inputSchema": SCHEMA},
        "not a tool",
    ]
    with pytest.warns(UserWarning) as caught:
        compiled = http.param_headers({"tools": tools, "nextCursor": None})
    assert sorted(compiled) == ["geo", "plain"]
    assert compiled["geo"].headers == {"Mcp-Param-Region": ("region",)}
    messages = [str(w.message) for w in caught]
    assert len(messages) == 3 and "'bad'" in messages[0] and "number" in messages[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sorted(http.param_headers(tools[:2])) == ["geo", "plain"]  # the array alone
        assert http.param_headers({}) == {}


# --- hostile input -------------------------------------------------------------------------

# Header values a client can send that check_request raised on before the http-check
# branch (issue 25, item 4): the Guard relies on check_request's verdict, not on a catch,
# so those cases are expected to fail only while check_request still raises on them.
def _check_raises(pairs: list) -> bool:
    try:
        http.check_request(body(name="geo", arguments={"region": "eu"}), modern(name=None)
                           + pairs, tools={"geo": ParamHeaders(SCHEMA)})
    except Exception:
        return True
    return False


HOSTILE_HEADER_VALUES = st.binary(max_size=24) | st.sampled_from(
    [b"=?base64?=", b"=?base64?AAA?=", b"\x00", b"\xff" * 3, b"9" * 5000, b"-1", b"\t1"])
HOSTILE_BODIES = [body(name="geo", arguments={"region": "eu"}), body("tools/list"), b"{", b"",
                  b"\xff", b"[1]", b'{"jsonrpc":"2.0","method":"x"}']  # fmt: skip


def hostile(pairs: list, data: bytes) -> None:
    headers = [(b"host", b"h"), (b"mcp-protocol-version", b"2026-07-28"),
               (b"mcp-method", b"tools/call"), *pairs]  # fmt: skip
    app = App()
    guard = http.Guard(app, tools={"geo": SCHEMA}, max_body_bytes=4096, allowed_hosts=["h"])
    client = call(guard, scope_for(headers), chunks(data, 3))
    assert (client.status, bool(app.calls)) in {(200, True)} | {
        (status, False) for status in (400, 403, 413, 421)}


@given(
    names=st.lists(st.sampled_from([b"mcp-protocol-version", b"mcp-method", b"mcp-name",
                                    b"mcp-param-region", b"content-length", b"host",
                                    b"origin"]), max_size=6),  # fmt: skip
    values=st.lists(HOSTILE_HEADER_VALUES, min_size=6, max_size=6),
    data=st.sampled_from(HOSTILE_BODIES),
)
def test_hostile_headers_get_a_verdict_or_a_4xx(names: list, values: list, data: bytes) -> None:
    hostile(list(zip(names, values)), data)


def _sentinel_cases() -> list:
    cases = []
    for name in (b"mcp-name", b"mcp-param-region"):
        for value in (b"=?base64?\xe9?=", b"=?base64?\xff\xfe?=", b"=?base64?\x80=?="):
            pairs = [(b"mcp-name", b"geo")] * (name != b"mcp-name") + [(name, value)]
            raises = _check_raises(pairs)
            cases.append(pytest.param(pairs, id=f"{name.decode()}-{value!r}", marks=[
                pytest.mark.xfail(raises, reason="check_request raises on a non-ASCII base64 "
                                  "sentinel until the http-check branch (issue 25 item 4) "
                                  "lands", strict=True, raises=ValueError)]))  # fmt: skip
    return cases


@pytest.mark.parametrize("pairs", _sentinel_cases())
def test_non_ascii_base64_sentinels_get_a_4xx(pairs: list) -> None:
    # The SDK answers 500 here (its shared code raises); the Guard answers the ladder's 4xx.
    hostile(pairs, body(name="geo", arguments={"region": "eu"}))
