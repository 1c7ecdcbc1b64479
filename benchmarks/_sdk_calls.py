"""``python _sdk_calls.py N COMMAND...``: N sequential SDK tool calls; prints calls a second.

A child of benchmarks/relay.py, so each measurement has a process of its own.
"""

import os
import sys
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main(calls: int, command: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "RPCLINE_NO_EXTENSIONS")}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(20):  # warm-up
                await session.call_tool("echo", {"text": "warm"})
            started = time.perf_counter()
            for i in range(calls):
                await session.call_tool("echo", {"text": f"call {i}"})
            print(calls / (time.perf_counter() - started))


anyio.run(main, int(sys.argv[1]), sys.argv[2:])
