"""The bridge's hooks (``rpcline._gateway.observe``): frozen records of each call, both eras.

An SDK 2.x client calls through a ``StdioBridge`` to an SDK child; the hooks see one start,
one child request and one end per forwarded call, with the method, the tool's name, the
caller's and the child's ids, the era, the session, the status and the error type
(``tool_error`` for ``isError: true``). ``child_meta`` entries reach the child spliced into
``params._meta`` (the scripted peer logs every byte it gets).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed")
pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx comes with the MCP SDK")

from _asgi import serving
from test_bridge import PEER, SERVER, V, call_tool

from rpcline._gateway.observe import CallEnded, CallStarted, ChildRequest, Hooks
from rpcline.bridge import StdioBridge

pytestmark = pytest.mark.anyio


class Seen:
    """Hooks that keep what they were given, per call (the ctx they share)."""

    def __init__(self) -> None:
        self.calls: list[SimpleNamespace] = []

    def hooks(self, meta: dict[str, str] | None = None) -> Hooks:
        def start(ctx: SimpleNamespace, record: CallStarted) -> None:
            ctx.started, ctx.child = record, None
            self.calls.append(ctx)

        def child(ctx: SimpleNamespace, record: ChildRequest) -> None:
            ctx.child = record

        def end(ctx: SimpleNamespace, record: CallEnded) -> None:
            ctx.ended = record

        return Hooks(on_call_start=[start], on_child_request=[child], on_call_end=[end],
                     child_meta=None if meta is None else (lambda ctx: meta))


@pytest.mark.parametrize("mode", ["legacy", V])
async def test_hooks_see_each_call_in_both_eras(mode: str) -> None:
    seen = Seen()
    app = StdioBridge(SERVER, name="demo", hooks=seen.hooks())
    try:
        async with serving(app, timeout=60) as url, mcp.Client(url, mode=mode) as client:
            await client.call_tool("echo", {"text": "hi"})
            await client.call_tool("fail", {"message": "nope"})
            await client.list_tools()
    finally:
        await app.aclose()
    era = "2025" if mode == "legacy" else "2026"
    calls = seen.calls  # the client also lists the tools for their output schemas
    outcome = {(c.started.method, c.started.target, c.ended.error_type) for c in calls}
    assert outcome == {("tools/call", "echo", None), ("tools/call", "fail", "tool_error"),
                       ("tools/list", None, None)}
    for c in calls:
        s, e = c.started, c.ended
        assert dataclasses.is_dataclass(s) and s.era == era and s.server == "demo"
        assert s.transport == "tcp" and s.client_address == "127.0.0.1"
        assert (s.session_id is not None) == (era == "2025")
        assert s.protocol_version is not None
        assert c.child is not None and c.child.child.startswith(era + "-")
        assert e.status == 200 and e.child_id is not None and e.child_id > 0
        assert e.duration >= e.child_duration >= 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        calls[0].started.method = "x"  # type: ignore[misc]


async def test_an_error_answer_and_a_refusal_are_told(tmp_path: Path) -> None:
    seen = Seen()
    app = StdioBridge(SERVER, hooks=seen.hooks(), max_waiting=0)  # no child yet: 503
    try:
        async with serving(app, timeout=30) as url, httpx.AsyncClient(timeout=10) as http:
            body, headers = call_tool(7, "echo", {"text": "x"})
            answer = await http.post(url, content=body, headers=headers)
    finally:
        await app.aclose()
    assert answer.status_code == 503
    [c] = seen.calls
    assert c.child is None and c.ended.status == 503 and c.ended.child_id is None
    assert c.ended.error_type == str(answer.json()["error"]["code"])
    assert c.started.caller_id == 7


async def test_child_meta_is_spliced_toward_the_child(tmp_path: Path, monkeypatch: Any) -> None:
    received = tmp_path / "received.jsonl"
    monkeypatch.setenv("PEER_LOG", str(received))
    seen = Seen()
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    app = StdioBridge([*PEER, "answer"], env=["PEER_LOG"],
                      hooks=seen.hooks({"traceparent": parent}))
    try:
        async with serving(app, timeout=30) as url, httpx.AsyncClient(timeout=10) as http:
            body, headers = call_tool(1, "echo", {"text": "é"})
            answer = await http.post(url, content=body, headers=headers)
    finally:
        await app.aclose()
    assert answer.json()["id"] == 1
    lines = [orjson.loads(line) for line in received.read_bytes().splitlines()]
    call = lines[-1]
    sent = orjson.loads(body)
    assert call["params"]["_meta"] == {**sent["params"]["_meta"], "traceparent": parent}
    assert call["params"]["arguments"] == {"text": "é"}
    assert "traceparent" not in lines[0].get("params", {}).get("_meta", {})  # the probe


async def test_without_hooks_nothing_is_spliced(tmp_path: Path, monkeypatch: Any) -> None:
    received = tmp_path / "received.jsonl"
    monkeypatch.setenv("PEER_LOG", str(received))
    app = StdioBridge([*PEER, "answer"], env=["PEER_LOG"])
    body, headers = call_tool(1, "echo", {"text": "é"})
    try:
        async with serving(app, timeout=30) as url, httpx.AsyncClient(timeout=10) as http:
            await http.post(url, content=body, headers=headers)
    finally:
        await app.aclose()
    assert received.read_bytes().splitlines()[-1] == body.replace(b'"id":1', b'"id":2')
