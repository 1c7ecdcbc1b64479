"""What both implementations share: the request id type, the texts and the limits.

It imports nothing of rpcline, so every module may import it and every import arrow
points down to it. The Cython core takes its constants from here, not from the twin's
modules: ``import rpcline`` on the core loads no pure-Python rule and none of ``typing``.
"""

from __future__ import annotations

import io

import orjson

TYPE_CHECKING = False  # typing's own costs an import of typing; mypy reads this name too
if TYPE_CHECKING:
    from typing import Any, Final, TypeAlias

RequestId: TypeAlias = int | str

# --- the reasons a refusal names; both implementations use these exact texts -------------
NOT_AN_OBJECT: Final = "a message must be a JSON object"
BATCHING: Final = "batching is not supported"
BAD_ID: Final = "id must be an integer or a string"
BAD_JSONRPC: Final = 'jsonrpc must be "2.0"'
BAD_METHOD: Final = "method must be a string"
BAD_PARAMS: Final = "params must be an object"
# The Cython core refuses a line that cannot start JSON (a log line) before the decoder,
# in the decoder's own words, so that both implementations give the same reason. The twin
# just decodes: in Python any check before the decoder costs valid lines more than it
# saves stray ones.
UNEXPECTED_CHARACTER: Final = (
    "unexpected character, expected a JSON value: line 1 column {column} (char {char})"
)
# How the decoder's message for text that is not UTF-8 begins (see _decode_reason).
NOT_UTF8: Final = "str is not valid UTF-8"
STRAY_REASONS: Final = tuple(UNEXPECTED_CHARACTER.format(column=i + 1, char=i) for i in range(64))

# --- building results by hand ------------------------------------------------------------
# Both implementations bind a constructor's arguments here and word a wrong type alike, so
# a hand-built result is refused with the same TypeError by the core and the twin (and
# the core's message names the class, not Cython's __init__). parse never comes here.
_MISSING: Final = object()


def bind(owner: str, names: tuple[str, ...], args: tuple[object, ...],
         kwargs: dict[str, object] | None) -> tuple[object, ...]:  # fmt: skip
    """The values of ``names`` (each required, by position or keyword) in a call to ``owner``."""
    if len(args) > len(names):
        raise TypeError(f"{owner}() takes {len(names)} argument{'s' * (len(names) != 1)} "
                        f"({len(args)} given)")
    if not kwargs and len(args) == len(names):
        return args
    values = [*args, *[_MISSING] * (len(names) - len(args))]
    for key, value in (kwargs or {}).items():
        if key not in names:
            raise TypeError(f"{owner}() got an unexpected keyword argument {key!r}")
        at = names.index(key)
        if at < len(args):
            raise TypeError(f"{owner}() got multiple values for argument {key!r}")
        values[at] = value
    missing = [repr(name) for name, value in zip(names, values) if value is _MISSING]
    if missing:
        raise TypeError(f"{owner}() missing required argument{'s' * (len(missing) > 1)}: "
                        f"{', '.join(missing)}")
    return tuple(values)


def bind_parser(
    owner: str, limit: str, default: int, classify: object,
    args: tuple[object, ...], kwargs: dict[str, object] | None,
) -> tuple[Any, Any]:  # fmt: skip
    """``(limit, classify)`` from a call of ``owner(limit=default, *, classify=...)``, the
    stream parsers' constructors, in ``bind``'s words (the core's would name __cinit__)."""
    if len(args) > 1:
        raise TypeError(f"{owner}() takes at most 1 positional argument ({len(args)} given)")
    value = args[0] if args else default
    for key, given in (kwargs or {}).items():
        if key == limit and not args:
            value = given
        elif key == limit:
            raise TypeError(f"{owner}() got multiple values for argument {key!r}")
        elif key == "classify":
            classify = given
        else:
            raise TypeError(f"{owner}() got an unexpected keyword argument {key!r}")
    return value, classify


def wrong_type(owner: str, name: str, expected: str, value: object) -> TypeError:
    """The TypeError for a constructor argument of the wrong type."""
    return TypeError(f"{owner}() argument {name!r} must be {expected}, not {type(value).__name__}")


# --- the scanner's limits and its parse errors ---------------------------------------------
# orjson's nesting limit: 1024 levels of arrays and objects, a 1025th is refused.
MAX_DEPTH: Final = 1024
# The 309 digits of 2**1024 - 2**970: the least decimal that rounds to infinity as a
# double (the tie rounds to even, which is infinity). orjson refuses infinite numbers.
INFINITY_THRESHOLD: Final = str(2**1024 - 2**970).encode()
# orjson decodes integers in this range as int, anything beyond as a float.
INT_MIN: Final = -(2**63)
INT_MAX: Final = 2**64 - 1

