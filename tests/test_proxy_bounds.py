"""``rpcline proxy``'s bounds against peers that misbehave (issue 29, items 1-7): an answer
that is not JSON, the relay's own answers to a peer that does not read, a replay at
start-up, long ids in the pending table, a record on a full disk, an over-long request
that shares an id with a call in flight, and ``check`` on what the proxy relayed."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
from proxy_peer import BROKEN
from test_proxy import R, TIMEOUT, by_id, proxy_command, replies, run_proxy

import rpcline


def request(id: bytes, pad: int = 0) -> bytes:
    params = b',"params":{"pad":"' + b"p" * pad + b'"}' if pad else b""
    return R + b'"id":' + id + b',"method":"tools/call"' + params + b"}\n"


def peak_rss(pid: int) -> int:
    """The process's peak resident set so far, in bytes (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def settled(progress, seconds: float = 1.5, limit: float = 60) -> None:
    """Wait until ``progress()`` has not moved for ``seconds`` (or ``limit`` passed)."""
    last, since, start = progress(), time.monotonic(), time.monotonic()
    while time.monotonic() - start < limit:
        time.sleep(0.1)
        now = progress()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return


# --- 1. an answer that is not JSON fails its call at once ------------------------------------


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_an_answer_that_is_not_json_fails_its_call_at_once(kind):
    done = run_proxy(request(b"3") + request(b'"s"'), mode="broken", arg=kind)
    got = by_id(done)
    assert set(got) == {("int", 3), ("str", "s")}, done.stderr
    for reply in got.values():
        assert reply["error"]["code"] == -32000
        assert reply["error"]["message"] == "Invalid response from the server"
        assert reply["error"]["data"].startswith("the server's answer was refused: ")
    assert b"failed it" in done.stderr and b"Traceback" not in done.stderr


def readline(stream, seconds: float = 10) -> bytes:
    """One line from ``stream``, or b"" when none comes within ``seconds``."""
    got: list[bytes] = [b""]
    reader = threading.Thread(target=lambda: got.__setitem__(0, stream.readline()),
                              daemon=True)
    reader.start()
    reader.join(seconds)
    return got[0]


