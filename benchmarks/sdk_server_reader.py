"""How the SDK's stdio *server* reads its stdin (``mcp.server.stdio.stdio_server``), against
a bytes reader built on ``StreamParser``: is there a quadratic framing or a hang to remove?

    python benchmarks/sdk_server_reader.py [--sizes 16 80] [--messages 20000]

Each run is a process of its own reading a file of requests to its end: one line of
``--sizes`` MB (a tools/call with a large argument), or ``--messages`` small ones. Both
readers validate with the SDK's adapter and hand each ``SessionMessage`` over a memory
stream to a consumer task, as the SDK's server does. Reported: CPU (getrusage) and peak
RSS. The SDK's reader is ``TextIOWrapper.readline`` in a worker thread, one thread hop per
line; rpcline's reads 64 KiB chunks in a worker thread and frames them with
``StreamParser(classify=bytes)``. Needs ``mcp``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import tempfile

MB = 1_000_000


def request(id: int, text: bytes) -> bytes:
    return (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
            b'"arguments":{"text":"%s"}}}\n' % (id, text))


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def sdk(path: str) -> int:
    import anyio
    from mcp.server.stdio import stdio_server

    stdin = anyio.wrap_file(io.TextIOWrapper(open(path, "rb"), encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(io.TextIOWrapper(open(os.devnull, "wb"), encoding="utf-8"))
    count = 0
    async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):
        async for _ in read:
            count += 1
        await write.aclose()
    return count


async def rpcline_reader(path: str) -> int:
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    import rpcline

    validate = mcp_types.jsonrpc_message_adapter.validate_json
    file = anyio.wrap_file(open(path, "rb", buffering=0))
    parser = rpcline.StreamParser(1 << 30, classify=bytes)
    send, receive = anyio.create_memory_object_stream[SessionMessage](0)
    count = 0

    async def consume() -> None:
        nonlocal count
        async for _ in receive:
            count += 1

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(consume)
        async with send:
            while chunk := await file.read(1 << 16):
                for line in parser.feed(chunk):
                    await send.send(SessionMessage(validate(line, by_name=False)))
    return count


def measure(reader: str, path: str) -> None:
    import anyio
    import mcp.server.stdio  # noqa: F401 - imported before the clock starts, both readers'
    import mcp.shared.message  # noqa: F401

    import rpcline  # noqa: F401

    started = cpu()
    count = anyio.run(sdk if reader == "sdk" else rpcline_reader, path)
    scale = 1 if sys.platform == "darwin" else 1024
    print(json.dumps({"count": count, "cpu": cpu() - started,
                      "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale}))


def run(reader: str, path: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--measure", reader, path],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[16, 80], metavar="MB")
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.measure:
        return measure(*options.measure)
    # Written in pieces: a child inherits its parent's peak RSS (Linux keeps it across exec).
    inputs = [(f"one line of {mb} MB", mb, 1) for mb in options.sizes]
    inputs.append((f"{options.messages} small requests", 0, options.messages))
    with tempfile.TemporaryDirectory() as folder:
        for label, mb, count in inputs:
            path = os.path.join(folder, "input.jsonl")
            with open(path, "wb") as file:
                if mb:
                    head, tail = request(1, b"TEXT").split(b"TEXT")
                    file.write(head)
                    for _ in range(mb):
                        file.write(b"x" * MB)
                    file.write(tail)
                else:
                    file.writelines(request(i, b"call %d" % i) for i in range(count))
            print(label)
            for reader in ("sdk", "rpcline"):
                got = run(reader, path)
                assert got["count"] == count, got
                per = f"   {got['cpu'] / count * 1e6:6.1f} µs a message" if count > 1 else ""
                print(f"  {reader:8} CPU {got['cpu']:7.3f} s   peak RSS {got['rss'] / MB:7.1f} MB{per}")


if __name__ == "__main__":
    main()
