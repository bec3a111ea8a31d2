"""The random-program strategies' correct programs: a sharded output is written whole; increments follow the writes
they may overtake.

Found by drawing ``correct_programs()`` and exploring each: 3 of 500 were refuted by ``output-unwritten``, each a
block-sharded output (rows of ``w`` tiles ``2 w`` apart) whose tensor is twice the shard's width, so the other half
of the output had no writer. ``correct_programs`` promises a program correct by construction
(``verispatial.strategies.programs.blueprints``), so such a shard may be drawn for an input, an activation or a broken
draw only.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings

from verispatial.ir import If, InlineWrite, Loop, McastSend, McastSetValid, Op, Program, Role, SemInc, Site, WriteBarrier
from verispatial.ir.serialize import load_program
from verispatial.petri.explore import explore
from verispatial.strategies import correct_programs


def _unwritten_output_tiles(p: Program) -> dict[str, set[int]]:
    """Each output tensor's tiles that no sharded buffer's ring holds, for outputs written only through shards."""
    missing: dict[str, set[int]] = {}
    for t in p.tensors:
        if t.role is not Role.OUTPUT:
            continue
        shards = [b for b in p.buffers if b.shard is not None and b.shard.tensor == t.name]
        if not shards:
            continue
        rows, cols = t.shape[0] // 32, t.shape[1] // 32
        held = {b.shard.tile(j) for b in shards for j in range(b.capacity * b.page_tiles)}  # type: ignore[union-attr]
        missing[t.name] = set(range(rows * cols)) - held
    return {k: v for k, v in missing.items() if v}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(correct_programs())
def test_a_correct_programs_sharded_output_is_held_whole_by_its_shards(p: Program) -> None:
    assert _unwritten_output_tiles(p) == {}


def test_the_program_that_showed_it_is_refuted_by_the_explorer() -> None:
    """The half-covered output the strategy used to draw: the explorer finds tile 0 unwritten (the test's premise)."""
    p = load_program(Path(__file__).parent / "data" / "half_covered_sharded_output.json")
    assert _unwritten_output_tiles(p) == {"sh0": {0}}
    assert "output-unwritten" in explore(p, max_states=4_000).rules()



def _increments_overtaking_writes(p: Program) -> list[str]:
    """Each increment an engine issues into a site while a multicast or one-word write of its to that site may not
    have landed (no ``WriteBarrier`` between, in program order, a loop body once): what ``async-inc-overtake`` refutes
    (docs/semantics.md, "Remote writes to an explicit place") where nothing else orders the landing first. A body's
    end meeting its start is left out: there the handshake orders the landing (the receiver waits for the flag that
    follows the data, the sender for the receiver's next ready), which the explorer confirms."""
    groups = {g.id: g for g in p.groups}

    def sites_of(op: Op) -> set[Site]:
        if isinstance(op, (McastSend, McastSetValid)):
            g = groups[op.group]
            x0, y0, x1, y1 = g.rect
            return {Site(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)}
        if isinstance(op, InlineWrite):
            return {op.at}
        return set()

    found: list[str] = []
    for ep in p.programs:
        def walk(ops: tuple[Op, ...], pending: set[Site], key: str) -> None:
            for op in ops:
                if isinstance(op, (Loop, If)):
                    walk(op.body, pending, key)
                elif isinstance(op, WriteBarrier):
                    pending.clear()
                elif isinstance(op, SemInc) and op.at in pending:
                    found.append(f"{key}: {op}")
                else:
                    pending.update(sites_of(op))

        walk(ep.ops, set(), ep.key)
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(correct_programs())
def test_a_correct_programs_increments_follow_the_writes_they_may_overtake(p: Program) -> None:
    """Found by exploring 500 draws: 2 were refuted by ``async-inc-overtake`` (a multicast handshake's sender then,
    a stage later, a counting increment into the receiver's site with no write barrier between), which the explorer
    replays (``data/inc_after_handshake.json``)."""
    assert _increments_overtaking_writes(p) == []


def test_the_increment_after_a_handshake_is_refuted_by_the_explorer() -> None:
    """The program the strategy used to draw: the explorer finds the increment overtaking the multicast."""
    p = load_program(Path(__file__).parent / "data" / "inc_after_handshake.json")
    assert _increments_overtaking_writes(p) != []
    assert "async-inc-overtake" in explore(p, max_states=4_000).rules()
