"""What the end-to-end tests share: the SDK server they talk to, and uvicorn serving an app.

Import only after ``mcp`` and ``uvicorn`` were found (the tests skip, saying why, first).
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer


def two_tool_server(name: str) -> MCPServer:
    """An SDK server with ``add`` (integers of any size) and ``echo``."""
    server = MCPServer(name, version="1.0")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Integers of any size."""
        return a + b

    @server.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return text

    return server


@asynccontextmanager
async def serving(app: Any, timeout: float = 60) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on a free 127.0.0.1 port; yield the /mcp URL; stop it.

    What runs inside gets ``timeout`` seconds, so a hang fails the test instead of CI.
    """
    # IPPROTO_TCP, not socket.socket()'s protocol 0: asyncio sets TCP_NODELAY on accepted
    # sockets only when their protocol says TCP; without it every keep-alive request waits
    # about 40 ms for a delayed ACK.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", 0))  # a free port, held from the start: no race for it
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: server.serve(sockets=[listener]))
        try:
            with anyio.fail_after(10):
                while not server.started:
                    await anyio.sleep(0.01)
            with anyio.fail_after(timeout):
                yield url
        finally:
            server.should_exit = True
    listener.close()
