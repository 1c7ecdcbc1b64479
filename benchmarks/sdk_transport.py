"""The SDK's stdio client transport against ``rpcline.sdk.stdio_client``: same server, same calls.

    python benchmarks/sdk_transport.py [--sizes 1 16 80] [--calls 2000] [--rounds 3]
                                       [--transports sdk rpcline]

Each measurement is a client process of its own (``--client``) that runs an MCP
``ClientSession`` over the transport and reports its own CPU (``getrusage``, utime +
stime: framing, validation, the session, the event loop; the server is a child and not
counted) and its peak RSS. The server (``--serve``) answers ``tools/call`` with a text
result of the asked size from bytes it built once, so it costs the client nothing.

- An answer of 1, 16 and 80 MB (the whole line; ``--sizes``, MB): client CPU for the
  call, against one copy of the answer (``bytearray(line)`` into fresh memory, a process
  of its own) and against the SDK's; beside them the SDK's ``validate_json`` alone on the
  line, which both transports pay. For 80 MB, peak RSS against the floor: a process
  holding the line as bytes and validating it with the SDK's adapter (DESIGN.md).
- ``--calls`` small ``tools/call``: client CPU per call, the least of ``--rounds``
  interleaved runs; and each reader alone on a small answer line, in this process.

Targets (issue 33, DESIGN.md): CPU at most 2x one copy of the answer, at most 0.05x the
SDK's at 16 MB and above; CPU per small call no more than the SDK's; peak RSS for 80 MB
at most the floor plus one copy of the answer. Needs ``mcp`` (the ``sdk`` extra). Linux
and macOS (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

MB = 1_000_000
TEXT_OVERHEAD = 200  # the line's bytes around the text, about
TARGETS = {"copy": 2.0, "sdk": 0.05, "small": 1.0}


# --- the server ---------------------------------------------------------------------------

def serve() -> None:
    """A minimal MCP server on stdin/stdout: initialize, tools/list, tools/call(size)."""
    import orjson

    out = sys.stdout.buffer
    answers: dict[int, tuple[bytes, bytes]] = {}  # size: the line around its id
    for line in sys.stdin.buffer:
        message = orjson.loads(line)
        if "id" not in message:
            continue
        id, method = message["id"], message.get("method")
        if method == "initialize":
            result: Any = {"protocolVersion": message["params"]["protocolVersion"],
                           "capabilities": {"tools": {}},
                           "serverInfo": {"name": "bench", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "text", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            size = message["params"]["arguments"]["size"]
            if size not in answers:
                text = (b"rpcline " * (size // 8 + 1))[:size]
                answers[size] = (b'{"jsonrpc":"2.0","id":',
                                 b',"result":{"content":[{"type":"text","text":"' + text
                                 + b'"}],"isError":false}}\n')
            head, tail = answers[size]
            out.write(head + orjson.dumps(id) + tail)
            out.flush()
            continue
        else:
            result = {}
        out.write(orjson.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + b"\n")
        out.flush()


# --- a client -----------------------------------------------------------------------------

def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss() -> int:
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def client(transport: str, size: int, calls: int) -> None:
    """One session: a warm-up, then one call answered with ``size`` bytes or ``calls``
    small calls. Prints its CPU and peak RSS as JSON."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters
    from mcp.client.stdio import stdio_client as sdk_client

    import rpcline.sdk

    params = StdioServerParameters(command=sys.executable, args=[__file__, "--serve"])

    def connect() -> Any:
        if transport == "sdk":
            return sdk_client(params)
        return rpcline.sdk.stdio_client(params, max_line_bytes=size + 64 * MB)

    async def main() -> dict[str, float]:
        async with connect() as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for _ in range(20):
                await session.call_tool("text", {"size": 100})
            started = cpu()
            if calls:
                for _ in range(calls):
                    await session.call_tool("text", {"size": 100})
                return {"cpu": (cpu() - started) / calls}
            result = await session.call_tool("text", {"size": size})
            spent = cpu() - started
            assert len(result.content[0].text) == size  # type: ignore[union-attr]
            return {"cpu": spent}

    figures = anyio.run(main)
    print(json.dumps({**figures, "rss": peak_rss()}))


