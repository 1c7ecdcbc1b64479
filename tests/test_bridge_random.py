"""Many clients of both eras on shared children, at random: nobody reaches anybody else.

A hypothesis state machine drives ``StdioBridge`` in-process (its ASGI calls, no HTTP
server) against tests/chaos_peer.py, whose tools echo, send progress, log, stall and crash.
Clients reuse each other's ids and progress tokens on purpose. After every step that lets
the calls finish, each call's answer reached its caller alone, exactly once, under its own
id, within the request timeout (a result naming its own marker, or the -32000 of a crash or
a timeout); its progress carried its own token and marker; no session's GET stream got a
response or any call's progress (log lines reach every session: docs/serve.md). After each
run no child process, pending call or descriptor is left.

``RPCLINE_RANDOM_EXAMPLES`` sets how many runs (default 20, some 15 s; .ci/run asks for 100).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from rpcline.bridge import StdioBridge

CHAOS = [sys.executable, str(Path(__file__).parent / "chaos_peer.py")]
TIMEOUT = 1.5  # the bridge's request timeout, seconds
V = "2026-07-28"
ACCEPT = (b"accept", b"application/json, text/event-stream")
JSON = (b"content-type", b"application/json")
HOST = (b"host", b"127.0.0.1:1")
IDS = st.sampled_from([1, 2, "1", "a"])  # shared by every client: the bridge keeps them apart
TOKENS = st.sampled_from([None, 1, 2, "1", "t"])


@dataclass
class Exchange:
    """One HTTP request to the app, as its client sees it."""

    sent: list[dict[str, Any]] = field(default_factory=list)
    ended: asyncio.Event = field(default_factory=asyncio.Event)  # the response is complete
    leave: asyncio.Event = field(default_factory=asyncio.Event)  # the client disconnects

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent[1:])

    def messages(self) -> list[Any]:
        """The JSON message, or every SSE event's message, of the response."""
        headers = dict(self.sent[0]["headers"])
        if headers.get(b"content-type") != b"text/event-stream":
            return [orjson.loads(self.body)]
        return [json.loads(line[6:]) for line in self.body.decode().splitlines()
                if line.startswith("data: ")]


async def exchange(app: StdioBridge, method: str, headers: list[tuple[bytes, bytes]],
                   body: bytes = b"", into: Exchange | None = None) -> Exchange:
    x = into or Exchange()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await x.leave.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        assert not x.ended.is_set(), f"sent after the response ended: {message}"
        x.sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            x.ended.set()

    await app({"type": "http", "method": method, "path": "/mcp", "headers": headers},
              receive, send)
    return x


@dataclass
class Call:
    id: Any
    tool: str
    marker: str
    token: Any
    task: asyncio.Task[Exchange]


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


