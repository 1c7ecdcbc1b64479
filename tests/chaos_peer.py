"""A scripted stdio MCP server that misbehaves on request, for tests/test_bridge_random.py.

``tools/call`` by the tool's name, each answer naming the caller's ``arguments.marker``:
``echo`` answers at once; ``progress`` sends two ``notifications/progress`` for the token
its request's ``params._meta`` holds (their message the marker), then answers; ``log``
sends a ``notifications/message`` (level info, its data the marker), then answers;
``stall`` never answers; ``crash`` exits at once (status 3), leaving every call in flight
unanswered. ``initialize`` gets a fixed result; anything else (``server/discover``,
``ping``) gets ``{}``, so the bridge takes it for a server of either era.
"""

from __future__ import annotations

import json
import os
import sys

INITIALIZED = {"protocolVersion": "2025-11-25", "serverInfo": {"name": "chaos", "version": "1"},
               "capabilities": {"tools": {}, "logging": {}}}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(id: object, marker: object) -> None:
    send({"jsonrpc": "2.0", "id": id, "result": {
        "content": [{"type": "text", "text": marker}], "isError": False}})


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        id, method, params = message["id"], message["method"], message.get("params") or {}
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": id, "result": INITIALIZED})
            continue
        if method != "tools/call":
            send({"jsonrpc": "2.0", "id": id, "result": {}})
            continue
        tool, marker = params.get("name"), (params.get("arguments") or {}).get("marker")
        if tool == "crash":
            os._exit(3)
        elif tool == "stall":
            continue
        elif tool == "progress":
            token = (params.get("_meta") or {}).get("progressToken")
            for step in (1, 2):
                send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                    "progressToken": token, "progress": step, "total": 2, "message": marker}})
        elif tool == "log":
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": marker}})
        answer(id, marker)


if __name__ == "__main__":
    main()
