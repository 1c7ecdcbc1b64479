"""The same ``MCPServer`` on the SDK's stdio transport and on ``rpcline.sdk.stdio_server``,
fed by a blocking writer: the server's CPU a call, calls a second, p50/p99 latency.

    python benchmarks/sdk_server_transport.py [--rounds 5] [--seconds 2]

One server process per arm (``server.run("stdio")``, ``rpcline.sdk.run_stdio(server)``),
each initialized once (2025 handshake). A round gives every arm ``--seconds`` of calls, one
after another (write a ``tools/call`` line, block reading its answer), with the sync
``echo`` tool and then the async ``aecho`` one; the arms alternate in order from round to
round. CPU is the server process's, all its threads, from /proc/PID/stat (utime+stime)
across the phase. Figures are medians over the rounds; the ratios are rpcline's over the
SDK's in the same run. Targets (issue 42): server CPU a call at most 0.7x the SDK
transport's with a sync tool, at most 0.6x with an async tool. Needs ``mcp``; Linux.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SERVER = """
import sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench")


@server.tool()
def echo(text: str) -> str:
    return text


@server.tool()
async def aecho(text: str) -> str:
    return text


@server.tool()
def length(data: str) -> int:
    return len(data)


if sys.argv[1] == "sdk":
    server.run("stdio")
else:
    import rpcline.sdk

    rpcline.sdk.run_stdio(server, max_line_bytes=256 * 1024 * 1024)  # above --big lines
