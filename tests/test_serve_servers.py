"""Many servers behind one ``rpcline serve`` (issue 38): the ``mcpServers`` config and
mcp-proxy's flags, each server at ``/servers/NAME/mcp``, health, and reload on SIGHUP."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

pytest.importorskip("uvicorn", reason="uvicorn (the serve extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx comes with the MCP SDK")

from test_bridge import call_tool

from rpcline._cli.serve_apps import environment
from rpcline._gateway.child import child_environment
from rpcline._gateway.servers_config import ConfigError, ServerSpec, named_server, parse

PEER = [sys.executable, str(Path(__file__).parent / "bridge_peer.py")]
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}})


def peer(**entry: Any) -> dict[str, Any]:
    return {"command": PEER[0], "args": PEER[1:], **entry}


def request(id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}})


# --- the config --------------------------------------------------------------------------------

def test_the_mcp_servers_format_is_read_as_desktop_clients_write_it() -> None:
    notes: list[str] = []
    text = orjson.dumps({"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time", "--local-timezone=UTC"],
                 "env": {"TZ": "UTC"}, "cwd": "/srv", "timeout": 60, "autoApprove": []},
        "off": {"command": "x", "disabled": True},
        "also-off": {"command": "x", "enabled": False},
        "on": {"command": "y", "enabled": True, "disabled": False, "transportType": "stdio"},
        "remote": {"url": "https://example.com/mcp"},
        "sse": {"type": "sse", "command": "z"},
    }}, option=orjson.OPT_INDENT_2)
    found = parse(text, "mcp.json", notes.append)
    assert found == {
        "time": ServerSpec("time", ("uvx", "mcp-server-time", "--local-timezone=UTC"),
                           {"TZ": "UTC"}, "/srv"),
        "on": ServerSpec("on", ("y",)),
    }
    assert notes == ["remote: not a stdio server (it names a url or a type); skipped",
                     "sse: not a stdio server (it names a url or a type); skipped"]


@pytest.mark.parametrize(("text", "problem"), [
    (b'{"mcpServers": {\n  "a": {"command": "x",}\n}}', r"mcp\.json:2:\d+: not JSON: .+"),
    (b'{"servers": {}}', r'mcp\.json:1: no "mcpServers" object .+'),
    (b'{"mcpServers": {\n"a": {"command": "x"},\n"b": {"args": ["y"]}}}',
     r"""mcp\.json:3: server 'b': "command" must be a non-empty string"""),
    (b'{"mcpServers": {\n\n"b": {"command": "x", "args": "y"}}}',
     r"""mcp\.json:3: server 'b': "args" must be a list of strings"""),
    (b'{"mcpServers": {"b": {"command": "x", "env": {"K": 1}}}}',
     r"""mcp\.json:1: server 'b': "env" must map names to strings"""),
    (b'{"mcpServers": {"a/b": {"command": "x"}}}',
     r"mcp\.json:1: the server name 'a/b' is not a path segment .+"),
    (b'{"mcpServers": {"b": "x"}}', r"mcp\.json:1: server 'b': an object is expected"),
])
def test_a_config_that_cannot_be_served_is_one_line_naming_file_line_and_problem(
        text: bytes, problem: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse(text, "mcp.json")
    assert re.fullmatch(problem, str(raised.value)), str(raised.value)
    assert "\n" not in str(raised.value)


def test_named_server_splits_its_command_line_as_a_shell_would() -> None:
    assert named_server("git", "uvx mcp-server-git --repository '/a b'") == ServerSpec(
        "git", ("uvx", "mcp-server-git", "--repository", "/a b"))
    with pytest.raises(ConfigError, match="no command"):
        named_server("git", "  ")
    with pytest.raises(ConfigError, match="No closing quotation"):
        named_server("git", "uvx 'x")


def test_a_child_gets_the_base_environment_the_names_and_the_values_given(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RPCLINE_T_NAMED", "1")
    monkeypatch.setenv("RPCLINE_T_OTHER", "2")
    assert "RPCLINE_T_OTHER" not in child_environment(["RPCLINE_T_NAMED"])
    assert child_environment(["RPCLINE_T_NAMED"])["RPCLINE_T_NAMED"] == "1"
    given = child_environment({"RPCLINE_T_OTHER": "mine", "NEW": "3"})
    assert given["RPCLINE_T_OTHER"] == "mine" and given["NEW"] == "3"
    assert "RPCLINE_T_NAMED" not in given and given["PATH"] == os.environ["PATH"]
    everything = child_environment({"NEW": "3"}, everything=True)
    assert everything["RPCLINE_T_NAMED"] == "1" and everything["NEW"] == "3"
    assert environment(["RPCLINE_T_NAMED", "K=V=W", "RPCLINE_T_UNSET_X"]) == {
        "RPCLINE_T_NAMED": "1", "K": "V=W"}


def test_a_bad_config_stops_serve_with_one_line_and_status_2(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"a": {"command": 3}}}')
    for options in (["--config", str(config)], ["--named-server-config", str(config)],
                    ["--config", str(tmp_path / "missing.json")],
                    ["--named-server", "a b", "x"]):
        done = subprocess.run([sys.executable, "-m", "rpcline", "serve", "--port", "0",
                               *options], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
        assert done.stderr.startswith("rpcline serve: ")


# --- serving ---------------------------------------------------------------------------------------

class Serve:
    """``rpcline serve`` with the options given, its stderr collected as it comes."""

    def __init__(self, *options: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rpcline", "serve", "--port", "0", *options],
            stderr=subprocess.PIPE, text=True, env=env)
        self.lines: list[str] = []
        self._more = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        banner = self.wait_for(r"listening on http://127\.0\.0\.1:(\d+)/")
        self.url = f"http://127.0.0.1:{banner.group(1)}"

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self._more:
                self.lines.append(line.rstrip("\n"))
                self._more.notify_all()

    def wait_for(self, pattern: str, after: int = 0, timeout: float = 60) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        with self._more:
            while True:
                for line in self.lines[after:]:
                    if found := re.search(pattern, line):
                        return found
                left = deadline - time.monotonic()
                assert left > 0 and self.process.poll() is None, (pattern, self.lines)
                self._more.wait(left)

    def post(self, path: str, body: bytes, headers: dict[str, str] | None = None) -> Any:
        return httpx.post(self.url + path, content=body, headers=headers or HEADERS, timeout=30)

    def close(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        finally:
            self.process.kill()
            self.process.wait()


def write_config(path: Path, servers: dict[str, Any]) -> str:
    path.write_bytes(orjson.dumps({"mcpServers": servers}))
    return str(path)


def environment_of(serve: Serve, path: str, *names: str) -> dict[str, Any]:
    """The ``environment`` tool's answer from the server at ``path``, a 2026-07-28 call."""
    body, headers = call_tool(1, "environment", {"names": list(names)})
    answered = serve.post(path, body, headers)
    assert answered.status_code == 200, answered.text
    result: dict[str, Any] = answered.json()["result"]
    return result


