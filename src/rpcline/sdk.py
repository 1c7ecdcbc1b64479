"""rpcline inside the official MCP SDK: a drop-in for ``mcp.client.stdio.stdio_client``.

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
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams
    from mcp.client.stdio import StdioServerParameters

from rpcline._gateway.relay_types import DEFAULT_MAX_LINE_BYTES  # the proxy's bound

__all__ = ("DEFAULT_MAX_LINE_BYTES", "stdio_client")


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


def __dir__() -> list[str]:
    return sorted(__all__)
