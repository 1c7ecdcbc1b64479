"""What ``http.Guard`` costs in front of the official SDK's Streamable HTTP server, and saves.

    python benchmarks/http_guard.py [--calls 300] [--rejects 2000] [--rounds 7] [--http h11]

``tests/guard_server.py`` (uvicorn in a subprocess) serves one SDK app behind the Guard at
``/guarded/mcp`` and bare at ``/bare/mcp``, so both arms share a process, a port and a
warm interpreter; the rounds alternate which arm goes first.

1. Sequential 2026-era ``tools/call``: the SDK's own client (``mcp.Client``, default mode)
   calls ``echo`` one call at a time, guarded and bare; calls a second, and their ratio
   per round. Target: guarded at least 0.95x the bare throughput.
2. Forged headers: httpx posts 2026-era requests whose ``Mcp-Method``, ``Mcp-Name`` or
   ``Mcp-Param-Region`` header disagrees with the body; the Guard rejects them in front,
   the SDK behind. Measured: the server process's CPU time (utime + stime from
   /proc/PID/stat) per rejected request; uvicorn's own cost per request is in both.
   Target: the Guard at most 0.5x the SDK's.

Ratios are medians of the per-round ratios. Linux only (/proc); needs the ``interop``
extra (the SDK, uvicorn, httpx).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from importlib.metadata import version
from importlib.util import find_spec

import anyio
import httpx
import mcp

HTTPTOOLS = find_spec("httptools") is not None

ROOT = Path(__file__).resolve().parent.parent
V = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientCapabilities": {},
}
CALL = {"name": "weather", "arguments": {"region": "eu"}, "_meta": META}
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": V,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "weather",
    "Mcp-Param-Region": "eu",
}
FORGED = {  # each refused with 400 -32020 by both
    "Mcp-Method": {**HEADERS, "Mcp-Method": "tools/list"},
    "Mcp-Name": {**HEADERS, "Mcp-Name": "echo"},
    "Mcp-Param-Region": {**HEADERS, "Mcp-Param-Region": "us"},
}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def sequential(urls: dict[str, str], calls: int, rounds: int) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {arm: [] for arm in urls}
    async with mcp.Client(urls["bare"]) as bare, mcp.Client(urls["guarded"]) as guarded:
        clients = {"bare": bare, "guarded": guarded}
        for client in clients.values():
            assert client.protocol_version == V, client.protocol_version
            for i in range(30):  # warm-up
                await client.call_tool("echo", {"text": f"warm {i}"})
        for r in range(rounds):
            for arm in (("bare", "guarded") if r % 2 == 0 else ("guarded", "bare")):
                started = time.perf_counter()
                for i in range(calls):
                    await clients[arm].call_tool("echo", {"text": f"call {i}"})
                rates[arm].append(calls / (time.perf_counter() - started))
    return rates


def rejected(pid: int, urls: dict[str, str], count: int, rounds: int) -> dict[str, list[float]]:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": CALL})
    cpu: dict[str, list[float]] = {}
    with httpx.Client(timeout=30) as client:
        for header, headers in FORGED.items():
            for arm, url in urls.items():  # warm-up, and the answer both give
                for _ in range(50):
                    reply = client.post(url, content=body, headers=headers)
                assert reply.status_code == 400 and reply.json()["error"]["code"] == -32020
            for r in range(rounds):
                for arm in (("bare", "guarded") if r % 2 == 0 else ("guarded", "bare")):
                    before = cpu_seconds(pid)
                    for _ in range(count):
                        client.post(urls[arm], content=body, headers=headers)
                    cpu.setdefault(f"{header} {arm}", []).append((cpu_seconds(pid) - before) / count)
    return cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="SDK calls per arm and round")
    parser.add_argument("--rejects", type=int, default=2000, help="forged posts per arm and round")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--http", default="auto", choices=["auto", "h11", "httptools"],
                        help="uvicorn's HTTP parser (auto: httptools when installed)")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "guard_server.py"),
                               "--http", args.http], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        port, implementation = server.stdout.readline().split()
        urls = {arm: f"http://127.0.0.1:{port}/{arm}/mcp" for arm in ("bare", "guarded")}
        print(f"server: rpcline {implementation} implementation, mcp {version('mcp')}, "
              f"uvicorn --http {args.http} (httptools {'installed' if HTTPTOOLS else 'missing'})")
        rates = anyio.run(sequential, urls, args.calls, args.rounds)
        ratios = [g / b for g, b in zip(rates["guarded"], rates["bare"], strict=True)]
        print(f"\n1. sequential 2026-era tools/call, {args.calls} calls x {args.rounds} rounds")
        for arm, values in rates.items():
            print(f"   {arm:8} {statistics.median(values):7.0f} calls/s "
                  f"(rounds: {' '.join(f'{v:.0f}' for v in values)})")
        print(f"   guarded / bare throughput: {statistics.median(ratios):.3f}x "
              f"(rounds {min(ratios):.3f} to {max(ratios):.3f})   target: >= 0.95x")
        cpu = rejected(server.pid, urls, args.rejects, args.rounds)
        print(f"\n2. server CPU per rejected forged request, {args.rejects} x {args.rounds} rounds")
        for header in FORGED:
            guard, sdk = cpu[f"{header} guarded"], cpu[f"{header} bare"]
            ratio = statistics.median(g / s for g, s in zip(guard, sdk, strict=True))
            print(f"   forged {header:17} Guard {statistics.median(guard) * 1e6:6.0f} us, "
                  f"SDK {statistics.median(sdk) * 1e6:6.0f} us: {ratio:.3f}x   target: <= 0.5x")
    finally:
        server.terminate()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