def open_session(serve: Serve, path: str) -> dict[str, str]:
    opened = serve.post(path, INIT)
    assert opened.status_code == 200, opened.text
    assert opened.json()["result"]["serverInfo"]["name"] == "bridge-peer"
    return {**HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"]}


def test_each_named_server_is_served_at_its_path_in_both_eras_and_one_down_spares_the_rest(
        tmp_path: Path) -> None:
    folder = tmp_path / "beta-home"
    folder.mkdir()
    config = write_config(tmp_path / "mcp.json", {
        "alpha": peer(),
        "beta": peer(env={"BETA_SECRET": "b"}, cwd=str(folder)),
        "broken": {"command": "rpcline-no-such-server", "args": ["--flag"]},
        "off": peer(disabled=True),
    })
    serve = Serve("--config", config, "--named-server", "gamma", shlex.join(PEER),
                  "--", *PEER)
    try:
        serve.wait_for(r"broken: cannot run rpcline-no-such-server")
        for path in ("/servers/alpha/mcp", "/servers/gamma/mcp", "/mcp"):  # the 2025 era
            session = open_session(serve, path)
            pinged = serve.post(path, request(1, "ping"), session)
            assert pinged.status_code == 200 and pinged.json()["result"] == {}, path
        beta = environment_of(serve, "/servers/beta/mcp", "BETA_SECRET")  # 2026-07-28
        alpha = environment_of(serve, "/servers/alpha/mcp", "BETA_SECRET")
        assert beta["env"] == {"BETA_SECRET": "b"} and beta["cwd"] == str(folder)
        assert alpha["env"] == {"BETA_SECRET": None} and alpha["pid"] != beta["pid"]
        for path in ("/servers/off/mcp", "/servers/nobody/mcp", "/servers/alpha",
                     "/servers/", "/elsewhere"):
            assert serve.post(path, INIT).status_code == 404, path
        down = serve.post("/servers/broken/mcp", *call_tool(1, "x", {}))
        assert down.json()["error"]["data"].startswith("cannot run rpcline-no-such-server")

        assert httpx.get(serve.url + "/healthz", timeout=30).json() == {"status": "ok"}
        ready = httpx.get(serve.url + "/readyz", timeout=30)
        assert ready.status_code == 503
        shown = ready.json()
        assert shown["ready"] is False
        assert {name: s["state"] for name, s in shown["servers"].items()} == {
            "alpha": "up", "beta": "up", "gamma": "up", "broken": "down"}
        assert shown["default"]["state"] == "up" and shown["default"]["sessions"] == 1
        assert shown["servers"]["alpha"]["sessions"] == 1
        [child] = shown["servers"]["beta"]["children"]  # beta's 2026 child: a call started it
        assert child["pid"] == beta["pid"] and child["era"] == "2026"
        assert child["rss_kb"] > 1000 and child["fds"] >= 3  # a Python process; stdio at least
        for secret in ("bridge_peer", "no-such", "--flag", "BETA_SECRET", str(folder)):
            assert secret not in ready.text
        assert httpx.post(serve.url + "/readyz", timeout=30).status_code == 405
    finally:
        serve.close()
    assert serve.process.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM)  # a clean stop


