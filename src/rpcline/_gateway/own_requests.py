"""A child of one's own asks its client (sampling, elicitation, roots, ping), and is answered.

stdio carries no relation between a child's request and the call it belongs to (the SDK
keeps its ``related_request_id`` in memory), so the bridge reads it from what is in flight:
when the child has exactly one call, and it is a session's, the request goes on that
call's POST stream, as the SDK's server sends a related request; otherwise on the GET
stream of the owner's session (the one with a stream open, else the latest). Its id is the
bridge's (``Owner.asked``, a counter of the owner's), so a client sees ids no other child
chose; the client's answer, POSTed back, reaches the child with the child's own id. A
request during a 2026-07-28 call, the only one on the child, becomes that call's
``input_required`` (``input_rounds``); one the bridge cannot place (a 2026-07-28 call among
others in flight), or nobody can be asked, is answered by the bridge with an error saying
why (``ping``: ``{}``), as a shared child's is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from rpcline._core.route import Route
from rpcline._gateway import bridge_lines as lines
from rpcline._gateway.relay_lines import failure
from rpcline._gateway.input_rounds import Rounds
from rpcline._gateway.shared_child import Call, SharedChild

if TYPE_CHECKING:
    from rpcline._gateway.bridge_sessions import Session
    from rpcline._gateway.own_children import Owner

MAX_ASKED: Final = 1024  # a child's requests a client has not answered, at most
NO_SESSION: Final = ("this caller has no 2025-era session to ask, and a 2026-07-28 client is "
                     "asked only sampling, elicitation or roots")
UNTOLD: Final = ("rpcline serve cannot tell which of the calls in flight on this server the "
                 "request belongs to (one of them is a 2026-07-28 caller's)")


class Asked:
    __slots__ = ("child", "child_id", "session")

    def __init__(self, child: SharedChild, child_id: Any, session: Session) -> None:
        self.child = child
        self.child_id = child_id
        self.session = session


def ask_client(owner: Owner, rounds: Rounds, child: SharedChild, r: Route) -> None:
    """Send the child's request ``r`` to the client it concerns, with an id of the owner's;
    one during a 2026-07-28 call, as that call's ``input_required`` (``input_rounds``)."""
    modern = _modern_calls(owner, child)
    if modern:
        if len(child.calls) == 1 and rounds.open(child, modern[0], r, owner.identity):
            return
        child.write(lines.answer_child_request(r) if r.method == "ping" else _refused(
            r, UNTOLD if len(child.calls) > 1 else NO_SESSION))
        return
    session, call = _target(owner, child)
    if session is None or len(owner.asked) >= MAX_ASKED:
        child.write(lines.answer_child_request(r) if session is None and r.method == "ping"
                    else _refused(r, NO_SESSION if session is None else
                                  f"{MAX_ASKED} requests to the client are unanswered"))
        return
    owner.next_asked += 1
    owner.asked[owner.next_asked] = Asked(child, r.id, session)
    line = r.with_id(owner.next_asked)
    if call is not None and call.answer is None:
        call.note(line)
    else:
        session.mailbox.note(line)


def answered(owner: Owner, session: Session, r: Route) -> None:
    """The client's answer (a result or an error) to the child, with the child's id; one
    to no request of this session's is dropped."""
    id = r.id
    if type(id) is not int:
        return
    asked = owner.asked.get(id)
    if asked is None or asked.session is not session:
        return
    del owner.asked[id]
    asked.child.write(r.with_id(asked.child_id))


def forget(owner: Owner, session: Session) -> None:
    """The session ended: the child's requests to it are failed (its call may go on)."""
    for id, asked in list(owner.asked.items()):
        if asked.session is session:
            del owner.asked[id]
            asked.child.write(failure(asked.child_id, "Connection closed",
                                      "the client ended its session"))


def _modern_calls(owner: Owner, child: SharedChild) -> list[Call]:
    """The child's calls in flight for a 2026-07-28 request (no session's, nor the bridge's)."""
    if not any(call.caller_id is not None for call in child.calls.values()):
        return []
    of_sessions = {id(call) for session in owner.sessions for call in session.calls.values()}
    return [call for call in child.calls.values()
            if call.caller_id is not None and id(call) not in of_sessions]


def _target(owner: Owner, child: SharedChild) -> tuple[Session | None, Any]:
    """The session to ask, and the call whose stream to use (None: its GET stream)."""
    if len(child.calls) == 1:
        only = next(iter(child.calls.values()))
        for session in owner.sessions:
            if any(call is only for call in session.calls.values()):
                return session, only
    streaming = [s for s in owner.sessions if s.streaming]
    if streaming:
        return streaming[-1], None
    return (owner.sessions[-1], None) if owner.sessions else (None, None)


def _refused(r: Route, why: str) -> bytes:
    return lines.error(r.id, lines.METHOD_NOT_FOUND, f"Method not found: {r.method}: {why}")
