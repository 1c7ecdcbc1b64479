"""A scripted stdio server for tests/test_proxy.py: ``python proxy_peer.py MODE [ARG]``.

Every byte it receives is appended to the file named by ``PEER_LOG`` (when set), so the
tests can check what reached the server byte for byte. Modes:

- ``answer``: answers every request with ``{"result": {"n": count}}``, its id copied as
  raw bytes; reads in a thread of its own, as the SDK's servers do, so a client may
  write a burst before it reads.
- ``die-after N``: reads N lines, answers none, exits with status 3.
- ``bad-answer``: answers each request with a refused line (``"jsonrpc": "1.0"``).
- ``huge-answer N``: answers each request with a result of about N bytes.
- ``null-error``: first writes an error response with ``"id": null``, then answers.
- ``ask``: sends the client a request ``"s1"`` and a refused request ``"s2"``, then
  answers requests.
- ``slow S``: answers each request S seconds after it arrived.
- ``deaf``: reads to EOF, answers nothing, then sleeps until killed.
- ``orphan PIDFILE``: reads one line, starts a child that keeps this server's stdout open
  for two minutes (its pid in PIDFILE), and exits with status 4 without answering.
- ``pgrp``: says ``pgrp=N`` (its process group) on stderr, then answers as ``answer``.
- ``noisy``: before each answer, prints ``{"id":ID,"error":"disk 91% full"}`` (no
  ``jsonrpc``: a log record, not an answer).
- ``odd-cancel``: sends the client a request ``"s1"``, then, before each answer, a
  ``notifications/cancelled`` whose ``requestId`` is an array, an object, ``1.0``, ``true``.
- ``ask-3``: sends the client requests ``"s1"``, ``"s2"``, ``"s3"``, then reads to EOF.
- ``stubborn``: ignores SIGTERM (says so on stderr), reads to EOF, then sleeps until killed.
- ``broken KIND``: answers each request with a line that is not JSON, its id readable
  before the fault: KIND ``nan`` (what ``json.dumps`` writes for ``float("nan")``),
  ``utf8``, ``control``, ``trailing`` (text after the document) or ``cut`` (cut short).
- ``long-ask N``: on each client request, first sends the client an over-long request of
  about N bytes with the same id (both peers number from 0), then answers.
- ``flood N``: writes N refused requests (``"method": 5``) without reading its stdin,
  then ``flooded`` on stderr, then reads to EOF.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time

import rpcline

out = sys.stdout.buffer
LOG = os.environ.get("PEER_LOG")


def lines():
    log = open(LOG, "ab", buffering=0) if LOG else None  # noqa: SIM115
    for line in sys.stdin.buffer:
        if log:
            log.write(line)
        yield line


def send(data: bytes) -> None:
    out.write(data + b"\n")
    out.flush()


def raw_id(line: bytes) -> bytes | None:
    r = rpcline.route(line)
    if r.kind != "request":
        return None
    start, end = r.id_span
    return line[start:end]


def answer(line: bytes, count: int, body: bytes | None = None) -> None:
    id = raw_id(line)
    if id is not None:
        send(b'{"jsonrpc":"2.0","id":' + id + b',"result":' + (body or b'{"n":%d}' % count) + b"}")


def main(mode: str, arg: str | None) -> None:
    if mode == "pgrp":
        print(f"pgrp={os.getpgrp()}", file=sys.stderr, flush=True)
        mode = "answer"
    if mode == "answer":
        inbox: queue.Queue[bytes | None] = queue.Queue()

        def read() -> None:
            for line in lines():
                inbox.put(line)
            inbox.put(None)

        threading.Thread(target=read, daemon=True).start()
        count = 0
        while (line := inbox.get()) is not None:
            count += 1
            answer(line, count)
    elif mode == "die-after":
        for count, _ in enumerate(lines(), 1):
            if count == int(arg or 1):
                sys.exit(3)
    elif mode == "bad-answer":
        for line in lines():
            id = raw_id(line)
            if id is not None:
                send(b'{"jsonrpc":"1.0","id":' + id + b',"result":{}}')
    elif mode == "huge-answer":
        for count, line in enumerate(lines(), 1):
            answer(line, count, b'{"text":"' + b"x" * int(arg or 0) + b'"}')
    elif mode == "null-error":
        send(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')
        for count, line in enumerate(lines(), 1):
            answer(line, count)
    elif mode == "ask":
        # The refused request first: its answer is in the log before s1 can be answered.
        send(b'{"jsonrpc":"2.0","id":"s2","method":5}')
        send(b'{"jsonrpc":"2.0","id":"s1","method":"roots/list"}')
        for count, line in enumerate(lines(), 1):
            answer(line, count)
    elif mode == "slow":
        for count, line in enumerate(lines(), 1):
            time.sleep(float(arg or 0))
            answer(line, count)
    elif mode == "deaf":
        for _ in lines():
            pass
        time.sleep(3600)
    elif mode == "orphan":
        next(lines())
        child = subprocess.Popen(["sleep", "120"], stdin=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)  # stdout: this server's
        with open(arg or os.devnull, "w") as pidfile:
            pidfile.write(str(child.pid))
        sys.exit(4)
    elif mode == "noisy":
        for count, line in enumerate(lines(), 1):
            if (id := raw_id(line)) is not None:
                send(b'{"id":' + id + b',"error":"disk 91% full"}')
            answer(line, count)
    elif mode == "odd-cancel":
        send(b'{"jsonrpc":"2.0","id":"s1","method":"roots/list"}')
        for count, line in enumerate(lines(), 1):
            for odd in (b"[1]", b'{"a":1}', b"1.0", b"true"):
                send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":'
                     b'{"requestId":' + odd + b"}}")
            answer(line, count)
    elif mode == "ask-3":
        send(b"\n".join(b'{"jsonrpc":"2.0","id":"%s","method":"roots/list"}' % id
                        for id in (b"s1", b"s2", b"s3")))  # one write: one chunk, at once
        for _ in lines():
            pass
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ignoring SIGTERM", file=sys.stderr, flush=True)
        for _ in lines():
            pass
        time.sleep(3600)
    elif mode == "broken":
        for line in lines():
            if (id := raw_id(line)) is not None:
                send(b'{"jsonrpc":"2.0","id":' + id + BROKEN[arg or "nan"])
    elif mode == "long-ask":
        for count, line in enumerate(lines(), 1):
            if (id := raw_id(line)) is not None:
                send(b'{"jsonrpc":"2.0","id":' + id + b',"method":"sampling/createMessage",'
                     b'"params":{"text":"' + b"x" * int(arg or 0) + b'"}}')
            answer(line, count)
    elif mode == "flood":
        out.write(b'{"jsonrpc":"2.0","id":123456,"method":5}\n' * int(arg or 0))
        out.flush()
        print("flooded", file=sys.stderr, flush=True)
        for _ in lines():
            pass
    else:
        sys.exit(f"unknown mode {mode}")


# What follows the id in each ``broken`` answer.
BROKEN = {
    "nan": b',"result":{"temp":NaN}}',
    "utf8": b',"result":{"text":"caf\xe9"}}',
    "control": b',"result":{"text":"a\tb"}}',  # a raw tab in a string
    "trailing": b',"result":{}} and more',
    "cut": b',"result":{"content":[{"type":"te',
}


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
