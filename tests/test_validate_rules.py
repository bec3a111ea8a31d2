"""Every per-op rule of ``validate`` with its exact message, in the order violations are reported: per engine
program, the op's own rules in program order, then its uses of phases and tensor roles; after every program, the
32-bit semaphore word rules. One well-formed program, broken one way per case."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verispatial.ir import (
    WORMHOLE,
    AcquireAcc,
    Addr,
    Buffer,
    Compute,
    CopyTiles,
    Dynamic,
    Engine,
    EngineProgram,
    Flush,
    Group,
    Guard,
    If,
    InlineWrite,
    InPlace,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    Operand,
    PackAcc,
    Part,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Role,
    SectionSpan,
    Semaphore,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemSet,
    SemWait,
    Site,
    Tensor,
    Term,
    Trip,
    TripCount,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir import validate as validate_module
from verispatial.ir.limits import PAGES_MAX, TILES_MAX
from verispatial.ir.ops import NOC_VCS
from verispatial.ir.serialize import load_program
from verispatial.ir.source import SourceLoc
from verispatial.ir.validate import validate

A, B = Site(0, 0), Site(1, 0)
K = Term("k", 1)


def base() -> Program:
    """Site A reads X and multicasts it to B, which computes and writes Y; a flag and a counter semaphore."""
    a_reader: tuple[Op, ...] = (
        SemSet(0, 0),
        Loop("k", 2, (Reserve(0, 1), ReadTiles("X", Addr(0, (K,)), 1, 0), ReadBarrier(), McastSend(0, 1, 0, 1), Flush(),
                      McastSetValid(0, 0, 1), Push(0, 1))),
    )
    a_writer: tuple[Op, ...] = (Loop("k", 2, (Wait(0, 1), Pop(0, 1))),)
    b_reader: tuple[Op, ...] = (
        Loop("k", 2, (Reserve(1, 1), SemWait(0, WaitCond.GE, 1, (K,)), Push(1, 1))),
        SemInc(1, B, 1),
    )
    b_compute: tuple[Op, ...] = (
        Loop("t_loop", "t", (Wait(1, 1), AcquireAcc(1, "bf16"), Compute("copy", 1, (Operand(1, 1),)),
                             If("t_loop", Guard.FIRST, (Compute("noop"),)), Reserve(2, 1), PackAcc(2, 1), ReleaseAcc(),
                             Push(2, 1), Pop(1, 1))),
        SemWait(1, WaitCond.GE, 1),
    )
    b_writer: tuple[Op, ...] = (
        Loop("t_loop", "t", (Wait(2, 1), WriteTiles(2, "Y", Addr(0, (Term("t_loop", 1),)), 1), WriteBarrier(), Pop(2, 1))),
    )
    return Program(
        "rules", WORMHOLE,
        tensors=(Tensor("X", (32, 64), "bf16", Role.INPUT), Tensor("Y", (32, 128), "bf16", Role.OUTPUT)),
        buffers=(Buffer(0, "a_in", A, 0, 1, 2, "bf16"), Buffer(1, "b_in", B, 0, 1, 2, "bf16"),
                 Buffer(2, "b_out", B, 1, 1, 2, "bf16")),
        semaphores=(Semaphore(0, "flag", (A, B)), Semaphore(1, "count", (B,))),
        groups=(Group(0, A, (1, 0, 1, 0)),),
        trips=(Trip("t", 3),),
        programs=(EngineProgram(A, Engine.READER, a_reader), EngineProgram(A, Engine.WRITER, a_writer),
                  EngineProgram(B, Engine.READER, b_reader), EngineProgram(B, Engine.COMPUTE, b_compute),
                  EngineProgram(B, Engine.WRITER, b_writer)),
    )


def edit(key: str, path: tuple[int, ...], new: Op | None) -> Callable[[Program], Program]:
    """Replace (``new``) or delete (None) the op at ``path`` of engine program ``key``."""
    def put(ops: tuple[Op, ...], at: tuple[int, ...]) -> tuple[Op, ...]:
        i, rest = at[0], at[1:]
        if rest:
            parent = ops[i]
            assert isinstance(parent, (Loop, If))
            return (*ops[:i], attrs.evolve(parent, body=put(parent.body, rest)), *ops[i + 1:])
        return (*ops[:i], *(() if new is None else (new,)), *ops[i + 1:])

    def f(p: Program) -> Program:
        return attrs.evolve(p, programs=tuple(attrs.evolve(ep, ops=put(ep.ops, path)) if ep.key == key else ep
                                              for ep in p.programs))
    return f


def both(*fs: Callable[[Program], Program]) -> Callable[[Program], Program]:
    def f(p: Program) -> Program:
        for g in fs:
            p = g(p)
        return p
    return f


AR, BR, BC, BW = "(0,0).reader", "(1,0).reader", "(1,0).compute", "(1,0).writer"
PA = "program (0,0).reader"
PB = "program (1,0).reader"
PC = "program (1,0).compute"
PW = "program (1,0).writer"

CASES: list[tuple[str, Callable[[Program], Program], list[str]]] = [
    ("buffer-out-of-range", edit(AR, (1, 6), Push(9, 1)), [f"{PA} ops[1].body[6] Push: buffer 9 is not a buffer"]),
    ("buffer-on-other-site", edit(AR, (1, 6), Push(1, 1)),
     [f"{PA} ops[1].body[6] Push: buffer 1 lives on (1,0), not on this engine's site (0,0)"]),
    ("two-rules-one-op", edit(AR, (1, 6), Push(9, 0)),
     [f"{PA} ops[1].body[6] Push: buffer 9 is not a buffer", f"{PA} ops[1].body[6] Push: pages must be >= 1, got 0"]),
    ("sem-out-of-range", edit(AR, (0,), SemSet(5, 0)), [f"{PA} ops[0] SemSet: sem 5 is not a semaphore"]),
    ("group-out-of-range", edit(AR, (1, 3), McastSend(0, 1, 4, 1)),
     [f"{PA} ops[1].body[3] McastSend: group 4 is not a multicast group"]),
    ("tiles-zero", edit(AR, (1, 1), ReadTiles("X", Addr(0, (K,)), 0, 0)),
     [f"{PA} ops[1].body[1] ReadTiles: tiles must be >= 1, got 0"]),
    ("operand-pages", edit(BC, (0, 2), Compute("copy", 1, (Operand(1, 0),))),
     [f"{PC} ops[0].body[2] Compute: operand pages must be >= 1, got 0"]),
    ("operand-buffer", edit(BC, (0, 2), Compute("copy", 1, (Operand(7, 1),))),
     [f"{PC} ops[0].body[2] Compute: buffer 7 is not a buffer"]),
    ("inc-at-site-without-word", edit(BR, (1,), SemInc(1, A, 1)),
     [f"{PB} ops[1] SemInc: semaphore 1 (count) has no word on site (0,0)"]),
    ("set-valid-source", edit(AR, (1, 5), McastSetValid(0, 0, 1, src=1)),
     [f"{PA} ops[1].body[5] McastSetValid: source semaphore 1 has no word on this engine's site (0,0)"]),
    ("threshold-var", edit(BC, (1,), SemWait(1, WaitCond.GE, 1, (K,))),
     [f"{PC} ops[1] SemWait: threshold uses 'k', which is not an enclosing loop variable"]),
    ("group-sender", edit(BR, (1,), SemIncMcast(1, 0, 1)),
     [f"{PB} ops[1] SemIncMcast: group 0's sender is (0,0), not this engine's site (1,0)"]),
    # A count other than the group's, 0 too, is a finding (the barrier hangs: the deadlock family); below 0 bad input.
    ("num-dests", edit(AR, (1, 3), McastSend(0, 1, 0, -1)),
     [f"{PA} ops[1].body[3] McastSend: num_dests must be in [0, 4294967295] (a uint32_t count of the "
      "acknowledgements the engine's barrier expects), got -1"]),
    ("inc-mcast-loopback", both(lambda p: attrs.evolve(p, groups=(Group(0, A, (0, 0, 1, 0), loopback=True),)),
                                edit(AR, (0,), SemIncMcast(0, 0, 2))),
     [f"{PA} ops[0] SemIncMcast: group 0 is loopback: noc_semaphore_inc_multicast's sender is never in its "
      "rectangle"]),
    # dataflow_api.h:921-922: a non-loopback range "must not be just self" (what the NoC does then is not documented)
    ("group-sender-alone", lambda p: attrs.evolve(p, groups=(Group(0, A, (0, 0, 0, 0)),)),
     ["group 0: its rectangle holds no site but its non-loopback sender: a multicast's range must not be just the "
      "sender (dataflow_api.h:921-922)"]),
    ("mcast-dest-without-cb", lambda p: attrs.evolve(p, buffers=(p.buffers[0], attrs.evolve(p.buffers[1], cb=2),
                                                                  p.buffers[2])),
     [f"{PA} ops[1].body[3] McastSend: destination (1,0) has no buffer with cb index 0 in this phase"]),
    ("flag-dest-without-word", lambda p: attrs.evolve(p, semaphores=(Semaphore(0, "flag", (A,)), p.semaphores[1])),
     [f"{PA} ops[1].body[5] McastSetValid: destination (1,0) has no word of semaphore 0",
      f"{PB} ops[0].body[1] SemWait: semaphore 0 (flag) has no word on site (1,0)"]),
    ("tensor-undeclared", edit(AR, (1, 1), ReadTiles("Z", Addr(0, (K,)), 1, 0)),
     [f"{PA} ops[1].body[1] ReadTiles: tensor 'Z' is not declared"]),
    ("address-var", edit(AR, (1, 1), ReadTiles("X", Addr(0, (Term("j", 1),)), 1, 0)),
     [f"{PA} ops[1].body[1] ReadTiles: address uses 'j', which is neither an enclosing loop variable nor a trip"]),
    ("dynamic-range", edit(AR, (1, 1), ReadTiles("X", Addr(0, (), Dynamic("i", 3, 1)), 1, 0)),
     [f"{PA} ops[1].body[1] ReadTiles: dynamic address range has lo > hi"]),
    ("acquire", edit(BC, (0, 1), AcquireAcc(0, "fp64")),
     [f"{PC} ops[0].body[1] AcquireAcc: tiles must be >= 1, got 0", f"{PC} ops[0].body[1] AcquireAcc: tiles must be >= 1",
      f"{PC} ops[0].body[1] AcquireAcc: dtype 'fp64' is not one of target wormhole_b0's"]),
    ("loop-shadow", edit(AR, (1, 2), Loop("k", 1, (ReadBarrier(),))),
     [f"{PA} ops[1].body[2] Loop: loop variable 'k' shadows an enclosing loop's"]),
    ("count-undeclared-trip", edit(BW, (0,), Loop("t_loop", "u", (WriteBarrier(),))),
     [f"{PW} ops[0] Loop: count 'u' is not a declared trip"]),
    ("trip-count", edit(BW, (0,), Loop("t_loop", TripCount("u", 0), (WriteBarrier(),))),
     [f"{PW} ops[0] Loop: count reads trip 'u', which is not declared", f"{PW} ops[0] Loop: count scale must be >= 1, got 0"]),
    ("count-negative", edit(AR, (1,), Loop("k", -1, ())), [f"{PA} ops[1] Loop: count must be >= 0, got -1"]),
    ("if-var", edit(BC, (0, 3), If("k", Guard.LAST, (Compute("noop"),))),
     [f"{PC} ops[0].body[3] If: if tests 'k', which is not an enclosing loop variable"]),
    ("write-input", edit(BW, (0, 1), WriteTiles(2, "X", Addr(0, (Term("t_loop", 1),)), 1)),
     [f"{PW} ops[0] WriteTiles: writes input tensor 'X': inputs and params are read-only"]),
    ("read-output", edit(AR, (1, 1), ReadTiles("Y", Addr(0, (K,)), 1, 0)),
     [f"{PA} ops[1] ReadTiles: reads output tensor 'Y': a tensor that is written and read is an activation"]),
    ("own-rules-before-uses", both(edit(AR, (1, 1), ReadTiles("Y", Addr(0, (K,)), 1, 0)), edit(AR, (1, 6), Push(9, 1))),
     [f"{PA} ops[1].body[6] Push: buffer 9 is not a buffer",
      f"{PA} ops[1] ReadTiles: reads output tensor 'Y': a tensor that is written and read is an activation"]),
    ("phase", lambda p: attrs.evolve(p, sections=(SectionSpan("s0", True), SectionSpan("s1")),
                                     buffers=(*p.buffers[:2], attrs.evolve(p.buffers[2], section=1)),
                                     semaphores=(p.semaphores[0], attrs.evolve(p.semaphores[1], section=1))),
     [f"{PB} ops[1] SemInc: uses semaphore 1 of section 1 (phase 1) from phase 0: a semaphore is used only in its own "
      "phase"] + [f"{PC} ops[0] {c}: uses buffer 2 of section 1 (phase 1) from phase 0: a buffer is used only in its "
                  "own phase" for c in ("Reserve", "PackAcc", "Push")]
     + [f"{PC} ops[1] SemWait: uses semaphore 1 of section 1 (phase 1) from phase 0: a semaphore is used only in its "
        "own phase"] + [f"{PW} ops[0] {c}: uses buffer 2 of section 1 (phase 1) from phase 0: a buffer is used only in "
                        "its own phase" for c in ("Wait", "WriteTiles", "Pop")]),
    ("words", both(edit(AR, (0,), SemSet(0, 2**32)), edit(BR, (1,), SemInc(1, B, 2**31)),
                   edit(BC, (1,), SemWait(1, WaitCond.GE, -1))),
     [f"{PA} ops[0] SemSet: value 4294967296 exceeds the 32-bit word (max 4294967295)",
      f"{PC} ops[1] SemWait: threshold -1 is negative in some iteration (a word is never below 0)"]),
    ("inc-by", edit(BR, (1,), SemInc(1, B, 2**32)),
     [f"{PB} ops[1] SemInc: by 4294967296 exceeds the 32-bit word (max 4294967295)",
      "semaphore 1 at (1,0): can be counted to 4294967296 (start + every increment, loops at their max), past the "
      "32-bit word (max 4294967295)"]),
    ("inc-total", edit(BR, (0, 1), SemInc(1, B, 2**31)),
     ["semaphore 1 at (1,0): can be counted to 4294967297 (start + every increment, loops at their max), past the "
      "32-bit word (max 4294967295)"]),
    ("growing-threshold", edit(BR, (0, 1), SemWait(0, WaitCond.GE, 2**32 - 1, (K,))),
     [f"{PB} ops[0].body[1] SemWait: value 4294967296 exceeds the 32-bit word (max 4294967295)"]),
]


def test_the_base_program_is_valid() -> None:
    assert validate(base()) == []


@pytest.mark.parametrize(("mutate", "expected"), [(m, e) for _, m, e in CASES], ids=[n for n, _, _ in CASES])
def test_each_rule_names_its_op(mutate: Callable[[Program], Program], expected: list[str]) -> None:
    assert [str(v) for v in validate(mutate(base()))] == expected


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda p: attrs.evolve(p, name="a\nb\x1b[31mred"),
     ["program 'a\\nb\\x1b[31mred': a name holds no control characters (newlines, tabs, escapes)"]),
    (lambda p: attrs.evolve(p, name="x" * 300),
     ["program 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… (302 characters): a name has at most 256 characters, got 300"]),
    (lambda p: attrs.evolve(p, buffers=(attrs.evolve(p.buffers[0], name="c\t0"), *p.buffers[1:])),
     ["buffer 0 'c\\t0': a name holds no control characters (newlines, tabs, escapes)"]),
], ids=["program-escape", "program-long", "buffer-tab"])
def test_a_bad_name_is_reported_alone_and_quoted_safely(mutate: Callable[[Program], Program],
                                                       expected: list[str]) -> None:
    """Names are printed in every report and message: a control character (a newline forging a report line, an ANSI
    escape driving the terminal) or a name of thousands of characters is bad input, reported escaped and cut, and
    alone (every other message would print the name raw)."""
    assert [str(v) for v in validate(mutate(base()))] == expected
    assert validate(attrs.evolve(base(), name="décodé step 1")) == []  # printable non-ASCII is a name


def test_a_transfer_moves_tiles_of_the_buffers_size() -> None:
    """A NoC read of fp32 tiles (4096 bytes) into a bf16 buffer (2048-byte pages) overruns each page: refused by
    name (a new user's review found it proved: every dtype was checked on its own, never the tensor's against the
    buffer's)."""
    p = base()
    t = next(x for x in p.tensors if x.role == Role.INPUT)
    wide = attrs.evolve(p, tensors=tuple(attrs.evolve(x, dtype="fp32") if x is t else x for x in p.tensors))
    got = [str(v) for v in validate(wide)]
    assert got
    assert all("moves fp32 tiles of" in g and "whose bf16 pages hold 2048-byte tiles" in g for g in got)
    # Equal tile sizes pass (bf16 and fp16 tiles are both 2048 bytes on Wormhole).
    narrow = attrs.evolve(p, tensors=tuple(attrs.evolve(x, dtype="fp16") if x is t else x for x in p.tensors))
    assert not any("moves" in str(v) for v in validate(narrow))


def test_two_buffers_of_one_name_on_a_site_are_refused() -> None:
    """A finding names a buffer ``name@site`` (explain, SARIF, the counterexample): two buffers named alike on one
    site (within one section) would make it name either, so the second is bad input. The same name on another site,
    or in another section, is a name of its own."""
    p = base()
    b1, b2 = p.buffers[1], p.buffers[2]
    assert b1.site == b2.site
    assert b1.name != b2.name
    twin = attrs.evolve(p, buffers=tuple(attrs.evolve(b, name=b1.name) if b is b2 else b for b in p.buffers))
    assert [str(v) for v in validate(twin)] == [
        f"buffer 2 ({b1.name}): buffer names are unique on a site (within a section): another buffer on {b1.site} "
        f"is named {b1.name!r}"]
    elsewhere = attrs.evolve(p, buffers=tuple(attrs.evolve(b, name=p.buffers[0].name) if b is b1 else b
                                              for b in p.buffers))
    assert p.buffers[0].site != b1.site
    assert validate(elsewhere) == []


@pytest.mark.parametrize("corner", range(4))
def test_a_rectangle_far_outside_the_mesh_is_reported_not_walked(corner: int) -> None:
    """A fuzzed corner of 2**32 (``test_fuzz``, seed 9): the scratch check listed the rectangle's sites — billions —
    until the address-space bound raised MemoryError (exit 4). Every check that lists a group's sites skips a
    rectangle that leaves the mesh, which validate reports instead."""
    import json
    from pathlib import Path

    from verispatial.ir.serialize import program_from_dict

    root = Path(__file__).resolve().parent.parent
    for name in ("examples/broken/c_trip_sender.json", "examples/mcast_pair.json"):
        d = json.loads((root / name).read_text())
        d["groups"][0]["rect"][corner] = 2**32
        rules = [v.rule for v in validate(program_from_dict(d))]
        assert any("leaves the mesh" in r for r in rules), rules


def test_scratch_access_of_a_program_without_scratch_buffers_in_its_place_among_the_violations() -> None:
    """With no scratch buffer, "a scratch_access names a scratch buffer" is decided from the ops the op pass meets
    (no walk of its own) and reported where the scratch rules report, before the op pass's violations; a body nested
    past the model's depth, which the op pass does not walk, is still searched."""
    from pathlib import Path

    from verispatial.ir.limits import NEST_MAX
    from verispatial.ir.ops import ScratchAccess
    from verispatial.ir.serialize import load_program

    p = load_program(Path(__file__).resolve().parent.parent / "examples" / "pipeline_small.json")
    assert not any(b.scratch for b in p.buffers)
    ep = p.programs[0]
    deep: Op = ScratchAccess(1)
    for i in range(NEST_MAX + 2):
        deep = Loop(f"v{i}", 1, (deep,))
    ops = (ScratchAccess(0), *ep.ops, Loop("i", 2, (ScratchAccess(1),)), Push(99, 1), deep)
    q = attrs.evolve(p, programs=(attrs.evolve(ep, ops=ops), *p.programs[1:]))
    rule = "scratch_access names buffer {0}, which is not a scratch buffer (scratch: true)"
    assert [(v.entity, v.rule) for v in validate(q)] == [
        ("program (0,0).reader scratch_access(b0)", rule.format(0)),
        ("program (0,0).reader scratch_access(b1)", rule.format(1)),
        ("program (0,0).reader scratch_access(b1)", rule.format(1)),
        ("program (0,0).reader ops[3] Push", "buffer 99 is not a buffer"),
        ("program (0,0).reader ops[4]" + ".body[0]" * NEST_MAX + " Loop",
         f"nests {NEST_MAX + 1} loops and ifs deep, more than the model's {NEST_MAX}"),
    ]
    shallow = attrs.evolve(p, programs=(attrs.evolve(ep, ops=ops[:-1]), *p.programs[1:]))
    assert [v.rule for v in validate(shallow)] == [rule.format(0), rule.format(1), "buffer 99 is not a buffer"]


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _leaves(ops: tuple[Op, ...], at: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Op]]:
    for i, op in enumerate(ops):
        if isinstance(op, (Loop, If)):
            yield from _leaves(op.body, (*at, i))
        else:
            yield (*at, i), op


