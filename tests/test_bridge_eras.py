"""A handshake-era child (the official SDK 1.x) behind rpcline.bridge, for clients of both eras.

The child runs in an environment of its own with ``mcp<2`` (made here, or named by
``RPCLINE_TEST_MCP1_PYTHON``: .ci/run makes it once). The SDK 2.x client in ``legacy``
mode must get through the bridge what it gets from the child directly; in 2026-07-28 mode
(stateless, which the child does not speak) it must get the same results, through the
translation docs/serve.md states. The oracle: every answer a 2026-07-28 client gets is what
the SDK's own 2026-07-28 types and HTTP table allow, from this child and, the control, from
a 2026-native one; and the splice is the SDK's own serialization, on any result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed")
pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx comes with the MCP SDK")

from _asgi import serving
from mcp.client.stdio import StdioServerParameters
from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS
from mcp_types import SERVER_INFO_META_KEY, Implementation, JSONRPCError
from mcp_types.methods import (CACHEABLE_METHODS, CLIENT_REQUESTS, parse_server_notification,
                               validate_server_result)
from test_bridge import ACCEPT, V, call_tool, modern

from rpcline._gateway import bridge_eras as eras
from rpcline.bridge import StdioBridge

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).parent / "sdk1_server.py"
NATIVE = [sys.executable, str(Path(__file__).parent / "sdk_server.py")]  # the SDK 2.x


@pytest.fixture(scope="session")
def mcp1_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An interpreter with the SDK 1.x: RPCLINE_TEST_MCP1_PYTHON, or a venv made here."""
    named = os.environ.get("RPCLINE_TEST_MCP1_PYTHON")
    if named:
        return named
    home = tmp_path_factory.mktemp("mcp1")
    venv.create(home, with_pip=True)
    python = str(home / "bin" / "python")
    done = subprocess.run([python, "-m", "pip", "install", "-q", "mcp<2"], capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        pytest.skip(f"cannot install mcp<2 (no package index?): {done.stderr[-300:]}")
    return python


@pytest.fixture(scope="session")
def mcp1_version(mcp1_python: str) -> str:
    """The SDK 1.x's version: what its servers say as their own unless told otherwise."""
    return subprocess.run([mcp1_python, "-c", "import importlib.metadata as m; "
                           "print(m.version('mcp'), end='')"], capture_output=True, text=True,
                          check=True, timeout=60).stdout


async def results(client: Any) -> list[Any]:
    got: list[Any] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        got.append((done, total, message))

    answers = [
        await client.list_tools(),
        await client.call_tool("echo", {"text": "héllo 😀"}),
        await client.call_tool("add", {"a": 2**70, "b": 1}),
        await client.call_tool("progress", {"steps": 3}, progress_callback=progress),
        await client.list_resources(),
        await client.read_resource("test://greeting"),
        await client.list_prompts(),
        await client.get_prompt("review", {"code": "x = 1"}),
    ]
    return [a.model_dump(mode="json") for a in answers] + [got]


def unstamped(answers: list[Any], stamp: dict[str, Any]) -> list[Any]:
    """2026-07-28 answers without the serverInfo stamp (each must carry ``stamp``), which
    the same server's answers in the handshake era never carry."""
    for answer in answers[:-1]:
        assert answer["meta"].pop(SERVER_INFO_META_KEY) == stamp
        answer["meta"] = answer["meta"] or None
    return answers


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "auto"])
async def test_a_handshake_era_child_serves_both_eras(mcp1_python: str, mcp1_version: str,
                                                      mode: str) -> None:
    direct = StdioServerParameters(command=mcp1_python, args=[str(SERVER)])
    async with mcp.Client(direct, mode="legacy") as client:  # all it speaks
        expected = await results(client)
    app = StdioBridge([mcp1_python, str(SERVER)])
    try:
        async with serving(app, timeout=120) as url, mcp.Client(url, mode=mode) as client:
            got = await results(client)
            if mode != "legacy":
                got = unstamped(got, {"name": "rpcline-handshake-server", "version": mcp1_version})
            assert got == expected
    finally:
        await app.aclose()
    assert app.handshake_only == (mode != "legacy")  # found out by the 2026 probe


