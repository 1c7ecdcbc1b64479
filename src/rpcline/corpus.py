"""A deterministic generator of realistic MCP traffic, for benchmarks and tests.

The shapes and sizes model recorded MCP sessions: requests with ``_meta`` blocks, mostly
small results and notifications (median about 160 bytes, tens of bytes to about 5 KB),
medium tool lists and documents, a rare tail of 64 KiB to 1 MiB tool results, and about 3%
of lines a peer must refuse (log output, broken JSON, rule violations). The content itself
is made up here. The large results are binary data or text in one of ``TEXT_STYLES``
(prose, escaped, CJK, emoji, embedded JSON: the texts that cost a JSON scanner the most);
``long_results(style, count)`` gives that tail in one style, for measuring each alone.

Two eras share the stream, as at a gateway that serves both: 2025-06-18 conversations open
with ``initialize``; 2026-07-28 (stateless) ones with ``server/discover``, carry the
``_meta`` envelope (protocol version, client info and capabilities) on every request, get
results tagged with ``resultType`` as the SDK writes them (``input_required`` in place of
server requests), and receive change notifications on ``subscriptions/listen`` streams.
``iter_http`` (from ``rpcline._core.corpus_http``) gives 2026-07-28 HTTP POSTs with their
headers, each labelled with the verdict ``rpcline.http.check_request`` owes it.

The same ``(count, seed)`` gives byte-identical lines on every supported Python: only
``random.Random`` methods whose algorithm is fixed are used (``random``, ``randrange``,
``randint``, ``choice``, ``choices``, ``randbytes``), no float maths beyond exact
comparisons, and no set or hash order.

    python -m rpcline.corpus OUT.jsonl [--count N] [--seed S]
"""

from __future__ import annotations

import argparse
import base64
import random
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

import orjson

from rpcline._core.corpus_http import (
    CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    HTTP_ANSWERS,
    HTTP_TOOLS,
    VERSION_KEY,
    HttpLabel,
    HttpPost,
    iter_http,
)
from rpcline._core.corpus_http import PROTOCOL as _STATELESS_PROTOCOL
from rpcline._core.corpus_text import PROSE_WORDS, TEXT_STYLES, TextStyle, long_results, styled_text

__all__ = (
    "DEFAULT_SEED",
    "DEFAULT_SIZE",
    "HTTP_ANSWERS",
    "HTTP_TOOLS",
    "HttpLabel",
    "HttpPost",
    "TEXT_STYLES",
    "Kind",
    "TextStyle",
    "generate",
    "generate_labelled",
    "iter_http",
    "iter_labelled",
    "long_results",
    "write_jsonl",
)


def __dir__() -> list[str]:
    """The public names only, as ``dir(rpcline)`` gives them (imports stay out of sight)."""
    return sorted(__all__)

DEFAULT_SEED: Final = 827
DEFAULT_SIZE: Final = 5000

# What a line was generated as; ``parse`` agrees (tests/test_corpus.py checks it):
# request -> Request, notification -> Notification, response, error and large ->
# ClientResponse; stray (log output), malformed (not JSON) and invalid (JSON that breaks
# the rules) -> Refused.
Kind: TypeAlias = Literal[
    "request", "notification", "response", "error", "large", "stray", "malformed", "invalid"
]
Labelled: TypeAlias = tuple[Kind, bytes]
Json: TypeAlias = dict[str, Any]
RequestId: TypeAlias = int | str

# Mean distance in messages between two bad lines (3%) and two huge results (0.2%):
# spacing them by a countdown keeps both rates steady even in short corpora.
_BAD_LINE_GAP: Final = 33
_LARGE_GAP: Final = 500
_KIB: Final = 1024
_NEVER: Final = 1 << 62  # a countdown that does not end