def _found(p: Program) -> list[tuple[str, str, str | None, tuple[int, ...] | None]]:
    return [(v.entity, v.rule, v.engine, v.path) for v in validate(p)]


@contextlib.contextmanager
def fast_paths_off() -> Iterator[None]:
    """``validate`` with the generated quick checks off (``_QUICK`` always false, no ``_QUIET`` class for any engine,
    no semaphore op passed over by ``_sem_passes``, no transfer by ``_transfer_passes``, no multicast by
    ``_mcast_passes``, no accumulator acquire by ``_acc_passes``, no source location by ``_check_sources``, no
    tensor's shards told apart by ``_shard_tile_set``, no program's semaphore slots left uncounted): every leaf through
    the generic id, page and tile rules, every source location through ``_source_rules``, every shard's tiles through
    the holder rules, every site's slots through ``_semaphore_slots``."""
    saved = (validate_module._QUICK, validate_module._QUIET, validate_module._QUIET_OF, validate_module._SEM_QUICK,
             validate_module._TRANSFER_QUICK, validate_module._MCAST_QUICK, validate_module._SOURCES_QUICK,
             validate_module._ACC_QUICK, validate_module._SHARD_DISJOINT_QUICK, validate_module._SLOTS_QUICK)
    validate_module._QUICK = {cls: (lambda *_: False) for cls in saved[0]}
    validate_module._QUIET = frozenset()
    validate_module._QUIET_OF = {e: {} for e in Engine}
    validate_module._SEM_QUICK = frozenset()
    validate_module._TRANSFER_QUICK = frozenset()
    validate_module._MCAST_QUICK = frozenset()
    validate_module._SOURCES_QUICK = False
    validate_module._ACC_QUICK = frozenset()
    validate_module._SHARD_DISJOINT_QUICK = False
    validate_module._SLOTS_QUICK = False
    try:
        yield
    finally:
        (validate_module._QUICK, validate_module._QUIET, validate_module._QUIET_OF, validate_module._SEM_QUICK,
         validate_module._TRANSFER_QUICK, validate_module._MCAST_QUICK, validate_module._SOURCES_QUICK,
         validate_module._ACC_QUICK, validate_module._SHARD_DISJOINT_QUICK, validate_module._SLOTS_QUICK) = saved


