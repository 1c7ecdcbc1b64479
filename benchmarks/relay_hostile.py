"""Peak resident memory of ``rpcline proxy`` against peers that misbehave, against its bound.

    python benchmarks/relay_hostile.py [--lines 1000000] [--ids 2000]

Three peers, each through the proxy in a wrapper that prints the proxy's own peak RSS
(``getrusage``, as ``relay_memory.py`` does), beside the constant (an empty session):

- a server that floods refused requests (``"method": 5``), each answered by the proxy on
  the server's stdin, and never reads its stdin;
- a client that writes refused requests from the first byte, before the server has
  started, and never reads the proxy's answers;
- a client that sends requests with 100 KB string ids to a server that never answers.

A peer that is held back stalls; once nothing has moved for a second and a half the proxy
is sent SIGTERM (passed on to the server) and exits. The bounds, above the constant: a few
MiB of queues (the pipes' high-water marks and one read's worth of answers) for the first
two, which before the fix grew with the flood (129 MiB after 1 M lines); for the third,
twice the pending ids' budget (``--max-pending-bytes``, 16 MiB: the ids, then, as the
server goes, the -32000 answers that echo them, written faster than the client reads)
plus the queues; before the fix, about 200 MiB. Linux (``/proc``).
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from relay_memory import WRAPPER  # noqa: E402  (the proxy, its peak RSS on stderr)

MiB = 1024 * 1024
QUEUES = 8  # MiB: the pipes' high-water marks and one read's worth of answers
PENDING_BYTES = 16  # MiB: --max-pending-bytes; held twice as the server goes (see below)
BAD = b'{"jsonrpc":"2.0","id":123456,"method":5}\n'
FLOOD = r"""
import sys
n = int(sys.argv[1])
line = b'{"jsonrpc":"2.0","id":123456,"method":5}\n'
for _ in range(n // 1000):
    sys.stdout.buffer.write(line * 1000)
sys.stdout.buffer.flush()
print("flooded", file=sys.stderr, flush=True)
sys.stdin.buffer.read()
"""
DEAF = "import sys, time\nsys.stdin.buffer.read()\ntime.sleep(3600)\n"


class Proxy(subprocess.Popen[bytes]):
    """The proxy in its wrapper; its stderr (a log line per refusal) goes to a file, as a
    pipe nobody reads would hold it back."""

    def __init__(self, server: str, *args: str) -> None:
        self.log = tempfile.TemporaryFile()
        super().__init__([sys.executable, "-c", WRAPPER, "proxy", "--quiet",
                          "--drain-timeout", "1", "--kill-after", "1", "--",
                          sys.executable, "-c", server, *args],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)


def settle(progress: Callable[[], int], seconds: float = 1.5, limit: float = 120) -> None:
    """Wait until ``progress()`` has not moved for ``seconds``."""
    last, since, start = progress(), time.monotonic(), time.monotonic()
    while time.monotonic() - start < limit:
        time.sleep(0.1)
        if (now := progress()) != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def finish(p: Proxy, drain: threading.Thread | None = None,
           writing: bool = False) -> tuple[int, bytes]:
    """SIGTERM (passed on to the server), then the proxy's peak RSS and stderr.

    ``writing``: a thread may be blocked writing the proxy's stdin, holding its lock;
    it ends with a broken pipe when the proxy does.
    """
    p.send_signal(signal.SIGTERM)
    assert p.stdin is not None
    if not writing:
        p.stdin.close()
    if drain is None:  # read what it still says, so it can exit
        drain = threading.Thread(target=lambda: p.stdout and p.stdout.read(), daemon=True)
        drain.start()
    p.wait(60)
    p.log.seek(0)
    err = p.log.read()
    return int(err.splitlines()[-1]), err


def constant() -> int:
    p = Proxy(DEAF)
    settle(lambda: rss(p.pid))  # started, its signal handlers in place
    return finish(p)[0]


def flooding_server(lines: int) -> tuple[int, str]:
    p = Proxy(FLOOD, str(lines))
    settle(lambda: rss(p.pid))
    peak, err = finish(p)
    return peak, "absorbed" if b"flooded" in err else "held back"


def client_that_never_reads() -> tuple[int, str]:
    p = Proxy(DEAF)
    written = [0]

    def write() -> None:
        assert p.stdin is not None
        try:
            while written[0] < 256 * MiB:
                p.stdin.write(BAD * 4096)
                p.stdin.flush()
                written[0] += len(BAD) * 4096
        except (OSError, ValueError):
            pass

    threading.Thread(target=write, daemon=True).start()
    settle(lambda: written[0])
    accepted = written[0]
    peak, _ = finish(p, writing=True)
    return peak, f"{accepted / MiB:.1f} MiB accepted"


def long_pending_ids(count: int) -> tuple[int, str]:
    p = Proxy(DEAF)
    assert p.stdin is not None and p.stdout is not None
    answers = [0]

    def read() -> None:
        assert p.stdout is not None
        answers[0] = p.stdout.read().count(b"Too many pending requests")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    for n in range(count):
        id = b'"%d%s"' % (n, b"x" * 100_000)
        p.stdin.write(b'{"jsonrpc":"2.0","id":' + id + b',"method":"tools/call"}\n')
    p.stdin.flush()
    settle(lambda: rss(p.pid))
    peak, _ = finish(p, reader)
    reader.join(60)
    return peak, f"{answers[0]} of {count} answered 'Too many pending requests'"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="the flood's lines")
    parser.add_argument("--ids", type=int, default=2000, help="requests with 100 KB ids")
    args = parser.parse_args()
    base = constant()
    print(f"constant (an empty session): {base / MiB:.1f} MiB")
    print(f"{'peer':48} {'peak RSS':>9} {'above':>8} {'bound':>7}")
    for name, run, bound in [
        (f"server flooding {args.lines:,} refused requests", lambda: flooding_server(args.lines),
         QUEUES),
        ("client writing refused requests, never reading", client_that_never_reads, QUEUES),
        (f"client sending {args.ids:,} requests with 100 KB ids",
         lambda: long_pending_ids(args.ids), 2 * PENDING_BYTES + QUEUES),
    ]:
        peak, note = run()
        above = (peak - base) / MiB
        verdict = "ok" if above <= bound else "OVER"
        print(f"{name:48} {peak / MiB:7.1f} M {above:6.1f} M {bound:5} M  {verdict}: {note}",
              flush=True)


if __name__ == "__main__":
    main()
