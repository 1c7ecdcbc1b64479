"""What a bridge tells a health probe: each child's state, and whether the server is ready.

A child is ``idle`` (not started yet, or stopped and started again on the next call),
``starting``, ``up``, ``restarting`` (down, within its backoff) or ``down`` (its last start
came to nothing: the command cannot run, or it failed its handshake). A server is ready
unless one of the children that serve it is down or it is stopping. Nothing here names the
command or the environment: a probe may be public (``--health-public``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Final

from rpcline._gateway.pool import Pool
from rpcline._gateway.shared_child import SharedChild

# A server's state is its most telling child's, in this order.
ORDER: Final = ("down", "up", "starting", "restarting", "idle")


def child_state(pool: Pool, child: SharedChild) -> str:
    if child in pool.starting:
        return "starting"
    if child.running:
        return "up"
    if child in pool.failed:
        return "down"
    return "restarting" if child.generation and child.restart_in() > 0 else "idle"


def server_health(pools: Iterable[Pool], sessions: int, stopping: bool) -> dict[str, Any]:
    """``state``, ``ready``, the running children's ``pids``, ``restarts``, ``in_flight``,
    ``sessions`` and ``uptime_s`` (the longest-running child's; None: none runs)."""
    now = asyncio.get_running_loop().time()
    states, pids, restarts, in_flight, uptime = [], [], 0, 0, None
    for pool in pools:
        for child in pool.children:
            states.append(child_state(pool, child))
            restarts += max(0, child.generation - 1)
            in_flight += len(child.calls)
            if child.running and child.child.pid is not None:
                pids.append(child.child.pid)
                uptime = max(uptime or 0.0, now - child.started_at)
    state = "stopping" if stopping else next((s for s in ORDER if s in states), "idle")
    return {"state": state, "ready": state not in ("down", "stopping"), "pids": pids,
            "restarts": restarts, "in_flight": in_flight, "sessions": sessions,
            "uptime_s": None if uptime is None else round(uptime, 3)}
