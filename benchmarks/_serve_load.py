"""A raw keep-alive HTTP load generator for benchmarks/serve.py (not the bottleneck).

    python benchmarks/_serve_load.py load PORT ERA CLIENTS WARM SECONDS PID[,PID...]
    python benchmarks/_serve_load.py sessions PORT COUNT
    python benchmarks/_serve_load.py stdio ERA WARM SECONDS COMMAND [ARG...]

``load``: CLIENTS connections, each one MCP client calling ``echo`` one call after another
(``ERA`` 2025: ``initialize`` and ``notifications/initialized`` first, then calls in that
session; 2026: stateless 2026-07-28 requests with their headers). Requests are built
once (fixed-width ids, so every byte but the id is prepared) and answers are read by an
``asyncio.Protocol`` that parses only the status line, ``Content-Length`` or chunked
framing, and looks for ``"result"`` and its id in the body (a JSON answer or SSE events).
After WARM seconds, and once every client has had an answer (a slow gateway at 256 clients
takes longer than WARM to answer each once; at most 60 s), the calls completing within the
next SECONDS are counted (their latencies kept, whenever they started), and
the CPU time of the first PID (the gateway; /proc, its children excluded), of the other
PIDs (its children) and of this process are read at both ends. Prints one JSON line.

``stdio``: the same calls, one at a time, straight to the child's stdin and stdout (no HTTP,
no gateway): the ceiling for any stdio gateway's one-client figure.

``sessions``: opens COUNT 2025-era sessions (``initialize`` then ``initialized``) over
a few connections and never uses them (benchmarks/serve.py reads the gateway's RSS).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import orjson

try:
    import uvloop
except ImportError:  # plain asyncio: slower, and said so in the output
    uvloop = None

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}  # fmt: skip
# The path served: a named server's (benchmarks/serve_named.py) instead of /mcp; and an
# Authorization header every request carries (benchmarks/serve_auth.py).
PATH = os.environ.get("RPCLINE_BENCH_PATH", "/mcp")
AUTHORIZATION = os.environ.get("RPCLINE_BENCH_AUTHORIZATION")
ID_BASE = 10**9  # ids 10**9 + n: the same width for the first 9*10**9 calls


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:  # a child that exited: the gateway's own pid never does
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def post(port: int, body: bytes, headers: dict[str, str]) -> bytes:
    head = [f"POST {PATH} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
            "Accept: application/json, text/event-stream", f"Content-Length: {len(body)}",
            *(f"{k}: {v}" for k, v in headers.items()),
            *([f"Authorization: {AUTHORIZATION}"] if AUTHORIZATION else [])]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class Connection(asyncio.Protocol):
    """One keep-alive connection: a request written, its whole response awaited."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.waiter: asyncio.Future[tuple[int, bytes, bytes]] | None = None
        self.transport: asyncio.Transport | None = None
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError("the gateway closed the connection"))

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is not None and not self.waiter.done():
            response = self._parse()
            if response is not None:
                self.waiter.set_result(response)

    def request(self, data: bytes) -> asyncio.Future[tuple[int, bytes, bytes]]:
        if self.closed:
            raise ConnectionError("the gateway closed the connection")
        self.waiter = asyncio.get_running_loop().create_future()
        assert self.transport is not None
        self.transport.write(data)
        return self.waiter

    def _parse(self) -> tuple[int, bytes, bytes] | None:
        buffer = self.buffer
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = bytes(buffer[:end]).lower()
        status = int(head[9:12])
        start = end + 4
        at = head.find(b"\r\ncontent-length:")
        if at >= 0:
            length = int(head[at + 17:head.find(b"\r\n", at + 2) if head.find(
                b"\r\n", at + 2) > 0 else None])
            if len(buffer) < start + length:
                return None
            body = bytes(buffer[start:start + length])
            del buffer[:start + length]
            return status, head, body
        if b"\r\ntransfer-encoding: chunked" in head:
            chunks = []
            at = start
            while True:
                line_end = buffer.find(b"\r\n", at)
                if line_end < 0:
                    return None
                size = int(bytes(buffer[at:line_end]).split(b";")[0], 16)
                if len(buffer) < line_end + 2 + size + 2:
                    return None
                chunks.append(bytes(buffer[line_end + 2:line_end + 2 + size]))
                at = line_end + 2 + size + 2
                if size == 0:
                    del buffer[:at]
                    return status, head, b"".join(chunks)
        del buffer[:start]  # no body (202 and the like)
        return status, head, b""


