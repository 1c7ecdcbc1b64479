"""``http.Guard``: ``check_request`` in front of an MCP Streamable HTTP app, as ASGI 3 middleware.

The Guard serves both protocol eras the way the official SDK (``mcp`` 2.3,
``StreamableHTTPSessionManager._handle_request``) routes them: only a request whose first
``MCP-Protocol-Version`` header names no handshake version is a 2026-era request, and
only such a POST is read and checked. Everything else (the 2025-era initialize handshake
and sessions, GET streams, DELETE, lifespan, websockets) reaches the app untouched, with
the caller's own ``receive``, so a Guard can never break a session it does not understand.
The Host/Origin allow-lists, when given, apply to every HTTP request, on headers only. A POST
let through carries its ``Verdict`` in ``scope["rpcline.verdict"]``: the app need not read
and classify the body again (the bridge does not).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any, Final

from rpcline._core.http import check_request
from rpcline._core.http_schema import ParamHeaders, compiled_tools, strings
from rpcline._gateway.asgi import (HANDSHAKE_PROTOCOL_VERSIONS, MAX_BODY_BYTES, TOO_LARGE,
                                   VERDICT, ASGIApp, Message, Receive, Scope, Send, is_modern,
                                   read_body, respond)

__all__ = ("HANDSHAKE_PROTOCOL_VERSIONS", "Guard", "param_headers")

# The SDK's plain-text refusals (mcp/server/transport_security.py), byte for byte.
BAD_HOST: Final = (421, b"Invalid Host header")
BAD_ORIGIN: Final = (403, b"Invalid Origin header")
_TEXT: Final = (b"content-type", b"text/plain; charset=utf-8")
_JSON: Final = (b"content-type", b"application/json")


class Guard:
    """An ASGI 3 middleware that lets a 2026-era POST reach ``app`` only when its body and
    headers agree (``http.check_request``), with the body bounded and then replayed once.

    ``tools`` maps a tool's name to its ``ParamHeaders`` or its ``inputSchema`` dict
    (compiled here; ``ValueError`` when its annotations are invalid); ``param_headers``
    builds it from a ``tools/list`` result. Assigning ``guard.tools`` later compiles the
    new mapping. ``versions`` and the allow-lists are iterables of ``str``: a bare ``str``
    (its characters) or anything else is a ``TypeError`` here, as is a ``tools`` that is
    not such a mapping, rather than every request refused later.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        tools: Mapping[str, ParamHeaders | dict[str, Any]] | None = None,
        versions: Iterable[str] = ("2026-07-28",),
        max_body_bytes: int = MAX_BODY_BYTES,
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
    ) -> None:
        if type(max_body_bytes) is not int or max_body_bytes < 0:
            raise ValueError(f"max_body_bytes must be an int >= 0, not {max_body_bytes!r}")
        self.app = app
        self.tools = tools
        self.versions = strings("versions", versions)
        self.max_body_bytes = max_body_bytes
        self.allowed_hosts = (
            None if allowed_hosts is None else strings("allowed_hosts", allowed_hosts)
        )
        self.allowed_origins = (
            None if allowed_origins is None else strings("allowed_origins", allowed_origins)
        )

    @property
    def tools(self) -> dict[str, ParamHeaders] | None:
        return self._tools

    @tools.setter
    def tools(self, tools: Mapping[str, ParamHeaders | dict[str, Any]] | None) -> None:
        self._tools = compiled_tools(tools)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan, websocket: not ours
            return await self.app(scope, receive, send)
        headers = scope["headers"]
        if self.allowed_hosts is not None or self.allowed_origins is not None:
            refusal = self._unlisted(headers)
            if refusal is not None:
                return await respond(send, *refusal, [_TEXT])
        if scope["method"] != "POST" or not is_modern(headers):
            return await self.app(scope, receive, send)
        if _declared_too_large(headers, self.max_body_bytes):
            return await respond(send, *TOO_LARGE, [_TEXT])
        body = await read_body(receive, self.max_body_bytes)
        if body is None:  # the client went away while sending
            return None
        if body is TOO_LARGE:
            return await respond(send, *TOO_LARGE, [_TEXT])
        assert isinstance(body, bytes)
        verdict = check_request(body, headers, versions=self.versions, tools=self._tools)
        if verdict.error is not None:
            assert verdict.response is not None
            return await respond(send, verdict.status, verdict.response, [_JSON])
        scope[VERDICT] = verdict
        await self.app(scope, _replay(body, receive), send)
        return None

    def _unlisted(self, headers: Iterable[tuple[bytes, bytes]]) -> tuple[int, bytes] | None:
        """The SDK's 421 or 403 for a Host or Origin not allowed (the first of each counts)."""
        host = _first(headers, b"host")
        if self.allowed_hosts is not None and not _listed(host, self.allowed_hosts):
            return BAD_HOST
        origin = _first(headers, b"origin")
        if self.allowed_origins is not None and origin and not _listed(origin, self.allowed_origins):
            return BAD_ORIGIN  # no Origin (or an empty one) is a same-origin request: it passes
        return None


