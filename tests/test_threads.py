"""Threads: many threads parsing and streaming at once give what one thread gives.

Each thread has its own StreamParser (a parser holds one stream's partial line, so it
belongs to one stream and one thread: the README says so); ``parse`` and ``parse_lines``
keep no state between calls and are shared freely. A short switch interval makes the
interpreter hand the GIL over thousands of times mid-run, so the threads interleave.
A parser shared all the same (by threads, or called back by its own classify) refuses the
second call with a RuntimeError.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

import pytest
from _support import describe

from rpcline.corpus import generate

THREADS = 8
LINES = [line for line in generate(600, seed=3) if len(line) < 20_000]
LINES += [b"INFO stray", b'{"jsonrpc":"2.0","id":1.5,"method":"m"}', b"[]", b'{"a":',
          b'{"jsonrpc":"2.0","id":"x","method":"m","params":[]}', b"\xef\xbb\xbf{}"]
BUFFER = b"\n".join(LINES) + b"\n"


def stream_module(impl: ModuleType) -> ModuleType:
    return importlib.import_module(impl.__name__.replace(".message_", ".stream_"))


def work(impl: ModuleType, offset: int) -> list:
    """One thread's job: parse every line, then stream the buffer in its own chunk size."""
    stream = stream_module(impl)
    parsed = [describe(impl.parse(line)) for line in LINES]
    lines = [describe(r) for r in stream.parse_lines(BUFFER)]
    parser, streamed, size = stream.StreamParser(), [], 37 + 101 * offset
    for start in range(0, len(BUFFER), size):
        streamed += [describe(r) for r in parser.feed(BUFFER[start:start + size])]
    streamed += [describe(r) for r in parser.close()]
    return [parsed, lines, streamed]


@pytest.fixture
def fast_switching():
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def test_threads_agree_with_one_thread(impl, fast_switching):
    alone = work(impl, 0)
    assert alone[0] == alone[1] == alone[2]  # the single-thread baseline is itself sound
    results: dict[int, list] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(THREADS)

    def run(number: int) -> None:
        try:
            barrier.wait()
            for round in range(3):
                results[number, round] = work(impl, number)
        except BaseException as error:  # reported below, in the test's own thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    assert len(results) == THREADS * 3
    for key, result in results.items():
        assert result == alone, key


def test_threads_sharing_parse_and_one_buffer(impl, fast_switching):
    """One bytearray and one memoryview read by every thread at once: parse only reads."""
    data = bytearray(LINES[5])
    view = memoryview(LINES[7])
    want = (describe(impl.parse(data)), describe(impl.parse(view)))
    seen: list[tuple] = []

    def run() -> None:
        for _ in range(2000):
            seen.append((describe(impl.parse(data)), describe(impl.parse(view))))

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert len(seen) == THREADS * 2000 and all(s == want for s in seen)


# --- one parser shared: by threads, or by its own classify ------------------------------------

MISUSE = Path(__file__).parent / "isolated" / "shared_parser.py"


def misuse(impl: ModuleType, kind: str, case: str) -> dict:
    """tests/isolated/shared_parser.py's report, from a fresh process: before the guard,
    the core's EventStreamParser crashed the interpreter (SIGSEGV) on these."""
    implementation = "cython" if impl.__name__.endswith("_c") else "python"
    done = subprocess.run([sys.executable, str(MISUSE), implementation, kind, case],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    return json.loads(done.stdout)


def busy(kind: str, method: str = "feed") -> list[str]:
    name = "EventStreamParser" if kind == "sse" else "StreamParser"
    return ["RuntimeError", f"{name}.{method}() re-entered: the parser is running a call "
            "already (its classify called back, or another thread called while classify "
            "ran); it takes one call at a time"]


@pytest.mark.parametrize("kind", ["sse", "stream"])
@pytest.mark.parametrize("method", ["feed", "close"])
def test_classify_calling_its_own_parser_is_a_runtime_error(impl, kind, method):
    report = misuse(impl, kind, f"classify-{method}s")
    # The call in flight is not disturbed: it gives its own results, and so do later ones.
    assert report == {"inner": [busy(kind, method)], "outer": ["1", "2"], "after": ["3"]}


@pytest.mark.parametrize("kind", ["sse", "stream"])
def test_a_feed_from_another_thread_while_classify_runs_is_a_runtime_error(impl, kind):
    report = misuse(impl, kind, "threads-wait")
    assert report == {"first": ["1"], "second": [busy(kind)], "after": ["3"]}


@pytest.mark.parametrize("kind", ["sse", "stream"])
def test_threads_feeding_one_parser_never_mix_their_chunks(impl, kind):
    """classify releases the GIL mid-feed: each call gives its own chunk's result or is
    refused, never part of another's (and the interpreter does not crash)."""
    outcomes = misuse(impl, kind, "threads")["outcomes"]
    refused = ": ".join(busy(kind))
    assert set(outcomes) <= {"own", refused} and outcomes.get("own", 0) >= 1, outcomes
    assert sum(outcomes.values()) == 4 * 500