def test_every_server_ready_is_readyz_200() -> None:
    serve = Serve("--named-server", "alpha", shlex.join(PEER))
    try:
        serve.wait_for(r"alpha: 2026-1: started")
        deadline = time.monotonic() + 60
        # The "started" line may come a moment before the pool files the child as up; starting
        # is ready too, so every answer meanwhile is already 200.
        while (ready := httpx.get(serve.url + "/readyz", timeout=30)).json()[
                "servers"]["alpha"]["state"] != "up":
            assert ready.status_code == 200, ready.text
            assert time.monotonic() < deadline, ready.text  # starting: its probe answered soon
            time.sleep(0.05)
        assert ready.status_code == 200, ready.text
        assert "default" not in ready.json()
        assert serve.post("/mcp", INIT).status_code == 404  # no server at /mcp
    finally:
        serve.close()


@pytest.mark.parametrize("public", [False, True], ids=["guarded", "public"])
def test_the_bearer_token_guards_health_unless_health_public(public: bool) -> None:
    env = {**os.environ, "RPCLINE_T_TOKEN": "s3cret"}
    serve = Serve("--token-env", "RPCLINE_T_TOKEN", *(["--health-public"] if public else []),
                  "--named-server", "alpha", shlex.join(PEER), env=env)
    try:
        for path in ("/healthz", "/readyz"):
            bare = httpx.get(serve.url + path, timeout=30)
            carried = httpx.get(serve.url + path, timeout=30,
                                headers={"Authorization": "Bearer s3cret"})
            assert bare.status_code == (401 if not public else carried.status_code), path
            assert carried.status_code in (200, 503), path
        assert serve.post("/servers/alpha/mcp", INIT).status_code == 401  # the servers: always
    finally:
        serve.close()


def test_sighup_reloads_the_config_and_leaves_the_other_servers_sessions_alone(
        tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    config = write_config(path, {"alpha": peer(), "beta": peer(), "gamma": peer(env={"V": "1"})})
    serve = Serve("--config", config)
    try:
        session = open_session(serve, "/servers/alpha/mcp")
        alpha = environment_of(serve, "/servers/alpha/mcp")["pid"]
        gamma = environment_of(serve, "/servers/gamma/mcp", "V")
        assert gamma["env"] == {"V": "1"}

        seen = len(serve.lines)
        write_config(path, {"alpha": peer(), "gamma": peer(env={"V": "2"}), "delta": peer()})
        serve.process.send_signal(signal.SIGHUP)
        serve.wait_for(r"reloaded: delta added, beta removed, gamma restarted, 1 unchanged",
                       after=seen)
        pinged = serve.post("/servers/alpha/mcp", request(7, "ping"), session)
        assert pinged.status_code == 200 and pinged.json() == {
            "jsonrpc": "2.0", "id": 7, "result": {}}  # the same session, the same child
        assert environment_of(serve, "/servers/alpha/mcp")["pid"] == alpha
        assert serve.post("/servers/beta/mcp", INIT).status_code == 404
        changed = environment_of(serve, "/servers/gamma/mcp", "V")
        assert changed["env"] == {"V": "2"} and changed["pid"] != gamma["pid"]
        open_session(serve, "/servers/delta/mcp")
        serve.wait_for(r"beta: .*children started: 1 for 2026-07-28", after=seen)  # drained

        seen = len(serve.lines)
        path.write_text('{"mcpServers": {"alpha": ')
        serve.process.send_signal(signal.SIGHUP)
        refused = serve.wait_for(r"reload refused, the running config stays: (.*)", after=seen)
        assert refused.group(1).startswith(f"{path}:1:")
        pinged = serve.post("/servers/alpha/mcp", request(8, "ping"), session)
        assert pinged.json()["result"] == {}
        assert serve.post("/servers/delta/mcp", INIT).status_code == 200
    finally:
        serve.close()
    assert serve.process.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM)  # a clean stop


