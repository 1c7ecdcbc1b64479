"""examples/stdio_servers_over_http.py: two stdio servers behind one port, one path each."""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[1] / "examples" / "stdio_servers_over_http.py"
mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed")
pytest.importorskip("uvicorn", reason="uvicorn (the serve extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx comes with the MCP SDK")
pytestmark = [pytest.mark.skipif(not EXAMPLE.exists(), reason="needs a clone's examples"),
              pytest.mark.anyio]  # the anyio plugin comes with the SDK

from _asgi import serving

SERVER = shlex.join([sys.executable, str(Path(__file__).parent / "sdk_server.py")])
PEER = shlex.join([sys.executable, str(Path(__file__).parent / "bridge_peer.py")])


async def test_each_server_answers_at_its_own_path() -> None:
    spec = importlib.util.spec_from_file_location("example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    app = example.build({"sdk": SERVER, "peer": PEER})
    async with serving(app, timeout=60) as url:
        base = url.removesuffix("/mcp")
        async with mcp.Client(f"{base}/servers/sdk/mcp", mode="legacy") as client:
            echoed = await client.call_tool("echo", {"text": "sdk"})
        async with mcp.Client(f"{base}/servers/peer/mcp", mode="legacy") as client:
            info = client.server_info
        async with httpx.AsyncClient() as http:
            missing = await http.post(f"{base}/servers/other/mcp", content=b"{}")
    assert echoed.content[0].text == "sdk"  # type: ignore[union-attr]
    assert info is not None and info.name == "bridge-peer"
    assert missing.status_code == 404
    assert all(not child.running for bridge in app.servers.values()
               for pool in (bridge.modern, bridge.legacy) for child in pool.children)
