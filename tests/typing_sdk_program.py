"""A user's program with ``rpcline.sdk``, checked by ``mypy --strict`` in tests/test_typing.py
(never run): the streams ``stdio_client`` yields are what ``ClientSession`` takes, and the
context manager itself is a ``Transport`` that ``mcp.Client`` takes, as the SDK's is.
"""

from __future__ import annotations

import sys
from typing import assert_type

from mcp import Client
from mcp.client._transport import Transport, TransportStreams
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

from rpcline.sdk import stdio_client

SERVER = StdioServerParameters(command="my-server", args=["--stdio"])


async def with_a_session() -> CallToolResult:
    async with stdio_client(SERVER, sys.stderr, max_line_bytes=128 * 1024 * 1024) as streams:
        assert_type(streams, TransportStreams)
        read, write = streams
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool("echo", {"text": "hi"})


async def with_a_client() -> CallToolResult:
    transport: Transport = stdio_client(SERVER)
    async with Client(transport, mode="legacy") as client:
        return await client.call_tool("echo", {"text": "hi"})


async def with_a_client_of_either_era() -> str | None:
    async with Client(stdio_client(SERVER)) as client:
        return client.session.protocol_version