def test_pass_environment_and_env_values_reach_every_server() -> None:
    env = {**os.environ, "RPCLINE_T_ALL": "all", "RPCLINE_T_NAMED": "named"}
    plain = Serve("--env", "RPCLINE_T_NAMED", "--env", "GIVEN=value", "--named-server",
                  "alpha", shlex.join(PEER), env=env)
    try:
        shown = environment_of(plain, "/servers/alpha/mcp", "RPCLINE_T_ALL",
                               "RPCLINE_T_NAMED", "GIVEN")["env"]
        assert shown == {"RPCLINE_T_ALL": None, "RPCLINE_T_NAMED": "named", "GIVEN": "value"}
    finally:
        plain.close()
    everything = Serve("--pass-environment", "--named-server", "alpha", shlex.join(PEER),
                       env=env)
    try:
        shown = environment_of(everything, "/servers/alpha/mcp", "RPCLINE_T_ALL")["env"]
        assert shown == {"RPCLINE_T_ALL": "all"}
    finally:
        everything.close()


# --- the router in a user's own app ------------------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_router_mounted_in_an_app_serves_its_servers_below_the_mount(
        anyio_backend: str) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from rpcline.bridge import Router, StdioBridge

    router = Router({"alpha": StdioBridge(PEER, name="alpha"),
                     "beta": StdioBridge(PEER, name="beta")}, warm=False)
    app = Starlette(routes=[Mount("/gateway", app=router)])
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000",
                                     timeout=30) as http:
            served = await http.post("/gateway/servers/beta/mcp", headers=HEADERS, content=INIT)
            unknown = await http.post("/gateway/servers/gamma/mcp", headers=HEADERS,
                                      content=INIT)
            ready = await http.get("/gateway/readyz")
    finally:
        await router.aclose()
    assert served.status_code == 200 and "mcp-session-id" in served.headers
    assert unknown.status_code == 404
    states = {name: health["state"] for name, health in ready.json()["servers"].items()}
    assert states == {"alpha": "idle", "beta": "up"}  # not warmed: alpha never started
    assert ready.status_code == 200


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_router_owns_its_servers_lifespan(anyio_backend: str) -> None:
    import asyncio

    from rpcline.bridge import Router, StdioBridge

    servers = {"alpha": StdioBridge(PEER, name="alpha"), "beta": StdioBridge(PEER, name="beta")}
    router = Router(servers)
    events: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    sent: list[str] = []

    async def send(message: Any) -> None:
        sent.append(message["type"])

    lifespan = asyncio.ensure_future(router({"type": "lifespan"}, events.get, send))
    await events.put({"type": "lifespan.startup"})
    deadline = asyncio.get_running_loop().time() + 60
    while not all(server.modern.children[0].running for server in servers.values()):
        assert asyncio.get_running_loop().time() < deadline  # warmed: started at once
        await asyncio.sleep(0.02)
    await events.put({"type": "lifespan.shutdown"})
    await asyncio.wait_for(lifespan, 60)
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    for server in servers.values():
        assert server.health()["state"] == "stopping"
        assert server.modern.children[0].child.returncode is not None  # stopped, not orphaned
    with pytest.raises(RuntimeError, match="stopping"):  # a server started now would outlive it
        router.replace({"gamma": StdioBridge(PEER, name="gamma")})
    assert router.readiness()[1] is False


