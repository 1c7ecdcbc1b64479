"""What rpcline serve costs: the same stdio child behind it, mcp-proxy and FastMCP's proxy.

    python benchmarks/serve.py [--quick] [--rounds 3] [--seconds 3] [--sessions 2000]
        [--mcp-proxy /work/venv-mcpproxy/bin/mcp-proxy]
        [--fastmcp-python /work/venv-fastmcp/bin/python]

Gateways, each serving one stdio child at /mcp over Streamable HTTP, in interleaved rounds
(the order rotates every round; ratios are taken within the run):

- ``rpcline serve`` as this interpreter runs it (uvicorn picks uvloop and httptools when they
  are installed: the line "HTTP stacks" says what each gateway got), and ``rpcline serve
  (h11)``: the same with uvloop and httptools hidden, what ``pip install 'rpcline[serve]'``
  alone gives (``--gateways`` to add it; ``--quick`` leaves it out).
- ``rpcline serve --children 2`` (the realistic child only: the SDK's server uses one core).
- sparfenyuk's ``mcp-proxy`` (its own venv: 0.13.0 pins ``mcp<2``; the 2025 era only).
- FastMCP's proxy (``fastmcp.server.create_proxy``, its own venv; both eras).
- ``direct``: the realistic child's own server served as Streamable HTTP by the SDK
  (no gateway), for the realistic child only.
- ``child over stdio``: one client's calls written straight to the child's pipes, no HTTP:
  the ceiling for any stdio gateway with one client.

Children: ``fast`` (benchmarks/fast_child.py, a minimal responder: the gateway is measured)
and ``sdk`` (tests/sdk_server.py, the SDK's own stdio server: realistic). Clients: the raw
keep-alive load generator (benchmarks/_serve_load.py) at 1, 16 and 256 connections, each an
MCP client calling ``echo`` back to back (2025 era: a session each; 2026-07-28: stateless
requests), in every era the gateway serves; then a short run of the SDK's own Streamable
HTTP client (``mcp.Client``, ``legacy`` and ``2026-07-28``), one call at a time. Reported:
throughput, p50/p99 latency, the gateway's CPU per call (utime + stime of its own process
from /proc, its children excluded) and its RSS per idle 2025 session (N sessions opened on
the fresh gateway before the load, never used, left open: RSS delta / N). Each is printed as a ratio to the best peer (the best value of
that figure among mcp-proxy and FastMCP's proxy in that era), beside its target:
with the fast child, at 16 and 256 clients, throughput >= 5x, p99 <= 0.3x, CPU a call
<= 0.2x; memory per idle 2025 session <= 64 KB; with the realistic child, rpcline serve
>= 0.9x direct's throughput. Linux only (/proc). Every process started is stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from rpcline._build_info import describe, verdict

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "benchmarks"
PYTHON = sys.executable
MEMORY_LIMIT = "--as=4000000000"  # every process started here runs under prlimit
CHILDREN = {"fast": [PYTHON, str(HERE / "fast_child.py")],
            "sdk": [PYTHON, str(ROOT / "tests" / "sdk_server.py")]}  # fmt: skip
HIDE_FAST_STACK = ("import sys; sys.modules['uvloop'] = sys.modules['httptools'] = None; "
                   "from rpcline.cli import main; sys.exit(main())")
RPCLINE, RPCLINE_H11, MCP_PROXY, FASTMCP, DIRECT = (
    "rpcline serve", "rpcline serve (h11)", "mcp-proxy", "FastMCP proxy", "direct")
RPCLINE_2 = "rpcline serve --children 2"  # the realistic child only: it is single-threaded
STDIO = "child over stdio"  # no HTTP, no gateway: one client's ceiling through any gateway
PEERS = (MCP_PROXY, FASTMCP)
LOGS = Path(tempfile.gettempdir())  # each gateway's stderr: main() makes a directory of its own


class Gateway:
    def __init__(self, name: str, python: str, eras: tuple[str, ...], command: object) -> None:
        self.name, self.python, self.eras, self._command = name, python, eras, command

    def command(self, port: int, child: list[str]) -> list[str]:
        return self._command(port, child)  # type: ignore[operator,no-any-return]


def gateways(args: argparse.Namespace) -> dict[str, Gateway]:
    found = {
        RPCLINE: Gateway(RPCLINE, PYTHON, ("2025", "2026"), lambda port, child: [
            PYTHON, "-m", "rpcline", "serve", "--port", str(port), "--", *child]),
        RPCLINE_2: Gateway(RPCLINE_2, PYTHON, ("2025", "2026"), lambda port, child: [
            PYTHON, "-m", "rpcline", "serve", "--port", str(port), "--children", "2", "--",
            *child]),
        RPCLINE_H11: Gateway(RPCLINE_H11, PYTHON, ("2025", "2026"), lambda port, child: [
            PYTHON, "-c", HIDE_FAST_STACK, "serve", "--port", str(port), "--", *child]),
        MCP_PROXY: Gateway(MCP_PROXY, str(Path(args.mcp_proxy).parent / "python"), ("2025",),
                           lambda port, child: [args.mcp_proxy, "--port", str(port),
                                                "--log-level", "WARNING", *child]),
        FASTMCP: Gateway(FASTMCP, args.fastmcp_python, ("2025", "2026"), lambda port, child: [
            args.fastmcp_python, str(HERE / "_serve_peers.py"), "fastmcp", str(port), *child]),
        DIRECT: Gateway(DIRECT, PYTHON, ("2025", "2026"), lambda port, child: [
            PYTHON, str(HERE / "_serve_peers.py"), "direct", str(port)]),
    }
    chosen = {}
    for name in args.gateways:
        gateway = found[name]
        if not Path(gateway.python).exists():
            print(f"{name}: skipped ({gateway.python} does not exist)")
            continue
        chosen[name] = gateway
    return chosen


def stack(python: str) -> str:
    probe = ("import importlib.util as u; print(*(m for m in ('uvloop', 'httptools') "
             "if u.find_spec(m)))")
    found = subprocess.run([python, "-c", probe], capture_output=True, text=True).stdout.split()
    return (("uvloop" if "uvloop" in found else "asyncio") + " + "
            + ("httptools" if "httptools" in found else "h11"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def descendants(pid: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


@contextlib.contextmanager
def running(gateway: Gateway, child: list[str]) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """The gateway serving ``child`` on a free port, until it answers; then stopped (SIGTERM,
    then SIGKILL), and every process it started with it."""
    port = free_port()
    log = open(LOGS / f"{gateway.name.replace(' ', '-')}-{port}.log", "wb")
    process = subprocess.Popen(["prlimit", MEMORY_LIMIT, *gateway.command(port, child)],
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                               cwd=ROOT)  # fmt: skip
    family: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{gateway.name} exited with {process.returncode}: "
                                   f"see {log.name}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{gateway.name} did not listen in 60 s: see {log.name}")
            time.sleep(0.1)
        yield port, process
    finally:
        family.update(descendants(process.pid))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        time.sleep(0.2)  # its children, in groups of their own, had their chance to go
        for pid in family:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        log.close()


def load(port: int, era: str, clients: int, warm: float, seconds: float,
         pids: list[int]) -> dict[str, object]:
    done = subprocess.run(
        ["prlimit", MEMORY_LIMIT, PYTHON, str(HERE / "_serve_load.py"), "load", str(port), era,
         str(clients), str(warm), str(seconds), ",".join(map(str, pids))],
        capture_output=True, text=True, timeout=120 + warm + seconds)  # fmt: skip
    if done.returncode != 0:
        return {"failed": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def stdio_floor(era: str, warm: float, seconds: float, child: list[str]) -> dict[str, object]:
    done = subprocess.run(
        ["prlimit", MEMORY_LIMIT, PYTHON, str(HERE / "_serve_load.py"), "stdio", era, str(warm),
         str(seconds), *child], capture_output=True, text=True, timeout=120 + warm + seconds)
    if done.returncode != 0:
        return {"failed": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def ready(port: int, era: str, pids: list[int]) -> bool:
    """One client, a fraction of a second: the gateway answers calls in this era."""
    result = load(port, era, 1, 0.1, 0.3, pids)
    return not result.get("failed") and int(result.get("calls", 0)) > 0  # type: ignore[call-overload]


def sdk_run(port: int, era: str, calls: int, pid: int) -> dict[str, object]:
    mode = "legacy" if era == "2025" else "2026-07-28"
    done = subprocess.run(
        ["prlimit", MEMORY_LIMIT, PYTHON, str(HERE / "_serve_sdk.py"),
         f"http://127.0.0.1:{port}/mcp", mode, str(calls), str(pid)],
        capture_output=True, text=True, timeout=300)  # fmt: skip
    if done.returncode != 0:
        return {"failed": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def idle_sessions(port: int, pid: int, count: int) -> dict[str, float]:
    """RSS of the gateway per 2025 session opened and never used (after 200 to warm up)."""
    def open_(n: int) -> None:
        subprocess.run(["prlimit", MEMORY_LIMIT, PYTHON, str(HERE / "_serve_load.py"),
                        "sessions", str(port), str(n)], check=True, capture_output=True,
                       timeout=600)  # fmt: skip

    open_(200)
    time.sleep(1)
    before = rss_kb(pid)
    started = time.perf_counter()
    open_(count)
    wall = time.perf_counter() - started
    time.sleep(1)
    children = [rss_kb(child) for child in descendants(pid)]
    return {"kb": (rss_kb(pid) - before) / count, "rate": count / wall,
            "child_kb": max(children, default=0)}


def rotated(items: list[str], round: int) -> list[str]:
    return items[round % len(items):] + items[:round % len(items)]


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="CI's size: one round, 1 s windows, 500 idle sessions, 50 SDK calls, "
                             "no h11 variant, the realistic child through rpcline serve "
                             "and direct only")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0, help="measured window a cell")
    parser.add_argument("--warm", type=float, default=1.0, help="seconds before the window")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 16, 256])
    parser.add_argument("--sessions", type=int, default=2000, help="idle sessions opened")
    parser.add_argument("--sdk-calls", type=int, default=300)
    parser.add_argument("--children", nargs="+", choices=list(CHILDREN), default=list(CHILDREN))
    parser.add_argument("--gateways", nargs="+",
                        choices=[RPCLINE, RPCLINE_2, RPCLINE_H11, MCP_PROXY, FASTMCP, DIRECT],
                        default=[RPCLINE, RPCLINE_2, RPCLINE_H11, MCP_PROXY, FASTMCP, DIRECT])
    parser.add_argument("--mcp-proxy", default="/work/venv-mcpproxy/bin/mcp-proxy")
    parser.add_argument("--fastmcp-python", default="/work/venv-fastmcp/bin/python")
    parser.add_argument("--json", metavar="FILE", help="also write every measurement here")
    args = parser.parse_args()
    args.peers_on_sdk_child = True
    if args.quick:
        args.rounds, args.seconds, args.warm = 1, 1.0, 0.3
        args.sessions, args.sdk_calls = 500, 50
        if "--gateways" not in sys.argv:  # the realistic child: rpcline serve and direct
            args.gateways.remove(RPCLINE_H11)
            args.peers_on_sdk_child = False
    print(f"measuring {describe()}")
    global LOGS
    LOGS = Path(tempfile.mkdtemp(prefix="rpcline-serve-bench-"))
    chosen = gateways(args)
    print("HTTP stacks (uvicorn's automatic choice in each interpreter): " + "; ".join(
        f"{name}: {'asyncio + h11' if name == RPCLINE_H11 else stack(g.python)}"
        for name, g in chosen.items()))
    print(f"{args.rounds} interleaved rounds; load windows {args.warm:g} s warm-up + "
          f"{args.seconds:g} s measured; SDK client {args.sdk_calls} calls a run")
    # results[(child, gateway, era, clients)] -> one dict a round; clients 0: the SDK client
    results: dict[tuple[str, str, str, int], list[dict[str, object]]] = {}
    memory: dict[str, list[dict[str, float]]] = {}
    started = time.perf_counter()
    failures = 0
    for round in range(args.rounds):
        for child_name in args.children:
            names = [n for n in chosen
                     if (n not in (DIRECT, RPCLINE_2) or child_name == "sdk")
                     and (child_name == "fast" or args.peers_on_sdk_child or n not in PEERS)]
            for name in rotated(names, round):
                gateway = chosen[name]
                try:
                    with running(gateway, CHILDREN[child_name]) as (port, process):
                        gateway_pid = process.pid  # prlimit execs the gateway: the same pid
                        if child_name == "fast" or name == DIRECT:  # first, while fresh
                            memory.setdefault(name, []).append(
                                idle_sessions(port, gateway_pid, args.sessions))
                        for era in gateway.eras:
                            pids = [gateway_pid]
                            deadline = time.monotonic() + 30
                            while not ready(port, era, pids):  # started, handshake made
                                if time.monotonic() > deadline:
                                    raise RuntimeError(f"{name} answers no {era} call")
                                time.sleep(0.2)
                            pids += descendants(gateway_pid)
                            for clients in args.clients:
                                results.setdefault((child_name, name, era, clients), []).append(
                                    load(port, era, clients, args.warm, args.seconds, pids))
                            results.setdefault((child_name, name, era, 0), []).append(
                                sdk_run(port, era, args.sdk_calls, gateway_pid))
                except (RuntimeError, OSError, subprocess.SubprocessError) as error:
                    print(f"  {child_name} child, {name}: {error}", file=sys.stderr)
                    failures += 1
            for era in ("2025", "2026"):
                results.setdefault((child_name, STDIO, era, 1), []).append(
                    stdio_floor(era, args.warm, args.seconds, CHILDREN[child_name]))
        print(f"round {round + 1} of {args.rounds} done at {time.perf_counter() - started:.0f} s",
              file=sys.stderr, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"results": {"|".join(map(str, k)): v for k, v in
                                                           results.items()},
                                               "memory": memory}, indent=1))  # fmt: skip
    report(args, chosen, results, memory)
    print(f"({time.perf_counter() - started:.0f} s)")
    if failures:
        print(f"the gateways' logs are in {LOGS}")
    else:
        shutil.rmtree(LOGS)
    return 0


def figures(runs: list[dict[str, object]]) -> dict[str, float] | None:
    """Medians over rounds: calls/s, p50 and p99 in ms, gateway and children CPU us a call."""
    good = [r for r in runs if not r.get("failed") and r.get("calls", 1)]
    if not good:
        return None
    out = {"rate": median([float(r["rate"]) for r in good]),  # type: ignore[arg-type]
           "p50": median([float(r["p50"]) * 1e3 for r in good]),  # type: ignore[arg-type]
           "p99": median([float(r["p99"]) * 1e3 for r in good])}  # type: ignore[arg-type]
    if "gateway_cpu" in good[0]:  # the load generator's; else the SDK client's
        out["cpu"] = median([float(r["gateway_cpu"]) / int(r["calls"]) * 1e6  # type: ignore
                             for r in good])
        out["child_cpu"] = median([float(r["children_cpu"]) / int(r["calls"]) * 1e6  # type: ignore
                                   for r in good])
        out["load_cpu"] = median([float(r["load_cpu"]) / int(r["calls"]) * 1e6  # type: ignore
                                  for r in good])
        out["errors"] = sum(int(r["errors"]) for r in good)  # type: ignore[call-overload]
    else:
        out["cpu"] = median([float(r["cpu_per_call"]) * 1e6 for r in good])  # type: ignore
    return out  # type: ignore[return-value]


def best(values: list[float | None], higher: bool) -> float | None:
    present = [v for v in values if v is not None]
    if not present:
        return None
    return max(present) if higher else min(present)


def ratio(mine: float | None, theirs: float | None) -> str:
    if mine is None or not theirs:
        return "-"
    return f"{mine / theirs:.{3 if mine / theirs < 0.1 else 2}f}x"


def report(args: argparse.Namespace, chosen: dict[str, Gateway],
           results: dict[tuple[str, str, str, int], list[dict[str, object]]],
           memory: dict[str, list[dict[str, float]]]) -> None:
    rows = []
    for child_name in args.children:
        for era in ("2025", "2026"):
            for clients in [*args.clients, 0]:
                cells = {name: figures(results.get((child_name, name, era, clients), []))
                         for name in [*chosen, STDIO]}  # fmt: skip
                cells = {k: v for k, v in cells.items() if v is not None}
                if not cells:
                    continue
                peers = [cells[p] for p in PEERS if p in cells]
                top = {"rate": best([p["rate"] for p in peers], True),
                       "p99": best([p["p99"] for p in peers], False),
                       "cpu": best([p["cpu"] for p in peers], False)}  # fmt: skip
                rows.append((child_name, era, clients, cells, top))
    print()
    print("| child | era | clients | gateway | calls/s | p50 ms | p99 ms | gateway CPU us/call "
          "| child CPU us/call | calls/s vs best peer | p99 vs best peer | CPU vs best peer |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for child_name, era, clients, cells, top in rows:
        who = "SDK client" if clients == 0 else str(clients)
        for name, f in cells.items():
            mine = name in (RPCLINE, RPCLINE_2, RPCLINE_H11)
            child_cpu = f.get("child_cpu")
            print(f"| {child_name} | {era} | {who} | {name} | {f['rate']:,.0f} | {f['p50']:.2f} | "
                  f"{f['p99']:.2f} | {f['cpu']:.0f} | "
                  f"{'-' if child_cpu is None else f'{child_cpu:.0f}'} | "
                  f"{ratio(f['rate'], top['rate']) if mine else ''} | "
                  f"{ratio(f['p99'], top['p99']) if mine else ''} | "
                  f"{ratio(f['cpu'], top['cpu']) if mine else ''} |")
    errors = {(c, n, e, k): sum(int(r.get("errors", 0)) for r in v)  # type: ignore[call-overload]
              for (c, n, e, k), v in results.items()}
    failed = {k: v for k, v in results.items() if any(r.get("failed") for r in v)}
    if any(errors.values()) or failed:
        print("errors: " + "; ".join(f"{k}: {v}" for k, v in errors.items() if v)
              + "; ".join(f"{k}: {[r.get('failed') for r in v]}" for k, v in failed.items()))
    load_cpu = [r["load_cpu"] for _, _, k, cells, _ in rows if k for r in cells.values()
                if r.get("load_cpu") is not None]
    if load_cpu:
        print(f"the load generator's own CPU: {min(load_cpu):.0f}-{max(load_cpu):.0f} us a call")
    print()
    print(f"{args.sessions} idle 2025 sessions (a child of one's own per session would cost "
          "that child's RSS each: the last column)")
    print("| gateway | child | RSS per idle 2025 session | sessions opened/s | its child's RSS |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name, runs in memory.items():
        print(f"| {name} | {'sdk' if name == DIRECT else 'fast'} | "
              f"{median([r['kb'] for r in runs]):.1f} KB | "
              f"{median([r['rate'] for r in runs]):,.0f} | "
              f"{median([r['child_kb'] for r in runs]) / 1024:.1f} MB |")
    print()
    print("targets (fast child: rpcline serve against the best peer in the same era)")
    for child_name, era, clients, cells, top in rows:
        if child_name != "fast" or clients not in (16, 256) or RPCLINE not in cells:
            continue
        f = cells[RPCLINE]
        for key, target, higher, what in (("rate", 5.0, True, "throughput"),
                                          ("p99", 0.3, False, "p99"),
                                          ("cpu", 0.2, False, "gateway CPU a call")):
            if top[key] is None:
                continue
            r = f[key] / top[key]
            ok = r >= target if higher else r <= target
            print(f"  {era} era, {clients} clients, {what}: {r:.{3 if r < 0.1 else 2}f}x "
                  f"({'>=' if higher else '<='} {target}x) {verdict(ok)}")
    if RPCLINE in memory:
        kb = median([r["kb"] for r in memory[RPCLINE]])
        assert kb is not None
        print(f"  memory per idle 2025 session: {kb:.1f} KB (<= 64 KB) {verdict(kb <= 64)}")
    for child_name, era, clients, cells, _ in rows:
        if child_name == "sdk" and RPCLINE in cells and DIRECT in cells:
            r = cells[RPCLINE]["rate"] / cells[DIRECT]["rate"]
            if RPCLINE_2 in cells:
                two = cells[RPCLINE_2]["rate"] / cells[DIRECT]["rate"]
                extra = f" (--children 2: {two:.2f}x)" if clients != 1 else ""
            else:
                extra = ""
            who = ("SDK client" if clients == 0 else f"{clients} client" + "s" * (clients != 1))
            if STDIO in cells:
                extra += (f"; the child alone over its pipes, no HTTP: "
                           f"{cells[STDIO]['rate'] / cells[DIRECT]['rate']:.2f}x")
            print(f"  realistic child, {era} era, {who}: rpcline serve {r:.2f}x direct's "
                  f"throughput (>= 0.9x) {verdict(r >= 0.9)}{extra}")


if __name__ == "__main__":
    sys.exit(main())
