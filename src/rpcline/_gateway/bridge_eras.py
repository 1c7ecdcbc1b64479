"""What ``rpcline.bridge`` translates between eras, for a server that speaks only the 2025
handshake era (an SDK 1.x server, most servers in use today) and a 2026-07-28 client.

A 2026 child is found by asking it ``server/discover`` first; a command that answers no
result speaks the handshake era only. Its 2025-era children, initialized by the bridge,
then serve 2026-07-28 requests too: ``server/discover`` is answered from their
``initialize`` result, and the methods both eras share are forwarded as they came (their
``_meta`` envelope is extra metadata to a handshake-era server, which ignores it), and
their results get the members the 2026-07-28 wire requires and a handshake-era server
never writes, spliced in at the start of the result object (nothing is re-encoded):
``"resultType": "complete"``, and ``"ttlMs": 0, "cacheScope": "private"`` (immediately
stale, never shared: the SDK's own defaults) on the results that carry caching directives.
What has no handshake-era counterpart is answered -32601 naming it. Nothing else is
translated.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from rpcline._core.route import Route, route
from rpcline._core.shared import RequestId
from rpcline._version import __version__
from rpcline._gateway.bridge_lines import error

V2026: Final = "2026-07-28"
PROBE_PARAMS: Final = {"_meta": {
    "io.modelcontextprotocol/protocolVersion": V2026,
    "io.modelcontextprotocol/clientInfo": {"name": "rpcline-serve", "version": __version__},
    "io.modelcontextprotocol/clientCapabilities": {}}}  # fmt: skip
PROBE_TIMEOUT: Final = 10.0  # seconds a new child has to answer server/discover
# 2026-07-28 methods a handshake-era server has no counterpart for.
UNTRANSLATED: Final = frozenset({"subscriptions/listen"})
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
# Methods whose 2026-07-28 result is a CacheableResult (mcp_types): ttlMs and cacheScope.
CACHEABLE: Final = frozenset({"tools/list", "resources/list", "resources/templates/list",
                              "resources/read", "prompts/list"})  # fmt: skip
COMPLETE: Final = b'"resultType":"complete"'
CACHE: Final = b'"ttlMs":0,"cacheScope":"private"'


def completed(answer: bytes, method: str) -> bytes:
    """A handshake-era child's answer as the 2026-07-28 wire requires it (see above)."""
    r = route(answer)
    span = r.result_span
    if span is None or answer[span[0]:span[0] + 1] != b"{":
        return answer  # an error, or a result that is no object: as it came
    start, end = span
    members = [] if b'"resultType"' in answer[start:end] else [COMPLETE]
    if method in CACHEABLE and b'"ttlMs"' not in answer[start:end]:
        members.append(CACHE)
    if not members:
        return answer
    empty = not answer[start + 1:end - 1].strip()
    inserted = b",".join(members) + (b"" if empty else b",")
    return answer[:start + 1] + inserted + answer[start + 1:]


def answered_discover(answer: bytes | None) -> bool:
    """Whether a child's answer to the probe is a result (a 2026-07-28 server)."""
    return answer is not None and route(answer).result_span is not None


def discover_result(initialized: Route, id: RequestId) -> bytes:
    """``server/discover``'s answer made from a handshake-era child's ``initialize`` result."""
    line = initialized.line
    span = initialized.result_span
    assert type(line) is bytes and span is not None
    result = orjson.loads(line[span[0]:span[1]])
    discovered: dict[str, Any] = {
        "supportedVersions": [V2026],
        "capabilities": result.get("capabilities", {}),
        "resultType": "complete",
        "_meta": {SERVER_INFO: result.get("serverInfo", {})},
    }
    if "instructions" in result:
        discovered["instructions"] = result["instructions"]
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "result": discovered})


def untranslated(id: RequestId, method: str) -> bytes:
    return error(id, -32601, f"Method not found: {method} (the server speaks the 2025 "
                 "handshake era only, and rpcline serve does not translate it)")
