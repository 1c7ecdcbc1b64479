"""What must hold for any POST, on both implementations: the fuzz oracle of ``check_request``.

``fuzz/fuzz_rpcline.py`` calls ``check_http`` on every input atheris makes and
``tests/test_fuzz_corpus.py`` on every kept input, so a finding replays without atheris.

An input is a body, then optionally ``SEPARATOR`` and header lines ``name:value`` (split at
the first colon; a line starting with ``~`` gives a ``str`` pair, decoded from UTF-8 with
surrogateescape, so lone surrogates come in too; any other line a pair of raw bytes). An
input without the separator gets the headers a conforming client would send for its body
(the mirrored routing headers and the ``Mcp-Param-*`` of ``SCHEMA``), so that mutations
of the body alone reach the deepest rungs. For one input it checks that ``check_request``:
- never raises, with and without ``tools``, for the pairs, their mapping form, and with a
  ``tools`` mapping whose ``get`` drops the caller's header list;
- answers 200, 202 or 400, with a response exactly when it refuses, that decodes;
- gives the same verdict from the Cython core and the twin (status, name, version, the
  response bytes, the error's code and reason, the route).
"""

from __future__ import annotations

import base64
import gc
from types import ModuleType
from typing import Any

import orjson
from _oracle import Disagreement, describe_route

from rpcline._core.http_schema import ParamHeaders

SEPARATOR = b"\n\x00\n"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SCHEMA = {"type": "object", "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "count": {"type": "integer", "x-mcp-header": "Count"},
    "flag": {"type": "boolean", "x-mcp-header": "Flag"},
    "deep": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Deep-Id"}}},
}}  # fmt: skip
TOOLS = {"echo": ParamHeaders(SCHEMA), "x": ParamHeaders(SCHEMA)}
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def _render(value: object) -> bytes | None:
    """A client's header text for an argument: base64 where it would not survive HTTP."""
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, int):
        return str(value).encode()
    if not isinstance(value, str):
        return None
    if value.isascii() and value.isprintable() and value == value.strip():
        return value.encode()
    return b"=?base64?" + base64.b64encode(value.encode("utf-8", "surrogatepass")) + b"?="


def mirrored(body: bytes) -> list[tuple[bytes, bytes]]:
    """The headers a conforming client sends with ``body`` (best effort on any bytes)."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return [(b"mcp-protocol-version", b"2026-07-28")]
    if not isinstance(message, dict):
        return []
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    pairs = []
    for name, value in ((b"mcp-protocol-version", meta.get(VERSION_KEY)),
                        (b"mcp-method", message.get("method")),
                        (b"mcp-name", params.get(NAME_BEARING.get(message.get("method"), "")))):  # type: ignore[arg-type]  # fmt: skip
        rendered = _render(value) if isinstance(value, str) else None
        if rendered is not None:
            pairs.append((name, rendered))
    arguments = params.get("arguments")
    if isinstance(arguments, dict):
        deep = arguments.get("deep")
        for header, value in (("region", arguments.get("region")), ("count", arguments.get("count")),
                              ("flag", arguments.get("flag")),
                              ("deep-id", deep.get("id") if isinstance(deep, dict) else None)):  # fmt: skip
            rendered = None if value is None else _render(value)
            if rendered is not None:
                pairs.append((b"mcp-param-" + header.encode(), rendered))
    return pairs


def split(data: bytes) -> tuple[bytes, list[tuple[Any, Any]]]:
    """The body and header pairs an input stands for (see the module's docstring)."""
    body, separator, block = data.partition(SEPARATOR)
    if not separator:
        return body, mirrored(body)
    pairs: list[tuple[Any, Any]] = []
    for line in block.split(b"\n"):
        name, _, value = line.partition(b":")
        if name.startswith(b"~"):
            pairs.append((name[1:].decode("utf-8", "surrogateescape"),
                          value.decode("utf-8", "surrogateescape")))  # fmt: skip
        else:
            pairs.append((name, value))
    return body, pairs


class Dropping(dict):
    """Tools whose ``get`` empties the caller's header list, freeing its values."""

    def __init__(self, headers: list) -> None:
        super().__init__(TOOLS)
        self.headers = headers

    def get(self, name: Any, default: Any = None) -> Any:
        self.headers.clear()
        gc.collect(0)
        return super().get(name, default)


def describe_verdict(verdict: Any) -> tuple[Any, ...]:
    error = verdict.error
    return (verdict.status, verdict.name, verdict.protocol_version, verdict.response,
            None if error is None else (error.code, error.reason),
            describe_route(verdict.route))  # fmt: skip


def _one(http: ModuleType, data: bytes, body: bytes, headers: Any, tools: Any) -> tuple[Any, ...]:
    try:
        verdict = http.check_request(body, headers, tools=tools)
    except Exception as error:  # a crash is a finding too, with the module that raised
        raise Disagreement(f"{http.__name__} raised {error!r} on {data!r}") from error
    described = describe_verdict(verdict)
    status, response = verdict.status, verdict.response
    if status not in (200, 202, 400) or (response is None) != (status != 400):
        raise Disagreement(f"{http.__name__}: status {status} with {response!r} on {data!r}")
    if response is not None:
        orjson.loads(response)
    return described


def check_http(data: bytes, c: ModuleType, py: ModuleType) -> None:
    """Every property above for one input; ``c`` and ``py`` are the two http modules."""
    body, pairs = split(data)
    for tools in (None, TOOLS, "dropping"):
        for form in ("pairs", "mapping"):
            got = []
            for http in (c, py):
                headers = list(pairs) if form == "pairs" else dict(pairs)
                chosen = Dropping(headers) if tools == "dropping" and form == "pairs" else (
                    TOOLS if tools == "dropping" else tools)  # fmt: skip
                got.append(_one(http, data, body, headers, chosen))
            if got[0] != got[1]:
                raise Disagreement(f"check_request({data!r}, {form}, {tools}): "
                                   f"Cython {got[0]} != Python {got[1]}")  # fmt: skip
