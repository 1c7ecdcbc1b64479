"""The validating scanner shared by ``route`` and ``http.check_request``: the twin of ``scan_c``.

It validates a line as ``orjson.loads`` would (syntax, UTF-8, escapes and surrogate pairs,
control characters, numbers that are infinite as doubles, 1024 levels of nesting, JSON
whitespace only) and notes where the members the rules read are: the top-level ``id``,
``jsonrpc``, ``method``, ``params``, ``result`` and ``error`` (escaped names and duplicates
included, the last one winning) and, when ``_Scan.nested`` is set, ``name``, ``uri``,
``arguments`` and ``_meta`` inside ``params`` and the protocol version and client
capabilities inside ``_meta``. A parse error names which rule of JSON broke and the byte.

The Cython core mirrors this module function by function, with the same error offsets and
reasons; here string bodies are skipped with regular expressions and a few decoded values
come from orjson, which is exact and keeps the module short.
"""

from __future__ import annotations

import re
from typing import Final, TypeAlias

import orjson

from rpcline._core.shared import (
    CAPABILITIES_KEY,
    CUT_TOLERANCE,
    E_CHARACTER,
    E_CONTROL,
    E_DEPTH,
    E_END,
    E_ESCAPE,
    E_INFINITE,
    E_LEADING_ZERO,
    E_LITERAL,
    E_SURROGATE,
    E_TRAILING,
    E_UTF8,
    ERROR_TEXTS,
    INFINITY_THRESHOLD,
    INT_MAX,
    INT_MIN,
    MAX_DEPTH,
    UNEXPECTED_REASONS,
    VERSION_KEY,
    RequestId,
)

Span: TypeAlias = tuple[int, int]

# What the scanner reads: a line, or a stream's pending bytearray (prefix_id).
Data: TypeAlias = bytes | bytearray


# What a scanned value was (V_*), and what a string needs to be decoded (S_*).
V_STRING, V_INTEGER, V_FLOAT, V_LITERAL, V_OBJECT, V_ARRAY = range(6)
S_ESCAPED, S_NON_ASCII = 1, 2
# The top-level member names the rules read.
M_OTHER, M_ID, M_JSONRPC, M_METHOD, M_PARAMS, M_RESULT, M_ERROR = range(7)
_MEMBERS: Final = {
    b"id": M_ID,
    b"jsonrpc": M_JSONRPC,
    b"method": M_METHOD,
    b"params": M_PARAMS,
    b"result": M_RESULT,
    b"error": M_ERROR,
}

# The members inside params that rpcline.http reads (``_Scan.nested``): name, uri,
# arguments and _meta in params (level 0), the protocol version and client capabilities
# in _meta (level 1). The core's Inner enum.
N_NAME, N_URI, N_ARGUMENTS, N_META, N_VERSION, N_CAPABILITIES, N_COUNT, N_OTHER = range(8)
_INNER: Final = (
    {b"name": N_NAME, b"uri": N_URI, b"arguments": N_ARGUMENTS, b"_meta": N_META},
    {VERSION_KEY.encode(): N_VERSION, CAPABILITIES_KEY.encode(): N_CAPABILITIES},
)
# What the scanner notes of an inner member: its span, value kind and string flags.
Noted: TypeAlias = tuple[Span, int, int]

_WHITESPACE: Final = re.compile(rb"[ \t\n\r]*")
# A string body up to the next quote, backslash, control character or non-ASCII byte.
_PLAIN: Final = re.compile(rb'[^"\\\x00-\x1f\x80-\xff]*')
_NON_ASCII: Final = re.compile(rb"[\x80-\xff]+")
_DIGITS: Final = re.compile(rb"[0-9]*")
_DIGIT_BYTES: Final = frozenset(b"0123456789")
_HEX4: Final = re.compile(rb"[0-9a-fA-F]{4}")
_SIMPLE_ESCAPES: Final = frozenset(b'"\\/bfnrt')
_UNESCAPED: Final = {ord("b"): 8, ord("f"): 12, ord("n"): 10, ord("r"): 13, ord("t"): 9}
_LITERALS: Final = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}
_NUMBER_START: Final = frozenset(b"-0123456789")


class _Invalid(Exception):
    """Not what orjson accepts: the error kind and the byte offset it was found at."""

    def __init__(self, error: int, at: int) -> None:
        self.error, self.at = error, at


