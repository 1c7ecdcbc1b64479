"""``rpcline proxy`` against a scripted server (tests/proxy_peer.py): bytes, answers, ends.

Each test runs the real command in a subprocess, on the implementation the facade
picks (RPCLINE_NO_EXTENSIONS=1 runs them on the twin). The SDK's own client and server
are in tests/test_proxy_sdk.py.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

HERE = Path(__file__).parent
PEER = HERE / "proxy_peer.py"
R = b'{"jsonrpc":"2.0",'
TIMEOUT = 60


def proxy_command(*options: str, mode: str = "answer", arg: str | None = None) -> list[str]:
    peer = [sys.executable, str(PEER), mode, *([arg] if arg is not None else [])]
    return [sys.executable, "-m", "rpcline", "proxy", *options, "--", *peer]


def run_proxy(data: bytes, *options: str, mode: str = "answer", arg: str | None = None,
              log: Path | None = None, **kwargs) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, **({"PEER_LOG": str(log)} if log else {})}
    return subprocess.run(proxy_command(*options, mode=mode, arg=arg), input=data,
                          capture_output=True, timeout=TIMEOUT, env=env, **kwargs)


def replies(done: subprocess.CompletedProcess[bytes]) -> list[dict]:
    return [orjson.loads(line) for line in done.stdout.splitlines()]


def by_id(done: subprocess.CompletedProcess[bytes]) -> dict:
    return {(type(r["id"]).__name__, r["id"]): r for r in replies(done)}


# --- bytes in, the same bytes out -------------------------------------------------------------

VALID = [
    R + b'"id":1,"method":"tools/call","params":{"name":"v","arguments":{"v":18446744073709551617}}}',
    R + b'"id":"1","method":"x","params":{"f":1.0000000000000000001,"e":1E400}}'.replace(b"1E400", b"1e300"),
    b'  {"jsonrpc":"2.0","method":"notifications/x","params":5}\r',  # forwarded as it came
    R + b'"id":3,"method":"caf\xc3\xa9","params":{"s":"\\u00e9\\n\\ud83d\\ude00"}} ',
]


def test_valid_lines_reach_the_server_byte_for_byte(tmp_path):
    log = tmp_path / "received"
    done = run_proxy(b"\n".join(VALID) + b"\n", log=log)
    assert done.returncode == 0, done.stderr
    assert log.read_bytes() == b"\n".join(VALID) + b"\n"
    got = by_id(done)
    assert set(got) == {("int", 1), ("str", "1"), ("int", 3)}  # 1 and "1" stay apart
    assert got[("int", 1)]["result"] == {"n": 1} and got[("str", "1")]["result"] == {"n": 2}


def test_server_lines_reach_the_client_byte_for_byte():
    big = b"x" * 200_000
    done = run_proxy(R + b'"id":7,"method":"m"}\n', mode="huge-answer", arg=str(len(big)))
    assert done.stdout == R + b'"id":7,"result":{"text":"' + big + b'"}}\n'


def test_refused_client_requests_are_answered_and_responses_never(tmp_path):
    log = tmp_path / "received"
    session = [
        b"not json at all",
        R + b'"id":7,"method":"tools/call","params":null}',   # invalid params: answered with 7
        R + b'"id":8,"method":5}',                             # method not a string: answered
        b'{"jsonrpc":"1.0","id":5,"result":{}}',               # shaped like a response: silent
        b'{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}',  # silent too
        R + b'"id":9,"method":"ping"}',                        # and relaying goes on
    ]
    done = run_proxy(b"\n".join(session) + b"\n", log=log)
    got = by_id(done)
    assert got[("NoneType", None)]["error"]["code"] == -32700
    assert got[("int", 7)]["error"]["code"] == -32602
    assert got[("int", 8)]["error"]["code"] == -32600
    assert got[("int", 9)]["result"] == {"n": 1}
    assert len(replies(done)) == 4  # nothing for id 5, nothing for the null-id error
    assert log.read_bytes() == session[-1] + b"\n"  # only the valid line reached the server
    assert b"refused response" in done.stderr


# --- no caller waits forever ------------------------------------------------------------------


def test_a_server_that_dies_mid_call_fails_every_pending_request_at_once():
    session = R + b'"id":1,"method":"a"}\n' + R + b'"id":"1","method":"b"}\n'
    started = time.monotonic()
    with subprocess.Popen(proxy_command(mode="die-after", arg="2"), stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        proxy.stdin.write(session)
        proxy.stdin.flush()  # and the client keeps its stdin open: no EOF helps here
        first, second = proxy.stdout.readline(), proxy.stdout.readline()
        elapsed = time.monotonic() - started
        proxy.stdin.close()
        assert proxy.wait(TIMEOUT) == 3  # the server's exit status
    errors = {(type(r["id"]), r["id"]): r["error"] for r in map(orjson.loads, (first, second))}
    assert set(errors) == {(int, 1), (str, "1")}
    for error in errors.values():
        assert error["code"] == -32000 and error["message"] == "Connection closed"
        assert "server closed its output" in error["data"]
    assert elapsed < 30


def test_a_server_whose_child_keeps_its_stdout_fails_pending_requests_when_it_exits(tmp_path):
    pidfile = tmp_path / "grandchild"
    try:
        done = run_proxy(R + b'"id":1,"method":"m"}\n', mode="orphan", arg=str(pidfile))
    finally:
        if pidfile.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
    assert done.returncode == 4
    (reply,) = replies(done)
    assert reply["id"] == 1 and reply["error"]["code"] == -32000
    assert reply["error"]["data"] == "the server exited with status 4"


def test_a_cancelled_request_is_not_waited_for_nor_failed():
    cancel = R + b'"method":"notifications/cancelled","params":{"requestId":"7"}}\n'
    session = R + b'"id":7,"method":"m"}\n' + R + b'"id":"7","method":"m"}\n' + cancel
    done = run_proxy(session, "--drain-timeout", "1", mode="deaf")
    (reply,) = replies(done)  # "7" was cancelled (and the SDKs never answer it); 7 was not
    assert reply["id"] == 7 and reply["error"]["code"] == -32000
    assert b"1 pending request failed" in done.stderr


def test_a_refused_answer_fails_its_request():
    done = run_proxy(R + b'"id":4,"method":"m"}\n', mode="bad-answer")
    (reply,) = replies(done)
    assert reply["id"] == 4 and reply["error"]["code"] == -32000
    assert reply["error"]["message"] == "Invalid response from the server"  # not "closed"
    assert "answer was refused" in reply["error"]["data"]


def test_an_over_long_server_answer_fails_its_request():
    done = run_proxy(R + b'"id":"big","method":"m"}\n', "--max-line-bytes", "1000",
                     mode="huge-answer", arg="5000")
    (reply,) = replies(done)
    assert reply["id"] == "big" and reply["error"]["code"] == -32000
    assert reply["error"]["message"] == "Invalid response from the server"
    assert "line exceeds 1000 bytes" in reply["error"]["data"]


def test_an_over_long_client_request_is_answered_with_its_id():
    line = R + b'"id":12,"method":"tools/call","params":{"s":"' + b"x" * 5000 + b'"}}'
    done = run_proxy(line + b"\n" + R + b'"id":13,"method":"m"}\n', "--max-line-bytes", "1000")
    got = by_id(done)
    assert got[("int", 12)]["error"] == {"code": -32700, "message": "Parse error",
                                         "data": "line exceeds 1000 bytes"}
    assert got[("int", 13)]["result"] == {"n": 1}


def test_pending_answers_are_awaited_after_the_clients_eof():
    done = run_proxy(R + b'"id":1,"method":"m"}\n', mode="slow", arg="0.5")
    assert replies(done) == [{"jsonrpc": "2.0", "id": 1, "result": {"n": 1}}]
    assert done.returncode == 0


def test_a_server_that_stays_after_eof_is_terminated_after_the_drain_timeout():
    started = time.monotonic()
    done = run_proxy(R + b'"id":1,"method":"m"}\n', "--drain-timeout", "0.5", mode="deaf")
    assert done.returncode == 128 + signal.SIGTERM
    (reply,) = replies(done)
    assert reply["id"] == 1 and reply["error"]["code"] == -32000
    assert time.monotonic() - started < 30


# --- the server's own lines ---------------------------------------------------------------------


def test_a_servers_null_id_error_is_forwarded_unchanged():
    done = run_proxy(R + b'"id":1,"method":"m"}\n', mode="null-error")
    assert done.stdout.splitlines()[0] == (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
    )


def test_server_requests_are_relayed_and_a_refused_one_is_answered(tmp_path):
    log = tmp_path / "received"
    with subprocess.Popen(proxy_command(mode="ask"), stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env={**os.environ, "PEER_LOG": str(log)}) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        asked = orjson.loads(proxy.stdout.readline())  # s1 only: s2 is refused
        assert asked == {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}
        proxy.stdin.write(R + b'"id":"s1","result":{"roots":[]}}\n')
        proxy.stdin.close()
        assert proxy.wait(TIMEOUT) == 0
    received = log.read_bytes().splitlines()
    assert orjson.loads(received[0]) == {"jsonrpc": "2.0", "id": "s2", "error": {
        "code": -32600, "message": "Invalid Request", "data": "method must be a string"}}
    assert received[1] == R + b'"id":"s1","result":{"roots":[]}}'


# --- streams, files, bursts, records, failures --------------------------------------------------


def test_stdin_may_be_a_regular_file(tmp_path):
    session = tmp_path / "session.jsonl"
    session.write_bytes(b"".join(R + b'"id":%d,"method":"m"}\n' % i for i in range(100)))
    with session.open("rb") as stdin:
        done = subprocess.run(proxy_command(), stdin=stdin, capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert sorted(r["id"] for r in replies(done)) == list(range(100))


def test_stdout_may_be_a_regular_file(tmp_path):
    out = tmp_path / "out.jsonl"
    with out.open("wb") as stdout:
        done = subprocess.run(proxy_command(), input=R + b'"id":1,"method":"m"}\n',
                              stdout=stdout, stderr=subprocess.PIPE, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert orjson.loads(out.read_bytes())["result"] == {"n": 1}


def test_a_burst_of_3000_requests_before_reading_does_not_deadlock():
    burst = b"".join(R + b'"id":%d,"method":"tools/call","params":{"name":"t","arguments":'
                     b'{"pad":"%s"}}}\n' % (i, b"p" * 150) for i in range(3000))
    assert len(burst) > 500_000  # far more than a pipe holds
    done = run_proxy(burst)
    assert done.returncode == 0, done.stderr
    assert sorted(r["id"] for r in replies(done)) == list(range(3000))


def test_record_writes_each_sides_bytes_and_check_reads_them(tmp_path):
    prefix = tmp_path / "session"
    session = R + b'"id":1,"method":"m"}\n' + b"junk\n" + R + b'"method":"n"}\n'
    done = run_proxy(session, "--record", str(prefix))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "session.client.jsonl").read_bytes() == session
    server = (tmp_path / "session.server.jsonl").read_bytes()
    assert server == R + b'"id":1,"result":{"n":1}}\n'
    check = subprocess.run([sys.executable, "-m", "rpcline", "check",
                            str(tmp_path / "session.server.jsonl")], capture_output=True,
                           timeout=TIMEOUT)
    assert check.returncode == 0, check.stdout
    check = subprocess.run([sys.executable, "-m", "rpcline", "check",
                            str(tmp_path / "session.client.jsonl")], capture_output=True,
                           timeout=TIMEOUT)
    assert check.returncode == 1  # the junk line


def test_a_command_that_cannot_start_is_one_line_and_status_2():
    done = subprocess.run([sys.executable, "-m", "rpcline", "proxy", "--",
                           "/nonexistent/server"], input=b"", capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 2
    assert done.stderr.count(b"\n") == 1 and b"cannot run /nonexistent/server" in done.stderr
    assert b"Traceback" not in done.stderr


def test_no_command_is_a_usage_error():
    done = subprocess.run([sys.executable, "-m", "rpcline", "proxy"], input=b"",
                          capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 2 and b"Traceback" not in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_signals_go_to_the_server_and_the_proxy_exits_with_its_status(tmp_path):
    log = tmp_path / "server.log"
    with subprocess.Popen(proxy_command(mode="deaf"), stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env={**os.environ, "PEER_LOG": str(log)}) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        proxy.stdin.write(R + b'"id":1,"method":"m"}\n')
        proxy.stdin.flush()
        # Signal once the server holds the request (so the proxy is relaying), however
        # long a loaded machine takes to start both: a fixed sleep was flaky.
        deadline = time.monotonic() + TIMEOUT
        while not (log.exists() and log.read_bytes()) and time.monotonic() < deadline:
            time.sleep(0.05)
        proxy.send_signal(signal.SIGTERM)
        reply = orjson.loads(proxy.stdout.readline())
        assert proxy.wait(TIMEOUT) == 128 + signal.SIGTERM
        stderr = proxy.stderr.read() if proxy.stderr else b""
    assert reply["id"] == 1 and reply["error"]["code"] == -32000
    assert b"server exit status 143" in stderr  # the summary


def test_the_server_shares_the_proxys_process_group():
    # A client that kills the proxy's group (the MCP SDK's stdio client does, on close)
    # must reach the server too, even one that ignores SIGTERM.
    done = run_proxy(R + b'"id":1,"method":"m"}\n', mode="pgrp")
    assert f"pgrp={os.getpgrp()}".encode() in done.stderr


def test_commands_other_than_proxy_do_not_import_the_relay():
    code = ("import sys; from rpcline import cli; cli.main(['sample', '1']); "
            "assert 'rpcline.proxy' not in sys.modules and 'asyncio' not in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr


def test_the_summary_counts_each_way():
    session = R + b'"id":1,"method":"m"}\n' + b"junk\n"
    done = run_proxy(session)
    summary = done.stderr.decode().splitlines()[-1]
    assert summary == ("rpcline proxy: client to server 2 lines (1 refused, 1 answered), "
                       "server to client 1 line (0 refused), 0 pending requests failed, "
                       "server exit status 0")


def test_the_example_is_the_same_relay(tmp_path):
    example = HERE.parent / "examples" / "stdio_proxy.py"
    done = subprocess.run([sys.executable, str(example), "--", sys.executable, str(PEER),
                           "answer"], input=R + b'"id":1,"method":"m"}\nnope\n',
                          capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert [r.get("result") or r["error"]["code"] for r in replies(done)] in (
        [{"n": 1}, -32700], [-32700, {"n": 1}])


def test_the_last_answers_reach_a_slow_reader_before_the_proxy_exits():
    """A pipe transport keeps what the pipe cannot take yet; the proxy flushes it first."""
    size = 100_000  # more than a pipe holds, less than the transport's high-water mark on top
    with subprocess.Popen(proxy_command(mode="huge-answer", arg=str(size)),
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        proxy.stdin.write(R + b'"id":1,"method":"m"}\n')
        proxy.stdin.close()
        time.sleep(2.0)  # the server has answered and exited; the proxy is flushing
        out = proxy.stdout.read()
        assert proxy.wait(TIMEOUT) == 0
    assert len(out) == len(R + b'"id":1,"result":{"text":""}}\n') + size


def test_open_stdio_reads_a_pipe_by_read_too_when_nothing_attaches():
    # The relay takes a pipe's chunks by callback; any other user reads it with read().
    import asyncio

    from rpcline.proxy import open_stdio

    async def main() -> list[bytes]:
        read_end, write_end = os.pipe()
        out_read, out_write = os.pipe()
        reader, _ = await open_stdio(read_end, out_write)
        os.write(write_end, b"x" * 60_000)  # less than a pipe holds
        os.close(write_end)
        chunks = []
        while chunk := await reader.read(30_000):
            chunks.append(chunk)
        for fd in (read_end, out_read, out_write):
            os.close(fd)
        return chunks

    chunks = asyncio.run(main())
    assert b"".join(chunks) == b"x" * 60_000 and max(map(len, chunks)) <= 30_000
