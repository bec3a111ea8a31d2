"""Defects a fresh user found on main, each as its small input with the right expected value.

1. A second engine claiming a circular buffer's end (``cb-single-consumer`` / ``cb-single-producer``) is reported
   by the interpreter at whichever engine reaches the buffer second; the checker's candidate named the other one, so
   the refutation was never replayed and the program failed to prove where ``simulate`` found the violation.
2. A composed program's memory findings, decided on its slices (canonical programs whose buffers are named by number),
   printed ``b96 (b96)`` and the slice's own buffer ids; they name the program's buffers and ids.
3. ``validate`` accepted a data-movement op (a NoC transaction, a data-movement RISC's own stores) on the compute
   engine and a compute op on a data-movement engine; each op class now says which engines issue it.
4. ``compile --sections a/b/DIR`` made the missing ``a/b``; every command's output into a missing directory is one
   line of bad input (exit 2), nothing written: an output is created, never the directory it goes into.
5. ``upgrade`` 3 -> 2 -> 3 changed a template tensor's role, the order of its tensors and a semaphore's section: the
   templated form compose writes is now the one ``templated_of`` derives from its expansion.
6. The random-program generators never drew a ``RemoteRead``; they draw correct and broken ones now."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from builders import CA, WA, A, B, buf, ep, prog, sem
from hypothesis import HealthCheck, Phase, assume, find, given, settings

from verispatial.certify.report import Verdict
from verispatial.cli import main as cli_main
from verispatial.driver.run import certify
from verispatial.ir import (
    AcquireAcc,
    Addr,
    AtomicBarrier,
    BufferAt,
    Compute,
    CopyTiles,
    Engine,
    FillTiles,
    Flush,
    Group,
    If,
    InlineWrite,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    Operand,
    PackAcc,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    RemoteRead,
    Reserve,
    Role,
    ScratchAccess,
    Semaphore,
    SemInc,
    SemIncMcast,
    SemRmw,
    SemRole,
    SemSet,
    SemWait,
    Tensor,
    Term,
    TripCount,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir import rules as R
from verispatial.ir.graph import ModelGraph
from verispatial.ir.obligation import BufferRef
from verispatial.ir.ops import OP_TAGS
from verispatial.ir.program import Shard, walk
from verispatial.ir.serialize import dumps
from verispatial.ir.target import WORMHOLE
from verispatial.ir.templated import TemplatedProgram, templated_of
from verispatial.ir.validate import ISSUED_BY, validate, validate_templated
from verispatial.passes import Pipeline
from verispatial.passes.compile import compile_model, compose_step
from verispatial.passes.pipeline import capped_passes
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate
from verispatial.strategies import blueprints, correct_programs, model_graphs

# ---------------------------------------------------------------- 1. a second consumer replayed whichever comes first

#: The writer's uses of b0 that make it b0's consumer, each followed by a page of b2 that tells compute to go on:
#: compute (whose key sorts first) reaches b0 only after the writer claimed it.
_WRITER_CONSUMES: dict[str, tuple[Op, ...]] = {
    "remote_read": (Reserve(1, 1), RemoteRead(0, A, 1, 1), ReadBarrier(), Push(1, 1)),
    "write_tiles": (Wait(0, 1), WriteTiles(0, "Y", Addr(0, ()), 1), WriteBarrier(), Pop(0, 1)),
    "pop": (Wait(0, 1), Pop(0, 1)),
}

#: Compute's uses of b0 that make it a second consumer.
_COMPUTE_CONSUMES: dict[str, tuple[Op, ...]] = {
    "wait_pop": (Wait(0, 1), Pop(0, 1)),
    "compute": (AcquireAcc(1, "bf16"), Compute("add", 1, (Operand(0, 1),)), ReleaseAcc()),
}


def _two_consumers(writer: str, compute: str) -> Program:
    """b0 filled with two pages by the reader; the writer consumes it (``writer``), then hands compute a page of b2, after
    which compute consumes b0 too (``compute``). b1 takes a remote read's pages; compute drains it when it is used."""
    w_ops = _WRITER_CONSUMES[writer]
    reads_b1 = writer == "remote_read"
    c_ops: list[Op] = [Wait(2, 1), Pop(2, 1)]
    if reads_b1:
        c_ops += [Wait(1, 1), Pop(1, 1)]
    c_ops += _COMPUTE_CONSUMES[compute]
    return prog(
        ep(A, Engine.READER, Reserve(0, 2), FillTiles(0, 2, drain=True), Push(0, 2)),
        ep(A, Engine.WRITER, *w_ops, Reserve(2, 1), FillTiles(2, 1, drain=True), Push(2, 1)),
        ep(A, Engine.COMPUTE, *c_ops),
        buffers=(buf(0), buf(1), buf(2)),
        tensors=(Tensor("Y", (32, 32), "bf16", Role.OUTPUT),),
    )