class _Scan:
    """The scanner's notes on one line: the top-level members the rules read."""

    __slots__ = (
        "data", "value", "string_flags", "top", "id", "id_value", "id_flags", "ids",
        "all_ids", "jsonrpc", "jsonrpc_value", "jsonrpc_flags", "method", "method_value",
        "method_flags", "params", "params_value", "result", "error_member", "nested",
        "inner",
    )  # fmt: skip

    def __init__(self, data: Data) -> None:
        self.data = data
        self.value = self.string_flags = self.top = 0
        self.id: Span | None = None
        self.id_value = self.id_flags = self.ids = 0
        self.all_ids: list[Span] = []
        self.jsonrpc: Span | None = None
        self.jsonrpc_value = self.jsonrpc_flags = 0
        self.method: Span | None = None
        self.method_value = self.method_flags = 0
        self.params: Span | None = None
        self.params_value = 0
        self.result: Span | None = None
        self.error_member: Span | None = None
        self.nested = False
        self.inner: list[Noted | None] = [None] * N_COUNT


# --- the scanner ------------------------------------------------------------------------


def _at(data: Data, p: int) -> int:
    """The byte at ``p``, or 0 at the end: the NUL the core finds after every line."""
    return data[p] if p < len(data) else 0


def _unexpected(s: _Scan, p: int) -> _Invalid:
    """The error for a byte that cannot be where it is: the end, or an unexpected one."""
    return _Invalid(E_END if p == len(s.data) else E_CHARACTER, p)


def _whitespace(data: Data, p: int) -> int:
    return _WHITESPACE.match(data, p).end()  # type: ignore[union-attr]


def _plain(data: Data, p: int) -> int:
    """The first byte from ``p`` that stops a string body, or the end."""
    return _PLAIN.match(data, p).end()  # type: ignore[union-attr]


def _escape(data: Data, p: int) -> int:
    """Validate the escape at ``p`` (a backslash); the byte after it."""
    end = len(data)
    if end - p < 2:
        raise _Invalid(E_END, end)
    c = data[p + 1]
    if c in _SIMPLE_ESCAPES:
        return p + 2
    if c != ord("u"):
        raise _Invalid(E_ESCAPE, p)
    if end - p < 6:
        raise _Invalid(E_END, end)
    if not _HEX4.match(data, p + 2):
        raise _Invalid(E_ESCAPE, p)
    unit = int(data[p + 2 : p + 6], 16)
    if 0xDC00 <= unit <= 0xDFFF:
        raise _Invalid(E_SURROGATE, p)
    if 0xD800 <= unit <= 0xDBFF:  # a high surrogate must be followed by a low one
        if end - p < 12 or data[p + 6 : p + 8] != b"\\u" or not _HEX4.match(data, p + 8):
            raise _Invalid(E_SURROGATE, p)
        if not 0xDC00 <= int(data[p + 8 : p + 12], 16) <= 0xDFFF:
            raise _Invalid(E_SURROGATE, p)
        return p + 12
    return p + 6


def _utf8(data: Data, p: int) -> int:
    """Validate the run of non-ASCII bytes at ``p``; the byte after it.

    Python's strict decoder refuses what orjson refuses (overlong forms, surrogates, code
    points above U+10FFFF) and reports the first bad sequence where the core's
    sequence-by-sequence check stops.
    """
    run = _NON_ASCII.match(data, p)
    assert run is not None
    try:
        run.group().decode()
    except UnicodeDecodeError as error:
        raise _Invalid(E_UTF8, p + error.start) from None
    return run.end()


def _string(s: _Scan, p: int) -> int:
    """Validate the string whose opening quote is at ``p``; the byte after it.

    Sets ``s.string_flags`` (escaped, non-ASCII) for the decoding of top-level values.
    """
    p = _plain(s.data, p + 1)
    if _at(s.data, p) == 0x22:
        s.string_flags = 0
        return p + 1
    return _string_rest(s, p)


def _string_rest(s: _Scan, p: int) -> int:
    """The rest of a string from its first escape, control character or non-ASCII byte."""
    data = s.data
    end = len(data)
    flags = 0
    while True:
        if p == end:
            raise _Invalid(E_END, end)
        c = data[p]
        if c == 0x22:
            s.string_flags = flags
            return p + 1
        if c == 0x5C:
            flags |= S_ESCAPED
            p = _escape(data, p)
        elif c < 0x20:
            raise _Invalid(E_CONTROL, p)
        else:
            flags |= S_NON_ASCII
            p = _utf8(data, p)
        p = _plain(data, p)


