"""The rpcline command, run as a subprocess, on both implementations."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
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
        input=input, capture_output=True, env=env, timeout=120, check=False,
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

    assert done.stdout == b""  # no all-zero summary of input never read (issue 31 item 15)


def test_a_summary_counts_only_what_was_read(implementation, tmp_path: Path):
    good = tmp_path / "good.jsonl"
    good.write_bytes(SESSION)
    done = rpcline(implementation, "check", str(tmp_path / "absent.jsonl"), str(good))
    assert done.returncode == 2
    assert b"1 file not read" in done.stdout and b"total         6" in done.stdout


@pytest.mark.parametrize("side", ["client", "server"])
def test_check_summary_says_whose_lines_and_opens_without_a_blank_line(implementation, side):
    # Issue 31 item 14: the summary started with an empty line when nothing was refused,
    # and --from client and --from server printed the same text.
    clean = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    done = rpcline(implementation, "check", "--from", side, input=clean)
    assert done.returncode == 0
    first = done.stdout.decode().splitlines()[0]
    assert first == f"lines from a {side} (as a {'server' if side == 'client' else 'client'} "\
        f"reads them; refusals {'' if side == 'client' else 'not '}answered): <stdin>"
    report = orjson.loads(rpcline(implementation, "check", "--json", "--from", side,
                                  input=clean).stdout)
    assert report["from"] == {side: ["<stdin>"]}


@pytest.mark.parametrize("command", ["check", "classify"])
def test_reading_a_terminal_says_so_on_stderr(implementation, command):
    # Issue 31 item 13: with no file, on a terminal, the command waited in silence.
    import pty

    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "rpcline", command], stdin=terminal,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=environment(implementation))
    os.close(terminal)
    os.write(controller, b"\x04")  # Ctrl-D on an empty line: end of input
    out, err = process.communicate(timeout=120)
    os.close(controller)
    assert process.returncode == 0, err
    assert err.decode() == (f"rpcline {command}: reading lines from standard input (the "
                            f"terminal); end with Ctrl-D, or name a file: rpcline {command} "
                            "FILE\n")
    piped = rpcline(implementation, command, input=b"")
    assert piped.stderr == b""  # a pipe or a file is read without a word


def test_usage_error_is_status_2(implementation):
    done = rpcline(implementation, "frobnicate")
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize("args", [["bench", "a", "b"], ["check", "--bogus"],
                                  ["sample", "1", "2"]])
def test_argument_errors_print_the_sub_command_usage(args):
    done = rpcline("python", *args)
    assert done.returncode == 2
    err = done.stderr.decode()
    assert err.startswith(f"usage: rpcline {args[0]} ") and "unrecognized arguments" in err
    assert "COMMAND" not in err  # not the top-level usage


# What a server sends: a JSON-RPC 2.0 §5 answer to an unreadable line ("id": null), a result,
# and a line with a null id that is wrong otherwise too (no "jsonrpc").
SERVER_LINES = (
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n'
    b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
)
NOT_EXCUSED = b'{"id":null,"error":{"code":-32700,"message":"Parse error"}}\n'


def test_check_refuses_a_null_id_answer_from_a_client_by_default(implementation):
    done = rpcline(implementation, "check", "--json", input=SERVER_LINES)
    assert done.returncode == 1
    [row] = orjson.loads(done.stdout)["refused"]
    assert row["line"] == 1 and row["code"] == -32600 and row["response"] is not None


def test_check_from_server_accepts_null_id_error_responses(implementation):
    done = rpcline(implementation, "check", "--from", "server", "--json", input=SERVER_LINES)
    assert done.returncode == 0, done.stdout
    assert orjson.loads(done.stdout)["kinds"]["response"] == 2
    rows = [orjson.loads(line) for line in rpcline(
        implementation, "classify", "--from", "server", input=SERVER_LINES).stdout.splitlines()]
    assert rows[0] == {"line": 1, "kind": "response", "id": None, "error": True, "code": -32700}


def test_check_from_server_proposes_no_answer(implementation):
    done = rpcline(implementation, "check", "--from", "server", input=NOT_EXCUSED)
    assert done.returncode == 1  # a null id excuses no other fault
    assert "<stdin>:1: -32600" in done.stdout.decode() and b"answer:" not in done.stdout
    report = orjson.loads(rpcline(implementation, "check", "--from", "server", "--json",
                                  input=NOT_EXCUSED).stdout)
    assert report["refused"][0]["response"] is None


def test_check_reads_the_side_from_the_proxy_record_names(implementation, tmp_path: Path):
    server = tmp_path / "session.server.jsonl"  # rpcline proxy --record session
    server.write_bytes(SERVER_LINES)
    client = tmp_path / "session.client.jsonl"
    client.write_bytes(SERVER_LINES)
    assert rpcline(implementation, "check", str(server)).returncode == 0
    assert rpcline(implementation, "check", str(client)).returncode == 1
    assert rpcline(implementation, "check", "--from", "client", str(server)).returncode == 1
    assert rpcline(implementation, "check", "--from", "server", str(client)).returncode == 0


def test_a_proxy_recording_of_a_server_checks_clean(implementation, tmp_path: Path):
    server = [sys.executable, "-c", f"import sys; sys.stdout.buffer.write({SERVER_LINES!r})"]
    prefix = tmp_path / "session"
    proxied = rpcline(implementation, "proxy", "--record", str(prefix), "--", *server)
    assert proxied.stdout == SERVER_LINES  # forwarded unchanged
    done = rpcline(implementation, "check", f"{prefix}.server.jsonl")
    assert done.returncode == 0, done.stdout


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
    # which build was measured (issue 23: a figure of the twin must not pass for the core's)
    built = "the Cython core" if implementation == "cython" else "pure-Python twin"
    assert report["build"].startswith("rpcline ") and built in report["build"]


# --- helpers for the tests below -------------------------------------------------------------

ISOLATED = Path(__file__).parent / "isolated"
# cibuildwheel runs this suite on macOS and Windows too: say what each test needs.
posix = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals, select() on "
                           "pipes, SIGPIPE semantics and getrusage are POSIX")
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
# The bars are tqdm's: the progress extra (.ci/run installs it; the test extra does not).
tqdm = pytest.mark.skipif(importlib.util.find_spec("tqdm") is None,
                          reason="tqdm is not installed (pip install '.[progress]')")
BIG_LINE = 33 * 1024 * 1024  # over the 32 MiB from which check shows a bar; one huge line
ERROR_RESPONSES = (
    b'{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}\n'
    b'{"jsonrpc":"2.0","id":8,"error":"broken"}\n'
)


def environment(implementation: str, hide_tqdm: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RPCLINE_NO_EXTENSIONS"}
    if implementation == "python":
        env["RPCLINE_NO_EXTENSIONS"] = "1"
    if hide_tqdm is not None:  # a tqdm module that fails to import, ahead of the real one
        hide_tqdm.mkdir(exist_ok=True)
        (hide_tqdm / "tqdm.py").write_text("raise ImportError('tqdm hidden by the test')\n")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(hide_tqdm),
                                                          env.get("PYTHONPATH")]))
    return env


def on_terminal(implementation: str, *args: str, stdout_too: bool = True,
                hide_tqdm: Path | None = None, input: bytes = b"") -> tuple[int, bytes, bytes]:
    """Run rpcline with stderr (and stdout, unless told) on a pseudo-terminal.

    Returns the status, what the terminal showed, and stdout when it was a pipe.
    """
    import fcntl
    import pty
    import select
    import struct
    import termios

    controller, terminal = pty.openpty()
    # A new pseudo-terminal is 0 columns wide, and tqdm draws nothing in 0 columns.
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "rpcline", *args], stdin=subprocess.PIPE,
        stdout=terminal if stdout_too else subprocess.PIPE, stderr=terminal,
        env=environment(implementation, hide_tqdm),
    )
    os.close(terminal)
    assert process.stdin is not None
    process.stdin.write(input)
    process.stdin.close()
    shown = bytearray()
    while True:  # read as it comes: a full terminal buffer would block the child
        ready, _, _ = select.select([controller], [], [], 120)
        assert ready, "no output for 120 s"
        try:
            data = os.read(controller, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not data:
            break
        shown += data
    os.close(controller)
    out = process.stdout.read() if process.stdout is not None else b""
    return process.wait(timeout=120), bytes(shown), out


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A refusal on line 1, then one 33 MiB line (refused, discarded without being held)."""
    path = tmp_path_factory.mktemp("big") / "big.jsonl"
    with path.open("wb") as out:
        out.write(b"INFO starting\n" + b'{"jsonrpc":"2.0","id":1,"method":"x","params":"')
        out.write(b"x" * BIG_LINE + b'"}\n')
    return path


