"""The peers benchmarks/serve.py measures rpcline serve against, each run in its own venv.

    python benchmarks/_serve_peers.py fastmcp PORT COMMAND [ARG...]   # FastMCP's proxy
    python benchmarks/_serve_peers.py direct PORT                    # tests/sdk_server.py over HTTP

``fastmcp``: ``fastmcp.server.create_proxy`` (what ``FastMCP.as_proxy`` became) over a
stdio transport to COMMAND, served as Streamable HTTP at /mcp. ``direct``: the SDK's own
server of tests/sdk_server.py (the realistic child) served by the SDK itself as
Streamable HTTP at /mcp, what a client reaches with no gateway.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> None:
    kind, port, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    if kind == "fastmcp":
        from fastmcp.client.transports import StdioTransport
        from fastmcp.server import create_proxy

        proxy = create_proxy(StdioTransport(command=command[0], args=command[1:]),
                             name="fastmcp-proxy")
        proxy.run(transport="http", host="127.0.0.1", port=port, show_banner=False,
                  log_level="warning")
    elif kind == "direct":
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        import logging

        from sdk_server import server

        logging.disable(logging.WARNING)
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        raise SystemExit(f"unknown peer {kind!r}")


if __name__ == "__main__":
    main()