async def test_what_is_translated_and_what_is_not(mcp1_python: str, mcp1_version: str) -> None:
    app = StdioBridge([mcp1_python, str(SERVER)])
    try:
        async with serving(app, timeout=120) as url, httpx.AsyncClient(timeout=30) as http:
            body, headers = modern("d", "server/discover")
            discovered = (await http.post(url, content=body, headers=headers)).json()
            body, headers = modern("l", "subscriptions/listen")
            listen = await http.post(url, content=body, headers=headers)
            body, headers = call_tool(5, "echo", {"text": "t"})
            raw = (await http.post(url, content=body, headers=headers)).content
            forwarded = app.legacy.children[0].forwarded
            unknown = {}
            for method in ("ping", "initialize", "logging/setLevel", "rpcline/unknown"):
                body, headers = modern(method, method)
                unknown[method] = await http.post(url, content=body, headers=headers)
            reached = app.legacy.children[0].forwarded - forwarded
    finally:
        await app.aclose()
    result = discovered["result"]
    assert result["supportedVersions"] == ["2026-07-28"] and result["resultType"] == "complete"
    assert result["ttlMs"] == 0 and result["cacheScope"] == "private"  # required hints
    validate_server_result("server/discover", V, result)
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == (
        "rpcline-handshake-server")
    assert "tools" in result["capabilities"]
    assert listen.status_code == 404 and listen.json()["error"]["code"] == -32601
    assert "subscriptions/listen" in listen.json()["error"]["message"]
    # What the revision does not define is the bridge's to answer, as the SDK's server does:
    # the shared child would take an argument error for it, or answer it in a session.
    for method, response in unknown.items():
        assert response.status_code == 404
        assert response.json()["error"] == {"code": -32601, "message": "Method not found",
                                             "data": method}
    assert reached == 0
    # The child's bytes, with the required member and the stamp (the serverInfo of its
    # initialize result, as it wrote it) spliced in at the result's start.
    info = b'{"name":"rpcline-handshake-server","version":"%s"}' % mcp1_version.encode()
    assert raw.startswith(b'{"jsonrpc":"2.0","id":5,"result":{"resultType":"complete",'
                          b'"_meta":{"io.modelcontextprotocol/serverInfo":' + info + b"},")
    assert orjson.loads(raw)["result"]["content"][0]["text"] == "t"


# What a 2026-07-28 client asks, the oracle's exchanges: every method both eras define (a tool
# error, and progress, which makes the answer an SSE stream, among them), then bad params.
SHARED: list[tuple[str, dict[str, Any]]] = [
    ("server/discover", {}),
    ("tools/list", {}),
    ("tools/call", {"name": "echo", "arguments": {"text": "héllo 😀"}}),
    ("tools/call", {"name": "fail", "arguments": {"message": "no"}}),
    ("tools/call", {"name": "progress", "arguments": {"steps": 2}, "progressToken": "p"}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": "test://greeting"}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "review", "arguments": {"code": "x = 1"}}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "review"},
                             "argument": {"name": "code", "value": "x"}}),
]
BAD_PARAMS: list[tuple[str, dict[str, Any]]] = [
    ("tools/call", {"arguments": {}}), ("resources/read", {}), ("prompts/get", {})]
# Methods the 2026-07-28 revision does not define: a handshake-era server defines the first
# four (and initialize, asked below), nobody the last.
UNKNOWN = ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
           "rpcline/unknown"]


def enveloped(id: int, method: str, params: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    """A 2026-07-28 request as the SDK's client sends it, ``progressToken`` in its envelope."""
    params = dict(params)
    meta: dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": V,
                            "io.modelcontextprotocol/clientCapabilities": {}}
    if "progressToken" in params:
        meta["progressToken"] = params.pop("progressToken")
    body = orjson.dumps({"jsonrpc": "2.0", "id": id, "method": method,
                         "params": {**params, "_meta": meta}})
    headers = {"MCP-Protocol-Version": V, "Mcp-Method": method, "Accept": ACCEPT,
               "Content-Type": "application/json"}
    name = params.get("uri" if method == "resources/read" else "name")
    if type(name) is str:
        headers["Mcp-Name"] = name
    return body, headers


def conforming(method: str, response: Any) -> dict[str, Any]:
    """The oracle: the answer, checked as the SDK's 2026-07-28 types and HTTP table say.

    A result validates as the SDK's own result type for ``method`` and carries a
    ``serverInfo`` stamp that is an ``Implementation``; an error is a JSON-RPC error sent
    with the HTTP status of its code; an SSE stream's notifications are 2026-07-28 ones."""
    if response.headers["content-type"] == "text/event-stream":
        events = [orjson.loads(line[6:]) for line in response.content.split(b"\r\n")
                  if line.startswith(b"data: ")]
        for note in events[:-1]:
            parse_server_notification(note["method"], V, note.get("params"))
        message, status = events[-1], 200
        assert response.status_code == 200
    else:
        message, status = response.json(), response.status_code
    if "error" in message:
        JSONRPCError.model_validate(message)
        assert status == ERROR_CODE_HTTP_STATUS.get(message["error"]["code"], 200), message
        return message
    assert status == 200
    validate_server_result(method, V, message["result"])
    Implementation.model_validate(message["result"]["_meta"][SERVER_INFO_META_KEY])
    return message