def test_the_call_fails_at_once_while_the_session_goes_on():
    # Not at the end of the session: each call fails as its answer comes, the next relayed.
    with subprocess.Popen(proxy_command(mode="broken", arg="nan"), stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        try:
            for id in (b"1", b"2"):
                proxy.stdin.write(request(id))
                proxy.stdin.flush()
                line = readline(proxy.stdout)
                assert line, "the call still waits"
                reply = orjson.loads(line)
                assert reply["id"] == int(id) and reply["error"]["code"] == -32000
        finally:
            proxy.stdin.close()
        assert proxy.wait(TIMEOUT) == 0


def test_a_broken_line_without_jsonrpc_or_with_a_method_answers_nothing():
    from rpcline._gateway import relay_lines
    from rpcline._gateway.pending import Pending

    pending = Pending(10, 1 << 20)
    pending.add(3)
    for line, want in [
        (b'{"jsonrpc":"2.0","id":3,"result":{"temp":NaN}}', 3),
        (b'{"jsonrpc":"2.0","id":3,"result":1} and more', 3),
        (b'{"id":3,"result":NaN}', None),  # no "jsonrpc": a log record, not an answer
        (b'{"jsonrpc":"2.0","id":3,"method":"m","params":{"x":NaN}}', None),  # a request
        (b'{"jsonrpc":"2.0","id":4,"result":NaN}', None),  # not pending
        (b'{"jsonrpc":"2.0","id":3', None),  # the id might go on: 35?
        (b'{"jsonrpc":"2.0","id":3,', 3),
        (b'{"jsonrpc":"2.0","x":NaN,"id":3}', None),  # the id is after the fault
        (b'[{"jsonrpc":"2.0","id":3,"result":1}', None),  # not an object
    ]:
        r = rpcline.route(line)
        assert r.kind == "refused" and type(r.error) is rpcline.ParseError, line
        assert relay_lines.answered_id(r, pending) == want, line


# --- 6. a request never answers anything --------------------------------------------------


def test_an_over_long_server_request_sharing_a_pending_id_is_no_answer(tmp_path):
    log = tmp_path / "received"
    done = run_proxy(request(b"0"), "--max-line-bytes", "1000", mode="long-ask", arg="5000",
                     log=log)
    assert replies(done) == [{"jsonrpc": "2.0", "id": 0, "result": {"n": 1}}]  # one answer
    received = log.read_bytes().splitlines()
    assert orjson.loads(received[1]) == {  # the server's request is answered, with its id
        "jsonrpc": "2.0", "id": 0,
        "error": {"code": -32700, "message": "Parse error", "data": "line exceeds 1000 bytes"}}


def test_an_over_long_client_request_sharing_a_pending_server_id_is_no_answer(tmp_path):
    log = tmp_path / "received"
    env = {**os.environ, "PEER_LOG": str(log)}
    with subprocess.Popen(proxy_command("--max-line-bytes", "1000", mode="ask"), env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proxy:
        assert proxy.stdin is not None and proxy.stdout is not None
        try:
            assert orjson.loads(proxy.stdout.readline())["id"] == "s1"  # pending on the server
            proxy.stdin.write(request(b'"s1"', pad=5000))  # the client's own request "s1"
            proxy.stdin.flush()
            line = readline(proxy.stdout)
            assert line, "the client's request was taken for an answer, and not answered"
            assert orjson.loads(line) == {"jsonrpc": "2.0", "id": "s1", "error": {
                "code": -32700, "message": "Parse error", "data": "line exceeds 1000 bytes"}}
            proxy.stdin.write(R + b'"id":"s1","result":{"roots":[]}}\n')  # the real answer
            proxy.stdin.close()
            assert proxy.wait(TIMEOUT) == 0
        finally:
            proxy.kill()
    received = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    # Only the client's real answer reached the server: no -32000 made up for "s1".
    assert [r for r in received if r.get("id") == "s1"] == [
        {"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}}]


# --- 2 and 3. the relay's own answers have backpressure ------------------------------------


def test_a_server_flooding_refused_requests_without_reading_stays_bounded(tmp_path):
    # 400,000 refused requests make ~50 MB of answers the server never reads. The server's
    # output stops being read once its input is full, so the flood never completes.
    # (stderr to a file: a pipe nobody reads would hold the proxy back by its logs.)
    errors = tmp_path / "stderr"
    with open(errors, "wb") as err:
        proxy = subprocess.Popen(proxy_command("--drain-timeout", "0.5", mode="flood",
                                               arg="400000"),
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err)
    try:
        settled(lambda: peak_rss(proxy.pid))
        peak = peak_rss(proxy.pid)
    finally:
        proxy.terminate()  # passed on to the server: the session ends, the proxy with it
        status = proxy.wait(TIMEOUT)
    assert b"flooded" not in errors.read_bytes()  # it was held back, not absorbed
    assert status == 128 + 15 and b"Traceback" not in errors.read_bytes()
    assert peak < 60 * 1024 * 1024, peak


def test_a_client_that_never_reads_is_held_back_from_the_start():
    # Refused requests from the very first byte, written before the server has started;
    # the proxy answers each one, and the client never reads those answers.
    bad = R + b'"id":1,"method":5}\n'
    proxy = subprocess.Popen(proxy_command("--drain-timeout", "0.5", mode="deaf"),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    assert proxy.stdin is not None and proxy.stdout is not None
    written = [0]

    def write() -> None:
        chunk = bad * 4096
        try:
            while written[0] < 64 * 1024 * 1024:
                proxy.stdin.write(chunk)
                proxy.stdin.flush()
                written[0] += len(chunk)
        except (BrokenPipeError, ValueError, OSError):
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        settled(lambda: written[0])
        accepted, peak = written[0], peak_rss(proxy.pid)
    finally:
        proxy.terminate()  # passed on to the server, which would outlive a killed proxy
        try:
            proxy.wait(TIMEOUT)
        finally:
            proxy.kill()
        writer.join(TIMEOUT)
    assert accepted < 4 * 1024 * 1024, accepted
    assert peak < 60 * 1024 * 1024, peak


def test_a_reader_paused_by_its_consumer_during_the_replay_stays_paused():
    import asyncio

    from rpcline._gateway.stdio import _PipeReader

    class Transport(asyncio.ReadTransport):
        reading = True

        def pause_reading(self) -> None:
            self.reading = False

        def resume_reading(self) -> None:
            self.reading = True

        def is_closing(self) -> bool:
            return False

    class Consumer:
        def __init__(self, reader: _PipeReader) -> None:
            self.reader = reader

        def client_data(self, data: bytes) -> None:
            self.reader.pause()  # its output is congested

        def client_eof(self) -> None:
            pass

    reader = _PipeReader()
    transport = Transport()
    reader.connection_made(transport)
    reader.data_received(b"x" * 100)
    reader.attach(Consumer(reader))
    assert not transport.reading
    reader.resume()
    assert transport.reading


# --- 4. the pending table is bounded in bytes -------------------------------------------


def test_the_pending_table_is_bounded_in_bytes_both_ways():
    from rpcline._gateway.pending import Pending

    long = "x" * 30_000
    pending = Pending(100, 100_000)
    assert [pending.add(long + str(n)) for n in range(4)] == [None, None, None,
                                                              "max_pending_bytes"]
    assert len(pending) == 3 and long + "3" not in pending
    assert pending.answered(long + "0") and pending.add(long + "3") is None  # room again
    assert pending.add(1) is None  # a short id still fits


def test_requests_past_the_byte_budget_are_answered_at_once(tmp_path):
    log = tmp_path / "received"
    ids = [b'"%s"' % (b"%d" % n * (n * 10_000)) for n in range(1, 5)]  # 10-40 KB each
    done = run_proxy(b"".join(request(id) for id in ids), "--max-pending-bytes", "50000",
                     "--drain-timeout", "0.5", mode="deaf", log=log)
    got = {len(r["id"]): r["error"] for r in replies(done)}
    too_many = {n: e for n, e in got.items() if e["message"] == "Too many pending requests"}
    assert set(too_many) == {30_000, 40_000}  # past 50,000 bytes; the rest were forwarded
    assert all("max_pending_bytes" in e["data"] for e in too_many.values())
    assert log.read_bytes() == request(ids[0]) + request(ids[1])


def test_the_default_byte_budget_is_the_documented_one():
    import inspect

    from rpcline import proxy

    assert proxy.DEFAULT_MAX_PENDING_BYTES == 16 * 1024 * 1024
    default = inspect.signature(proxy.relay).parameters["max_pending_bytes"].default
    assert default == proxy.DEFAULT_MAX_PENDING_BYTES


# --- 5. a record that can no longer be written ---------------------------------------------


@pytest.mark.parametrize("side", ["client", "server"])
def test_a_record_on_a_full_disk_stops_recording_and_loses_no_call(tmp_path, side):
    prefix = tmp_path / "session"
    for name in rpcline.proxy.record_paths(str(prefix)):
        if name.endswith(f".{side}.jsonl"):
            os.symlink("/dev/full", name)  # every write fails with ENOSPC
    calls = b"".join(request(b"%d" % n, pad=200) for n in range(100))
    done = run_proxy(calls, "--record", str(prefix))
    assert done.returncode == 0, done.stderr
    assert sorted(r["id"] for r in replies(done)) == list(range(100))
    assert b"Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if b"cannot write the record" in line]
    assert len(lines) == 1 and f"session.{side}.jsonl".encode() in lines[0], done.stderr
    assert b"No space left on device" in lines[0]


# --- 7. check reads what the proxy relays ----------------------------------------------------


def test_check_accepts_a_20_mb_line_the_proxy_relays_by_default(tmp_path):
    capture = tmp_path / "session.server.jsonl"
    capture.write_bytes(R + b'"id":1,"result":{"text":"' + b"x" * 20_000_000 + b'"}}\n')
    for command in (["check", "--from", "server"], ["classify"]):
        done = subprocess.run([sys.executable, "-m", "rpcline", *command, str(capture)],
                              capture_output=True, timeout=TIMEOUT)
        assert done.returncode == 0, (command, done.stderr[-500:])
        assert b"line exceeds" not in done.stdout + done.stderr
