"""A stdio MCP server whose tools ask the client back and keep state per process, for
tests/test_bridge_own.py; it runs on the official SDK 2.x or a handshake-era 1.x.

    python tests/own_server.py
"""

from __future__ import annotations

import os

from pydantic import BaseModel

try:  # SDK 2.x
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # the handshake era, mcp<2
    from mcp.server.fastmcp import Context  # type: ignore[no-redef]
    from mcp.server.fastmcp import FastMCP as Server
from mcp.types import SamplingMessage, TextContent

server = Server("rpcline-own-server")
state: dict[str, str] = {}


class Answer(BaseModel):
    answer: str


@server.tool()
async def sample(prompt: str, ctx: Context) -> str:
    """Asks the client's model (sampling)."""
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=10)
    assert isinstance(result.content, TextContent)
    return result.content.text


@server.tool()
async def elicit(question: str, ctx: Context) -> str:
    """Asks the user (elicitation)."""
    result = await ctx.elicit(question, Answer)
    return f"{result.action}:{result.data.answer if result.action == 'accept' else ''}"


@server.tool()
async def roots(ctx: Context) -> list[str]:
    """Asks the client for its roots."""
    result = await ctx.session.list_roots()
    return [str(root.uri) for root in result.roots]


@server.tool()
async def ping_client(ctx: Context) -> str:
    await ctx.session.send_ping()
    return "pong"


@server.tool()
async def log(message: str, ctx: Context) -> str:
    """``message`` as a log message to the client (info)."""
    await ctx.info(message)
    return "logged"


@server.tool()
async def progress(steps: int, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"done in {steps} steps"


@server.tool()
def remember(value: str) -> str:
    """Keeps ``value`` in this process; says what it held before."""
    before = state.get("value", "")
    state["value"] = value
    return before


@server.tool()
def recall() -> str:
    return state.get("value", "")


@server.tool()
def pid() -> int:
    return os.getpid()


@server.tool()
async def client(ctx: Context) -> str:
    """The client's name, as its initialize said."""
    params = ctx.session.client_params
    info = getattr(params, "client_info", None) or getattr(params, "clientInfo", None)
    return "" if info is None else info.name


if __name__ == "__main__":
    server.run("stdio")