def _generic_only(p: Program, found: Callable[[Program], Any] = _found) -> Any:
    """``found`` of ``p`` with the fast paths off (``fast_paths_off``)."""
    with fast_paths_off():
        return found(p)


def _edits_agree(p: Program, classes: tuple[type, ...], edits: Callable[[Program, Op], list[tuple[str, object]]],
                 recorded: bool = False) -> int:
    """Each op of ``classes`` in ``p`` (top-level and in loops) with each of its ``edits`` (field, value) applied is
    reported, in order, as the generic rules alone report it (``recorded``: and the walk records the same,
    ``_recorded``); returns the number of edits."""
    n = 0
    for ep in p.programs:
        for path, op in _leaves(ep.ops):
            if not isinstance(op, classes):
                continue
            for name, value in edits(p, op):
                q = edit(ep.key, path, attrs.evolve(op, **{name: value}))(p)
                assert _found(q) == _generic_only(q), (ep.key, path, name, value)
                if recorded:
                    assert _recorded(q) == _generic_only(q, _recorded), (ep.key, path, name, value)
                n += 1
    return n


@functools.cache
def _bases() -> list[Program]:
    return [base(), *(m(base()) for _, m, _ in CASES[:12]), load_program(EXAMPLES / "three_sections.json"),
            load_program(EXAMPLES / "matmul_reuse_mcast_wormhole.json")]


