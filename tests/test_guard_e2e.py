"""End to end: rpcline.http.Guard in front of the official SDK's Streamable HTTP server.

tests/guard_server.py runs uvicorn in a subprocess on 127.0.0.1, serving one SDK app at
``/guarded/mcp`` behind the Guard and at ``/bare/mcp`` without it. The SDK's own client
runs the same session against both, in the 2025 era (``mode="legacy"``: initialize,
sessions) and the 2026 era (the default ``mode="auto"``: stateless, mirrored headers);
httpx sends what no client should: forged and hostile headers, 100 MB bodies.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed: there is no Streamable HTTP server to guard")
pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed")
anyio = pytest.importorskip("anyio", reason="anyio comes with the MCP SDK")
httpx = pytest.importorskip("httpx", reason="httpx comes with the MCP SDK's dependencies")

from rpcline import http  # noqa: E402

HERE = Path(__file__).parent
V = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientInfo": {"name": "forger", "version": "1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
BOUND = 4 * 1024 * 1024  # the Guard's default, and the SDK's


class Server:
    def __init__(self, process: subprocess.Popen, port: int) -> None:
        self.process = process
        self.base = f"http://127.0.0.1:{port}"

    def url(self, guarded: bool) -> str:
        return f"{self.base}/{'guarded' if guarded else 'bare'}/mcp"

    def status(self, field: str) -> int:
        """A /proc/PID/status figure of the server, in bytes (VmRSS, VmHWM)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
        raise LookupError(field)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    process = subprocess.Popen([sys.executable, str(HERE / "guard_server.py")],
                               stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 30)
        line = process.stdout.readline() if ready else ""
        if not line[:1].isdigit():
            pytest.fail(f"tests/guard_server.py did not start (exit {process.poll()})")
        yield Server(process, int(line.split()[0]))
    finally:
        process.terminate()
        process.wait(10)


async def session(url: str, mode: str) -> list[Any]:
    async with mcp.Client(url, mode=mode) as client:
        results = [
            await client.list_tools(),
            await client.call_tool("add", {"a": 2**70, "b": 1}),
            await client.call_tool("echo", {"text": "é\n\u2028" + "x" * 100_000}),
            await client.call_tool("weather", {"region": "Zürich", "days": 3}),
            await client.call_tool("weather", {"region": "eu-west"}),
            await client.call_tool("nope", {}),
        ]
        return [client.protocol_version, *(r.model_dump(mode="json") for r in results)]


@pytest.mark.parametrize(("mode", "era"), [("legacy", "2025-11-25"), ("auto", V)])
def test_the_sdk_client_runs_the_same_session_guarded_and_bare(
    server: Server, mode: str, era: str
) -> None:
    async def both() -> tuple[list[Any], list[Any]]:
        with anyio.fail_after(30):
            return await session(server.url(False), mode), await session(server.url(True), mode)

    bare, guarded = anyio.run(both)
    assert guarded == bare
    assert guarded[0] == era
    assert guarded[2]["structured_content"] == {"result": 2**70 + 1}
    assert "Zürich" in json.dumps(guarded[4], ensure_ascii=False)


def post(method: str, params: Any, **headers: Any) -> tuple[bytes, dict[str, Any]]:
    if isinstance(params, dict):
        params = {**params, "_meta": params.get("_meta", META)}
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
    return body.encode(), {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": V,
        "Mcp-Method": method,
        **{name.replace("_", "-"): value for name, value in headers.items()},
    }


CALL = {"name": "weather", "arguments": {"region": "eu"}}
FORGED = {
    "method": post("tools/list", {}, Mcp_Method="tools/call"),
    "version": post("tools/list", {"_meta": {**META,
                    "io.modelcontextprotocol/protocolVersion": "2025-11-25"}}),  # fmt: skip
    "name": post("tools/call", CALL, Mcp_Name="echo"),
    "param": post("tools/call", CALL, Mcp_Name="weather", Mcp_Param_Region="us"),
    "param missing": post("tools/call", CALL, Mcp_Name="weather"),
    "unsupported": post("tools/list", {"_meta": {**META,
                        "io.modelcontextprotocol/protocolVersion": "2030-01-01"}},
                        MCP_Protocol_Version="2030-01-01"),  # fmt: skip
}


async def send_all(server: Server, cases: dict, guarded: bool) -> dict[str, httpx.Response]:
    async with httpx.AsyncClient(timeout=20) as client:
        return {case: await client.post(server.url(guarded), content=body, headers=headers)
                for case, (body, headers) in cases.items()}  # fmt: skip


def test_forged_headers_get_the_sdks_codes_with_the_request_id(server: Server) -> None:
    bare = anyio.run(send_all, server, FORGED, False)
    guarded = anyio.run(send_all, server, FORGED, True)
    for case in FORGED:
        sdk, ours = bare[case].json(), guarded[case].json()
        assert guarded[case].status_code == bare[case].status_code == 400, case
        assert ours["error"]["code"] == sdk["error"]["code"], case
        assert ours["id"] == sdk["id"] == 7, case
        assert guarded[case].headers["content-type"] == "application/json"
    assert guarded["unsupported"].json()["error"]["code"] == -32022


