"""Reading the files a command names, and writing its lines, for check, classify and bench.

``-`` (or no name at all) is standard input. A file that cannot be opened or read is
reported on stderr in one line and skipped; the run goes on and exits 2 at the end. On a
terminal, large files show a tqdm progress bar on stderr (the ``progress`` extra), and
lines written to a terminal meanwhile go through ``tqdm.write`` so the bar is not torn.
"""

from __future__ import annotations

import importlib
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, BinaryIO

import rpcline
from rpcline._cli.shared import Outcome

STDIN = "-"
STDIN_NAME = "<stdin>"
READ_BYTES = 64 * 1024
BAR_MIN_BYTES = 32 * 1024 * 1024  # smaller files finish before a bar helps
HINT_MIN_BYTES = 64 * 1024 * 1024  # a wait long enough to make the hint worth a line
BAR_STEP_BYTES = 1024 * 1024  # tqdm's update costs about a parse; not once per line
SNIFF_BYTES = 1024
HINT = ("rpcline: the progress extra (tqdm) shows a progress bar for large files: "
        "`pip install '.[progress]'` from a clone of rpcline, or `pip install tqdm`")


def warn(text: str) -> None:
    """One line on stderr, through tqdm when a bar is shown there."""
    Terminal.current.echo(f"rpcline: {text}", sys.stderr)


def skip(outcome: Outcome, name: str, error: OSError) -> None:
    """Report a file that cannot be read, on stderr and in ``outcome`` (exit status 2)."""
    reason = error.strerror or str(error)
    warn(f"cannot read {name}: {reason}")
    outcome.unreadable.append({"file": name, "reason": reason})


class Terminal:
    """Where lines go: stdout's bytes, or tqdm.write while a bar is on the terminal."""

    current: Terminal

    def __init__(self) -> None:
        self.bar: Any = None  # the tqdm bar being shown, if any
        self.hinted = False
        self.stdout_is_tty = sys.stdout.isatty()

    def line(self, data: bytes) -> None:
        """``data`` and a newline on stdout."""
        if self.bar is not None and self.stdout_is_tty:
            self.echo(data.decode("utf-8", "replace"), sys.stdout)
        else:
            sys.stdout.buffer.write(data + b"\n")

    def echo(self, text: str, file: Any) -> None:
        if self.bar is None:
            print(text, file=file)
        else:
            self.bar.write(text, file=file)
            # The text layer holds what tqdm wrote; later bytes go to the buffer under it.
            file.flush()


Terminal.current = Terminal()


def _tqdm() -> Any:
    """tqdm's class, or None without the progress extra (imported by name: no stubs needed)."""
    try:
        return importlib.import_module("tqdm").tqdm
    except ImportError:
        return None


@contextmanager
def progress_bar(total: int | None, description: str, unit: str = "B") -> Iterator[Any]:
    """A tqdm bar on stderr when it is a terminal and tqdm is installed, else None."""
    tqdm = _tqdm() if sys.stderr.isatty() else None
    if tqdm is None:
        yield None
        return
    bar = tqdm(total=total, desc=description, unit=unit, unit_scale=unit == "B",
               leave=False, file=sys.stderr)
    terminal, previous = Terminal.current, Terminal.current.bar
    terminal.bar = bar
    try:
        yield bar
    finally:
        terminal.bar = previous
        bar.close()


class Source:
    """One input file: its name for messages, and its bytes read in bounded pieces."""

    def __init__(self, name: str, file: BinaryIO, outcome: Outcome, sniff_binary: bool) -> None:
        self.name, self._file, self._outcome = name, file, outcome
        self._sniff = sniff_binary
        self._offset = 0
        self.bar: Any = None
        self._unreported = 0  # bytes read since the bar's last update

    def size(self) -> int | None:
        """The byte count of a regular file (stdin too, when redirected from one)."""
        try:
            status = os.fstat(self._file.fileno())
        except (OSError, ValueError, AttributeError):
            return None
        return status.st_size if stat.S_ISREG(status.st_mode) else None

    def chunks(self) -> Iterator[bytes]:
        """Lines of at most READ_BYTES: a huge line arrives in pieces, memory stays bounded.

        A read error ends the file early, reported, and makes the exit status 2.
        """
        while True:
            try:
                chunk = self._file.readline(READ_BYTES)
            except OSError as error:
                skip(self._outcome, self.name, error)
                return
            if not chunk:
                return
            head = SNIFF_BYTES - self._offset  # > 0 while the first KB is being read
            if self._sniff and head > 0 and b"\0" in chunk[:head]:
                warn(f"{self.name}: looks binary (NUL bytes in the first KB)")
                self._sniff = False
            self._offset += len(chunk)
            if self.bar is not None:
                self._unreported += len(chunk)
                if self._unreported >= BAR_STEP_BYTES:
                    self.bar.update(self._unreported)
                    self._unreported = 0
            yield chunk

    def messages(
        self, max_line_bytes: int, classify: Callable[[bytes], rpcline.Incoming] = rpcline.parse
    ) -> Iterator[tuple[int, rpcline.Incoming]]:
        """Every message with the 1-based number of its physical line (blank lines count)."""
        parser = rpcline.StreamParser(max_line_bytes, classify=classify)
        number = 1
        for chunk in self.chunks():
            for message in parser.feed(chunk):
                yield number, message
            if chunk.endswith(b"\n"):
                number += 1
        for message in parser.close():
            yield number, message


def display(name: str) -> str:
    """A file name as it is written: its bytes, UTF-8 where they are, ``\\xNN`` for each
    byte that is not. Any bytes are a name on Linux; Python hands the others over as lone
    surrogates, which neither stdout nor JSON can carry."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def sources(names: Sequence[str], outcome: Outcome, *, sniff_binary: bool = False,
            show_progress: bool = True) -> Iterator[Source]:
    """The named files in order (``-``: stdin), each open while the caller reads it, and
    named as ``display`` writes them.

    Unreadable ones are reported on stderr and skipped; ``outcome`` remembers them.
    """
    shown = _shown if show_progress else iter_one
    for name in names or [STDIN]:
        if name == STDIN:
            yield from shown(Source(STDIN_NAME, sys.stdin.buffer, outcome, sniff_binary))
            continue
        try:
            file = open(name, "rb")  # noqa: SIM115 - closed below, after the caller's loop
        except OSError as error:
            skip(outcome, display(name), error)
            continue
        with file:
            yield from shown(Source(display(name), file, outcome, sniff_binary))


def iter_one(source: Source) -> Iterator[Source]:
    yield source


def _shown(source: Source) -> Iterator[Source]:
    """``source``, with a progress bar while it is read when it is large (or a hint)."""
    size = source.size()
    if size is None or size < BAR_MIN_BYTES or not sys.stderr.isatty():
        yield source
        return
    with progress_bar(size, source.name) as bar:
        if bar is None:
            hint_once(size)
        source.bar = bar
        yield source


def hint_once(size: int | None) -> None:
    """On a terminal without tqdm, say once per run that a large file could show a bar."""
    terminal = Terminal.current
    if size is not None and size > HINT_MIN_BYTES and not terminal.hinted \
            and sys.stderr.isatty():
        terminal.hinted = True
        print(HINT, file=sys.stderr)
