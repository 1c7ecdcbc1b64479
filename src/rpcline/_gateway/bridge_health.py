"""What a bridge tells a health probe: each child's state, and whether the server is ready.

A child is ``idle`` (not started yet, or stopped and started again on the next call),
``starting``, ``up``, ``restarting`` (down, within its backoff) or ``down`` (its last start
came to nothing: the command cannot run, or it failed its handshake). A server is ready
unless one of the children that serve it is down or it is stopping. Each running child is
listed with its pid, era, resident memory and open descriptors (read from ``/proc``; None
where there is none), so that an operator sees what children of one's own cost. Nothing
here names the command or the environment: a probe may be public (``--health-public``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from typing import Any, Final

from rpcline._gateway.pool import Pool
from rpcline._gateway.shared_child import SharedChild

# A server's state is its most telling child's, in this order.
ORDER: Final = ("down", "up", "starting", "restarting", "idle")
PAGE_KB: Final = os.sysconf("SC_PAGE_SIZE") // 1024 if hasattr(os, "sysconf") else 4


def child_state(pool: Pool, child: SharedChild) -> str:
    if child in pool.starting:
        return "starting"
    if child.running:
        return "up"
    if child in pool.failed:
        return "down"
    return "restarting" if child.generation and child.restart_in() > 0 else "idle"


def usage(pid: int) -> tuple[int | None, int | None]:
    """A process's resident memory in kB and its open descriptors, from Linux's ``/proc``
    (None for what cannot be read: another system, or a process gone meanwhile)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            rss_kb: int | None = int(statm.read().split()[1]) * PAGE_KB
    except (OSError, ValueError, IndexError):
        rss_kb = None
    try:
        fds: int | None = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        fds = None
    return rss_kb, fds


def server_health(pools: Iterable[Pool], sessions: int, stopping: bool,
                  own: Iterable[Pool] = ()) -> dict[str, Any]:
    """``state``, ``ready``, ``children`` (each running one's ``pid``, ``era``, ``rss_kb``
    and ``fds``), ``restarts``, ``in_flight``, ``sessions`` and ``uptime_s`` (the
    longest-running child's; None: none runs). ``own``: the pools of children of one's own,
    listed but not deciding the state (a session's child that is down is its owner's)."""
    now = asyncio.get_running_loop().time()
    states, children, restarts, in_flight, uptime = [], [], 0, 0, None
    pools = list(pools)
    for pool in (*pools, *own):
        for child in pool.children:
            if pool in pools:
                states.append(child_state(pool, child))
            restarts += max(0, child.generation - 1)
            in_flight += len(child.calls)
            pid = child.child.pid
            if child.running and pid is not None:
                rss_kb, fds = usage(pid)
                children.append({"pid": pid, "era": pool.era, "rss_kb": rss_kb, "fds": fds})
                uptime = max(uptime or 0.0, now - child.started_at)
    state = "stopping" if stopping else next((s for s in ORDER if s in states), "idle")
    return {"state": state, "ready": state not in ("down", "stopping"), "children": children,
            "restarts": restarts, "in_flight": in_flight, "sessions": sessions,
            "uptime_s": None if uptime is None else round(uptime, 3)}
