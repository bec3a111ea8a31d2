"""One root cause, one finding (issue 16, item 8, second half): the failures to prove a refuted finding explains are
grouped under it (``report/consequences.py``) and stay failed-to-prove; one that fails on its own is not grouped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import A, B, buf, ep, prog

from verispatial.certify.report import Report, Result, Verdict, settle
from verispatial.cli import main
from verispatial.driver.run import certify
from verispatial.ir import Addr, Engine, Pop, Program, Push, ReadBarrier, ReadTiles, Reserve, Role, Tensor, Wait, WriteBarrier, WriteTiles
from verispatial.ir import rules as R
from verispatial.ir.ops import Op
from verispatial.ir.serialize import dumps
from verispatial.report.consequences import group


def _over_reserved(*sites: int) -> Program:
    """On each of ``sites`` (0: A, 1: B) a reader reserving 8 pages of a 4-page buffer (``cb-capacity``: it never
    returns, a deadlock) and a writer waiting for them: the ring alignment's candidate (a push of 8 pages straddles
    the ring) is never replayed, because the reader never gets past the reserve."""
    programs = []
    bufs = []
    for k in sites:
        site = (A, B)[k]
        bufs.append(buf(k, site, cap=4))
        programs += [ep(site, Engine.READER, Reserve(k, 8), ReadTiles("X", Addr(8 * k, ()), 8, k), ReadBarrier(),
                        Push(k, 8)),
                     ep(site, Engine.WRITER, Wait(k, 8), WriteTiles(k, "Y", Addr(8 * k, ()), 8), WriteBarrier(),
                        Pop(k, 8))]
    tensors = (Tensor("X", (32, 512), "bf16", Role.INPUT), Tensor("Y", (32, 512), "bf16", Role.OUTPUT))
    return prog(*programs, buffers=tuple(bufs), tensors=tensors)


def test_a_deadlocks_later_obligation_is_its_consequence() -> None:
    p = _over_reserved(0)
    report = certify(p, cache=False)
    by = {r.name: r for r in report.results}
    straddle = by[f"{R.CB_STRADDLE}:b0"]
    assert straddle.verdict == Verdict.FAILED  # never proved, never refuted without its own replay
    assert straddle.unreplayed
    g = group(report, p)
    # The writer never writes Y either: its coverage, checked when a run ends, is never reached.
    assert g.of == {f"{R.CB_STRADDLE}:b0": f"{R.DEADLOCK}:(0,0).reader+1",
                    f"{R.OUTPUT_UNWRITTEN}:Y": f"{R.DEADLOCK}:(0,0).reader+1"}
    # The program has no memory map: that fails to prove on its own, whatever the deadlock, and is not grouped.
    assert g.others == (R.MEMORY_MAP,)
    assert g.counts() == {"findings": 3, "consequences": 2, "other_failed_to_prove": 1}
    assert report.exit_code == 1
    # Without the program only the recorded assumptions are read: the replay's consequence is not known then.
    assert group(report).of == {}


def test_two_independent_findings_keep_their_own_consequences() -> None:
    p = _over_reserved(0, 1)
    g = group(certify(p, cache=False), p)
    assert g.of[f"{R.CB_STRADDLE}:b0"] == f"{R.DEADLOCK}:(0,0).reader+1"
    assert g.of[f"{R.CB_STRADDLE}:b1"] == f"{R.DEADLOCK}:(1,0).reader+1"
    assert g.under(f"{R.DEADLOCK}:(1,0).reader+1") == [f"{R.CB_STRADDLE}:b1"]


def test_an_unreplayed_candidate_whose_op_ran_is_not_grouped() -> None:
    """Site B's engines finish (its buffer is big enough): a candidate there that did not replay failed on its own,
    even though site A deadlocks."""
    p = _over_reserved(0, 1)
    p = Program(p.name, p.target, tensors=p.tensors, programs=p.programs,
                buffers=(p.buffers[0], buf(1, B, cap=8)))
    report = certify(p, cache=False)
    assert {r.name for r in report.results if r.verdict == Verdict.REFUTED and r.family == R.DEADLOCK} == {
        f"{R.DEADLOCK}:(0,0).reader+1"}
    lone = Result("circular-buffer", f"{R.CB_WRITE_UNRESERVED}:(1,0).reader:[1]", Verdict.FAILED,
                  "not replayed", unreplayed=True)
    stuck = Result("circular-buffer", f"{R.CB_WRITE_UNRESERVED}:(0,0).reader:[1]", Verdict.FAILED,
                   "not replayed", unreplayed=True)
    g = group(Report(report.program, report.target, (*report.results, lone, stuck)), p)
    assert g.of[stuck.name] == f"{R.DEADLOCK}:(0,0).reader+1"
    assert lone.name not in g.of
    assert lone.name in g.others


def _r(name: str, verdict: Verdict, *, blocked: tuple[str, ...] = (), family: str = "semaphore") -> Result:
    return Result(family, name, verdict, "why", blocked_by=blocked)


def test_settle_records_the_assumptions_that_blocked_a_proof() -> None:
    x = _r(f"{R.ASYNC_FLAG_OVERTAKE}:(0,0).reader:[2]", Verdict.REFUTED, family="async-noc")
    pub = Result("multicast", f"{R.MCAST_PUBLISH}:(1,0).reader:[3]", Verdict.PROVED, "flags cover",
                 assumes=(x.name,))
    slot = Result("multicast", f"{R.MCAST_SLOT}:(0,0).reader:[1]", Verdict.PROVED, "reserved", assumes=(pub.name,))
    out = settle([x, pub, slot])
    assert [r.verdict for r in out] == [Verdict.REFUTED, Verdict.FAILED, Verdict.FAILED]
    assert out[1].blocked_by == (x.name,)
    assert out[2].blocked_by == (pub.name,)
    g = group(Report("t", "wormhole_b0", tuple(out)))
    # A chain of assumptions: both go to the finding at its root.
    assert g.of == {pub.name: x.name, slot.name: x.name}


def test_a_blocking_assumption_that_failed_on_its_own_explains_nothing() -> None:
    x = _r(f"{R.SEM_SET_RACE}:sem0@(0,0)", Verdict.REFUTED)
    own = _r(f"{R.SEM_PROTOCOL}:sem1@(0,0)", Verdict.FAILED)  # outside the fragment: no finding behind it
    both = _r(f"{R.DEADLOCK}:(0,0).reader+1", Verdict.FAILED, family="deadlock",
              blocked=(f"{R.SEM_EXACT}:sem0@(0,0)", f"{R.SEM_EXACT}:sem1@(0,0)"))
    only_x = _r(f"{R.DEADLOCK}:(1,0).reader+1", Verdict.FAILED, family="deadlock",
                blocked=(f"{R.SEM_EXACT}:sem0@(0,0)",))
    nothing = _r(f"{R.DEADLOCK}:(2,0).reader+1", Verdict.FAILED, family="deadlock",
                 blocked=(f"{R.SEM_EXACT}:sem7@(0,0)",))  # no result of that word at all
    g = group(Report("t", "wormhole_b0", (x, own, both, only_x, nothing)))
    # sem-exact:W stands for the word's semaphore results (its exact counting is reported by the kind that broke it).
    assert g.of == {only_x.name: x.name}
    assert g.others == (own.name, both.name, nothing.name)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_the_reports_show_consequences_under_their_finding(fmt: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.json"
    path.write_text(dumps(_over_reserved(0, 1)))
    sarif = tmp_path / "out.sarif"
    argv = ["certify", str(path), "-q", "--no-cache"] + (["--json"] if fmt == "json" else []) + (
        ["--sarif", str(sarif)] if fmt == "sarif" else [])
    assert main(argv) == 1  # failed-to-prove still fails; the refutations decide the exit code as before
    out = capsys.readouterr().out
    d0, d1 = f"{R.DEADLOCK}:(0,0).reader+1", f"{R.DEADLOCK}:(1,0).reader+1"
    s0, s1 = f"{R.CB_STRADDLE}:b0", f"{R.CB_STRADDLE}:b1"
    if fmt == "json":
        doc = json.loads(out)
        by = {r["name"]: r for r in doc["results"]}
        assert by[s0]["consequence_of"] == d0
        assert by[s1]["consequence_of"] == d1
        assert by[s0]["verdict"] == "failed-to-prove"
        assert "consequence_of" not in by[d0]
        assert doc["summary"] == {"findings": 6, "consequences": 2, "other_failed_to_prove": 1}
    elif fmt == "text":
        lines = out.splitlines()
        at = lines.index(next(ln for ln in lines if ln.startswith(f"refuted deadlock/{d1}")))
        under = lines[at:]
        head = next(i for i, ln in enumerate(under) if ln.startswith("    consequences (1 failed-to-prove"))
        assert under[head + 1].startswith(f"      failed-to-prove circular-buffer/{s1}: candidate not replayed")
        # listed once, under its finding, not again among the other failures to prove
        assert sum(1 for ln in lines if s1 in ln) == 1
        assert lines[-1].endswith("; 6 findings with 2 consequences, 1 other failed-to-prove)")
        assert any(ln.startswith(f"failed-to-prove memory/{R.MEMORY_MAP}:") for ln in lines)
    else:
        results = json.loads(sarif.read_text())["runs"][0]["results"]
        by = {r["properties"]["obligation"]: r for r in results}
        assert by[s0]["properties"]["consequenceOf"] == d0
        assert by[s0]["kind"] == "open"
        assert by[s0]["level"] == "none"
        assert s0 in by[d0]["properties"]["consequences"]
        assert s1 not in by[d0]["properties"]["consequences"]
        related = by[s1]["relatedLocations"][-1]
        assert related["message"]["text"] == f"not proved because of the refuted finding {d1}"
        assert related["physicalLocation"] == by[d1]["locations"][0]["physicalLocation"]


def test_a_proved_json_report_carries_the_summary_too(capsys: pytest.CaptureFixture[str]) -> None:
    # README: `summary` holds the three counts; a CI script reads it on the good case as on the bad
    root = Path(__file__).parent.parent
    assert main(["certify", str(root / "examples" / "pipeline_small.json"), "--json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"] == {"findings": 0, "consequences": 0, "other_failed_to_prove": 0}


def test_a_failed_to_prove_json_report_without_findings_counts_its_failures() -> None:
    from verispatial.report.consequences import annotate_json

    failed = (_r("sem-exact:sem0@(0,0)", Verdict.FAILED), _r("sem-exact:sem1@(0,0)", Verdict.FAILED),
              _r("sem-overshoot:sem0@(0,0)", Verdict.PROVED))
    doc = annotate_json(Report("t", "wormhole_b0", failed).to_json(), None)
    assert doc["summary"] == {"findings": 0, "consequences": 0, "other_failed_to_prove": 2}
    assert all("consequence_of" not in r for r in doc["results"])


def _three_pages_for(*writer: Op) -> Program:
    """The reader pushes 3 pages of X through a 2-page buffer; the writer runs ``writer``. Y is the 3-tile output."""
    from verispatial.ir import Loop, Term

    reader = ep(A, Engine.READER, Loop("i", 3, (Reserve(0, 1), ReadTiles("X", Addr(0, (Term("i", 1),)), 1, 0),
                                                ReadBarrier(), Push(0, 1))))
    tensors = (Tensor("X", (32, 96), "bf16", Role.INPUT), Tensor("Y", (32, 96), "bf16", Role.OUTPUT))
    return prog(reader, ep(A, Engine.WRITER, *writer), buffers=(buf(0, A, cap=2),), tensors=tensors)


def _unreplayed_beside_a_deadlock(p: Program, name: str) -> tuple[str, Result, Report]:
    """The one refuted deadlock of ``p``'s report, its failed-to-prove result ``name`` (a candidate not replayed),
    and the report."""
    report = certify(p, cache=False)
    (finding,) = [r.name for r in report.results if r.verdict is Verdict.REFUTED]
    assert finding.startswith(f"{R.DEADLOCK}:")
    r = next(r for r in report.results if r.name == name)
    assert r.verdict is Verdict.FAILED
    assert r.unreplayed
    return finding, r, report


def test_an_occurrence_the_deadlock_never_reaches_is_its_consequence() -> None:
    # The writer loops 4 times, waiting for a page and writing it to tile i of Y: its writes ran in iterations 0-2,
    # but the one of iteration 3, past Y, which the bound is about, never runs: the writer hangs at the wait before
    # it (a fresh user's lcopy4 / st_idxarg, reported as 1 other failed-to-prove)
    from verispatial.ir import Loop, Term

    p = _three_pages_for(Loop("i", 4, (Wait(0, 1), WriteTiles(0, "Y", Addr(0, (Term("i", 1),)), 1), WriteBarrier(),
                                       Pop(0, 1))))
    finding, bounds, report = _unreplayed_beside_a_deadlock(p, f"{R.BOUNDS}:Y")
    g = group(report, p)
    assert g.of == {bounds.name: finding}
    assert bounds.name not in g.others


def test_an_output_no_op_writes_is_a_consequence_of_a_deadlock_whose_run_never_ends() -> None:
    # Nothing writes Y, and the reader's third reserve waits for a page nobody pops: the run deadlocks, so it never
    # ends, where output-unwritten is checked (a fresh user's st_signed, reported as 1 other failed-to-prove)
    p = _three_pages_for(Wait(0, 1))
    finding, unwritten, report = _unreplayed_beside_a_deadlock(p, f"{R.OUTPUT_UNWRITTEN}:Y")
    assert group(report, p).of == {unwritten.name: finding}