_PROTOCOL: Final = "2025-06-18"
_SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
_SUBSCRIPTION_KEY: Final = "io.modelcontextprotocol/subscriptionId"
_CLIENTS: Final = (("orbit-cli", "0.9.3"), ("quill-ide", "1.42.0"), ("harbor-agent", "3.1.0"))
_SERVERS: Final = (("notes-server", "1.2.0"), ("warehouse-sql", "0.7.11"), ("fs-bridge", "2.0.4"))
# Some non-ASCII and newlines too: real tool output has both, and decoders treat them apart.
_WORDS: Final = PROSE_WORDS
_NOUNS: Final = _WORDS[10:30]
_Tool: TypeAlias = tuple[str, str, dict[str, str]]  # name, description, argument -> JSON type
_TOOLS: Final[tuple[_Tool, ...]] = (
    ("search_notes", "Full-text search over notes.", {"query": "string", "limit": "integer"}),
    ("run_query", "Run a read-only SQL query.", {"sql": "string", "database": "string"}),
    ("read_file", "Read a file from the workspace.", {"path": "string"}),
    ("list_directory", "List a directory.", {"path": "string", "recursive": "boolean"}),
    ("get_weather", "Current weather for a city.", {"city": "string", "units": "string"}),
    ("create_issue", "Open an issue.", {"title": "string", "body": "string", "labels": "array"}),
)
# Only lines a log would start with a capital or an indent: the cheap refusal path.
_LOG_LINES: Final = (
    'INFO:     127.0.0.1:{n} - "POST /mcp HTTP/1.1" 200 OK',
    "INFO Processing request of type CallToolRequest",
    "DEBUG:mcp.server.lowlevel:Dispatching request of type ListToolsRequest id={n}",
    "WARNING: tool run_query took {n} ms",
    "Traceback (most recent call last):",
    '  File "/srv/app/tools.py", line {n}, in handle',
    "ValueError: invalid literal for int() with base 10: 'x{n}'",
    "Server listening on stdio",
)


@dataclass
class _Stream:
    """The generator's state: the random source, counters, and the current conversation."""

    rng: random.Random
    emitted: int = 0
    next_bad_line: int = 0
    next_large: int = 0
    exchanges_left: int = 0  # in this conversation
    last_id: int = 0
    client: tuple[str, str] = _CLIENTS[0]
    server: tuple[str, str] = _SERVERS[0]
    options: int = 0  # orjson options: some stacks sort keys
    id_prefix: str | None = None  # string ids ("req-7") when set
    stateless: bool = False  # 2026-07-28: no initialize, the _meta envelope on every request
    capabilities: Json | None = None  # the client's, repeated in every stateless request
    listen_id: str | None = None  # the open subscriptions/listen stream's id
    listens: int = 0

    def encode(self, message: object) -> bytes:
        return orjson.dumps(message, option=self.options)


def generate(count: int, seed: int = DEFAULT_SEED) -> list[bytes]:
    """``count`` compact JSON lines (no newline) of MCP traffic, the same for the same seed."""
    return [line for _, line in generate_labelled(count, seed)]


def generate_labelled(count: int, seed: int = DEFAULT_SEED) -> list[Labelled]:
    """Like ``generate``, each line paired with the kind it was generated as."""
    return list(iter_labelled(count, seed))