def _number(s: _Scan, p: int) -> int:
    """Validate the number at ``p``; the byte after it. Sets ``s.value``.

    orjson refuses a number that is infinite as a double: only one with an exponent, or
    with 309 or more integer digits, can be, and only that one is looked at closely.
    """
    data = s.data
    start = p
    if _at(data, p) == ord("-"):
        p += 1
    integer = p
    if _at(data, p) == ord("0"):
        p += 1
        if _at(data, p) in _DIGIT_BYTES:
            raise _Invalid(E_LEADING_ZERO, p - 1)
    elif _at(data, p) in _DIGIT_BYTES:
        p = _digits(data, p + 1)
    else:
        raise _unexpected(s, p)
    integer_end = fraction = fraction_end = p
    exponent = -1
    s.value = V_INTEGER
    if _at(data, p) == ord("."):
        s.value = V_FLOAT
        fraction = p = p + 1
        if _at(data, p) not in _DIGIT_BYTES:
            raise _unexpected(s, p)
        p = fraction_end = _digits(data, p)
    if _at(data, p) in b"eE":
        s.value = V_FLOAT
        p += 1
        if _at(data, p) in b"+-":
            p += 1
        exponent = p
        if _at(data, p) not in _DIGIT_BYTES:
            raise _unexpected(s, p)
        p = _digits(data, p)
    if (exponent >= 0 or integer_end - integer >= len(INFINITY_THRESHOLD)) and _is_infinite(
        data, integer, integer_end, fraction, fraction_end, exponent, p
    ):
        raise _Invalid(E_INFINITE, start)
    return p


def _digits(data: Data, p: int) -> int:
    return _DIGITS.match(data, p).end()  # type: ignore[union-attr]


def _is_infinite(
    data: Data,
    integer: int,
    integer_end: int,
    fraction: int,
    fraction_end: int,
    exponent: int,
    end: int,
) -> bool:
    """Whether the number rounds to infinity as a double (decided exactly, on digits).

    With its significant digits written 0.d1d2d3... x 10**power (d1 not zero), it does
    when power > 309, never when power < 309, and at 309 when d1d2d3... is at least the
    threshold's digits.
    """
    written = 0
    if exponent >= 0:
        # Saturates as the core's does: no line holds 10**15 digits to offset it.
        written = min(int(data[exponent:end]), 10**15)
        if data[exponent - 1] == ord("-"):
            written = -written
    if data[integer] != ord("0"):
        digits = data[integer:integer_end] + data[fraction:fraction_end]
        power = integer_end - integer
    else:
        digits = data[fraction:fraction_end].lstrip(b"0")
        if not digits:
            return False  # zero
        power = -(fraction_end - fraction - len(digits))
    power += written
    if power != len(INFINITY_THRESHOLD):
        return power > len(INFINITY_THRESHOLD)
    return digits[: len(INFINITY_THRESHOLD)].ljust(len(INFINITY_THRESHOLD), b"0") >= (
        INFINITY_THRESHOLD
    )


def _literal(s: _Scan, p: int) -> int:
    word = _LITERALS[s.data[p]]
    if not s.data.startswith(word, p):
        raise _Invalid(E_LITERAL, p)
    s.value = V_LITERAL
    return p + len(word)


def _value(s: _Scan, p: int, depth: int) -> int:
    """Validate the value at ``p`` inside ``depth`` containers; the byte after it.

    Sets ``s.value`` (and ``s.string_flags`` for a string).
    """
    c = _at(s.data, p)
    if c == 0x22:
        s.value = V_STRING
        return _string(s, p)
    if c == 0x7B or c == 0x5B:
        p = _container(s, p, depth)
        s.value = V_OBJECT if c == 0x7B else V_ARRAY
        return p
    if c in _NUMBER_START:
        return _number(s, p)
    if c in _LITERALS:
        return _literal(s, p)
    raise _unexpected(s, p)


def _name(s: _Scan, p: int) -> int:
    """Validate a member name and its colon at ``p``; the value's first byte."""
    data = s.data
    if _at(data, p) != 0x22:
        raise _unexpected(s, p)
    p = _whitespace(data, _string(s, p))
    if _at(data, p) != 0x3A:
        raise _unexpected(s, p)
    return _whitespace(data, p + 1)


