"""The official SDK's Streamable HTTP server under uvicorn, guarded and bare, in one process.

    python tests/guard_server.py [--max-body-bytes N] [--http auto|h11|httptools] [--loop asyncio|uvloop]

Prints the port and ``rpcline.IMPLEMENTATION`` on its first stdout line, then serves on 127.0.0.1 until killed:
``/guarded/mcp`` is the SDK's app behind ``rpcline.http.Guard`` (its ``tools=`` compiled
with ``http.param_headers`` from the server's own tool list, the Host/Origin allow-lists
the SDK gives a local server), ``/bare/mcp`` the same app instance without it. One app
and one process serve both, so a test or benchmark compares them request for request.
``/floor/...`` answers every request 400 at once, unread: what uvicorn alone costs.
Used by tests/test_guard_e2e.py and benchmarks/http_guard.py.
"""

from __future__ import annotations

import argparse
import socket
from typing import Annotated, Any

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from _asgi import two_tool_server  # this directory is sys.path[0] for the script

import rpcline
from rpcline import http

LOCAL_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]  # what the SDK allows a local server
LOCAL_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]


def sdk_server() -> MCPServer:
    """tests/_asgi.py's ``add`` and ``echo``, and a tool with an ``x-mcp-header``."""
    server = two_tool_server("rpcline-guard-e2e")

    @server.tool()
    def weather(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
                days: int = 1) -> str:  # fmt: skip
        """A tool whose region argument is mirrored in the Mcp-Param-Region header."""
        return f"{days} days of sun in {region}"

    return server


async def floor(scope: dict, receive: Any, send: Any) -> None:
    """400 with a JSON-RPC error, nothing read: uvicorn's own cost of a refused request."""
    body = b'{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"floor"}}'
    await send({"type": "http.response.start", "status": 400, "headers": [
        (b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body})


class ByPrefix:
    """``/guarded/...`` to the Guard, ``/bare/...`` to the app, the prefix taken off."""

    def __init__(self, routes: dict[str, Any]) -> None:
        self.routes = routes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":  # the SDK's app runs its session manager here
            return await self.routes["/bare"](scope, receive, send)
        prefix, _, rest = scope["path"].partition("/")[2].partition("/")
        app = self.routes.get("/" + prefix)
        if app is None:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            return await send({"type": "http.response.body", "body": b""})
        path = "/" + rest
        await app({**scope, "path": path, "raw_path": path.encode()}, receive, send)


async def serve(max_body_bytes: int, http_parser: str) -> None:
    server = sdk_server()
    app = server.streamable_http_app()
    listing = [tool.model_dump(by_alias=True, exclude_none=True) for tool in await server.list_tools()]
    guard = http.Guard(app, tools=http.param_headers(listing), max_body_bytes=max_body_bytes,
                       allowed_hosts=LOCAL_HOSTS, allowed_origins=LOCAL_ORIGINS)  # fmt: skip
    # IPPROTO_TCP, not socket.socket()'s protocol 0: asyncio sets TCP_NODELAY on accepted
    # sockets only when their protocol says TCP, and without it every keep-alive request
    # waits about 40 ms for a delayed ACK.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", 0))
    print(listener.getsockname()[1], rpcline.IMPLEMENTATION, flush=True)
    config = uvicorn.Config(ByPrefix({"/guarded": guard, "/bare": app, "/floor": floor}), log_level="error",
                            lifespan="on", http=http_parser)  # fmt: skip
    await uvicorn.Server(config).serve(sockets=[listener])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-body-bytes", type=int, default=4 * 1024 * 1024)
    parser.add_argument("--http", default="auto", help="uvicorn's HTTP parser (auto: "
                        "httptools when installed, else h11)")  # fmt: skip
    parser.add_argument("--loop", default="asyncio", help="uvicorn's event loop: asyncio "
                        "(anyio.run starts it), or uvloop")  # fmt: skip
    args = parser.parse_args()
    anyio.run(serve, args.max_body_bytes, args.http,
              backend_options={"use_uvloop": args.loop == "uvloop"})
