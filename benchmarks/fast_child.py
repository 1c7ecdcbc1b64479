"""A minimal stdio MCP server for benchmarks/serve.py: the gateway, not the child, is measured.

    python benchmarks/fast_child.py

It answers ``initialize``, ``server/discover``, ``tools/list``, ``tools/call`` (one tool,
``echo``: its ``text`` back), ``ping`` and anything else with -32601, in either era (a line
whose ``_meta`` names a protocol version is a 2026-07-28 request), and ignores
notifications. Everything waiting on stdin is read at once and answered in one write, so
a pipelined gateway costs it one read and one write per batch, not per line.
"""

from __future__ import annotations

import os

import orjson

NAME = {"name": "rpcline-fast-child", "version": "1.0"}
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ECHO = {"name": "echo", "description": "Say it back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]}}  # fmt: skip
CAPABILITIES = {"tools": {"listChanged": False}}


def answer(message: dict) -> dict | None:
    method = message.get("method")
    if "id" not in message or method is None:
        return None  # a notification, or an answer to a request it never sends
    params = message.get("params") or {}
    meta = params.get("_meta") or {}
    modern = VERSION_KEY in meta
    if method == "tools/call":
        text = (params.get("arguments") or {}).get("text", "")
        result: dict = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "tools/list":
        result = {"tools": [ECHO]}
    elif method == "initialize":
        asked = params.get("protocolVersion")
        result = {"protocolVersion": asked if asked in HANDSHAKE_VERSIONS else
                  HANDSHAKE_VERSIONS[-1], "capabilities": CAPABILITIES, "serverInfo": NAME}
    elif method == "server/discover":
        result = {"supportedVersions": ["2026-07-28"], "capabilities": CAPABILITIES,
                  "_meta": {"io.modelcontextprotocol/serverInfo": NAME}}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": message["id"],
                "error": {"code": -32601, "message": f"Method not found: {method}"}}
    if modern:  # what 2026-07-28 adds to every result, and to cacheable ones
        result["resultType"] = "complete"
        if method in ("tools/list", "server/discover"):
            result.update(cacheScope="public", ttlMs=0)
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    pending = b""
    while data := os.read(0, 1 << 16):
        *complete, pending = (pending + data).split(b"\n")
        out = []
        for line in complete:
            if not line.strip():
                continue
            try:
                reply = answer(orjson.loads(line))
            except (orjson.JSONDecodeError, AttributeError, TypeError):
                reply = {"jsonrpc": "2.0", "id": None,
                         "error": {"code": -32700, "message": "Parse error"}}
            if reply is not None:
                out.append(orjson.dumps(reply))
        if out:
            view = memoryview(b"\n".join(out) + b"\n")
            while view:
                view = view[os.write(1, view):]


if __name__ == "__main__":
    main()