def header(head: bytes, name: bytes) -> bytes | None:
    at = head.find(b"\r\n" + name + b":")
    if at < 0:
        return None
    end = head.find(b"\r\n", at + 2)
    return head[at + 3 + len(name):None if end < 0 else end].strip()


async def open_session(port: int, connection: Connection, n: int) -> bytes:
    body = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": HANDSHAKE, "capabilities": {},
        "clientInfo": {"name": f"load-{n}", "version": "1"}}})  # fmt: skip
    status, head, answer = await connection.request(post(port, body, {}))
    session = header(head, b"mcp-session-id")
    if status != 200 or session is None or b'"result"' not in answer:
        raise RuntimeError(f"initialize: {status} {answer[:200]!r}")
    note = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    status, _, answer = await connection.request(post(port, note, {
        "Mcp-Session-Id": session.decode(), "MCP-Protocol-Version": HANDSHAKE}))
    if status not in (200, 202):
        raise RuntimeError(f"initialized: {status} {answer[:200]!r}")
    return session


def call_template(port: int, era: str, session: bytes | None, n: int) -> tuple[bytes, bytes]:
    """The request with its id cut out: (before the id, after it)."""
    params = {"name": "echo", "arguments": {"text": f"hello from client {n}"}}
    if era == "2026":
        params["_meta"] = META
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
    else:
        assert session is not None
        headers = {"Mcp-Session-Id": session.decode(), "MCP-Protocol-Version": HANDSHAKE}
    body = orjson.dumps({"jsonrpc": "2.0", "id": ID_BASE, "method": "tools/call",
                         "params": params})
    data = post(port, body, headers)
    before, after = data.split(b"%d" % ID_BASE)
    return before, after


