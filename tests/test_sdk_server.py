"""``rpcline.sdk.stdio_server`` beside the SDK's own ``mcp.server.stdio.stdio_server``.

The same MCPServer (tests/sdk_server.py) served by both transports gives the SDK's
client the same results, in both eras and on asyncio and trio; lines the SDK's adapter
refuses reach the session as the SDK's exceptions, and are answered where the SDK
leaves the caller waiting. Needs ``mcp`` (the ``sdk`` or ``interop`` extra).
"""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import threading
import time
from importlib import import_module
from types import ModuleType
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK is not installed "
                                        "(pip install '.[sdk]')")
anyio = pytest.importorskip("anyio", reason="anyio comes with the MCP SDK")

import mcp_types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # noqa: E402
from test_sdk import ENV, HERE, TIMEOUT, dump, session_body  # noqa: E402

import rpcline.sdk  # noqa: E402
from rpcline._gateway import relay_lines, sdk_lines, sdk_server  # noqa: E402

ADAPTER = mcp_types.jsonrpc_message_adapter
# How each arm runs tests/sdk_server.py: the SDK's server.run("stdio"), or run_stdio.
ARMS = {"sdk": [], "rpcline-asyncio": ["rpcline", "asyncio"], "rpcline-trio": ["rpcline", "trio"]}
pytest.importorskip("trio", reason="trio is not installed")


def server(arm: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=[str(HERE / "sdk_server.py"), *ARMS[arm]], env=ENV)


# --- the same sessions, from the SDK's client ---------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", MODERN_PROTOCOL_VERSIONS[-1]])
def test_the_same_session_on_both_transports(mode, tmp_path):
    """Tools, a 1 MB result and argument, a tool error, progress, a cancelled call,
    resources and prompts: the same JSON from every arm."""
    async def run(arm: str) -> Any:
        with (tmp_path / f"{arm}.log").open("w") as errlog, anyio.fail_after(TIMEOUT):
            async with Client(stdio_client(server(arm), errlog), mode=mode) as client:
                return await session_body(client)

    results = {arm: anyio.run(run, arm) for arm in ARMS}
    sdk = results["sdk"]
    assert results["rpcline-asyncio"] == sdk
    assert results["rpcline-trio"] == sdk
    assert len(sdk[3]["content"][0]["text"]) == 1_000_000
    assert sdk[5]["isError"] is True  # the tool that raised
    assert sdk[7] == [[1, 3, "step 1"], [2, 3, "step 2"], [3, 3, "step 3"]]
    assert sdk[8] is True  # the slow call was cancelled, and the session went on
    assert sdk[-1]["content"][0]["text"] == "after the cancel"


def test_logging_and_server_requests_on_both_transports(tmp_path):
    """Sampling, roots and ping from the server, and its log messages to the client."""
    async def sampling(context: Any, params: Any) -> mcp_types.CreateMessageResult:
        return mcp_types.CreateMessageResult(
            role="assistant", model="test",
            content=mcp_types.TextContent(type="text", text=f"<{params.messages[0].content.text}>"))

    async def roots(context: Any) -> mcp_types.ListRootsResult:
        return mcp_types.ListRootsResult(roots=[mcp_types.Root(uri="file:///srv/project")])

    async def run(arm: str) -> Any:
        logged: list[Any] = []

        async def logging_callback(params: Any) -> None:
            logged.append(dump(params))

        with (tmp_path / f"{arm}.log").open("w") as errlog, anyio.fail_after(TIMEOUT):
            async with stdio_client(server(arm), errlog) as (read, write), ClientSession(
                    read, write, sampling_callback=sampling, list_roots_callback=roots,
                    logging_callback=logging_callback) as session:
                await session.initialize()
                results = [dump(await session.call_tool(tool, arguments)) for tool, arguments in
                           [("sample", {"prompt": "hi"}), ("roots", {}), ("ping_client", {}),
                            ("log", {"message": "a note"})]]
                return results, logged

    results = {arm: anyio.run(run, arm) for arm in ARMS}
    assert results["rpcline-asyncio"] == results["sdk"]
    assert results["rpcline-trio"] == results["sdk"]
    answers, logged = results["sdk"]
    assert answers[0]["content"][0]["text"] == "<hi>"
    assert answers[1]["content"][0]["text"] == "file:///srv/project"
    assert [entry["data"] for entry in logged] == ["a note"]