@pytest.mark.parametrize("era", ["handshake", "2026-native"])
async def test_what_a_2026_client_gets_conforms_whatever_the_servers_era(
        era: str, request: pytest.FixtureRequest) -> None:
    """The same oracle for a handshake-era child (translated) and a 2026-native one (the
    control, forwarded as it answers): a client cannot tell them apart by the types."""
    if era == "handshake":
        python = request.getfixturevalue("mcp1_python")
        app, name = StdioBridge([python, str(SERVER)]), "rpcline-handshake-server"
    else:
        app, name = StdioBridge(NATIVE), "rpcline-test-server"
    try:
        async with serving(app, timeout=120) as url, httpx.AsyncClient(timeout=30) as http:
            async def ask(id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
                body, headers = enveloped(id, method, params)
                response = await http.post(url, content=body, headers=headers)
                types.append(response.headers["content-type"])
                return conforming(method, response)

            types: list[str] = []
            results = [await ask(n, method, params) for n, (method, params) in enumerate(SHARED)]
            bad = [await ask(100 + n, m, params) for n, (m, params) in enumerate(BAD_PARAMS)]
            children = app.legacy.children if era == "handshake" else app.modern.children
            forwarded = sum(child.forwarded for child in children)
            unknown = [await ask(200 + n, method, {}) for n, method in enumerate(UNKNOWN)]
            reached = sum(child.forwarded for child in children) - forwarded
            body, headers = enveloped(300, "initialize", {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"}})
            initialize = await http.post(url, content=body, headers=headers)
    finally:
        await app.aclose()
    assert app.handshake_only == (era == "handshake")
    assert all("result" in message for message in results), results
    stamps = {orjson.dumps(m["result"]["_meta"][SERVER_INFO_META_KEY]) for m in results}
    assert len(stamps) == 1 and orjson.loads(stamps.pop())["name"] == name
    assert results[3]["result"]["isError"] is True  # a tool error is a result
    assert results[4]["result"]["content"][0]["text"] == "done in 2 steps"
    assert types[4] == "text/event-stream"  # progress first: the answer is its last event
    assert [m["error"]["code"] for m in bad] == [-32602] * len(BAD_PARAMS)
    assert [m["error"]["code"] for m in unknown] == [-32601] * len(UNKNOWN)
    if era == "handshake":  # the bridge's own answers: the shared child never saw them
        assert reached == 0
        assert [m["error"].get("data") for m in unknown] == UNKNOWN
        assert initialize.status_code == 404 and initialize.json()["error"]["code"] == -32601


# The SDK's tables of the requests each era defines.
MODERN_METHODS = {method for method, version in CLIENT_REQUESTS if version == V}
HANDSHAKE_METHODS = {method for method, version in CLIENT_REQUESTS if version == "2025-11-25"}


def test_the_method_tables_are_the_sdks() -> None:
    """Forwarded: what both eras define; answered by the bridge: what only 2026-07-28 does;
    cache hints: on the SDK's cacheable methods, server/discover's answer among them."""
    assert eras.FORWARDED == MODERN_METHODS & HANDSHAKE_METHODS
    assert eras.UNTRANSLATED | {eras.DISCOVER} == MODERN_METHODS - HANDSHAKE_METHODS
    assert eras.CACHEABLE == CACHEABLE_METHODS


INFO = b'{"name":"s","version":"1"}'
STAMP = b'"_meta":{"io.modelcontextprotocol/serverInfo":' + INFO + b"}"


def answer(result: bytes) -> bytes:
    return b'{"jsonrpc":"2.0","id":1,"result":' + result + b"}"


def test_completed_splices_only_what_is_missing() -> None:
    completed = eras.completed
    assert completed(answer(b"{}"), "ping", None) == answer(b'{"resultType":"complete"}')
    assert completed(answer(b'{"tools":[]}'), "tools/list", INFO) == answer(
        b'{"resultType":"complete","ttlMs":0,"cacheScope":"private",' + STAMP + b',"tools":[]}')
    kept = answer(b'{"resultType":"incomplete","ttlMs":5,"cacheScope":"public",'
                  b'"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"own"}}}')
    assert completed(kept, "tools/list", INFO) == kept
    error = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}'
    assert completed(error, "tools/list", INFO) == error
    assert completed(answer(b"[1]"), "tools/list", INFO) == answer(b"[1]")
    # The same names below the result's top level are no members of it.
    nested = (b'{"tools":[{"name":"t","inputSchema":{"properties":{"resultType":{},'
              b'"ttlMs":{},"cacheScope":{}}},"_meta":{"k":1}}]}')
    assert completed(answer(nested), "tools/list", INFO) == answer(
        b'{"resultType":"complete","ttlMs":0,"cacheScope":"private",' + STAMP + b"," +
        nested[1:])
    # A name written with escapes is the same name; whitespace stays where it was.
    assert completed(answer(b'{ "\\u0074tlMs" : 5 }'), "tools/list", None) == answer(
        b'{"resultType":"complete","cacheScope":"private", "\\u0074tlMs" : 5 }')
    spaced = b'{ "jsonrpc" : "2.0" , "id" : 1 , "result" : { } }'
    assert completed(spaced, "ping", None) == (
        b'{ "jsonrpc" : "2.0" , "id" : 1 , "result" : {"resultType":"complete" } }')


def test_the_stamp_goes_into_a_results_own_meta_as_the_sdk_puts_it() -> None:
    completed, key = eras.completed, b'"io.modelcontextprotocol/serverInfo":'
    assert completed(answer(b'{"_meta":{"k":[1,"}"]},"content":[]}'), "tools/call", INFO) == (
        answer(b'{"resultType":"complete","_meta":{' + key + INFO + b',"k":[1,"}"]},'
               b'"content":[]}'))
    assert completed(answer(b'{"content":[],"_meta":{}}'), "tools/call", INFO) == answer(
        b'{"resultType":"complete","content":[],"_meta":{' + key + INFO + b"}}")
    assert completed(answer(b'{"_meta":null}'), "tools/call", INFO) == answer(
        b'{"resultType":"complete","_meta":{' + key + INFO + b"}}")
    assert completed(answer(b'{"_meta":{' + key + b'null}}'), "tools/call", INFO) == answer(
        b'{"resultType":"complete","_meta":{' + key + INFO + b"}}")
    assert completed(answer(b'{"_meta":"own"}'), "tools/call", INFO) == answer(
        b'{"resultType":"complete","_meta":"own"}')  # no object: the child's to own
    # A name written with escapes is the same name.
    assert completed(answer(b'{"\\u005fmeta" : { } }'), "tools/call", INFO) == answer(
        b'{"resultType":"complete","\\u005fmeta" : {' + key + INFO + b" } }")


def test_a_large_result_is_read_in_bounded_memory() -> None:
    """Finding a result's own members walks it: in no more memory than the answer's size
    (not a regular expression's backtracking state per string: a quarter of a GB here)."""
    import tracemalloc

    result = orjson.dumps({"structuredContent": {"v": ["ab"] * 500_000}, "ttlMs": 5})
    line = answer(result)
    tracemalloc.start()
    try:
        out = eras.completed(line, "tools/list", INFO)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == answer(b'{"resultType":"complete","cacheScope":"private",' + STAMP + b"," +
                         result[1:])
    assert peak < 2 * len(out)


def reference(result: dict[str, Any], method: str, info: dict[str, Any]) -> dict[str, Any]:
    """What the SDK's ServerRunner._serialize makes of a handshake-era result: hints and
    resultType where absent, the serverInfo stamp where ``_meta`` has none (or is null)."""
    out = dict(result)
    out.setdefault("resultType", "complete")
    if method in CACHEABLE_METHODS:
        out = {"ttlMs": 0, "cacheScope": "private", **out}
    meta = out.get("_meta")
    if meta is None:
        out["_meta"] = {SERVER_INFO_META_KEY: info}
    elif type(meta) is dict and meta.get(SERVER_INFO_META_KEY) is None:
        out["_meta"] = {**meta, SERVER_INFO_META_KEY: info}
    return out


NAMES = st.sampled_from(["resultType", "ttlMs", "cacheScope", "_meta", SERVER_INFO_META_KEY,
                         "content", "x"]) | st.text(max_size=4)
SCALARS = (st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1)
           | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(st.characters(blacklist_categories=("Cs",)), max_size=8))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(NAMES, inner, max_size=4), max_leaves=12)


@given(result=st.dictionaries(NAMES, VALUES, max_size=6),
       method=st.sampled_from(sorted(MODERN_METHODS & HANDSHAKE_METHODS | {"server/discover"})),
       style=st.sampled_from(["orjson", "ascii", "spaced"]))
def test_completed_is_the_sdks_serialization_on_any_result(
        result: dict[str, Any], method: str, style: str) -> None:
    if style == "orjson":
        text = orjson.dumps(result)
    else:  # \u escapes (names too), or whitespace wherever JSON allows it
        text = json.dumps(result, ensure_ascii=True, indent=None if style == "ascii" else 1,
                          separators=(",", ":") if style == "ascii" else (" ,", " : ")).encode()
    line = b'{"jsonrpc":"2.0","id":1,"result":' + text + b"}"
    out = orjson.loads(eras.completed(line, method, INFO))
    assert out == {"jsonrpc": "2.0", "id": 1,
                   "result": reference(result, method, orjson.loads(INFO))}
