"""What ``http.Guard`` costs in front of the official SDK's Streamable HTTP server, and saves.

    python benchmarks/http_guard.py [--calls 25] [--rejects 100] [--rounds 41] [--http h11]

``tests/guard_server.py`` (uvicorn in a subprocess) serves one SDK app behind the Guard at
``/guarded/mcp`` and bare at ``/bare/mcp``, so both arms share a process, a port and a
warm interpreter; the rounds alternate which arm goes first.

1. Sequential 2026-era ``tools/call``: the SDK's own client (``mcp.Client``, default mode)
   calls ``echo`` one call at a time, guarded and bare; calls a second, and their ratio
   per round. Target: guarded at least 0.95x the bare throughput.
2. Forged headers: httpx posts 2026-era requests whose ``Mcp-Method``, ``Mcp-Name`` or
   ``Mcp-Param-Region`` header disagrees with the body; the Guard rejects them in front,
   the SDK behind. Measured: the server process's CPU time (all threads, from
   /proc/PID/task/*/schedstat) per rejected request; uvicorn's own cost per request is
   in both.
   Target: the Guard at most 0.5x the SDK's.

3. The same rejections in-process, the Guard and the SDK's app called as ASGI callables
   without uvicorn: what each adds to a server's own per-request cost (CPU time).

Rounds are short and many, so that the load of a shared machine falls on both arms
alike; ratios are medians of the per-round ratios. Linux only (/proc); needs the ``interop``
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

import rpcline
from rpcline._build_info import describe, verdict

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
    """CPU time of the server's live threads so far, in ns from /proc/PID/task/*/schedstat
    (utime + stime in /proc/PID/stat count 10 ms ticks: too coarse for short rounds). The
    threads are the event loop's and anyio's workers, which idle 10 s before they exit."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):  # a thread that just exited
            pass
    return total / 1e9