class SharedChildren(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.descriptors = open_descriptors()
        self.loop = asyncio.new_event_loop()
        self.app = StdioBridge(CHAOS, request_timeout=TIMEOUT, log=lambda message: None)
        self.sessions: list[tuple[bytes, Exchange, asyncio.Task[Exchange]]] = []
        self.calls: list[Call] = []
        self.markers = 0
        self.crashed = False

    def run(self, awaitable: Any) -> Any:
        return self.loop.run_until_complete(awaitable)

    @rule()
    def open_session(self) -> None:
        body = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "random", "version": "1"}}})
        opened = self.run(exchange(self.app, "POST", [HOST, ACCEPT, JSON], body))
        assert opened.status == 200, opened.body
        session = dict(opened.sent[0]["headers"])[b"mcp-session-id"]
        stream = Exchange()
        task = self.loop.create_task(exchange(self.app, "GET", [
            HOST, (b"accept", b"text/event-stream"), (b"mcp-session-id", session)], into=stream))
        self.sessions.append((session, stream, task))

    @rule(tool=st.sampled_from(["echo", "progress", "log", "stall"]), id=IDS, token=TOKENS,
          modern=st.booleans(), which=st.integers(0, 7))
    def call(self, tool: str, id: Any, token: Any, modern: bool, which: int) -> None:
        self._start(tool, id, token, modern, which)

    @precondition(lambda self: not self.crashed)  # once a run: restarts back off
    @rule(id=IDS, modern=st.booleans(), which=st.integers(0, 7))
    def crash(self, id: Any, modern: bool, which: int) -> None:
        self.crashed = True
        self._start("crash", id, None, modern, which)

    def _start(self, tool: str, id: Any, token: Any, modern: bool, which: int) -> None:
        if not modern and not self.sessions:
            self.open_session()
        self.markers += 1
        marker = f"m{self.markers}"
        meta: dict[str, Any] = {} if token is None else {"progressToken": token}
        headers = [HOST, ACCEPT, JSON]
        if modern:
            meta |= {"io.modelcontextprotocol/protocolVersion": V,
                     "io.modelcontextprotocol/clientCapabilities": {}}
            headers += [(b"mcp-protocol-version", V.encode()), (b"mcp-method", b"tools/call"),
                        (b"mcp-name", tool.encode())]
        else:
            headers.append((b"mcp-session-id", self.sessions[which % len(self.sessions)][0]))
        params: dict[str, Any] = {"name": tool, "arguments": {"marker": marker}}
        if meta:
            params["_meta"] = meta
        body = orjson.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                             "params": params})
        task = self.loop.create_task(exchange(self.app, "POST", headers, body))
        self.calls.append(Call(id, tool, marker, token, task))

    @rule()
    def settle(self) -> None:
        """Every call started so far finishes, and is judged."""
        calls, self.calls = self.calls, []
        if calls:
            done, waiting = self.run(asyncio.wait([c.task for c in calls],
                                                  timeout=TIMEOUT * 4 + 2))
            assert not waiting, [c.tool for c in calls if c.task in waiting]
        self.run(asyncio.sleep(0.05))  # what the child sent meanwhile reaches the streams
        for call in calls:
            self._judge(call, call.task.result())

    def _judge(self, call: Call, x: Exchange) -> None:
        assert x.ended.is_set() and x.status == 200, (call, x.sent[:1])
        finals = [m for m in x.messages() if "id" in m]
        assert len(finals) == 1, finals  # exactly one answer
        answer = finals[0]
        assert answer["id"] == call.id and type(answer["id"]) is type(call.id)
        if "result" in answer:
            assert call.tool not in ("stall", "crash")
            assert answer["result"]["content"][0]["text"] == call.marker  # its own
        else:
            assert answer["error"]["code"] == -32000, answer  # a crash or the timeout
        for note in x.messages()[:-1]:
            assert note["method"] == "notifications/progress", note
            assert note["params"]["progressToken"] == call.token, note
            assert note["params"]["message"] == call.marker, note

    @invariant()
    def streams_carry_nothing_of_anyone_s_call(self) -> None:
        """No session's GET stream holds an answer or any call's progress."""
        for _, stream, _ in self.sessions:
            if not stream.sent:
                continue
            for message in stream.messages():
                assert "id" not in message, message  # no answer
                assert message.get("method") != "notifications/progress", message

    def teardown(self) -> None:
        try:
            self.settle()
            for _, stream, _ in self.sessions:
                stream.leave.set()
            if self.sessions:
                self.run(asyncio.wait([t for _, _, t in self.sessions], timeout=10))
                assert all(t.done() for _, _, t in self.sessions), "a GET stream did not end"
                self.streams_carry_nothing_of_anyone_s_call()  # whole, now
            children = [*self.app.legacy.children, *self.app.modern.children]
            self.run(self.app.aclose())
            for child in children:
                assert not child.running and not child.calls, child.name
                process = child.child
                assert process.pid is None or process.returncode is not None, child.name
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()
        assert open_descriptors() <= self.descriptors, "a descriptor was left open"


SharedChildren.TestCase.settings = settings(
    max_examples=int(os.environ.get("RPCLINE_RANDOM_EXAMPLES", "20")),
    stateful_step_count=15, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_shared_children_at_random = pytest.mark.skipif(
    not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc (Linux)")(
    SharedChildren.TestCase)
