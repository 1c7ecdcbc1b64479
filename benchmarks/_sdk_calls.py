"""``python _sdk_calls.py N [--strace | --callgrind] COMMAND...``: N sequential SDK tool calls.

Prints four figures: calls a second; the CPU time its child (the server, or the relay in
front of it) spent per call, in µs (``/proc/PID/task/*/schedstat``: nanoseconds, every
thread); this client's own CPU per call (``getrusage``); and, with ``--strace``, the
child's system calls per call (``strace -c -f -p`` attached after the warm-up, so
start-up is not counted; ``nan`` without it), then one line of the commonest calls.
``--callgrind``: COMMAND runs under ``valgrind --tool=callgrind --instr-atstart=no``, and
its instrumentation is turned on (``callgrind_control -i``) for the N calls only. A
child of benchmarks/relay.py, so each measurement has a process of its own. Linux only
(/proc).
"""

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def child_pids() -> list[int]:
    return [int(pid) for task in Path("/proc/self/task").iterdir()
            for pid in (task / "children").read_text().split()]


def cpu_ns(pid: int) -> int:
    """CPU nanoseconds of every thread of ``pid`` so far (threads that ended are not in it:
    the relays keep theirs for the whole session)."""
    return sum(int((task / "schedstat").read_text().split()[0])
               for task in Path(f"/proc/{pid}/task").iterdir())


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def strace_attach(pid: int, output: str) -> subprocess.Popen[bytes]:
    tracer = subprocess.Popen(["strace", "-c", "-f", "-q", "-o", output, "-p", str(pid)],
                              stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # attached once the process says who traces it
        status = Path(f"/proc/{pid}/status").read_text()
        if "TracerPid:\t0\n" not in status:
            return tracer
        time.sleep(0.01)
    tracer.kill()
    raise RuntimeError("strace did not attach")


def strace_counts(output: str) -> dict[str, int]:
    """``strace -c``'s table: calls per system call (the errors column is optional)."""
    counts = {}
    for line in Path(output).read_text().splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
            counts[fields[-1]] = int(fields[3])
    return counts


def instrument(pid: int, on: bool) -> None:
    subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(pid)], check=True,
                   capture_output=True, timeout=60)


async def main(calls: int, mode: str, command: list[str]) -> None:
    trace = mode == "--strace"
    env = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "RPCLINE_NO_EXTENSIONS")}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(20):  # warm-up
                await session.call_tool("echo", {"text": "warm"})
            [child] = child_pids()
            with tempfile.TemporaryDirectory() as tmp:
                output = os.path.join(tmp, "strace")
                tracer = strace_attach(child, output) if trace else None
                if mode == "--callgrind":
                    instrument(child, True)
                cpu, mine = cpu_ns(child), own_cpu()
                started = time.perf_counter()
                for i in range(calls):
                    await session.call_tool("echo", {"text": f"call {i}"})
                wall = time.perf_counter() - started
                cpu, mine = cpu_ns(child) - cpu, own_cpu() - mine
                if mode == "--callgrind":
                    instrument(child, False)
                counts: dict[str, int] = {}
                if tracer is not None:
                    tracer.send_signal(signal.SIGINT)
                    tracer.wait(30)
                    counts = strace_counts(output)
            syscalls = sum(counts.values()) / calls if trace else float("nan")
            print(calls / wall, cpu / calls / 1e3, mine / calls * 1e6, syscalls)
            common = sorted(counts.items(), key=lambda item: -item[1])[:8]
            print(" ".join(f"{name}={n / calls:.2f}" for name, n in common) or "-")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    count = int(arguments.pop(0))
    option = arguments[0] if arguments[0] in ("--strace", "--callgrind") else ""
    anyio.run(main, count, option, arguments[1:] if option else arguments)
