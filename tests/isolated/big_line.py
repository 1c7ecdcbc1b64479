"""One 100 MiB line through one API, in a fresh process so its peak memory is its own:

    python tests/isolated/big_line.py {cython|python} {parse|parse-str|parse_lines|stream} [MIB]

Prints one JSON object: what came out and the peak resident memory above the baseline
taken after the input was built (the kernel's high-water mark, VmHWM, reset through
/proc/self/clear_refs once the input is ready), which tests/test_hostile.py bounds.
"""

from __future__ import annotations

import json
import os
import sys
from importlib import import_module

MIB = 1024 * 1024


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")  # resets the resident high-water mark to the current size


def peak() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    implementation, case = sys.argv[1], sys.argv[2]
    size = int(sys.argv[3]) * MIB if len(sys.argv) > 3 else 100 * MIB
    suffix = {"cython": "c", "python": "py"}[implementation]
    message = import_module(f"rpcline._core.message_{suffix}")
    stream = import_module(f"rpcline._core.stream_{suffix}")
    head = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"data":"'
    line = head + b"x" * size + b'"}}'
    text = line.decode() if case == "parse-str" else None
    reset_peak()
    baseline = rss()
    if case == "parse":
        results = [message.parse(line)]
    elif case == "parse-str":
        results = [message.parse(text)]
    elif case == "parse_lines":
        results = stream.parse_lines(line + b"\n" + head + b'"}}\n')
    else:  # the default 16 MiB limit: one refusal, then the next line is read normally
        parser, results = stream.StreamParser(), []
        for start in range(0, len(line), 64 * 1024):
            results += parser.feed(line[start:start + 64 * 1024])
        results += parser.feed(b"\n" + head + b'"}}\n') + parser.close()
    growth = peak() - baseline
    print(json.dumps({
        "input_bytes": len(line),
        "peak_above_baseline": growth,
        "results": [
            [type(r).__name__, getattr(r, "method", None),
             len(r.params["data"]) if type(r).__name__ == "Request" else None,
             r.error.reason if type(r).__name__ == "Refused" else None]
            for r in results
        ],
    }))


if __name__ == "__main__":
    main()