# --- raw lines on the pipes ----------------------------------------------------------------

INITIALIZE = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {"sampling": {}},
    "clientInfo": {"name": "raw", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Raw:
    """A server process spoken to line by line, its answers read with a deadline."""

    def __init__(self, args: list[str], *, script: str | None = None) -> None:
        command = [sys.executable, "-c", script, *args] if script else [
            sys.executable, str(HERE / "sdk_server.py"), *args]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL,
                                        env={**os.environ, **ENV, "PYTHONPATH": os.pathsep.join(
                                            [str(HERE), ENV.get("PYTHONPATH", "")])})
        self.buffer = b""
        self.send(INITIALIZE)
        assert self.answer("init")["result"]["serverInfo"]["name"] == "rpcline-test-server"
        self.send(INITIALIZED)

    def send(self, *messages: Any) -> None:
        assert self.process.stdin is not None
        for message in messages:
            line = message if type(message) is bytes else json.dumps(message).encode() + b"\n"
            self.process.stdin.write(line)
        self.process.stdin.flush()

    def read(self, timeout: float = TIMEOUT) -> dict[str, Any] | None:
        """The next line from the server, or None when there is none within ``timeout``."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)  # type: ignore[no-any-return]

    def answer(self, id: Any) -> dict[str, Any]:
        """The answer to ``id``; what comes before it is kept in ``self.before``."""
        self.before: list[Any] = []
        while True:
            message = self.read()
            assert message is not None, f"no answer to {id!r}"
            if message.get("id") == id and "method" not in message:
                return message
            self.before.append(message)

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(TIMEOUT)


def echo(id: Any, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}}}


BAD_LINES = [
    b"not json\n",                                                               # null id
    b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1]}\n',            # id 5
    b'{"jsonrpc":"2.0","id":99,"result":5}\n',                                   # a response
    b'{"jsonrpc":"2.0","method":"notifications/x","params":[1]}\n',              # notification
    b"\n   \n",                                                                  # blank lines
]


@pytest.mark.parametrize("arm", ["rpcline-asyncio", "rpcline-trio"])
def test_refused_lines_are_answered_where_the_sdk_leaves_the_caller_waiting(arm):
    """A refused request is answered with its error (its id, or null when none can be
    read); a refused response or notification is not; what the SDK accepts, invalid
    UTF-8 replaced and CRLF included, is served as the SDK serves it."""
    answers = {}
    for name in ("sdk", arm):
        raw = Raw(ARMS[name])
        raw.send(*BAD_LINES, echo(6, "six"))
        raw.send(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo",'
                 b'"arguments":{"text":"a\xffb"}}}\r\n')
        raw.send({"jsonrpc": "2.0", "id": "end", "method": "ping"})
        got: list[Any] = []
        while not {6, 7, "end"} <= {m.get("id") for m in got}:  # in any order
            message = raw.read()
            assert message is not None, got
            got.append(message)
        answers[name] = got
        assert raw.close() == 0
    by_id = {m.get("id"): m for m in answers["sdk"]}
    assert set(by_id) == {6, 7, "end"}  # the SDK answers none of the refused lines
    assert by_id[7]["result"]["content"][0]["text"] == "a\ufffdb"  # replaced, as the SDK reads it
    ours = answers[arm]
    assert sorted((m for m in ours if m.get("id") in by_id), key=lambda m: str(m["id"])) == sorted(
        by_id.values(), key=lambda m: str(m["id"]))
    errors = [m for m in ours if m.get("id") not in by_id]
    assert [(m["id"], m["error"]["code"]) for m in errors] == [(None, -32700), (5, -32602)]


@pytest.mark.parametrize("arm", ["rpcline-asyncio", "rpcline-trio"])
def test_an_over_long_line_is_answered_with_its_id_and_the_session_goes_on(arm):
    script = ("import sys; from sdk_server import server; import rpcline.sdk; "
              "rpcline.sdk.run_stdio(server, max_line_bytes=1000, backend=sys.argv[1])")
    raw = Raw([arm.split("-")[1]], script=script)
    raw.send(echo(8, "x" * 2000), echo(9, "y" * 800))
    refused = raw.answer(8)
    assert refused["error"]["code"] == -32700
    assert "line exceeds 1000 bytes" in refused["error"]["data"]
    assert raw.answer(9)["result"]["content"][0]["text"] == "y" * 800
    assert raw.close() == 0


@pytest.mark.parametrize("arm", ["sdk", "rpcline-asyncio"])
def test_a_broken_answer_to_the_server_s_request_fails_it_at_once(arm):
    """The client's answer to a sampling request arrives cut short: on rpcline's transport
    the server's request fails with -32000 and its tool call ends; on the SDK's it waits."""
    raw = Raw(ARMS[arm])
    raw.send({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
              "params": {"name": "sample", "arguments": {"prompt": "hi"}}})
    request = raw.read()
    assert request is not None and request["method"] == "sampling/createMessage"
    raw.send(b'{"jsonrpc":"2.0","id":' + json.dumps(request["id"]).encode()
             + b',"result":{"role":"assistant","content":{"type":"te\n')
    answer = raw.read(timeout=3)
    if arm == "sdk":
        assert answer is None  # the SDK's transport: the tool waits for its answer
    else:
        assert answer is not None and answer["id"] == 10, answer
        assert "Invalid response from the client" in json.dumps(answer)
    raw.process.kill()
    raw.process.wait()


@pytest.mark.parametrize("arm", ["sdk", "rpcline-asyncio", "rpcline-trio"])
def test_stdin_from_a_file_or_dev_null_is_served_and_ends(arm, tmp_path):
    """A regular file and /dev/null cannot be waited on (epoll refuses them); they never
    block either, so they are read straight through."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(json.dumps(INITIALIZE).encode() + b"\n")
    command = [sys.executable, str(HERE / "sdk_server.py"), *ARMS[arm]]
    env = {**os.environ, **ENV}
    with requests.open("rb") as stdin:
        done = subprocess.run(command, stdin=stdin, capture_output=True, env=env, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["id"] == "init"
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, env=env,
                          timeout=TIMEOUT)
    assert done.returncode == 0 and done.stdout == b"", done.stderr


