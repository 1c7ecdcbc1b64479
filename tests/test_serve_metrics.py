"""``rpcline serve --metrics`` scraped by a real Prometheus, and ``--otel`` exporting spans.

Prometheus (Debian's package; ``.ci/run`` installs it) scrapes ``/metrics`` of a running
``rpcline serve`` on loopback, with the bearer token the gateway asks for; its HTTP API must
then hold the duration histogram of the calls this test made: their count, and the labels
of the MCP semantic conventions. ``--otel`` with ``OTEL_TRACES_EXPORTER=console`` writes the
SERVER and CLIENT spans of a call to stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="uvicorn (the serve extra) is not installed")
pytest.importorskip("opentelemetry.exporter.prometheus", reason="the metrics extra is not "
                    "installed")
httpx = pytest.importorskip("httpx", reason="httpx comes with the MCP SDK")
pytestmark = pytest.mark.real_parts

from _console_spans import console_spans
from test_bridge import call_tool, modern

HERE = Path(__file__).parent
SERVER = [sys.executable, str(HERE / "sdk_server.py")]
PROMETHEUS = shutil.which("prometheus")
TOKEN = "metrics-test-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, process: subprocess.Popen[bytes], **kwargs: Any) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, f"exited with {process.returncode}"
        try:
            httpx.get(url, timeout=2, **kwargs)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer in 30 s")


@contextmanager
def serve(*flags: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, Any]]:
    """``rpcline serve FLAGS -- sdk_server.py`` on a free port; its base URL and process."""
    port = free_port()
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TOKEN": TOKEN,
                   **(env or {})}
    process = subprocess.Popen(
        [sys.executable, "-m", "rpcline", "serve", "--port", str(port), "--token-env", "TOKEN",
         *flags, "--", *SERVER], env=environment, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{base}/healthz", process)
        yield base, process
    finally:
        process.terminate()
        process.wait(30)


def calls(base: str, n: int) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for i in range(n):
        body, headers = call_tool(i, "echo", {"text": str(i)})
        answer = httpx.post(f"{base}/mcp", content=body, headers={**headers, **auth}, timeout=30)
        assert answer.json()["result"]["content"][0]["text"] == str(i)
    body, headers = modern(99, "tools/list")
    assert httpx.post(f"{base}/mcp", content=body, headers={**headers, **auth},
                      timeout=30).status_code == 200


def test_metrics_behind_the_token_in_prometheus_text() -> None:
    with serve("--metrics") as (base, _):
        calls(base, 3)
        assert httpx.get(f"{base}/metrics").status_code == 401
        text = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
    lines = [line for line in text.splitlines()
             if line.startswith("mcp_server_operation_duration_seconds_count")
             and 'gen_ai_tool_name="echo"' in line]
    assert len(lines) == 1 and lines[0].endswith(" 3.0"), text
    assert 'mcp_method_name="tools/call"' in lines[0]
    assert 'gen_ai_operation_name="execute_tool"' in lines[0]
    assert "mcp_client_operation_duration_seconds_bucket" in text


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus is not installed (apt-get install "
                    "prometheus; .ci/run does)")
def test_prometheus_scrapes_the_duration_histogram(tmp_path: Path) -> None:
    with serve("--metrics") as (base, _):
        calls(base, 4)
        port = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(json.dumps({  # YAML is a superset of JSON
            "global": {"scrape_interval": "1s"},
            "scrape_configs": [{
                "job_name": "rpcline", "metrics_path": "/metrics",
                "authorization": {"credentials": TOKEN},
                "static_configs": [{"targets": [base.removeprefix("http://")]}]}]}))
        assert PROMETHEUS is not None
        prometheus = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            api = f"http://127.0.0.1:{port}/api/v1/query"
            wait_for(f"http://127.0.0.1:{port}/-/ready", prometheus)
            query = 'mcp_server_operation_duration_seconds_count{gen_ai_tool_name="echo"}'
            deadline, result = time.monotonic() + 60, []
            while time.monotonic() < deadline and not result:
                answer = httpx.get(api, params={"query": query}, timeout=5).json()
                result = answer["data"]["result"]
                time.sleep(0.5)
        finally:
            prometheus.terminate()
            prometheus.wait(30)
    assert len(result) == 1, result
    labels, (_, value) = result[0]["metric"], result[0]["value"]
    assert float(value) == 4
    assert labels["job"] == "rpcline" and labels["mcp_method_name"] == "tools/call"
    assert labels["gen_ai_operation_name"] == "execute_tool"
    assert labels["network_transport"] == "tcp"


def test_otel_writes_the_spans_of_a_call() -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is "
                        "not installed")
    env = {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none",
           "OTEL_SERVICE_NAME": "gateway-under-test"}
    with serve("--otel", env=env) as (base, process):
        calls(base, 1)
        process.terminate()  # the spans are flushed at shutdown
        _, err = process.communicate(timeout=30)
    spans = console_spans(err.decode())
    named = {(s["name"], s["kind"]) for s in spans}
    assert ("tools/call echo", "SpanKind.SERVER") in named
    assert ("tools/call echo", "SpanKind.CLIENT") in named
    [server] = [s for s in spans if s.get("kind") == "SpanKind.SERVER"
                and s["name"] == "tools/call echo"]
    assert server["resource"]["attributes"]["service.name"] == "gateway-under-test"
    assert server["attributes"]["gen_ai.tool.name"] == "echo"


def test_an_unknown_exporter_is_a_usage_error() -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is "
                        "not installed")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path),
           "OTEL_TRACES_EXPORTER": "zipkin"}
    done = subprocess.run([sys.executable, "-m", "rpcline", "serve", "--otel", "--", *SERVER],
                          env=env, capture_output=True, timeout=30)
    assert done.returncode == 2
    assert b"OTEL_TRACES_EXPORTER=zipkin" in done.stderr
