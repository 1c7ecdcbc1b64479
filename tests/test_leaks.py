"""Leak checks: tests/isolated/leaks.py in a fresh interpreter per implementation.

Each run makes COUNT calls per result kind and stream use (RPCLINE_LEAK_COUNT, 100,000 by
default so the suite stays quick; CI's reliability step sets 1,000,000) and fails when
live blocks, gc objects, resident or traced memory grow past the bounds in that script.
A subprocess of its own keeps other tests' caches and garbage out of the figures, and
the two implementations run at the same time (two cores).

The reference counts of the inputs and of what the results hold are checked here too:
a missing or extra Py_DECREF in the core shows as a count that moved.
"""

from __future__ import annotations

import ctypes
import gc
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

SCRIPT = Path(__file__).parent / "isolated" / "leaks.py"
COUNT = int(os.environ.get("RPCLINE_LEAK_COUNT", "100000"))


@pytest.fixture(scope="module")
def runs() -> dict[str, subprocess.Popen]:
    """Both implementations' leak runs, started together; each test waits for its own."""
    started = {}
    for implementation in ("cython", "python"):
        if implementation == "cython" and os.environ.get("RPCLINE_NO_EXTENSIONS"):
            continue
        started[implementation] = subprocess.Popen(
            [sys.executable, str(SCRIPT), implementation, str(COUNT)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
    yield started
    for process in started.values():
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("implementation", [
    pytest.param("cython", marks=pytest.mark.c_extension), "python",
])
def test_no_growth_after_a_million_calls_of_each_kind(runs, implementation):
    out, err = runs[implementation].communicate(timeout=900)
    reports = [json.loads(line) for line in out.splitlines()]
    over = [r for r in reports if r["over"]]
    assert runs[implementation].returncode == 0 and not over, (over or err)
    assert len(reports) >= 32, out + err  # every kind ran
    assert all(r["count"] == COUNT for r in reports)


# --- the checker itself trips on a real leak ---------------------------------------------


def load_script():
    spec = importlib.util.spec_from_file_location("leaks_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checker_sees_a_leaked_object_per_call():
    script, kept = load_script(), []
    report = script.measure("leaky", lambda n: kept.extend(object() for _ in range(n)), 100_000)
    assert "blocks" in report["over"] and "traced_bytes" in report["over"]


def test_checker_sees_a_leaked_cycle_per_call():
    script, kept = load_script(), []

    def leak(n):
        for _ in range(n):
            cycle = []
            cycle.append(cycle)
            kept.append(cycle)

    assert "gc_objects" in load_script().measure("leaky", leak, 20_000)["over"]
    del script


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_checker_sees_memory_leaked_outside_the_python_allocator():
    libc = ctypes.CDLL(None)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]  # fmt: skip
    read_write, private_anonymous = 0x3, 0x22  # PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS

    def leak(n):  # a fresh page per call, touched so it is resident
        # Not malloc: in this long-lived pytest process malloc may hand back memory that
        # earlier tests freed and that is resident already, so RSS would not grow.
        for _ in range(n):
            ctypes.memset(libc.mmap(None, 4096, read_write, private_anonymous, -1, 0), 1, 1024)

    assert "rss_bytes" in load_script().measure("leaky", leak, 20_000)["over"]


# --- reference counts ----------------------------------------------------------------------

R = b'{"jsonrpc":"2.0",'
KINDS = {
    "request": R + b'"id":"req-1","method":"tools/call","params":{"name":"x"}}',
    "notification": R + b'"method":"note","params":{"p":[1]}}',
    "response": R + b'"id":"req-1","result":{"x":[1,2]}}',
    "refused with id": R + b'"id":"req-1","method":"m","params":7}',
    "refused, batch": b"[1]",
    "parse error": R + b'"id":',
    "stray line": b"INFO hello",
}


@pytest.mark.parametrize("form", [bytes, bytearray, memoryview, lambda b: b.decode()],
                         ids=["bytes", "bytearray", "memoryview", "str"])
@pytest.mark.parametrize("line", list(KINDS.values()), ids=list(KINDS))
def test_parse_leaves_the_input_reference_count_alone(impl, line, form):
    data = form(line)
    before = sys.getrefcount(data)
    for _ in range(1000):
        impl.parse(data)
    assert sys.getrefcount(data) == before
    if isinstance(data, bytearray):  # every buffer export was released: it can be resized
        data.extend(b" ")


def held(value: object) -> int:
    """References to ``value``; only ever compared with the count of an equivalent value
    held the same way, so the interpreter's own conventions cancel out."""
    return sys.getrefcount(value)


def decoded(line: bytes, member: str) -> object:
    """What orjson decodes for one member, with nothing else holding it."""
    message = orjson.loads(line)
    value = message[member]
    del message
    return value


@pytest.mark.parametrize("line, field, member", [
    (KINDS["request"], "params", "params"),
    (KINDS["request"], "id", "id"),
    (KINDS["request"], "method", "method"),
    (KINDS["notification"], "params", "params"),
    (KINDS["refused with id"], "id", "id"),
])
def test_a_result_holds_one_reference_to_each_decoded_field(impl, line, field, member):
    alone = decoded(line, member)
    baseline = held(alone)  # held by the local name only
    result = impl.parse(line)
    value = getattr(result, field)
    assert held(value) == baseline + 1  # the result's own reference, nothing more
    del result
    gc.collect()
    assert held(value) == baseline  # and it gave it back


def test_a_response_body_is_held_once_and_holds_its_members_once(impl):
    line = KINDS["response"]
    body = impl.parse(line).body  # the result is gone: the body is the local name's alone
    message = orjson.loads(line)
    assert held(body) == held(message)
    inner, inner_alone = body["result"], message["result"]
    assert held(inner) == held(inner_alone)
    del body, inner
    result = impl.parse(line)
    alone = decoded(line, "id")
    assert held(result.id) == held(alone) + 2  # the result's reference and its body's


def test_stream_results_hold_no_extra_references(impl):
    stream = importlib.import_module(impl.__name__.replace(".message_", ".stream_"))
    parser = stream.StreamParser()
    results = parser.feed(KINDS["request"] + b"\n" + KINDS["response"] + b"\n")
    params, body = results[0].params, results[1].body
    params_alone, body_alone = decoded(KINDS["request"], "params"), orjson.loads(KINDS["response"])
    assert held(params) == held(params_alone) + 1 and held(body) == held(body_alone) + 1
    del results
    assert held(params) == held(params_alone) and held(body) == held(body_alone)
