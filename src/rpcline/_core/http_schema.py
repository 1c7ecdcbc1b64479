"""``x-mcp-header`` annotations and header values: what ``http.ParamHeaders`` compiles.

Shared by both implementations of ``rpcline.http``: a tool's schema is compiled once, when
the gateway learns the tool, so none of this is on the per-request path except
``ParamHeaders.mismatch``, which runs only for ``tools/call`` requests naming a tool that
annotates its arguments. The rules are those of the official MCP SDK (``mcp`` 2.3,
``mcp/shared/inbound.py``): the same schema walk, the same reasons for refusing a schema,
the same base64 sentinel and the same value comparison, so that a gateway and an SDK
server behind it never disagree on a request.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any, Final

__all__ = (
    "ABSENT",
    "UNRENDERABLE",
    "ParamHeaders",
    "compiled",
    "compiled_tools",
    "decode_header_value",
    "invalid_reason",
    "json_text",
    "strings",
    "tools_mapping",
)

X_MCP_HEADER: Final = "x-mcp-header"
PARAM_PREFIX: Final = "Mcp-Param-"

# What a value reader returns besides a decoded scalar: nothing at the path (a missing
# member, a null, or a step through a non-object), or a container (no header rendering).
ABSENT: Final = None
UNRENDERABLE: Final = object()

_B64_SENTINEL: Final = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$")
# RFC 9110 section 5.6.2: the characters of a field name.
_TOKEN: Final = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
# "number" is not allowed: float to str is not portable across implementations.
_PRIMITIVE_TYPES: Final = frozenset({"string", "integer", "boolean"})
# Header values that compare numerically with an integral argument; scientific notation
# never does (the SDKs agree on this gate).
_CANONICAL_DECIMAL: Final = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")
# JSON Schema 2020-12 applicators by the shape of their value. Only ``properties`` keeps
# the chain of property names that an argument path follows; the others break it. Data
# keywords (default, const, enum, examples) and $ref are never entered.
_SUBSCHEMA_SINGLE: Final = frozenset({
    "items", "contains", "unevaluatedItems", "additionalProperties", "propertyNames",
    "unevaluatedProperties", "not", "if", "then", "else", "contentSchema",
})  # fmt: skip
_SUBSCHEMA_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SUBSCHEMA_MAP: Final = frozenset(
    {"patternProperties", "dependentSchemas", "$defs", "definitions"}
)

Path = tuple[str, ...]


def _positions(root: Any) -> Iterator[tuple[Path | None, dict[str, Any]]]:
    """Every schema position with its ``properties`` path (None once off that chain).

    The SDK's walk, in the SDK's order (an explicit stack, last pushed first), so that the
    first failing annotation, and so the reason, is the same one.
    """
    stack: list[tuple[Path | None, Any]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    stack.append(((*path, name) if path is not None else None, sub))
            elif keyword in _SUBSCHEMA_SINGLE:
                stack.append((None, value))
            elif keyword in _SUBSCHEMA_LIST and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif keyword in _SUBSCHEMA_MAP and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())


def invalid_reason(input_schema: Any) -> str | None:
    """Why the schema's annotations are invalid (the SDK's words), or None when they are not."""
    seen: dict[str, str] = {}
    for path, schema in _positions(input_schema):
        if X_MCP_HEADER not in schema:
            continue
        if not path:
            return (f"{X_MCP_HEADER} found at a schema position not reachable via a pure "
                    "`properties` chain")  # fmt: skip
        where = ".".join(path)
        header = schema[X_MCP_HEADER]
        if not isinstance(header, str):  # before any repr: a huge int has none
            return f"property {where!r}: {X_MCP_HEADER} must be a string, not {type(header).__name__}"
        if not _TOKEN.fullmatch(header):
            return f"property {where!r}: {X_MCP_HEADER} {header!r} is not an RFC 9110 token"
        kind = schema.get("type")
        if not isinstance(kind, str):
            return (f"property {where!r}: {X_MCP_HEADER} is only permitted on integer/string/"
                    f"boolean properties (the type keyword is {type(kind).__name__}, not a string)")  # fmt: skip
        if kind not in _PRIMITIVE_TYPES:
            return (f"property {where!r}: {X_MCP_HEADER} is only permitted on integer/string/"
                    f"boolean properties (got {kind!r})")  # fmt: skip
        lower = header.lower()
        if lower in seen:
            return f"{X_MCP_HEADER} {header!r} on property {where!r} duplicates property {seen[lower]!r}"
        seen[lower] = where
    return None


def decode_header_value(value: str) -> str | None:
    """The value, or the text of its ``=?base64?…?=`` form; None when that form is corrupt.

    Corrupt means bad or non-canonical base64 (the encoder only emits canonical form), or
    bytes that are not UTF-8: such a header never matches a body value by accident.
    A payload holding any non-ASCII character (a raw byte as latin-1 text, a lone
    surrogate of a ``str`` header) is corrupt too: ``b64decode`` raises a plain
    ``ValueError`` for it, which the SDK lets escape (a 500); here it never matches.
    """
    match = _B64_SENTINEL.fullmatch(value)
    if match is None:
        return value
    payload = match.group("payload")
    if not payload.isascii():
        return None
    try:
        decoded = base64.b64decode(payload, validate=True)
    except binascii.Error:
        return None
    if base64.b64encode(decoded).decode("ascii") != payload:
        return None
    try:
        return decoded.decode("utf-8")
    except UnicodeDecodeError:
        return None


def json_text(text: str) -> str:
    """``text`` as a JSON response can carry it: each lone surrogate as its ``\\udcxx``
    escape text. A ``str`` header decoded with surrogateescape holds one for every byte
    that is not UTF-8, and orjson (like UTF-8 itself) has no encoding for it."""
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode()
    return text


def _render(value: object) -> str | None:
    """The header text a client sends for an argument, or None where there is none."""
    if value is True or value is False:
        return "true" if value else "false"
    if not isinstance(value, str | int | float):
        return None
    try:
        return str(value)
    except ValueError:  # an int beyond the int-to-str digit limit
        return None


def _matches(integer: bool, value: object, rendered: str, decoded: str) -> bool:
    """Whether a decoded header agrees with the argument (the SDK's comparison).

    An integer-typed property with an integral argument compares numerically with a
    canonical decimal header, exactly (42 equals 42.0, beyond 2**53 too); everything else
    compares as text with the client's rendering.
    """
    if (
        integer
        and type(value) is not bool
        and (
            isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        )
        and _CANONICAL_DECIMAL.fullmatch(decoded) is not None
    ):
        whole, _, fraction = decoded.partition(".")
        if fraction.strip("0"):
            return False
        try:
            return int(whole) == int(value)  # type: ignore[arg-type]
        except ValueError:  # beyond the int-from-str digit limit
            return False
    return decoded == rendered


class ParamHeaders:
    """A tool's ``x-mcp-header`` annotations, compiled once from its ``inputSchema``.

    ``ValueError`` (with the SDK's reason) for a schema whose annotations are invalid: the
    SDK ignores such a tool's headers and conforming clients drop the tool, so a gateway
    learns it when it registers the tool rather than on each call.
    """

    __slots__ = ("entries",)

    def __init__(self, input_schema: Any) -> None:
        reason = invalid_reason(input_schema)
        if reason is not None:
            raise ValueError(reason)
        # (path, header name as sent, its lowercase key, compared as an integer, the
        # dotted path for reasons): computed once per tool, not per call.
        self.entries: tuple[tuple[Path, str, str, bool, str], ...] = tuple(
            (
                path,
                PARAM_PREFIX + token,
                (PARAM_PREFIX + token).lower(),
                schema.get("type") == "integer",
                ".".join(path),
            )
            for path, schema in _positions(input_schema)
            if path and isinstance(token := schema.get(X_MCP_HEADER), str)
        )

    def __repr__(self) -> str:
        return f"ParamHeaders({[(entry[1], entry[4]) for entry in self.entries]!r})"

    @property
    def headers(self) -> dict[str, Path]:
        """Each ``Mcp-Param-*`` header name with the argument path it mirrors."""
        return {entry[1]: entry[0] for entry in self.entries}

    def mismatch(
        self,
        value_at: Callable[[Path], object],
        headers: dict[str, str],
        duplicated: Collection[str],
    ) -> str | None:
        """Why the ``Mcp-Param-*`` headers disagree with the arguments, or None.

        ``value_at(path)`` is the decoded argument at a path (``ABSENT`` or
        ``UNRENDERABLE`` otherwise); ``headers`` maps lowercase names to their first value;
        ``duplicated`` holds the lowercase names sent more than once.
        """
        for path, name, key, integer, argument in self.entries:
            raw = headers.get(key)
            if raw is not None and key in duplicated:
                return f"{name} header appears more than once"
            value = value_at(path)
            if value is ABSENT:
                if raw is not None:
                    return f"{name} header is present but the request body's {argument!r} argument is absent"
                continue
            rendered = None if value is UNRENDERABLE else _render(value)
            if rendered is None:
                if raw is not None:
                    return f"{name} header does not match the request body's {argument!r} argument"
                continue
            if raw is None:
                return f"{name} header is missing but the request body's {argument!r} argument is present"
            decoded = decode_header_value(raw)
            if decoded is None:
                return f"{name} header carries a malformed base64 sentinel value"
            if not _matches(integer, value, rendered, decoded):
                return f"{name} header does not match the request body's {argument!r} argument"
        return None


# --- the arguments of check_request and Guard, checked where they are given -------------
# A str is an iterable of its characters and a wrong tools spec used to fail only at the
# first call of its tool: either made every request a refusal, or a 500 (issue 29, item 12).


def strings(what: str, values: Iterable[str]) -> tuple[str, ...]:
    """``values`` as a tuple of str; ``TypeError`` for a bare string or a non-str item."""
    if isinstance(values, str | bytes | bytearray | memoryview):
        raise TypeError(f"{what} must be an iterable of str such as ('2026-07-28',), not a "
                        f"{type(values).__name__}")  # fmt: skip
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(f"{what} must be an iterable of str, not {type(values).__name__}") from None
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{what} must hold str items, not {type(item).__name__}")
    return items


def tools_mapping(tools: object) -> None:
    """``TypeError`` unless ``tools`` is None or a mapping (a list of tools, say)."""
    if tools is not None and not isinstance(tools, Mapping):
        raise TypeError("tools must be a mapping of tool names to ParamHeaders or inputSchema "
                        "dicts (http.param_headers compiles a tools/list result), not "
                        f"{type(tools).__name__}")  # fmt: skip


def compiled(name: object, spec: object) -> ParamHeaders:
    """A ``tools`` value as ``ParamHeaders``: itself, or its inputSchema dict compiled
    (``ValueError`` when its annotations are invalid); ``TypeError`` for anything else."""
    if isinstance(spec, ParamHeaders):
        return spec
    if isinstance(spec, dict):
        return ParamHeaders(spec)
    raise TypeError(f"tools[{name!r}] must be a ParamHeaders or an inputSchema dict, not "
                    f"{type(spec).__name__}")  # fmt: skip


def compiled_tools(
    tools: Mapping[str, ParamHeaders | dict[str, Any]] | None,
) -> dict[str, ParamHeaders] | None:
    """A whole ``tools`` mapping compiled and checked, as ``Guard`` takes it."""
    tools_mapping(tools)
    if tools is None:
        return None
    result: dict[str, ParamHeaders] = {}
    for name, spec in tools.items():
        if not isinstance(name, str):
            raise TypeError(f"tools must be keyed by tool names (str), not {type(name).__name__}")
        result[name] = compiled(name, spec)
    return result