@pytest.mark.parametrize("compute", sorted(_COMPUTE_CONSUMES))
@pytest.mark.parametrize("writer", sorted(_WRITER_CONSUMES))
def test_a_second_consumer_is_refuted_and_replayed_whichever_engine_comes_first(writer: str, compute: str) -> None:
    p = _two_consumers(writer, compute)
    seen = [v for v in simulate(p).violations if v.rule == R.CB_SINGLE_CONSUMER]
    assert seen
    assert seen[0].position.engine == CA
    assert seen[0].subject == BufferRef(0)
    got = [r for r in certify(p).results if r.name.startswith(f"{R.CB_SINGLE_CONSUMER}:")]
    assert [r.verdict for r in got] == [Verdict.REFUTED]
    cex = got[0].counterexample
    assert cex is not None
    assert cex["violation"]["rule"] == R.CB_SINGLE_CONSUMER
    assert cex["violation"]["position"]["engine"] in (CA, WA)


def test_a_second_producer_is_refuted_and_replayed_whichever_engine_comes_first() -> None:
    """The writer produces b0 first, then tells compute (through b2) to pack into b0 as well."""
    p = prog(
        ep(A, Engine.WRITER, Reserve(0, 1), FillTiles(0, 1, drain=True), Push(0, 1), Reserve(2, 1),
           FillTiles(2, 1, drain=True), Push(2, 1)),
        ep(A, Engine.COMPUTE, Wait(2, 1), Pop(2, 1), Reserve(0, 1), Push(0, 1)),
        ep(A, Engine.READER, Wait(0, 2), Pop(0, 2)),
        buffers=(buf(0), buf(1), buf(2)),
    )
    seen = [v for v in simulate(p).violations if v.rule == R.CB_SINGLE_PRODUCER]
    assert seen
    assert seen[0].position.engine == CA
    assert seen[0].subject == BufferRef(0)
    got = [r for r in certify(p).results if r.name.startswith(f"{R.CB_SINGLE_PRODUCER}:")]
    assert [r.verdict for r in got] == [Verdict.REFUTED]


# ---------------------------------------------------------------- 2. a composed program's memory findings name buffers


def _tiny_templated() -> TemplatedProgram:
    from test_templated import _step, _tiny

    return _step(_tiny(), Pipeline(capped_passes(2, 1, 2)))[2]


def _overlapping(tp: TemplatedProgram) -> TemplatedProgram:
    """``tp`` with template 1's second buffer moved onto its first one's bytes."""
    t = tp.templates[1]
    mem = list(t.memory)
    mem[1] = attrs.evolve(mem[1], offset=mem[0].offset)
    bad = attrs.evolve(t, memory=tuple(mem))
    return attrs.evolve(tp, templates=tuple(bad if i == 1 else x for i, x in enumerate(tp.templates)))


@pytest.fixture(scope="module")
def overlapping() -> TemplatedProgram:
    return _overlapping(_tiny_templated())


