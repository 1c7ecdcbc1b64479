"""``rpcline proxy`` against hostile or careless peers: odd cancellations, log lines on
stdout, duplicate ids, floods of requests, servers that ignore SIGTERM (issue 24)."""

from __future__ import annotations

import ast
import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from test_proxy import HERE, R, TIMEOUT, proxy_command, replies, run_proxy

import rpcline


def request(id: bytes) -> bytes:
    return R + b'"id":' + id + b',"method":"m"}\n'


def cancel(request_id: bytes) -> bytes:
    return R + b'"method":"notifications/cancelled","params":{"requestId":' + request_id + b"}}\n"


ODD = (b"[1]", b'{"a":1}', b"[]", b"null", b"1.5")


def test_a_client_cancellation_naming_an_array_or_object_is_forwarded_and_ignored(tmp_path):
    # All in the pipe before the relay attaches, a request pending: the relay must not die.
    log = tmp_path / "received"
    session = request(b"1") + b"".join(map(cancel, ODD)) + request(b"2")
    done = run_proxy(session, log=log)
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
    assert sorted(r["id"] for r in replies(done)) == [1, 2]
    assert log.read_bytes() == session  # every line forwarded


def test_a_server_cancellation_naming_an_array_or_object_is_forwarded_and_ignored():
    with subprocess.Popen(proxy_command(mode="odd-cancel"), stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        asked = orjson.loads(proxy.stdout.readline())
        assert asked["id"] == "s1"  # pending on the server's side now
        proxy.stdin.write(request(b"1"))
        proxy.stdin.flush()
        got = [orjson.loads(proxy.stdout.readline()) for _ in range(5)]
        proxy.stdin.close()
        assert proxy.wait(TIMEOUT) == 0
    assert [g["params"]["requestId"] for g in got[:4]] == [[1], {"a": 1}, 1.0, True]
    assert got[4] == {"jsonrpc": "2.0", "id": 1, "result": {"n": 1}}


def test_a_cancellation_naming_1_0_or_true_does_not_untrack_request_1():
    session = request(b"1") + cancel(b"1.0") + cancel(b"true")
    done = run_proxy(session, "--drain-timeout", "0.5", mode="deaf")
    (reply,) = replies(done)  # 1 was never cancelled: it still gets its answer
    assert reply["id"] == 1 and reply["error"]["message"] == "Connection closed"


def test_a_server_log_line_with_a_pending_id_is_no_answer():
    done = run_proxy(request(b"1") + request(b'"a"'), mode="noisy")
    assert replies(done) == [{"jsonrpc": "2.0", "id": 1, "result": {"n": 1}},
                             {"jsonrpc": "2.0", "id": "a", "result": {"n": 2}}]
    assert b"not forwarded" in done.stderr


def test_a_client_log_line_is_no_answer_to_a_server_request_and_a_bad_answer_is(tmp_path):
    log = tmp_path / "received"
    env = {**os.environ, "PEER_LOG": str(log)}
    with subprocess.Popen(proxy_command(mode="ask"), env=env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        assert orjson.loads(proxy.stdout.readline())["id"] == "s1"
        proxy.stdin.write(b'{"id":"s1","result":"disk 91% full"}\n'  # no jsonrpc: a log line
                          b'{"jsonrpc":"1.0","id":"s1","result":{}}\n')  # the answer, refused
        proxy.stdin.close()
        assert proxy.wait(TIMEOUT) == 0
    s2, s1 = map(orjson.loads, log.read_bytes().splitlines())  # s2: a refused request
    assert s2["id"] == "s2" and s1["id"] == "s1"
    assert s1["error"]["message"] == "Invalid response from the client"
    assert "jsonrpc" in s1["error"]["data"]


def test_duplicate_ids_in_flight_each_get_their_failure():
    done = run_proxy(request(b"7") + request(b"7") + request(b"8"), mode="die-after", arg="3")
    assert sorted(r["id"] for r in replies(done)) == [7, 7, 8]
    assert all(r["error"]["code"] == -32000 for r in replies(done))


def test_the_pending_table_counts_each_request_and_holds_at_most_its_limit():
    from rpcline._gateway.pending import Pending, request_id

    pending = Pending(3, 1 << 20)
    assert pending.add(7) is None and pending.add(7) is None and pending.add("7") is None
    assert pending.add(8) == "max_pending" and 8 not in pending and len(pending) == 3  # full
    assert pending.answered(7) and 7 in pending  # the second 7 is still waited for
    assert not pending.answered(9)
    assert sorted(pending.take_all(), key=str) == [7, "7"] and len(pending) == 0
    assert [request_id(v) for v in (1, "1", 1.0, True, [1], {"a": 1}, None)] == [
        1, "1", None, None, None, None, None]


def test_requests_past_max_pending_are_answered_at_once_and_not_forwarded(tmp_path):
    log = tmp_path / "received"
    session = request(b"1") + request(b"2") + request(b"3")
    done = run_proxy(session, "--max-pending", "2", "--drain-timeout", "0.5", mode="deaf",
                     log=log)
    first, *rest = replies(done)
    assert first["id"] == 3 and first["error"]["code"] == -32000
    assert first["error"]["message"] == "Too many pending requests"
    assert "2 requests without an answer" in first["error"]["data"]
    assert sorted(r["id"] for r in rest) == [1, 2]  # failed when the server was stopped
    assert log.read_bytes() == request(b"1") + request(b"2")


def test_server_requests_past_max_pending_are_answered_to_the_server(tmp_path):
    log = tmp_path / "received"
    env = {**os.environ, "PEER_LOG": str(log)}
    with subprocess.Popen(proxy_command("--max-pending", "2", mode="ask-3"), env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        asked = [orjson.loads(proxy.stdout.readline())["id"] for _ in range(2)]
        proxy.stdin.close()
        assert proxy.wait(TIMEOUT) == 0
        assert proxy.stdout.read() == b""  # s3 never reached the client
    assert asked == ["s1", "s2"]
    (answer,) = map(orjson.loads, log.read_bytes().splitlines())
    assert answer["id"] == "s3" and answer["error"]["message"] == "Too many pending requests"


@pytest.mark.skipif(sys.platform == "win32", reason="ru_maxrss")
def test_one_long_answer_costs_the_proxy_at_most_twice_its_size():
    # The line, and the pipe transport's copy of what the pipe has not taken: joining the
    # line with its LF first made a third copy (3.0x).
    path = HERE.parent / "benchmarks" / "relay_memory.py"
    spec = importlib.util.spec_from_file_location("relay_memory", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    size = 40 * bench.MB
    assert bench.peak(size) - bench.peak(0) <= 2.25 * size


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_becomes_sigkill_for_a_server_that_ignores_it():
    with subprocess.Popen(proxy_command("--kill-after", "0.3", mode="stubborn"),
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proxy:
        assert proxy.stdin and proxy.stdout and proxy.stderr
        proxy.stdin.write(request(b"1"))
        proxy.stdin.flush()  # and stdin stays open: no EOF ends this
        assert proxy.stderr.readline() == b"ignoring SIGTERM\n"
        started = time.monotonic()
        proxy.send_signal(signal.SIGTERM)
        reply = orjson.loads(proxy.stdout.readline())
        status = proxy.wait(TIMEOUT)
        elapsed = time.monotonic() - started
        proxy.stdin.close()
    assert status == 128 + signal.SIGKILL
    assert reply["id"] == 1 and reply["error"]["message"] == "Connection closed"
    assert elapsed < 5  # 0.3 s of grace, not the client's EOF


def test_a_record_path_that_cannot_be_written_is_named(tmp_path):
    prefix = tmp_path / "missing" / "session"
    done = run_proxy(request(b"1"), "--record", str(prefix))
    assert done.returncode == 2
    assert done.stderr == (f"rpcline proxy: cannot write {prefix}.client.jsonl: "
                           f"No such file or directory\n").encode()


def test_the_summary_counts_in_words_and_quiet_silences_it():
    done = run_proxy(request(b"1"))
    assert b"client to server 1 line (" in done.stderr
    assert b"server to client 1 line (" in done.stderr
    assert b"0 pending requests failed" in done.stderr
    quiet = run_proxy(request(b"1"), "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == b""
    assert replies(quiet) == replies(done)


def test_relay_stdio_and_types_import_downwards():
    # proxy -> _gateway.relay, _gateway.stdio -> _gateway.relay_types: no module imports one
    # that imports it.
    code = ("import sys, rpcline._gateway.relay, rpcline._gateway.stdio; "
            "assert 'rpcline.proxy' not in sys.modules, 'a lower module imports proxy'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    package = Path(rpcline.__file__).parent / "_gateway"  # in src/rpcline, or the wheel's
    source = (package / "relay_types.py").read_text()
    imported = [n for n in ast.walk(ast.parse(source))
                if isinstance(n, ast.ImportFrom | ast.Import)]
    names = [getattr(n, "module", None) or n.names[0].name for n in imported]
    assert not [name for name in names if name.startswith("rpcline")], names
    for module in ("relay.py", "stdio.py"):
        text = (package / module).read_text()
        assert "rpcline.proxy" not in text.replace("``rpcline.proxy``", "")
