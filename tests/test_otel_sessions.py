"""``mcp.server.session.duration``, ``rpcline.sessions`` and ``rpcline.child.restarts``:
``rpcline.otel.Telemetry``'s metrics of 2025-era sessions and of children started again,
read by the OpenTelemetry SDK's in-memory reader.

A session's duration is recorded once it ends: by its client's DELETE and by the bridge's
stop (no ``error.type``), by eviction past ``max_sessions`` (``evicted``), by an idle owner's
end (``timeout``); ``rpcline.sessions`` counts those open, by protocol version.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from rpcline._gateway.bridge_sessions import Sessions
from rpcline.otel import Telemetry

HERE = Path(__file__).parent
SERVER = [sys.executable, str(HERE / "sdk_server.py")]
V = "2025-06-18"


def metered() -> tuple[Telemetry, InMemoryMetricReader]:
    reader = InMemoryMetricReader()
    return Telemetry(meter_provider=MeterProvider(metric_readers=[reader])), reader


def points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    data = reader.get_metrics_data()
    assert data is not None
    return {metric.name: list(metric.data.data_points)
            for rm in data.resource_metrics for sm in rm.scope_metrics for metric in sm.metrics}


def test_a_session_s_end_is_measured_with_why_it_ended() -> None:
    telemetry, reader = metered()
    sessions = Sessions(limit=1, pool=object())  # type: ignore[arg-type]
    sessions.hooks, sessions.server = telemetry.hooks(), "demo"
    first = sessions.new(version=V)
    assert first is not None
    [opened] = points(reader)["rpcline.sessions"]
    assert opened.value == 1 and opened.attributes == {"mcp.protocol.version": V}
    second = sessions.new(version=V)  # past the limit: the idle first one is evicted
    assert second is not None and first.id not in sessions.open
    sessions.close(second)
    found = points(reader)
    [evicted] = [p for p in found["mcp.server.session.duration"]
                 if p.attributes.get("error.type") == "evicted"]
    [ended] = [p for p in found["mcp.server.session.duration"] if "error.type" not in p.attributes]
    assert evicted.count == ended.count == 1
    assert dict(ended.attributes) == {"mcp.protocol.version": V, "network.protocol.name": "http",
                                      "network.transport": "tcp"}
    assert ended.explicit_bounds[:3] == (0.01, 0.02, 0.05)
    [still] = found["rpcline.sessions"]
    assert still.value == 0
    sessions.close(second)  # once ended, never measured again
    assert sum(p.count for p in points(reader)["mcp.server.session.duration"]) == 2


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_delete_an_idle_owner_a_restart_and_the_stop_through_a_bridge() -> None:
    mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                              "installed")
    pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed")
    from _asgi import serving

    from rpcline.bridge import StdioBridge

    telemetry, reader = metered()
    shared = StdioBridge(SERVER, name="demo", hooks=telemetry.hooks())
    own = StdioBridge(SERVER, isolation="session", session_idle_timeout=0.5,
                      hooks=telemetry.hooks())
    try:
        async with serving(shared, timeout=60) as url:
            async with mcp.Client(url, mode="legacy") as client:  # ends with DELETE
                await client.call_tool("echo", {"text": "hi"})
            async with mcp.Client(url, mode="legacy") as client:
                with pytest.raises(Exception):  # noqa: B017 - the child dies under it
                    await client.call_tool("die", {})
                await asyncio.sleep(0.5)  # past the first restart's backoff
                await client.call_tool("echo", {"text": "again"})
                found = points(reader)
                assert [p.value for p in found["rpcline.sessions"]] == [1]
                [restarts] = found["rpcline.child.restarts"]
                assert restarts.value == 1
                assert restarts.attributes == {"rpcline.server.name": "demo"}
                await shared.aclose()  # the bridge's stop ends the session still open
        async with serving(own, timeout=60) as url, mcp.Client(url, mode="legacy") as client:
            await client.call_tool("echo", {"text": "hi"})
            for _ in range(100):  # the owner idles out: its session ends
                await asyncio.sleep(0.1)
                if not own.sessions.open:
                    break
    finally:
        await shared.aclose()
        await own.aclose()
    durations = points(reader)["mcp.server.session.duration"]
    by_end = {p.attributes.get("error.type"): p.count for p in durations}
    assert by_end == {None: 2, "timeout": 1}, by_end
    assert all(p.attributes["mcp.protocol.version"] for p in durations)