def _container(s: _Scan, p: int, outer: int) -> int:
    """Validate the object or array at ``p`` inside ``outer`` containers, without recursion.

    A flag per level says whether it is an object; a level beyond MAX_DEPTH is refused
    where its bracket opens, as orjson does. Each turn of the outer loop reads one value;
    the inner loop reads what may follow a value: a comma (and the next member's name)
    or closing brackets.
    """
    data = s.data
    objects: list[bool] = []
    while True:  # p at a value, whitespace skipped
        c = _at(data, p)
        if c == 0x22:
            p = _string(s, p)
        elif c == 0x7B or c == 0x5B:
            if outer + len(objects) + 1 > MAX_DEPTH:
                raise _Invalid(E_DEPTH, p)
            p = _whitespace(data, p + 1)
            objects.append(c == 0x7B)
            if _at(data, p) != (0x7D if c == 0x7B else 0x5D):
                if c == 0x7B:
                    p = _name(s, p)
                continue
            p += 1  # an empty container: closed at once
            objects.pop()
            if not objects:
                return p
        elif c in _NUMBER_START:
            p = _number(s, p)
        elif c in _LITERALS:
            p = _literal(s, p)
        else:
            raise _unexpected(s, p)
        while True:  # p after a value
            p = _whitespace(data, p)
            c = _at(data, p)
            if c == 0x2C:
                p = _whitespace(data, p + 1)
                if objects[-1]:
                    p = _name(s, p)
                break
            if c != (0x7D if objects[-1] else 0x5D):
                raise _unexpected(s, p)
            p += 1
            objects.pop()
            if not objects:
                return p


def _member(s: _Scan, name: int, name_end: int) -> int:
    """Which member a top-level name (between its quotes) is; escapes are decoded."""
    raw = bytes(s.data[name:name_end])  # bytes: a stream's bytearray may be scanned
    if s.string_flags & S_ESCAPED:
        raw = orjson.loads(s.data[name - 1 : name_end + 1]).encode("utf-8", "surrogatepass")
    return _MEMBERS.get(raw, M_OTHER)


def _members(s: _Scan, p: int) -> int:
    """Validate the top-level object at ``p``, noting the members the rules read."""
    data = s.data
    p = _whitespace(data, p + 1)
    if _at(data, p) == 0x7D:
        return p + 1
    while True:
        if _at(data, p) != 0x22:
            raise _unexpected(s, p)
        name = p + 1
        p = _string(s, p)
        member = _member(s, name, p - 1)
        p = _whitespace(data, p)
        if _at(data, p) != 0x3A:
            raise _unexpected(s, p)
        start = _whitespace(data, p + 1)
        p = _params(s, start) if member == M_PARAMS and s.nested else _value(s, start, 1)
        if member != M_OTHER:
            _note(s, member, start, p)
        p = _whitespace(data, p)
        if _at(data, p) == 0x2C:
            p = _whitespace(data, p + 1)
        elif _at(data, p) == 0x7D:
            return p + 1
        else:
            raise _unexpected(s, p)


def _note(s: _Scan, member: int, start: int, end: int) -> None:
    """Record a top-level member's value (the last one wins)."""
    span = (start, end)
    if member == M_ID:
        s.id, s.id_value, s.id_flags = span, s.value, s.string_flags
        s.ids += 1
        s.all_ids.append(span)
    elif member == M_JSONRPC:
        s.jsonrpc, s.jsonrpc_value, s.jsonrpc_flags = span, s.value, s.string_flags
    elif member == M_METHOD:
        s.method, s.method_value, s.method_flags = span, s.value, s.string_flags
    elif member == M_PARAMS:
        s.params, s.params_value = span, s.value
    elif member == M_RESULT:
        s.result = span
    else:
        s.error_member = span


# --- the members inside params that rpcline.http reads (_Scan.nested) ---------------------


def _inner(s: _Scan, name: int, name_end: int, level: int) -> int:
    """Which member of params (level 0) or of its _meta (level 1) a name is."""
    raw = bytes(s.data[name:name_end])
    if s.string_flags & S_ESCAPED:
        raw = orjson.loads(s.data[name - 1 : name_end + 1]).encode("utf-8", "surrogatepass")
    return _INNER[level].get(raw, N_OTHER)


def _forget(s: _Scan, first: int) -> None:
    """Forget the inner members from ``first`` on: a later params or _meta replaces them."""
    s.inner[first:] = [None] * (N_COUNT - first)


def _params(s: _Scan, p: int) -> int:
    """Validate a top-level params value, noting its inner members when it is an object."""
    _forget(s, N_NAME)
    if _at(s.data, p) != 0x7B:
        return _value(s, p, 1)
    p = _inner_members(s, p, 2, 0)
    s.value = V_OBJECT
    return p