async def load(port: int, era: str, clients: int, warm: float, seconds: float,
               pids: list[int]) -> dict[str, object]:
    loop = asyncio.get_running_loop()
    connections = []
    for n in range(clients):
        _, connection = await loop.create_connection(Connection, "127.0.0.1", port)
        connections.append(connection)
    sessions: list[bytes | None] = [None] * clients
    if era == "2025":
        sessions = list(await asyncio.gather(*(open_session(port, c, n)
                                               for n, c in enumerate(connections))))
    window = [float("inf"), float("inf")]
    answered = [False] * clients
    latencies: list[float] = []
    errors: list[str] = []
    stop = False

    async def client(n: int) -> None:
        before, after = call_template(port, era, sessions[n], n)
        connection = connections[n]
        i = ID_BASE + n * 10**6
        while not stop:
            i += 1
            started = time.perf_counter()
            try:
                status, _, body = await connection.request(b"%s%d%s" % (before, i, after))
            except ConnectionError as error:
                errors.append(str(error))
                return
            done = time.perf_counter()
            if status != 200 or b'"result"' not in body or b"%d" % i not in body:
                if len(errors) < 5:
                    errors.append(f"{status} {body[:200]!r}")
                else:
                    errors.append("")
                continue
            answered[n] = True
            if window[0] <= done <= window[1]:
                latencies.append(done - started)

    tasks = [asyncio.ensure_future(client(n)) for n in range(clients)]
    await asyncio.sleep(warm)
    deadline = time.perf_counter() + 60
    while not all(answered) and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)
    window[0] = time.perf_counter()
    before, own = [cpu_seconds(pid) for pid in pids], time.process_time()
    window[1] = window[0] + seconds
    await asyncio.sleep(seconds)
    after, own = [cpu_seconds(pid) for pid in pids], time.process_time() - own
    gateway, children = after[0] - before[0], sum(after[1:]) - sum(before[1:])
    elapsed = time.perf_counter() - window[0]
    stop = True
    await asyncio.wait(tasks, timeout=30)
    for connection in connections:
        if connection.transport is not None:
            connection.transport.close()
    latencies.sort()
    calls = len(latencies)
    return {"calls": calls, "seconds": elapsed, "rate": calls / elapsed,
            "p50": latencies[calls // 2] if calls else None,
            "p99": latencies[min(calls - 1, int(calls * 0.99))] if calls else None,
            "gateway_cpu": gateway, "children_cpu": children, "load_cpu": own, "errors": len(errors),
            "first_errors": [e for e in errors if e][:3],
            "loop": "uvloop" if uvloop is not None else "asyncio"}


async def open_sessions(port: int, count: int, width: int = 8) -> dict[str, object]:
    loop = asyncio.get_running_loop()
    opened = 0

    async def worker(w: int) -> None:
        nonlocal opened
        _, connection = await loop.create_connection(Connection, "127.0.0.1", port)
        for n in range(w, count, width):
            await open_session(port, connection, n)
            opened += 1
        assert connection.transport is not None
        connection.transport.close()

    await asyncio.gather(*(worker(w) for w in range(width)))
    return {"opened": opened}


def stdio(era: str, warm: float, seconds: float, command: list[str]) -> dict[str, object]:
    import subprocess

    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    write, read = child.stdin, child.stdout

    def ask(id: int, method: str, params: dict[str, object]) -> bytes:
        write.write(orjson.dumps({"jsonrpc": "2.0", "id": id, "method": method,
                                  "params": params}) + b"\n")
        write.flush()
        while line := read.readline():
            if line.startswith(b'{"jsonrpc":"2.0","id":%d,' % id) or b'"id":%d' % id in line:
                return line
        raise ConnectionError("the child closed its output")

    if era == "2025":
        ask(0, "initialize", {"protocolVersion": HANDSHAKE, "capabilities": {},
                              "clientInfo": {"name": "load", "version": "1"}})
        write.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    latencies, n = [], 0
    started = time.perf_counter()
    cpu = own = 0.0
    while True:
        now = time.perf_counter()
        if not cpu and now - started >= warm:
            cpu, own, window = cpu_seconds(child.pid), time.process_time(), now
            latencies.clear()
        if cpu and now - window >= seconds:
            break
        n += 1
        params: dict[str, object] = {"name": "echo", "arguments": {"text": f"hello {n}"}}
        if era == "2026":
            params["_meta"] = META
        if b'"result"' not in ask(n, "tools/call", params):
            raise RuntimeError("the child refused a call")
        latencies.append(time.perf_counter() - now)
    elapsed = time.perf_counter() - window
    cpu, own = cpu_seconds(child.pid) - cpu, time.process_time() - own
    write.close()
    child.wait(10)
    latencies.sort()
    calls = len(latencies)
    return {"calls": calls, "seconds": elapsed, "rate": calls / elapsed,
            "p50": latencies[calls // 2], "p99": latencies[min(calls - 1, int(calls * 0.99))],
            "gateway_cpu": 0.0, "children_cpu": cpu, "load_cpu": own, "errors": 0}


def main() -> None:
    mode = sys.argv[1]
    if mode == "stdio":
        era, warm, seconds = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
        print(orjson.dumps(stdio(era, warm, seconds, sys.argv[5:])).decode(), flush=True)
        return
    port = int(sys.argv[2])
    if mode == "load":
        era, clients = sys.argv[3], int(sys.argv[4])
        warm, seconds = float(sys.argv[5]), float(sys.argv[6])
        work = load(port, era, clients, warm, seconds, [int(p) for p in sys.argv[7].split(",")])
    else:
        work = open_sessions(port, int(sys.argv[3]))
    result = uvloop.run(work) if uvloop is not None else asyncio.run(work)
    print(orjson.dumps(result).decode(), flush=True)


if __name__ == "__main__":
    main()
