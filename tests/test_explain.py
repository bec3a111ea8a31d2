"""``verispatial explain``: a narrative and a picture per refutation (verispatial/report/explain.py), drawn by
Graphviz, and the self-contained HTML page read back from headless Chromium.

Every shipped broken example is explained (its reports are shared with test_certify_examples through conftest's
``example_reports``, so nothing is certified twice); Chromium opens one page once.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import attrs
import pytest

from verispatial import cli
from verispatial.certify import checker
from verispatial.certify.report import Report, Verdict
from verispatial.ir.core import Engine, Site
from verispatial.ir.ops import Pop, Wait
from verispatial.ir.program import EngineProgram, Program
from verispatial.ir.serialize import load_program
from verispatial.report.dot import graphviz_available, render_svg
from verispatial.report.explain import Explanation, explain_report, reach_deadlock
from verispatial.report.html import draw, html_page

BROKEN = Path(__file__).resolve().parent.parent / "examples" / "broken"
EXAMPLES = sorted(p.stem for p in BROKEN.glob("*.json"))
needs_graphviz = pytest.mark.skipif(not graphviz_available(), reason="Graphviz (Debian graphviz) not installed")


def report_of(cache: dict[str, Any], stem: str) -> tuple[Program, Report]:
    path = BROKEN / f"{stem}.json"
    program = load_program(path)
    key = str(path)
    if key not in cache:
        cache[key] = checker.certify(program)
    return program, cache[key]


@pytest.fixture(scope="module")
def explained(example_reports: dict[str, Any]) -> dict[str, tuple[Report, list[Explanation]]]:
    out = {}
    for stem in EXAMPLES:
        program, report = report_of(example_reports, stem)
        out[stem] = (report, explain_report(program, report))
    return out


def text(x: Explanation) -> str:
    return "\n".join(x.narrative)


def by_rule(exps: list[Explanation], rule: str) -> Explanation:
    got = [x for x in exps if x.rule == rule]
    assert got, f"no explanation of {rule}: {[x.rule for x in exps]}"
    return got[0]


@needs_graphviz
@pytest.mark.parametrize("stem", EXAMPLES)
def test_every_broken_example_gets_a_narrative_dot_and_svg(explained: dict[str, Any], stem: str) -> None:
    report, exps = explained[stem]
    refuted = [r for r in report.results if r.verdict == Verdict.REFUTED]
    assert refuted
    assert [x.name for x in exps] == [r.name for r in refuted]
    pictures = 0
    for x in exps:
        assert x.narrative, x.name
        for p in x.pictures:
            assert p.dot.startswith("digraph ")
            svg = render_svg(p.dot, p.layout)
            assert svg.startswith("<svg")
            assert svg.rstrip().endswith("</svg>")
            pictures += 1
    assert pictures >= 1


def test_deadlock_names_each_stuck_engine_its_releaser_and_the_cycle(explained: dict[str, Any]) -> None:
    _report, exps = explained["a_reserve_over_capacity"]
    x = by_rule(exps, "deadlock")
    t = text(x)
    assert "(0,0).reader is stuck at ops[0] reserve(b0, 8)" in t
    assert "would be released by (0,0).writer's pop(b0, 8) at ops[3]; it never runs: (0,0).writer is itself stuck" in t
    assert "wait-for cycle: (0,0).reader -> (0,0).writer -> (0,0).reader" in t
    (pic,) = x.pictures
    assert pic.kind == "wait-for"
    # The buffer with its counters, and the cycle in red.
    assert "pushed 0, popped 0, capacity 4" in pic.dot
    assert "#d62728" in pic.dot


def test_deadlock_on_the_mesh_is_summarized_by_groups(explained: dict[str, Any]) -> None:
    _report, exps = explained["c_trip_sender"]
    x = by_rule(exps, "deadlock")
    t = text(x)
    assert "48 engine(s) stuck" in t
    assert len(x.narrative) < 30, "a 48-engine deadlock is summarized, not listed engine by engine"
    assert re.search(r"G\d+ \(7 engines\) reader: sem_wait\(in0_receiver_sem == 1\)", t)
    assert "groups on the wait-for cycle: " in t
    kinds = [p.kind for p in x.pictures]
    assert kinds == ["wait-groups", "mesh"]
    mesh = x.pictures[1].dot
    assert mesh.count("x=") == 8
    assert mesh.count("y=") == 2


def test_the_deadlock_drawn_is_the_one_the_interpreter_reaches(example_reports: dict[str, Any]) -> None:
    program, report = report_of(example_reports, "q_peel_reload_first")
    (r,) = [r for r in report.results if r.verdict == Verdict.REFUTED and r.family == "deadlock"]
    assert r.counterexample is not None
    run = reach_deadlock(program, r.counterexample)
    assert run is not None
    assert run.status == "deadlock"
    assert {st.position.engine for st in run.stuck} == {st["position"]["engine"] for st in r.counterexample["stuck"]}


def test_self_wait_and_overshoot_are_said(explained: dict[str, Any]) -> None:
    t = text(by_rule(explained["q_peel_reload_first"][1], "deadlock"))
    assert "it comes after this wait in (0,0).compute's own program (the engine waits for itself)" in t
    t = text(by_rule(explained["r_release_overshoot"][1], "sem-overshoot"))
    assert "(6 > 3)" in t
    assert "overshoot" in t


def test_race_shows_the_racing_pair_on_a_timeline(explained: dict[str, Any]) -> None:
    _report, exps = explained["t_kv_no_rendezvous"]
    x = by_rule(exps, "tensor-race")
    t = text(x)
    assert "racing pair: " in t
    assert "read_tiles(kv, 1, b1)" in t
    assert "write_tiles(b0, kv, 1)" in t
    (pic,) = x.pictures
    assert pic.kind == "timeline"
    assert pic.layout == "neato"
    assert pic.dot.count('fillcolor="#fcbba1"') == 2  # both ops of the pair highlighted


def test_flag_overtake_timeline_shows_the_schedule(explained: dict[str, Any]) -> None:
    _report, exps = explained["d_blackhole_no_flush"]
    x = by_rule(exps, "async-flag-overtake")
    assert "mcast_set_valid" in text(x)
    assert x.pictures[0].kind == "timeline"


def test_overlap_is_drawn_on_the_memory_map(explained: dict[str, Any]) -> None:
    _report, exps = explained["f_memory_overlap"]
    x = by_rule(exps, "memory-overlap")
    t = text(x)
    assert "[103712, 107808) 4096 B  b0 c_0   <-- overlaps" in t
    assert "byte 105760 belongs to both b0 and b1" in t
    (pic,) = x.pictures
    assert pic.kind == "memory-map"
    assert "byte 105760" in pic.dot


def test_a_wait_nothing_releases() -> None:
    site = Site(0, 0)
    p0 = load_program(BROKEN / "a_reserve_over_capacity.json")
    # The writer waits for a page that nothing pushes (the reader does nothing at all).
    reader = EngineProgram(site, Engine.READER, ())
    writer = EngineProgram(site, Engine.WRITER, (Wait(0, 1), Pop(0, 1)))
    program = attrs.evolve(p0, name="nobody_pushes", programs=(reader, writer))
    report = checker.certify(program)
    exps = explain_report(program, report)
    x = by_rule(exps, "deadlock")
    assert "nothing releases it: no op of the program pushes b0" in text(x)
    assert "no wait-for cycle" in text(x)


@needs_graphviz
def test_cli_explain_writes_dot_svg_and_html(tmp_path: Path) -> None:
    out = io.StringIO()
    html_path = tmp_path / "page.html"
    with contextlib.redirect_stdout(out):
        code = cli.main(["explain", str(BROKEN / "f_memory_overlap.json"), "-o", str(tmp_path / "pics"),
                         "--html", str(html_path), "-q"])
    assert code == 1
    files = sorted(p.name for p in (tmp_path / "pics").iterdir())
    assert files == ["f_memory_overlap.0.0.memory-map.dot", "f_memory_overlap.0.0.memory-map.svg"]
    printed = out.getvalue()
    assert "refuted memory/memory-disjoint:(0,0).local.phase0" in printed
    assert "picture: " in printed
    assert "<svg" in html_path.read_text()


def test_cli_explain_says_what_did_not_prove_and_why(tmp_path: Path) -> None:
    """A failed-to-prove obligation has no picture, but its reason is printed as certify prints it (a new user's
    review: explain dropped it)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["explain", str(BROKEN / "a_reserve_over_capacity.json"), "-o", str(tmp_path), "-q"])
    assert code == 1
    lines = out.getvalue().splitlines()
    ftp = [ln for ln in lines if ln.startswith("failed-to-prove ")]
    assert ftp == [ln for ln in lines if ln.startswith("failed-to-prove circular-buffer/cb-straddle:b0: ")]
    assert len(ftp) == 1
    assert lines[-1].startswith("verdict: refuted (19 proved, 3 refuted, 1 failed-to-prove")


@needs_graphviz
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium (Debian chromium) not installed")
def test_html_page_reads_back_in_headless_chromium(explained: dict[str, Any], tmp_path: Path) -> None:
    report, exps = explained["a_reserve_over_capacity"]
    page = tmp_path / "report.html"
    page.write_text(html_page(report, exps, draw(exps)))
    # The flags that work on this machine (no network, no sandbox as root): /work/.library/env/machines/python.md.
    done = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
                          capture_output=True, timeout=120, check=False)
    dom = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()[-500:]
    shown = re.sub(r"<[^>]+>", " ", dom)
    for needle in ("verispatial report: program a_reserve_over_capacity", "circular-buffer", "deadlock",
                   "wait-for cycle: (0,0).reader -&gt; (0,0).writer -&gt; (0,0).reader"):
        assert needle in shown, needle
    assert dom.count("<svg") == sum(len(x.pictures) for x in exps)