async def sequential(
    pid: int, urls: dict[str, str], calls: int, rounds: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    rates: dict[str, list[float]] = {arm: [] for arm in urls}
    cpu: dict[str, list[float]] = {arm: [] for arm in urls}
    async with mcp.Client(urls["bare"]) as bare, mcp.Client(urls["guarded"]) as guarded:
        clients = {"bare": bare, "guarded": guarded}
        for client in clients.values():
            assert client.protocol_version == V, client.protocol_version
            for i in range(30):  # warm-up
                await client.call_tool("echo", {"text": f"warm {i}"})
        for r in range(rounds):
            for arm in (("bare", "guarded") if r % 2 == 0 else ("guarded", "bare")):
                started, before = time.perf_counter(), cpu_seconds(pid)
                for i in range(calls):
                    await clients[arm].call_tool("echo", {"text": f"call {i}"})
                rates[arm].append(calls / (time.perf_counter() - started))
                cpu[arm].append((cpu_seconds(pid) - before) / calls)
    return rates, cpu


def rejected(pid: int, urls: dict[str, str], count: int, rounds: int) -> dict[str, list[float]]:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": CALL})
    cpu: dict[str, list[float]] = {}
    with httpx.Client(timeout=30) as client:
        for header, headers in FORGED.items():
            for arm, url in urls.items():  # warm-up, and the answer all give
                for _ in range(50):
                    reply = client.post(url, content=body, headers=headers)
                assert reply.status_code == 400 and reply.json()["error"]["code"] == -32020
            for r in range(rounds):
                for arm in (("bare", "guarded", "floor") if r % 2 == 0 else ("floor", "guarded", "bare")):
                    before = cpu_seconds(pid)
                    for _ in range(count):
                        client.post(urls[arm], content=body, headers=headers)
                    cpu.setdefault(f"{header} {arm}", []).append((cpu_seconds(pid) - before) / count)
    return cpu


async def in_process(count: int) -> dict[str, tuple[float, float]]:
    sys.path.insert(0, str(ROOT / "tests"))
    from guard_server import LOCAL_HOSTS, LOCAL_ORIGINS, sdk_server

    from rpcline import http

    server = sdk_server()
    app = server.streamable_http_app()
    listing = [tool.model_dump(by_alias=True, exclude_none=True) for tool in await server.list_tools()]
    guard = http.Guard(app, tools=http.param_headers(listing), allowed_hosts=LOCAL_HOSTS,
                       allowed_origins=LOCAL_ORIGINS)  # fmt: skip
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": CALL}).encode()
    costs = {}
    async with server.session_manager.run():
        for header, headers in FORGED.items():
            raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
            scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                     "method": "POST", "scheme": "http", "path": "/mcp", "raw_path": b"/mcp",
                     "query_string": b"", "root_path": "", "server": ("127.0.0.1", 8000),
                     "client": ("127.0.0.1", 9), "headers": [
                         (b"host", b"127.0.0.1:8000"), (b"content-length", b"%d" % len(body)),
                         *raw]}  # fmt: skip
            sent: list[dict] = []

            async def receive() -> dict:
                return {"type": "http.request", "body": body}

            async def send(message: dict) -> None:
                sent.append(message)

            cost = []
            for arm in (guard, app):
                for _ in range(300):  # warm-up
                    await arm(scope, receive, send)
                assert sent[-2]["status"] == 400, sent[-2]
                started = time.process_time()
                for _ in range(count):
                    await arm(scope, receive, send)
                cost.append((time.process_time() - started) / count)
                sent.clear()
            costs[header] = (cost[0], cost[1])
    return costs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=25, help="SDK calls per arm and round")
    parser.add_argument("--rejects", type=int, default=100, help="forged posts per arm and round")
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--http", default="auto", choices=["auto", "h11", "httptools"],
                        help="uvicorn's HTTP parser (auto: httptools when installed)")
    parser.add_argument("--loop", default="asyncio", choices=["asyncio", "uvloop"])
    args = parser.parse_args()
    print(f"measuring {describe()}")
    env = dict(os.environ)  # the server imports the rpcline this interpreter does
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "guard_server.py"),
                               "--http", args.http, "--loop", args.loop],
                              stdout=subprocess.PIPE, text=True, env=env)  # fmt: skip
    try:
        assert server.stdout is not None
        port, implementation = server.stdout.readline().split()
        urls = {arm: f"http://127.0.0.1:{port}/{arm}/mcp" for arm in ("bare", "guarded", "floor")}
        print(f"server: rpcline {implementation} implementation, mcp {version('mcp')}, "
              f"uvicorn --http {args.http} (httptools {'installed' if HTTPTOOLS else 'missing'}), "
              f"event loop {args.loop}")
        rates, call_cpu = anyio.run(sequential, server.pid, {
            arm: urls[arm] for arm in ("bare", "guarded")}, args.calls, args.rounds)
        ratios = [g / b for g, b in zip(rates["guarded"], rates["bare"], strict=True)]
        print(f"\n1. sequential 2026-era tools/call, {args.calls} calls x {args.rounds} rounds")
        for arm, values in rates.items():
            print(f"   {arm:8} {statistics.median(values):7.0f} calls/s (median round; "
                  f"rounds from {min(values):.0f} to {max(values):.0f})")
        print(f"   guarded / bare throughput: {statistics.median(ratios):.3f}x "
              f"(rounds {min(ratios):.3f} to {max(ratios):.3f})   target: >= 0.95x: "
              f"{verdict(statistics.median(ratios) >= 0.95)}")
        extra = [g - b for g, b in zip(call_cpu["guarded"], call_cpu["bare"], strict=True)]
        print(f"   server CPU per call: bare {statistics.median(call_cpu['bare']) * 1e6:.0f} us, "
              f"guarded {statistics.median(call_cpu['guarded']) * 1e6:.0f} us (median "
              f"difference per round {statistics.median(extra) * 1e6:+.0f} us)")
        cpu = rejected(server.pid, urls, args.rejects, args.rounds)
        print(f"\n2. server CPU per rejected forged request, {args.rejects} x {args.rounds} rounds")
        print("   (uvicorn alone: a 400 sent at once by a bare ASGI app, the floor of both)")
        for header in FORGED:
            guard, sdk, base = (cpu[f"{header} {arm}"] for arm in ("guarded", "bare", "floor"))
            ratio = statistics.median(g / s for g, s in zip(guard, sdk, strict=True))
            own = [(g - f) / (s - f) for g, s, f in zip(guard, sdk, base, strict=True)]
            print(f"   forged {header:17} Guard {statistics.median(guard) * 1e6:4.0f} us, "
                  f"SDK {statistics.median(sdk) * 1e6:4.0f} us: {ratio:.3f}x   target: <= 0.5x: "
                  f"{verdict(ratio <= 0.5)}\n"
                  f"   {'':24} uvicorn alone {statistics.median(base) * 1e6:4.0f} us; beyond it "
                  f"the Guard costs {statistics.median(own):.3f}x the SDK")
    finally:
        server.terminate()
        server.wait(10)
    print(f"\n3. in-process CPU per rejected forged request (no uvicorn), {args.rejects * 10} "
          f"each, rpcline {rpcline.IMPLEMENTATION} implementation")
    for header, (guard_cost, sdk_cost) in anyio.run(in_process, args.rejects * 10).items():
        print(f"   forged {header:17} Guard {guard_cost * 1e6:5.1f} us, SDK {sdk_cost * 1e6:5.1f} us:"
              f" {guard_cost / sdk_cost:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