def _first(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    # Starlette's Headers.get, which the SDK reads them with: the first pair, latin-1.
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None


def _listed(value: str | None, allowed: tuple[str, ...]) -> bool:
    """TransportSecurityMiddleware's match: exact, or ``base:*`` for ``base:`` and any port."""
    if not value:
        return False
    return value in allowed or any(
        pattern.endswith(":*") and value.startswith(pattern[:-1]) for pattern in allowed
    )


def _declared_too_large(headers: Iterable[tuple[bytes, bytes]], bound: int) -> bool:
    for key, value in headers:
        if key == b"content-length":
            # ASCII digits only. Leading zeros are allowed (RFC 9110), and the SDK's int()
            # reads them; past them, more than 18 digits is beyond any bound without int()
            # (which refuses more than 4300 digits, and would cost time on fewer).
            digits = value.lstrip(b"0")
            return value.isdigit() and (len(digits) > 18 or int(digits or b"0") > bound)
    return False


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` for the app: the body once, whole, then the real stream, so the app still
    learns of the client's ``http.disconnect`` (the SDK's SSE path waits for it to cancel
    the handler; a made-up disconnect would cancel every streamed answer at once)."""
    pending: list[bytes] = [body]

    async def receive_replayed() -> Message:
        if pending:
            # Handed over and forgotten: a long SSE answer does not keep the body alive here.
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        return await receive()

    return receive_replayed


def param_headers(tools: object) -> dict[str, ParamHeaders]:
    """``Guard``'s (and ``check_request``'s) ``tools=`` from a ``tools/list`` result.

    ``tools``: the result or its ``tools`` array, as decoded JSON or as the SDK's objects
    (a ``ListToolsResult``, ``Tool`` objects: anything with ``model_dump``, dumped by
    alias, or with ``name`` and ``inputSchema`` attributes). The first of tools sharing a
    name decides, as in the SDK's own look-up: when its ``x-mcp-header`` annotations are
    invalid, nothing is checked for that name (the SDK skips its checks), with a warning
    naming it. An entry without a string ``name``, or without an ``inputSchema`` (a
    FastMCP ``FunctionTool`` dumped as it is, an SDK ``Tool`` dumped without
    ``by_alias=True``), is left out with a warning too: silently, it would check nothing.
    """
    tools = _fields(tools)
    if isinstance(tools, Mapping):
        tools = tools.get("tools", ())
    compiled: dict[str, ParamHeaders] = {}
    seen: set[str] = set()
    for entry in tools:  # type: ignore[attr-defined]
        tool = _fields(entry)
        if not isinstance(tool, Mapping) or not isinstance(name := tool.get("name"), str):
            warnings.warn(f"tools/list entry without a string name skipped: {entry!r:.80}",
                          stacklevel=2)  # fmt: skip
            continue
        if name in seen:
            continue
        seen.add(name)
        schema = tool.get("inputSchema")
        if schema is None:
            warnings.warn(f"tool {name!r} has no inputSchema (a FastMCP tool: pass "
                          "tool.to_mcp_tool(); a model: model_dump(by_alias=True)); its "
                          "Mcp-Param-* headers are not checked", stacklevel=2)  # fmt: skip
            continue
        try:
            compiled[name] = ParamHeaders(schema)
        except ValueError as error:
            warnings.warn(f"tool {name!r}: {error}; its Mcp-Param-* headers are not checked",
                          stacklevel=2)  # fmt: skip
    return compiled


def _fields(item: object) -> object:
    """A tool or a result as a mapping when it is an object: a pydantic model's dump by
    alias (``inputSchema``, as on the wire; a model iterates as its fields, so this comes
    before any iteration), else its ``name`` and ``inputSchema``, or its ``tools``."""
    if isinstance(item, Mapping):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dump(by_alias=True)
    if hasattr(item, "name"):
        return {"name": item.name, "inputSchema": getattr(item, "inputSchema", None)}
    if hasattr(item, "tools"):
        return {"tools": item.tools}
    return item
