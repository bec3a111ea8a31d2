"""The index of an indirect address is read from its index buffer's front page (tt-metal gather, scatter and KV-cache
writers: ``cb_wait_front`` of the index CB, then ``get_read_ptr``; ``Program.index_buffers``). So the page must be
filled (the index buffer is a data buffer: ``cb-push-unfilled``) and inside the using engine's waited window when
the address is used (``cb-read-unwaited``). Found by mutation testing of the corpus's KV-cache updates: dropping the
index read, or using the address before the index page's wait or after its pop, proved; the last two (and an
index page pushed before its read) are refuted now."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.errors import ComposeRefused
from verispatial.ir import Engine, If, Loop, Op, Pop, ReadTiles, Site, Wait, WriteTiles
from verispatial.ir.program import Program, walk
from verispatial.ir.serialize import load_program
from verispatial.ir.validate import validate
from verispatial.passes import compose
from verispatial.petri.explore import explore

SECTION = (Path(__file__).resolve().parent.parent / "proofs" / "models" / "llama3_2_1b_prefill.blackhole"
           / "v_cache_update.program.json")


def _engine(p: Program, engine: Engine, ops: tuple[Op, ...]) -> Program:
    return attrs.evolve(p, programs=tuple(attrs.evolve(ep, ops=ops) if ep.engine == engine else ep
                                          for ep in p.programs))


def _ops(p: Program, engine: Engine) -> tuple[Op, ...]:
    return next(ep.ops for ep in p.programs if ep.engine == engine)


def test_the_compiled_cache_update_names_its_index_buffer_and_proves() -> None:
    p = load_program(SECTION)
    writes = [op for op in walk(_ops(p, Engine.WRITER)) if isinstance(op, WriteTiles)]
    assert writes
    assert all(w.addr.dynamic is not None and w.addr.dynamic.buf == 0 for w in writes)
    assert p.index_buffers() == {}  # nothing to derive: every address names its buffer
    assert explore(p).verdict == "ok"
    assert certify(p).exit_code == 0


def _index_buf(p: Program, buf: int | None) -> Program:
    """``p`` with every indirect address naming ``buf`` as its index buffer (None: left to derivation)."""
    def fix(op: Op) -> Op:
        if isinstance(op, (Loop, If)):
            return attrs.evolve(op, body=tuple(fix(o) for o in op.body))
        if isinstance(op, (ReadTiles, WriteTiles)) and op.addr.dynamic is not None:
            return attrs.evolve(op, addr=attrs.evolve(op.addr, dynamic=attrs.evolve(op.addr.dynamic, buf=buf)))
        return op
    return attrs.evolve(p, programs=tuple(attrs.evolve(ep, ops=tuple(fix(o) for o in ep.ops)) for ep in p.programs))


def _unnamed(p: Program) -> Program:
    """``p`` with every indirect address's ``buf`` cleared (the index buffer left to derivation)."""
    return _index_buf(p, None)


def test_an_unnamed_index_buffer_is_derived_from_the_index_read() -> None:
    p = _unnamed(load_program(SECTION))
    assert p.index_buffers() == {(p.programs[0].site, 0, "position"): 0}
    assert p.with_index_buffers() == load_program(SECTION)
    assert certify(p).exit_code == 0

def _mutants() -> dict[str, tuple[Program, str, str]]:
    p = load_program(SECTION)
    reader, writer = _ops(p, Engine.READER), _ops(p, Engine.WRITER)
    assert isinstance(reader[1], ReadTiles)
    assert isinstance(writer[0], Wait)
    assert isinstance(writer[1], Loop)
    assert isinstance(writer[2], Pop)
    return {
        # The writes' index before the index page was waited for: a page the writer does not hold.
        "wait after the writes": (_engine(p, Engine.WRITER, (writer[1], writer[0], writer[2])), "cb-read-unwaited",
                                  "(0,0).writer"),
        # The index page freed before the writes that read it.
        "pop before the writes": (_engine(p, Engine.WRITER, (writer[0], writer[2], writer[1])), "cb-read-unwaited",
                                  "(0,0).writer"),
        # The index page published before the index was read into it: the writer may take the unfilled page.
        "push before the index read": (_engine(p, Engine.READER, (reader[0], reader[3], reader[1], reader[2],
                                                                  *reader[4:])), "cb-push-unfilled", "(0,0).reader"),
    }


