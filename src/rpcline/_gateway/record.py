"""The ``--record`` files of a relay or a shared child: each side's bytes as they came."""

from __future__ import annotations

from collections.abc import Callable
from typing import IO

__all__ = ("Recorder", "record_paths")


def record_paths(prefix: str) -> tuple[str, str]:
    """The ``--record`` files of ``prefix``: the client's bytes, the server's."""
    return f"{prefix}.client.jsonl", f"{prefix}.server.jsonl"


class Recorder:
    """The ``--record`` files: each side's bytes exactly as they came, in order.

    A record that can no longer be written (a full disk) stops recording, both files, with
    one line on the log naming the file: relaying goes on and loses nothing.
    """

    def __init__(self, prefix: str | None, log: Callable[[str], None]) -> None:
        self.prefix = prefix
        self.log = log
        self.client: IO[bytes] | None = None
        self.server: IO[bytes] | None = None

    def __enter__(self) -> Recorder:
        if self.prefix is not None:
            client, server = record_paths(self.prefix)
            self.client = open(client, "wb")  # an OSError names the path (its filename)
            try:
                self.server = open(server, "wb")
            except OSError:
                self.client.close()
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._close(None)

    def write(self, file: IO[bytes] | None, data: bytes) -> None:
        """``data`` to ``file`` (``self.client`` or ``self.server``), while recording, and on
        to the disk at once: a record can be tailed, and a killed gateway loses none of it."""
        if file is None:
            return
        try:
            file.write(data)
            file.flush()
        except OSError as error:
            self._close((file, error))

    def _close(self, failed: tuple[IO[bytes], OSError] | None) -> None:
        """Close both files; a write or a flush that fails stops the record, said once."""
        for file in (self.client, self.server):
            if file is None:
                continue
            try:
                file.close()
            except OSError as error:  # what was buffered could not be written
                failed = failed or (file, error)
        self.client = self.server = None
        if failed is not None:
            name, cause = failed[0].name, failed[1].strerror or failed[1]
            self.log(f"cannot write the record {name}: {cause}; recording stopped, "
                     "relaying goes on")
