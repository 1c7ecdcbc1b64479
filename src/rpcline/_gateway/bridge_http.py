"""The HTTP side of ``rpcline.bridge``: ASGI answers, and one call's response, JSON or SSE.

A call's answer that comes before any progress is sent as JSON; progress first commits the
response to a Server-Sent Events stream, the answer its last event (as the SDK's servers
do). A client that goes away before its answer cancels the call on the child.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final

import orjson

from rpcline._gateway import bridge_lines as lines
from rpcline._gateway.asgi import VERDICT, Message, Receive, Scope, Send, respond
from rpcline._gateway.shared_child import Call, SharedChild

Headers = list[tuple[bytes, bytes]]

JSON: Final = (b"content-type", b"application/json")
SSE_HEADERS: Final = [(b"content-type", b"text/event-stream"),
                      (b"cache-control", b"no-cache, no-transform"),
                      (b"x-accel-buffering", b"no")]  # fmt: skip
INVALID_REQUEST: Final = -32600
# Where the bridge leaves a request's MCP method and the name it names, for the request log.
MCP: Final = "rpcline.mcp"
# The params member that names what a method acts on (as Mcp-Name mirrors it).
NAMED: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


async def refuse(send: Send, status: int, message: str, code: int = INVALID_REQUEST,
                 headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """A JSON-RPC error with no id, as the SDK's transports answer an HTTP-level refusal."""
    body = orjson.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})
    await respond(send, status, body, [JSON, *headers])


async def logged(app: Callable[[Scope, Receive, Send], Awaitable[None]],
                 log: Callable[[str], None], scope: Scope, receive: Receive,
                 send: Send) -> None:
    """``app`` for one HTTP request, then one line for it: the client's address, the method
    and path, the status, the MCP method and the name it names, the time taken. Never a
    header's value (a token) or a body."""
    started = time.perf_counter()
    status: list[int] = []

    async def send_noted(message: Message) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])
        await send(message)

    try:
        await app(scope, receive, send_noted)
    finally:
        log(access_line(scope, status[0] if status else None,
                        time.perf_counter() - started))


def access_line(scope: Scope, status: int | None, seconds: float) -> str:
    client = scope.get("client")
    address = f"{client[0]}:{client[1]}" if client else "-"
    method, name = scope.get(MCP) or (None, None)
    mcp = "" if method is None else f" {method}" + ("" if name is None else f" {_shown(name)}")
    return (f'{address} "{scope["method"]} {scope["path"]}" {status or "-"}{mcp} '
            f"{seconds * 1000:.1f} ms")


def _shown(name: Any) -> str:
    """A name as it may stand in a log line: a string, cut short, its controls escaped."""
    text = name if isinstance(name, str) else repr(name)
    return repr(text[:80])[1:-1]


def content_type(headers: Headers) -> str:
    """The first ``Content-Type`` (as Starlette reads it for the SDK), or ""."""
    return next((v for k, v in headers if k == b"content-type"), b"").decode("latin-1")


def bearer_matches(headers: Headers, token: bytes) -> bool:
    """Whether ``Authorization: Bearer TOKEN`` carries ``token`` (compared in constant
    time: how long a refusal takes says nothing of how much of a guess was right)."""
    value = next((v for k, v in headers if k == b"authorization"), b"")
    scheme, _, given = value.partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), token)


def says_json(value: str) -> bool:
    """The SDK's test of a POST's ``Content-Type`` in both eras (its transport security):
    ``application/json``, any case, parameters allowed; otherwise 400 before anything."""
    return value.lower().startswith("application/json")


def is_exactly_json(value: str) -> bool:
    """The 2025-era transport's own test after it: ``application/json`` exactly, before
    any parameters (else 415)."""
    return any(part.strip() == "application/json" for part in value.split(";")[0].split(","))


def accepts(headers: Headers) -> tuple[bool, bool]:
    """Whether the ``Accept`` header takes JSON, and Server-Sent Events (wildcards count)."""
    value = next((v for k, v in headers if k == b"accept"), b"").decode("latin-1")
    types = {part.split(";")[0].strip().lower() for part in value.split(",")}
    json = bool(types & {"*/*", "application/*", "application/json"})
    sse = bool(types & {"*/*", "text/*", "text/event-stream"})
    return json, sse


def modern_refusal(scope: Scope) -> tuple[int, Headers] | None:
    """What a 2026-07-28 request is answered without a call (status and headers, an empty
    body): 405 for a method but POST, 406 when JSON is not accepted, 202 for a
    notification; None for a request to call. Notes the MCP method and name for the
    request log (the Guard read and routed the body once: its verdict is in the scope)."""
    if scope["method"] != "POST":
        return 405, [(b"allow", b"POST")]
    if not accepts(scope["headers"])[0]:
        return 406, []
    verdict = scope[VERDICT]
    scope[MCP] = (verdict.route.method, verdict.name)
    return (202, []) if verdict.route.kind != "request" else None


async def answer_call(child: SharedChild, call: Call, receive: Receive, send: Send,
                      headers: Headers, status_of: Callable[[bytes], int] | None,
                      translate: Callable[[bytes], bytes] | None = None) -> None:
    """Send ``call``'s answer as JSON, or its progress and answer as an SSE stream.

    ``status_of`` maps a JSON answer to its HTTP status (the 2026-07-28 table); None: 200.
    ``translate`` changes the answer first (a handshake-era child's, for a 2026 client).
    """
    watcher = asyncio.ensure_future(_until_disconnect(receive))
    watcher.add_done_callback(lambda _: _gone(child, call))
    try:
        await call.wait()
        if not call.notes:
            answer = _final(call, translate)
            status = 200 if status_of is None else status_of(answer)
            await respond(send, status, answer, [JSON, *headers])
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [*SSE_HEADERS, *headers]})
        while True:
            events = b"".join(lines.sse_event(note) for note in call.take_notes())
            if call.answer is not None and not call.notes:
                await send({"type": "http.response.body",
                            "body": events + lines.sse_event(_final(call, translate))})
                return
            if events:
                await send({"type": "http.response.body", "body": events, "more_body": True})
            await call.wait()
    finally:
        watcher.cancel()


def _final(call: Call, translate: Callable[[bytes], bytes] | None) -> bytes:
    assert call.answer is not None
    return call.answer if translate is None or not call.answer else translate(call.answer)


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _gone(child: SharedChild, call: Call) -> None:
    """The client left before its answer: the child is told (``notifications/cancelled``)."""
    if call.answer is None:
        child.cancel(call, "the client closed its response stream")
        call.finish(b"")  # nobody reads it; ends the wait


async def stream(mailbox: Call, receive: Receive, send: Send, headers: Headers) -> None:
    """A session's GET stream: its notifications as they come, until the client leaves."""
    await send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, *headers]})
    watcher = asyncio.ensure_future(_until_disconnect(receive))
    watcher.add_done_callback(lambda _: mailbox.finish(b""))
    try:
        while mailbox.answer is None:
            await mailbox.wait()
            events = b"".join(lines.sse_event(note) for note in mailbox.take_notes())
            if events:
                await send({"type": "http.response.body", "body": events, "more_body": True})
        with contextlib.suppress(OSError):
            await send({"type": "http.response.body", "body": b""})
    finally:
        watcher.cancel()
