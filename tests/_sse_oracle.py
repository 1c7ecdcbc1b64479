"""The SSE oracle of the fuzz target ``fuzz/fuzz_sse.py`` (and of tests/test_fuzz_corpus.py):
one stream fed whole and cut, through the Cython core and the twin, gives the same events.

An input is a 4-byte head and the stream. The head's first byte picks the limit and the
classify (``parse`` or ``route``); the next three pick where the stream is cut (each a
fraction of its length, in 255ths), so the fuzzer steers the cuts as it mutates. Every
run compares, event by event: the core fed whole, the core cut there under each of its
line-end scans, the twin fed whole and the twin cut there; and checks after every chunk
that ``buffered_bytes`` stays within the limit plus a ``data: `` prefix. Then, with a
``classify`` that raises on about one event in three (by the data's CRC), cut the same
way, on both: ``classify`` gets each event's data once, as the plain run gave it, and the
caller, who goes on after each raise, gets every other event in order (issue 29).
"""

from __future__ import annotations

import importlib
import zlib
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
        sse = importlib.import_module(module.__name__.replace(".message_", ".sse_"))
        router = importlib.import_module(module.__name__.replace(".message_", ".route_"))
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


class Raised(Exception):
    """What the raising classify of ``check_raising_sse`` raises."""


def raises_on(data: bytes, seed: int) -> bool:
    return zlib.crc32(data, seed) % 3 == 0


def raising_events(sse: ModuleType, stream: bytes, cuts: list[int], limit: int,
                   seed: int) -> tuple[list, list]:
    """The events of a caller that goes on after each raise, and what classify got."""
    given: list[bytes] = []

    def classify(data: bytes) -> bytes:
        given.append(bytes(data))
        if raises_on(bytes(data), seed):
            raise Raised
        return bytes(data)

    parser, events, start = sse.EventStreamParser(limit, classify=classify), [], 0
    for cut in [*cuts, len(stream)]:
        try:
            events += parser.feed(stream[start:cut])
        except Raised:
            pass
        start = cut
    for _ in range(len(stream) + 2):  # a close that raised owes the rest to the next one
        try:
            events += parser.close()
            break
        except Raised:
            pass
    return [describe_event(event) for event in events], given


def check_raising_sse(data: bytes, c_module: ModuleType, py_module: ModuleType) -> None:
    """Fails (AssertionError) when a raising classify splices, loses or repeats events."""
    head, stream = data[:HEAD].ljust(HEAD, b"\0"), data[HEAD:]
    limit = LIMITS[head[0] % len(LIMITS)]
    cuts = sorted({byte * len(stream) // 255 for byte in head[1:]})
    seed = zlib.crc32(data)
    for module in (c_module, py_module):
        sse = importlib.import_module(module.__name__.replace(".message_", ".sse_"))
        plain = events_of(sse, bytes, stream, cuts, limit)
        data_given = [event[4] for event in plain if type(event[4]) is bytes]
        want = [event for event in plain if not (type(event[4]) is bytes
                                                  and raises_on(event[4], seed))]
        for where in ([], cuts):
            got, given = raising_events(sse, stream, where, limit, seed)
            assert given == data_given, (module.__name__, where, stream[:200], given)
            assert got == want, (module.__name__, where, limit, stream[:200], got, want)