@pytest.mark.parametrize("form", ["templated", "expanded"])
def test_a_composed_programs_memory_findings_name_each_buffer(overlapping: TemplatedProgram, form: str) -> None:
    p = overlapping if form == "templated" else overlapping.expand()
    names = {b.id: b.name for b in overlapping.expand().buffers}
    refuted = [r for r in certify(p).results if r.verdict == Verdict.REFUTED and r.family == "memory"]
    assert len(refuted) == 14  # 7 instances of the template, each by its slice and by the composed sweep
    for r in refuted:
        cex = r.counterexample
        assert cex is not None
        ids = cex["buffers"]
        assert [names[i].split(".", 1)[1] for i in ids] == ["c_0", "c_1"]  # the ids are the program's
        for i in ids:
            assert f"b{i} ({names[i]})" in r.reason
            assert f"b{i} ({names[i]})" in cex["summary"]


def test_a_templated_program_names_a_buffer_by_its_instance(overlapping: TemplatedProgram) -> None:
    expanded = overlapping.expand()
    assert [overlapping.buffer_name(b.id) for b in expanded.buffers] == [b.name for b in expanded.buffers]


# ---------------------------------------------------------------- 4. an output into a missing directory is bad input

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
_PROGRAM = str(EXAMPLES / "all_to_all_read.json")
_MODEL = str(EXAMPLES / "models" / "mlp_block.json")

#: Every command's option that writes a file or a directory, with the rest of its command line: OUT stands for the
#: output path. One rule for all: what is written is created, the directory it goes into is not.
_OUTPUTS: dict[str, list[str]] = {
    "compile --sections": ["compile", _MODEL, "--target", "wormhole", "--no-certify", "--sections", "OUT"],
    "compile -o": ["compile", _MODEL, "--target", "wormhole", "--no-certify", "-o", "OUT"],
    "compose -o": ["compose", _PROGRAM, _PROGRAM, "-o", "OUT"],
    "certify --sarif": ["certify", _PROGRAM, "--sarif", "OUT"],
    "certify --junit": ["certify", _PROGRAM, "--junit", "OUT"],
    "certify --write-certificate": ["certify", _PROGRAM, "--write-certificate", "OUT"],
    "certify --smt2": ["certify", _PROGRAM, "--smt2", "OUT"],
    "upgrade -o": ["upgrade", _PROGRAM, "-o", "OUT"],
    "explain -o": ["explain", str(EXAMPLES / "broken" / "p_flag_source_set_by_compute.json"), "-o", "OUT"],
    "export -o": ["export", "--promela", _PROGRAM, "-o", "OUT"],
}


@pytest.mark.parametrize("option", sorted(_OUTPUTS))
def test_an_output_into_a_missing_directory_is_one_line_of_bad_input(option: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "missing" / "deeper" / "out"
    argv = [str(out) if a == "OUT" else a for a in _OUTPUTS[option]]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"verispatial: error: {out}: cannot write: directory {str(out.parent)!r} does not exist\n"
    assert list(tmp_path.iterdir()) == []  # nothing written, no directory made


# ---------------------------------------------------------------- 5. upgrade 3 -> 2 -> 3 is the identity


def test_upgrade_3_to_2_to_3_gives_back_the_very_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The tiny decode step: its template tensors' roles (a section's own: an activation it writes is its output),
    their order and its semaphores' sections come back as they were."""
    tp = _tiny_templated()
    v3, v2, back = tmp_path / "v3.json", tmp_path / "v2.json", tmp_path / "back.json"
    v3.write_text(dumps(tp))
    assert cli_main(["upgrade", str(v3), "-o", str(v2), "--expand"]) == 0
    assert cli_main(["upgrade", str(v2), "-o", str(back)]) == 0
    capsys.readouterr()
    assert back.read_text() == v3.read_text()
    assert templated_of(tp.expand()) == tp


