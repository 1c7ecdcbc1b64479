"""Leak check, run in a subprocess of its own by tests/test_leaks.py (multidict's idiom):

    python tests/isolated/leaks.py {cython|python} [COUNT]

For every result kind (and the stream APIs), after a warm-up that fills the freelists and
the caches, COUNT calls (default 1,000,000) must leave the interpreter as they found it:
- ``sys.getallocatedblocks()`` (every live object and pymalloc block) grows by at most
  BLOCKS, and the gc-tracked objects by at most GC_OBJECTS;
- resident memory (/proc/self/statm) grows by at most RSS_BYTES: this sees what the Python
  allocator does not, such as a buffer the decoder leaks with plain malloc;
- then, with tracemalloc on, COUNT // 10 more calls grow traced memory by at most
  TRACED_BYTES.
A leak of one small object per call would be a million blocks and tens of megabytes, so
the bounds are far from noise and far from any leak. One JSON line per kind is printed;
the exit status is 1 when any bound is exceeded.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
import tracemalloc
from importlib import import_module

BLOCKS = 1_000
GC_OBJECTS = 100
RSS_BYTES = 2 * 1024 * 1024
TRACED_BYTES = 64 * 1024
WARM_UP = 20_000

R = b'{"jsonrpc":"2.0",'
LINES = {
    "request": R + b'"id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2.5,"s"]}}}',
    "request, text id, str input": (R + b'"id":"k-1","method":"m","params":{"a":{}}}').decode(),
    "request, bytearray input": bytearray(R + b'"id":7,"method":"m","params":{"a":[]}}'),
    "request, memoryview input": memoryview(R + b'"id":7,"method":"m","params":{"a":[]}}'),
    "request, strided memoryview": memoryview(bytes(
        b for c in R + b'"id":7,"method":"m"}' for b in (c, 0)))[::2],
    "notification": R + b'"method":"notifications/progress","params":{"progress":0.5}}',
    "notification, params not an object": R + b'"method":"n","params":[1,2]}',
    "response": R + b'"id":7,"result":{"content":[{"type":"text","text":"hello"}]}}',
    "response, error": R + b'"id":"x","error":{"code":-32601,"message":"no such method"}}',
    "refused: batch": b'[{"jsonrpc":"2.0","id":1,"method":"m"}]',
    "refused: not an object": b'"just a string"',
    "refused: bad id": R + b'"id":1.5,"method":"m"}',
    "refused: bad jsonrpc": b'{"jsonrpc":"1.0","id":7,"method":"m"}',
    "refused: bad method": R + b'"id":7,"method":["m"]}',
    "refused: bad params": R + b'"id":7,"method":"m","params":null}',
    "refused: parse error (decoder exception)": R + b'"id":7,"method":"m",',
    "refused: invalid UTF-8 (decoder exception)": R + b'"id":7,"method":"\xff"}',
    "refused: parse error, str input": (R + b'"id":7,"method":}').decode(),
    "refused: stray line": b"INFO 2026-01-01 listening on :8080",
    "refused: stray line past 64 columns": b" " * 70 + b"WARN slow",
}


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def blocks() -> int:
    gc.collect()
    return sys.getallocatedblocks()


def measure(name: str, run, count: int) -> dict:
    run(WARM_UP)
    gc.collect()
    before = (blocks(), len(gc.get_objects()), rss())
    started = time.perf_counter()
    run(count)
    seconds = time.perf_counter() - started
    after = (blocks(), len(gc.get_objects()), rss())
    tracemalloc.start()
    try:
        run(1_000)
        gc.collect()
        traced_before = tracemalloc.get_traced_memory()[0]
        run(count // 10)
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0] - traced_before
    finally:
        tracemalloc.stop()
    growth = {"blocks": after[0] - before[0], "gc_objects": after[1] - before[1],
              "rss_bytes": after[2] - before[2], "traced_bytes": traced}
    bounds = {"blocks": BLOCKS, "gc_objects": GC_OBJECTS, "rss_bytes": RSS_BYTES,
              "traced_bytes": TRACED_BYTES}
    over = [k for k, bound in bounds.items() if growth[k] > bound]
    return {"kind": name, "count": count, "seconds": round(seconds, 2), **growth, "over": over}


def parse_runs(message):
    parse = message.parse

    def runner(line):
        def run(n):
            for _ in range(n):
                parse(line)
        return run

    def type_error(n):  # the one exception parse raises: its traceback must not pile up
        for _ in range(n):
            try:
                parse(5)
            except TypeError:
                pass

    def error_response(n):
        refusal = parse(R + b'"id":"abc","method":5}')
        reply = message.error_response
        for _ in range(n):
            reply(refusal)

    runs = {name: runner(line) for name, line in LINES.items()}
    runs["TypeError for a non-text input"] = type_error
    runs["error_response of a refusal"] = error_response
    return runs


def stream_runs(stream):
    lines = [line if isinstance(line, bytes) else bytes(line, "utf-8")
             if isinstance(line, str) else bytes(line) for line in LINES.values()]
    buffer = b"\r\n \n".join(lines) + b"\n"
    per_buffer = len(lines)

    def parse_lines(n):  # n lines, in whole buffers
        for _ in range(max(n // per_buffer, 1)):
            stream.parse_lines(buffer)

    def one_parser(n):  # n lines through one parser, chunks cut mid-line
        parser = stream.StreamParser()
        chunks = [buffer[i:i + 97] for i in range(0, len(buffer), 97)]
        for _ in range(max(n // per_buffer, 1)):
            for chunk in chunks:
                parser.feed(chunk)
        parser.close()

    def parser_per_stream(n):  # n short streams: a parser made, fed, closed, dropped
        maker = stream.StreamParser
        line = lines[0]
        for _ in range(n // 10):
            parser = maker()
            parser.feed(b"\xef\xbb")
            parser.feed(b"\xbf" + line[:20])
            parser.feed(line[20:] + b"\n")
            parser.close()

    def over_long(n):  # n over-long lines, each refused and discarded
        parser = stream.StreamParser(max_line_bytes=64)
        chunk = b"x" * 100 + b"\n" + b"y" * 30
        for _ in range(n):
            parser.feed(chunk)
        parser.close()

    large = b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"' + b"a" * 20_000 + b'"}}\n'

    def large_lines(n):  # n/100 lines past the view size: in place, and grown across chunks
        for _ in range(n // 100):
            stream.parse_lines(large)
            parser = stream.StreamParser()
            for start in range(0, len(large), 8192):
                parser.feed(large[start:start + 8192])
            parser.close()

    return {"parse_lines": parse_lines, "StreamParser, one for all lines": one_parser,
            "StreamParser, one per short stream (n/10)": parser_per_stream,
            "StreamParser, over-long lines": over_long,
            "large lines, parse_lines and chunked (n/100)": large_lines}


def sse_runs(sse, parse, route):
    lines = [line for line in LINES.values() if isinstance(line, bytes)]
    stream = b"".join(b"id: 1\r\nevent: message\r\ndata: " + line + b"\r\n\r\n" for line in lines)
    chunks = [stream[i:i + 97] for i in range(0, len(stream), 97)]
    per_stream = len(lines)

    def one_parser(classify):  # n events through one parser, chunks cut mid-line
        def run(n):
            parser = sse.EventStreamParser(classify=classify)
            for _ in range(max(n // per_stream, 1)):
                for chunk in chunks:
                    parser.feed(chunk)
            parser.close()
        return run

    def parser_per_stream(n):  # n short streams: BOM split, a priming event, one message
        for _ in range(n // 10):
            parser = sse.EventStreamParser()
            parser.feed(b"\xef\xbb")
            parser.feed(b"\xbfid: 0\r\ndata: \r\n\r\ndata: " + lines[0][:20])
            parser.feed(lines[0][20:] + b"\r\n\r")
            parser.close()

    def over_long(n):  # n over-long events, refused and skipped, in a chunk and across two
        parser = sse.EventStreamParser(max_event_bytes=64)
        chunk = b'data: {"id":1,"result":"' + b"x" * 100 + b'"}\n\ndata: {"id":2,"r":"' + b"y" * 60
        for _ in range(n):
            parser.feed(chunk)
            parser.feed(b'"}\n\n')
        parser.close()

    large = b'data: {"jsonrpc":"2.0","id":1,"result":{"t":"' + b"a" * 20_000 + b'"}}\n\n'

    def large_events(n):  # n/100 events past the view size: in place, and grown across chunks
        for _ in range(n // 100):
            parser = sse.EventStreamParser()
            parser.feed(large)
            for start in range(0, len(large), 8192):
                parser.feed(large[start:start + 8192])
            parser.close()

    return {"EventStreamParser, parse": one_parser(parse),
            "EventStreamParser, route": one_parser(route),
            "EventStreamParser, one per short stream (n/10)": parser_per_stream,
            "EventStreamParser, over-long events": over_long,
            "EventStreamParser, large events (n/100)": large_events}


def main() -> int:
    implementation = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    suffix = {"cython": "c", "python": "py"}[implementation]
    message = import_module(f"rpcline._core.message_{suffix}")
    stream = import_module(f"rpcline._core.stream_{suffix}")
    sse = import_module(f"rpcline._core.sse_{suffix}")
    route = import_module(f"rpcline._core.route_{suffix}").route
    failed = False
    runs = {**parse_runs(message), **stream_runs(stream), **sse_runs(sse, message.parse, route)}
    for name, run in runs.items():
        report = measure(name, run, count)
        failed |= bool(report["over"])
        print(json.dumps(report), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
