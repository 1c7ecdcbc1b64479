"""A stdio MCP proxy in a few lines: rpcline.proxy relays a client to a child server.

    python examples/stdio_proxy.py -- SERVER_COMMAND [ARGS...]

The same as ``rpcline proxy -- SERVER_COMMAND``: valid lines are forwarded byte for byte,
refused client requests answered, and no pending request is left waiting.
"""

import asyncio
import sys

from rpcline.proxy import close_stdio, open_stdio, relay


async def main(command: list[str]) -> int:
    reader, writer = await open_stdio()
    summary = await relay(command, reader, writer)
    await close_stdio(writer)
    print(f"proxy: {summary}", file=sys.stderr)
    return summary.returncode or 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[2:] if sys.argv[1:2] == ["--"] else sys.argv[1:])))
