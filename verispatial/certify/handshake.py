"""The lockstep multicast handshake (reference §2.5-2.6: ready counter + valid flag), proved exact by induction.

Recognised shape, per sender engine ``S`` with multicast group ``g`` of ``m`` destinations:
- ``S`` owns a reset word ``R`` (its ready counter) and, in ONE loop body, waits ``R`` for ``m*b`` (eq or ge),
  resets it to its initial value, later issues ``McastSetValid(F, g)`` — each exactly once in the body and
  nowhere else;
- each destination ``d`` has a flag word ``F@d`` owned by one engine ``E_d`` whose only flags are ``S``'s; in ONE
  loop body ``E_d`` resets ``F``, increments ``R`` at ``S``'s site by ``b``, waits for the flag — each exactly
  once, in that order, and nowhere else; nothing else increments ``R``. Or, when ``F`` is ``primed`` (its initial
  value is the reset value: the launch is the first reset), the vendor's receiver order: increment ``R``, wait for
  the flag, reset ``F`` (tt-metal ``models/demos/deepseek_v3_b1/unified_kernels/mcast.hpp``: wait for VALID, then
  set INVALID).

Lemma (induction over epochs k): ``E_d``'s increment k+1 follows its flag wait k, which follows flag k, which
follows ``S``'s reset k. So at most one increment per destination lands between two resets, and the wait needs
``m*b``: it returns exactly when every destination's increment k has landed (no overshoot, nothing to lose at
the reset). Flag k follows the wait k, hence every ``E_d``'s reset k (no flag wiped), and flag k+1 needs
``E_d``'s increment k+1, hence its wait k (no two flags merge). In the vendor order, counting the launch as
``E_d``'s first reset, increment k+1 follows reset k+1, which follows wait k, which follows flag k and so ``S``'s
reset k: the same facts. This discharges ``sem-set-race`` and ``sem-overshoot`` for ``R`` and ``sem-flag-early``
for every ``F@d``, for every trip value; loop counts that disagree are left to the deadlock obligation.
"""

from __future__ import annotations

import attrs

from verispatial.certify.semaphores import Word
from verispatial.certify.structure import EngineView, Leaf
from verispatial.ir.core import Site
from verispatial.ir.ops import McastSetValid, SemInc, SemSet, SemWait
from verispatial.ir.program import Program


@attrs.frozen
class Handshake:
    sender: str
    ready: str
    flags: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"lockstep multicast handshake of {self.sender}: ready {self.ready}, flags {', '.join(self.flags)}"


def _body(leaves: list[Leaf]) -> bool:
    return len({lf.containers for lf in leaves}) == 1


def find_handshakes(p: Program, views: dict[str, EngineView], words: dict[tuple[int, Site], Word]) -> list[Handshake]:
    """Every handshake of the recognised shape; each word proved exact by the lemma is named in the result."""
    out: list[Handshake] = []
    for rw in words.values():
        if (rw.kind != "reset" or rw.owner is None or len(rw.waits) != 1 or len(rw.sets) != 1 or rw.fresh
                or any(not isinstance(c.op, SemWait) for c in rw.consuming)):
            continue  # the lemma's reset follows the wait that consumes (a reset before any wait consumes nothing)
        sender = views[rw.owner]
        wait, reset = rw.waits[0], rw.sets[0]
        valids = [lf for lf in sender.leaves if isinstance(lf.op, McastSetValid)
                  and lf.containers == wait.containers and lf.index > reset.index]
        for v in valids:
            assert isinstance(v.op, McastSetValid)
            hs = _check(p, views, words, rw, wait, reset, v)
            if hs is not None:
                out.append(hs)
    return out


def _check(p: Program, views: dict[str, EngineView], words: dict[tuple[int, Site], Word], rw: Word,
           wait: Leaf, reset: Leaf, valid: Leaf) -> Handshake | None:
    op = valid.op
    assert isinstance(op, McastSetValid)
    sender = views[wait.engine]
    if sum(1 for lf in sender.leaves if isinstance(lf.op, McastSetValid) and lf.op.sem == op.sem
           and lf.op.group == op.group) != 1:
        return None
    dests = p.groups[op.group].destinations()
    m = len(dests)
    incs = list(rw.incs)
    if len(incs) != m or not incs or not all(isinstance(lf.op, SemInc) for lf in incs):
        return None
    by = {lf.op.by for lf in incs if isinstance(lf.op, SemInc)}
    wop = wait.op
    assert isinstance(wop, SemWait)
    if len(by) != 1 or wop.value - rw.init != m * next(iter(by)):
        return None
    flag_names = []
    seen_engines = set()
    for d in dests:
        fw = words.get((op.sem, d))
        if fw is None or fw.kind != "flag" or fw.owner is None:
            return None
        if [lf.index for lf in fw.flags] != [valid.index] or any(lf.engine != valid.engine for lf in fw.flags):
            return None
        if len(fw.sets) != 1 or len(fw.waits) != 1:
            # A trailing reset after the loop (restoring the initial value) is allowed: it follows the last wait.
            body_sets = [s for s in fw.sets if s.containers == fw.waits[0].containers] if len(fw.waits) == 1 else []
            if len(fw.waits) != 1 or len(body_sets) != 1 or any(
                    s.index < fw.waits[0].index and s not in body_sets for s in fw.sets):
                return None
            fset = body_sets[0]
        else:
            fset = fw.sets[0]
        fwait = fw.waits[0]
        mine = [lf for lf in incs if lf.engine == fw.owner]
        if len(mine) != 1 or fw.owner in seen_engines:
            return None
        inc = mine[0]
        seen_engines.add(fw.owner)
        if not _body([fset, inc, fwait]) or not (
                fset.index < inc.index < fwait.index or (fw.primed and inc.index < fwait.index < fset.index)):
            return None
        if not isinstance(fset.op, SemSet):
            return None
        flag_names.append(fw.name)
    return Handshake(wait.engine, rw.name, tuple(flag_names))