_NUMBERS = st.integers(-1, 4) | st.sampled_from([PAGES_MAX, PAGES_MAX + 1, TILES_MAX, TILES_MAX + 1, 2**32])
_WORDS = st.integers(-1, 4) | st.sampled_from([2**32 - 2, 2**32 - 1, 2**32])


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_the_quick_checks_never_hide_a_violation(data: st.DataObject) -> None:
    """The walk passes over a leaf whose ids, pages and tiles its generated predicate finds good (``_quick``: the
    buffers of its site and phase, the semaphores of its phase); the violations, and their order, are those of the
    generic rules alone. On this module's programs and two examples with sections, each with random edits of an op's
    ids, pages and tiles and of a buffer's site and section."""
    p = data.draw(st.sampled_from(_bases()))
    for _ in range(data.draw(st.integers(0, 3))):
        if data.draw(st.booleans()) and p.buffers:
            i = data.draw(st.integers(0, len(p.buffers) - 1))
            b = p.buffers[i]
            b = attrs.evolve(b, site=data.draw(st.sampled_from([A, B, Site(2, 0), b.site])),
                             section=data.draw(st.sampled_from([b.section, 0, 1, -1, len(p.sections)])))
            p = attrs.evolve(p, buffers=(*p.buffers[:i], b, *p.buffers[i + 1:]))
            continue
        ep = data.draw(st.sampled_from(p.programs))
        leaves = list(_leaves(ep.ops))
        if not leaves:
            continue
        path, op = data.draw(st.sampled_from(leaves))
        fields = [f.name for f in attrs.fields(type(op)) if f.name in ("pages", "tiles") or (
            f.metadata.get("id") in ("buffer", "semaphore", "group") and type(getattr(op, f.name)) is int) or (
            f.name == "at" and isinstance(getattr(op, f.name), Site)) or (
            f.name == "terms" and isinstance(op, (SemWait, SemSet))) or (
            f.name in ("value", "by") and isinstance(op, (SemInc, SemWait, SemSet)))]
        if not fields:
            continue
        name = data.draw(st.sampled_from(fields))
        # a semaphore word's site, a wait's or set's terms and the values the 32-bit word rule bounds too
        # (``_sem_passes``): a site with or without the word, a term over an enclosing loop or over none, a negative
        # term, a value or increment at and past the word's maximum
        value = (data.draw(st.sampled_from([A, B, Site(2, 0)])) if name == "at" else
                 data.draw(st.sampled_from([(), (K,), (Term("k", -9),), (Term("zz", 1),)])) if name == "terms" else
                 data.draw(_WORDS) if name in ("value", "by") else data.draw(_NUMBERS))
        p = edit(ep.key, path, attrs.evolve(op, **{name: value}))(p)
    assert _found(p) == _generic_only(p)