def test_the_guard_answers_what_it_refuses(server: Server) -> None:
    # A deliberate difference shows who answered: non-object params are -32602 with the id
    # from rpcline, -32600 with id null from the SDK.
    cases = {"params": post("tools/list", 5)}
    bare = anyio.run(send_all, server, cases, False)["params"].json()
    guarded = anyio.run(send_all, server, cases, True)["params"].json()
    assert (bare["error"]["code"], bare["id"]) == (-32600, None)
    assert (guarded["error"]["code"], guarded["id"]) == (-32602, 7)


def test_allow_lists_in_both_eras(server: Server) -> None:
    body, modern = post("tools/list", {})
    legacy = {k: v for k, v in modern.items() if k != "MCP-Protocol-Version"}
    cases = {}
    for era, headers in (("2026", modern), ("2025", legacy)):
        cases[era, "host"] = body, {**headers, "Host": "evil.example:80"}
        cases[era, "origin"] = body, {**headers, "Origin": "http://evil.example"}
    bare = anyio.run(send_all, server, cases, False)
    guarded = anyio.run(send_all, server, cases, True)
    for case in cases:
        assert (guarded[case].status_code, guarded[case].text) == (
            bare[case].status_code, bare[case].text), case
        assert guarded[case].status_code == {"host": 421, "origin": 403}[case[1]]


def chunked(size: int, step: int = 256 * 1024) -> AsyncIterator[bytes]:
    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, size, step):
            yield b"x" * min(step, size - start)

    return chunks()