def _inner_members(s: _Scan, p: int, depth: int, level: int) -> int:
    """Validate the object at ``p``, ``depth`` levels deep with itself (params 2, its
    _meta 3), noting the members of params (level 0) or of _meta (level 1); the last one
    wins. The same error offsets as ``_container`` reading the object."""
    data = s.data
    p = _whitespace(data, p + 1)
    if _at(data, p) == 0x7D:
        return p + 1
    while True:
        if _at(data, p) != 0x22:
            raise _unexpected(s, p)
        name = p + 1
        p = _string(s, p)
        inner = _inner(s, name, p - 1, level)
        p = _whitespace(data, p)
        if _at(data, p) != 0x3A:
            raise _unexpected(s, p)
        start = _whitespace(data, p + 1)
        if inner == N_META:
            _forget(s, N_VERSION)
            if _at(data, start) == 0x7B:
                p = _inner_members(s, start, depth + 1, 1)
                s.value = V_OBJECT
            else:
                p = _value(s, start, depth)
        else:
            p = _value(s, start, depth)
        if inner != N_OTHER:
            s.inner[inner] = ((start, p), s.value, s.string_flags)
        p = _whitespace(data, p)
        if _at(data, p) == 0x2C:
            p = _whitespace(data, p + 1)
        elif _at(data, p) == 0x7D:
            return p + 1
        else:
            raise _unexpected(s, p)


def _scan(s: _Scan) -> None:
    """Validate the whole line as orjson would; ``_Invalid`` when it is not."""
    data = s.data
    p = _whitespace(data, 0)
    if s.nested:
        _forget(s, N_NAME)
    if _at(data, p) == 0x7B:
        s.top = V_OBJECT
        p = _members(s, p)
    else:
        p = _value(s, p, 0)
        s.top = s.value
    p = _whitespace(data, p)
    if p != len(data):
        raise _Invalid(E_TRAILING, p)


# --- decoding the three members the rules read -------------------------------------------


def _text(s: _Scan, span: Span, flags: int) -> str:
    """The str a validated top-level string value holds (span includes the quotes)."""
    start, end = span
    if not flags & S_ESCAPED:
        return s.data[start + 1 : end - 1].decode()
    text: str = orjson.loads(s.data[start:end])  # validated: exact, escapes and all
    return text


def _integer(s: _Scan, span: Span) -> int | None:
    """The int orjson decodes a top-level integer to, or None where it decodes a float."""
    start, end = span
    if end - start > 21:
        return None
    value = int(s.data[start:end])
    return value if INT_MIN <= value <= INT_MAX else None


def _is_version_2_0(s: _Scan) -> bool:
    if s.jsonrpc_value != V_STRING:
        return False
    assert s.jsonrpc is not None
    if s.jsonrpc_flags == 0:
        start, end = s.jsonrpc
        return s.data[start:end] == b'"2.0"'
    return _text(s, s.jsonrpc, s.jsonrpc_flags) == "2.0"


def _reason(error: _Invalid) -> str:
    if error.error == E_CHARACTER and error.at < len(UNEXPECTED_REASONS):
        return UNEXPECTED_REASONS[error.at]
    return f"{ERROR_TEXTS[error.error]} at byte {error.at}"


def prefix_id(data: Data) -> RequestId | None:
    """The id of a line cut short at a limit: its last complete top-level ``id`` member.

    ``data`` is the line's first bytes. They must open an object that is valid up to the
    cut (an error within ``CUT_TOLERANCE`` bytes of it counts as the cut: an unfinished
    escape or UTF-8 sequence); the id is read as step 4 of the card reads it, an integer
    orjson keeps as ``int`` or a string, and an integer running into the cut is not read,
    as it might go on. A duplicate ``id`` beyond the cut is not seen.
    """
    return _prefix_scan(data, True)[0]


def _prefix_scan(data: Data, cut: bool) -> tuple[RequestId | None, _Scan]:
    """The id of a line known by its first bytes, and the scanner's notes on the members
    complete in its valid prefix (none when nothing is trusted).

    ``cut``: ``data`` is cut at a limit, and must be JSON up to the cut (``prefix_id``).
    Otherwise ``data`` is a whole line that is not JSON: the members before its first
    error count (a value that is not JSON, text after the document, a line cut short).
    """
    s = _Scan(data)
    p = _whitespace(data, 0)
    if _at(data, p) != 0x7B:
        return None, s
    try:
        p = _members(s, p)
    except _Invalid as error:
        trusted = not cut or error.at >= len(data) - CUT_TOLERANCE
    else:
        trusted = not cut or _whitespace(data, p) == len(data)
    if not trusted:
        return None, _Scan(data)  # not JSON before the cut: nothing to trust
    if s.id is not None and s.id_value == V_INTEGER and s.id[1] == len(data):
        s.id = None  # an integer running into the end might go on
    if s.id is None:
        return None, s
    if s.id_value == V_STRING:
        return _text(s, s.id, s.id_flags), s
    if s.id_value == V_INTEGER:
        return _integer(s, s.id), s
    return None, s
