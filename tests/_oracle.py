"""What must hold for *any* input bytes, on both implementations: the fuzz oracle.

``fuzz/fuzz_rpcline.py`` calls ``check`` on every input atheris makes, and
``tests/test_fuzz_corpus.py`` calls it on every file of the seed corpus and of the
regressions the fuzzer found, so a finding stays fixed without atheris installed.

For one input it checks that:
- ``parse`` never raises, for bytes, bytearray, memoryview (contiguous or strided) and
  str, and the Cython core and the twin agree field by field (``describe``: kind, every
  field with its type, the error's class, code, message and reason);
- the bytes-like forms of one input give one result, and so does its str when the bytes
  are valid UTF-8 (orjson words its errors alike for both);
- ``parse_lines`` (bytes, and str when valid UTF-8) equals ``parse`` of each line;
- ``route`` agrees with ``parse`` (kind, typed id, method, error code, and the reason of
  refusals that are not parse errors), and the core with the twin to the reason and span;
- a ``StreamParser`` fed the input in chunks cut at input-derived places (a BOM or a CRLF
  split included), with an input-derived ``max_line_bytes``, gives the per-line results,
  over-long lines becoming one refusal each, on both implementations;
- with a ``classify`` that raises on some lines (input-derived), the framing stays
  intact on both: ``classify`` gets each line once and whole, and the caller, who goes on
  after each raise, gets every other line's result in order (issue 29).

The chunking and the limit derive from a CRC of the input so that every finding replays
exactly from its bytes alone.
"""

from __future__ import annotations

import importlib
import random
import zlib
from types import ModuleType
from typing import Any

from _support import describe

BOM = b"\xef\xbb\xbf"
LINE_TOO_LONG = "line exceeds {limit} bytes"
UNLIMITED = 16 * 1024 * 1024  # the default limit: inputs here are far shorter


class Disagreement(AssertionError):
    """The implementations, or one implementation and the per-line model, differ."""


def _agree(what: str, data: bytes, got: Any, want: Any) -> None:
    if got != want:
        raise Disagreement(f"{what} for {data!r}:\n  got  {got!r}\n  want {want!r}")


def strided(data: bytes) -> memoryview:
    """``data`` as a non-contiguous memoryview (every other byte of a doubled buffer)."""
    doubled = bytearray(2 * len(data))
    doubled[::2] = data
    return memoryview(bytes(doubled))[::2]


def forms(data: bytes) -> dict[str, object]:
    return {
        "bytes": data,
        "bytearray": bytearray(data),
        "memoryview": memoryview(data),
        "strided memoryview": strided(data),
    }