# --- check: bounded report, --jsonl, --quiet -------------------------------------------------


def test_check_lists_the_first_max_errors_and_counts_the_rest(implementation):
    done = rpcline(implementation, "check", "--max-errors", "1", input=SESSION)
    assert done.returncode == 1
    out = done.stdout.decode()
    assert "<stdin>:5: -32700" in out
    assert "<stdin>:6:" not in out  # the second refusal is counted, not listed
    assert "1 more refused lines not listed (--max-errors 1)" in out
    summary = out[out.index("\nmessages") :].split()
    assert summary[summary.index("refused") + 1] == "2"


def test_check_json_is_compact_and_says_what_was_truncated(implementation):
    done = rpcline(implementation, "check", "--json", "--max-errors", "1", input=SESSION)
    assert done.returncode == 1
    assert done.stdout.count(b"\n") == 1 and b"\n " not in done.stdout  # one compact line
    report = orjson.loads(done.stdout)
    assert [r["line"] for r in report["refused"]] == [5]
    assert report["truncated"] == 1
    assert report["kinds"]["refused"] == 2 and report["unreadable"] == []


def test_check_keeps_no_more_than_max_errors_on_a_large_input(implementation):
    sample = rpcline(implementation, "sample", "3000", "--bad-fraction", "0.5")
    done = rpcline(implementation, "check", "--json", input=sample.stdout)
    report = orjson.loads(done.stdout)
    assert len(report["refused"]) == 100  # the default
    assert report["truncated"] == report["kinds"]["refused"] - 100 > 1000


