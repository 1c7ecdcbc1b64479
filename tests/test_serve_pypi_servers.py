"""Real servers, not only our own (issue 38): third-party stdio MCP servers from PyPI behind
``rpcline serve --config``, for clients of both eras.

Each server (pinned in tests/pypi_servers.py, in a venv of its own) is asked the same
through the gateway at ``/servers/NAME/mcp`` by the official SDK's client, in the 2025
era (``legacy``: initialize and a session) and in 2026-07-28's stateless one, as over
stdio directly by the same client: the oracle. Three of them run on the handshake-era SDK
(``mcp<2``), which speaks only the 2025 protocol; the gateway translates for 2026-07-28
clients. One config entry cannot run: /readyz says so, and the others serve on.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed")
pytest.importorskip("uvicorn", reason="uvicorn (the serve extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx comes with the MCP SDK")
pytestmark = pytest.mark.real_parts

from mcp.client.stdio import StdioServerParameters
from mcp_types import SERVER_INFO_META_KEY
from pypi_servers import SERVERS, Unavailable, install_all
from test_serve_servers import Serve, write_config

MODES = ["legacy", "2026-07-28"]
BROKEN = "no-such"  # the config entry whose command cannot run


@pytest.fixture(scope="session")
def pypi_servers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | Unavailable]:
    """Each server's console script, or why it could not be installed; in
    RPCLINE_TEST_PYPI_SERVERS_DIR (reused when it holds the pinned versions) or a tmp dir."""
    named = os.environ.get("RPCLINE_TEST_PYPI_SERVERS_DIR")
    return install_all(Path(named) if named else tmp_path_factory.mktemp("pypi-servers"))


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository with one commit, for mcp-server-git."""
    root = tmp_path_factory.mktemp("repo")
    identity = ["-c", "user.name=rpcline", "-c", "user.email=rpcline@example.invalid"]
    (root / "README").write_text("rpcline's test repository\n")
    for args in (["init", "-q", "-b", "main"], ["add", "README"],
                 [*identity, "commit", "-q", "-m", "The one commit"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, timeout=60)
    return root


def arguments(name: str, repository: Path) -> list[str]:
    if name.startswith("time"):
        return ["--local-timezone=UTC"]
    if name == "git":
        return ["--repository", str(repository)]
    return []


@pytest.fixture(scope="module")
def gateway(pypi_servers: dict[str, Path | Unavailable], repository: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    """``rpcline serve --config`` with every server installed, and one that cannot run."""
    servers: dict[str, Any] = {
        name: {"command": str(command), "args": arguments(name, repository)}
        for name, command in pypi_servers.items() if isinstance(command, Path)}
    if not servers:
        pytest.skip("; ".join(str(reason) for reason in pypi_servers.values()))
    servers[BROKEN] = {"command": "rpcline-no-such-server"}
    config = write_config(tmp_path_factory.mktemp("config") / "mcp.json", servers)
    serve = Serve("--config", config)
    try:
        yield serve
    finally:
        serve.close()


def command_of(pypi_servers: dict[str, Path | Unavailable], name: str) -> Path:
    command = pypi_servers[name]
    if isinstance(command, Unavailable):
        pytest.skip(str(command))
    return command


def unstamped(answer: dict[str, Any], stamp: dict[str, Any] | None) -> dict[str, Any]:
    """A 2026-07-28 answer without its serverInfo stamp (which must be ``stamp``: what the
    server said in its initialize result), which handshake-era answers never carry."""
    meta = answer["meta"] or {}
    assert meta.pop(SERVER_INFO_META_KEY, None) == stamp
    answer["meta"] = meta or None
    return answer


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text)


def time_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """mcp-server-time's answer with each ISO datetime as its wall clock time and offset
    (and its day of the week dropped): what cannot change between two calls a moment apart,
    unless across midnight; get_current_time's time of day must be now, give or take."""
    def fixed(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: fixed(v, k) for k, v in value.items() if k != "day_of_week"}
        if key == "datetime":
            return moment(value).timetz().isoformat()
        return value

    answer = dict(answer)
    answer["content"] = [{**part, "text": fixed(json.loads(part["text"]))}
                         for part in answer["content"]]
    if answer.get("structured_content") is not None:
        answer["structured_content"] = fixed(answer["structured_content"])
    return answer


def current_time(answer: dict[str, Any]) -> dict[str, Any]:
    """get_current_time's answer, its moment checked against the clock and then left out."""
    def checked(value: dict[str, Any]) -> dict[str, Any]:
        when = moment(value["datetime"])
        assert when.utcoffset() == timedelta(0), value
        assert abs(when - datetime.now(UTC)) < timedelta(minutes=5), value
        return {k: v for k, v in value.items() if k not in ("datetime", "day_of_week")}

    answer = dict(answer)
    answer["content"] = [{**part, "text": checked(json.loads(part["text"]))}
                         for part in answer["content"]]
    if answer.get("structured_content") is not None:
        answer["structured_content"] = checked(answer["structured_content"])
    return answer


async def ask(client: Any, name: str, repository: Path) -> dict[str, Any]:
    """What the oracle compares, from one server: its tools, and for time and git, calls."""
    tools = await client.list_tools()
    got: dict[str, Any] = {"tools/list": tools.model_dump(mode="json")}
    if name.startswith("time"):
        now = await client.call_tool("get_current_time", {"timezone": "UTC"})
        converted = await client.call_tool("convert_time", {
            "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})
        got["get_current_time"] = now.model_dump(mode="json")
        got["convert_time"] = converted.model_dump(mode="json")
    elif name == "git":
        for tool in ("git_status", "git_log"):
            called = await client.call_tool(tool, {"repo_path": str(repository)})
            got[tool] = called.model_dump(mode="json")
    return got


def comparable(got: dict[str, Any], stamp: dict[str, Any] | None) -> dict[str, Any]:
    """``got`` unstamped (a 2026-07-28 client's; None: a 2025 one's), the times fixed."""
    got = copy.deepcopy(got)
    if stamp is not None:
        got = {method: unstamped(answer, stamp) for method, answer in got.items()}
    if "get_current_time" in got:
        got["get_current_time"] = current_time(got["get_current_time"])
        got["convert_time"] = time_answer(got["convert_time"])
    return got


_direct: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}


async def over_stdio(command: Path, name: str, repository: Path) -> tuple[dict[str, Any],
                                                                          dict[str, Any]]:
    """The oracle: what the SDK's client gets from the server over stdio, in the era every
    one of these speaks (the handshake), and the serverInfo it gave; asked once a server."""
    if name not in _direct:
        direct = StdioServerParameters(command=str(command), args=arguments(name, repository))
        async with mcp.Client(direct, mode="legacy") as client:
            got = await ask(client, name, repository)
            assert client.server_info is not None
            info = client.server_info.model_dump(mode="json", exclude_none=True)
        _direct[name] = got, info
    return _direct[name]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(SERVERS))
async def test_a_pypi_server_answers_through_the_gateway_as_over_stdio(
        pypi_servers: dict[str, Path | Unavailable], repository: Path, name: str, mode: str,
        request: pytest.FixtureRequest) -> None:
    command = command_of(pypi_servers, name)  # or skipped, saying why: before the gateway
    gateway: Serve = request.getfixturevalue("gateway")
    expected, info = await over_stdio(command, name, repository)
    async with mcp.Client(f"{gateway.url}/servers/{name}/mcp", mode=mode) as client:
        got = await ask(client, name, repository)
    tools = [tool["name"] for tool in expected["tools/list"]["tools"]]
    assert tools and all(tools), expected  # never equal by being empty
    assert [tool["name"] for tool in got["tools/list"]["tools"]] == tools
    assert comparable(got, info if mode != "legacy" else None) == comparable(expected, None)
    if name.startswith("time"):
        assert {"get_current_time", "convert_time"} <= set(tools)
        assert not got["convert_time"]["is_error"]
        shown = json.loads(got["convert_time"]["content"][0]["text"])
        assert shown["target"]["timezone"] == "Asia/Tokyo"
        assert shown["target"]["datetime"].endswith("T21:00:00+09:00")
    if name == "git":
        assert "The one commit" in got["git_log"]["content"][0]["text"]
        assert not got["git_status"]["is_error"]


def test_readyz_names_the_server_that_cannot_start_and_the_others_serve_on(
        pypi_servers: dict[str, Path | Unavailable], gateway: Serve) -> None:
    installed = [name for name, command in pypi_servers.items() if isinstance(command, Path)]
    gateway.wait_for(rf"{BROKEN}: cannot run rpcline-no-such-server")
    deadline = time.monotonic() + 60
    while True:  # until every child that starts has started (or is idle: not asked yet)
        ready = httpx.get(gateway.url + "/readyz", timeout=30)
        states = {name: s["state"] for name, s in ready.json()["servers"].items()}
        if not {"starting", "restarting"} & set(states.values()):
            break
        assert time.monotonic() < deadline, states
        time.sleep(0.1)
    assert ready.status_code == 503 and ready.json()["ready"] is False
    assert states.pop(BROKEN) == "down"
    assert set(states) == set(installed)
    assert set(states.values()) <= {"up", "idle"}, states
    for name in installed:  # and they serve, the one down beside them
        listed = httpx.post(f"{gateway.url}/servers/{name}/mcp", timeout=60, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}},
            headers={"Accept": "application/json, text/event-stream",
                     "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
        assert listed.status_code == 200, listed.text
        assert listed.json()["result"]["tools"], name
