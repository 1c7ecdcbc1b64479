"""What the relay decides about one line: its shape, whether it answers a pending
request, the answers the relay makes up, and how lines are written."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Container, Iterable
from typing import Any, Final

import orjson

from rpcline._core.message import ParseError
from rpcline._core.route import Route, prefix_refusal
from rpcline._core.shared import BAD_ID, RequestId
from rpcline._gateway.pending import request_id

CONNECTION_CLOSED: Final = -32000  # the code the MCP SDKs use for a closed connection
CANCELLED: Final = "notifications/cancelled"
# A line longer than this is written on its own, its LF after it, not joined with others:
# a join would be one more copy of it in memory (the transport's buffer holds another).
JOIN_BYTES: Final = 64 * 1024


def failure(id: RequestId | None, message: str, cause: str) -> bytes:
    """The -32000 error line (no LF) that answers a request nobody else will answer."""
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "error": {
        "code": CONNECTION_CLOSED, "message": message, "data": cause}})


def write_lines(write: Callable[[bytes], Any], lines: Iterable[bytes]) -> None:
    """Write the lines, each with its LF: short ones joined into one write, long ones alone."""
    if type(lines) is list and len(lines) == 1 and len(lines[0]) <= JOIN_BYTES:
        write(lines[0] + b"\n")  # a sequential caller's one line: no batch to build
        return
    batch: list[bytes] = []
    for line in lines:
        if len(line) <= JOIN_BYTES:
            batch.append(line)
            continue
        if batch:
            write(_joined(batch))
            batch = []
        write(line)
        write(b"\n")
    if batch:
        write(_joined(batch))


def _joined(lines: list[bytes]) -> bytes:
    lines.append(b"")
    return b"\n".join(lines)


def shape(r: Route) -> str:
    """What a refused line looks like: ``"response"``, ``"request"`` or ``"unknown"``.

    An over-long line (no ``line``) is known by the members complete within the limit.
    """
    if r.method_span is None and (r.result_span is not None or r.error_span is not None):
        return "response"
    if r.line is None and r.method_span is None:
        return "unknown"
    return "request"


def readable(r: Route) -> Route:
    """A refused line as far as it can be read: a line that is not JSON (a NaN, invalid
    UTF-8, a raw control character, text after the document, a line cut short) is read up
    to its first error, as an over-long line is read up to the limit (``prefix_refusal``)."""
    if r.line is None or r.id is not None or type(r.error) is not ParseError:
        return r
    line = r.line if type(r.line) is bytes else str(r.line).encode("utf-8", "surrogatepass")
    return prefix_refusal(r.error, line, False)


def answered_id(r: Route, pending: Container[Any]) -> RequestId | None:
    """The pending request a refused line is the answer to, one that cannot be delivered.

    What can be read of it (``readable``) names a pending id and no ``method``, and it is
    over-long (only the part within the limit was read), or shaped like a response, or not
    JSON at all, and meant as JSON-RPC (it says ``"jsonrpc"``, whatever the version). A
    line with no ``"jsonrpc"`` at all, such as ``{"id":1,"error":"disk 91% full"}``, is no
    JSON-RPC message (a log record on stdout, say): failing the call for it would give
    the caller two answers when the real one comes. A request (its ``method`` read) never
    answers anything, whatever its id: both peers number their requests from 0.
    """
    read = readable(r)
    if read.id not in pending or read.method_span is not None:
        return None
    if r.line is None:
        return read.id
    if read is r and shape(r) != "response":
        return None
    line = r.line if type(r.line) is bytes else str(r.line).encode("utf-8", "surrogatepass")
    return read.id if b'"jsonrpc"' in line else None


def is_null_id_error(r: Route) -> bool:
    """A server's answer to an unreadable request: ``"id": null`` and an ``error``."""
    if r.id_span is None or r.error_span is None or r.method_span is not None:
        return False
    if r.result_span is not None or r.error is None or r.error.reason != BAD_ID:
        return False
    line = r.line if type(r.line) is bytes else str(r.line).encode()
    start, end = r.id_span
    return line[start:end] == b"null"


def cancelled_id(r: Route) -> Any:
    """The request a ``notifications/cancelled`` names (an exact int or str), or None.

    The SDKs never answer a request once it is cancelled, so the relay must stop waiting
    for it. Rare, so decoding the whole line costs nothing that matters.
    """
    if type(r.line) is not bytes:
        return None
    with contextlib.suppress(orjson.JSONDecodeError):
        params = orjson.loads(r.line).get("params")
        if type(params) is dict:
            return request_id(params.get("requestId"))
    return None
