"""The scratch family (verispatial/families/scratch/): a buffer used as private L1 of one data-movement engine — NoC
reads into it, local loads and stores of it, NoC writes from it, no circular-buffer counters (argmax's
``find_argmax_for_core``, ttnn 0.81.1 ``reduction/argmax/device/kernels/reader_argmax_interleaved_multicore.cpp:
65-131, 339-360, 499-517``). Each rule on the smallest program: the correct form proves and the explorer agrees;
each broken form is refuted at the op the interpreter reports; what would make the buffer not private is refused
by ``validate`` by name."""

from __future__ import annotations

import attrs
import pytest
from builders import RA, A, B, ep, prog
from family_checks import findings

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Addr,
    Buffer,
    BufferAt,
    Engine,
    Group,
    Loop,
    McastSend,
    Op,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    ScratchAccess,
    Tensor,
    Term,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir import rules as R
from verispatial.ir.serialize import dumps, loads
from verispatial.ir.validate import validate
from verispatial.mutate import judge, mutants
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate
from verispatial.petri.promela import PromelaUnsupported, to_promela

S = 0  # the scratch buffer: one page, as argmax's src_dfb is used
K = (Term("k", 1),)
LOAD, STORE = ScratchAccess(S), ScratchAccess(S, store=True)
#: argmax's per-slice body: read page k into the same bytes, barrier, load the values (0.81.1 :68-74, 85).
SLICE = (ReadTiles("X", Addr(0, K), 1, S), ReadBarrier(), LOAD)
#: the partial stored into scratch and sent, after the loop (:500-517), with the drain the vendor's memmove takes.
SEND = (ScratchAccess(S, store=True, drain=True), WriteTiles(S, "Y", Addr(0), 1), WriteBarrier())


def scratcher(body: tuple[Op, ...] = SLICE, tail: tuple[Op, ...] = SEND, tiles: int = 3) -> Program:
    """One reader: ``tiles`` times ``body``, then ``tail``; X (input, ``tiles`` tiles) read into scratch b0, Y (output,
    one tile) written from it; the memory map laid out from the target's first free byte."""
    reader = ep(A, Engine.READER, Loop("k", tiles, body), *tail)
    tensors = (Tensor("X", (32, 32 * tiles), "bf16", Role.INPUT), Tensor("Y", (32, 32), "bf16", Role.OUTPUT))
    b = Buffer(S, "src", A, 0, 1, 1, "bf16", scratch=True)
    p = prog(reader, buffers=(b,), tensors=tensors)
    return attrs.evolve(p, memory=(BufferAt(S, WORMHOLE.reserved_base, WORMHOLE.tile_bytes["bf16"]),))


def _not_proved(p: Program) -> dict[str, Verdict]:
    return {r.name: r.verdict for r in certify(p, cache=False).results if r.verdict != Verdict.PROVED}


def test_argmax_slices_read_into_the_same_scratch_bytes_prove() -> None:
    """Each slice lands in the same bytes (no reserve, no push), is barriered, then loaded; the partial is stored,
    drained and sent: correct, and no circular-buffer rule applies to the scratch buffer."""
    p = scratcher()
    assert validate(p) == []
    assert simulate(p).violations == ()
    assert explore(p).verdict == "ok"
    assert findings(p) == []
    assert _not_proved(p) == {}


def test_a_scratch_buffer_round_trips_and_plain_buffers_keep_their_bytes() -> None:
    p = scratcher()
    assert loads(dumps(p)) == p
    assert '"scratch": true' in dumps(p)
    plain = attrs.evolve(p, buffers=(attrs.evolve(p.buffers[0], scratch=False),), programs=())
    assert "scratch" not in dumps(plain)


