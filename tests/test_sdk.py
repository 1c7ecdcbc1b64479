"""``rpcline.sdk.stdio_client`` beside the SDK's own ``mcp.client.stdio.stdio_client``.

The same sessions through both transports give the same results (compared as the JSON
the SDK's models dump), in both eras; an answer cut short, with invalid UTF-8 or over
the bound fails its call at once and the session goes on, where the SDK's transport
leaves the call waiting. The SDK's own transport tests run against ours in .ci/run
(.ci/sdk_stdio_plugin.py). Needs ``mcp`` (the ``sdk`` or ``interop`` extra).
"""

from __future__ import annotations

import json
import os
import sys
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK is not installed "
                                        "(pip install '.[sdk]')")
anyio = pytest.importorskip("anyio", reason="anyio comes with the MCP SDK")

import mcp_types  # noqa: E402
from mcp import Client, MCPError  # noqa: E402
from mcp.client import stdio as sdk_stdio  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # noqa: E402

import rpcline  # noqa: E402
import rpcline.sdk  # noqa: E402
from rpcline._gateway import relay_lines, sdk_lines  # noqa: E402

HERE = Path(__file__).parent
# The SDK starts servers with a minimal environment: pass on what selects rpcline.
ENV = {k: v for k, v in os.environ.items() if k in ("PYTHONPATH", "RPCLINE_NO_EXTENSIONS")}
if "PYTHONPATH" in ENV:
    ENV["PYTHONPATH"] = os.pathsep.join(map(os.path.abspath, ENV["PYTHONPATH"].split(os.pathsep)))
TRANSPORTS = {"sdk": sdk_stdio.stdio_client, "rpcline": rpcline.sdk.stdio_client}
TIMEOUT = 60


def server(script: str = "sdk_server.py") -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(HERE / script)], env=ENV)


def dump(model: Any) -> Any:
    return json.loads(model.model_dump_json(by_alias=True, exclude_none=True))


# --- the same sessions through both transports ------------------------------------------


async def session_body(client: Client) -> list[Any]:
    """Tools, resources, prompts, progress and a cancelled call, as an agent makes them."""
    progress: list[Any] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append([done, total, message])

    results = [dump(await client.list_tools())]
    for name, arguments in [("echo", {"text": "h\u00e9llo \U0001f600 \\n"}),
                            ("add", {"a": 2**70, "b": 1}), ("big", {"size": 1_000_000}),
                            ("length", {"data": "x" * 1_000_000}), ("fail", {"message": "boom"})]:
        results.append(dump(await client.call_tool(name, arguments)))
    results.append(dump(await client.call_tool("progress", {"steps": 3},
                                               progress_callback=on_progress)))
    results.append(progress)
    with anyio.move_on_after(0.5) as scope:
        await client.call_tool("slow", {"seconds": 30})
    results.append(scope.cancelled_caught)
    results += [dump(await client.list_resources()),
                dump(await client.read_resource("test://items/42")),
                dump(await client.list_prompts()),
                dump(await client.get_prompt("review", {"code": "print(1)"})),
                dump(await client.call_tool("echo", {"text": "after the cancel"}))]
    return results


@pytest.mark.parametrize("mode", ["legacy", MODERN_PROTOCOL_VERSIONS[-1]])
def test_the_same_session_through_both_transports(mode, tmp_path):
    async def run(name: str) -> Any:
        with (tmp_path / f"{name}.log").open("w") as errlog, anyio.fail_after(TIMEOUT):
            async with Client(TRANSPORTS[name](server(), errlog), mode=mode) as client:
                return await session_body(client)

    sdk, ours = anyio.run(run, "sdk"), anyio.run(run, "rpcline")
    assert ours == sdk
    assert sdk[2]["structuredContent"] == {"result": 2**70 + 1}
    assert len(sdk[3]["content"][0]["text"]) == 1_000_000
    assert sdk[7] == [[1, 3, "step 1"], [2, 3, "step 2"], [3, 3, "step 3"]]
    assert sdk[8] is True  # the slow call was cancelled, and the session went on
    assert sdk[-1]["content"][0]["text"] == "after the cancel"