_SEM_EDITS: list[tuple[str, object]] = [
    *[("value", v) for v in (-1, 0, 2**32 - 1, 2**32)], *[("by", v) for v in (0, 2**32 - 1, 2**32)],
    *[("terms", t) for t in ((), (K,), (Term("k", -9),), (Term("k", 2**32),), (Term("zz", 1),))],
    *[("at", s) for s in (A, B, Site(2, 0))], *[("sem", i) for i in (0, 1, 9)]]


@pytest.mark.parametrize("example", ["counter_release.json", "three_sections.json", "local_up.json",
                                     "remote_write.json", "vendor/dispatch_mailbox.json"])
def test_every_semaphore_op_edit_is_found_as_the_generic_rules_find_it(example: str) -> None:
    """``_sem_passes`` counts a semaphore inc, wait, set, read-modify-write or inline write into the 32-bit word
    totals only when no rule of ``_leaf`` or ``_word_range`` can fail: each of the example's such ops (top-level and
    in loops) with each of its values, terms, sites and ids edited to a boundary (negative, the word's maximum and one
    past it, a term over no loop or driving the value below 0) is reported, in order, as the generic rules alone
    report it, and with its engine program moved to the compute engine. The program first gains a semaphore whose
    word is on a site no program runs on (an edit of an op's ``sem`` may name it) and, after each read-modify-write
    and inline write, an increment of the same word (a value at the word's maximum is then counted past it)."""
    def edits(q: Program, op: Op) -> list[tuple[str, object]]:
        fields = {f.name for f in attrs.fields(type(op))}
        return [*[(name, value) for name, value in _SEM_EDITS if name in fields and name != "sem"],
                *[("sem", i) for i in (*range(len(q.semaphores)), 9)]]

    p = _incremented(load_program(EXAMPLES / example))
    classes = (SemInc, SemWait, SemSet, SemRmw, InlineWrite)
    assert _edits_agree(p, classes, edits) > 20
    _on_compute_agree(p, classes)


def _incremented(p: Program) -> Program:
    """``p`` with a semaphore on the mesh's last site (where no program runs) and, after each top-level ``SemRmw`` or
    ``InlineWrite``, a ``SemInc`` of the word it writes."""
    corner = Site(p.target.mesh[0] - 1, p.target.mesh[1] - 1)
    assert all(ep.site != corner for ep in p.programs)
    programs = []
    for ep in p.programs:
        ops: list[Op] = []
        for op in ep.ops:
            ops.append(op)
            if isinstance(op, (SemRmw, InlineWrite)):
                ops.append(SemInc(op.sem, op.at if isinstance(op, InlineWrite) else ep.site, 1))
        programs.append(attrs.evolve(ep, ops=tuple(ops)))
    return attrs.evolve(p, semaphores=(*p.semaphores, Semaphore(len(p.semaphores), "corner", (corner,))),
                        programs=tuple(programs))


def _on_compute_agree(p: Program, classes: tuple[type, ...]) -> None:
    """Each engine program of ``p`` holding an op of ``classes`` moved to the compute engine (or, a compute one, to
    the reader) is reported as the generic rules alone report it."""
    for ep in p.programs:
        if any(isinstance(op, classes) for _path, op in _leaves(ep.ops)):
            other = Engine.READER if ep.engine is Engine.COMPUTE else Engine.COMPUTE
            q = attrs.evolve(p, programs=tuple(attrs.evolve(x, engine=other) if x is ep else x for x in p.programs))
            assert _found(q) == _generic_only(q), ep.key