# Parse errors, by kind (E_* here and in the Cython enum, same order); a reason reads
# "<text> at byte <offset>".
E_NONE, E_END, E_CHARACTER, E_LITERAL, E_CONTROL, E_ESCAPE, E_SURROGATE, E_UTF8 = range(8)
E_LEADING_ZERO, E_INFINITE, E_DEPTH, E_TRAILING, E_MEMORY = range(8, 13)
ERROR_TEXTS: Final = (
    "no error",
    "unexpected end of data",
    "unexpected character",
    "invalid literal",
    "control character in a string",
    "invalid escape",
    "lone surrogate escape",
    "invalid UTF-8",
    "leading zero in a number",
    "number is infinite as a double",
    f"nesting deeper than {MAX_DEPTH} levels",
    "content after the document",
    "out of memory",
)
# A log line on stdout is refused at its first byte: those reasons are ready.
UNEXPECTED_REASONS: Final = tuple(f"unexpected character at byte {i}" for i in range(64))
STR_SURROGATE: Final = "str is not valid UTF-8: a surrogate at char {}"


def utf8_reason(line: str | bytes | bytearray | memoryview) -> str | None:
    """The reason ``route`` gives for the line's first text that is not UTF-8, or ``None``.

    ``parse`` asks for it when the decoder refuses a line as not UTF-8 (orjson's message
    names neither the offset nor the fault), so both name the same byte in the same words:
    Python's strict decoder refuses what orjson refuses (overlong forms, surrogates, code
    points above U+10FFFF) and starts its error where the scanner's check stops.
    """
    if isinstance(line, str):
        try:
            line.encode()
        except UnicodeEncodeError as error:
            return STR_SURROGATE.format(error.start)
        return None
    try:
        bytes(line).decode()
    except UnicodeDecodeError as error:
        return f"{ERROR_TEXTS[E_UTF8]} at byte {error.start}"
    return None


# A cut can leave a token unfinished where the scanner sees it as an error, not as the
# end: an escaped surrogate pair (``\\ud83d\\ude00``) is 12 bytes, a UTF-8 sequence 4.
CUT_TOLERANCE: Final = 12
VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
# The core decodes an escaped inner name up to this many bytes (none it looks for is longer).
INNER_NAME_BYTES: Final = 48

# --- routes ------------------------------------------------------------------------------
KINDS: Final = ("request", "notification", "response", "refused")
NO_ID: Final = "the line has no id member to replace"
NOT_FORWARDED: Final = "only a request or a response carries an id to replace"
REPR_FIELDS: Final = ("kind", "id", "method", "error", "id_span", "method_span",
                      "params_span", "result_span", "error_span")  # fmt: skip


def encode_id(new_id: object) -> bytes:
    """The JSON of an id to splice in: an exact int orjson reads back as int, or a str."""
    if type(new_id) is int:
        if not INT_MIN <= new_id <= INT_MAX:
            raise ValueError(f"an id must be within {INT_MIN}..{INT_MAX} to stay an integer")
    elif type(new_id) is not str:
        raise TypeError(f"a request id is an int or a str, not {type(new_id).__name__}")
    return orjson.dumps(new_id)


# --- streams -----------------------------------------------------------------------------
DEFAULT_MAX_LINE_BYTES: Final = 16 * 1024 * 1024
LINE_TOO_LONG: Final = "line exceeds {limit} bytes"
# A feed runs classify, which may call back into the parser (or let another thread in, when
# it releases the GIL); the call in flight holds the chunk and the pending line, so a second
# one is refused rather than let interleave the two calls' bytes (or, in C, read freed ones).
REENTERED: Final = ("{}() re-entered: the parser is running a call already (its classify called "
                    "back, or another thread called while classify ran); it takes one call at "
                    "a time")


def not_lines(data: object) -> str:
    """The TypeError message of parse_lines for ``data``; a file gets a pointer onwards."""
    message = f"parse_lines() takes str, bytes, bytearray or memoryview, not {type(data).__name__}"
    if isinstance(data, io.TextIOBase):
        return (f"{message}, a text stream: open the file in binary mode ('rb'), or use "
                "sys.stdin.buffer instead of sys.stdin, and pass it to read_messages()")
    if isinstance(data, io.IOBase):
        return f"{message}, a file: pass it to read_messages(), or its contents"
    return message