def text_of(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def check_parse(data: bytes, c: ModuleType, py: ModuleType) -> dict[str, Any]:
    """parse agrees across implementations and input forms; returns the bytes result."""
    first = None
    for name, line in forms(data).items():
        got = describe(c.parse(line))
        _agree(f"parse({name}) Cython vs Python", data, got, describe(py.parse(line)))
        if first is None:
            first = got
        _agree(f"parse({name}) vs parse(bytes)", data, got, first)
    # Bytes that are not UTF-8 still make a str (lone surrogates); the twins must agree.
    surrogates = data.decode("utf-8", "surrogateescape")
    _agree("parse(str) Cython vs Python", data, describe(c.parse(surrogates)),
           describe(py.parse(surrogates)))
    text = text_of(data)
    if text is not None:
        _agree("parse(str) vs parse(bytes)", data, describe(c.parse(text)), first)
    assert first is not None
    return first


def per_line(data: bytes, parse: Any, limit: int = UNLIMITED) -> list[dict[str, Any]]:
    """The stream model: BOM skipped at the start, LF-separated lines, blank ones dropped,
    lines over ``limit`` (without their LF) refused once each, with the id their first
    ``limit`` bytes name (the twin's ``prefix_id``, which tests/test_streams.py pins down)."""
    from rpcline._core.route_py import prefix_id

    if data.startswith(BOM):
        data = data[len(BOM):]
    results = []
    for line in data.split(b"\n"):
        if len(line) > limit:
            id = prefix_id(line[:limit])
            results.append({"kind": "Refused", "id": (type(id).__name__, id),
                            "error": "ParseError", "code": -32700, "message": "Parse error",
                            "reason": ("str", LINE_TOO_LONG.format(limit=limit))})
        elif line.strip(b" \t\r"):
            results.append(describe(parse(line)))
    return results


def per_text_line(text: str, parse: Any) -> list[dict[str, Any]]:
    lines = text.removeprefix("\ufeff").split("\n")
    return [describe(parse(line)) for line in lines if line.strip(" \t\r")]


def check_parse_lines(data: bytes, c: tuple[ModuleType, ModuleType],
                      py: tuple[ModuleType, ModuleType]) -> None:
    want = per_line(data, py[0].parse)
    for (message, stream), name in ((c, "Cython"), (py, "Python")):
        got = [describe(r) for r in stream.parse_lines(data)]
        _agree(f"{name} parse_lines(bytes) vs per-line parse", data, got, want)
    text = text_of(data)
    if text is not None:
        for (message, stream), name in ((c, "Cython"), (py, "Python")):
            got = [describe(r) for r in stream.parse_lines(text)]
            _agree(f"{name} parse_lines(str) vs per-line parse", data, got,
                   per_text_line(text, py[0].parse))


def chunking(data: bytes) -> tuple[list[int], int]:
    """Cut points and a line limit, derived from the input so a finding replays exactly."""
    rng = random.Random(zlib.crc32(data))
    size = len(data)
    cuts = sorted({rng.randrange(size + 1) for _ in range(rng.randrange(6))})
    if rng.random() < 0.3:  # cut inside a leading BOM, or between every byte of a short input
        cuts = sorted(set(cuts) | ({1, 2} if size < 64 else set(range(min(size, 8)))))
    longest = max((len(line) for line in data.split(b"\n")), default=0)
    limit = rng.choice([UNLIMITED, UNLIMITED, 1, 2, 3, 16, max(longest, 1),
                        max(longest - 1, 1), longest + 1])
    return cuts, limit


def check_stream(data: bytes, c: tuple[ModuleType, ModuleType],
                 py: tuple[ModuleType, ModuleType]) -> None:
    cuts, limit = chunking(data)
    bounds = [0, *cuts, len(data)]
    pieces = [data[a:b] for a, b in zip(bounds, bounds[1:])]
    kinds = (bytes, bytearray, memoryview, strided)
    want = per_line(data, py[0].parse, limit)
    for (message, stream), name in ((c, "Cython"), (py, "Python")):
        parser = stream.StreamParser(max_line_bytes=limit)
        got = []
        for number, piece in enumerate(pieces):
            got += [describe(r) for r in parser.feed(kinds[number % len(kinds)](piece))]
        got += [describe(r) for r in parser.close()]
        _agree(f"{name} StreamParser(limit={limit}, cuts={cuts}) vs per-line parse",
               data, got, want)
        if parser.close() != []:
            raise Disagreement(f"{name}: a second close() yielded results for {data!r}")


def describe_route(route: Any) -> tuple[Any, ...]:
    """A Route as plain data: what it must share with parse, then reason and spans."""
    error = route.error
    id = route.id
    return (route.kind, type(id).__name__, id, route.method, error and error.code,
            error and type(error).__name__, error and error.reason, route.id_span,
            route.params_span, route.result_span, route.error_span)


def from_parse(result: Any) -> tuple[Any, ...]:
    """What route must say for a parse result: kind, typed id, method, code (and reason,
    unless it is a parse error: route words those itself)."""
    kind = {"Request": "request", "Notification": "notification",
            "ClientResponse": "response", "Refused": "refused"}[type(result).__name__]
    id = getattr(result, "id", None)
    error = result.error if type(result).__name__ == "Refused" else None
    return (kind, type(id).__name__, id, getattr(result, "method", None), error and error.code,
            error and error.code != -32700 and error.reason)


def check_route(data: bytes, c: ModuleType, py: ModuleType) -> None:
    """route agrees with parse, and the Cython core with the twin to the reason and span."""
    route_c = importlib.import_module(c.__name__.replace(".message_", ".route_"))
    route_py = importlib.import_module(py.__name__.replace(".message_", ".route_"))
    for line in (*forms(data).values(), data.decode("utf-8", "surrogateescape")):
        got = describe_route(route_c.route(line))
        _agree("route Cython vs Python", data, got, describe_route(route_py.route(line)))
        reason = got[6] if got[4] != -32700 else False
        _agree("route vs parse", data, (*got[:4], got[4], reason), from_parse(c.parse(line)))


def check_prefix(data: bytes, c: ModuleType, py: ModuleType) -> None:
    """What a relay reads of a broken or over-long line (``prefix_refusal``): the id and the
    spans of the members complete in its valid prefix, the core and the twin alike, and
    nothing beyond the prefix (the whole line's spans, when it is JSON, agree with route's)."""
    route_c = importlib.import_module(c.__name__.replace(".message_", ".route_"))
    route_py = importlib.import_module(py.__name__.replace(".message_", ".route_"))
    for cut in (True, False):
        got = route_c.prefix_refusal(c.ParseError("x"), data, cut)
        want = route_py.prefix_refusal(py.ParseError("x"), data, cut)
        _agree(f"prefix_refusal(cut={cut}) Cython vs Python", data,
               (*describe_route(got)[:3], *describe_route(got)[7:], got.method_span),
               (*describe_route(want)[:3], *describe_route(want)[7:], want.method_span))
        whole = route_c.route(data)
        if whole.kind != "refused" and got.id is not None:
            _agree(f"prefix_refusal(cut={cut}) vs route", data, (got.id, got.method_span),
                   (whole.id, whole.method_span))


class Raised(Exception):
    """What the raising classify of ``check_raising_stream`` raises."""


def raises_on(line: bytes, seed: int) -> bool:
    """Whether the raising classify raises on ``line``: about one line in three."""
    return zlib.crc32(line, seed) % 3 == 0


def check_raising_stream(data: bytes, c: tuple[ModuleType, ModuleType],
                         py: tuple[ModuleType, ModuleType]) -> None:
    cuts, limit = chunking(data)
    seed = zlib.crc32(data)
    bounds = [0, *cuts, len(data)]
    pieces = [data[a:b] for a, b in zip(bounds, bounds[1:])]
    all_lines = data.removeprefix(BOM).split(b"\n")
    lines = [line for line in all_lines if line.strip(b" \t\r") and len(line) <= limit]
    want = [("line", line) for line in lines if not raises_on(line, seed)]
    over_long = sum(len(line) > limit for line in all_lines)
    for (message, stream), name in ((c, "Cython"), (py, "Python")):
        given: list[bytes] = []

        def classify(line: bytes) -> tuple[str, bytes]:
            given.append(bytes(line))
            if raises_on(bytes(line), seed):
                raise Raised
            return ("line", bytes(line))

        parser = stream.StreamParser(max_line_bytes=limit, classify=classify)
        got: list[Any] = []
        for piece in pieces:
            try:
                got += parser.feed(piece)
            except Raised:
                pass
        for _ in range(len(data) + 2):  # a close that raised owes the rest to the next one
            try:
                got += parser.close()
                break
            except Raised:
                pass
        what = f"{name} StreamParser(limit={limit}, cuts={cuts}) with a raising classify"
        _agree(f"{what}: the lines classify got", data, given, lines)
        _agree(f"{what}: the results", data, [r for r in got if type(r) is tuple], want)
        _agree(f"{what}: the refusals", data, len(got) - len(want), over_long)


def check(data: bytes, c: tuple[ModuleType, ModuleType],
          py: tuple[ModuleType, ModuleType]) -> None:
    """Every property above for one input; ``c`` and ``py`` are (message, stream) modules."""
    check_parse(data, c[0], py[0])
    check_parse_lines(data, c, py)
    check_stream(data, c, py)
    check_raising_stream(data, c, py)
    check_route(data, c[0], py[0])
    check_prefix(data, c[0], py[0])