def test_server_requests_through_a_client_session(tmp_path):
    """Sampling, roots and ping from the server: the client's answers go through the writer."""
    async def sampling(context: Any, params: Any) -> mcp_types.CreateMessageResult:
        return mcp_types.CreateMessageResult(
            role="assistant", model="test",
            content=mcp_types.TextContent(type="text", text=f"<{params.messages[0].content.text}>"))

    async def roots(context: Any) -> mcp_types.ListRootsResult:
        return mcp_types.ListRootsResult(roots=[mcp_types.Root(uri="file:///srv/project")])

    async def run(name: str) -> Any:
        with (tmp_path / f"{name}.log").open("w") as errlog, anyio.fail_after(TIMEOUT):
            async with TRANSPORTS[name](server(), errlog) as (read, write), ClientSession(
                    read, write, sampling_callback=sampling, list_roots_callback=roots) as session:
                await session.initialize()
                return [dump(await session.call_tool(tool, arguments)) for tool, arguments in
                        [("sample", {"prompt": "hi"}), ("roots", {}), ("ping_client", {})]]

    sdk, ours = anyio.run(run, "sdk"), anyio.run(run, "rpcline")
    assert ours == sdk
    assert sdk[0]["content"][0]["text"] == "<hi>"


# --- broken answers: ours fails the call at once, the SDK's waits -----------------------


async def broken_call(name: str, text: str, errlog: Any, **options: Any) -> tuple[Any, Any]:
    """Call ``echo(text)`` on the faulty server, bounded; then ``echo("still here")``.

    Each outcome is the result, the MCPError's error, "waiting" (no answer within its
    bound) or the exception that ended the transport.
    """
    outcomes: list[Any] = []
    try:
        async with TRANSPORTS[name](server("sdk_faulty_server.py"), errlog, **options) as (
                read, write), ClientSession(read, write) as session:
            await session.initialize()
            for arguments, bound in [({"text": text}, 1 if name == "rpcline" else 2),
                                     ({"text": "still here"}, 2)]:
                outcome: Any = "waiting"
                with anyio.move_on_after(bound):
                    try:
                        outcome = (await session.call_tool("echo", arguments)).content[0].text
                    except MCPError as error:
                        outcome = error.error
                outcomes.append(outcome)
    except BaseException as error:  # noqa: BLE001 - the SDK's transport ends on invalid UTF-8
        outcomes.append(error)
    return outcomes[0], outcomes[1]


@pytest.mark.parametrize(("text", "cause"), [
    ("cut: the rest of this answer never comes", "unexpected end of data at byte "),
    ("utf8: two bytes before this are not UTF-8", "invalid UTF-8 at byte "),
], ids=["cut-short", "invalid-utf8"])
def test_a_broken_answer_fails_its_call_at_once_and_the_session_goes_on(text, cause, tmp_path):
    with (tmp_path / "rpcline.log").open("w") as errlog:
        error, after = anyio.run(broken_call, "rpcline", text, errlog)
    assert isinstance(error, mcp_types.ErrorData), error  # within its one-second bound
    assert error.code == -32000
    assert error.message == "Invalid response from the server"
    assert error.data.startswith(f"the server's answer was refused: {cause}")
    assert after == "still here"

    with (tmp_path / "sdk.log").open("w") as errlog:
        sdk_first, sdk_after = anyio.run(broken_call, "sdk", text, errlog)
    assert sdk_first == "waiting"  # the SDK's transport leaves the call waiting
    if text.startswith("cut:"):
        assert sdk_after == "still here"
    else:  # and on invalid UTF-8 stalls the next call, then ends with UnicodeDecodeError
        assert sdk_after == "waiting" or isinstance(sdk_after, BaseExceptionGroup)


