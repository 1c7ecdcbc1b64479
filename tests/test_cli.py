"""The rpcline command, run as a subprocess, on both implementations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

SESSION = b"\n".join(
    [
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}',
        b"",
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b"INFO server started",
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":[1]}',
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}',
    ]
) + b"\n"


@pytest.fixture(
    params=[pytest.param("cython", marks=pytest.mark.c_extension), "python"], scope="module"
)
def implementation(request) -> str:
    return request.param


def rpcline(implementation: str, *args: str, input: bytes = b"") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "RPCLINE_NO_EXTENSIONS"}
    if implementation == "python":
        env["RPCLINE_NO_EXTENSIONS"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "rpcline", *args],
        input=input, capture_output=True, env=env, timeout=120,
    )


def test_version_names_the_implementation(implementation):
    done = rpcline(implementation, "--version")
    assert done.returncode == 0
    assert done.stdout.decode().startswith("rpcline ")
    assert f"({implementation})" in done.stdout.decode()


def test_check_reports_refused_lines_with_physical_numbers(implementation):
    done = rpcline(implementation, "check", input=SESSION)
    assert done.returncode == 1
    out = done.stdout.decode()
    assert "<stdin>:5: -32700 Parse error" in out  # blank line 2 is counted
    assert "<stdin>:6: -32602 Invalid params: params must be an object" in out
    assert '"id":2' in out  # the answer a server would send carries the id
    summary = out[out.index("\nmessages") :].split()
    assert summary[summary.index("request") + 1] == "2"
    assert summary[summary.index("refused") + 1] == "2"
    assert summary[summary.index("total") + 1] == "6"


def test_check_json_report(implementation, tmp_path: Path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(SESSION)
    done = rpcline(implementation, "check", "--json", str(path))
    assert done.returncode == 1
    report = orjson.loads(done.stdout)
    assert report["messages"] == 6
    assert report["kinds"] == {"request": 2, "notification": 1, "response": 1, "refused": 2}
    assert report["refusals_by_code"] == {"-32700 Parse error": 1, "-32602 Invalid params": 1}
    assert [(r["line"], r["code"]) for r in report["refused"]] == [(5, -32700), (6, -32602)]
    assert report["refused"][1]["response"] == {
        "jsonrpc": "2.0", "id": 2,
        "error": {"code": -32602, "message": "Invalid params", "data": "params must be an object"},
    }
    assert report["top_methods"]["tools/call"] == 1


def test_check_clean_input_exits_zero(implementation):
    done = rpcline(implementation, "check", input=SESSION.split(b"\n")[0] + b"\n")
    assert done.returncode == 0, done.stderr
    assert b"request" in done.stdout


def test_missing_file_is_status_2_and_one_line(implementation, tmp_path: Path):
    done = rpcline(implementation, "check", str(tmp_path / "absent.jsonl"))
    assert done.returncode == 2
    assert done.stderr.decode().count("\n") == 1
    assert "absent.jsonl" in done.stderr.decode()
    assert b"Traceback" not in done.stderr


def test_usage_error_is_status_2(implementation):
    done = rpcline(implementation, "frobnicate")
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr


def test_classify_streams_one_json_line_per_message(implementation):
    done = rpcline(implementation, "classify", input=SESSION)
    assert done.returncode == 0
    rows = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert rows[0] == {"line": 1, "kind": "request", "id": 1, "method": "initialize"}
    assert rows[1] == {"line": 3, "kind": "notification", "method": "notifications/initialized"}
    assert rows[2] == {"line": 4, "kind": "response", "id": 1}
    assert rows[3]["line"] == 5 and rows[3]["kind"] == "refused" and rows[3]["code"] == -32700
    assert len(rows) == 6


def test_sample_then_check(implementation):
    sample = rpcline(implementation, "sample", "300")
    assert sample.returncode == 0
    assert len(sample.stdout.splitlines()) == 300
    done = rpcline(implementation, "check", "--json", input=sample.stdout)
    report = orjson.loads(done.stdout)
    assert report["messages"] == 300
    assert done.returncode == (1 if report["refused"] else 0)


def test_bench_json_on_a_file(implementation, tmp_path: Path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(SESSION)
    done = rpcline(implementation, "bench", str(path), "--rounds", "2", "--json")
    assert done.returncode == 0, done.stderr
    report = orjson.loads(done.stdout)
    names = [row["contender"] for row in report["contenders"]]
    assert names[0] == "orjson.loads"
    assert f"rpcline.parse ({implementation})" in names
    assert all(row["ns_per_message"] > 0 for row in report["contenders"])
    assert report["messages"] == 6
