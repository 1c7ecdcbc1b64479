"""A handshake-era stdio MCP server, written with the official SDK 1.x (``mcp<2``), for
tests/test_bridge_eras.py. It speaks only the 2025 era: no ``server/discover``.

    python tests/sdk1_server.py   (with an interpreter that has mcp 1.x)
"""

from __future__ import annotations

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import Completion

server = FastMCP("rpcline-handshake-server")


@server.tool()
def echo(text: str) -> str:
    """Say it back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Integers of any size."""
    return a + b


@server.tool()
def fail(message: str) -> str:
    """A tool that raises (the SDK answers a result with isError)."""
    raise ValueError(message)


@server.tool()
async def progress(steps: int, ctx: Context) -> str:  # type: ignore[type-arg]
    """Reports progress ``steps`` times."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"done in {steps} steps"


@server.resource("test://greeting")
def greeting() -> str:
    """A static resource."""
    return "hello from the resource"


@server.resource("test://items/{item}")
def item(item: str) -> str:
    """A templated resource."""
    return f"item {item}"


@server.prompt()
def review(code: str) -> str:
    """A prompt with an argument."""
    return f"Please review:\n{code}"


@server.completion()
async def complete(ref: object, argument: object, context: object) -> Completion:
    """Every argument of every prompt or template completes to the same two values."""
    return Completion(values=["x = 1", "x = 2"])


if __name__ == "__main__":
    server.run("stdio")
