"""The 2025-era sessions of ``rpcline.bridge``, and what a shared child's notifications
concern: each session sees what a child of its own would send it, as far as docs/serve.md
says.

- ``list_changed`` goes to every session; ``notifications/resources/updated`` to the
  sessions subscribed to its ``uri``; ``notifications/message`` to each session at or above
  the level it set (``logging/setLevel`` is answered by the bridge, which keeps the child
  at the most verbose level any session asked for); anything else to every session.
- Progress goes to the call whose token it names (``_child``), never here.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any, Final

import orjson

from rpcline._child import Call

LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class Session:
    """One ``Mcp-Session-Id``: its GET stream's mailbox, its calls, what it asked for."""

    __slots__ = ("id", "mailbox", "streaming", "calls", "subscriptions", "level")

    def __init__(self) -> None:
        self.id = uuid.uuid4().hex
        self.mailbox = Call(None)  # notifications for its GET stream, bounded as progress is
        self.streaming = False  # a GET stream is open (one at most, as the SDK allows)
        self.calls: dict[Any, Call] = {}  # in flight, by the session's own id
        self.subscriptions: set[str] = set()
        self.level: str | None = None  # None: every log message

    def wants_log(self, level: object) -> bool:
        if self.level is None or level not in LEVELS:
            return True
        return LEVELS.index(level) >= LEVELS.index(self.level)


class Sessions:
    """Every open 2025-era session, and the subscriptions and log levels they share."""

    def __init__(self) -> None:
        self.open: dict[str, Session] = {}

    def new(self) -> Session:
        session = Session()
        self.open[session.id] = session
        return session

    def close(self, session: Session) -> None:
        self.open.pop(session.id, None)
        session.mailbox.finish(b"")

    def subscribed(self, uri: str) -> bool:
        """Whether any session is subscribed to ``uri``."""
        return any(uri in s.subscriptions for s in self.open.values())

    def child_level(self) -> str | None:
        """The most verbose level any session asked for (None: none asked)."""
        asked = [LEVELS.index(s.level) for s in self.open.values() if s.level is not None]
        return LEVELS[min(asked)] if asked else None

    def deliver(self, method: str, line: bytes) -> None:
        """A child's notification to the sessions it concerns."""
        targets: Iterable[Session] = self.open.values()
        if method == "notifications/resources/updated":
            uri = param(line, "uri")
            targets = [s for s in targets if uri in s.subscriptions]
        elif method == "notifications/message":
            level = param(line, "level")
            targets = [s for s in targets if s.wants_log(level)]
        for session in targets:
            session.mailbox.note(line)


def param(line: bytes, name: str) -> Any:
    """``params[name]`` of a (small) line, or None."""
    try:
        params = orjson.loads(line).get("params")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return params.get(name) if type(params) is dict else None