@pytest.mark.parametrize("example", ["pipeline_small.json", "forwarder.json", "peeled_k_loop.json"])
def test_every_accumulator_acquire_edit_is_found_as_the_generic_rules_find_it(example: str) -> None:
    """``_acc_passes`` passes over an ``AcquireAcc`` only when no rule of ``_leaf`` can fail: each of the example's
    acquires with its tiles at and past their ends and its dtype each of the target's and one it lacks is reported
    as the generic rules alone report it, and with its engine program moved off the compute engine."""
    p = load_program(EXAMPLES / example)

    def edits(q: Program, _op: Op) -> list[tuple[str, object]]:
        return [*[("tiles", n) for n in (-1, 0, 1, TILES_MAX, TILES_MAX + 1)],
                *[("dtype", d) for d in (*q.target.tile_bytes, "nope")]]

    assert _edits_agree(p, (AcquireAcc,), edits) > 10
    _on_compute_agree(p, (AcquireAcc,))


@pytest.mark.parametrize("example", ["local_copy.json", "vendor/contributed_multicast.json"])
def test_every_copy_edit_is_found_as_the_generic_rules_find_it(example: str) -> None:
    """A ``CopyTiles`` passed over as quiet (``_copy_quiet``) is reported as the generic rules alone report it with
    its source and destination each every buffer (itself among them: a copy onto itself) and one past them, its tiles
    at and past their ends, and with its engine program moved to the compute engine."""
    p = _landings(load_program(EXAMPLES / example))

    def edits(q: Program, _op: Op) -> list[tuple[str, object]]:
        buffers = (*range(len(q.buffers)), 99)
        return [*[("src", b) for b in buffers], *[("into", b) for b in buffers],
                *[("tiles", n) for n in (-1, 0, 1, TILES_MAX, TILES_MAX + 1)]]

    assert _edits_agree(p, (CopyTiles,), edits) > 10
    _on_compute_agree(p, (CopyTiles,))


@pytest.mark.parametrize("example", ["vendor/eltwise_binary_sharded.json", "vendor/layernorm_sharded.json"])
def test_every_shard_edit_is_found_as_the_holder_rules_find_it(example: str) -> None:
    """``_check_shards`` tells a tensor whose shards hold no tile in common by a set of their tiles (``_shard_tile_set``)
    and sends only the others through the holder rules: each sharded buffer with its shard's start, width, stride and
    tiles edited (onto another shard's tiles, rows that meet, past the tensor, a shard as large as the ring) and its
    site and tensor made another's is reported as the holder rules over every tile report it."""
    p = load_program(EXAMPLES / example)
    sharded = [b for b in p.buffers if b.shard is not None]
    assert sharded
    n = 0
    for b in sharded:
        sh = b.shard
        assert sh is not None
        shards = [
            *[attrs.evolve(sh, start=v) for v in (0, 1, sh.start + 1, sh.width, *(x.shard.start for x in sharded))],  # type: ignore[union-attr]
            *[attrs.evolve(sh, width=v) for v in (0, 1, sh.width + 1, 2 * sh.width)],
            *[attrs.evolve(sh, stride=v) for v in (0, sh.width, sh.stride + 1, max(sh.width, 1) * 2)],
            *[attrs.evolve(sh, tiles=v) for v in (0, 1, sh.tiles + 1, 2 * max(sh.tiles, 1))],
            *[attrs.evolve(sh, tensor=x.shard.tensor) for x in sharded],  # type: ignore[union-attr]
        ]
        changes = [{"shard": x} for x in shards] + [{"site": x.site} for x in sharded]
        for change in changes:
            q = attrs.evolve(p, buffers=tuple(attrs.evolve(x, **change) if x is b else x for x in p.buffers))
            assert _found(q) == _generic_only(q), (b.id, change)
            n += 1
    assert n > 40


def _transfer_edits(p: Program, op: ReadTiles | WriteTiles) -> list[tuple[str, object]]:
    """Edits of a transfer's every field to each of its boundaries: every tensor of ``p`` (of each role) and an
    undeclared one, addresses past 32 bits, over no loop or indirect (ranges and scales at and past 32 bits, empty,
    an index buffer named, past the buffers or derived), part pages, tile counts, every buffer of ``p`` (other sites,
    other dtypes) and one past them."""
    k = op.addr.terms[0].var if op.addr.terms else "k"
    return [*[("tensor", t.name) for t in p.tensors], ("tensor", "nope"),
            *[("addr", a) for a in (Addr(-1), Addr(2**32), Addr(-(2**32)), Addr(0, (Term(k, 2**32),)),
                                     Addr(0, (Term("zz", 1),)), Addr(0, (Term(k, 1),), Dynamic("nope", 0, 3)),
                                     Addr(0, (), Dynamic("nope", 3, 0)), Addr(0, (), Dynamic("nope", 3, 3)),
                                     *[Addr(0, (), Dynamic(t.name, lo, hi, scale, buf)) for t in p.tensors[:2]
                                       for lo, hi, scale, buf in ((0, 3, 1, None), (-(2**32), 2**32, 1, None),
                                                                  (0, 2**32 - 1, 2**32, None), (1, 0, 1, None),
                                                                  (0, 3, 1, 0), (0, 3, 1, 99))])],
            ("part", Part(0, 32)), ("part", Part(4000, 200)), *[("tiles", n) for n in (0, 1, 2, TILES_MAX + 1)],
            *[("into" if isinstance(op, ReadTiles) else "src", b) for b in (*range(len(p.buffers)), 99)]]


@pytest.mark.parametrize("example", ["pipeline_small.json", "three_sections.json", "kv_cache_update.json",
                                     "peeled_k_loop.json"])
def test_every_transfer_edit_is_found_as_the_generic_rules_find_it(example: str) -> None:
    """``_transfer_passes`` passes over a ReadTiles or WriteTiles only when no rule of ``_leaf`` can fail, recording
    what ``_leaf`` records of it: each of the example's transfers with each field edited to a boundary is reported,
    in order, as the generic rules alone report it."""
    p = load_program(EXAMPLES / example)
    # tensors of another tile size than every buffer's (bf16), of each role a transfer may name
    p = attrs.evolve(p, tensors=(*p.tensors, *(Tensor(f"f{r.value}", (32, 32), "fp32", r) for r in Role)))
    assert validate(p) == []
    assert _edits_agree(p, (ReadTiles, WriteTiles), _transfer_edits, recorded=True) > 20  # type: ignore[arg-type]


