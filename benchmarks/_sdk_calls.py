"""``python _sdk_calls.py N COMMAND...``: N sequential SDK tool calls.

Prints calls a second, and the CPU time its child (the server, or the relay in front of
it) spent per call. A child of benchmarks/relay.py, so each measurement has a process of
its own. Linux only (/proc).
"""

import os
import sys
import time

from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def children_cpu() -> float:
    """CPU seconds of this process's children so far (utime + stime, from /proc)."""
    total = 0.0
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


async def main(calls: int, command: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "RPCLINE_NO_EXTENSIONS")}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(20):  # warm-up
                await session.call_tool("echo", {"text": "warm"})
            cpu = children_cpu()
            started = time.perf_counter()
            for i in range(calls):
                await session.call_tool("echo", {"text": f"call {i}"})
            wall = time.perf_counter() - started
            print(calls / wall, (children_cpu() - cpu) / calls * 1e6)


anyio.run(main, int(sys.argv[1]), sys.argv[2:])