@pytest.mark.parametrize("how", ["declared", "chunked"])
def test_a_100_mb_body_is_413_in_bounded_memory(server: Server, how: str) -> None:
    size = 100 * 1024 * 1024
    _, headers = post("tools/list", {})
    content: Any = b"x" * size if how == "declared" else None

    async def upload() -> httpx.Response:
        async with httpx.AsyncClient(timeout=60) as client:
            return await client.post(server.url(True), headers=headers,
                                     content=content if content is not None else chunked(size))

    Path(f"/proc/{server.process.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
    before = server.status("VmRSS")
    reply = anyio.run(upload)
    grown = server.status("VmHWM") - before
    assert (reply.status_code, reply.text) == (413, "Request body too large")
    print(f"{how}: peak RSS grew by {grown / 2**20:.1f} MiB")
    assert grown < 3 * BOUND, f"the server's peak RSS grew by {grown / 2**20:.1f} MiB"


def sentinel_request(header: str) -> tuple[bytes, dict[str, Any]]:
    body, headers = post("tools/call", CALL, Mcp_Name="weather")
    return body, {**headers, header: b"=?base64?\xe9?="}


WEATHER = [{"name": "weather", "inputSchema": {
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}]


def sentinel_cases() -> list:
    cases = []
    for header in ("Mcp-Name", "Mcp-Param-Region"):
        body, headers = sentinel_request(header)
        pairs = [(k.lower().encode(), v if isinstance(v, bytes) else v.encode())
                 for k, v in headers.items()]  # fmt: skip
        try:
            http.check_request(body, pairs, tools=http.param_headers(WEATHER))
            raises = False
        except ValueError:
            raises = True
        cases.append(pytest.param(header, marks=pytest.mark.xfail(
            raises, strict=True, reason="check_request raises on a non-ASCII base64 sentinel "
            "until the http-check branch (issue 25 item 4) lands: uvicorn answers 500")))
    return cases


@pytest.mark.parametrize("header", sentinel_cases())
def test_a_non_ascii_base64_sentinel_gets_a_4xx(server: Server, header: str) -> None:
    # The SDK raises on it (a 500); the Guard answers the ladder's 400.
    reply = anyio.run(send_all, server, {"x": sentinel_request(header)}, True)["x"]
    assert reply.status_code == 400 and reply.json()["error"]["code"] == -32020


HOSTILE = {
    "version latin-1": {"MCP-Protocol-Version": b"2026-07-28\xff"},
    "method latin-1": {"Mcp-Method": b"tools/\xe9"},
    "name latin-1": {"Mcp-Name": b"\xe9cho"},
    "param latin-1": {"Mcp-Param-Region": b"\xff"},
    "sentinel corrupt": {"Mcp-Name": b"=?base64?!!?="},
    "sentinel empty": {"Mcp-Param-Region": b"=?base64??="},
    "name twice": {"Mcp-Name": b"weather"},
}


def test_hostile_headers_get_4xx(server: Server) -> None:
    cases = {}
    for case, extra in HOSTILE.items():
        body, headers = post("tools/call", CALL, Mcp_Name="weather", Mcp_Param_Region="eu")
        pairs = [*headers.items(), *extra.items()] if case == "name twice" else [
            *{**headers, **extra}.items()]
        cases[case] = body, pairs
    guarded = anyio.run(send_all, server, cases, True)
    for case, reply in guarded.items():
        assert 400 <= reply.status_code < 500, (case, reply.status_code, reply.text)
    assert os.path.exists(f"/proc/{server.process.pid}")  # still serving


def test_the_gateway_example_relays_both_eras(server: Server) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    gateway = subprocess.Popen([sys.executable, str(HERE.parent / "examples" / "http_gateway.py"),
                                server.url(False), "--port", str(port)],
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"

    async def sessions() -> list[Any]:
        with anyio.fail_after(30):
            while True:  # until it listens
                try:
                    async with httpx.AsyncClient() as client:
                        await client.get(url)
                    break
                except httpx.ConnectError:
                    assert gateway.poll() is None, gateway.stderr.read() if gateway.stderr else ""
                    await anyio.sleep(0.05)
            return [await session(url, "legacy"), await session(server.url(False), "legacy"),
                    await session(url, "auto"), await session(server.url(False), "auto")]

    try:
        relayed_2025, direct_2025, relayed_2026, direct_2026 = anyio.run(sessions)
        body, headers = post("tools/list", 5)
        forged = httpx.post(url, content=body, headers=headers)
    finally:
        gateway.terminate()
        gateway.wait(10)
    assert relayed_2025 == direct_2025 and relayed_2025[0] == "2025-11-25"
    assert relayed_2026 == direct_2026 and relayed_2026[0] == V
    assert forged.json()["error"]["code"] == -32602  # the Guard's answer, not upstream's


def mounted_recipe() -> Any:
    """docs/gateways.md's Starlette recipe, as written there."""
    import contextlib

    from guard_server import sdk_server
    from starlette.applications import Starlette
    from starlette.routing import Mount

    server = sdk_server()
    listing = anyio.run(server.list_tools)
    tools = http.param_headers(listing)  # the SDK's Tool objects
    mcp_app = server.streamable_http_app(streamable_http_path="/")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with server.session_manager.run():  # a mounted app's lifespan does not run
            yield

    return Starlette(routes=[Mount("/weather", app=http.Guard(mcp_app, tools=tools))],
                     lifespan=lifespan)  # fmt: skip


def middleware_recipe() -> Any:
    """The Guard as Starlette middleware around the SDK's whole app."""
    from guard_server import sdk_server
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.routing import Mount

    server = sdk_server()
    app = server.streamable_http_app()
    return Starlette(routes=[Mount("/", app=app)], middleware=[Middleware(http.Guard)],
                     lifespan=lambda _: server.session_manager.run())  # fmt: skip


@pytest.mark.parametrize(("recipe", "path"), [(mounted_recipe, "/weather/"),
                                              (middleware_recipe, "/mcp")])  # fmt: skip
def test_the_starlette_recipes_in_both_eras(recipe: Any, path: str) -> None:
    from _asgi import serving

    app = recipe()

    async def sessions() -> list[Any]:
        async with serving(app, timeout=30) as url:
            url = url.removesuffix("/mcp") + path
            body, headers = post("tools/list", 5)
            async with httpx.AsyncClient() as client:
                forged = await client.post(url, content=body, headers=headers)
            return [forged.json()["error"]["code"], await session(url, "legacy"),
                    await session(url, "auto")]  # fmt: skip

    code, legacy, modern = anyio.run(sessions)
    assert code == -32602  # the Guard answered
    assert legacy[0] == "2025-11-25" and modern[0] == V
    results = [[r["structured_content"] for r in era[2:]] for era in (legacy, modern)]
    assert results[0] == results[1] and results[0][0] == {"result": 2**70 + 1}


@pytest.mark.parametrize("depth", [1024, 1025])
def test_deep_nesting_is_the_apps_parse_error(server: Server, depth: int) -> None:
    # check_request accepts 1024 levels (orjson's limit); the SDK behind the Guard answers
    # them -32700 as it does bare (its json.loads hits the recursion limit).
    body, headers = post("tools/list", {"x": 0})
    body = body.replace(b'"x": 0', b'"x": ' + b"[" * (depth - 2) + b"]" * (depth - 2))
    pairs = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    assert http.check_request(body, pairs).status == (200 if depth == 1024 else 400)
    cases = {"deep": (body, headers)}
    for guarded in (False, True):
        reply = anyio.run(send_all, server, cases, guarded)["deep"]
        assert (reply.status_code, reply.json()["error"]["code"], reply.json()["id"]) == (
            400, -32700, None)


@pytest.mark.parametrize("header", ["Mcp-Name", "Mcp-Param-Region"])
def test_the_sdk_answers_a_non_ascii_base64_sentinel_with_500(server: Server, header: str) -> None:
    # docs/gateways.md's table says so; when a newer SDK answers 4xx, the table changes.
    reply = anyio.run(send_all, server, {"x": sentinel_request(header)}, False)["x"]
    assert reply.status_code == 500