def test_check_jsonl_streams_every_refusal_and_nothing_else(implementation):
    done = rpcline(implementation, "check", "--jsonl", "--max-errors", "1", input=SESSION)
    assert done.returncode == 1
    rows = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [(r["file"], r["line"], r["code"]) for r in rows] == [
        ("<stdin>", 5, -32700), ("<stdin>", 6, -32602)]
    assert rows[1]["response"]["id"] == 2


@posix
def test_check_jsonl_writes_each_refusal_as_it_is_found(implementation):
    # stdin stays open: a refusal held back until the end would never arrive.
    process = subprocess.Popen(
        [sys.executable, "-m", "rpcline", "check", "--jsonl"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, env=environment(implementation),
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"not json\n")
    process.stdin.flush()
    import select

    ready, _, _ = select.select([process.stdout], [], [], 60)
    assert ready, "the refusal was not written while input was still coming"
    assert orjson.loads(process.stdout.readline())["line"] == 1
    process.stdin.close()
    assert process.wait(timeout=60) == 1


def test_check_quiet_prints_only_the_summary(implementation):
    done = rpcline(implementation, "check", "-q", input=SESSION)
    assert done.returncode == 1
    out = done.stdout.decode()
    assert "<stdin>:" not in out and "answer:" not in out
    assert out.startswith("lines from a client") and "\n\nmessages\n" in out
    assert "refusals by code" in out
    report = orjson.loads(rpcline(implementation, "check", "--quiet", "--json",
                                  input=SESSION).stdout)
    assert report["refused"] == [] and report["truncated"] == 2


def test_check_quiet_and_jsonl_exclude_each_other(implementation):
    done = rpcline(implementation, "check", "-q", "--jsonl", input=SESSION)
    assert done.returncode == 2
    assert b"--quiet" in done.stderr and b"Traceback" not in done.stderr


# --- files: -, unreadable files, binary input -------------------------------------------------


def test_dash_is_stdin_among_files(implementation, tmp_path: Path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"oops\n")
    done = rpcline(implementation, "check", str(path), "-", input=SESSION)
    out = done.stdout.decode()
    assert f"{path}:1: -32700" in out and "<stdin>:5: -32700" in out
    assert done.returncode == 1


def test_unreadable_files_are_skipped_and_the_run_exits_2_after_the_summary(
    implementation, tmp_path: Path
):
    good = tmp_path / "good.jsonl"
    good.write_bytes(SESSION)
    done = rpcline(implementation, "check", str(tmp_path / "absent.jsonl"), str(good),
                   str(tmp_path))  # a directory cannot be read either
    assert done.returncode == 2  # even though refusals were seen too
    errors = done.stderr.decode().splitlines()
    assert len(errors) == 2 and "absent.jsonl" in errors[0] and str(tmp_path) in errors[1]
    out = done.stdout.decode()
    assert f"{good}:5: -32700" in out  # the readable file was checked
    summary = out[out.index("\nmessages") :].split()
    assert summary[summary.index("total") + 1] == "6"
    assert "2 files not read" in out
    report = orjson.loads(rpcline(implementation, "check", "--json", str(good),
                                  str(tmp_path / "absent.jsonl"), str(tmp_path)).stdout)
    assert report["unreadable"] == [  # each with the reason stderr gave
        {"file": str(tmp_path / "absent.jsonl"), "reason": "No such file or directory"},
        {"file": str(tmp_path), "reason": "Is a directory"},
    ]
    assert report["messages"] == 6


def test_classify_skips_unreadable_files_and_exits_2(implementation, tmp_path: Path):
    good = tmp_path / "good.jsonl"
    good.write_bytes(SESSION)
    done = rpcline(implementation, "classify", str(tmp_path / "absent"), str(good))
    assert done.returncode == 2
    assert len(done.stdout.splitlines()) == 6
    assert done.stderr.decode().count("\n") == 1


def test_check_says_once_that_input_looks_binary_and_still_checks_it(
    implementation, tmp_path: Path
):
    binary = tmp_path / "capture.bin"
    binary.write_bytes(b"\x00\x01\x00garbage\n" * 50 + SESSION)
    late = tmp_path / "late.jsonl"  # a NUL after the first KB is not sniffed
    late.write_bytes(SESSION * 20 + b"\x00\n")
    done = rpcline(implementation, "check", str(binary), str(late))
    errors = done.stderr.decode().splitlines()
    assert errors == [f"rpcline: {binary}: looks binary (NUL bytes in the first KB)"]
    assert done.returncode == 1
    assert f"{binary}:1: -32700" in done.stdout.decode()


# --- broken pipes ------------------------------------------------------------------------------


def reader_leaves(implementation: str, *args: str, input: bytes) -> tuple[int, bytes]:
    """Run rpcline with a stdout whose reader reads one line, then closes it."""
    with tempfile.TemporaryFile() as stdin:  # a file: a pipe would need a writer thread
        stdin.write(input)
        stdin.seek(0)
        process = subprocess.Popen(
            [sys.executable, "-m", "rpcline", *args], stdin=stdin,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment(implementation),
        )
    assert process.stdout is not None
    process.stdout.readline()
    process.stdout.close()
    assert process.stderr is not None
    err = process.stderr.read()
    return process.wait(timeout=120), err


def many_refusals(implementation: str) -> bytes:
    return rpcline(implementation, "sample", "4000", "--bad-fraction", "0.5").stdout


@posix
@pytest.mark.parametrize("args", [["check", "--jsonl"], ["check", "--max-errors", "5000"]])
def test_broken_pipe_keeps_the_status_of_refusals_seen(implementation, args):
    status, err = reader_leaves(implementation, *args, input=many_refusals(implementation))
    assert (status, err) == (1, b"")  # no traceback, no "Exception ignored"


@posix
def test_broken_pipe_without_refusals_exits_zero(implementation):
    clean = rpcline(implementation, "sample", "4000", "--bad-fraction", "0").stdout
    status, err = reader_leaves(implementation, "classify", input=clean)
    assert (status, err) == (0, b"")


@posix
def test_reader_gone_before_the_summary(implementation):
    for input, expected in ((SESSION, 1), (SESSION.split(b"\n")[0] + b"\n", 0)):
        process = subprocess.Popen(
            [sys.executable, "-m", "rpcline", "check", "-q"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment(implementation),
        )
        assert process.stdout is not None
        process.stdout.close()  # before anything is written
        _, err = process.communicate(input, timeout=60)
        assert (process.returncode, err) == (expected, b"")


# --- classify ----------------------------------------------------------------------------------


def test_classify_names_files_when_several_and_numbers_lines_per_file(
    implementation, tmp_path: Path
):
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_bytes(SESSION)
    second.write_bytes(SESSION)
    done = rpcline(implementation, "classify", str(first), str(second))
    rows = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [(r["file"], r["line"]) for r in rows[5:7]] == [(str(first), 7), (str(second), 1)]
    assert all(next(iter(r)) == "file" for r in rows)
    one = [orjson.loads(line) for line in rpcline(implementation, "classify", str(first)).stdout
           .splitlines()]
    assert all("file" not in r for r in one)


def test_classify_marks_error_responses_with_their_code(implementation):
    done = rpcline(implementation, "classify", input=ERROR_RESPONSES + SESSION)
    rows = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert rows[0] == {"line": 1, "kind": "response", "id": 7, "error": True, "code": -32601}
    assert rows[1] == {"line": 2, "kind": "response", "id": 8, "error": True, "code": None}
    assert rows[4] == {"line": 6, "kind": "response", "id": 1}  # a result: no error member


def test_classify_does_not_call_a_null_error_an_error(implementation):
    # docs/rules.md: "error": null is a present member (a response) but no error.
    lines = (b'{"jsonrpc":"2.0","id":6,"result":null,"error":null}\n'
             b'{"jsonrpc":"2.0","id":9,"error":null}\n')
    done = rpcline(implementation, "classify", input=lines)
    rows = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert rows == [{"line": 1, "kind": "response", "id": 6},
                    {"line": 2, "kind": "response", "id": 9}]


def test_classify_quiet_leaves_refused_lines_out(implementation):
    done = rpcline(implementation, "classify", "-q", input=SESSION)
    rows = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [r["line"] for r in rows] == [1, 3, 4, 7]
    assert done.returncode == 0


# --- sample ------------------------------------------------------------------------------------


def test_sample_defaults_to_the_corpus_and_its_three_percent(implementation):
    from rpcline import corpus

    done = rpcline(implementation, "sample", "300")
    assert done.stdout == b"".join(line + b"\n" for line in corpus.generate(300))


@pytest.mark.parametrize(("fraction", "low", "high"), [("0", 0, 0), ("1", 2000, 2000),
                                                        ("0.5", 900, 1100)])
def test_sample_bad_fraction(implementation, fraction, low, high):
    sample = rpcline(implementation, "sample", "2000", "--bad-fraction", fraction)
    done = rpcline(implementation, "check", "--json", input=sample.stdout)
    report = orjson.loads(done.stdout)
    assert report["messages"] == 2000
    assert low <= report["kinds"]["refused"] <= high
    assert done.returncode == (0 if high == 0 else 1)


@linux
def test_sample_writes_as_it_generates_in_constant_memory(implementation):
    # 100 million lines would take an hour: the first ones must come at once, and memory
    # must stay flat while they do.
    process = subprocess.Popen(
        [sys.executable, "-m", "rpcline", "sample", "100000000"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=environment(implementation),
    )
    assert process.stdout is not None
    try:
        received = 0
        while received < 20_000_000:
            received += len(process.stdout.read(1 << 20))
        with open(f"/proc/{process.pid}/status") as status:
            peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
        assert peak < 100 * 1024, f"sample's peak RSS: {peak} KiB"
    finally:
        process.stdout.close()  # the reader leaves: sample stops, quietly, with status 0
    _, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (0, b"")


# --- help and argument errors ------------------------------------------------------------------


def test_every_subcommand_and_option_is_described_with_its_default():
    import argparse

    from rpcline.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {c.dest for c in commands._choices_actions} == set(commands.choices)
    assert all(c.help for c in commands._choices_actions)
    for name, sub in commands.choices.items():
        text = sub.format_help()
        assert "exit status" in text and "example" in text, name
        for action in sub._actions:
            assert action.help, (name, action.dest)
            if action.default not in (None, False, argparse.SUPPRESS):
                assert str(action.default) in text and "default" in action.help + text, (
                    name, action.dest)
    check_help = " ".join(commands.choices["check"].format_help().split())
    assert "--max-errors N list the first N refusals; count the rest (default: 100)" in check_help
    assert "(default: False)" not in check_help  # flags' defaults are noise


@pytest.mark.parametrize(("args", "message"), [
    (["bench", "--rounds", "1k"], "argument --rounds: expected a positive integer, got '1k'"),
    (["sample", "0"], "argument N: expected a positive integer, got '0'"),
    (["sample", "--seed", "x"], "argument --seed: expected an integer, got 'x'"),
    (["sample", "--bad-fraction", "1.5"], "expected a number from 0 to 1, got '1.5'"),
    (["sample", "--bad-fraction", "nan"], "expected a number from 0 to 1, got 'nan'"),
    (["check", "--max-errors", "-1"], "argument --max-errors: expected an integer >= 0"),
    (["check", "--max-line-bytes", "1k"], "argument --max-line-bytes: expected a positive"),
    (["proxy", "--drain-timeout", "-1", "--", "true"], "expected a number of seconds >= 0"),
])
def test_argument_errors_say_what_was_expected(args, message):
    done = rpcline("python", *args)
    assert done.returncode == 2
    err = done.stderr.decode()
    assert message in err
    assert "invalid" not in err and "_positive" not in err and "Traceback" not in err


# --- bench -------------------------------------------------------------------------------------


def test_bench_table_says_faster_or_slower_in_words(implementation, tmp_path: Path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(SESSION)
    done = rpcline(implementation, "bench", str(path), "--rounds", "1")
    assert done.returncode == 0, done.stderr
    table = done.stdout.decode().split("\nwarning:")[0]  # 6 lines: a warning may follow
    build, *table_lines = table.splitlines()
    assert build.startswith("measuring rpcline ")
    header, *rows = [line for line in table_lines[2:] if line]
    assert header.endswith("vs orjson.loads") and "ratio" not in header
    verdicts = [row.rsplit("  ", 1)[1].strip() for row in rows]
    assert verdicts[0] == "same"  # orjson.loads against itself
    assert all(v == "same" or v.endswith(("x faster", "x slower")) for v in verdicts), verdicts


def test_bench_reads_stdin_as_dash(implementation):
    done = rpcline(implementation, "bench", "-", "--rounds", "1", "--json", input=SESSION)
    assert done.returncode == 0, done.stderr
    report = orjson.loads(done.stdout)
    assert report["source"] == "<stdin>" and report["messages"] == 6


def test_bench_reads_piped_stdin_without_a_file_name(implementation):
    done = rpcline(implementation, "bench", "--rounds", "1", "--json", input=SESSION)
    assert done.returncode == 0, done.stderr
    report = orjson.loads(done.stdout)
    assert report["source"] == "<stdin>" and report["messages"] == 6


def test_bench_without_file_or_piped_stdin_measures_the_corpus():
    done = subprocess.run([sys.executable, "-m", "rpcline", "bench", "--rounds", "1", "--json"],
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["source"].startswith("generated corpus")


def test_bench_prints_the_spread_and_warns_on_too_little_input(implementation):
    garbage = b"INFO a log line, not JSON\n" * 25
    done = rpcline(implementation, "bench", "--rounds", "5", "--json", input=garbage)
    assert done.returncode == 0, done.stderr
    report = orjson.loads(done.stdout)
    for row in report["contenders"]:
        assert row["ns_per_message_min"] <= row["ns_per_message"] <= row["ns_per_message_max"]
    assert any("too little input" in warning for warning in report["warnings"])
    text = rpcline(implementation, "bench", "--rounds", "5", input=garbage).stdout.decode()
    assert "min-max" in text and "\nwarning: a pass of " in text
    assert "messages, " in text and " bytes, wall clock: median " in text  # item 2
    # Which contender's pass is too short (issue 31 item 16): the fastest one's.
    fastest = min(report["contenders"], key=lambda row: row["ns_per_message"])["contender"]
    assert any(w.startswith(f"a pass of {fastest} takes ") for w in report["warnings"])


def test_bench_warns_when_the_passes_are_too_far_apart():
    from rpcline._cli.rounds import Timing
    from rpcline._cli.bench import _untrustworthy

    steady = Timing("orjson.loads", 0.010, 5000, 1, (0.0099, 0.010, 0.010, 0.0101, 0.03))
    busy = Timing("rpcline.route", 0.010, 5000, 1, (0.005, 0.007, 0.010, 0.013, 0.015))
    assert steady.fastest == 0.0099 and steady.slowest == 0.03
    assert _untrustworthy([steady]) == []  # one slow pass does not move the median
    [warning] = _untrustworthy([steady, busy])
    assert "rpcline.route" in warning and "busy" in warning


@posix
@tqdm
def test_bench_shows_progress_on_a_terminal(implementation, tmp_path: Path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(SESSION * 50)
    status, shown, out = on_terminal(implementation, "bench", str(path), "--rounds", "3",
                                     "--json", stdout_too=False)
    assert status == 0
    assert b"loading" in shown and b"measuring" in shown and b"pass" in shown
    assert orjson.loads(out)["rounds"] == 3
    piped = rpcline(implementation, "bench", str(path), "--rounds", "1", "--json")
    assert piped.stderr == b""  # no bar where nobody watches


def test_bench_unreadable_file_is_status_2(implementation, tmp_path: Path):
    done = rpcline(implementation, "bench", str(tmp_path / "absent.jsonl"))
    assert done.returncode == 2
    assert done.stderr.decode().count("\n") == 1 and b"absent.jsonl" in done.stderr


# --- progress on large files -------------------------------------------------------------------


@posix
@tqdm
def test_refusals_go_through_tqdm_write_while_a_bar_is_shown(implementation, big_file):
    status, shown, _ = on_terminal(implementation, "check", "--max-line-bytes", "16777216",
                                   str(big_file))
    assert status == 1
    text = shown.decode(errors="replace")
    assert "%|" in text  # a tqdm bar was drawn
    at = text.index(f"{big_file}:1: -32700")
    # tqdm.write clears the bar first: nothing of it is left on the refusal's line.
    assert text[max(text.rfind("\r", 0, at), text.rfind("\n", 0, at)) + 1 : at] == ""
    assert f"{big_file}:2: -32700" in text  # the 33 MiB line, refused and skipped


@posix
@tqdm
def test_without_tqdm_a_large_file_gets_one_hint(implementation, tmp_path: Path):
    large = tmp_path / "large.jsonl"
    with large.open("wb") as out:
        out.write(b"x" * (65 * 1024 * 1024) + b"\n")
    status, shown, _ = on_terminal(implementation, "check", "-q", str(large), str(large),
                                   hide_tqdm=tmp_path / "no-tqdm")
    assert status == 1
    assert shown.count(b"pip install '.[progress]'` from a clone") == 1
    assert b"%|" not in shown
    _, shown, _ = on_terminal(implementation, "check", "-q", str(large))
    assert b"pip install" not in shown  # tqdm is installed here: a bar instead


def test_extra_named_in_the_hint_exists():
    import tomllib

    from rpcline._cli import inputs

    extras = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert "tqdm" in " ".join(extras["project"]["optional-dependencies"]["progress"])
    assert "'.[progress]'` from a clone" in inputs.HINT
    assert "pip install rpcline" not in inputs.HINT  # no release on PyPI yet


# --- memory: 200 MB in, constant memory ---------------------------------------------------------


@pytest.fixture(scope="module")
def capture_200mb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("capture") / "capture.jsonl"
    subprocess.run([sys.executable, str(ISOLATED / "cli_memory.py"), "make", str(path)],
                   check=True, timeout=300)
    return path


@posix
@pytest.mark.parametrize("command", ["check", "classify"])
def test_peak_memory_stays_under_100_mb_on_200_mb(implementation, command, capture_200mb):
    done = subprocess.run(
        [sys.executable, str(ISOLATED / "cli_memory.py"), "run", implementation, command,
         str(capture_200mb)], capture_output=True, check=False, timeout=900,
    )
    assert done.returncode == 0, done.stderr
    figures = orjson.loads(done.stdout)
    assert figures["input_bytes"] >= 200_000_000
    assert figures["status"] == (1 if command == "check" else 0), figures["stderr"]
    assert figures["peak_rss_bytes"] < 100 * 1024 * 1024, figures


# --- file names that are not UTF-8 (issue 29, item 15) ---------------------------------------


def test_file_names_that_are_not_utf8_are_written_escaped(implementation, tmp_path: Path):
    """Any bytes are a name on Linux: each command wrote it as the surrogates Python
    decoded it to, and died on them. Names are written as their bytes, UTF-8 where they
    are, the rest as ``\\xNN``."""
    odd = os.fsencode(tmp_path) + b"/a\xff\xfe.jsonl"
    with open(odd, "wb") as file:
        file.write(SESSION)
    good = tmp_path / "b.jsonl"
    good.write_bytes(SESSION)
    shown = os.fsdecode(tmp_path) + "/a\\xff\\xfe.jsonl"
    name = os.fsdecode(odd)
    done = rpcline(implementation, "check", name, str(good))
    assert done.returncode == 1 and f"{shown}:5: -32700".encode() in done.stdout
    report = orjson.loads(rpcline(implementation, "check", "--json", name, str(good)).stdout)
    assert report["messages"] == 12 and shown in {r["file"] for r in report["refused"]}
    rows = rpcline(implementation, "check", "--jsonl", name, str(good)).stdout.splitlines()
    assert {orjson.loads(row).get("file") for row in rows} >= {shown, str(good)}
    done = rpcline(implementation, "classify", name, str(good))
    assert done.returncode == 0
    assert [orjson.loads(row)["file"] for row in done.stdout.splitlines()] == [shown] * 6 + [
        str(good)] * 6


def test_a_missing_file_whose_name_is_not_utf8_is_status_2(implementation, tmp_path: Path):
    name = os.fsdecode(os.fsencode(tmp_path) + b"/gone\xff.jsonl")
    shown = os.fsdecode(tmp_path) + "/gone\\xff.jsonl"
    done = rpcline(implementation, "check", "--json", name)
    assert done.returncode == 2
    assert orjson.loads(done.stdout)["unreadable"] == [
        {"file": shown, "reason": "No such file or directory"}]
    assert f"cannot read {shown}" in done.stderr.decode()
    for args in (["check"], ["check", "--jsonl"], ["classify"]):
        assert rpcline(implementation, *args, name).returncode == 2, args
