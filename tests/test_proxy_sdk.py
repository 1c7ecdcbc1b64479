"""The official MCP SDK's client and server, through ``rpcline proxy`` and directly.

Every session runs both ways and must give the same results, number types included
(compared as the JSON the SDK's models dump). Needs ``mcp`` (the ``interop`` extra);
``.ci/run`` installs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK is not installed "
                                        "(pip install '.[interop]')")
anyio = pytest.importorskip("anyio", reason="anyio comes with the MCP SDK")

from mcp import types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

HERE = Path(__file__).parent
SERVER = [sys.executable, str(HERE / "sdk_server.py")]
PROXY = [sys.executable, "-m", "rpcline", "proxy", "--"]
# The SDK starts servers with a minimal environment: pass on what selects rpcline.
# Absolute paths: some of these runs start in a temporary directory.
ENV = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "RPCLINE_NO_EXTENSIONS")}
if "PYTHONPATH" in ENV:
    ENV["PYTHONPATH"] = os.pathsep.join(map(os.path.abspath, ENV["PYTHONPATH"].split(os.pathsep)))
BIG = 2**70
TIMEOUT = 120


async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    content = params.messages[0].content
    assert isinstance(content, types.TextContent)
    return types.CreateMessageResult(role="assistant", model="test",
                                     content=types.TextContent(type="text", text=f"<{content.text}>"))


async def list_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project")])


def dump(model: Any) -> Any:
    """A result as the JSON its model dumps: exact numbers, types and all."""
    return json.loads(model.model_dump_json(by_alias=True, exclude_none=True))


async def in_session(command: list[str], body: Any, tmp_path: Path) -> Any:
    params = StdioServerParameters(command=command[0], args=command[1:], env=ENV)
    with (tmp_path / f"stderr-{len(command)}.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, sampling_callback=sampling,
                                     list_roots_callback=list_roots) as session:
                await session.initialize()
                return await body(session)


def both_ways(body: Any, tmp_path: Path) -> tuple[Any, Any]:
    """``body(session)`` directly and through the proxy, each in its own event loop."""
    async def run(command: list[str]) -> Any:
        with anyio.fail_after(TIMEOUT):
            return await in_session(command, body, tmp_path)

    return anyio.run(run, SERVER), anyio.run(run, PROXY + SERVER)


async def ordinary(session: ClientSession) -> list[Any]:
    progress: list[Any] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append([done, total, message])

    calls = [
        ("echo", {"text": "h\u00e9llo \U0001f600 \\n"}), ("add", {"a": BIG, "b": 1}),
        ("numbers", {"values": [1, 2.5, 1e300, -0.0]}), ("big", {"size": 1_000_000}),
        ("length", {"data": "x" * 1_000_000}), ("fail", {"message": "boom"}),
        ("no-such-tool", {}), ("roots", {}), ("sample", {"prompt": "hi"}),
        ("ping_client", {}),
    ]
    results = [dump(await session.list_tools())]
    results += [dump(await session.call_tool(name, arguments)) for name, arguments in calls]
    results.append(dump(await session.call_tool("progress", {"steps": 5},
                                                progress_callback=on_progress)))
    results += [progress, dump(await session.list_resources()),
                dump(await session.list_resource_templates()),
                dump(await session.read_resource("test://greeting")),
                dump(await session.read_resource("test://items/42")),
                dump(await session.list_prompts()),
                dump(await session.get_prompt("review", {"code": "print(1)"})),
                dump(await session.send_ping())]
    return results


def test_an_ordinary_session_is_the_same_through_the_proxy(tmp_path):
    direct, proxied = both_ways(ordinary, tmp_path)
    assert proxied == direct
    assert direct[2]["structuredContent"] == {"result": BIG + 1}  # an int beyond 64 bits
    assert json.loads(direct[3]["content"][0]["text"])["count"] == 4
    assert len(direct[4]["content"][0]["text"]) == 1_000_000


def test_cancellation_and_1000_concurrent_calls(tmp_path):
    async def body(session: ClientSession) -> list[Any]:
        with anyio.move_on_after(0.5) as scope:
            await session.call_tool("slow", {"seconds": 30})
        assert scope.cancelled_caught
        results: dict[int, Any] = {}

        async def call(i: int) -> None:
            results[i] = dump(await session.call_tool("echo", {"text": str(i)}))

        async with anyio.create_task_group() as group:
            for i in range(1000):
                group.start_soon(call, i)
        return [results[i] for i in range(1000)] + [dump(await session.send_ping())]

    direct, proxied = both_ways(body, tmp_path)
    assert proxied == direct
    assert direct[999]["content"][0]["text"] == "999"


def test_a_20_mb_result_and_a_20_mb_argument(tmp_path):
    async def body(session: ClientSession) -> list[Any]:
        result = await session.call_tool("big", {"size": 20_000_000})
        text = result.content[0]
        assert isinstance(text, types.TextContent)
        argument = await session.call_tool("length", {"data": "y" * 20_000_000})
        return [len(text.text), text.text[:100], dump(argument)]

    direct, proxied = both_ways(body, tmp_path)
    assert proxied == direct
    assert direct[0] == 20_000_000


def test_a_server_that_dies_mid_call_fails_the_call_at_once(tmp_path):
    async def body(session: ClientSession) -> Any:
        started = time.monotonic()
        with pytest.raises(mcp.MCPError) as caught:
            await session.call_tool("die", {})
        return caught.value.error.code, time.monotonic() - started

    (direct_code, direct_time), (proxied_code, proxied_time) = both_ways(body, tmp_path)
    assert proxied_code == direct_code == -32000
    assert proxied_time < 10


# --- raw clients: the bytes themselves -------------------------------------------------------

INITIALIZE = (b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
              b'"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}\n'
              b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')


def call(id: int, name: str, arguments: bytes) -> bytes:
    return (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s",'
            b'"arguments":%s}}\n' % (id, name.encode(), arguments))


def run_raw(session: bytes, tmp_path: Path, *options: str, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **ENV}
    return subprocess.run([*PROXY[:-1], *options, "--", *SERVER], input=session,
                          capture_output=True, timeout=TIMEOUT, env=env, cwd=tmp_path, **kwargs)


def answers(output: bytes) -> dict[int, Any]:
    return {message["id"]: message for message in map(json.loads, output.splitlines())
            if "id" in message}


def test_integers_beyond_64_bits_arrive_byte_for_byte(tmp_path):
    session = INITIALIZE + call(1, "add", b'{"a":18446744073709551617,"b":-18446744073709551617}')
    done = run_raw(session, tmp_path, "--record", "session")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "session.client.jsonl").read_bytes() == session
    server_bytes = (tmp_path / "session.server.jsonl").read_bytes()
    assert done.stdout == server_bytes  # what the server wrote, byte for byte
    assert answers(done.stdout)[1]["result"]["structuredContent"] == {"result": 0}
    for name in ("session.client.jsonl", "session.server.jsonl"):  # rpcline check reads them
        check = subprocess.run([sys.executable, "-m", "rpcline", "check", name],
                               capture_output=True, cwd=tmp_path, timeout=TIMEOUT)
        assert check.returncode == 0, check.stdout


def test_a_3000_request_burst_before_reading(tmp_path):
    burst = b"".join(call(i, "echo", b'{"text":"%s"}' % (b"%d " % i * 30)) for i in range(1, 3001))
    assert len(burst) > 500_000
    done = run_raw(INITIALIZE + burst, tmp_path)
    assert done.returncode == 0, done.stderr
    got = answers(done.stdout)
    assert sorted(got) == list(range(3001))
    assert got[3000]["result"]["content"][0]["text"] == "3000 " * 30


def test_stdin_from_a_regular_file(tmp_path):
    session = tmp_path / "session.jsonl"
    session.write_bytes(INITIALIZE + b"".join(call(i, "add", b'{"a":%d,"b":1}' % i)
                                              for i in range(1, 51)))
    with session.open("rb") as stdin:
        done = subprocess.run([*PROXY, *SERVER], stdin=stdin, capture_output=True,
                              timeout=TIMEOUT, env={**os.environ, **ENV})
    assert done.returncode == 0, done.stderr
    got = answers(done.stdout)
    assert [got[i]["result"]["structuredContent"]["result"] for i in range(1, 51)] == [
        i + 1 for i in range(1, 51)]


def test_malformed_client_lines_are_answered_and_relaying_goes_on(tmp_path):
    session = INITIALIZE + b"".join([
        b"not json\n",
        b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":[1]}\n',
        b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n',
        b'{"jsonrpc":"2.0","id":5,"result":{}}\n',  # a response nobody asked for: silent
        b'[{"jsonrpc":"2.0","id":6,"method":"ping"}]\n',
        call(7, "echo", b'{"text":"still here"}'),
    ])
    done = run_raw(session, tmp_path)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    errors = [(r["id"], r["error"]["code"]) for r in replies if "error" in r]
    assert errors == [(None, -32700), ("x", -32602), (None, -32600), (None, -32600)]
    assert answers(done.stdout)[7]["result"]["content"][0]["text"] == "still here"
