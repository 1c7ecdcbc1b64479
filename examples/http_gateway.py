"""An MCP Streamable HTTP gateway: rpcline.http.Guard in front of a byte-forwarding relay.

    python examples/http_gateway.py UPSTREAM_URL [--port 8000] [--timeout 30]

Every HTTP request to the gateway (any path, any method) goes to ``UPSTREAM_URL`` and the
answer streams back unchanged, Server-Sent Events included; both protocol eras pass. The
Guard answers forged and oversized 2026-era POSTs itself, so they never reach upstream.
Its ``tools=`` comes from upstream's own ``tools/list`` at start-up (a gateway that follows
``notifications/tools/list_changed`` assigns ``guard.tools`` again). An upstream that
refuses the connection is answered 502 Bad Gateway; one that does not answer within
``--timeout`` seconds (connecting, sending the request, and its status and headers; a
stream's body may take as long as it likes), 504 Gateway Timeout. Needs httpx and uvicorn:
``pip install '.[interop]'`` in a clone of rpcline (``rpcline[interop]`` once released).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import uvicorn

from rpcline import http, sse

# Hop-by-hop headers (RFC 9110 section 7.6.1) and those httpx sets for the new hop.
HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade", b"host",
       b"content-length", b"proxy-connection", b"trailer"}  # fmt: skip


class Forward:
    """The ASGI app that relays each HTTP request to ``upstream``, bytes in, bytes out."""

    def __init__(self, upstream: str, timeout: float = 30) -> None:
        self.upstream = upstream
        self.timeout = timeout
        # No read timeout: a Server-Sent Events stream may stay quiet for minutes.
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(timeout, read=None))

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return  # lifespan and websockets: nothing to do here
        async def body() -> AsyncIterator[bytes]:  # streamed up, never buffered here
            more = True
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                more = message.get("more_body", False)
                yield message.get("body", b"")

        headers = [(k, v) for k, v in scope["headers"] if k not in HOP]
        has_body = any(k in (b"content-length", b"transfer-encoding") for k in dict(scope["headers"]))
        request = self.client.build_request(
            scope["method"], self.upstream, headers=headers, params=scope["query_string"],
            content=body() if has_body else None)
        try:
            with anyio.fail_after(self.timeout):  # until upstream's status and headers
                upstream = await self.client.send(request, stream=True)
        except (TimeoutError, httpx.TimeoutException):
            await _refuse(send, 504, b"Gateway Timeout: upstream did not answer in time")
            return
        except httpx.TransportError as error:  # refused, reset, not HTTP: a bad gateway
            await _refuse(send, 502, f"Bad Gateway: upstream unreachable ({error!r})".encode())
            return
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._until_disconnect, receive, tasks.cancel_scope)
                await send({"type": "http.response.start", "status": upstream.status_code,
                            "headers": [(k, v) for k, v in upstream.headers.raw
                                        if k.lower() not in HOP]})  # fmt: skip
                async for chunk in upstream.aiter_raw():  # an SSE stream as it comes
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
                tasks.cancel_scope.cancel()
        finally:
            await upstream.aclose()

    @staticmethod
    async def _until_disconnect(receive: Any, scope: anyio.CancelScope) -> None:
        # A client that leaves (closing a GET stream, cancelling a call) ends the upstream
        # request too, as it would end the request to the server itself.
        while (await receive())["type"] != "http.disconnect":
            pass
        scope.cancel()


async def _refuse(send: Any, status: int, text: bytes) -> None:
    """A plain-text answer from the gateway itself, as a reverse proxy gives one."""
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
    await send({"type": "http.response.body", "body": text})


async def guarded(upstream: str, timeout: float = 30) -> http.Guard:
    """``Forward(upstream)`` behind a Guard that knows upstream's tools."""
    async with httpx.AsyncClient() as client:
        # One stateless 2026-07-28 tools/list (no pagination here: a long catalog would
        # follow nextCursor), as the SDK's client sends it.
        version = "2026-07-28"
        listing = await client.post(upstream, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientCapabilities": {}}},
        }, headers={"MCP-Protocol-Version": version, "Mcp-Method": "tools/list",
                    "Accept": "application/json, text/event-stream"})  # fmt: skip
        listing.raise_for_status()
        if listing.headers["content-type"].startswith("text/event-stream"):
            events = sse.EventStreamParser(classify=json.loads).feed(listing.content)
            answer = next(e.message for e in events if "result" in e.message)
        else:
            answer = listing.json()
    return http.Guard(Forward(upstream, timeout), tools=http.param_headers(answer["result"]),
                      allowed_hosts=["127.0.0.1:*", "localhost:*"],
                      allowed_origins=["http://127.0.0.1:*", "http://localhost:*"])  # fmt: skip


async def main(upstream: str, port: int, timeout: float) -> None:
    config = uvicorn.Config(await guarded(upstream, timeout), host="127.0.0.1", port=port)
    await uvicorn.Server(config).serve()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("upstream", help="the MCP endpoint, e.g. http://127.0.0.1:9000/mcp")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--timeout", type=float, default=30,
                        help="seconds upstream has to answer before a 504 (default 30)")
    args = parser.parse_args()
    anyio.run(main, args.upstream, args.port, args.timeout)