def test_an_index_that_no_read_loads_is_refuted_when_the_address_names_its_buffer() -> None:
    """The compiler names the index buffer (``Dynamic.buf``): with the index read dropped, the reader still pushes
    the index page, unfilled, and the writer's addresses read a garbage index (``cb-push-unfilled``). Found by
    mutation testing of the corpus (a strict xfail while the buffer was only derived)."""
    p = load_program(SECTION)
    reader = _ops(p, Engine.READER)
    assert isinstance(reader[1], ReadTiles)
    dropped = _engine(p, Engine.READER, (reader[0], *reader[2:]))
    assert validate(dropped) == []
    assert "cb-push-unfilled" in explore(dropped).rules()
    refuted = [r for r in certify(dropped).results if r.verdict == Verdict.REFUTED]
    assert any(r.name.startswith("cb-push-unfilled:(0,0).reader:") for r in refuted), [r.name for r in refuted]


def test_an_unnamed_index_that_no_read_loads_is_a_host_set_value() -> None:
    """Model limit (docs/checker.md, "Known limits"): an address naming no index buffer whose index tensor no read
    of its site loads takes its value as one the host sets in ``[lo, hi]`` (a runtime argument); nothing checks it."""
    p = _unnamed(load_program(SECTION))
    reader = _ops(p, Engine.READER)
    dropped = _engine(p, Engine.READER, (reader[0], *reader[2:]))
    assert dropped.index_buffers() == {}
    assert certify(dropped).exit_code == 0


@pytest.mark.parametrize("name", sorted(_mutants()))
def test_an_index_used_outside_its_page_or_never_read_is_refuted(name: str) -> None:
    p, rule, engine = _mutants()[name]
    assert rule in explore(p).rules()
    report = certify(p)
    bad = [r for r in report.results if r.verdict != Verdict.PROVED]
    assert bad, "the mutant must not prove"
    refuted = [r for r in bad if r.verdict == Verdict.REFUTED and r.name.startswith(f"{rule}:{engine}:")]
    assert refuted, [(r.name, r.verdict) for r in bad]
    cex = refuted[0].counterexample
    assert cex is not None
    assert cex["violation"]["rule"] == rule


@pytest.mark.parametrize("named", [True, False], ids=["named", "derived"])
@pytest.mark.parametrize("name", ["wait after the writes", "pop before the writes"])
def test_a_composed_programs_slices_keep_the_index_rule(name: str, named: bool) -> None:
    """Composed after another cache update on the same site, the broken section is checked in its own slice, whose
    tensors are renamed: the index buffer must survive the cut (``compositional.cut`` names it first). Both sections
    read ``position`` into a buffer of (0,0), one per phase: the derivation is per phase. The slice's
    ``cb-read-unwaited`` was missed before (the composed program still proved that rule)."""
    bad, rule, engine = _mutants()[name]
    other = load_program(SECTION.parent / "k_cache_update.program.json")
    if not named:
        bad, other = _unnamed(bad), _unnamed(other)
    p, _ = compose([other, bad], target=bad.target)
    assert validate(p) == []
    assert len(p.index_buffers()) == (0 if named else 2)
    refuted = [r for r in certify(p).results if r.verdict == Verdict.REFUTED]
    hit = [r for r in refuted if r.name.startswith(f"slice1/{rule}:{engine}:")]
    assert hit, [r.name for r in refuted]
    assert hit[0].counterexample is not None
    assert hit[0].counterexample["violation"]["rule"] == rule


