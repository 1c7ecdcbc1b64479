"""Several stdio MCP servers behind one HTTP port, one path each, with rpcline.bridge.

    python examples/stdio_servers_over_http.py NAME=COMMAND [NAME=COMMAND ...] [--port 8000]

    python examples/stdio_servers_over_http.py 'files=python -m files_server' \\
        'search=python -m search_server'   # .../servers/files/mcp, .../servers/search/mcp

What ``rpcline serve --named-server NAME 'COMMAND'`` does, as an app of your own: each
``NAME=COMMAND`` becomes a ``StdioBridge`` (clients of both protocol eras share that
command's children) and a ``Router`` serves each at ``/servers/NAME/mcp``, with
``/healthz`` and ``/readyz``, and stops them all at shutdown. When ``MCP_GATEWAY_TOKEN``
is set, every request must carry it as a bearer token. Needs uvicorn: ``pip install
'.[serve]'`` in a clone (``'rpcline[serve]'`` once released).
"""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Mapping

import uvicorn

from rpcline.bridge import Router, StdioBridge


def build(servers: Mapping[str, str]) -> Router:
    """``{name: command line}`` to the app serving each at ``/servers/name/mcp``."""
    token = os.environ.get("MCP_GATEWAY_TOKEN") or None
    return Router({name: StdioBridge(shlex.split(command), name=name, token=token)
                   for name, command in servers.items()}, token=token)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("servers", nargs="+", metavar="NAME=COMMAND")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    app = build(dict(server.split("=", 1) for server in args.servers))
    uvicorn.run(app, host="127.0.0.1", port=args.port, lifespan="on")