@settings(max_examples=max(20, settings().max_examples // 50), suppress_health_check=[HealthCheck.too_slow],
          deadline=None)
@given(graph=model_graphs(max_ops=3))
def test_a_composed_programs_templated_form_is_the_one_its_expansion_gives(graph: ModelGraph) -> None:
    secs = compile_model(graph, WORMHOLE, pipeline=Pipeline(capped_passes(2, 2, 4)), check=False)
    doc = compose_step(graph, secs, WORMHOLE, check=False).document
    assume(isinstance(doc, TemplatedProgram))
    assert isinstance(doc, TemplatedProgram)
    assert templated_of(doc.expand()) == doc


# ---------------------------------------------------------------- 3. each op on the engines that can issue it

_DM_ONLY: list[Op] = [
    FillTiles(0, 1, drain=True), ReadTiles("X", Addr(0, ()), 1, 0), WriteTiles(0, "Y", Addr(0, ()), 1), RemoteRead(0, A, 1, 1),
    McastSend(0, 1, 0, 1), McastSetValid(0, 0, 1), SemInc(0, A, 1), SemIncMcast(0, 0, 1), SemRmw(0, 1),
    InlineWrite(0, A, 1),
    ReadBarrier(), WriteBarrier(), Flush(), CopyTiles(0, 1, 1), ScratchAccess(0),
]
_COMPUTE_ONLY: list[Op] = [AcquireAcc(1, "bf16"), Compute("copy", 1), PackAcc(0, 1), ReleaseAcc()]
_ANY_ENGINE: list[Op] = [Reserve(0, 1), Push(0, 1), Wait(0, 1), Pop(0, 1), SemSet(0, 0), SemWait(0, WaitCond.GE, 0)]


def _on(engine: Engine, op: Op) -> Program:
    """``op`` alone on ``engine`` of site A, with every entity it may name (buffers 0 and 1, a semaphore, a group
    from A to B, tensors X and Y)."""
    return prog(ep(A, engine, op), buffers=(buf(0), buf(1)), sems=(sem(0, A, B),),
                groups=(Group(0, A, (1, 0, 1, 0)),),
                tensors=(Tensor("X", (32, 32), "bf16", Role.INPUT), Tensor("Y", (32, 32), "bf16", Role.OUTPUT)))


def _engine_rule(p: Program) -> list[str]:
    return [str(v) for v in validate(p) if "engine" in v.rule and "cannot issue" in v.rule]


@pytest.mark.parametrize("op", _DM_ONLY, ids=lambda op: OP_TAGS[type(op)])
def test_a_data_movement_op_on_the_compute_engine_is_refused(op: Op) -> None:
    tag = OP_TAGS[type(op)]
    assert _engine_rule(_on(Engine.COMPUTE, op)) == [
        f"program (0,0).compute ops[0] {type(op).__name__}: {tag} is a data-movement op (a NoC transaction or a "
        "data-movement RISC's own stores): the compute engine cannot issue it"]
    assert _engine_rule(_on(Engine.READER, op)) == []
    assert _engine_rule(_on(Engine.WRITER, op)) == []


@pytest.mark.parametrize("op", _COMPUTE_ONLY, ids=lambda op: OP_TAGS[type(op)])
def test_a_compute_op_on_a_data_movement_engine_is_refused(op: Op) -> None:
    tag = OP_TAGS[type(op)]
    for engine in (Engine.READER, Engine.WRITER):
        assert _engine_rule(_on(engine, op)) == [
            f"program (0,0).{engine.value} ops[0] {type(op).__name__}: {tag} is a compute op (the accumulator, DST, "
            f"belongs to the compute engine's TRISCs): a data-movement engine ({engine.value}) cannot issue it"]
    assert _engine_rule(_on(Engine.COMPUTE, op)) == []


@pytest.mark.parametrize("op", _ANY_ENGINE, ids=lambda op: OP_TAGS[type(op)])
def test_circular_buffer_and_local_word_ops_run_on_every_engine(op: Op) -> None:
    for engine in Engine:
        assert _engine_rule(_on(engine, op)) == []


def test_the_compose_rendezvous_passes_on_the_compute_engine_and_nothing_else_does() -> None:
    """The compose pass's rendezvous has every engine increment the gather word and wait for it (an exception
    docs/semantics.md states); an increment of any other word stays a data-movement op."""
    rendezvous = prog(ep(A, Engine.COMPUTE, SemInc(0, A, 1), AtomicBarrier()),
                      sems=(Semaphore(0, "gather", (A,), 0, SemRole.RENDEZVOUS_GATHER),))
    assert _engine_rule(rendezvous) == []
    counter = attrs.evolve(rendezvous, semaphores=(Semaphore(0, "count", (A,), 0, SemRole.COUNTER),))
    assert _engine_rule(counter) == [
        "program (0,0).compute ops[0] SemInc: sem_inc is a data-movement op (a NoC transaction or a data-movement "
        "RISC's own stores): the compute engine cannot issue it"]


def test_every_op_class_says_which_engines_issue_it() -> None:
    leaves = {type(op) for op in _DM_ONLY + _COMPUTE_ONLY + _ANY_ENGINE} | {AtomicBarrier}
    assert leaves | {Loop, If} == set(OP_TAGS)
    assert set(ISSUED_BY) == set(OP_TAGS)


# ---------------------------------------------------------------- 6. the generators draw remote reads


def _reads_remotely(p: Program) -> bool:
    return any(isinstance(op, RemoteRead) for x in p.programs for op in walk(x.ops))


#: The first program drawn that fits, unshrunk (shrinking would cost ten times the search).
_FIND = settings(max_examples=3000, database=None, derandomize=True, phases=(Phase.generate,),
                 suppress_health_check=list(HealthCheck), deadline=None)


def test_correct_programs_draw_a_remote_read_the_checker_proves() -> None:
    p = find(correct_programs(), _reads_remotely, settings=_FIND)
    assert certify(p).exit_code == 0


def test_broken_blueprints_draw_a_remote_read_of_unpublished_pages() -> None:
    """The read issued before the wait for the owner's publication: refuted, replayed by the interpreter."""

    def early(p: Program) -> bool:
        for x in p.programs:
            ops = list(walk(x.ops))
            reads = [i for i, op in enumerate(ops) if isinstance(op, RemoteRead)]
            waits = [i for i, op in enumerate(ops) if isinstance(op, SemWait)]
            if reads and waits and reads[0] < waits[0] and isinstance(ops[reads[0] - 1], Reserve):
                return True
        return False

    # every trip and every loop count at least 1: a read in a loop that runs no iteration never runs, and is proved
    # (vacuously)
    def runs(p: Program) -> bool:
        return (all(t.max >= 1 for t in p.trips)
                and all(op.count != 0 for x in p.programs for op in walk(x.ops) if isinstance(op, Loop)))

    p = find(blueprints(), lambda p: _reads_remotely(p) and early(p) and runs(p), settings=_FIND)
    got = [r for r in certify(p).results if r.name.startswith(f"{R.REMOTE_READ_UNPUBLISHED}:")]
    assert Verdict.REFUTED in {r.verdict for r in got}


def test_a_templated_program_with_a_sharded_buffer_is_refused(overlapping: TemplatedProgram) -> None:
    """Found on the way (item 5): the expansion and the slices of a templated program carry no shard, so a sharded
    buffer in a template would have had its rules (``cb-shard-overrun``, a push reading the tensor) unchecked. compose
    never writes one (``section-sharded``); ``validate_templated`` refuses one written by hand."""
    t = overlapping.templates[2]
    sharded = attrs.evolve(t.buffers[0], shard=Shard("x", 0, 0, 0, 0))
    bad = attrs.evolve(overlapping, templates=(*overlapping.templates[:2], attrs.evolve(
        t, buffers=(sharded, *t.buffers[1:])), *overlapping.templates[3:]))
    got = [str(v) for v in validate_templated(bad) if "shard of tensor" in v.rule]
    assert got == [f"template 2 ({t.name}) buffer 0 ({t.buffers[0].name}): sits on a shard of tensor 'x': a templated "
                   "program's sections are compose's, which moves no sharded buffer (section-sharded); state the "
                   "program in full (version 2)"]


def test_a_sharing_waiter_reads_remotely_at_its_own_read_pointer() -> None:
    """Found with item 1: read pointers are private to each RISC (``circular_buffer_init.h``), so an engine that waits
    on its copy of cb 0 without popping it (a sharing waiter) reads the owner's pages at the ring's start whatever
    the copy's consumer popped. The interpreter took the consumer's pops (slot 1 here, never published: a false
    ``remote-read-unpublished``) where the checker, rightly, took the reader's own (slot 0, published): the checker
    proved what the oracle broke."""
    p = prog(
        ep(B, Engine.READER, Reserve(2, 1), FillTiles(2, 1, drain=True), Push(2, 1), SemInc(0, A, 1), AtomicBarrier()),
        ep(A, Engine.READER, Reserve(0, 2), Push(0, 2)),
        ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1), Reserve(3, 1), Push(3, 1), Wait(1, 1), Pop(1, 1)),
        ep(A, Engine.WRITER, Wait(0, 1), Wait(3, 1), Pop(3, 1), SemWait(0, WaitCond.EQ, 1), SemSet(0, 0),
           Reserve(1, 1), RemoteRead(0, B, 1, 1), ReadBarrier(), Push(1, 1)),
        buffers=(buf(0, A, cap=2, cb=0), buf(1, A, cap=1, cb=1), buf(2, B, cap=2, cb=0), buf(3, A, cap=1, cb=2)),
        sems=(sem(0, A),))
    p = attrs.evolve(p, memory=(BufferAt(0, 103712, 4096), BufferAt(1, 107808, 2048), BufferAt(2, 103712, 4096),
                                BufferAt(3, 109856, 2048)))
    assert list(explore(p).violations) == []
    assert certify(p).exit_code == 0


