"""The stdio proxy example relays a session through a fake server, answering refusals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

HERE = Path(__file__).parent
PROXY = HERE.parent / "examples" / "stdio_proxy.py"
SERVER = HERE / "fake_mcp_server.py"


def test_proxy_relays_requests_and_answers_refusals():
    session = b"\n".join(
        [
            b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
            b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
            b"not json at all",
            b'{"jsonrpc":"2.0","id":"a","method":"garble","params":{"x":1}}',
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":null}',
        ]
    ) + b"\n"
    done = subprocess.run(
        [sys.executable, str(PROXY), "--", sys.executable, str(SERVER)],
        input=session,
        capture_output=True,
        timeout=60,
        check=True,
    )
    replies = [orjson.loads(line) for line in done.stdout.splitlines()]
    by_id = {reply["id"]: reply for reply in replies}
    assert by_id[1] == {"jsonrpc": "2.0", "id": 1, "result": {"method": "tools/list", "params": {}}}
    assert by_id["a"]["result"] == {"method": "garble", "params": {"x": 1}}
    assert by_id[None]["error"]["code"] == -32700  # answered by the proxy, id null
    assert by_id[7]["error"]["code"] == -32602  # params null on a request
    assert len(replies) == 4  # the notification is never answered
    assert b"server sent a refused line" in done.stderr  # and the server's bad line not answered