def test_the_example_config_is_one_serve_reads() -> None:
    example = Path(__file__).parents[1] / "examples" / "mcp_servers.json"
    if not example.exists():
        pytest.skip("needs a clone's examples")
    found = parse(example.read_bytes(), str(example))
    assert sorted(found) == ["git", "time"]  # fetch is disabled
    assert found["time"].command == ("uvx", "mcp-server-time", "--local-timezone=UTC")


def test_an_entry_s_scopes_are_oauth_scope_tokens() -> None:
    found = parse(b'{"mcpServers": {"git": {"command": "x", "scopes": ["git:write", "a"]}}}')
    assert found["git"].scopes == ("git:write", "a")
    for bad in (b'"git write"', b'["git write"]', b'[3]', b'["a\\"b"]'):
        with pytest.raises(ConfigError, match='"scopes" must be a list of OAuth scope tokens'):
            parse(b'{"mcpServers": {"git": {"command": "x", "scopes": %s}}}' % bad)


def test_an_entry_s_isolation_is_one_of_the_modes() -> None:
    found = parse(b'{"mcpServers": {"a": {"command": "x", "isolation": "session"}, '
                  b'"b": {"command": "x"}}}')
    assert found["a"].isolation == "session" and found["b"].isolation is None
    assert found["a"] != ServerSpec("a", ("x",))  # a reload restarts a server it changed
    for bad in (b'"private"', b'true', b'["session"]'):
        with pytest.raises(ConfigError, match='"isolation" must be one of shared, session, '
                                              'identity'):
            parse(b'{"mcpServers": {\n"a": {"command": "x", "isolation": %s}}}' % bad, "m")


ENVIRONMENT = request(1, "tools/call", {"name": "environment", "arguments": {"names": []}})


def test_an_entry_s_isolation_is_its_own_and_the_flag_s_is_the_rest_s(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {
        "own": peer(isolation="session"), "flagged": peer(), "kept": peer(isolation="shared")})
    serve = Serve("--config", config, "--isolation", "session", "--max-children", "4")
    try:
        pids = {}
        for name in ("own", "flagged", "kept"):
            path = f"/servers/{name}/mcp"
            pids[name] = set()
            for _ in range(2):  # two sessions each: a child each, or one child for both
                session = open_session(serve, path)
                answer = serve.post(path, ENVIRONMENT, session).json()
                pids[name].add(answer["result"]["pid"])
        assert len(pids["own"]) == 2 and len(pids["flagged"]) == 2  # the flag's, as it says
        assert len(pids["kept"]) == 1  # the entry's "shared" wins over --isolation session
        shown = httpx.get(serve.url + "/readyz", timeout=30).json()["servers"]
        assert shown["own"]["own_children"] == 2 and "own_children" not in shown["kept"]
        # Children of one's own are listed, each with what it costs.
        assert {child["pid"] for child in shown["own"]["children"]} == pids["own"]
        assert all(child["rss_kb"] > 1000 and child["fds"] >= 3
                   for child in shown["own"]["children"])
    finally:
        serve.close()


@pytest.mark.parametrize(("entry", "flags", "said"), [
    ({"isolation": "identity"}, [], '"isolation": "identity" needs --auth-issuer'),
    ({}, ["--prestart", "1"], "--prestart: only with --isolation session or identity"),
], ids=["identity-without-issuer", "prestart-with-nothing-isolated"])
def test_isolation_options_the_config_cannot_use_are_one_line_and_status_2(
        tmp_path: Path, entry: dict[str, Any], flags: list[str], said: str) -> None:
    config = write_config(tmp_path / "mcp.json", {"a": peer(**entry)})
    done = subprocess.run([sys.executable, "-m", "rpcline", "serve", "--port", "0",
                           "--config", config, *flags], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_prestart_serves_a_config_entry_of_its_own_isolation(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"a": peer(isolation="session"),
                                                  "b": peer()})
    serve = Serve("--config", config, "--prestart", "1")
    try:
        path = "/servers/a/mcp"
        session = open_session(serve, path)
        answer = serve.post(path, ENVIRONMENT, session)
        assert answer.status_code == 200 and answer.json()["result"]["pid"], answer.text
    finally:
        serve.close()


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs Linux's /proc")
def test_a_child_s_usage_is_read_from_proc_and_none_once_it_is_gone() -> None:
    from rpcline._gateway.bridge_health import usage

    rss_kb, fds = usage(os.getpid())
    assert rss_kb is not None and rss_kb > 1000 and fds is not None and fds >= 3
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # reaped: its pid names nothing now
    assert usage(gone.pid) == (None, None)
