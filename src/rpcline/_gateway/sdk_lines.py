"""What ``rpcline.sdk``'s transports make of one line from the peer: the SDK's message, an
error answering a call in flight, or the exception the SDK would deliver; on the server's
side also the error response a refused request gets, so its caller does not wait.

Imports the MCP SDK: only ``rpcline.sdk`` imports this module, when a transport starts.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Final

import mcp_types
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage

from rpcline._core.message import InvalidRequest, Refused, error_response
from rpcline._core.route import Route, route
from rpcline._core.shared import RequestId
from rpcline._gateway.pending import Pending, request_id
from rpcline._gateway.relay_lines import CANCELLED, answered_id, failure, shape

logger = logging.getLogger("rpcline.sdk")

# Requests of one session tracked at once; past it a call is untracked (a broken answer
# then leaves it waiting, as the SDK's transport does), never refused.
MAX_IN_FLIGHT: Final = 1 << 16
_ADAPTER: Final = mcp_types.jsonrpc_message_adapter
_ANSWERS: Final = (mcp_types.JSONRPCResponse, mcp_types.JSONRPCError)


class InFlight(Pending):
    """The session's requests written to the server and not answered yet, by id.

    Ids are keyed as the SDK's dispatcher correlates them (``"7"`` is ``7``), so a line
    that would resolve a call there is known here to be that call's answer. They are the
    session's own, so their count bounds what they cost.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(limit, sys.maxsize)

    def __contains__(self, id: Any) -> bool:
        return Pending.__contains__(self, coerce_request_id(id) if type(id) is str else id)

    def add(self, id: Any) -> str | None:
        return Pending.add(self, coerce_request_id(id) if type(id) is str else id)

    def answered(self, id: Any) -> bool:
        return Pending.answered(self, coerce_request_id(id) if type(id) is str else id)


def note_sent(message: Any, in_flight: InFlight) -> None:
    """Track a request the session writes; forget one it cancels (never answered then)."""
    kind = type(message)
    if kind is mcp_types.JSONRPCRequest:
        in_flight.add(message.id)
    elif kind is mcp_types.JSONRPCNotification and message.method == CANCELLED:
        params = message.params
        if type(params) is dict:
            in_flight.answered(request_id(params.get("requestId")))


class Lines:
    """Turns the lines ``StreamParser(classify=bytes)`` yields into what the session reads.

    ``decode`` is None when the line's bytes go to the adapter as they are (UTF-8,
    strict, as the SDK decodes them by default); else ``(encoding, errors)`` as the
    SDK's ``StdioServerParameters`` say, applied line by line.
    """

    def __init__(self, in_flight: InFlight, decode: tuple[str, str] | None) -> None:
        self.in_flight = in_flight
        self.decode = decode

    def message(self, item: Any) -> SessionMessage | Exception:
        if type(item) is not bytes:  # the parser's refusal of an over-long line
            return self._over_long(item)
        try:
            text: Any = item if self.decode is None else item.decode(*self.decode)
            message = _ADAPTER.validate_json(text, by_name=False)
        except ValueError as error:  # ValidationError and UnicodeDecodeError
            return self._refused(item, error)
        if isinstance(message, _ANSWERS):
            if message.id is not None:
                self.in_flight.answered(message.id)
        return SessionMessage(message)

    def _over_long(self, refused: Refused) -> SessionMessage | Exception:
        reason = refused.error.reason
        if refused.id is not None and refused.id in self.in_flight:
            return self._fail(refused.id, reason)
        logger.error("a server line was dropped: %s", reason)
        return ValueError(f"a line from the server was dropped: {reason}")

    def _refused(self, line: bytes, error: ValueError) -> SessionMessage | Exception:
        """The SDK's adapter refused the line: fail the call it answers, if one can tell.

        The proxy's rule decides (``relay_lines.answered_id``): what can be read of the
        line (all of it, or the part before its first fault when it is no JSON: cut
        short, invalid UTF-8, garbage) names a call in flight and no ``method`` (a
        server's request, whose ids are its own, answers nothing) and says "jsonrpc".
        """
        r = route(line)
        cause = r.error.reason if r.error is not None else _first_error(error)
        id = answered_id(r, self.in_flight)
        if id is not None:
            return self._fail(id, cause)
        logger.error("a server line was refused by the SDK's adapter: %s", cause)
        return error

    def _fail(self, id: RequestId, cause: str) -> SessionMessage:
        """The -32000 error the session reads as the call's answer (as the proxy words it)."""
        logger.error("the server's answer to %r was refused (%s); failed the call", id, cause)
        self.in_flight.answered(id)
        line = failure(id, "Invalid response from the server",
                       f"the server's answer was refused: {cause}")
        return SessionMessage(_ADAPTER.validate_json(line, by_name=False))


