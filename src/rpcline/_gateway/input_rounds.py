"""A handshake-era child asks a 2026-07-28 caller: its request becomes an ``input_required``.

The 2026-07-28 era has no server-to-client requests: a server answers ``tools/call`` (or
``prompts/get``, ``resources/read``) with ``"resultType": "input_required"``, its
``inputRequests`` and a ``requestState``, and the client calls again with
``inputResponses`` and that state (multi round-trip requests, SEP-2322; the SDK's client
runs the rounds itself). A handshake-era child asks mid-call instead. When the request
belongs to a 2026-07-28 call (it is the only call in flight on a child of one's own), that
call is answered ``input_required`` with the child's request as its one input request,
``"1"``, and a ``requestState`` the bridge signs (HMAC-SHA256, with a key of its own:
nobody else's state is taken); the call itself stays in flight on the child, as a
``Round``. The client's retry carrying the state gets the child's request answered with
its response, under the child's id, and then waits for the tool's real answer (or the
next round). A round nobody resumes within ``ROUND_TIMEOUT`` seconds is cancelled on the
child.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from typing import Any, Final

import orjson

from rpcline._core.route import Route
from rpcline._gateway import bridge_lines as lines
from rpcline._gateway.shared_child import Call, SharedChild

ASKED: Final = frozenset({"sampling/createMessage", "elicitation/create", "roots/list"})
KEY: Final = "1"  # the one input request of a round
ROUND_TIMEOUT: Final = 300.0  # seconds a round waits for the client's retry
MAX_ROUNDS: Final = 1024  # rounds waiting at once, per bridge


class Round:
    """A 2026-07-28 call whose child asked its client something, waiting for the retry."""

    __slots__ = ("asked_id", "call", "child", "identity", "timer")

    def __init__(self, child: SharedChild, call: Call, asked_id: Any, identity: Any) -> None:
        self.child = child
        self.call = call  # the call still in flight on the child
        self.asked_id = asked_id  # the child's id for its request
        self.identity = identity
        self.timer: asyncio.TimerHandle | None = None


class Rounds:
    def __init__(self) -> None:
        self.key = secrets.token_bytes(32)
        self.waiting: dict[str, Round] = {}

    def open(self, child: SharedChild, call: Call, r: Route, identity: Any) -> bool:
        """Answer ``call`` (the only one on ``child``) ``input_required`` with the child's
        request ``r``, the call going on as a round; False when it cannot be (no more
        rounds, or a request no 2026-07-28 client is asked)."""
        if r.method not in ASKED or len(self.waiting) >= MAX_ROUNDS or call.answer is not None:
            return False
        line = r.line
        assert type(line) is bytes
        params = orjson.loads(line).get("params")
        nonce = secrets.token_hex(16)
        state = f"{nonce}.{self._signature(nonce)}"
        going_on = Call(call.caller_id, call.deadline)
        going_on.child_id, going_on.owner, going_on.token = call.child_id, child, call.token
        child.calls[call.child_id] = going_on  # the same request, on the child, still
        round = self.waiting[nonce] = Round(child, going_on, r.id, identity)
        round.timer = asyncio.get_running_loop().call_later(ROUND_TIMEOUT, self._expire, nonce)
        request: dict[str, Any] = {"method": r.method}
        if params is not None:
            request["params"] = params
        call.finish(lines.result(call.caller_id, {
            "resultType": "input_required", "inputRequests": {KEY: request},
            "requestState": state}))
        return True

    def resume(self, state: Any, identity: Any) -> Round | None:
        """The round ``state`` names, for the same caller (None: none, or not its)."""
        if type(state) is not str:
            return None
        nonce, _, signature = state.partition(".")
        if not hmac.compare_digest(signature.encode("latin-1", "replace"),
                                   self._signature(nonce).encode()):
            return None
        round = self.waiting.get(nonce)
        if round is None or round.identity != identity:
            return None
        del self.waiting[nonce]
        if round.timer is not None:
            round.timer.cancel()
        return round

    def _expire(self, nonce: str) -> None:
        round = self.waiting.pop(nonce, None)
        if round is not None:
            round.child.write(lines.error(round.asked_id, -32000,
                                          "the client did not answer within "
                                          f"{ROUND_TIMEOUT:g} s"))
            round.child.cancel(round.call, "the client did not call again")
            round.call.finish(b"")

    def close(self) -> None:
        for nonce in list(self.waiting):
            round = self.waiting.pop(nonce)
            if round.timer is not None:
                round.timer.cancel()

    def _signature(self, nonce: str) -> str:
        return hmac.new(self.key, nonce.encode(), hashlib.sha256).hexdigest()


def answer_line(round: Round, responses: Any) -> bytes:
    """What the child is answered: the client's response to input request ``"1"``, or an
    error when it gave none."""
    response = responses.get(KEY) if type(responses) is dict else None
    if type(response) is not dict:
        return lines.error(round.asked_id, lines.INVALID_PARAMS,
                           "the client called again without inputResponses[\"1\"]")
    return lines.result(round.asked_id, response)
