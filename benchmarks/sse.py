"""rpcline.sse.EventStreamParser against orjson.loads on the bare payloads, and httpx-sse.

    python benchmarks/sse.py [FILE.jsonl] [--rounds 20] [--chunk 65536]
    python benchmarks/sse.py [FILE.jsonl] --callgrind [--passes 1 4]
    python benchmarks/sse.py --large [--events 8] [--size 1048576] [--rounds 20] [--chunk 65536]
    python benchmarks/sse.py --floods [--chunk 65536]

Each payload of FILE (default: the server side of the recorded SDK sessions) becomes one
event as the SDK's server writes it (``sse.encode``); the stream is fed in fixed-size
chunks. Contenders, per message, all keeping their results in a list:

- ``orjson.loads loop``: a Python loop of orjson.loads over the bare payloads, already
  cut out (no framing at all): the floor;
- ``EventStreamParser``: framing and ``parse`` (target: at most 1.05x the floor);
- ``EventStreamParser(classify=route)``: framing and ``route`` (target: at most 0.35x);
- ``httpx-sse + json.loads``: what an httpx-sse client does, text decoding, its line and
  event decoders, then json.loads of each event's data (target: rpcline at least 10x
  faster); skipped when httpx-sse is not installed;
- the pure-Python twin, reported, not targeted.

Rounds are interleaved (each starts with the next contender) and medians are printed,
each target next to its figure. ``--callgrind`` counts instructions instead (valgrind,
noise-free: the difference between 1 and 4 passes, so start-up and imports cancel out).

``--large`` asks whether large events move at memory speed: EVENTS tool results of SIZE
bytes each (ASCII text, the same on every run), framed as the SDK frames them and fed in
chunks, in GB/s of the bytes each contender reads, wall clock. Contenders: the memory-speed
reference (``b"".join`` of the chunks: one copy of the stream), ``orjson.loads`` and
``route`` on the bare payloads, and ``EventStreamParser`` with each. The framing's cost is
the parser's time less its classify's on the bare payloads, in copies of the stream
(target: at most one copy, in each round's own ratio). On glibc, malloc is told to keep
freed memory (no trimming, no mmap): otherwise whichever contender runs after one that
freed megabytes pays to fault them back in, and the figures measure the allocator.

``--floods`` asks whether a hostile stream of one short line repeated costs per byte what
ordinary lines cost: MB/s of the core and the twin (best of five) on 1 MiB of bare CRs,
LFs, CRLFs (each a blank line, so each byte ends an event), comment lines and ``id`` lines.
"""

from __future__ import annotations

import argparse
import codecs
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from compare import count_instructions, valgrind_missing
from contenders import load_corpus

import rpcline._core.sse_py as sse_py
from rpcline._build_info import describe, verdict

DEFAULT_FILE = Path(__file__).parent / "data" / "sdk-session.server.jsonl"
LOOP = "orjson.loads loop"
Pass = Callable[[list[bytes], list[bytes]], list]  # (chunks, bare payloads) -> results


def loads_loop(chunks: list[bytes], payloads: list[bytes]) -> list:
    import orjson

    loads, results = orjson.loads, []
    append = results.append
    for payload in payloads:
        try:
            append(loads(payload))
        except orjson.JSONDecodeError as error:
            append(error)
    return results


def _parser(module: object, classify: Callable | None = None) -> Pass:
    def run(chunks: list[bytes], payloads: list[bytes]) -> list:
        options = {} if classify is None else {"classify": classify}
        parser = module.EventStreamParser(**options)  # type: ignore[attr-defined]
        events = []
        for chunk in chunks:
            events += parser.feed(chunk)
        return events + parser.close()

    return run


def _httpx_sse() -> Pass | None:
    try:
        from httpx_sse._decoders import SSEDecoder, SSELineDecoder
    except ImportError:
        return None

    def run(chunks: list[bytes], payloads: list[bytes]) -> list:
        # httpx's iter_text decodes incrementally; httpx-sse's iter_sse does the rest.
        text = codecs.getincrementaldecoder("utf-8")("replace")
        lines, events = SSELineDecoder(), SSEDecoder()
        results = []
        for chunk in chunks:
            for line in lines.decode(text.decode(chunk)):
                event = events.decode(line)
                if event is not None:
                    try:
                        results.append(json.loads(event.data))
                    except ValueError as error:
                        results.append(error)
        return results

    return run


def contenders() -> dict[str, Pass]:
    found: dict[str, Pass] = {LOOP: loads_loop}
    try:
        import rpcline._core.route_c as route_c
        import rpcline._core.sse_c as sse_c
    except ImportError as error:
        print(f"skipped the Cython core: {error}")
    else:
        found["EventStreamParser"] = _parser(sse_c)
        found["EventStreamParser(route)"] = _parser(sse_c, route_c.route)
    httpx_sse = _httpx_sse()
    if httpx_sse is None:
        print("skipped httpx-sse: not installed (pip install httpx-sse httpx)")
    else:
        found["httpx-sse + json.loads"] = httpx_sse
    found["EventStreamParser (python)"] = _parser(sse_py)
    return found