def _recorded(p: Program) -> tuple[object, ...]:
    """What ``validate``'s op walk records of ``p``'s transfers for the rules after it (``validate_templated``'s, the
    index buffers')."""
    ops = validate_module._validate(p)[1]
    assert ops is not None
    return ops.reads, ops.writes, ops.tensor_sections, ops.index_fills, ops.names_non_loop, len(ops.index_uses)


def _quiet_edits(p: Program, op: Op) -> list[tuple[str, object]]:
    """Edits of a compute step's or multicast's fields to their boundaries: operand pages and buffers, a page read in
    place, tiles; a multicast's landing buffer and a valid-multicast's source word (ids that may be None), groups."""
    buffers = (*range(len(p.buffers)), 99)
    if isinstance(op, Compute):
        first = op.ins[0] if op.ins else Operand(0, 1)
        return [*[("ins", (attrs.evolve(first, pages=n), *op.ins[1:])) for n in (0, 1, PAGES_MAX, PAGES_MAX + 1)],
                *[("ins", (attrs.evolve(first, buf=b), *op.ins[1:])) for b in buffers], ("ins", ()),
                *[("in_place", (InPlace(first.buf, page, terms),)) for page, terms in (
                    (0, ()), (-1, ()), (PAGES_MAX + 1, ()), (0, (Term("zz", 1),)), (0, (Term("k", PAGES_MAX + 1),)))],
                *[("tiles", n) for n in (0, 1, TILES_MAX + 1)]]
    # every multicast's acknowledgement count and channel (``_mcast_passes``) at and past their ends
    counts = [("num_dests", n) for n in (-1, 0, 1, 2**32 - 1, 2**32)]
    channels = [("vc", v) for v in (None, -1, 0, NOC_VCS - 1, NOC_VCS)]
    groups = [("group", g) for g in (*range(len(p.groups)), 9)]
    if isinstance(op, McastSend):
        # where it lands: offsets inside and past the landing ring, pages already pushed, the read pointer
        return [*[("dst", b) for b in (None, *buffers)], *[("buf", b) for b in buffers], *groups, *counts, *channels,
                *[("pages", n) for n in (0, 1, 2, 3, PAGES_MAX + 1)], *[("offset", n) for n in (-1, 1, 2, PAGES_MAX + 1)],
                *[("behind", n) for n in (-1, 1, 2, 4, PAGES_MAX + 1)], ("front", not op.front)]
    sems = [("sem", x) for x in (*range(len(p.semaphores)), 9)]
    if isinstance(op, SemIncMcast):
        return [*sems, *groups, *counts, *[("by", n) for n in (0, 1, 2**32 - 1, 2**32)]]
    assert isinstance(op, McastSetValid)
    return [*[("src", x) for x in (None, *range(len(p.semaphores)), 9)], *sems, *groups, *counts, *channels]


@pytest.mark.parametrize("example", ["pipeline_small.json", "forwarder.json", "vendor_receiver.json", "mcast_pair.json",
                                     "counter_release.json", "remote_write.json", "valid_source.json",
                                     "vendor/sort_exchange_data.json", "vendor/contributed_multicast.json"])
def test_every_compute_and_multicast_edit_is_found_as_the_generic_rules_find_it(example: str) -> None:
    """A compute step passed over as quiet (``_compute_quiet``) and a multicast passed over by ``_mcast_passes`` are
    reported, in order, as the generic rules alone report them, with each field edited to a boundary (what the
    multicasts count into the 32-bit word totals too: those findings are among the reported), and with the engine
    program moved to the compute engine. The program first gains what an edit may then name (``_landings``): a
    loopback copy of each group, words of a semaphore on each group's sender alone and on its destinations alone, and
    on each site buffers no other site has of the site's first buffer's page, of twice its tiles a page and of another
    tile size."""
    p = _landings(load_program(EXAMPLES / example))
    assert _edits_agree(p, (Compute, McastSend, McastSetValid, SemIncMcast), _quiet_edits) > 10
    for ep in p.programs:
        if ep.engine is not Engine.COMPUTE and any(isinstance(op, (McastSend, McastSetValid, SemIncMcast))
                                                   for _path, op in _leaves(ep.ops)):
            q = attrs.evolve(p, programs=tuple(attrs.evolve(x, engine=Engine.COMPUTE) if x is ep else x
                                               for x in p.programs))
            assert _found(q) == _generic_only(q), ep.key


def _landings(p: Program) -> Program:
    """``p`` with groups, semaphore words and buffers a multicast edited to name them breaks one rule each with (a
    loopback group, a word missing on the sender or on the destinations, a landing cb index no destination has, a
    page of another size); the memory map dropped (it would have to map the new buffers)."""
    buffers, semaphores, groups = list(p.buffers), list(p.semaphores), list(p.groups)
    for site in dict.fromkeys(b.site for b in p.buffers):
        b = next(x for x in p.buffers if x.site == site)
        other = "fp32" if p.target.tile_bytes.get(b.dtype) != p.target.tile_bytes["fp32"] else "bf16"
        for name, changes in (("lonely", {}), ("wide", {"page_tiles": 2 * b.page_tiles}), ("other", {"dtype": other})):
            cb = max(x.cb for x in buffers) + 1  # on no other site
            buffers.append(attrs.evolve(b, id=len(buffers), name=f"{b.name}_{name}", cb=cb, alias_of=None, **changes))
    for g in p.groups:
        groups.append(attrs.evolve(g, id=len(groups), loopback=not g.loopback))
        for sites in ((g.sender,), g.destinations()):
            if sites:
                semaphores.append(Semaphore(len(semaphores), f"only{len(semaphores)}", sites))
    return attrs.evolve(p, buffers=tuple(buffers), semaphores=tuple(semaphores), groups=tuple(groups), memory=())


def test_tensors_too_large_for_32_bit_tile_ids_are_each_named() -> None:
    """Tile counts are found once per shape: two tensors of one shape past 2**32 - 1 tiles are each named, a third of
    another shape is not."""
    p = base()
    big = (1 << 22, 1 << 22)  # 2**17 x 2**17 tiles of 32 x 32: 2**34
    p = attrs.evolve(p, tensors=(*p.tensors, Tensor("A", big, "bf16", Role.INPUT), Tensor("B", big, "bf16", Role.INPUT),
                                 Tensor("C", (64, 64), "bf16", Role.INPUT)))
    rule = f"shape {list(big)} is too large for the model (at most {2**32 - 1} tiles: tile ids are 32-bit)"
    assert [(v.entity, v.rule) for v in validate(p)] == [("tensor A", rule), ("tensor B", rule)]


