"""A handshake-era child (the official SDK 1.x) behind rpcline.bridge, for clients of both eras.

The child runs in an environment of its own with ``mcp<2`` (made here, or named by
``RPCLINE_TEST_MCP1_PYTHON``: .ci/run makes it once). The SDK 2.x client in ``legacy``
mode must get through the bridge what it gets from the child directly; in 2026-07-28 mode
(stateless, which the child does not speak) it must get the same results, through the
translation docs/serve.md states.
"""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path
from typing import Any

import orjson
import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed")
pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx comes with the MCP SDK")

from _asgi import serving
from mcp.client.stdio import StdioServerParameters
from test_bridge import call_tool, modern

from rpcline.bridge import StdioBridge

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).parent / "sdk1_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def mcp1_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An interpreter with the SDK 1.x: RPCLINE_TEST_MCP1_PYTHON, or a venv made here."""
    named = os.environ.get("RPCLINE_TEST_MCP1_PYTHON")
    if named:
        return named
    home = tmp_path_factory.mktemp("mcp1")
    venv.create(home, with_pip=True)
    python = str(home / "bin" / "python")
    done = subprocess.run([python, "-m", "pip", "install", "-q", "mcp<2"], capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        pytest.skip(f"cannot install mcp<2 (no package index?): {done.stderr[-300:]}")
    return python


async def results(client: Any) -> list[Any]:
    got: list[Any] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        got.append((done, total, message))

    answers = [
        await client.list_tools(),
        await client.call_tool("echo", {"text": "héllo 😀"}),
        await client.call_tool("add", {"a": 2**70, "b": 1}),
        await client.call_tool("progress", {"steps": 3}, progress_callback=progress),
        await client.list_resources(),
        await client.read_resource("test://greeting"),
        await client.list_prompts(),
        await client.get_prompt("review", {"code": "x = 1"}),
    ]
    return [a.model_dump(mode="json") for a in answers] + [got]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "auto"])
async def test_a_handshake_era_child_serves_both_eras(mcp1_python: str, mode: str) -> None:
    direct = StdioServerParameters(command=mcp1_python, args=[str(SERVER)])
    async with mcp.Client(direct, mode="legacy") as client:  # all it speaks
        expected = await results(client)
    app = StdioBridge([mcp1_python, str(SERVER)])
    try:
        async with serving(app, timeout=120) as url, mcp.Client(url, mode=mode) as client:
            assert await results(client) == expected
    finally:
        await app.aclose()
    assert app.handshake_only == (mode != "legacy")  # found out by the 2026 probe


async def test_what_is_translated_and_what_is_not(mcp1_python: str) -> None:
    app = StdioBridge([mcp1_python, str(SERVER)])
    try:
        async with serving(app, timeout=120) as url, httpx.AsyncClient(timeout=30) as http:
            body, headers = modern("d", "server/discover")
            discovered = (await http.post(url, content=body, headers=headers)).json()
            body, headers = modern("l", "subscriptions/listen")
            listen = await http.post(url, content=body, headers=headers)
            body, headers = call_tool(5, "echo", {"text": "t"})
            raw = (await http.post(url, content=body, headers=headers)).content
    finally:
        await app.aclose()
    result = discovered["result"]
    assert result["supportedVersions"] == ["2026-07-28"] and result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == (
        "rpcline-handshake-server")
    assert "tools" in result["capabilities"]
    assert listen.status_code == 404 and listen.json()["error"]["code"] == -32601
    assert "subscriptions/listen" in listen.json()["error"]["message"]
    # The child's bytes, with only the required member spliced in at the result's start.
    assert raw.startswith(b'{"jsonrpc":"2.0","id":5,"result":{"resultType":"complete",')
    assert orjson.loads(raw)["result"]["content"][0]["text"] == "t"


def test_completed_splices_only_what_is_missing() -> None:
    from rpcline._gateway.bridge_eras import completed

    assert completed(b'{"jsonrpc":"2.0","id":1,"result":{}}', "ping") == (
        b'{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}')
    assert completed(b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}', "tools/list") == (
        b'{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,'
        b'"cacheScope":"private","tools":[]}}')
    kept = b'{"jsonrpc":"2.0","id":1,"result":{"resultType":"incomplete","ttlMs":5}}'
    assert completed(kept, "tools/list") == kept
    error = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}'
    assert completed(error, "tools/list") == error
