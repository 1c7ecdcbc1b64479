"""A scripted stdio MCP server for tests/test_bridge_sessions.py: ``python bridge_peer.py``.

Every line it receives is appended to the file named by ``PEER_LOG`` (when set); it first
writes ``PEER_STDERR`` (when set) to its stderr. It answers
``initialize`` with a fixed result, and ``tools/call`` by its tool's name: ``notify`` writes
each message of ``arguments.messages`` first (notifications the test wants the bridge to
deliver), then answers; ``resources/subscribe`` to ``test://refused`` is refused
(-32601); ``progress`` sends one progress notification for the token its
``params._meta`` holds, as its own JSON parser reads it, then answers; ``wait`` never
answers; ``broken`` answers with invalid UTF-8; ``environment`` answers its pid, its
folder and the values of the variables ``arguments.names`` lists;
``close`` closes its stdout and sleeps (alive, silent for good); anything else is
answered ``{}``.
"""

from __future__ import annotations

import json
import os
import sys
import time

LOG = os.environ.get("PEER_LOG")
INITIALIZED = {"protocolVersion": "2025-11-25", "serverInfo": {"name": "bridge-peer", "version": "1"},
               "capabilities": {"tools": {"listChanged": True}, "logging": {},
                                "resources": {"subscribe": True}}}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    if os.environ.get("PEER_STDERR"):  # a server's chatter, and a last line without its end
        sys.stderr.write(os.environ["PEER_STDERR"])
        sys.stderr.flush()
    log = open(LOG, "a", buffering=1) if LOG else None  # noqa: SIM115
    for line in sys.stdin:
        if log:
            log.write(line)
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        id, method, params = message["id"], message["method"], message.get("params") or {}
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": id, "result": INITIALIZED})
        elif method == "resources/subscribe" and params.get("uri") == "test://refused":
            send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601,
                                                        "message": "Method not found"}})
        elif method == "tools/call" and params.get("name") == "wait":
            continue
        elif method == "tools/call" and params.get("name") == "close":
            sys.stdout.close()
            os.close(1)
            time.sleep(3600)
        elif method == "tools/call" and params.get("name") == "broken":
            sys.stdout.flush()
            sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":%s,"result":"\xff"}\n'
                                    % json.dumps(id).encode())
            sys.stdout.buffer.flush()
        elif method == "tools/call" and params.get("name") == "progress":
            token = (params.get("_meta") or {}).get("progressToken")
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": 1, "total": 1}})
            send({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
        elif method == "tools/call" and params.get("name") == "environment":
            names = params["arguments"]["names"]
            send({"jsonrpc": "2.0", "id": id, "result": {
                "pid": os.getpid(), "cwd": os.getcwd(),
                "env": {name: os.environ.get(name) for name in names}}})
        elif method == "tools/call" and params.get("name") == "notify":
            for note in params["arguments"]["messages"]:
                send(note)
            send({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
        else:
            send({"jsonrpc": "2.0", "id": id, "result": {}})


if __name__ == "__main__":
    main()