@pytest.mark.parametrize(("shape", "refused"), [
    ((1 << 16, (1 << 16) - 1), False),  # fewer than 2**32 elements: passes uncounted
    ((1 << 16, 1 << 16), False),  # 2**32 elements in 2**22 tiles: counted, passes
    (((2**32 - 1) * 32, 32), False),  # 2**32 - 1 tiles: the most
    ((1 << 37, 32), True),  # 2**32 tiles of 32 x 32
    ((1 << 37, 31), True),  # padded up to 2**32 tiles
    ((1 << 42,), True),  # one row of 2**37 tiles
])
def test_the_tile_rule_counts_tiles_only_past_32_bit_elements(shape: tuple[int, ...], refused: bool) -> None:
    """A tensor of at most 2**32 - 1 elements has at most that many tiles (each tile holds an element): the tile
    rule passes it without counting; past that its tiles are counted, refused past 2**32 - 1."""
    p = base()
    p = attrs.evolve(p, tensors=(*p.tensors, Tensor("A", shape, "bf16", Role.INPUT)))
    tiles = Tensor("A", shape, "bf16", Role.INPUT).tiles(p.target.tile)
    assert (tiles > 2**32 - 1) is refused
    rule = f"shape {list(shape)} is too large for the model (at most {2**32 - 1} tiles: tile ids are 32-bit)"
    assert (("tensor A", rule) in [(v.entity, v.rule) for v in validate(p)]) is refused


@pytest.mark.parametrize("named", [False, True])
def test_a_scratch_buffer_as_an_index_buffer_is_reported_before_the_ops_that_misuse_scratch(named: bool) -> None:
    """The scratch rules report a scratch buffer that an indirect address derives as its index buffer (the address
    names none, and a read of its index tensor fills the scratch buffer) before the ops that misuse a scratch buffer,
    whichever program comes first; an address that names its buffer derives none (its buffer is checked as named)."""
    p = load_program(EXAMPLES / "scratch_slices.json")
    reader = p.programs[0]
    assert p.buffers[0].scratch
    assert reader.engine is Engine.READER
    misuse = EngineProgram(B, Engine.WRITER, (Reserve(0, 1), Push(0, 1)))  # scratch buffer 0 as a ring, first
    fill = ReadTiles("X", Addr(0), 1, 0)  # X's tiles into scratch buffer 0: X is an index tensor there
    gather = ReadTiles("X", Addr(0, (), Dynamic("X", 0, 2, buf=0 if named else None)), 1, 0)
    q = attrs.evolve(p, programs=(misuse, attrs.evolve(reader, ops=(*reader.ops, fill, gather)), *p.programs[1:]))
    found = [v.rule for v in validate(q) if "scratch" in v.rule]
    index = "a scratch buffer is no index buffer: an indirect address reads its index from a waited page"
    assert (found[0] == index) is not named
    assert index not in found[1:]
    assert found[1 - named].startswith("names scratch buffer 0 (src): a scratch buffer is not a circular buffer")


#: Edits of a source location: paths past the ops, into a leaf, nested; lines and columns at and past 32 bits; control
#: characters in its file or text; a call site (itself good or bad).
_SOURCE_EDITS: list[tuple[str, object]] = [
    *[("path", x) for x in ((), (0,), (-1,), (99,), (0, 0), (1, 0), (0, 0, 0))],
    *[("line", n) for n in (1, 2**32 - 1, 2**32)], *[("column", n) for n in (0, 2**32 - 1, 2**32)],
    *[("file", t) for t in ("a.cpp", "a\nb.cpp", "é.cpp", "\x7f")], *[("text", t) for t in ("", "x\ty", "x\u2028y")],
    *[("called_at", c) for c in (SourceLoc("k.cpp", 3), SourceLoc("k\n.cpp", 3), SourceLoc("k.cpp", 2**32),
                                 SourceLoc("k.cpp", 3, 2**32), SourceLoc("k.cpp", 3, 1, "x\ty"))]]


@pytest.mark.parametrize("example", ["vendor/sort_exchange_wait_min.json", "vendor/softmax_w_scale_mask.json",
                                     "vendor/dispatch_mailbox.json"])
def test_every_source_location_edit_is_found_as_the_generic_rules_find_it(example: str) -> None:
    """``_check_sources`` passes over a location that plainly passes its rules: each of the example's locations with
    each field edited to a boundary (and each one's path made another's) is reported, in order, as the generic rules
    (``_source_rules``) alone report it."""
    p = load_program(EXAMPLES / example)
    n = 0
    for ep in p.programs:
        for i, (path, loc) in enumerate(ep.sources):
            edits = [(name, value) for name, value in _SOURCE_EDITS if name != "path"]
            for name, value in [*edits, *[("path", x) for x in (*(q for q, _ in ep.sources[:2]),
                                                                *(v for k, v in _SOURCE_EDITS if k == "path"))]]:
                entry = (value, loc) if name == "path" else (path, attrs.evolve(loc, **{name: value}))
                sources = (*ep.sources[:i], entry, *ep.sources[i + 1:])
                q = attrs.evolve(p, programs=tuple(attrs.evolve(x, sources=sources) if x is ep else x
                                                   for x in p.programs))
                assert _found(q) == _generic_only(q), (ep.key, i, name, value)
                n += 1
    assert n > 100



def test_a_remote_read_in_a_program_of_sparse_buffer_ids_is_refused_by_the_id_rule() -> None:
    """``Program.remote_buffer`` answers a buffer id, which is a position only when ids are dense: a remote read whose
    owner's id is past the buffers (buffer 0 renumbered 4) crashed ``validate`` with an IndexError instead of the
    dense-id finding (found by tests/test_load_agreement.py's random edits)."""
    p = load_program(EXAMPLES / "all_to_all_read.json")
    sparse = attrs.evolve(p, buffers=(attrs.evolve(p.buffers[0], id=4), *p.buffers[1:]))
    assert [(v.entity, v.rule) for v in validate(sparse)][:1] == [
        ("buffer 4", "ids are dense: expected id 0 at position 0")]
