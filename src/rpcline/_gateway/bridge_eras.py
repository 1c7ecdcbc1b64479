"""What ``rpcline.bridge`` translates between eras, for a server that speaks only the 2025
handshake era (an SDK 1.x server, most servers in use today) and a 2026-07-28 client.

A 2026 child is found by asking it ``server/discover`` first; a command that answers an
error speaks the handshake era only. Its 2025-era children, initialized by the bridge,
then serve 2026-07-28 requests too: ``server/discover`` is answered from their
``initialize`` result, and the methods both eras share are forwarded as they came (their
``_meta`` envelope is extra metadata to a handshake-era server, which ignores it). Their
results, and the bridge's ``server/discover``, get the members the 2026-07-28 wire
requires and a handshake-era server never writes, spliced in at the start of the result
object where it has no such member of its own (nothing is re-encoded): ``"resultType":
"complete"``; ``"ttlMs": 0, "cacheScope": "private"`` (immediately stale, never shared:
the SDK's own defaults) on the results that carry caching hints; and the stamp
``_meta["io.modelcontextprotocol/serverInfo"]``, the ``serverInfo`` of the child's
``initialize`` result as it wrote it (put in the result's own ``_meta`` when it has one).

Any other method is answered -32601 by the bridge, as the SDK's own server answers a method
the revision does not define: a handshake-era server would answer -32602 for a method it
does not know (its request model matches nothing), which a 2026-07-28 client reads as bad
arguments, and it would answer ``ping`` or ``initialize`` as if in a session of its own.
"""

from __future__ import annotations

import functools
from typing import Any, Final

import orjson

from rpcline._core import json_walk
from rpcline._core.route import Route, route
from rpcline._core.shared import RequestId
from rpcline._version import __version__
from rpcline._gateway.bridge_lines import METHOD_NOT_FOUND, error

Span = tuple[int, int]
Edit = tuple[int, int, bytes]  # a span of a line, and the bytes that replace it

V2026: Final = "2026-07-28"
PROBE_PARAMS: Final = {"_meta": {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientInfo": {"name": "rpcline-serve", "version": __version__},
    "io.modelcontextprotocol/clientCapabilities": {}}}  # fmt: skip
SLOW_PROBE: Final = 10.0  # seconds after which an unanswered probe is logged (still awaited)
# 2026-07-28 methods a handshake-era server has no counterpart for.
UNTRANSLATED: Final = frozenset({"subscriptions/listen"})
DISCOVER: Final = "server/discover"
# The 2026-07-28 requests a handshake-era server defines too (mcp_types.methods).
FORWARDED: Final = frozenset({"completion/complete", "prompts/get", "prompts/list",
                              "resources/list", "resources/read", "resources/templates/list",
                              "tools/call", "tools/list"})  # fmt: skip
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
# Methods whose 2026-07-28 result is a CacheableResult (mcp_types): ttlMs and cacheScope.
CACHEABLE: Final = frozenset({"tools/list", "resources/list", "resources/templates/list",
                              "resources/read", "prompts/list", DISCOVER})  # fmt: skip
COMPLETE: Final = b'"resultType":"complete"'
HINTS: Final = (("ttlMs", b'"ttlMs":0'), ("cacheScope", b'"cacheScope":"private"'))
STAMP_KEY: Final = b'"' + SERVER_INFO.encode() + b'":'
# A result whose bytes hold none of these has none of the names completed() looks for among
# its members (a name is its quoted bytes, unless written with \u escapes): it is not read.
NAMED: Final = (b'"resultType"', b'"ttlMs"', b'"cacheScope"', b'"_meta"', b"\\u")


