"""Walking JSON that ``route`` has validated: where a value ends, an object's members.

The walk needs no checks (the bytes were validated exactly as orjson would): a value's end
is found by regular expressions over its bytes, an object's members by skipping every
value but the ones wanted. The pure-Python twin of the walk in ``http_c.pyx`` (``_ws``,
``_string_end``, ``_value_end``, ``_members``, ``_string``), shared by ``http_py``, by
tracing (``rpcline._gateway.otel_lines``) and by the bridge's reading of a child's results
(``rpcline._gateway.bridge_eras``).
"""

from __future__ import annotations

import re
from typing import Final

import orjson

Span = tuple[int, int]

# Possessive (*+, ++): a match keeps no state to backtrack into, so a value of a million
# strings is skipped in no more memory than one.
_WHITESPACE: Final = re.compile(rb"[ \t\n\r]*")
_STRING: Final = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
# Up to the next bracket: runs of other bytes, and whole strings (a bracket in one is text).
_TO_BRACKET: Final = re.compile(rb'(?:[^"\[\]{}]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+', re.DOTALL)
_SCALAR: Final = re.compile(rb"[^,}\] \t\n\r]*")


def ws(data: bytes, p: int) -> int:
    """Past the whitespace at ``p``."""
    return _WHITESPACE.match(data, p).end()  # type: ignore[union-attr]


def string_end(data: bytes, p: int) -> int:
    """The end of the validated string whose opening quote is at ``p``."""
    return _STRING.match(data, p).end()  # type: ignore[union-attr]


def value_end(data: bytes, p: int) -> int:
    """The end of the validated value at ``p``."""
    c = data[p]
    if c == 0x22:
        return string_end(data, p)
    if c != 0x7B and c != 0x5B:
        return _SCALAR.match(data, p).end()  # type: ignore[union-attr]
    depth = 0
    while True:
        p = _TO_BRACKET.match(data, p).end()  # type: ignore[union-attr]
        depth += 1 if data[p] == 0x7B or data[p] == 0x5B else -1
        p += 1
        if depth == 0:
            return p


def string(data: bytes, span: Span) -> str:
    """The str a validated string value holds (``span`` includes the quotes)."""
    start, end = span
    raw = data[start + 1:end - 1]
    if 0x5C not in raw:
        return raw.decode()
    text: str = orjson.loads(data[start:end])
    return text


def members(data: bytes, span: Span) -> list[tuple[str, Span]]:
    """Each member of the validated object at ``span``: its name, decoded, and its value's
    span, in order (duplicates kept: a JSON parser keeps the last, as ``dict`` of them)."""
    found: list[tuple[str, Span]] = []
    p = ws(data, span[0] + 1)
    if data[p] == 0x7D:
        return found
    while True:
        name_end = string_end(data, p)
        name = string(data, (p, name_end))
        start = ws(data, ws(data, name_end) + 1)  # past the colon
        p = value_end(data, start)
        found.append((name, (start, p)))
        p = ws(data, p)
        if data[p] == 0x7D:
            return found
        p = ws(data, p + 1)
