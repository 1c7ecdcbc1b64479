"""Peak memory of ``rpcline check`` / ``classify`` over a large capture, in a child process:

    python tests/isolated/cli_memory.py make INPUT [MB]      # write the input (default 200 MB)
    python tests/isolated/cli_memory.py run {cython|python} COMMAND INPUT [ARG...]

``run`` starts ``python -m rpcline COMMAND INPUT ARG...`` (stdout to /dev/null), waits for
it and prints one JSON object: its exit status and its peak resident memory, the kernel's
high-water mark for the children of this process (``getrusage(RUSAGE_CHILDREN)``). This
process starts nothing else, so the figure is the command's own; tests/test_cli.py bounds it.

The input is realistic traffic with many refusals (about 30% of the lines, most lines
short), so a command that kept every refusal, or every line, would grow with the input.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

MB = 1000 * 1000
LONGEST_LINE = 2048  # short lines: many messages, many refusals, per megabyte


def make(path: str, size: int) -> None:
    from rpcline import corpus

    lines = [line for _, line in corpus.iter_labelled(20_000, bad_fraction=0.3)
             if len(line) <= LONGEST_LINE]
    block = b"".join(line + b"\n" for line in lines)
    with open(path, "wb") as out:
        written = 0
        while written < size:
            out.write(block)
            written += len(block)


def run(implementation: str, command: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RPCLINE_NO_EXTENSIONS"}
    if implementation == "python":
        env["RPCLINE_NO_EXTENSIONS"] = "1"
    done = subprocess.run([sys.executable, "-m", "rpcline", *command], env=env, check=False,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=900)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({
        "command": command,
        "status": done.returncode,
        "stderr": done.stderr.decode(errors="replace")[-2000:],
        # ru_maxrss is in KiB on Linux, in bytes on macOS.
        "peak_rss_bytes": usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024),
        "input_bytes": os.path.getsize(command[1]),
    }))


def main() -> None:
    if sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]) * MB if len(sys.argv) > 3 else 200 * MB)
    else:
        run(sys.argv[2], sys.argv[3:])


if __name__ == "__main__":
    main()