def framed(payloads: list[bytes], chunk: int) -> list[bytes]:
    """The payloads as the SDK's server writes them, cut into ``chunk``-byte chunks."""
    stream = b"".join(sse_py.encode(payload) for payload in payloads)
    return [stream[start : start + chunk] for start in range(0, len(stream), chunk)]


def workload(path: Path, chunk: int) -> tuple[list[bytes], list[bytes]]:
    payloads = [line for _, line in load_corpus(path)]
    return framed(payloads, chunk), payloads


def interleaved(runs: dict[str, Pass], chunks: list[bytes], payloads: list[bytes],
                rounds: int) -> list[dict[str, float]]:
    """Each round's seconds per contender, every round starting with the next one."""
    names = list(runs)
    measured = []
    for round in range(rounds + 1):  # round 0 warms up and is dropped
        times = {}
        turn = round % len(names)
        for name in names[turn:] + names[:turn]:
            start = time.perf_counter()
            results = runs[name](chunks, payloads)
            times[name] = time.perf_counter() - start
            assert len(results) in (1, len(payloads)), (name, len(results))  # 1: the copy
            del results
            gc.collect()  # each run starts with the collector in the same state
        if round:
            measured.append(times)
    return measured


def wall_clock(path: Path, rounds: int, chunk: int) -> None:
    chunks, payloads = workload(path, chunk)
    runs = contenders()
    per_message: dict[str, list[float]] = {name: [] for name in runs}
    ratios: dict[str, list[float]] = {name: [] for name in runs}
    for times in interleaved(runs, chunks, payloads, rounds):
        # Ratios within a round: a busy machine slows the whole round alike.
        for name, seconds in times.items():
            per_message[name].append(seconds * 1e9 / len(payloads))
            ratios[name].append(seconds / times[LOOP])
    print(f"{path.name}: {len(payloads):,} events, {sum(map(len, chunks)):,} bytes of SSE in "
          f"{chunk:,}-byte chunks, median of {rounds} interleaved rounds")
    report({name: statistics.median(samples) for name, samples in per_message.items()},
           {name: statistics.median(samples) for name, samples in ratios.items()}, "ns/msg")


def report(per_message: dict[str, float], ratios: dict[str, float], unit: str) -> None:
    targets = {"EventStreamParser": 1.05, "EventStreamParser(route)": 0.35}
    for name, figure in per_message.items():
        note = ""
        if name in targets:
            note = f"  target at most {targets[name]:.2f}x: {verdict(ratios[name] <= targets[name])}"
        print(f"  {name:<28} {figure:8.0f} {unit}  {ratios[name]:.3f}x{note}")
    httpx = ratios.get("httpx-sse + json.loads")
    for name in ("EventStreamParser", "EventStreamParser(route)"):
        if httpx is not None and name in ratios:
            speedup = httpx / ratios[name]
            print(f"  {name} vs httpx-sse + json.loads: {speedup:.1f}x faster  target at "
                  f"least 10x: {verdict(speedup >= 10)}")


# Words of the large results' text: plain ASCII, nothing JSON escapes.
WORDS = ("the quick brown fox jumps over a lazy dog while seven wizards quietly pack "
         "boxes of jam, liquor, and fine vowels.").split()
COPY = "copy (memory speed)"
# contender -> (classify on the bare payloads, whose time the framing adds to)
FRAMED = {"EventStreamParser": "orjson.loads", "EventStreamParser(route)": "route"}