def test_validate_refuses_an_index_buffer_it_cannot_use() -> None:
    p = load_program(SECTION)
    # Not a buffer.
    assert any("index buffer 9 is not a buffer" in str(v) for v in validate(_index_buf(p, 9)))
    # Another site's buffer.
    far = attrs.evolve(p, buffers=(p.buffers[0], attrs.evolve(p.buffers[1], site=Site(1, 0))))
    assert any("index buffer 1 lives on (1,0)" in str(v) for v in validate(_index_buf(far, 1)))
    # Unnamed, while the index tensor is read into two buffers of the site: ambiguous.
    reader = _ops(p, Engine.READER)
    read = reader[1]
    assert isinstance(read, ReadTiles)
    twice = _engine(_unnamed(p), Engine.READER, (*reader[:2], ReadTiles("position", read.addr, 1, 1), *reader[2:]))
    msgs = [str(v) for v in validate(twice)]
    assert any("read into buffers [0, 1] of (0,0)" in m and "must name its index buffer" in m for m in msgs), msgs
    # Named, the same program is no longer ambiguous for the index rule.
    assert not any("index" in m for m in map(str, validate(_engine(p, Engine.READER, _ops(twice, Engine.READER)))))
    # One address named, the other not: the unnamed one is still ambiguous (it does not borrow the other's buffer;
    # a new user's review found it silently did).
    writer = _ops(_unnamed(twice), Engine.WRITER)
    loop = writer[1]
    assert isinstance(loop, Loop)
    named_first = _index_buf(_engine(twice, Engine.WRITER, (loop,)), 1).programs[1].ops[0]
    half = _engine(twice, Engine.WRITER, (writer[0], named_first, loop, writer[2]))
    msgs = [str(v) for v in validate(half)]
    assert [m.split(" WriteTiles")[0] for m in msgs if "must name its index buffer" in m] == [
        "program (0,0).writer ops[2].body[0].body[1]"], msgs  # the unnamed loop's write


def test_two_cache_updates_of_one_site_and_phase_each_read_their_own_index() -> None:
    """``compose --open``: the k and v cache updates run concurrently on (0,0), each reading ``position`` into its
    own buffer; each address names its own, so nothing is ambiguous and the program proves (a new user's review
    found it refused: one index buffer per (site, phase, tensor) was required)."""
    k = load_program(SECTION.parent / "k_cache_update.program.json")
    v = load_program(SECTION)
    p, _ = compose([k, v], target=v.target, barrier_after=[False], state=["k_cache", "v_cache"])
    assert len({x.section for x in p.buffers}) == 2
    assert p.phase_of_section() == [0, 0]
    assert validate(p) == []
    assert certify(p).exit_code == 0
    # Unnamed, the two reads of ``position`` on (0,0) in one phase are ambiguous: the program must say which.
    with pytest.raises(ComposeRefused, match="must name its index buffer"):
        compose([_unnamed(k), _unnamed(v)], target=v.target, barrier_after=[False], state=["k_cache", "v_cache"])


def test_validate_refuses_an_index_buffer_of_another_phase() -> None:
    p, _ = compose([load_program(SECTION.parent / "k_cache_update.program.json"), load_program(SECTION)],
                   target=load_program(SECTION).target)
    first = min(p.with_index_buffers().index_buffers().values() or _unnamed(p).index_buffers().values())
    # (the first section's index buffer, of phase 0)
    moved = attrs.evolve(p, programs=tuple(
        attrs.evolve(ep, ops=tuple(_index_buf(attrs.evolve(p, programs=(ep,)), first).programs[0].ops[t]
                                   if ep.section_of(t) == 1 else op for t, op in enumerate(ep.ops)))
        for ep in p.programs))
    msgs = [str(v) for v in validate(moved)]
    assert any(f"reads its index from buffer {first} of section 0 (phase 0) from phase 1" in m for m in msgs), msgs
