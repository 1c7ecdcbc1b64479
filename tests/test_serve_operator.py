"""``rpcline serve`` as an operator meets it on the first day (issue 44): a wrong command,
a record to tail, a bridge mounted in an app, a subscription the server refused, the words
of ``--help`` and of the docs a clone user follows."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

pytest.importorskip("uvicorn", reason="uvicorn (the serve extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx (the interop extra) is not installed")
pytest.importorskip("anyio", reason="anyio comes with the interop extra")

from _asgi import serving

from rpcline.bridge import StdioBridge

PEER = [sys.executable, str(Path(__file__).parent / "bridge_peer.py")]
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}})
ROOT = Path(__file__).parents[1]


def request(id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}})


def test_a_command_that_cannot_run_is_caught_at_start_up() -> None:
    for command in ("no-such-mcp-server-anywhere", "/no/such/dir/server"):
        done = subprocess.run([sys.executable, "-m", "rpcline", "serve", "--port", "0", "--",
                               command, "--flag"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines() == [f"rpcline serve: cannot run {command}: no such "
                                            "executable" + ("" if "/" in command else " on PATH")]


@pytest.mark.anyio
async def test_the_record_is_written_as_lines_come(tmp_path: Path) -> None:
    app = StdioBridge(PEER, record=str(tmp_path / "rec"))
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            opened = await http.post(url, headers=HEADERS, content=INIT)
            session = {**HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
            await http.post(url, headers=session, content=request(5, "ping"))
            sent = (tmp_path / "rec.2025-1.client.jsonl").read_bytes()  # still serving
            written = (tmp_path / "rec.2025-1.server.jsonl").read_bytes()
    finally:
        await app.aclose()
    assert b'"method":"ping"' in sent and b'"method":"initialize"' in sent
    assert written.count(b"\n") == 2  # the handshake's answer and the ping's


@pytest.mark.anyio
async def test_a_mounted_bridge_serves_below_its_mount() -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    bridge = StdioBridge(PEER)
    app = Starlette(routes=[Mount("/github", app=bridge)])
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000",
                                     timeout=20) as http:
            mounted = await http.post("/github/mcp", headers=HEADERS, content=INIT)
            elsewhere = await http.post("/github/other", headers=HEADERS, content=INIT)
    finally:
        await bridge.aclose()
    assert mounted.status_code == 200, mounted.text
    assert mounted.json()["result"]["serverInfo"]["name"] == "bridge-peer"
    assert elsewhere.status_code == 404


@pytest.mark.anyio
async def test_a_subscription_the_server_refused_is_not_recorded() -> None:
    app = StdioBridge(PEER)
    updated = [{"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"uri": uri}} for uri in ("test://refused", "test://a")]
    seen: list[Any] = []
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            opened = await http.post(url, headers=HEADERS, content=INIT)
            session = {**HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
            refused = await http.post(url, headers=session, content=request(
                1, "resources/subscribe", {"uri": "test://refused"}))
            accepted = await http.post(url, headers=session, content=request(
                2, "resources/subscribe", {"uri": "test://a"}))

            async def listen() -> None:
                async with http.stream("GET", url, headers=session) as stream:
                    async for line in stream.aiter_lines():
                        if line.startswith("data: "):
                            seen.append(json.loads(line[6:]))

            listening = asyncio.create_task(listen())
            await asyncio.sleep(0.3)
            await http.post(url, headers=session, content=request(3, "tools/call", {
                "name": "notify", "arguments": {"messages": updated}}))
            await asyncio.sleep(0.3)
            listening.cancel()
    finally:
        await app.aclose()
    assert refused.json()["error"]["code"] == -32601 and accepted.json()["result"] == {}
    assert seen == [updated[1]]


def test_help_says_the_allow_lists_replace_the_defaults_and_what_a_child_gets() -> None:
    done = subprocess.run([sys.executable, "-m", "rpcline", "serve", "--help"],
                          capture_output=True, text=True, timeout=60, env={"COLUMNS": "200",
                          **{k: v for k, v in __import__("os").environ.items()}})
    text = " ".join(done.stdout.split())
    assert text.count("replaces the default") == 2
    assert "PATH, HOME, LANG, LC_ALL, TMPDIR and SYSTEMROOT" in text


def test_install_commands_in_the_docs_work_from_a_clone() -> None:
    # There is no release on PyPI yet: every `pip install 'rpcline[...]'` says it is for one.
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").glob(
            "*.py"), ROOT / "src" / "rpcline" / "sdk.py", ROOT / "src" / "rpcline" / "_cli" /
            "serve.py"]:
        if not path.exists():
            continue
        text = " ".join(path.read_text().split())
        for match in re.finditer(r"pip install '?rpcline\[", text):
            around = text[max(0, match.start() - 160):match.end() + 160]
            assert "release" in around, (path.name, around)


@pytest.mark.anyio
async def test_the_request_log_names_each_request_and_never_its_token() -> None:
    lines: list[str] = []
    app = StdioBridge(PEER, token="s3cret-token", access_log=lines.append)
    authorized = {**HEADERS, "Authorization": "Bearer s3cret-token"}
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            opened = await http.post(url, headers=authorized, content=INIT)
            session = {**authorized, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
            await http.post(url, headers=session, content=request(1, "tools/call", {
                "name": "echo\nforged", "arguments": {"secret": "argument"}}))
            await http.post(url, headers=HEADERS, content=INIT)  # no token: 401
            await http.post(url, headers={**authorized, "Host": "evil.example"}, content=INIT)
    finally:
        await app.aclose()
    assert len(lines) == 4, lines
    pattern = r'127\.0\.0\.1:\d+ "POST /mcp" {} ?{}[0-9.]+ ms'
    assert re.fullmatch(pattern.format(200, "initialize "), lines[0]), lines[0]
    assert re.fullmatch(pattern.format(200, r"tools/call echo\\nforged "), lines[1]), lines[1]
    assert re.fullmatch(pattern.format(401, ""), lines[2]), lines[2]
    assert re.fullmatch(pattern.format(421, ""), lines[3]), lines[3]
    assert not any("s3cret" in line or "argument" in line for line in lines)


def _serve(*options: str, **popen: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "rpcline", "serve", *options, "--", *PEER],
                            stderr=subprocess.PIPE, text=True, **popen)


def _banner(serve: subprocess.Popen[str]) -> str:
    assert serve.stderr is not None
    return serve.stderr.readline()


def test_a_port_in_use_is_one_line_and_status_3() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "rpcline", "serve", "--port", str(port),
                               "--", *PEER], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert done.stderr.splitlines() == [f"rpcline serve: cannot listen on 127.0.0.1:{port}: "
                                        "Address already in use"]


@pytest.mark.parametrize("ignored", [False, True], ids=["from-a-terminal", "sigint-ignored"])
def test_the_banner_comes_once_bound_and_ctrl_c_exits_130(ignored: bool) -> None:
    # A background job of a script starts with SIGINT ignored; it is still stopped by it
    # (uvicorn's handler), and must say so in its status as in a terminal.
    import signal

    def ignore_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    serve = _serve("--port", "0", preexec_fn=ignore_sigint if ignored else None)
    try:
        banner = _banner(serve)
        match = re.fullmatch(r"rpcline serve: listening on http://127\.0\.0\.1:(\d+)/mcp for "
                             r".*bridge_peer\.py\n", banner)
        assert match and int(match.group(1)) > 0, banner
        ping = httpx.post(f"http://127.0.0.1:{match.group(1)}/mcp", headers=HEADERS,
                          content=INIT, timeout=30)  # bound: served at once
        assert ping.status_code == 200
        serve.send_signal(signal.SIGINT)
        assert serve.wait(timeout=60) == 130
    finally:
        serve.kill()
        serve.wait()


def test_a_child_s_death_is_one_line_and_a_call_in_its_backoff_is_told_when() -> None:
    # The child kills itself at once, while idle; a call that comes during the backoff
    # before its restart fails with how it ended and when the next one starts.
    from rpcline import route
    from rpcline._gateway.shared_child import Call, Limits, SharedChild

    async def main() -> tuple[bytes | None, list[str]]:
        log: list[str] = []
        child = SharedChild("2025-1", [sys.executable, "-c",
                                       "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"],
                            limits=Limits(), env=None, cwd=None, log=log.append,
                            on_notification=lambda child, r: None)
        await child.start()
        # As soon as its exit is known, well within the backoff. Not ``child.running``: that
        # ends when the closing of its stdin is seen, which may come a moment before the
        # exit, and a call then is told only that ("the server closed its input").
        exited = child.child.exited_now
        assert exited is not None
        await asyncio.wait_for(asyncio.shield(exited), 30)
        call = Call(7)
        child.forward(route(request(7, "ping")), call)
        await child.stop()
        return call.answer, log

    answer, log = asyncio.run(main())
    assert answer is not None
    data = orjson.loads(answer)["error"]["data"]
    assert re.fullmatch(r"the server was killed by SIGKILL; restarting in 0\.\d+ s", data), data
    deaths = [line for line in log if "SIGKILL" in line]
    assert deaths == ["2025-1: the server was killed by SIGKILL; started again for the next "
                      "call in 0.25 s"], log


@pytest.mark.parametrize("choice", ["prefix", "inherit", "discard", "file"])
def test_a_child_s_stderr_goes_where_child_stderr_says(choice: str, tmp_path: Path) -> None:
    import os
    import signal

    option = f"file:{tmp_path / 'children.log'}" if choice == "file" else choice
    env = {**os.environ, "PEER_STDERR": "first line\nlast, unended"}
    serve = subprocess.Popen([sys.executable, "-m", "rpcline", "serve", "--port", "0",
                              "--child-stderr", option, "--env", "PEER_STDERR", "--", *PEER],
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        port = re.search(r":(\d+)/mcp", _banner(serve)).group(1)  # type: ignore[union-attr]
        opened = httpx.post(f"http://127.0.0.1:{port}/mcp", headers=HEADERS, content=INIT,
                            timeout=30)
        assert opened.status_code == 200
        serve.send_signal(signal.SIGINT)
        _, err = serve.communicate(timeout=60)
    finally:
        serve.kill()
        serve.wait()
    pid = r"\d+"
    lines = err.splitlines()
    if choice == "prefix":
        name = re.escape(Path(PEER[0]).name)
        said = [line for line in lines if "first line" in line or "unended" in line]
        assert len(said) == 2 and all(re.fullmatch(
            rf"\[{name} 2025-1 {pid}\] (first line|last, unended)", line) for line in said), err
    elif choice == "inherit":
        assert "first line" in lines and "last, unended" in err
    elif choice == "discard":
        assert "first line" not in err and "unended" not in err
    else:
        assert (tmp_path / "children.log").read_text() == "first line\nlast, unended"
        assert "first line" not in err


def test_a_child_stderr_that_is_no_choice_is_a_usage_error() -> None:
    done = subprocess.run([sys.executable, "-m", "rpcline", "serve", "--child-stderr", "file:",
                           "--", *PEER], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "inherit, prefix, discard or file:PATH" in done.stderr


def test_a_child_stopped_without_grace_is_not_said_to_have_overstayed_it() -> None:
    from rpcline._gateway.shared_child import Limits, SharedChild

    async def main() -> list[str]:
        log: list[str] = []
        child = SharedChild("2026-1", [sys.executable, "-c", "import time; time.sleep(60)"],
                            limits=Limits(), env=None, cwd=None, log=log.append,
                            on_notification=lambda child, r: None)
        await child.start()
        await child.stop(grace=0)  # as a child that failed its probe or handshake is stopped
        return log

    log = asyncio.run(main())
    assert not any("within 0 s" in line for line in log), log
