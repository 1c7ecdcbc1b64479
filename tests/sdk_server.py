"""A real stdio MCP server written with the official SDK, for tests/test_proxy_sdk.py.

    python tests/sdk_server.py [rpcline [asyncio|trio]]

(``rpcline``: served by ``rpcline.sdk.run_stdio``, on the backend named; else by the
SDK's ``server.run("stdio")``.)

Tools, resources and prompts of the kinds real sessions carry: large results and
arguments, errors, progress, cancellation, and requests to the client (roots, sampling,
ping). ``benchmarks/record_traffic.py`` records sessions with it through the proxy.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import Completion, SamplingMessage, TextContent

server = MCPServer("rpcline-test-server", version="1.0")


@server.tool()
def echo(text: str) -> str:
    """Say it back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Integers of any size, as Python adds them."""
    return a + b


@server.tool()
def numbers(values: list[float]) -> dict:
    """Statistics of a list of numbers, with its integers kept as they came."""
    return {"count": len(values), "sum": sum(values), "values": values}


@server.tool()
def big(size: int) -> str:
    """A text result of ``size`` characters."""
    return ("rpcline " * (size // 8 + 1))[:size]


@server.tool()
def length(data: str) -> int:
    """The length of a (large) argument."""
    return len(data)


@server.tool()
def fail(message: str) -> str:
    """A tool that raises."""
    raise ValueError(message)


@server.tool()
async def progress(steps: int, ctx: Context) -> str:
    """Reports progress ``steps`` times."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    return f"done in {steps} steps"


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps (to be cancelled)."""
    await anyio.sleep(seconds)
    return "slept"


@server.tool()
async def roots(ctx: Context) -> list[str]:
    """Asks the client for its roots."""
    result = await ctx.session.list_roots()
    return [str(root.uri) for root in result.roots]


@server.tool()
async def sample(prompt: str, ctx: Context) -> str:
    """Asks the client's model (sampling)."""
    result = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=10,
    )
    assert isinstance(result.content, TextContent)
    return result.content.text


@server.tool()
async def ping_client(ctx: Context) -> str:
    """Pings the client."""
    await ctx.session.send_ping()
    return "pong"


@server.tool()
async def log(message: str, ctx: Context) -> str:
    """Sends ``message`` to the client as a log message (info)."""
    await ctx.info(message)
    return "logged"


@server.tool()
def die() -> str:
    """Exits the server in the middle of a call."""
    sys.stdout.flush()
    os._exit(7)


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
    if sys.argv[1:2] == ["rpcline"]:
        import rpcline.sdk

        rpcline.sdk.run_stdio(server, backend=sys.argv[2] if sys.argv[2:] else "asyncio")
    else:
        server.run("stdio")