"""
TARGETS = {"echo": 0.7, "aecho": 0.6}
SERVE_TARGET = 1.5  # rpcline serve, 8 clients of the 2026 era: calls/s over the SDK child's
HERE = Path(__file__).parent
LOG = Path(os.environ.get("TMPDIR", "/tmp")) / "sdk_server_transport.log"  # the gateways' stderr


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Server:
    def __init__(self, arm: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", SERVER, arm],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, bufsize=0)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        self.next_id = 0
        self.call({"jsonrpc": "2.0", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}})
        self.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def call(self, message: dict[str, Any]) -> Any:
        self.next_id += 1
        message = {**message, "id": self.next_id}
        self.stdin.write(json.dumps(message).encode() + b"\n")
        answer = json.loads(self.stdout.readline())
        assert answer.get("id") == self.next_id and "result" in answer, answer
        return answer

    def phase(self, tool: str, seconds: float) -> dict[str, float]:
        request = {"jsonrpc": "2.0", "method": "tools/call",
                   "params": {"name": tool, "arguments": {"text": "hello, rpcline"}}}
        for _ in range(50):  # warm
            self.call(request)
        latencies = []
        cpu = cpu_seconds(self.process.pid)
        start = time.perf_counter()
        while (now := time.perf_counter()) - start < seconds:
            self.call(request)
            latencies.append(time.perf_counter() - now)
        elapsed = time.perf_counter() - start
        cpu = cpu_seconds(self.process.pid) - cpu
        latencies.sort()
        return {"cpu_us": cpu / len(latencies) * 1e6, "calls_s": len(latencies) / elapsed,
                "p50_ms": latencies[len(latencies) // 2] * 1e3,
                "p99_ms": latencies[int(len(latencies) * 0.99)] * 1e3}

    def big(self, megabytes: int) -> dict[str, float]:
        """One ``tools/call`` line of ``megabytes`` MB: its CPU and the peak RSS after it."""
        size = megabytes * 1_000_000
        request = {"jsonrpc": "2.0", "method": "tools/call",
                   "params": {"name": "length", "arguments": {"data": "x" * size}}}
        cpu = cpu_seconds(self.process.pid)
        start = time.perf_counter()
        answer = self.call(request)
        elapsed = time.perf_counter() - start
        assert answer["result"]["structuredContent"]["result"] == size, answer
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        peak = int(status.split("VmHWM:")[1].split()[0]) / 1024
        return {"cpu_s": cpu_seconds(self.process.pid) - cpu, "wall_s": elapsed, "peak_mb": peak}

    def close(self) -> None:
        self.stdin.close()
        self.process.wait(10)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--rounds", type=int, default=5)
    options.add_argument("--seconds", type=float, default=2.0)
    options.add_argument("--serve", type=int, default=8, metavar="CLIENTS",
                         help="also each arm as the child of rpcline serve, this many "
                              "2026-era clients calling echo (0: not)")
    options.add_argument("--big", type=int, nargs="*", default=[],
                         help="also one request line of each size in MB (16 80), a fresh "
                              "server an arm: its CPU, wall time and the server's peak RSS")
    args = options.parse_args()
    if args.rounds:
        calls(args)
    if args.rounds and args.serve:
        served(args)
    for megabytes in args.big:
        for arm in ("sdk", "rpcline"):
            server = Server(arm)
            try:
                f = server.big(megabytes)
            finally:
                server.close()
            print(f"{megabytes} MB request line, {arm:8}: server CPU {f['cpu_s']:.3f} s, "
                  f"wall {f['wall_s']:.3f} s, peak RSS {f['peak_mb']:.0f} MB")


def calls(args: argparse.Namespace) -> None:
    arms = ["sdk", "rpcline"]
    servers = {arm: Server(arm) for arm in arms}
    figures: dict[tuple[str, str], list[dict[str, float]]] = {}
    try:
        for round in range(args.rounds):
            for tool in TARGETS:
                for arm in (arms if round % 2 == 0 else arms[::-1]):
                    figures.setdefault((arm, tool), []).append(
                        servers[arm].phase(tool, args.seconds))
    finally:
        for server in servers.values():
            server.close()
    median = {key: {name: statistics.median(f[name] for f in runs) for name in runs[0]}
              for key, runs in figures.items()}
    print(f"{args.rounds} interleaved rounds of {args.seconds:g} s an arm; medians; "
          f"server CPU a call, all threads")
    print(f"{'tool':6} {'transport':8} {'cpu us/call':>11} {'calls/s':>9} {'p50 ms':>7} "
          f"{'p99 ms':>7}")
    for tool in TARGETS:
        for arm in arms:
            m = median[arm, tool]
            print(f"{tool:6} {arm:8} {m['cpu_us']:11.0f} {m['calls_s']:9.0f} "
                  f"{m['p50_ms']:7.3f} {m['p99_ms']:7.3f}")
    for tool, target in TARGETS.items():
        ratio = median["rpcline", tool]["cpu_us"] / median["sdk", tool]["cpu_us"]
        speed = median["rpcline", tool]["calls_s"] / median["sdk", tool]["calls_s"]
        kind = "sync" if tool == "echo" else "async"
        verdict = "met" if ratio <= target else "NOT met"
        print(f"{kind} tool: server CPU a call {ratio:.2f}x the SDK transport's "
              f"(target <= {target}x: {verdict}); calls/s {speed:.2f}x")



def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def gateway(arm: str) -> Any:
    """``rpcline serve`` with the arm's server as its child, until it listens; then stopped
    with its process group (the child with it)."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "rpcline", "serve", "--port", str(port),
                                "--", "env", f"PYTHONPATH={os.environ.get('PYTHONPATH', '')}",
                                sys.executable, "-c", SERVER, arm],  # serve passes no PYTHONPATH
                               stdout=subprocess.DEVNULL, stderr=open(LOG, "ab"),
                               start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, f"rpcline serve exited with {process.returncode}"
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            assert time.monotonic() < deadline, "rpcline serve did not listen in 60 s"
            time.sleep(0.1)
        yield port, process.pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def served(args: argparse.Namespace) -> None:
    """Each arm behind ``rpcline serve``, ``--serve`` clients of the 2026 era calling the sync
    ``echo`` (benchmarks/_serve_load.py), interleaved rounds: the gateway starts its child
    when the first request comes, so the load's warm-up starts it."""
    arms = ["sdk", "rpcline"]
    runs: dict[str, list[dict[str, Any]]] = {arm: [] for arm in arms}
    with contextlib.ExitStack() as stack:
        gateways = {arm: stack.enter_context(gateway(arm)) for arm in arms}
        for round in range(args.rounds):
            for arm in (arms if round % 2 == 0 else arms[::-1]):
                port, pid = gateways[arm]
                # the child exists once the first load has warmed: name it from the second
                pids = [pid, *children(pid)]
                done = subprocess.run(
                    [sys.executable, str(HERE / "_serve_load.py"), "load", str(port), "2026",
                     str(args.serve), "1", str(args.seconds), ",".join(map(str, pids))],
                    capture_output=True, text=True, timeout=180)
                assert done.returncode == 0, done.stderr[-2000:]
                result = json.loads(done.stdout.splitlines()[-1])
                if len(pids) > 1:
                    runs[arm].append(result)
    print(f"through rpcline serve, {args.serve} clients of the 2026 era, sync echo "
          f"({len(runs['sdk'])} rounds counted: the first starts the children)")
    median = {}
    for arm in arms:
        rows = runs[arm]
        m = {"rate": statistics.median(r["rate"] for r in rows),
             "p50": statistics.median(r["p50"] for r in rows) * 1e3,
             "p99": statistics.median(r["p99"] for r in rows) * 1e3,
             "child_us": statistics.median(r["children_cpu"] / r["calls"] for r in rows) * 1e6,
             "gateway_us": statistics.median(r["gateway_cpu"] / r["calls"] for r in rows) * 1e6}
        median[arm] = m
        print(f"  child on {arm:8} {m['rate']:7.0f} calls/s  p50 {m['p50']:.3f} ms  "
              f"p99 {m['p99']:.3f} ms  child CPU {m['child_us']:.0f} us/call  "
              f"gateway CPU {m['gateway_us']:.0f} us/call")
    ratio = median["rpcline"]["rate"] / median["sdk"]["rate"]
    verdict = "met" if ratio >= SERVE_TARGET else "NOT met"
    print(f"calls/s through rpcline serve: {ratio:.2f}x the SDK transport's child "
          f"(target >= {SERVE_TARGET}x: {verdict})")


if __name__ == "__main__":
    main()
