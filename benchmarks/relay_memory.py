"""Peak resident memory of ``rpcline proxy`` relaying one long answer, against its size.

    python benchmarks/relay_memory.py [--sizes 60 200]

For each size (MB), a client sends one request through ``rpcline proxy`` to a server that
answers it with a line of that size, and reads the answer at pipe speed. The proxy runs
in a wrapper process that prints its own peak RSS (``getrusage``, the server excluded) as
it exits; the same run with an empty answer gives the constant (the interpreter, rpcline,
the event loop). Reported: (peak - constant) / line size. Target: at most 2x. Linux and
macOS (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

MB = 1_000_000

# The proxy, its peak RSS in bytes on stderr's last line.
WRAPPER = r"""
import resource, sys
from rpcline import cli
try:
    status = cli.main(sys.argv[1:])
finally:
    scale = 1 if sys.platform == "darwin" else 1024
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale, file=sys.stderr)
sys.exit(status)
"""

# Answers one request with a result of SIZE bytes, written in pieces (its own memory is
# not what is measured, but it need not be large either).
SERVER = r"""
import sys
size = int(sys.argv[1])
sys.stdin.buffer.readline()
out = sys.stdout.buffer
out.write(b'{"jsonrpc":"2.0","id":1,"result":{"text":"')
piece = b"x" * (1 << 20)
for _ in range(size // len(piece)):
    out.write(piece)
out.write(b"x" * (size % len(piece)) + b'"}}\n')
out.flush()
"""


def peak(size: int) -> int:
    """The proxy's peak RSS, in bytes, relaying an answer of ``size`` bytes."""
    command = [sys.executable, "-c", WRAPPER, "proxy", "--quiet",
               "--max-line-bytes", str(size + MB), "--",
               sys.executable, "-c", SERVER, str(size)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proxy:
        assert proxy.stdin and proxy.stdout and proxy.stderr
        proxy.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"m"}\n')
        proxy.stdin.close()
        received = 0
        while chunk := proxy.stdout.read(1 << 20):
            received += len(chunk)
        stderr = proxy.stderr.read()
        status = proxy.wait()
    if status != 0 or received < size:
        sys.exit(f"the relay failed (status {status}, {received} bytes):\n{stderr.decode()}")
    return int(stderr.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[60, 200], metavar="MB")
    args = parser.parse_args()
    constant = peak(0)
    print(f"constant (an empty answer): {constant / MB:.0f} MB")
    for size in args.sizes:
        rss = peak(size * MB)
        print(f"{size} MB answer: peak {rss / MB:.0f} MB, "
              f"{(rss - constant) / (size * MB):.2f}x the line above the constant")


if __name__ == "__main__":
    main()