def completed(answer: bytes, method: str, server_info: bytes | None) -> bytes:
    """A handshake-era child's answer as the 2026-07-28 wire requires it (see above):
    members the result lacks are spliced in at its start, the stamp into its own
    ``_meta`` when it has one. What the child wrote stays as it wrote it."""
    span = route(answer).result_span
    if span is None or answer[span[0]] != 0x7B:
        return answer  # an error, or a result that is no object: as it came
    start, end = span
    if any(answer.find(name, start, end) >= 0 for name in NAMED):
        present = members(answer, start)
        empty = not present
    else:  # none of them is a member: no need to read the result
        present, empty = {}, json_walk.ws(answer, start + 1) == end - 1
    added = [] if "resultType" in present else [COMPLETE]
    if method in CACHEABLE:
        added += [member for name, member in HINTS if name not in present]
    edits: list[Edit] = []
    if server_info is not None:
        if "_meta" in present:
            edits = _stamped(answer, present["_meta"], server_info)
        else:
            added.append(b'"_meta":{' + STAMP_KEY + server_info + b"}")
    if added:
        edits.append((start + 1, start + 1, b",".join(added) + (b"" if empty else b",")))
    return _spliced(answer, edits)


def answered_discover(answer: bytes | None) -> bool:
    """Whether a child's answer to the probe is a result (a 2026-07-28 server)."""
    return answer is not None and route(answer).result_span is not None


def discover_result(initialized: Route, id: RequestId) -> bytes:
    """``server/discover``'s answer made from a handshake-era child's ``initialize`` result,
    with what every translated result gets (``completed``)."""
    line = initialized.line
    span = initialized.result_span
    assert type(line) is bytes and span is not None
    result = orjson.loads(line[span[0]:span[1]])
    discovered: dict[str, Any] = {
        "supportedVersions": [V2026],
        "capabilities": result.get("capabilities", {}),
    }
    if "instructions" in result:
        discovered["instructions"] = result["instructions"]
    answer = orjson.dumps({"jsonrpc": "2.0", "id": id, "result": discovered})
    return completed(answer, DISCOVER, server_info(initialized))


@functools.lru_cache(maxsize=8)
def server_info(initialized: Route) -> bytes | None:
    """The child's ``serverInfo`` as it wrote it in its ``initialize`` result: the stamp of
    every 2026-07-28 result. None when it wrote none (or one that is no object)."""
    line = initialized.line
    span = initialized.result_span
    assert type(line) is bytes and span is not None
    if line[span[0]] != 0x7B:
        return None
    info = members(line, span[0]).get("serverInfo")
    return None if info is None or line[info[0]] != 0x7B else line[info[0]:info[1]]


def not_found(id: RequestId, method: str) -> bytes:
    """-32601 for a method the bridge does not forward to a handshake-era server."""
    if method in UNTRANSLATED:
        return error(id, METHOD_NOT_FOUND, f"Method not found: {method} (the server speaks the "
                     "2025 handshake era only, and rpcline serve does not translate it)")
    # What the SDK's server answers a method the revision does not define.
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "error": {
        "code": METHOD_NOT_FOUND, "message": "Method not found", "data": method}})


def _stamped(answer: bytes, meta: Span, server_info: bytes) -> list[Edit]:
    """The edit that puts the stamp in a result's own ``_meta``, as the SDK stamps one: a
    null ``_meta`` or stamp is replaced, a stamp the child wrote is kept, and a ``_meta``
    that is no object is the child's to own."""
    start, end = meta
    if answer[start:end] == b"null":
        return [(start, end, b"{" + STAMP_KEY + server_info + b"}")]
    if answer[start] != 0x7B:
        return []
    inner = members(answer, start)
    stamp = inner.get(SERVER_INFO)
    if stamp is None:
        return [(start + 1, start + 1, STAMP_KEY + server_info + (b"," if inner else b""))]
    if answer[stamp[0]:stamp[1]] == b"null":
        return [(stamp[0], stamp[1], server_info)]
    return []


def _spliced(line: bytes, edits: list[Edit]) -> bytes:
    """``line`` with each ``(start, end)`` span (none overlapping) replaced by its bytes."""
    if not edits:
        return line
    view = memoryview(line)  # each byte of a large answer copied once, by the join
    pieces: list[bytes | memoryview] = []
    at = 0
    for start, end, new in sorted(edits):
        pieces += (view[at:start], new)
        at = end
    pieces.append(view[at:])
    return b"".join(pieces)


# --- reading a child's result: valid JSON (route checked it), members found, not decoded ---

def members(line: bytes, start: int) -> dict[str, Span]:
    """The value span of each member of the valid JSON object at ``start`` in ``line``, by
    its name (decoded); of a name given twice, the last, which orjson keeps."""
    return dict(json_walk.members(line, (start, len(line))))