def answer_line(size: int) -> bytes:
    text = (b"rpcline " * (size // 8 + 1))[:size]
    return (b'{"jsonrpc":"2.0","id":21,"result":{"content":[{"type":"text","text":"' + text
            + b'"}],"isError":false}}\n')


def floor(size: int) -> None:
    """Holding an answer line as bytes and validating it with the SDK's adapter: the CPU
    of the validation, and the peak RSS. Every transport pays both."""
    import mcp.client.session  # noqa: F401 - the client's imports, so the baselines match
    import mcp_types

    line = answer_line(size)
    started = cpu()
    mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    print(json.dumps({"cpu": cpu() - started, "rss": peak_rss()}))


def copy(size: int) -> None:
    """One copy of an answer line into fresh memory, as a transport's copy is made."""
    line = answer_line(size)
    started = time.perf_counter()
    bytearray(line)
    print(json.dumps({"cpu": time.perf_counter() - started}))


# --- the comparison -----------------------------------------------------------------------

def run(*args: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"{args}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def verdict(figure: float, target: float) -> str:
    return "met" if figure <= target else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1, 16, 80], metavar="MB")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved runs of the small calls")
    parser.add_argument("--transports", nargs="+", default=["sdk", "rpcline"],
                        choices=["sdk", "rpcline"])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--copy", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.serve:
        return serve()
    if options.client:
        return client(options.client, options.size, options.calls)
    if options.floor:
        return floor(options.size)
    if options.copy:
        return copy(options.size)

    import rpcline

    print(f"rpcline {rpcline.__version__} ({rpcline.IMPLEMENTATION}), python {sys.version.split()[0]}")
    for mb in options.sizes:
        size = mb * MB - TEXT_OVERHEAD  # the text, so that the whole line is about mb MB
        one_copy = run("--copy", "--size", str(size))["cpu"]
        base = run("--floor", "--size", str(size))
        got = {name: run("--client", name, "--size", str(size), "--calls", "0")
               for name in options.transports}
        print(f"\nan answer of {mb} MB: one copy of it {one_copy * 1e3:.2f} ms; the SDK's "
              f"validate_json alone {base['cpu']:.3f} s ({base['cpu'] / one_copy:.1f}x one copy)")
        for name, figures in got.items():
            print(f"  {name:8} client CPU {figures['cpu']:8.3f} s = {figures['cpu'] / one_copy:7.1f}x "
                  f"one copy   peak RSS {figures['rss'] / MB:7.1f} MB")
        if "rpcline" not in got:
            continue
        ours = got["rpcline"]
        ratio = ours["cpu"] / one_copy
        print(f"  target: rpcline CPU at most {TARGETS['copy']}x one copy: {ratio:.1f}x, "
              f"{verdict(ratio, TARGETS['copy'])} (beyond validate_json: "
              f"{(ours['cpu'] - base['cpu']) / one_copy:.1f}x)")
        if "sdk" in got and mb >= 16:
            ratio = ours["cpu"] / got["sdk"]["cpu"]
            print(f"  target: rpcline CPU at most {TARGETS['sdk']}x the SDK's: {ratio:.3f}x, "
                  f"{verdict(ratio, TARGETS['sdk'])}")
        if mb >= 80:
            limit = base["rss"] + mb * MB
            print(f"  target: peak RSS at most the SDK's validate_json floor "
                  f"({base['rss'] / MB:.1f} MB) + one copy ({mb} MB): "
                  f"{ours['rss'] / MB:.1f} MB, {verdict(ours['rss'], limit)}")
    if options.calls:
        small_calls(options.calls, options.rounds, options.transports)


def small_calls(calls: int, rounds: int, transports: list[str]) -> None:
    """CPU per call, the least of ``rounds`` interleaved runs (the machine's noise is
    larger than the transports' difference); then the framing alone, in this process."""
    best: dict[str, float] = {}
    for _ in range(rounds):
        for name in transports:
            spent = run("--client", name, "--calls", str(calls))["cpu"]
            best[name] = min(best.get(name, spent), spent)
    print(f"\n{calls} small tools/call, least of {rounds} interleaved runs")
    for name, spent in best.items():
        print(f"  {name:8} client CPU per call {spent * 1e6:7.1f} µs")
    if len(best) == 2:
        ratio = best["rpcline"] / best["sdk"]
        print(f"  target: rpcline per call at most {TARGETS['small']}x the SDK's: "
              f"{ratio:.3f}x, {verdict(ratio, TARGETS['small'])}")
    costs = reader_costs()
    print("  per small answer line, in this process (best of 7):")
    for part in ("framing", "reader"):
        sdk, ours = costs[f"sdk {part}"], costs[f"rpcline {part}"]
        print(f"  {part:8} sdk {sdk * 1e6:5.2f} µs   rpcline {ours * 1e6:5.2f} µs   "
              f"{ours / sdk:.3f}x" + ("" if part == "reader" else
                                      f", target at most 1x: {verdict(ours / sdk, 1.0)}"))


def reader_costs(lines: int = 20_000) -> dict[str, float]:
    """Each transport's reading of one small answer line. Framing: the SDK's (decode,
    re-split the buffer) and rpcline's (StreamParser with classify=bytes). Reader: that
    and the rest of what happens per line, validate_json and SessionMessage in both, and
    in rpcline's the note of the call in flight and of its answer (``sdk_lines``)."""
    import codecs
    import timeit

    import mcp_types
    from mcp.shared.message import SessionMessage

    import rpcline
    from rpcline._gateway.sdk_lines import InFlight, Lines

    line = (b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":'
            b'"call 1234"}],"isError":false}}\n')
    adapter = mcp_types.jsonrpc_message_adapter

    def sdk(validate: bool) -> None:  # mcp.client.stdio's reader, one line a chunk
        decoder = codecs.getincrementaldecoder("utf-8")("strict")
        buffer = ""
        for _ in range(lines):
            parts = (buffer + decoder.decode(line)).split("\n")
            buffer = parts.pop()
            if validate:
                for part in parts:  # its _parse_line: validate, wrap
                    SessionMessage(adapter.validate_json(part, by_name=False))

    def ours(validate: bool) -> None:
        parser = rpcline.StreamParser(64 * MB, classify=bytes)
        in_flight = InFlight(1 << 16)
        reader = Lines(in_flight, None)
        for _ in range(lines):
            if validate:
                in_flight.add(1)  # the writer's note of the call
                for item in parser.feed(line):
                    reader.message(item)
            else:
                parser.feed(line)

    costs = {}
    for part, validate in (("framing", False), ("reader", True)):
        for name, body in (("sdk", sdk), ("rpcline", ours)):
            costs[f"{name} {part}"] = min(
                timeit.repeat(lambda: body(validate), number=1, repeat=7)) / lines  # noqa: B023
    return costs


if __name__ == "__main__":
    main()