def iter_labelled(
    count: int, seed: int = DEFAULT_SEED, bad_fraction: float | None = None
) -> Iterator[Labelled]:
    """``generate_labelled`` one line at a time: constant memory whatever ``count`` is.

    ``bad_fraction`` None keeps the corpus's own schedule (about 3%, the same lines as
    ``generate``); a number from 0 to 1 makes each line, independently, a bad one with
    that probability instead, so the share of bad lines is that number on average.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, not {count}")
    if bad_fraction is not None and not 0.0 <= bad_fraction <= 1.0:
        raise ValueError(f"bad_fraction must be from 0 to 1, not {bad_fraction}")
    s = _Stream(random.Random(seed))
    s.next_bad_line = _gap(s.rng, _BAD_LINE_GAP)
    s.next_large = _gap(s.rng, _LARGE_GAP)
    if bad_fraction is None:
        produced = 0
        while produced < count:
            lines = _next_lines(s)
            s.emitted += len(lines)
            yield from lines[: count - produced]
            produced += len(lines)
        return
    s.next_bad_line = _NEVER  # the draw below decides instead
    pending: deque[Labelled] = deque()
    for _ in range(count):
        if s.rng.random() < bad_fraction:
            yield _bad_line(s)
            continue
        if not pending:
            lines = _next_lines(s)
            s.emitted += len(lines)
            pending.extend(lines)
        yield pending.popleft()


def write_jsonl(path: str | Path, count: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> None:
    """Write ``generate(count, seed)`` to ``path``, one LF-terminated line each."""
    Path(path).write_bytes(b"".join(line + b"\n" for line in generate(count, seed)))


def _gap(rng: random.Random, mean: int) -> int:
    # Uniform around the mean: a steady rate without periodic positions.
    return rng.randint(1, 2 * mean - 1)


def _next_lines(s: _Stream) -> list[Labelled]:
    if s.emitted >= s.next_bad_line:
        s.next_bad_line = s.emitted + _gap(s.rng, _BAD_LINE_GAP)
        return [_bad_line(s)]
    if s.exchanges_left <= 0:
        return _begin_conversation(s)
    s.exchanges_left -= 1
    exchange = s.rng.choices(_EXCHANGES, _WEIGHTS)[0]
    return exchange(s)


# --- messages ------------------------------------------------------------------------------


def _request(s: _Stream, method: str, params: Json | None) -> tuple[RequestId, Labelled]:
    s.last_id += 1
    id: RequestId = s.last_id if s.id_prefix is None else f"{s.id_prefix}{s.last_id}"
    message: Json = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return id, ("request", s.encode(message))


def _notification(s: _Stream, method: str, params: Json | None = None) -> Labelled:
    message: Json = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return "notification", s.encode(message)


def _result(
    s: _Stream, id: RequestId, result: Json, kind: Kind = "response", cacheable: bool = False
) -> Labelled:
    if s.stateless:  # as the SDK's server dumps a 2026-07-28 result: tagged, _meta last
        extra = {"ttlMs": 0, "cacheScope": "private"} if cacheable else {}
        tagged = sorted({"resultType": "complete", **extra, **result}.items())
        result = {**dict(tagged), "_meta": {_SERVER_INFO_KEY: _info(s.server)}}
    return kind, s.encode({"jsonrpc": "2.0", "id": id, "result": result})


def _error(s: _Stream, id: RequestId, code: int, message: str) -> Labelled:
    error = {"code": code, "message": message}
    return "error", s.encode({"jsonrpc": "2.0", "id": id, "error": error})


def _params(s: _Stream, token: int | None = None, **members: Any) -> Json | None:
    """Request params with the ``_meta`` block clients add: a progress token, and in the
    stateless era the envelope, after the other members as the SDK's client writes it."""
    meta: Json = {} if token is None else {"progressToken": token}
    if not s.stateless:
        return {"_meta": meta, **members} if meta else members or None
    meta[VERSION_KEY] = _STATELESS_PROTOCOL
    meta[CLIENT_INFO_KEY] = _info(s.client)
    meta[CAPABILITIES_KEY] = s.capabilities
    return {**members, "_meta": meta}


def _info(name_version: tuple[str, str]) -> Json:
    return {"name": name_version[0], "version": name_version[1]}


