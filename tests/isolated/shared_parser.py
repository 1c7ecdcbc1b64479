"""One parser misused, in a fresh process so that a crash fails one test, not the run:

    python tests/isolated/shared_parser.py {cython|python} {sse|stream} CASE

CASE is ``classify-feeds`` or ``classify-closes`` (classify calls back into its own
parser, once), ``threads-wait`` (a second thread feeds while the first one's classify
waits for it) or ``threads`` (four threads feed one parser, classify releasing the GIL
with ``time.sleep(0)``, with a one-microsecond switch interval). Prints one JSON object: what each call gave, as tests/
test_threads.py reads it. Every chunk is whole lines (events), so a call that runs alone
gives exactly its own chunk's results, whatever else was refused.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from importlib import import_module
from typing import Any


def chunk_of(kind: str, number: int) -> bytes:
    """One whole message: an event of the stream, or a line."""
    return f"data: {number}\n\n".encode() if kind == "sse" else f"{number}\n".encode()


def make(implementation: str, kind: str, classify: Any) -> Any:
    suffix = "_c" if implementation == "cython" else "_py"
    if kind == "sse":
        return import_module(f"rpcline._core.sse{suffix}").EventStreamParser(classify=classify)
    return import_module(f"rpcline._core.stream{suffix}").StreamParser(classify=classify)


def data(results: list) -> list[str]:
    """What classify got for each result (an event's message, or a line's result)."""
    return [(getattr(r, "message", r)).decode() for r in results]


def error(exception: BaseException) -> list[str]:
    return [type(exception).__name__, str(exception)]


def reentered(implementation: str, kind: str, method: str) -> dict[str, Any]:
    """classify calls feed (or close) of its own parser the first time it runs."""
    inner: list = []
    called = []

    def classify(message: bytes) -> bytes:
        if not called:
            called.append(True)
            try:
                got = parser.close() if method == "close" else parser.feed(chunk_of(kind, 99))
                inner.append(["returned", data(got)])
            except Exception as exception:  # reported, and the feed goes on
                inner.append(error(exception))
        return message

    parser = make(implementation, kind, classify)
    outer = data(parser.feed(chunk_of(kind, 1) + chunk_of(kind, 2)))
    after = data(parser.feed(chunk_of(kind, 3)))  # the parser still works
    return {"inner": inner, "outer": outer, "after": after}


def threads_wait(implementation: str, kind: str) -> dict[str, Any]:
    """Thread A's classify waits until thread B has tried to feed the same parser."""
    inside, tried = threading.Event(), threading.Event()
    second: list = []

    def classify(message: bytes) -> bytes:
        if message == b"1":
            inside.set()
            tried.wait(10)
        return message

    def feed_second() -> None:
        inside.wait(10)
        try:
            second.append(["returned", data(parser.feed(chunk_of(kind, 2)))])
        except Exception as exception:
            second.append(error(exception))
        tried.set()

    parser = make(implementation, kind, classify)
    thread = threading.Thread(target=feed_second)
    thread.start()
    first = data(parser.feed(chunk_of(kind, 1)))
    thread.join(10)
    return {"first": first, "second": second, "after": data(parser.feed(chunk_of(kind, 3)))}


def threads(implementation: str, kind: str) -> dict[str, Any]:
    """Four threads feed one parser two messages a chunk (the second waits in the chunk while
    classify runs for the first); each call must give its own chunk's results or raise."""
    sys.setswitchinterval(1e-6)
    def classify(message: bytes) -> bytes:
        time.sleep(0)  # lets another thread in, mid-feed
        return message

    parser = make(implementation, kind, classify)
    outcomes: dict[str, int] = {}
    lock = threading.Lock()

    def run(thread: int) -> None:
        for round in range(500):
            number = thread * 1000 + round
            try:
                got = data(parser.feed(chunk_of(kind, number) + chunk_of(kind, -1 - number)))
                outcome = "own" if got == [str(number), str(-1 - number)] else f"other: {got}"
            except Exception as exception:
                outcome = ": ".join(error(exception))
            with lock:
                outcomes[outcome] = outcomes.get(outcome, 0) + 1

    workers = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    return {"outcomes": outcomes}


def main() -> None:
    implementation, kind, case = sys.argv[1:4]
    if case in ("classify-feeds", "classify-closes"):
        report = reentered(implementation, kind, "feed" if case == "classify-feeds" else "close")
    elif case == "threads-wait":
        report = threads_wait(implementation, kind)
    else:
        report = threads(implementation, kind)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
