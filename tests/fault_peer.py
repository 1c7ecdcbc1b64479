"""A scripted stdio MCP server that misbehaves on request, for tests/test_bridge_faults.py.

``python fault_peer.py``. Like the SDK's servers it speaks the era of its first request for
good: ``initialize`` first makes it a handshake-era server, which refuses a request in the
2026-07-28 envelope (``_meta`` naming the protocol version) with -32600, as an SDK 2.x
server started in the handshake era does; anything else first makes it a 2026-07-28 server
(``server/discover`` answered with a result).

Environment: ``PEER_LOG`` (every line received is appended to it); ``PEER_FIRST`` (a path:
when it does not exist yet, the peer creates it and exits with status 3 before reading
anything: a server that crashes on its first start); ``PEER_SLOW`` (seconds to sleep
before reading anything: a slow start, a server run through ``uvx`` the first time).

``tools/call`` by the tool's name:

- ``era``: answers ``{"era": ...}``, the era it speaks (``2026-07-28`` or ``handshake``),
  and its pid.
- ``wait``: never answered.
- ``slow``: answered ``arguments.seconds`` after it came (nothing else is read meanwhile).
- ``stall``: stops reading its stdin for good, answers nothing (its stdin pipe fills up).
- ``close_input`` / ``close_output``: closes its fd 0 / fd 1 and sleeps, alive, for good;
  with ``arguments.stubborn`` it ignores SIGTERM first.
- anything else: answered ``{}``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

V2026 = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(id: object, value: dict) -> None:
    send({"jsonrpc": "2.0", "id": id, "result": value})


def sleep_for_good(stubborn: bool) -> None:
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(3600)


def main() -> None:
    first = os.environ.get("PEER_FIRST")
    if first and not os.path.exists(first):
        open(first, "w").close()  # noqa: SIM115
        sys.exit(3)
    time.sleep(float(os.environ.get("PEER_SLOW") or 0))
    log = open(os.environ["PEER_LOG"], "a", buffering=1) if os.environ.get("PEER_LOG") else None  # noqa: SIM115
    era = None
    for line in sys.stdin:
        if log:
            log.write(line)
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        id, method, params = message["id"], message["method"], message.get("params") or {}
        if era is None:
            era = "handshake" if method == "initialize" else V2026
        if era == "handshake" and VERSION_KEY in (params.get("_meta") or {}):
            send({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32600, "message": "a 2026-07-28 request in a handshake-era session"}})
            continue
        name = params.get("name") if method == "tools/call" else None
        arguments = params.get("arguments") or {}
        if method == "initialize":
            result(id, {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "fault-peer", "version": "1"}})
        elif method == "server/discover":
            result(id, {"supportedVersions": [V2026], "capabilities": {"tools": {}},
                        "resultType": "complete"})
        elif name == "era":
            result(id, {"era": era, "pid": os.getpid()})
        elif name == "wait":
            continue
        elif name == "slow":
            time.sleep(float(arguments["seconds"]))
            result(id, {"slept": arguments["seconds"]})
        elif name == "stall":
            sleep_for_good(False)
        elif name == "close_input":
            os.close(0)
            sleep_for_good(bool(arguments.get("stubborn")))
        elif name == "close_output":
            sys.stdout.flush()
            os.close(1)
            sleep_for_good(bool(arguments.get("stubborn")))
        else:
            result(id, {})


if __name__ == "__main__":
    main()
