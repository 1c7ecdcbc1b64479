"""``rpcline serve --log-format json``: every stderr line one JSON object, trace ids included.

The gateway's own lines, the child's (prefixed, then parsed back into ``source``) and the
line a traced call writes (a call the child could not take in time) each come out as one
object; that last one names the trace the caller's ``traceparent`` header started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

pytest.importorskip("uvicorn", reason="uvicorn (the serve extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx comes with the MCP SDK")

from test_bridge import call_tool
from test_serve_metrics import SERVER, free_port, wait_for

TRACE = "0af7651916cd43dd8448eb211c80319c"


def run(*flags: str, env: dict[str, str] | None = None) -> tuple[list[str], list[dict]]:
    """Serve with ``flags``; a call that times out waiting for the child, then two calls;
    the stderr lines and the answers."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "rpcline", "serve", "--port", str(port), *flags, "--",
         *SERVER], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **(env or {})},
        stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/mcp"
    answers = []
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz", process)
        body, headers = call_tool(1, "echo", {"text": "x"})
        parent = f"00-{TRACE}-b7ad6b7169203331-01"
        answers.append(httpx.post(url, content=body, headers={**headers, "traceparent": parent},
                                  timeout=30).json())  # the child is not up in 0.05 s
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the child runs
            answer = httpx.post(url, content=body, headers=headers, timeout=30).json()
            if "result" in answer:
                break
            time.sleep(0.2)
        body, headers = call_tool(2, "fail", {"message": "nope"})  # a traceback on its stderr
        answers.append(httpx.post(url, content=body, headers=headers, timeout=30).json())
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    return err.decode().splitlines(), answers


def test_every_line_is_one_json_object_with_the_trace() -> None:
    pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")
    lines, answers = run("--log-format", "json", "--otel", "--request-timeout", "0.05",
                         env={"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"})
    assert answers[0]["error"]["message"] == "Request timed out"
    records = [json.loads(line) for line in lines]  # every line: one object
    assert all({"time", "source", "message"} <= r.keys() for r in records)
    unsent = [r for r in records if "it was not sent" in r["message"]]
    assert all(r["source"] == "rpcline" and "trace_id" in r for r in unsent)
    [unsent] = [r for r in unsent if r["trace_id"] == TRACE]  # the first call's own line
    assert len(unsent["span_id"]) == 16
    assert any(r["message"].startswith("listening on http://") for r in records)
    children = [r for r in records if "2026-1" in r["source"]]
    assert any("nope" in r["message"] for r in children)


def test_text_stays_the_default() -> None:
    lines, _ = run("--request-timeout", "0.05")
    assert any(line.startswith("rpcline serve: listening on") for line in lines)
    assert not any(line.startswith("{") for line in lines)
