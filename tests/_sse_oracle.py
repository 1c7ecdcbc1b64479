"""The SSE oracle of the fuzz target ``fuzz/fuzz_sse.py`` (and of tests/test_fuzz_corpus.py):
one stream fed whole and cut, through the Cython core and the twin, gives the same events.

An input is a 4-byte head and the stream. The head's first byte picks the limit and the
classify (``parse`` or ``route``); the next three pick where the stream is cut (each a
fraction of its length, in 255ths), so the fuzzer steers the cuts as it mutates. Every
run compares, event by event: the core fed whole, the core cut there under each of its
line-end scans, the twin fed whole and the twin cut there; and checks after every chunk
that ``buffered_bytes`` stays within the limit plus a ``data: `` prefix.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from _oracle import describe_route
from _support import describe

LIMITS = (1, 7, 8, 20, 64, 100, 1000, 16 * 1024 * 1024)
HEAD = 4


def describe_event(event: Any) -> tuple:
    """An event of either implementation as plain data (bytes for classify=bytes)."""
    message = event.message
    if type(message).__name__ == "Route":
        message = describe_route(message)
    elif message is not None and type(message) is not bytes:
        message = describe(message)
    return (type(event).__name__, event.event, event.id, event.retry, message)


def events_of(sse: ModuleType, classify: Any, stream: bytes, cuts: list[int], limit: int) -> list:
    parser, events, start = sse.EventStreamParser(limit, classify=classify), [], 0
    for cut in [*cuts, len(stream)]:
        events += parser.feed(stream[start:cut])
        start = cut
        assert parser.buffered_bytes <= limit + 6, (parser.buffered_bytes, limit, cuts)
    return [describe_event(event) for event in events + parser.close()]


def check_sse(data: bytes, c_module: ModuleType, py_module: ModuleType) -> None:
    """Fails (AssertionError) when a cut or the implementation changes the events."""
    head, stream = data[:HEAD].ljust(HEAD, b"\0"), data[HEAD:]
    limit = LIMITS[head[0] % len(LIMITS)]
    routes = head[0] >= 128
    cuts = sorted({byte * len(stream) // 255 for byte in head[1:]})
    results = {}
    for name, module in (("core", c_module), ("twin", py_module)):
        sse = importlib.import_module(module.__name__.replace("_message", "_sse"))
        router = importlib.import_module(module.__name__.replace("_message", "_route"))
        classify = router.route if routes else module.parse
        results[f"{name} whole"] = events_of(sse, classify, stream, [], limit)
        paths = getattr(sse, "LINE_END_PATHS", [None])
        before = paths[0] and sse.line_end_path()
        try:
            for path in paths:
                if path:
                    sse.use_line_end_path(path)
                results[f"{name} cut, {path or 'one scan'}"] = events_of(
                    sse, classify, stream, cuts, limit)
        finally:
            if before:
                sse.use_line_end_path(before)
    want = results["core whole"]
    for name, got in results.items():
        assert got == want, (name, limit, routes, cuts, stream[:200], got, want)