def test_an_answer_over_the_bound_fails_its_call_naming_the_bound(tmp_path):
    async def call(name: str, **options: Any) -> tuple[Any, Any]:
        with (tmp_path / f"{name}.log").open("w") as errlog, anyio.fail_after(TIMEOUT):
            async with TRANSPORTS[name](server(), errlog, **options) as (
                    read, write), ClientSession(read, write) as session:
                await session.initialize()
                try:
                    with anyio.fail_after(1 if name == "rpcline" else TIMEOUT):
                        first: Any = (await session.call_tool("big", {"size": 300_000})).content
                except MCPError as error:
                    first = error.error
                after = await session.call_tool("echo", {"text": "still here"})
                return first, after.content[0].text

    error, after = anyio.run(lambda: call("rpcline", max_line_bytes=200_000))
    assert error.code == -32000
    assert error.data == "the server's answer was refused: line exceeds 200000 bytes"
    assert after == "still here"
    content, _ = anyio.run(lambda: call("sdk"))  # the SDK's transport has no bound
    assert len(content[0].text) == 300_000


def test_a_bad_bound_raises_before_the_server_starts():
    async def enter(bound: Any) -> None:
        async with rpcline.sdk.stdio_client(server("no-such-server.py"), max_line_bytes=bound):
            pass  # pragma: no cover

    with pytest.raises(ValueError, match="max_line_bytes must be positive"):
        anyio.run(enter, 0)
    with pytest.raises(TypeError, match="max_line_bytes must be an int"):
        anyio.run(enter, 1.5)


def test_an_encoding_bytes_cannot_frame_is_left_to_the_sdk_s_transport(monkeypatch):
    from contextlib import asynccontextmanager

    from rpcline._gateway import sdk_client

    calls: list[Any] = []

    @asynccontextmanager
    async def sdk_transport(params: Any, errlog: Any) -> Any:
        calls.append(params.encoding)
        yield "the SDK's streams"

    monkeypatch.setattr(sdk_client, "_SDK_STDIO_CLIENT", sdk_transport)

    async def enter(encoding: str) -> Any:
        params = StdioServerParameters(command="no-such-server", encoding=encoding)
        async with rpcline.sdk.stdio_client(params) as streams:
            return streams

    assert anyio.run(enter, "utf-16") == "the SDK's streams"
    assert calls == ["utf-16"]
    with pytest.raises(OSError):  # latin-1 is framed here: the server is started, and fails
        anyio.run(enter, "latin-1")
    assert calls == ["utf-16"]


# --- one line at a time, on both implementations ---------------------------------------


@pytest.fixture
def lines(impl: ModuleType, monkeypatch: pytest.MonkeyPatch) -> sdk_lines.Lines:
    """``Lines`` reading through the implementation under test (route and its prefix scan)."""
    routes = import_module(impl.__name__.replace(".message_", ".route_"))
    monkeypatch.setattr(sdk_lines, "route", routes.route)
    monkeypatch.setattr(relay_lines, "prefix_refusal", routes.prefix_refusal)
    monkeypatch.setattr(relay_lines, "ParseError", impl.ParseError)
    in_flight = sdk_lines.InFlight(16)
    for id in (1, 2, "x"):
        in_flight.add(id)
    return sdk_lines.Lines(in_flight, None)


def error_of(item: Any) -> Any:
    assert isinstance(item, SessionMessage), item
    assert isinstance(item.message, mcp_types.JSONRPCError), item.message
    return item.message


def test_a_valid_answer_arrives_as_the_sdk_reads_it_and_is_no_longer_in_flight(lines):
    line = b'{"jsonrpc":"2.0","id":1,"result":{"n":18446744073709551617}}'
    item = lines.message(line)
    assert item == SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line))
    assert 1 not in lines.in_flight and 2 in lines.in_flight
    # so a broken line for it later is no answer: the call has had one
    assert isinstance(lines.message(b'{"jsonrpc":"2.0","id":1,"result":'), ValueError)


@pytest.mark.parametrize(("line", "id", "cause"), [
    (b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ab',
     2, "unexpected end of data at byte 70"),
    (b'{"jsonrpc":"2.0","id":"x","result":{"text":"a\xff' + b"z" * 10_000 + b'"}}',
     "x", "invalid UTF-8 at byte 45"),
    (b'{"jsonrpc":"2.0","id":2,"result":{"a":1}{"jsonrpc":"2.0","id":9,"result":{}}',
     2, "unexpected character at byte 40"),
    (b'{"jsonrpc":"2.0","id":"2","result":{"t":"a', "2", "unexpected end of data at byte 42"),
    (b'{"jsonrpc":"2.0","id":1,"result":5}', 1, "not a JSON-RPC message the SDK accepts"),
], ids=["cut-short", "invalid-utf8-far-from-the-end", "garbage", "a-numeric-string-id",
        "whole-but-refused"])