def test_a_templated_program_naming_a_trip_in_an_address_or_a_size_is_refused() -> None:
    """A template's address term that names no enclosing loop (a trip's: a block whose place a front end's --range
    moves) or a tensor sized by a trip (``Tensor.trip_rows``): an op cut out of its template cannot tell a trip's term
    from a loop's, so ``validate_templated`` refuses both by name (the TT-Lang line's rule, untested until now)."""
    tp = _tiny_templated()
    assert validate_templated(tp) == []
    why = "an address names a trip, or a tensor is sized by one: not supported in a templated program"
    j = next(i for i, t in enumerate(tp.templates) if t.tensors)
    t = tp.templates[j]
    sized = attrs.evolve(t, tensors=(attrs.evolve(t.tensors[0], trip_rows=TripCount("t", 1)), *t.tensors[1:]))
    bad = attrs.evolve(tp, templates=tuple(sized if i == j else x for i, x in enumerate(tp.templates)))
    assert f"template {j} ({t.name}): {why}" in [str(v) for v in validate_templated(bad)]

    def with_trip_term(ops: tuple[Op, ...]) -> tuple[tuple[Op, ...], bool]:
        out: list[Op] = []
        done = False
        for op in ops:
            if not done and isinstance(op, ReadTiles):
                op, done = attrs.evolve(op, addr=attrs.evolve(op.addr, terms=(*op.addr.terms, Term("t", 1)))), True
            elif not done and isinstance(op, Loop):
                body, done = with_trip_term(op.body)
                op = attrs.evolve(op, body=body)
            out.append(op)
        return tuple(out), done

    k, e, ops = next((k, e, r[0]) for k, x in enumerate(tp.templates) for e, ep in enumerate(x.programs)
                     if (r := with_trip_term(ep.ops))[1])
    x = tp.templates[k]
    moved = attrs.evolve(x, programs=tuple(attrs.evolve(ep, ops=ops) if i == e else ep
                                           for i, ep in enumerate(x.programs)))
    bad = attrs.evolve(tp, templates=tuple(moved if i == k else y for i, y in enumerate(tp.templates)))
    assert f"template {k} ({x.name}): {why}" in [str(v) for v in validate_templated(bad)]