@pytest.mark.parametrize(("body", "tail", "rule", "path"), [
    # loaded before the read barrier: the values may not have landed
    ((ReadTiles("X", Addr(0, K), 1, S), LOAD, ReadBarrier()), SEND, R.SCRATCH_UNLANDED, (0, 1)),
    # the next slice read into the same bytes before the last one was barriered (two reads land in either order)
    ((ReadTiles("X", Addr(0, K), 1, S), LOAD), (ReadBarrier(), *SEND), R.SCRATCH_UNLANDED, (0, 0)),
    # sent while the read into it has not landed
    (SLICE, (ReadTiles("X", Addr(0), 1, S), WriteTiles(S, "Y", Addr(0), 1), ReadBarrier(), WriteBarrier()),
     R.SCRATCH_UNLANDED, (2,)),
    # stored and sent with no drain: a retired store may not have landed for the NoC (common.hpp:91-96)
    (SLICE, (STORE, WriteTiles(S, "Y", Addr(0), 1), WriteBarrier()), R.SCRATCH_UNLANDED, (2,)),
    # rewritten while the write from it has not left
    (SLICE, (ScratchAccess(S, True, True), WriteTiles(S, "Y", Addr(0), 1), ScratchAccess(S, True, True),
             WriteBarrier()), R.SCRATCH_REUSE, (3,)),
])
def test_scratch_bytes_used_before_they_landed_or_left_are_refuted_at_the_op(
        body: tuple[Op, ...], tail: tuple[Op, ...], rule: str, path: tuple[int, ...]) -> None:
    p = scratcher(body, tail)
    assert validate(p) == []
    sim = simulate(p)
    assert any(v.rule == rule and v.position.path == path for v in sim.violations), sim.text()
    assert (rule, RA, path) in findings(p)
    bad = _not_proved(p)
    name = next(n for n in bad if n.startswith(rule))
    assert bad[name] == Verdict.REFUTED
    assert rule in explore(p).rules()


def _refusals(p: Program) -> list[str]:
    return [v.rule for v in validate(p)]


def test_what_would_make_scratch_bytes_not_private_is_refused_by_name() -> None:
    p = scratcher()
    # a circular-buffer op on it
    q = attrs.evolve(p, programs=(attrs.evolve(p.programs[0], ops=(Reserve(S, 1), Push(S, 1))),))
    assert any("a scratch buffer is not a circular buffer" in r for r in _refusals(q))
    # a second engine uses it
    w = ep(A, Engine.WRITER, Wait(S, 1))
    q = attrs.evolve(p, programs=(*p.programs, attrs.evolve(w, ops=(ScratchAccess(S),))))
    assert [str(v) for v in validate(q)] == [
        "program (0,0).writer scratch_access(b0): uses scratch buffer 0 (src), which program (0,0).reader uses: a "
        "scratch buffer is private to one engine"]
    # a second program of the same site and engine is refused as such, not as another engine
    q = attrs.evolve(p, programs=(*p.programs, attrs.evolve(p.programs[0], ops=(ScratchAccess(S),))))
    assert "one program per (site, engine)" in _refusals(q)
    assert not any("private to one engine" in r for r in _refusals(q))
    # scratch_access of a plain buffer
    q = attrs.evolve(p, buffers=(attrs.evolve(p.buffers[0], scratch=False),))
    assert any("not a scratch buffer" in r for r in _refusals(q))
    # a multicast landing in another core's scratch bytes
    plain = Buffer(1, "out", B, 0, 1, 1, "bf16")
    sender = ep(B, Engine.READER, Reserve(1, 1), McastSend(1, 1, 0, 1), WriteBarrier(), Push(1, 1))
    q = attrs.evolve(p, buffers=(*p.buffers, plain), groups=(Group(0, B, (0, 0, 0, 0)),), memory=(),
                     programs=(*p.programs, sender))
    assert any("a remote write into scratch bytes is not said yet" in r for r in _refusals(q))
    # a read of more tiles than it holds
    q = scratcher((ReadTiles("X", Addr(0), 2, S), ReadBarrier(), LOAD), tiles=2)
    assert any("more than scratch buffer 0" in r for r in _refusals(q))


def test_the_promela_model_refuses_scratch_buffers_by_name() -> None:
    with pytest.raises(PromelaUnsupported, match="scratch buffer"):
        to_promela(scratcher())


def test_every_mutant_of_the_scratch_reader_is_killed_or_still_correct() -> None:
    """Mutation testing of the argmax slice reader: dropping, swapping, hoisting an op, a tile more, a loop one
    longer or shorter, the store's drain dropped — each rejected, refuted, or shown still correct by the oracle (a
    dropped load or read changes no rule: the model has no values); never proved while broken."""
    p = scratcher()
    outcomes = [judge(m, cache=False) for m in mutants(p)]
    assert {o.mutant.kind for o in outcomes} >= {"drop", "swap", "no-barrier", "undrain", "hoist", "loop+1"}
    assert all(o.killed or o.status == "still-correct" for o in outcomes), [
        (o.mutant.what, o.status, o.detail) for o in outcomes if not (o.killed or o.status == "still-correct")]
    assert sum(o.status == "refuted" for o in outcomes) >= 8
