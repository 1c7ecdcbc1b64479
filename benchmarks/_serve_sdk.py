"""The SDK's own Streamable HTTP client against a gateway, for benchmarks/serve.py.

    python benchmarks/_serve_sdk.py URL MODE CALLS [GATEWAY_PID]

``mcp.Client(URL, mode=MODE)`` (``legacy``: the 2025 handshake and a session;
``2026-07-28``: stateless) lists the tools, warms up, then calls ``echo`` CALLS times one
after another. Prints one JSON line: calls a second, p50/p99 latency in seconds, and the
gateway's CPU seconds a call over the timed calls (/proc/PID/stat, its children excluded).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import mcp
import orjson


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def main(url: str, mode: str, calls: int, pid: int | None) -> dict:
    async with mcp.Client(url, mode=mode) as client:
        tools = await client.list_tools()
        assert any(tool.name == "echo" for tool in tools.tools), tools
        for n in range(20):
            await client.call_tool("echo", {"text": f"warm {n}"})
        times = []
        cpu = cpu_seconds(pid) if pid else 0.0
        started = time.perf_counter()
        for n in range(calls):
            t = time.perf_counter()
            result = await client.call_tool("echo", {"text": f"call {n}"})
            times.append(time.perf_counter() - t)
            if result.is_error or result.content[0].text != f"call {n}":  # type: ignore[union-attr]
                raise SystemExit(f"wrong answer: {result!r}")
        wall = time.perf_counter() - started
        cpu = (cpu_seconds(pid) - cpu) if pid else 0.0
    times.sort()
    return {"rate": calls / wall, "p50": times[len(times) // 2],
            "p99": times[min(len(times) - 1, int(len(times) * 0.99))], "cpu_per_call": cpu / calls}


if __name__ == "__main__":
    url, mode, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pid = int(sys.argv[4]) if len(sys.argv) > 4 else None
    print(orjson.dumps(asyncio.run(main(url, mode, calls, pid))).decode())
