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

from verispatial.certify.checker import certify
from verispatial.certify.report import Verdict
from verispatial.ir import Engine, Loop, Op, Pop, ReadTiles, Wait
from verispatial.ir.program import Program
from verispatial.ir.serialize import load_program
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
    assert p.index_buffers() == {(p.programs[0].site, "position"): 0}
    assert explore(p).verdict == "ok"
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


@pytest.mark.xfail(strict=True, reason="model limit (docs/checker.md, Known limits): with the index read dropped "
                   "altogether the index tensor fills no buffer of the site, so the address has no index buffer the "
                   "model knows and the garbage index goes unseen; an IR field naming the index buffer would fix it")
def test_an_index_that_no_read_loads_is_not_proved() -> None:
    p = load_program(SECTION)
    reader = _ops(p, Engine.READER)
    dropped = _engine(p, Engine.READER, (reader[0], *reader[2:]))
    assert dropped.index_buffers() == {}  # holds: the derivation finds no index buffer
    assert certify(dropped).exit_code != 0


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