def _text(rng: random.Random, size: int) -> str:
    # Words average about five characters with their space; slicing gives the exact length.
    return " ".join(rng.choices(_WORDS, k=size // 5 + 1))[:size]


def _content(rng: random.Random, size: int, text: bool, uri: str | None = None) -> Json:
    """A tool result's content item, or a resource's contents item when ``uri`` is given."""
    if not text:
        data = base64.b64encode(rng.randbytes(size * 3 // 4)).decode("ascii")
        if uri is None:
            return {"type": "image", "mimeType": "image/png", "data": data}
        return {"uri": uri, "mimeType": "image/png", "blob": data}
    if uri is None:
        return {"type": "text", "text": _text(rng, size)}
    return {"uri": uri, "mimeType": "text/markdown", "text": _text(rng, size)}


def _large_content(rng: random.Random, size: int, uri: str | None = None) -> Json:
    """A huge result's item: half of them binary, the text ones in any of the text styles
    (JSON as text, code, CJK, emoji and prose are what slows a scanner down, each its way)."""
    if rng.randrange(2):
        return _content(rng, size, False, uri)
    style: TextStyle = rng.choice(TEXT_STYLES)
    if uri is None:
        return {"type": "text", "text": styled_text(rng, style, size)}
    return {"uri": uri, "mimeType": "text/markdown", "text": styled_text(rng, style, size)}


def _large_size(s: _Stream) -> int:
    """64 KiB to 1 MiB, about log-uniform, when a huge result is due; else 0."""
    if s.emitted < s.next_large:
        return 0
    s.next_large = s.emitted + _gap(s.rng, _LARGE_GAP)
    base = (64 * _KIB) << s.rng.randrange(4)  # integers only: 64 KiB times 1, 2, 4 or 8
    return base + s.rng.randrange(base)


# --- exchanges: a request and what follows it ----------------------------------------------


def _begin_conversation(s: _Stream) -> list[Labelled]:
    # Each conversation has its own peers, id style, key order and _meta habits.
    rng = s.rng
    s.client, s.server = rng.choice(_CLIENTS), rng.choice(_SERVERS)
    s.options = orjson.OPT_SORT_KEYS if rng.random() < 0.3 else 0
    s.id_prefix = rng.choice(("req-", "c")) if rng.random() < 0.15 else None
    s.stateless = rng.random() < 0.4
    s.last_id = rng.choice((-1, 0))  # the first id is 0 or 1
    s.exchanges_left = rng.randint(5, 60)
    s.listen_id, s.listens = None, 0
    if s.stateless:  # no handshake: the client asks what the server serves
        s.capabilities = rng.choice(({}, {"elicitation": {}}, {"roots": {}, "sampling": {}}))
        id, request = _request(s, "server/discover", _params(s))
        served = {"tools": {"listChanged": True}, "resources": {"listChanged": True}}
        result = {"supportedVersions": [_STATELESS_PROTOCOL], "capabilities": served}
        return [request, _result(s, id, result, cacheable=True)]
    capabilities = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}
    params = {"protocolVersion": _PROTOCOL, "capabilities": capabilities}
    id, request = _request(s, "initialize", {**params, "clientInfo": _info(s.client)})
    served = {"tools": {"listChanged": True}, "resources": {"subscribe": True}, "logging": {}}
    result = {"protocolVersion": _PROTOCOL, "capabilities": served}
    response = _result(s, id, {**result, "serverInfo": _info(s.server)})
    return [request, response, _notification(s, "notifications/initialized")]


def _tools_list(s: _Stream) -> list[Labelled]:
    id, request = _request(s, "tools/list", _params(s))
    # Most servers list a few tools; a few list dozens (the medium tail, up to about 5 KB).
    count = s.rng.choice((1, 2, 3, 3, 6, 12, 20))
    tools = [_tool_schema(_TOOLS[i % len(_TOOLS)], i // len(_TOOLS)) for i in range(count)]
    return [request, _result(s, id, {"tools": tools}, cacheable=True)]


def _tool_schema(tool: _Tool, version: int) -> Json:
    name, description, arguments = tool
    properties = {arg: {"type": t, "description": f"The {arg}."} for arg, t in arguments.items()}
    schema = {"type": "object", "properties": properties, "required": list(arguments)[:1]}
    name = f"{name}_v{version + 1}" if version else name
    return {"name": name, "description": description, "inputSchema": schema}


def _tools_call(s: _Stream) -> list[Labelled]:
    rng = s.rng
    name, _, arguments = rng.choice(_TOOLS)
    values = {arg: _argument(rng, kind) for arg, kind in arguments.items()}
    token = rng.randint(1, 99999) if rng.random() < 0.25 else None
    id, request = _request(s, "tools/call", _params(s, token, name=name, arguments=values))
    lines = [request, *(() if token is None else _progress(s, token))]
    outcome = rng.random()
    if outcome < 0.04 and not s.stateless:  # the client gave up: a cancellation, no response
        cancel = {"requestId": id, "reason": "user cancelled"}
        return [*lines, _notification(s, "notifications/cancelled", cancel)]
    if outcome < 0.08:
        return [*lines, _error(s, id, -32602, f"Unknown tool: {name}x")]
    if large := _large_size(s):
        content = _large_content(rng, large)
        return [*lines, _result(s, id, {"content": [content]}, "large")]
    size = rng.choice((12, 40, 90, 90, 160, 300, 1500))
    content = _content(rng, rng.randint(size // 2, size), text=True)
    return [*lines, _result(s, id, {"content": [content], "isError": outcome > 0.97})]


def _argument(rng: random.Random, kind: str) -> Any:
    if kind == "integer":
        return rng.randint(1, 100)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return rng.choices(_NOUNS, k=rng.randint(0, 3))
    return _text(rng, rng.randint(3, 40)).strip()


def _progress(s: _Stream, token: int) -> list[Labelled]:
    total = s.rng.choice((2, 3, 4))
    return [
        _notification(s, "notifications/progress", {
            "progressToken": token, "progress": step / total, "total": 1.0,
        })
        for step in range(1, s.rng.randint(1, total) + 1)
    ]  # fmt: skip


def _resources_read(s: _Stream) -> list[Labelled]:
    rng = s.rng
    uri = f"file:///workspace/{rng.choice(_NOUNS)}/{rng.randint(1, 99)}.md"
    id, request = _request(s, "resources/read", _params(s, uri=uri))
    if large := _large_size(s):
        content = _large_content(rng, large, uri)
        return [request, _result(s, id, {"contents": [content]}, "large", cacheable=True)]
    text = rng.random() < 0.8
    content = _content(rng, rng.randint(10, 600 if text else 900), text, uri)
    return [request, _result(s, id, {"contents": [content]}, cacheable=True)]


def _resources_list(s: _Stream) -> list[Labelled]:
    id, request = _request(s, "resources/list", _params(s))
    names = s.rng.choices(_NOUNS, k=s.rng.randint(0, 4))
    resources = [{"uri": f"memo://{n}", "name": n, "mimeType": "text/plain"} for n in names]
    return [request, _result(s, id, {"resources": resources}, cacheable=True)]


def _prompts_get(s: _Stream) -> list[Labelled]:
    rng = s.rng
    language = rng.choice(("python", "rust", "go"))
    params = _params(s, name="code_review", arguments={"language": language})
    id, request = _request(s, "prompts/get", params)
    text = f"Review this {language} change. " + _text(rng, rng.randint(0, 400))
    message = {"role": "user", "content": {"type": "text", "text": text}}
    return [request, _result(s, id, {"description": "Review code", "messages": [message]})]


def _complete(s: _Stream) -> list[Labelled]:
    rng = s.rng
    argument = {"name": "language", "value": rng.choice(("p", "r", "ja"))}
    ref = {"type": "ref/prompt", "name": "code_review"}
    id, request = _request(s, "completion/complete", _params(s, ref=ref, argument=argument))
    values = rng.choices(("python", "perl", "php", "rust", "ruby", "java"), k=rng.randint(0, 3))
    completion = {"values": values, "total": len(values), "hasMore": False}
    return [request, _result(s, id, {"completion": completion})]


def _ping(s: _Stream) -> list[Labelled]:
    if s.stateless:  # 2026-07-28 removed ping; a client keeps a listen stream instead
        return _listen(s)
    id, request = _request(s, "ping", None)
    return [request, _result(s, id, {})]


_LISTEN_FILTERS: Final = (
    {"toolsListChanged": True},
    {"resourcesListChanged": True, "resourceSubscriptions": ["memo://report"]},
)


def _listen(s: _Stream) -> list[Labelled]:
    """A ``subscriptions/listen`` stream: its request and acknowledgement, some change
    notifications, and now and then the result that ends it."""
    wanted = s.rng.choice(_LISTEN_FILTERS)
    lines = _open_listen(s, wanted)
    area = "tools" if "toolsListChanged" in wanted else "resources"
    on_stream = {"_meta": {_SUBSCRIPTION_KEY: s.listen_id}}
    for _ in range(s.rng.randint(0, 2)):
        lines.append(_notification(s, f"notifications/{area}/list_changed", on_stream))
    if s.rng.random() < 0.3:  # the server ends the stream, e.g. shutting down
        lines.append(_result(s, f"listen-{s.listens}", on_stream))
        s.listen_id = None
    return lines


def _open_listen(s: _Stream, wanted: Json) -> list[Labelled]:
    s.listens += 1
    s.listen_id = f"listen-{s.listens}"  # the SDK's listen driver has ids of its own
    params = _params(s, notifications=wanted)
    message = {"jsonrpc": "2.0", "id": s.listen_id, "method": "subscriptions/listen"}
    ack = {"_meta": {_SUBSCRIPTION_KEY: s.listen_id}, "notifications": wanted}
    return [("request", s.encode({**message, "params": params})),
            _notification(s, "notifications/subscriptions/acknowledged", ack)]  # fmt: skip


def _input_required(s: _Stream) -> list[Labelled]:
    """2026-07-28's stand-in for a server request: an ``input_required`` result, then the
    client's retry carrying the response and the echoed state."""
    rng = s.rng
    arguments = {"path": ".", "recursive": False}
    first = _params(s, name="list_directory", arguments=arguments)
    id, request = _request(s, "tools/call", first)
    state = base64.b64encode(rng.randbytes(18)).decode("ascii")
    asked = {"inputRequests": {"roots": {"method": "roots/list"}}, "requestState": state,
             "resultType": "input_required", "_meta": {_SERVER_INFO_KEY: _info(s.server)}}  # fmt: skip
    roots = [{"uri": "file:///workspace", "name": "workspace"}][: rng.randint(0, 1)]
    retry = _params(s, name="list_directory", arguments=arguments,
                    inputResponses={"roots": {"roots": roots}}, requestState=state)  # fmt: skip
    retry_id, retried = _request(s, "tools/call", retry)
    listing = _content(rng, rng.randint(20, 300), text=True)
    return [request, ("response", s.encode({"jsonrpc": "2.0", "id": id, "result": asked})),
            retried, _result(s, retry_id, {"content": [listing], "isError": False})]  # fmt: skip


def _unknown_method(s: _Stream) -> list[Labelled]:
    id, request = _request(s, "tools/describe", _params(s, name="run_query"))
    return [request, _error(s, id, -32601, "Method not found")]


def _server_request(s: _Stream) -> list[Labelled]:
    if s.stateless:  # a stateless server sends no requests
        return _input_required(s)
    # The server asks the client for its roots, with string ids of its own.
    id = f"srv-{s.rng.randint(1, 999)}"
    request: Labelled = ("request", s.encode({"jsonrpc": "2.0", "id": id, "method": "roots/list"}))
    roots = [{"uri": "file:///workspace", "name": "workspace"}][: s.rng.randint(0, 1)]
    return [request, _result(s, id, {"roots": roots})]


def _server_notification(s: _Stream) -> list[Labelled]:
    rng = s.rng
    choice = rng.randrange(4)
    if choice < 2 and s.stateless:  # change notifications ride a listen stream
        opened = [] if s.listen_id is not None else _open_listen(s, _LISTEN_FILTERS[0])
        on_stream: Json = {"_meta": {_SUBSCRIPTION_KEY: s.listen_id}}
        method = "notifications/tools/list_changed"
        if choice == 1:
            method, on_stream = "notifications/resources/updated", {**on_stream, "uri": "memo://report"}
        return [*opened, _notification(s, method, on_stream)]
    if choice == 0:
        area = rng.choice(("tools", "resources", "prompts"))
        return [_notification(s, f"notifications/{area}/list_changed")]
    if choice == 1:
        return [_notification(s, "notifications/resources/updated", {"uri": "memo://report"})]
    level = rng.choice(("info", "debug", "warning"))
    log = {"level": level, "logger": "tools", "data": _text(rng, rng.randint(10, 90))}
    return [_notification(s, "notifications/message", log)]


# Weights model the recorded mix: mostly tool calls, then reads, lists and notifications.
_EXCHANGES: Final[tuple[Callable[[_Stream], list[Labelled]], ...]] = (
    _tools_call, _tools_list, _resources_read, _resources_list, _prompts_get,
    _complete, _ping, _unknown_method, _server_request, _server_notification,
)  # fmt: skip
_WEIGHTS: Final = (40, 6, 10, 4, 4, 3, 4, 1, 2, 8)


# --- lines a peer must refuse --------------------------------------------------------------


def _bad_line(s: _Stream) -> Labelled:
    choice = s.rng.randrange(10)
    if choice < 4:
        log = s.rng.choice(_LOG_LINES).format(n=s.rng.randint(10, 60000))
        return "stray", log.encode()
    if choice < 6:
        return "malformed", _malformed(s)
    return "invalid", _invalid(s, choice)


def _malformed(s: _Stream) -> bytes:
    if s.rng.random() < 0.3:  # a Python dict printed instead of encoded
        return f"{{'jsonrpc': '2.0', 'id': {s.last_id}, 'method': 'ping'}}".encode()
    call = {"jsonrpc": "2.0", "id": s.last_id, "method": "tools/call", "params": {"name": "x"}}
    text = s.encode(call).decode()
    # A write cut short; cut the text, not the bytes, so that the line stays UTF-8.
    return text[: s.rng.randint(1, len(text) - 1)].encode()


def _invalid(s: _Stream, choice: int) -> bytes:
    ping = {"jsonrpc": "2.0", "id": s.last_id, "method": "ping"}
    if choice == 6:  # ids that are not ids
        return s.encode({**ping, "id": s.rng.choice((True, 1.5, None, 2.0))})
    if choice == 7:  # a batch, which MCP removed
        return s.encode([ping, {**ping, "id": s.last_id + 1}])
    if choice == 8:
        return s.encode({**ping, "jsonrpc": s.rng.choice(("1.0", 2.0, None))})
    return s.encode({**ping, "method": "tools/call", "params": ["read_file"]})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m rpcline.corpus", description="Write generated MCP traffic as JSONL."
    )
    parser.add_argument("out", type=Path, help="the .jsonl file to write")
    parser.add_argument("--count", type=int, default=DEFAULT_SIZE, help="number of lines")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    write_jsonl(args.out, args.count, args.seed)


if __name__ == "__main__":
    main()
