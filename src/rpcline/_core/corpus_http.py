"""Generated MCP 2026-07-28 Streamable HTTP POSTs, each labelled with the answer it is owed.

``rpcline.corpus.iter_http`` (re-exported there) yields ``(label, body, headers)``: the
body bytes and the raw ASGI header pairs (lowercase names, in the order the SDK's httpx
client sends them, with host, accept, content-type, user-agent and content-length), as a
gateway sees them. The label names the verdict ``rpcline.http.check_request(body,
headers, tools=...)`` must give, by ``HTTP_ANSWERS``: ``ok`` (200), ``notification``
(202), and the refusals by their code. ``tools`` is ``{name: http.ParamHeaders(schema)
for name, schema in HTTP_TOOLS.items()}``.

The traffic is a gateway's: clients that probe ``server/discover`` then call tools, read
resources, get prompts and open ``subscriptions/listen`` streams, every request with the
``_meta`` envelope and the mirrored ``MCP-Protocol-Version`` / ``Mcp-Method`` /
``Mcp-Name`` / ``Mcp-Param-*`` headers (non-ASCII values in the ``=?base64?...?=`` form),
about 90% of it to dispatch or acknowledge. The rest is what a guard exists for: headers
that disagree with the body (missing, another tool, a prefix of the value, trailing
whitespace, a NUL, raw UTF-8, a huge value, a corrupt sentinel), routing headers sent
twice, versions the server does not serve, a missing or defective ``_meta``, posted
responses and batches, bodies that are not JSON. Deterministic as ``rpcline.corpus`` is.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias

import orjson

__all__ = ("HTTP_ANSWERS", "HTTP_TOOLS", "HttpLabel", "HttpPost", "iter_http")

PROTOCOL: Final = "2026-07-28"
VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"

HttpLabel: TypeAlias = Literal[
    "ok", "notification", "mismatch", "unsupported", "invalid-params", "invalid-request",
    "parse-error",
]  # fmt: skip
Pairs: TypeAlias = list[tuple[bytes, bytes]]
HttpPost: TypeAlias = tuple[HttpLabel, bytes, Pairs]
Json: TypeAlias = dict[str, Any]

# The HTTP status and JSON-RPC error code check_request answers each label with.
HTTP_ANSWERS: Final[Mapping[HttpLabel, tuple[int, int | None]]] = MappingProxyType({
    "ok": (200, None),
    "notification": (202, None),
    "mismatch": (400, -32020),  # HeaderMismatch
    "unsupported": (400, -32022),  # UnsupportedProtocolVersion
    "invalid-params": (400, -32602),
    "invalid-request": (400, -32600),
    "parse-error": (400, -32700),
})  # fmt: skip
# Per mille of POSTs: about 90% to dispatch or acknowledge, as at a real gateway.
_SHARES: Final[tuple[tuple[HttpLabel, int], ...]] = (
    ("ok", 850), ("notification", 50), ("mismatch", 55), ("unsupported", 10),
    ("invalid-params", 15), ("invalid-request", 12), ("parse-error", 8),
)  # fmt: skip


def _string(header: str | None = None, **extra: Any) -> Json:
    schema: Json = {"type": "string", **extra}
    return schema if header is None else {**schema, "x-mcp-header": header}


def _scalar(kind: str, header: str | None = None) -> Json:
    return {"type": kind} if header is None else {"type": kind, "x-mcp-header": header}


def _object(required: tuple[str, ...] = (), **properties: Json) -> Json:
    return {"type": "object", "properties": properties, "required": list(required)}


# The tools' inputSchemas as their servers list them: x-mcp-header on top-level and nested
# properties of type string, integer and boolean, and tools without any.
HTTP_TOOLS: Final[Mapping[str, Json]] = MappingProxyType({
    "get_weather": _object(("city",), city=_string("City"), days=_scalar("integer", "Days"),
                           units=_string(enum=["metric", "imperial"])),
    "run_query": _object(("sql",), sql=_string(), database=_string("Database"),
                         readonly=_scalar("boolean", "Read-Only")),
    "deploy_service": _object(("service", "target"), service=_string("Service"),
                              target=_object(region=_string("Region"),
                                             replicas=_scalar("integer", "Replicas")),
                              dry_run=_scalar("boolean", "Dry-Run")),
    "write_file": _object(("path", "content"), path=_string("Path"), content=_string()),
    "search_notes": _object(("query",), query=_string(), limit=_scalar("integer")),
})  # fmt: skip

_CITIES: Final = ("Paris", "Tokyo", "New York", "Zürich", "São Paulo", "Kraków", "Lagos")
_REGIONS: Final = ("eu-west-1", "us-east-2", "ap-south-1", "eu-central-1")
_SERVICES: Final = ("billing", "search", "checkout-api", "notes", "gateway")
_WORDS: Final = ("report", "draft", "notes", "budget", "release", "café", "index", "2026")
_DATABASES: Final = ("analytics", "orders", "inventory", "users")
_URIS: Final = ("file:///srv/data/{}.md", "memo://{}", "db://orders/{}", "file:///home/zoë/{}.txt")
_PROMPTS: Final = ("code_review", "summarise", "translate")
# name, version, user-agent, capabilities: the SDK's own client and two others.
_CLIENTS: Final[tuple[tuple[str, str, str, Json], ...]] = (
    ("mcp", "0.1.0", "python-httpx2/2.16.2", {}),
    ("orbit-cli", "0.9.3", "node", {"elicitation": {}, "sampling": {}}),
    ("quill-ide", "1.42.0", "quill-ide/1.42.0 (linux)", {"roots": {}}),
)  # fmt: skip
_HOSTS: Final = ("127.0.0.1:8000", "mcp.internal:8443", "gateway.example.com")
_NOTIFICATIONS: Final = ("notifications/cancelled", "notifications/initialized",
                         "notifications/roots/list_changed")  # fmt: skip


@dataclass
class _Client:
    """One client process: its identity, headers, id style and habits."""

    rng: random.Random
    info: Json
    agent: bytes
    capabilities: Json
    host: bytes
    posts_left: int
    meta_first: bool  # the _meta member before the others (the SDK puts it last)
    id_prefix: str | None
    last_id: int = 0
    listens: int = 0

    def next_id(self) -> int | str:
        self.last_id += 1
        return self.last_id if self.id_prefix is None else f"{self.id_prefix}{self.last_id}"


def iter_http(count: int, seed: int = 827) -> Iterator[HttpPost]:
    """``count`` labelled POSTs of 2026-07-28 traffic, the same for the same seed."""
    if count < 0:
        raise ValueError(f"count must be >= 0, not {count}")
    rng = random.Random(seed)
    client = _new_client(rng)
    labels = [label for label, _ in _SHARES]
    weights = [share for _, share in _SHARES]
    for _ in range(count):
        if client.posts_left <= 0:
            client = _new_client(rng)
        client.posts_left -= 1
        if client.last_id == 0:  # a new client probes the server first
            yield _ok(client, "server/discover")
            continue
        label = rng.choices(labels, weights)[0]
        yield _BUILDERS[label](client)


def _new_client(rng: random.Random) -> _Client:
    name, version, agent, capabilities = rng.choice(_CLIENTS)
    return _Client(
        rng, {"name": name, "version": version}, agent.encode(), capabilities,
        rng.choice(_HOSTS).encode(), posts_left=rng.randint(3, 40),
        meta_first=rng.random() < 0.3, id_prefix="req-" if rng.random() < 0.15 else None,
    )  # fmt: skip


# --- bodies -------------------------------------------------------------------------------


def _envelope(c: _Client, version: str = PROTOCOL) -> Json:
    return {VERSION_KEY: version, CLIENT_INFO_KEY: c.info, CAPABILITIES_KEY: c.capabilities}


def _with_meta(c: _Client, members: Json, meta: Any) -> Json:
    return {"_meta": meta, **members} if c.meta_first else {**members, "_meta": meta}


def _members(c: _Client, method: str) -> Json:
    """The params of a request for ``method``, without ``_meta``."""
    rng = c.rng
    if method == "tools/call":
        name = rng.choice(tuple(HTTP_TOOLS))
        return {"name": name, "arguments": _arguments(rng, name)}
    if method == "resources/read":
        return {"uri": rng.choice(_URIS).format(rng.choice(_WORDS))}
    if method == "prompts/get":
        return {"name": rng.choice(_PROMPTS), "arguments": {"language": rng.choice(("python", "go"))}}
    if method == "subscriptions/listen":
        return {"notifications": rng.choice(({"toolsListChanged": True},
                {"resourcesListChanged": True, "resourceSubscriptions": ["memo://report"]}))}  # fmt: skip
    if method == "completion/complete":
        return {"ref": {"type": "ref/prompt", "name": "code_review"},
                "argument": {"name": "language", "value": rng.choice(("p", "ru"))}}  # fmt: skip
    if method in ("tools/list", "resources/list") and rng.random() < 0.2:
        return {"cursor": f"page-{rng.randint(2, 9)}"}
    return {}


def _arguments(rng: random.Random, tool: str) -> Json:
    if tool == "get_weather":
        arguments: Json = {"city": rng.choice(_CITIES), "days": rng.randint(1, 14)}
        if rng.random() < 0.1:
            arguments["days"] = float(arguments["days"])  # 3.0: still equal to "3.0"
        if rng.random() < 0.5:
            arguments["units"] = rng.choice(("metric", "imperial"))
        return arguments
    if tool == "run_query":
        table = rng.choice(("orders", "events", "users"))
        sql = f"SELECT * FROM {table} WHERE id > {rng.randint(1, 10**6)} LIMIT 50"
        arguments = {"sql": sql, "database": rng.choice(_DATABASES)}
        if rng.random() < 0.6:
            arguments["readonly"] = rng.random() < 0.8
        return arguments
    if tool == "deploy_service":
        target = {"region": rng.choice(_REGIONS), "replicas": rng.randint(1, 12)}
        return {"service": rng.choice(_SERVICES), "target": target, "dry_run": rng.random() < 0.5,
                "version": None}  # fmt: skip
    if tool == "write_file":
        # Mostly small writes; one in 200 uploads 16 to 64 KiB.
        size = rng.randint(16, 64) * 1024 if rng.random() < 0.005 else rng.randint(20, 2000)
        words = " ".join(rng.choices(_WORDS, k=size // 5 + 1))[:size]
        return {"path": f"/workspace/{rng.choice(_WORDS)}-{rng.randint(1, 99)}.md", "content": words}
    return {"query": " ".join(rng.choices(_WORDS, k=rng.randint(1, 4))), "limit": rng.randint(5, 50)}


def _request(c: _Client, method: str, params: Any) -> Json:
    return {"jsonrpc": "2.0", "id": c.next_id(), "method": method, "params": params}


_WEIGHTED_METHODS: Final = (
    ("tools/call", 50), ("tools/list", 10), ("resources/read", 10), ("resources/list", 4),
    ("prompts/get", 5), ("prompts/list", 2), ("completion/complete", 3),
    ("server/discover", 6), ("subscriptions/listen", 3),
)  # fmt: skip
_NAME_BEARING: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def _method(c: _Client) -> str:
    methods = [method for method, _ in _WEIGHTED_METHODS]
    return c.rng.choices(methods, [weight for _, weight in _WEIGHTED_METHODS])[0]


def _valid(c: _Client, method: str | None = None) -> tuple[Json, list[tuple[str, str]]]:
    """A conforming request and the mcp-* headers its client sends with it."""
    method = method or _method(c)
    message = _request(c, method, _with_meta(c, _members(c, method), _envelope(c)))
    if method == "subscriptions/listen":  # the SDK's listen driver has ids of its own
        c.listens += 1
        message["id"] = f"listen-{c.listens}"
    return message, _mirror(message)


def _mirror(message: Json) -> list[tuple[str, str]]:
    """The headers the SDK's client derives from a request body (inbound.py's rules)."""
    method, params = message["method"], message["params"]
    pairs = [("mcp-protocol-version", params["_meta"][VERSION_KEY]), ("mcp-method", method)]
    if (key := _NAME_BEARING.get(method)) is not None:
        pairs.append(("mcp-name", _encode(params[key])))
    if method == "tools/call":
        # Emitted in the order the SDK's schema walk finds them: the last property first.
        for path, token in reversed(_annotations(HTTP_TOOLS[params["name"]])):
            value = _at(params["arguments"], path)
            if value is not None:
                pairs.append((f"mcp-param-{token.lower()}", _encode(_render(value))))
    return pairs


def _annotations(schema: Json, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    found = []
    for name, sub in schema.get("properties", {}).items():
        if "x-mcp-header" in sub:
            found.append(((*path, name), sub["x-mcp-header"]))
        found += _annotations(sub, (*path, name))
    return found


def _at(arguments: Json, path: tuple[str, ...]) -> Any:
    node: Any = arguments
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _render(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _sentinel(text: str) -> str:
    return f"=?base64?{base64.b64encode(text.encode()).decode()}?="


def _encode(text: str) -> str:
    """``encode_header_value``: visible ASCII without edge whitespace passes verbatim."""
    plain = text.isascii() and text.isprintable() and text == text.strip()
    looks_encoded = text.startswith("=?base64?") and text.endswith("?=")
    return text if plain and not looks_encoded else _sentinel(text)


# --- POSTs by label -------------------------------------------------------------------------


def _post(c: _Client, label: HttpLabel, body: Any, mcp: list[tuple[str, str]]) -> HttpPost:
    data = body if type(body) is bytes else orjson.dumps(body)
    pairs: Pairs = [(b"host", c.host), (b"accept-encoding", b"gzip, deflate"),
                    (b"connection", b"keep-alive"), (b"user-agent", c.agent),
                    (b"accept", b"application/json, text/event-stream"),
                    (b"content-type", b"application/json")]  # fmt: skip
    pairs += [(name.encode("latin-1"), value.encode()) for name, value in mcp]
    pairs.append((b"content-length", str(len(data)).encode()))
    return label, data, pairs


def _ok(c: _Client, method: str | None = None) -> HttpPost:
    message, mcp = _valid(c, method)
    rng = c.rng
    oddity = rng.randrange(100)
    if oddity < 3:  # names in another case, as a non-ASGI front end passes them
        mcp = [("-".join(w.capitalize() for w in n.split("-")), v) for n, v in mcp]
    elif oddity < 5 and len(mcp) > 2:  # a plain name or argument in the sentinel form anyway
        i = rng.randrange(2, len(mcp))  # (only Mcp-Name and Mcp-Param-* are ever decoded)
        if not mcp[i][1].startswith("=?base64?"):
            mcp[i] = (mcp[i][0], _sentinel(mcp[i][1]))
    elif oddity < 6:  # headers no rung reads: an unannotated Mcp-Param, a needless Mcp-Name
        method = message["method"]
        extra = ("mcp-name", "x") if method not in _NAME_BEARING else ("mcp-param-trace", "x")
        mcp.append(extra)
    return _post(c, "ok", message, mcp)


def _notification(c: _Client) -> HttpPost:
    method = c.rng.choice(_NOTIFICATIONS)
    message: Json = {"jsonrpc": "2.0", "method": method}
    if method == "notifications/cancelled":
        message["params"] = {"requestId": max(c.last_id, 1), "reason": "user cancelled"}
    return _post(c, "notification", message, [("mcp-protocol-version", PROTOCOL), ("mcp-method", method)])


def _mismatch(c: _Client) -> HttpPost:
    rng = c.rng
    damage = rng.choice(tuple(_DAMAGE))
    method = {"name": rng.choice(tuple(_NAME_BEARING)), "param": "tools/call"}.get(damage[0])
    while True:
        message, mcp = _valid(c, method)
        params = message["params"]
        if damage[0] != "param" or params["name"] in ("get_weather", "deploy_service", "run_query"):
            break
    _DAMAGE[damage](rng, message, mcp)
    return _post(c, "mismatch", message, mcp)


def _index(mcp: list[tuple[str, str]], prefix: str, rng: random.Random) -> int:
    return rng.choice([i for i, (name, _) in enumerate(mcp) if name.startswith(prefix)])


def _set(mcp: list[tuple[str, str]], prefix: str, rng: random.Random, change: Callable[[str], str]) -> None:
    i = _index(mcp, prefix, rng)
    mcp[i] = (mcp[i][0], change(mcp[i][1]))


def _drop(mcp: list[tuple[str, str]], prefix: str, rng: random.Random) -> None:
    del mcp[_index(mcp, prefix, rng)]


def _other_tool(name: str) -> str:
    return next(tool for tool in ("delete_repository", "run_query") if tool != name)


def _no_param_argument(rng: random.Random, message: Json, mcp: list[tuple[str, str]]) -> None:
    # A header whose argument the body does not carry: routing on a value never sent.
    arguments = message["params"]["arguments"]
    path, token = rng.choice(_annotations(HTTP_TOOLS[message["params"]["name"]]))
    if _at(arguments, path) is None:
        mcp.append((f"mcp-param-{token.lower()}", "eu-west-1"))
    else:
        (arguments if len(path) == 1 else arguments[path[0]])[path[-1]] = None


# Each way a header can disagree with the body, by (where, what); each leaves -32020.
_Damage: TypeAlias = Callable[[random.Random, Json, list[tuple[str, str]]], None]
_DAMAGE: Final[dict[tuple[str, str], _Damage]] = {
    ("version", "other"): lambda r, m, h: _set(h, "mcp-protocol-version", r, lambda v: "2025-11-25"),
    ("version", "missing"): lambda r, m, h: _drop(h, "mcp-protocol-version", r),
    ("method", "other"): lambda r, m, h: _set(h, "mcp-method", r, lambda v: "tools/list" if v != "tools/list" else "tools/call"),
    ("method", "missing"): lambda r, m, h: _drop(h, "mcp-method", r),
    ("name", "other-tool"): lambda r, m, h: _set(h, "mcp-name", r, _other_tool),
    ("name", "missing"): lambda r, m, h: _drop(h, "mcp-name", r),
    ("name", "prefix"): lambda r, m, h: _set(h, "mcp-name", r, lambda v: v[: len(v) // 2]),
    ("name", "trailing-space"): lambda r, m, h: _set(h, "mcp-name", r, lambda v: v + r.choice((" ", "\t"))),
    ("name", "nul"): lambda r, m, h: _set(h, "mcp-name", r, lambda v: v + "\x00" + _other_tool(v)),
    ("name", "huge"): lambda r, m, h: _set(h, "mcp-name", r, lambda v: v + "A" * r.randint(8192, 65536)),
    ("name", "raw-utf8"): lambda r, m, h: _set(h, "mcp-name", r, lambda v: v + "é"),
    ("name", "bad-base64"): lambda r, m, h: _set(h, "mcp-name", r, lambda v: r.choice(("=?base64?w6k?=", "=?base64?ZR==?=", "=?base64?/w==?=", "=?base64?!!?="))),
    ("any", "duplicate"): lambda r, m, h: h.append(r.choice(h[:3]) if r.random() < 0.5 else (h[0][0].upper(), h[0][1])),
    ("method", "trailing-space"): lambda r, m, h: _set(h, "mcp-method", r, lambda v: v + " "),
    ("param", "other"): lambda r, m, h: _set(h, "mcp-param-", r, lambda v: r.choice(("Berlin", "eu-north-9", "99", "True", "3e0"))),
    ("param", "missing"): lambda r, m, h: _drop(h, "mcp-param-", r),
    ("param", "absent-argument"): _no_param_argument,
    ("param", "duplicate"): lambda r, m, h: h.append(h[_index(h, "mcp-param-", r)]),
}  # fmt: skip


def _unsupported(c: _Client) -> HttpPost:
    rng = c.rng
    version = rng.choice(("2025-11-25", "2025-06-18", "2027-01-15"))
    if rng.random() < 0.3:  # a notification says its version only in the header
        method = rng.choice(_NOTIFICATIONS)
        return _post(c, "unsupported", {"jsonrpc": "2.0", "method": method},
                     [("mcp-protocol-version", version), ("mcp-method", method)])  # fmt: skip
    message = _valid(c)[0]
    message["params"]["_meta"][VERSION_KEY] = version
    return _post(c, "unsupported", message, _mirror(message))


def _invalid_params(c: _Client) -> HttpPost:
    rng = c.rng
    message, mcp = _valid(c, rng.choice(("tools/list", "tools/call", "resources/read", "server/discover")))
    params = message["params"]
    defect = rng.randrange(6)
    if defect == 0:  # a 2025-era client: no envelope at all
        del params["_meta"]
    elif defect == 1:
        del params["_meta"][CAPABILITIES_KEY]
    elif defect == 2:
        del params["_meta"][VERSION_KEY]
    elif defect == 3:
        params["_meta"] = rng.choice((None, [], "2026-07-28"))
    elif defect == 4:
        del message["params"]
    else:  # not an object (the SDK answers -32600 here: a documented difference)
        message["params"] = [params.get("name", "x")]
    return _post(c, "invalid-params", message, mcp)


def _invalid_request(c: _Client) -> HttpPost:
    rng = c.rng
    mcp = [("mcp-protocol-version", PROTOCOL)]
    defect = rng.randrange(5)
    if defect == 0:  # a 2025-era client answers a server request over the POST
        body: Any = {"jsonrpc": "2.0", "id": f"srv-{rng.randint(1, 99)}", "result": {"roots": []}}
    elif defect == 1:
        body = {"jsonrpc": "2.0", "id": c.last_id, "error": {"code": -1, "message": "declined"}}
    elif defect == 2:  # a batch, which MCP removed
        body = [_valid(c, "tools/list")[0], _valid(c, "server/discover")[0]]
    else:
        body, mcp = _valid(c)
        if defect == 3:
            body["jsonrpc"] = rng.choice(("1.0", None))
        else:
            body["id"] = rng.choice((1.5, True, None))
    return _post(c, "invalid-request", body, mcp)


def _parse_error(c: _Client) -> HttpPost:
    rng = c.rng
    message, mcp = _valid(c)
    text = orjson.dumps(message).decode()
    body = rng.choice((
        text[: rng.randint(1, len(text) - 1)],  # a body cut short
        text[:-1] + ",}",  # a trailing comma
        "jsonrpc=2.0&method=tools%2Flist",  # a form post
        "",
    )).encode()  # fmt: skip
    return _post(c, "parse-error", body, mcp)


_BUILDERS: Final[dict[HttpLabel, Callable[[_Client], HttpPost]]] = {
    "ok": _ok, "notification": _notification, "mismatch": _mismatch,
    "unsupported": _unsupported, "invalid-params": _invalid_params,
    "invalid-request": _invalid_request, "parse-error": _parse_error,
}  # fmt: skip