def large_payloads(count: int, size: int) -> list[bytes]:
    """``count`` tool results of ``size`` bytes each (at least the JSON around the text)."""
    import orjson

    rng = random.Random(20260728)
    payloads = []
    for id in range(count):
        def result(text: str, id: int = id) -> bytes:
            content = [{"type": "text", "text": text}]
            return orjson.dumps({"jsonrpc": "2.0", "id": id,
                                 "result": {"content": content, "isError": False}})

        room = max(0, size - len(result("")))
        payloads.append(result(" ".join(rng.choices(WORDS, k=room // 4 + 1))[:room]))
    return payloads


def large_contenders() -> dict[str, Pass]:
    import orjson

    import rpcline._core.route_c as route_c
    import rpcline._core.sse_c as sse_c

    return {
        COPY: lambda chunks, payloads: [b"".join(chunks)],
        "orjson.loads": lambda chunks, payloads: [orjson.loads(p) for p in payloads],
        "route": lambda chunks, payloads: [route_c.route(p) for p in payloads],
        "EventStreamParser": _parser(sse_c),
        "EventStreamParser(route)": _parser(sse_c, route_c.route),
    }


def keep_freed_memory() -> str:
    """Pin glibc's malloc thresholds (see the docstring); what was done, for the report."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return "malloc as it is (not glibc)"
    m_trim_threshold, m_mmap_threshold = -1, -3  # malloc.h
    if mallopt(m_trim_threshold, 2**31 - 1) != 1 or mallopt(m_mmap_threshold, 2**25) != 1:
        return "malloc as it is (mallopt refused)"
    return "glibc malloc keeps freed memory"


def large(count: int, size: int, rounds: int, chunk: int) -> None:
    allocator = keep_freed_memory()
    payloads = large_payloads(count, size)
    chunks = framed(payloads, chunk)
    stream = sum(map(len, chunks))
    runs = large_contenders()
    names = list(runs)
    read = {name: sum(map(len, payloads)) if name in FRAMED.values() else stream
            for name in names}
    speeds: dict[str, list[float]] = {name: [] for name in names}
    copies: dict[str, list[float]] = {name: [] for name in FRAMED}
    for times in interleaved(runs, chunks, payloads, rounds):
        for name, seconds in times.items():
            speeds[name].append(read[name] / seconds / 1e9)
        for name, classify in FRAMED.items():
            copies[name].append((times[name] - times[classify]) / times[COPY])
    print(f"large events: {count} tool results of {size:,} bytes ({stream:,} bytes of SSE) "
          f"in {chunk:,}-byte chunks, median of {rounds} interleaved rounds, {allocator}")
    reference = statistics.median(speeds[COPY])
    for name in names:
        figure = statistics.median(speeds[name])
        note = ""
        if name in copies:
            framing = statistics.median(copies[name])
            note = (f"  framing {framing:5.2f} copies over {FRAMED[name]}: target at most 1: "
                    f"{verdict(framing <= 1)}")
        print(f"  {name:<28} {figure:6.2f} GB/s  {figure / reference:5.2f}x memory speed{note}")


def by_callgrind(path: Path, chunk: int, passes: tuple[int, int]) -> None:
    if valgrind_missing():
        return
    _, payloads = workload(path, chunk)
    per_message = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in contenders():
            low, high = (
                count_instructions([__file__, "--child", name, str(path), str(chunk), str(count)],
                                   Path(folder) / f"{count}.out")
                for count in passes
            )
            per_message[name] = (high - low) / (passes[1] - passes[0]) / len(payloads)
    print(f"callgrind, {path.name}: {len(payloads):,} events in {chunk:,}-byte chunks, "
          "instructions per message")
    report(per_message, {name: n / per_message[LOOP] for name, n in per_message.items()},
           "instr/msg")


def child(name: str, path: str, chunk: int, passes: int) -> None:
    chunks, payloads = workload(Path(path), chunk)
    run = contenders()[name]
    for _ in range(passes):
        run(chunks, payloads)


FLOODS = {"bare CR": b"\r", "bare LF": b"\n", "CRLF": b"\r\n",
          "comment lines": b": keep-alive\n", "id lines": b"id: 1\n"}


def floods(chunk: int) -> None:
    import rpcline._core.sse_c as sse_c

    print(f"floods of 1 MiB in {chunk:,}-byte chunks, best of 5")
    for name, unit in FLOODS.items():
        data = unit * (1024 * 1024 // len(unit))
        pieces = [data[start : start + chunk] for start in range(0, len(data), chunk)]
        figures = []
        for label, module in (("core", sse_c), ("twin", sse_py)):
            best = float("inf")
            for _ in range(5):
                parser = module.EventStreamParser()
                start = time.perf_counter()
                for piece in pieces:
                    parser.feed(piece)
                best = min(best, time.perf_counter() - start)
            figures.append(f"{label} {len(data) / best / 1e6:9.1f} MB/s")
        print(f"  {name:14}  " + "  ".join(figures))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--chunk", type=int, default=64 * 1024)
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--passes", type=int, nargs=2, default=[1, 4])
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--large", action="store_true",
                        help="GB/s on a few large events instead of the recorded traffic")
    parser.add_argument("--events", type=int, default=8, help="--large: how many events")
    parser.add_argument("--size", type=int, default=1024 * 1024, help="--large: bytes each")
    parser.add_argument("--floods", action="store_true",
                        help="MB/s on floods of blank, comment and id lines instead")
    args = parser.parse_args()
    if not args.child:
        print(f"measuring {describe()}")
    if args.floods:
        floods(args.chunk)
    elif args.large:
        large(args.events, args.size, args.rounds, args.chunk)
    elif args.child:
        name, path, chunk, passes = args.child
        child(name, path, int(chunk), int(passes))
    elif args.callgrind:
        by_callgrind(args.file, args.chunk, tuple(args.passes))
    else:
        wall_clock(args.file, args.rounds, args.chunk)
    return 0


if __name__ == "__main__":
    sys.exit(main())