def test_a_refused_answer_to_a_call_in_flight_fails_that_call(lines, line, id, cause):
    error = error_of(lines.message(line))
    assert error.id == id and error.error.code == -32000
    assert error.error.data.startswith(f"the server's answer was refused: {cause}")
    assert id not in lines.in_flight  # a second broken line for it is no answer


@pytest.mark.parametrize("line", [
    b'{"jsonrpc":"2.0","id":7,"result":{"t":"a',  # no call 7 in flight
    b'{"id":1,"error":"disk 91% full"',  # no "jsonrpc" before the fault: a log record
    b'{"id":1,"error":"disk 91% full"}',  # the same, whole
    b'{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":[1]}',  # a request
    b'{"jsonrpc":"2.0","result":{},"id":1',  # the id runs into the cut: it might go on
    b"not json",
    # a server's request cut short: its id 1 is its own, whatever call 1 of ours waits for
    b'{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"result":"a\xff"',
], ids=["not-in-flight", "log-record-cut", "log-record", "server-request", "id-at-the-cut",
        "no-json", "server-request-cut"])
def test_other_refused_lines_arrive_as_the_sdk_delivers_them(lines, line):
    item = lines.message(line)
    assert isinstance(item, ValueError), item
    assert len(lines.in_flight) == 3


def test_a_line_cut_before_it_says_what_it_is_answers_the_call_it_names(lines):
    # The proxy's rule: "jsonrpc", a call's id and no method before the cut. The server
    # began that call's answer and will not finish it: waiting would be forever.
    failed = error_of(lines.message(b'{"jsonrpc":"2.0","id":2,"re'))
    assert failed.id == 2 and len(lines.in_flight) == 2


def test_an_over_long_answer_fails_its_call_and_another_over_long_line_is_an_exception(lines):
    error = rpcline.ParseError("line exceeds 100 bytes")
    failed = error_of(lines.message(rpcline.Refused(2, error)))
    assert failed.id == 2 and failed.error.data.endswith(": line exceeds 100 bytes")
    dropped = lines.message(rpcline.Refused(None, error))
    assert isinstance(dropped, ValueError) and "line exceeds 100 bytes" in str(dropped)


def test_the_session_s_requests_and_cancels_are_tracked_as_it_correlates_them():
    in_flight = sdk_lines.InFlight(16)
    request = mcp_types.JSONRPCRequest(jsonrpc="2.0", id=7, method="ping")
    sdk_lines.note_sent(request, in_flight)
    assert 7 in in_flight and "7" in in_flight  # the SDK's dispatcher reads "7" as 7
    sdk_lines.note_sent(mcp_types.JSONRPCNotification(
        jsonrpc="2.0", method="notifications/cancelled", params={"requestId": 7}), in_flight)
    assert len(in_flight) == 0
    sdk_lines.note_sent(mcp_types.JSONRPCResponse(jsonrpc="2.0", id=3, result={}), in_flight)
    assert len(in_flight) == 0  # the client's answers to the server are no calls


def test_a_non_strict_encoding_is_applied_line_by_line_as_the_sdk_does():
    lines = sdk_lines.Lines(sdk_lines.InFlight(16), ("utf-8", "replace"))
    item = lines.message(b'{"jsonrpc":"2.0","id":1,"result":{"t":"a\xffb"}}')
    assert isinstance(item, SessionMessage)
    assert item.message.result == {"t": "a\ufffdb"}


def test_the_module_shows_its_api_only():
    assert dir(rpcline.sdk) == ["DEFAULT_MAX_LINE_BYTES", "run_stdio", "stdio_client",
                                "stdio_server"]
    assert rpcline.sdk.DEFAULT_MAX_LINE_BYTES == 64 * 1024 * 1024
