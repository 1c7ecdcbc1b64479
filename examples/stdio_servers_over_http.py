"""Several stdio MCP servers behind one HTTP port, one path each, with rpcline.bridge.

    python examples/stdio_servers_over_http.py NAME=COMMAND [NAME=COMMAND ...] [--port 8000]

    python examples/stdio_servers_over_http.py 'files=python -m files_server' \\
        'search=python -m search_server'   # http://127.0.0.1:8000/files/mcp, .../search/mcp

Each ``NAME=COMMAND`` becomes a ``StdioBridge`` at ``/NAME/mcp``: clients of both protocol
eras share that command's children. When ``MCP_GATEWAY_TOKEN`` is set, every request must
carry it as a bearer token. Needs uvicorn: ``pip install '.[serve]'`` in a clone
(``'rpcline[serve]'`` once released).
"""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Mapping
from typing import Any

import uvicorn

from rpcline.bridge import StdioBridge


class Paths:
    """An ASGI app that hands each request to the bridge whose path it is."""

    def __init__(self, bridges: Mapping[str, StdioBridge]) -> None:
        self.bridges = {bridge.path: bridge for bridge in bridges.values()}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":  # one lifespan for all: stop every bridge's children
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            for bridge in self.bridges.values():
                await bridge.aclose()
            await send({"type": "lifespan.shutdown.complete"})
            return
        bridge = self.bridges.get(scope.get("path", "").rstrip("/"))
        if bridge is None:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b"no such server"})
            return
        await bridge(scope, receive, send)


def build(servers: Mapping[str, str]) -> Paths:
    """``{name: command line}`` to the app serving each at ``/name/mcp``."""
    token = os.environ.get("MCP_GATEWAY_TOKEN") or None
    return Paths({name: StdioBridge(shlex.split(command), path=f"/{name}/mcp", token=token)
                  for name, command in servers.items()})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("servers", nargs="+", metavar="NAME=COMMAND")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    app = build(dict(server.split("=", 1) for server in args.servers))
    uvicorn.run(app, host="127.0.0.1", port=args.port, lifespan="on")
