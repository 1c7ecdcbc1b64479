"""rpcline inside the official MCP SDK: drop-ins for ``mcp.client.stdio.stdio_client`` and
``mcp.server.stdio.stdio_server``.

    from rpcline.sdk import stdio_client      # instead of: from mcp.client.stdio import ...

    async with stdio_client(StdioServerParameters(command="my-server")) as (read, write):
        async with ClientSession(read, write) as session: ...

Same parameters, same streams, the SDK's own process handling and shutdown. The server's
output is framed in bytes by ``StreamParser`` (linear in a line's length, where the SDK's
reader is quadratic), bounded by ``max_line_bytes``, and each line is validated by the
SDK's ``jsonrpc_message_adapter``. A line the adapter refuses (cut short, invalid UTF-8,
over the bound) whose id names a call in flight fails that call at once with a -32000
error naming the cause; the SDK's transport leaves it waiting. Needs ``mcp``
(``pip install '.[sdk]'`` in a clone, ``'rpcline[sdk]'`` once released), imported when a
client starts, not with this module.

    from rpcline.sdk import run_stdio          # instead of: server.run("stdio")
    run_stdio(server)                          # an MCPServer or a low-level Server

``stdio_server`` serves on stdin and stdout as ``mcp.server.stdio.stdio_server`` does (the
same claim on the descriptors, the same streams, the SDK's adapter on every line), but
reads and writes them on the event loop, with no worker thread per line. A request the adapter refuses is answered with its JSON-RPC
error, so its caller does not wait; an over-long line is bounded by ``max_line_bytes``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import anyio
    from mcp.client._transport import TransportStreams
    from mcp.client.stdio import StdioServerParameters

from rpcline._gateway.relay_types import DEFAULT_MAX_LINE_BYTES  # the proxy's bound

__all__ = ("DEFAULT_MAX_LINE_BYTES", "run_stdio", "stdio_client", "stdio_server")


@asynccontextmanager
async def stdio_client(
    server: StdioServerParameters,
    errlog: TextIO = sys.stderr,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> AsyncGenerator[TransportStreams, None]:
    """Start ``server`` and yield the (read, write) streams ``ClientSession`` and
    ``mcp.Client`` take, as ``mcp.client.stdio.stdio_client`` does."""
    from rpcline._gateway.sdk_client import stdio_client as transport  # imports the SDK

    async with transport(server, errlog, max_line_bytes) as streams:
        yield streams


@asynccontextmanager
async def stdio_server(
    stdin: anyio.AsyncFile[str] | None = None,
    stdout: anyio.AsyncFile[str] | None = None,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> AsyncGenerator[tuple[Any, Any], None]:
    """Serve MCP over the process's stdin and stdout, yielding the (read, write) streams
    a server's ``run`` takes, as ``mcp.server.stdio.stdio_server`` does. Explicit
    ``stdin``/``stdout`` files (or a ``sys.stdin`` that is not fd 0) are served by the
    SDK's own transport: there is no descriptor to wait on."""
    from rpcline._gateway.sdk_server import stdio_server as transport  # imports the SDK

    async with transport(stdin, stdout, max_line_bytes) as streams:
        yield streams


def run_stdio(
    server: Any, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, backend: str = "asyncio"
) -> None:
    """Run ``server`` (an ``MCPServer`` or a low-level ``Server``) on ``stdio_server``
    until its client's input ends: the one-line change from ``server.run("stdio")``.
    ``backend`` is anyio's (``"asyncio"``, the SDK's choice, or ``"trio"``)."""
    import anyio

    from rpcline._gateway.sdk_server import serve  # imports the SDK

    anyio.run(serve, server, max_line_bytes, backend=backend)


def __dir__() -> list[str]:
    return sorted(__all__)
