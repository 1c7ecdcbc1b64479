"""``rpcline.bridge.Cors`` and ``rpcline serve --cors-origin``: browser pages at listed origins.

A browser sends a preflight before any MCP POST from another origin and lets the page read
an answer only when it names that origin; a page must read ``Mcp-Session-Id`` to go on.
Driven through a ``StdioBridge`` (tests/bridge_peer.py behind it) in both eras, and through
``rpcline serve``, whose Origin allow-list must admit every CORS origin and nothing more.
"""

from __future__ import annotations

import importlib.util
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

httpx = pytest.importorskip("httpx", reason="httpx (the interop extra) is not installed")

from rpcline.bridge import LOCALHOST_ORIGINS, Cors, StdioBridge

PEER = [sys.executable, str(Path(__file__).parent / "bridge_peer.py")]
APP = "https://app.example.com"
EVIL = "https://evil.example.com"
URL = "http://127.0.0.1:8000/mcp"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}})
V = "2026-07-28"
# What a browser MCP client asks leave to send: the session, both eras' routing headers, a
# tool's Mcp-Param-* header, its token, stream resumption.
ASKED = ("content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region, "
         "authorization, mcp-session-id, last-event-id")


def call_echo(id: int) -> tuple[bytes, dict[str, str]]:
    """A 2026-07-28 tools/call as the SDK's client sends it: body and headers."""
    body = orjson.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "hi"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": V,
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    return body, {**HEADERS, "MCP-Protocol-Version": V, "Mcp-Method": "tools/call",
                  "Mcp-Name": "echo"}


def preflight(origin: str, headers: str = ASKED, method: str = "POST") -> dict[str, str]:
    return {"Origin": origin, "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": headers}


def granted(response: Any, origin: str) -> None:
    """The answer is readable by ``origin``, its session id and version included."""
    assert response.headers["access-control-allow-origin"] == origin
    assert "origin" in response.headers["vary"].lower()
    exposed = {h.strip().lower() for h in response.headers["access-control-expose-headers"].split(",")}
    assert {"mcp-session-id", "mcp-protocol-version", "www-authenticate"} <= exposed


def no_grant(response: Any) -> None:
    assert not any(key.startswith("access-control-") for key in response.headers)


@asynccontextmanager
async def bridged(token: str | None = None) -> AsyncIterator[Any]:
    """A bridge wrapped as ``rpcline serve --cors-origin APP`` wraps it, through httpx's
    ASGI transport."""
    bridge = StdioBridge(PEER, token=token, allowed_origins=[*LOCALHOST_ORIGINS, APP])
    transport = httpx.ASGITransport(app=Cors(bridge, [APP, "http://localhost:*"]))
    try:
        async with httpx.AsyncClient(transport=transport, timeout=30) as http:
            yield http
    finally:
        await bridge.aclose()


@pytest.fixture
async def client() -> AsyncIterator[Any]:
    async with bridged() as http:
        yield http


@pytest.fixture
async def token_client() -> AsyncIterator[Any]:
    async with bridged(token="s3cret") as http:
        yield http


@pytest.mark.anyio
async def test_a_preflight_from_a_listed_origin_is_granted_before_the_token(
        token_client: Any) -> None:
    client = token_client
    answer = await client.options(URL, headers=preflight(APP))  # no token: browsers send none
    assert answer.status_code == 204 and answer.content == b""
    assert answer.headers["access-control-allow-origin"] == APP
    assert "origin" in answer.headers["vary"].lower()
    assert {m.strip() for m in answer.headers["access-control-allow-methods"].split(",")} >= {
        "GET", "POST", "DELETE"}
    allowed = {h.strip() for h in answer.headers["access-control-allow-headers"].split(",")}
    assert allowed >= {h.strip() for h in ASKED.split(",")}
    assert int(answer.headers["access-control-max-age"]) > 0
    assert "access-control-allow-credentials" not in answer.headers  # tokens, not cookies
    # A pattern matches as the Origin allow-list's does: any port.
    local = await client.options(URL, headers=preflight("http://localhost:5173", "Content-Type"))
    assert local.status_code == 204
    assert local.headers["access-control-allow-origin"] == "http://localhost:5173"


@pytest.mark.anyio
async def test_a_preflight_from_another_origin_or_for_other_headers_is_refused(
        client: Any) -> None:
    for headers, what in ((preflight(EVIL), "origin"),
                          (preflight("http://localhost.evil.example.com"), "origin"),
                          (preflight(APP, "content-type, x-secret"), "headers"),
                          (preflight(APP, method="PUT"), "method")):
        answer = await client.options(URL, headers=headers)
        assert answer.status_code == 400, headers
        assert answer.text == f"Disallowed CORS {what}"
        no_grant(answer)


