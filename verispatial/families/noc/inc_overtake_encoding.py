"""``async-inc-overtake`` on one engine's abstract run: an increment aimed at a core while a remote write of the same
engine into that core may not have landed (tt-metal PR #43507, #43699: the write's acknowledgement and the atomic's
response are counted apart, ``noc_nonblocking_api.h`` NIU_MST_WR_ACK_RECEIVED and NIU_MST_ATOMIC_RESP_RECEIVED, so
only a write barrier orders them). Its own module because two families apply it: the NoC family records the remote
writes (``("rw", site, leaf)`` facts), the semaphore family's increments check them (docs/semantics.md, "Remote writes
and the increment that announces them")."""

from __future__ import annotations

from verispatial.certify.facts import EngineRun, State
from verispatial.ir import rules as R


def inc_overtake(c: EngineRun, s: State, sites: tuple[object, ...], path: tuple[int, ...], what: str) -> None:
    """``async-inc-overtake``: an increment aimed at one of ``sites`` while a remote write of this engine into that
    core may not have landed (``("rw", site, leaf)``: no WriteBarrier since). The semaphore family's increments apply
    it (``families/semaphores/encoding.py``)."""
    hit = sorted({int(t[2]) for t in s if t[0] == "rw" and t[1] in sites})  # type: ignore[call-overload]
    if hit:
        where = ", ".join(str(list(c.view.leaves[i].path)) for i in hit)
        c.flag(R.ASYNC_INC_OVERTAKE, path, f"{what} while the remote write at {where} may not have landed at its core "
                                         "(no write barrier since: the atomic may land first)")