RESTORED = """
import os, sys, anyio, rpcline.sdk
before = [(os.fstat(fd).st_ino, os.get_blocking(fd)) for fd in (0, 1)]
async def main():
    async with rpcline.sdk.stdio_server(max_line_bytes=1000) as (read, write):
        print("diverted", file=sys.stdout, flush=True)  # fd 1 is stderr while serving
        async for item in read:
            await write.send(item if not isinstance(item, Exception) else None)
anyio.run(main, backend=sys.argv[1])
after = [(os.fstat(fd).st_ino, os.get_blocking(fd)) for fd in (0, 1)]
os.write(1, repr(after == before).encode())
"""


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_descriptors_are_diverted_while_serving_and_restored_after(backend):
    """While serving, a print misses the wire; after, fd 0 and 1 are the pipes they were,
    blocking again (a shell or a parent sharing them must not find them non-blocking)."""
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    done = subprocess.run([sys.executable, "-c", RESTORED, backend], input=ping,
                          capture_output=True, env={**os.environ, **ENV}, timeout=TIMEOUT)
    assert done.stdout == ping.rstrip(b"\n") + b"\nTrue", done.stderr
    assert b"diverted" in done.stderr


# --- one line at a time, on both implementations ---------------------------------------


@pytest.fixture
def lines(impl: ModuleType, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``ClientLines`` with the server's requests 1 and "s" in flight, and ``route`` of
    the implementation under test (as ``StreamParser(classify=route)`` gives lines)."""
    routes = import_module(impl.__name__.replace(".message_", ".route_"))
    monkeypatch.setattr(relay_lines, "prefix_refusal", routes.prefix_refusal)
    monkeypatch.setattr(relay_lines, "ParseError", impl.ParseError)
    for name in ("Refused", "InvalidRequest", "error_response"):
        monkeypatch.setattr(sdk_lines, name, getattr(impl, name))
    in_flight = sdk_lines.InFlight(16)
    for id in (1, "s"):
        in_flight.add(id)
    client_lines = sdk_lines.ClientLines(in_flight)
    client_lines.route = routes.route
    client_lines.streams = import_module(impl.__name__.replace(".message_", ".stream_"))
    return client_lines


def sdk_verdict(line: bytes) -> Any:
    """What the SDK's transport puts on the read stream for ``line`` (it reads text: UTF-8
    with errors replaced, universal newlines, the LF kept)."""
    text = line.decode("utf-8", "replace").removesuffix("\r") + "\n"
    try:
        return SessionMessage(ADAPTER.validate_json(text, by_name=False))
    except Exception as error:  # noqa: BLE001
        return error


@pytest.mark.parametrize("line", [
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}',
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a\xffb"}}',
    b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}',  # the SDK takes it as a notification
    b'{"jsonrpc":"2.0","id":4,"method":"ping"}\r',
    b'{"jsonrpc":"2.0","id":1,"result":{"ok":true}}',
], ids=["request", "invalid-utf8-replaced", "float-id", "crlf", "answer"])
def test_what_the_sdk_accepts_arrives_as_the_sdk_delivers_it(lines, line):
    item = lines.message(lines.route(line))
    assert item == sdk_verdict(line)
    assert lines.answers == []


@pytest.mark.parametrize(("line", "answer"), [
    (b"not json", (None, -32700)),
    (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1]}', (5, -32602)),
    (b'{"jsonrpc":"2.0","id":"a","method":7}', ("a", -32600)),
    (b'{"jsonrpc":"2.0","id":99,"result":5}', None),  # a response: never answered
    (b'{"jsonrpc":"2.0","method":"notifications/x","params":[1]}', None),  # nor a notification
    (b'{"jsonrpc":"2.0","id":"s","method":"x","params":[]}', ("s", -32602)),  # a request's id is its own
], ids=["no-json", "bad-params", "bad-method", "response", "notification", "request-with-a-pending-id"])
def test_a_refused_line_is_the_sdk_s_exception_and_a_refused_request_is_answered(
        lines, line, answer):
    item = lines.message(lines.route(line))
    expected = sdk_verdict(line)
    assert type(item) is type(expected) and str(item) == str(expected)
    got = [json.loads(a) for a in lines.answers]
    assert [(a["id"], a["error"]["code"]) for a in got] == ([answer] if answer else [])
    assert len(lines.in_flight) == 2  # nothing here answers the server's requests


@pytest.mark.parametrize(("line", "id"), [
    (b'{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"ty', 1),
    (b'{"jsonrpc":"2.0","id":"s","result":5}', "s"),
    (b'{"jsonrpc":"2.0","id":"1","error":{"code":"x"}}', "1"),  # "1" is 1 to the SDK
], ids=["cut-short", "whole-but-refused", "string-id"])
def test_a_refused_answer_to_the_server_s_request_fails_it(lines, line, id):
    item = lines.message(lines.route(line))
    assert isinstance(item, SessionMessage) and isinstance(item.message, mcp_types.JSONRPCError)
    assert item.message.id == id and item.message.error.code == -32000
    assert item.message.error.message == "Invalid response from the client"
    assert len(lines.in_flight) == 1 and lines.answers == []


def test_an_over_long_line_is_answered_by_its_id_unless_it_answers_a_request(lines):
    parser = lines.streams.StreamParser(40, classify=lines.route)
    over_long = parser.feed(b'{"jsonrpc":"2.0","id":1,"result":{"text":"' + b"x" * 100 + b'"}}\n'
                            + b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"a":"'
                            + b"x" * 100 + b'"}}\n' + b'"' + b"x" * 100 + b'"\n')
    failed, answered, unknown = (lines.message(r) for r in over_long)
    assert isinstance(failed, SessionMessage) and failed.message.id == 1
    assert failed.message.error.data.endswith("line exceeds 40 bytes")
    assert isinstance(answered, ValueError) and "line exceeds 40 bytes" in str(answered)
    assert isinstance(unknown, ValueError)
    assert [(json.loads(a)["id"], json.loads(a)["error"]["code"]) for a in lines.answers] == [
        (8, -32700), (None, -32700)]


def test_the_server_s_requests_are_in_flight_from_the_write(tmp_path):
    """``write_messages`` notes each request the server writes before writing it, and
    writes the messages that are ready together in one write."""
    read_end, write_end = os.pipe()
    in_flight = sdk_lines.InFlight(16)
    writes: list[int] = []
    real_write = os.write

    def write(fd: int, data: Any) -> int:
        writes.append(len(data))
        return real_write(fd, data)

    requests = [mcp_types.JSONRPCRequest(jsonrpc="2.0", id=i, method="ping") for i in range(3)]

    async def main() -> None:
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def put(request: Any) -> None:
            async with send.clone() as sender:
                await sender.send((None, SessionMessage(request)))

        async with anyio.create_task_group() as tasks:
            for request in requests:  # three senders waiting before the writer starts
                tasks.start_soon(put, request)
            await anyio.wait_all_tasks_blocked()
            send.close()
            tasks.start_soon(sdk_server.write_messages, receive, write_end, in_flight)

    mp = pytest.MonkeyPatch()
    mp.setattr(sdk_server.os, "write", write)
    try:
        anyio.run(main)
    finally:
        mp.undo()
    os.close(write_end)
    with os.fdopen(read_end, "rb") as out:
        written = out.read()
    assert written.splitlines() == [r.model_dump_json(by_alias=True, exclude_unset=True).encode()
                                    for r in requests]
    assert len(writes) == 1
    assert len(in_flight) == 3 and all(id in in_flight for id in range(3))


def test_a_write_larger_than_the_pipe_waits_for_room_and_arrives_whole():
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    data = os.urandom(3 << 20)
    received: list[bytes] = []

    def drain() -> None:
        time.sleep(0.2)  # the writer meets a full pipe first
        with os.fdopen(read_end, "rb") as out:
            received.append(out.read())

    reader = threading.Thread(target=drain)
    reader.start()
    for backend in ("asyncio",):
        anyio.run(sdk_server._write_all, write_end, data, backend=backend)
    os.close(write_end)
    reader.join(TIMEOUT)
    assert received == [data]


def test_explicit_streams_are_served_by_the_sdk_s_transport(monkeypatch):
    calls = []

    class Entered(Exception):
        pass

    def sdk_transport(stdin: Any, stdout: Any) -> Any:
        calls.append((stdin, stdout))
        raise Entered

    monkeypatch.setattr(sdk_server, "_SDK_STDIO_SERVER", sdk_transport)

    async def enter() -> None:
        async with rpcline.sdk.stdio_server(stdin="in", stdout="out"):  # type: ignore[arg-type]
            pass

    with pytest.raises(Entered):
        anyio.run(enter)
    assert calls == [("in", "out")]


def test_a_bad_bound_raises_and_run_stdio_refuses_what_is_no_server():
    async def enter() -> None:
        async with rpcline.sdk.stdio_server(max_line_bytes=0):
            pass

    with pytest.raises(ValueError):
        anyio.run(enter)
    with pytest.raises(TypeError, match="MCPServer or a low-level Server"):
        rpcline.sdk.run_stdio(object())


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_sys_streams_on_other_descriptors_are_served_in_place(backend, monkeypatch):
    """As the SDK serves them: a ``sys.stdin``/``sys.stdout`` on pipes that are not fd 0/1
    are read and written where they are (what stdout's buffer held goes first), and
    their descriptors are blocking again after."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    stdin = open(in_r, "rb", closefd=False)  # noqa: SIM115
    stdout = open(out_w, "wb", closefd=False)  # noqa: SIM115
    stdout.write(b"held\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stdin, encoding="utf-8"))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(stdout, encoding="utf-8"))
    monkeypatch.setattr(sdk_server, "_SDK_STDIO_SERVER", None)  # never the SDK's here
    ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'

    async def main() -> Any:
        with anyio.fail_after(TIMEOUT):
            return await serve()

    async def serve() -> Any:
        async with rpcline.sdk.stdio_server() as (read, write):
            os.write(in_w, ping)
            item = await read.receive()
            await write.send(SessionMessage(mcp_types.JSONRPCResponse(
                jsonrpc="2.0", id=item.message.id, result={})))
            return item

    try:
        item = anyio.run(main, backend=backend)
        assert item.message == ADAPTER.validate_json(ping)
        assert os.read(out_r, 1000) == b'held\n{"jsonrpc":"2.0","id":1,"result":{}}\n'
        assert os.get_blocking(in_r) and os.get_blocking(out_w)
    finally:
        for fd in (in_r, in_w, out_r, out_w):
            os.close(fd)