def _first_error(error: ValueError) -> str:
    """A short cause: the adapter's first complaint, not its whole report."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            first = errors(include_url=False, include_input=False)[0]
            where = ".".join(map(str, first.get("loc", ())))
            return f"not a JSON-RPC message the SDK accepts ({where}: {first.get('msg')})"
        except Exception:  # noqa: BLE001 - a cause is best effort, never a new failure
            pass
    return f"not a JSON-RPC message the SDK accepts ({type(error).__name__})"


class ClientLines:
    """Turns the ``Route``s of a client's lines into what a server's session reads, and
    the error responses the transport writes itself (``answers``).

    Every line goes to the SDK's adapter first, as the SDK's stdio server sends it, so
    whatever the SDK accepts arrives as the same message. A line it refuses reaches the
    session as the exception the SDK's transport would put there (the session logs it
    and goes on) and, by the proxy's rule for a client's refused lines, is also answered:
    a refused answer to one of the server's requests in flight (sampling, elicitation,
    roots) fails that request with -32000 instead; a refused line shaped like a response
    is not answered (two peers answering each other's refusals can loop); anything else
    (a request or a line that is no JSON-RPC at all) gets the JSON-RPC error response,
    with its id when one can be read, ``null`` otherwise (JSON-RPC 2.0 section 5). A
    notification the SDK refuses is never answered.
    """

    def __init__(self, in_flight: InFlight) -> None:
        self.in_flight = in_flight
        self.answers: list[bytes] = []

    def message(self, r: Route) -> SessionMessage | Exception:
        line = r.line
        if line is None:  # the parser's refusal of an over-long line
            return self._refused(r, ValueError(
                f"a line from the client was dropped: {r.error.reason}"))  # type: ignore[union-attr]
        try:
            message = _ADAPTER.validate_json(line, by_name=False)
        except ValueError:
            return self._adapter_refused(r, line)  # type: ignore[arg-type]  # bytes: routed
        if isinstance(message, _ANSWERS) and message.id is not None:
            self.in_flight.answered(message.id)
        return SessionMessage(message)

    def _adapter_refused(self, r: Route, line: bytes) -> SessionMessage | Exception:
        """The SDK reads text: UTF-8 with errors replaced, CRLF as LF, the LF kept. Its
        verdict on that text is the one delivered (a line with invalid UTF-8 in a string
        is accepted there), with the exception it would raise."""
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            text = line.decode("utf-8", "replace")
        try:
            message = _ADAPTER.validate_json(text.removesuffix("\r") + "\n", by_name=False)
        except ValueError as error:
            return self._refused(r, error)
        if isinstance(message, _ANSWERS) and message.id is not None:
            self.in_flight.answered(message.id)
        return SessionMessage(message)

    def _refused(self, r: Route, error: Exception) -> SessionMessage | Exception:
        cause = r.error.reason if r.error is not None else _first_error(error)  # type: ignore[arg-type]
        id = answered_id(r, self.in_flight)
        if id is not None:
            logger.error("the client's answer to %r was refused (%s); failed the request", id, cause)
            self.in_flight.answered(id)
            line = failure(id, "Invalid response from the client",
                           f"the client's answer was refused: {cause}")
            return SessionMessage(_ADAPTER.validate_json(line, by_name=False))
        if shape(r) == "response" or r.kind == "notification":
            logger.error("a client line was refused (%s); not answered", cause)
            return error
        logger.error("a client line was refused (%s); answered", cause)
        refusal = r.error if r.error is not None else InvalidRequest(cause)
        self.answers.append(error_response(Refused(r.id, refusal)))
        return error