@pytest.mark.anyio
async def test_a_2025_session_from_a_listed_origin_can_read_its_session_id(client: Any) -> None:
    opened = await client.post(URL, headers={**HEADERS, "Origin": APP}, content=INIT)
    assert opened.status_code == 200, opened.text
    granted(opened, APP)
    session = {**HEADERS, "Origin": APP, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
    ping = await client.post(URL, headers=session, content=b'{"jsonrpc":"2.0","id":1,'
                                                            b'"method":"ping"}')
    assert ping.status_code == 200 and ping.json()["result"] == {}
    granted(ping, APP)
    ended = await client.delete(URL, headers=session)
    assert ended.status_code == 200
    granted(ended, APP)


@pytest.mark.anyio
async def test_a_2026_request_from_a_listed_origin_is_answered_readably(client: Any) -> None:
    body, headers = call_echo(7)
    answer = await client.post(URL, headers={**headers, "Origin": APP}, content=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["id"] == 7 and "result" in answer.json()
    granted(answer, APP)
    assert answer.headers["vary"].lower().count("origin") == 1


@pytest.mark.anyio
async def test_another_origin_is_refused_by_the_allow_list_as_before(client: Any) -> None:
    body, headers = call_echo(8)
    for sent, content in ((HEADERS, INIT), (headers, body)):
        answer = await client.post(URL, headers={**sent, "Origin": EVIL}, content=content)
        assert (answer.status_code, answer.text) == (403, "Invalid Origin header")
        no_grant(answer)
    # No Origin at all (not a browser's cross-origin call): served, nothing granted.
    plain = await client.post(URL, headers=HEADERS, content=INIT)
    assert plain.status_code == 200
    no_grant(plain)


@pytest.mark.anyio
async def test_a_refusal_for_want_of_a_token_is_readable_too(token_client: Any) -> None:
    client = token_client
    answer = await client.post(URL, headers={**HEADERS, "Origin": APP}, content=INIT)
    assert answer.status_code == 401
    granted(answer, APP)  # the page can see WWW-Authenticate, and why it failed
    authorized = {**HEADERS, "Origin": APP, "Authorization": "Bearer s3cret"}
    assert (await client.post(URL, headers=authorized, content=INIT)).status_code == 200


@pytest.mark.anyio
async def test_the_app_s_own_cors_headers_are_replaced_and_its_vary_kept() -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"Access-Control-Allow-Origin", b"*"), (b"vary", b"Accept-Encoding"),
                (b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"ok"})

    transport = httpx.ASGITransport(app=Cors(app, [APP]))
    async with httpx.AsyncClient(transport=transport) as http:
        answer = await http.get(URL, headers={"Origin": APP})
        other = await http.get(URL, headers={"Origin": EVIL})
    assert answer.headers.get_list("access-control-allow-origin") == [APP]
    assert answer.headers["vary"] == "Accept-Encoding, Origin"
    assert other.headers["access-control-allow-origin"] == "*"  # not ours to touch
    assert seen == ["http", "http"]


def test_origins_that_could_never_match_or_would_match_anything_are_refused() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        pass

    for origin in ("*", "null", "https://app.example.com/", "https://*.example.com",
                   "app.example.com", ""):
        with pytest.raises(ValueError, match="scheme://host"):
            Cors(app, [origin])
    with pytest.raises(TypeError):
        Cors(app, APP)  # its characters
    assert Cors(app, (APP, "http://localhost:*")).origins == (APP, "http://localhost:*")


# --- rpcline serve ------------------------------------------------------------------------------

def serve(*options: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "rpcline", "serve", "--port", "0",
                                *options, "--", *PEER], stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    banner = process.stderr.readline()
    match = re.search(r"listening on (http://127\.0\.0\.1:\d+/mcp)", banner)
    if match is None:
        process.kill()
        raise AssertionError(banner + process.communicate(timeout=30)[1])
    return process, match.group(1)


def stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=60)
    finally:
        process.kill()
        process.wait()


def origin_statuses(url: str, *origins: str) -> dict[str, int]:
    got = {}
    for origin in origins:
        answer = httpx.post(url, headers={**HEADERS, "Origin": origin}, content=INIT, timeout=30)
        got[origin] = answer.status_code
        if origin == APP:
            granted(answer, APP)
        else:
            no_grant(answer)
    return got


needs_uvicorn = pytest.mark.skipif(importlib.util.find_spec("uvicorn") is None,
                                   reason="uvicorn (the serve extra) is not installed")


@needs_uvicorn
def test_serve_cors_origin_extends_the_localhost_default() -> None:
    process, url = serve("--cors-origin", APP)
    try:
        ok = httpx.options(url, headers=preflight(APP), timeout=30)
        assert ok.status_code == 204 and ok.headers["access-control-allow-origin"] == APP
        assert origin_statuses(url, APP, "http://localhost:5173", EVIL) == {
            APP: 200, "http://localhost:5173": 200, EVIL: 403}
    finally:
        stop(process)


@needs_uvicorn
def test_serve_cors_origin_extends_allow_origin_and_nothing_else() -> None:
    other = "https://other.example.com"
    process, url = serve("--allow-origin", other, "--cors-origin", APP)
    try:
        assert origin_statuses(url, APP, other, "http://localhost:5173") == {
            APP: 200, other: 200, "http://localhost:5173": 403}
    finally:
        stop(process)


@needs_uvicorn
def test_serve_refuses_a_wildcard_cors_origin_and_says_so_in_help() -> None:
    done = subprocess.run([sys.executable, "-m", "rpcline", "serve", "--cors-origin", "*", "--",
                           *PEER], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "list the sites" in done.stderr and "--cors-origin" in done.stderr
    help_text = subprocess.run([sys.executable, "-m", "rpcline", "serve", "--help"],
                               capture_output=True, text=True, timeout=60).stdout
    assert "--cors-origin ORIGIN" in help_text
