"""``verispatial explain``: a narrative and a picture per refutation (verispatial/report/explain.py), drawn by
Graphviz, and the self-contained HTML page read back from headless Chromium.

Every shipped broken example is explained (its reports are shared with test_certify_examples through conftest's
``example_reports``, so nothing is certified twice); Chromium opens one page once.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import attrs
import pytest
from builders import UNORDERED

from verispatial import cli
from verispatial.certify.report import Report, Verdict
from verispatial.driver import run
from verispatial.ir.core import Engine, Site, WaitCond
from verispatial.ir.ops import (
    AtomicBarrier,
    If,
    Loop,
    McastSetValid,
    Op,
    Pop,
    Push,
    SemInc,
    SemRmw,
    SemSet,
    SemWait,
    Wait,
    WriteBarrier,
)
from verispatial.ir.program import EngineProgram, Group, Program, Semaphore
from verispatial.ir.serialize import load_program
from verispatial.ir.target import WORMHOLE
from verispatial.report.dot import graphviz_available, render_svg
from verispatial.report.explain import TIMELINE_EVENTS, Explanation, explain_report, reach_deadlock
from verispatial.report.html import draw, html_page

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "examples" / "broken"
EXAMPLES = sorted(p.stem for p in BROKEN.glob("*.json"))
needs_graphviz = pytest.mark.skipif(not graphviz_available(), reason="Graphviz (Debian graphviz) not installed")


def report_of(cache: dict[str, Any], stem: str) -> tuple[Program, Report]:
    path = BROKEN / f"{stem}.json"
    program = load_program(path)
    key = str(path)
    if key not in cache:
        cache[key] = run.certify(program)
    return program, cache[key]


class Explained(dict[str, tuple[Report, list[Explanation]]]):
    """Each example's report and explanations, made when first asked for (a test of one example does not wait for
    all of them)."""

    def __init__(self, reports: dict[str, Any]) -> None:
        super().__init__()
        self.reports = reports

    def __missing__(self, stem: str) -> tuple[Report, list[Explanation]]:
        program, report = report_of(self.reports, stem)
        self[stem] = (report, explain_report(program, report))
        return self[stem]


@pytest.fixture(scope="module")
def explained(example_reports: dict[str, Any]) -> Explained:
    return Explained(example_reports)


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
        # The program's names, not ids, in what a person reads (the pictures use the names too).
        said = "\n".join((x.headline, *x.narrative))
        assert not re.search(r"\bb\d+\b|\bsem\d+\b|\bb#|@site", said), said
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
    # The program's names (c_0), not ids (b0): the picture says them too.
    assert "(0,0).reader is stuck at ops[0] reserve(c_0, 8): c_0@(0,0) has 4 free page(s) of 4 (pushed 0, popped 0), " \
           "the reserve needs 8 (more than its capacity: it never fits)" in t
    assert "would be released by (0,0).writer's pop(c_0, 8) at ops[3]; it never runs: (0,0).writer is itself stuck" in t
    assert "b0" not in t
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
    # The page c_24 waits for only the engine's own later push gives: said, and no self-cycle drawn.
    assert "no other engine pushes c_24@(0,0): only the engine's own ops do" in t
    assert "(0,0).compute's own push(c_24, 1) at ops[0].body[7].body[2] comes after this wait in its program: it " \
           "cannot run before the wait passes" in t
    assert "wait-for cycle: (0,0).compute -> (0,0).compute" not in t
    t = text(by_rule(explained["r_release_overshoot"][1], "sem-overshoot"))
    assert "(6 > 3)" in t
    assert "overshoot" in t


def test_race_shows_the_racing_pair_on_a_timeline(explained: dict[str, Any]) -> None:
    _report, exps = explained["t_kv_no_rendezvous"]
    x = by_rule(exps, "tensor-race")
    t = text(x)
    assert "racing pair: " in t
    assert "read_tiles(kv, 1, c_kv)" in t  # the program's buffer names, not b1 / b0
    assert "write_tiles(c_new, kv, 1)" in t
    (pic,) = x.pictures
    assert pic.kind == "timeline"
    assert pic.layout == "neato"
    assert pic.dot.count('fillcolor="#fcbba1"') == 2  # both ops of the pair highlighted
    assert pic.dot.count('id="offending"') == 1
    assert pic.dot.count('id="racing"') == 1
    # A window around the op, not the whole schedule: at most TIMELINE_EVENTS columns and the racing op.
    assert pic.dot.count("label=\"#") <= TIMELINE_EVENTS + 1


def test_flag_overtake_timeline_shows_the_schedule() -> None:
    # The multicast pair has no flush between its data and flag multicasts: on a target that lets writes reorder
    # the flag may land first.
    program = attrs.evolve(load_program(ROOT / "examples" / "mcast_pair.json"), target=UNORDERED)
    exps = explain_report(program, run.certify(program))
    x = by_rule(exps, "async-flag-overtake")
    assert "mcast_set_valid" in text(x)
    assert x.pictures[0].kind == "timeline"


def test_source_refill_timeline_shows_the_schedule(explained: dict[str, Any]) -> None:
    _report, exps = explained["d_blackhole_no_flush"]
    x = by_rule(exps, "async-source-reuse")
    assert "read_tiles" in text(x) or "reserve" in text(x)
    assert x.pictures[0].kind == "timeline"


@pytest.mark.parametrize("stem", ["e_read_no_barrier", "n_mcast_before_read_barrier"])
def test_an_unlanded_read_is_shown_in_flight_at_the_op_it_breaks(explained: dict[str, Any], stem: str) -> None:
    """``async-read-publish`` flags a publication with a read not ordered before it; the schedule shown must be one in
    which that read has not landed at the flagged op (the run explain showed landed it one step before, an order in
    which nothing goes wrong: a new user read it as a correct interleaving labelled a violation)."""
    _report, exps = explained[stem]
    x = by_rule(exps, "async-read-publish")
    lines = [ln for ln in x.narrative if re.match(r"\s+#\d+ ", ln)]
    here = next(i for i, ln in enumerate(lines) if ln.endswith("<-- here"))
    assert not any("read_tiles" in ln and ln.endswith(" lands") for ln in lines[:here]), lines


def test_overlap_is_drawn_on_the_memory_map(explained: dict[str, Any]) -> None:
    _report, exps = explained["f_memory_overlap"]
    x = by_rule(exps, "memory-overlap")
    t = text(x)
    assert "[103712, 107808) 4096 B  c_0   <-- overlaps" in t
    assert "byte 105760 belongs to both c_0 and c_1" in t
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
    report = run.certify(program)
    exps = explain_report(program, report)
    x = by_rule(exps, "deadlock")
    assert "nothing releases it: no op of the program pushes c_0@(0,0)" in text(x)
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


def test_cli_explain_reads_a_ttlang_source_and_points_at_its_lines(tmp_path: Path) -> None:
    # A fresh user's find: explain took only program.json, while certify reads FILE.py and HOST.yaml.
    src = (ROOT / "examples" / "ttlang" / "matmul_bias_relu.py").read_text()
    assert "shape=(BLOCK, BLOCK), block_count=2)\n    y_dfb" in src
    broken = tmp_path / "matmul_bias_relu.py"
    broken.write_text(src.replace("shape=(BLOCK, BLOCK), block_count=2)\n    y_dfb",
                                  "shape=(BLOCK, BLOCK), block_count=1)\n    y_dfb"))  # the accumulator: 1 block
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["explain", str(broken), "-o", str(tmp_path / "pics"), "-q"])
    assert code == 1
    files = sorted(p.name for p in (tmp_path / "pics").iterdir())
    assert files
    assert all(f.startswith("matmul_bias_relu.") and not f.startswith("matmul_bias_relu.py") for f in files)
    printed = out.getvalue()
    assert "refuted deadlock/" in printed
    assert f"at {broken}:51:30: with acc_dfb.reserve() as acc_blk:" in printed


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
    assert lines[-1].startswith("verdict: refuted (20 proved, 3 refuted, 1 failed-to-prove")


needs_chromium = pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium (Debian chromium) not installed")
# The flags that work on this machine (no network, no sandbox as root): /work/.library/env/machines/python.md.
CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
            "--window-size=1280,800"]
#: Added to a copy of the page (the page itself has no script): after load, the layout a person sees at 1280x800,
#: written into the DOM that --dump-dom prints.
PROBE = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const hit = location.hash ? document.getElementById(location.hash.slice(1)) : null;
  const seen = (el) => el.checkVisibility();
  const hot = [...document.querySelectorAll('[id="r0-offending"], [id^="r0-racing-"]')].filter(seen).map(box);
  const layout = {
    width: document.documentElement.clientWidth, height: window.innerHeight,
    scrollWidth: document.documentElement.scrollWidth,
    svgs: [...document.querySelectorAll("svg")].filter(seen).map(box),
    target: hit ? box(hit) : null, hot: hot};
  // Unfolded, a full-size picture scrolls sideways in its own box: the page still does not.
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  layout.wide = [...document.querySelectorAll(".wide")].map((w) => [...box(w), w.scrollWidth]);
  layout.openScrollWidth = document.documentElement.scrollWidth;
  document.body.setAttribute("data-layout", JSON.stringify(layout));
}, 0));
</script>"""


def chromium(tmp_path: Path, url: str, *flags: str) -> str:
    done = subprocess.run([*CHROMIUM, f"--user-data-dir={tmp_path / 'profile'}", *flags, url],
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-500:]
    return done.stdout.decode()


@needs_graphviz
@needs_chromium
def test_html_page_reads_back_in_headless_chromium(explained: dict[str, Any], tmp_path: Path) -> None:
    report, exps = explained["a_reserve_over_capacity"]
    page = tmp_path / "report.html"
    page.write_text(html_page(report, exps, draw(exps)))
    dom = chromium(tmp_path, page.as_uri(), "--dump-dom")
    shown = re.sub(r"<[^>]+>", " ", dom)
    for needle in ("verispatial report: program a_reserve_over_capacity", "circular-buffer", "deadlock",
                   "wait-for cycle: (0,0).reader -&gt; (0,0).writer -&gt; (0,0).reader"):
        assert needle in shown, needle
    assert dom.count("<svg") == sum(len(x.pictures) for x in exps)


@needs_graphviz
@needs_chromium
@pytest.mark.parametrize("stem", ["t_kv_no_rendezvous", "c_trip_sender", "d_blackhole_no_flush"])
def test_html_page_fits_the_window_and_shows_the_offending_op(explained: dict[str, Any], tmp_path: Path,
                                                              stem: str) -> None:
    """At 1280x800: no picture is wider than the page (each is scaled to it), the page does not scroll sideways,
    and the headline's link to the timeline brings the op that breaks the rule into the window. The text uses the
    program's names, as the pictures do (no b3 / sem2@(0,0) / b# / @site)."""
    report, exps = explained[stem]
    page_text = html_page(report, exps, draw(exps), load_program(BROKEN / f"{stem}.json"))
    (tmp_path / "report.html").write_text(page_text)
    timeline = 'id="r0-timeline"' in page_text
    fragment = "#r0-timeline" if timeline else ""
    shot = tmp_path / f"{stem}.png"
    # What a person sees on opening the page (the fragment is measured below).
    chromium(tmp_path, (tmp_path / "report.html").as_uri(), f"--screenshot={shot}")
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (1280, 800)
    probe = tmp_path / "probe.html"
    probe.write_text(page_text.replace("</body>", PROBE + "</body>"))
    dom = chromium(tmp_path, probe.as_uri() + fragment, "--virtual-time-budget=5000", "--dump-dom")
    m = re.search(r'data-layout="([^"]*)"', dom)
    assert m, dom[-500:]
    layout = json.loads(html.unescape(m.group(1)))
    width, height = layout["width"], layout["height"]
    assert layout["svgs"]
    for left, _top, right, _bottom in layout["svgs"]:
        assert left >= 0
        assert right <= width + 0.5
    assert layout["scrollWidth"] <= width
    assert layout["openScrollWidth"] <= width
    for left, _top, right, _bottom, inner in layout["wide"]:
        assert left >= 0
        assert right <= width + 0.5
        assert inner > right - left  # it does scroll, and says so:
    assert len(layout["wide"]) == page_text.count("the full size, in a box that scrolls sideways")
    if stem == "c_trip_sender":
        assert layout["wide"], "the 48-engine wait-for graph is too wide to read fitted: it comes at full size too"
    if stem != "c_trip_sender":
        assert timeline
        assert layout["hot"], "the op that breaks the rule has its id in the page"
        if stem == "t_kv_no_rendezvous":
            assert len(layout["hot"]) == 2  # both ops of the racing pair
        for left, top, right, bottom in layout["hot"]:  # the op and, for a race, the other op of the pair
            assert 0 <= left
            assert right <= width
            assert 0 <= top
            assert bottom <= height
    # What the page says in words (the narratives and headlines; obligation names stay ids: SARIF and the gate
    # name obligations so).
    said = r"<pre>(.*?)</pre>|<p>([^<]*)</p>|<li>(?:failed-to-prove|error) \S+?: (.*?)</li>"
    shown = html.unescape(str(re.findall(said, dom, flags=re.S)))
    narrative = "\n".join(ln for x in exps for ln in x.narrative)
    assert not re.search(r"\bb\d+\b|\bb#|\bsem\d+@|@site", narrative), narrative
    assert not re.search(r"\bb\d+\b|\bb#|\bsem\d+@|@site", shown), shown


# --------------------------------------------------------------------------------------------- a missing release


def drop_first(program: Program, engine: str, kind: type) -> Program:
    """``program`` with the first op of class ``kind`` (depth first, in program order) removed from ``engine``'s
    program: the mutation "this site's increment / push / flag was forgotten"."""

    def without(ops: tuple[Op, ...]) -> tuple[tuple[Op, ...], bool]:
        out: list[Op] = []
        done = False
        for op in ops:
            if not done and isinstance(op, kind):
                done = True
                continue
            if not done and isinstance(op, (Loop, If)):
                body, done = without(op.body)
                op = attrs.evolve(op, body=body)
            out.append(op)
        return tuple(out), done

    programs = []
    for e in program.programs:
        if e.key == engine:
            ops, done = without(e.ops)
            assert done, f"{engine} has no {kind.__name__}"
            e = attrs.evolve(e, ops=ops)
        programs.append(e)
    return attrs.evolve(program, name=f"{program.name}_no_{kind.__name__.lower()}", programs=tuple(programs))


def gather_missing_one() -> Program:
    """Three sites' writers each add 1 to ``gather`` at (0,0), whose writer then waits for all three (``== 3``) and
    resets it; (2,0)'s increment is dropped. The word stops at 2 (never negative), (0,0)'s own increment has
    already run, and the one that never came is (2,0).writer's."""
    a, b, c = Site(0, 0), Site(1, 0), Site(2, 0)
    gather = Semaphore(0, "gather", (a,))
    full = Program("gather", WORMHOLE, semaphores=(gather,), programs=(
        EngineProgram(a, Engine.WRITER, (SemInc(0, a), AtomicBarrier(), SemWait(0, WaitCond.EQ, 3), SemSet(0, 0))),
        EngineProgram(b, Engine.WRITER, (SemInc(0, a), AtomicBarrier())),
        EngineProgram(c, Engine.WRITER, (SemInc(0, a), AtomicBarrier()))))
    return drop_first(full, "(2,0).writer", SemInc)


def test_missing_increment_names_the_site_whose_increment_never_came() -> None:
    program = gather_missing_one()
    report = run.certify(program)
    x = by_rule(explain_report(program, report), "deadlock")
    t = text(x)
    assert "(0,0).writer is stuck at ops[2] sem_wait(gather, eq, 3): gather@(0,0) is 2, the wait needs == 3 " \
           "(1 short)" in t
    # Its own increment ran before the wait: counted in the word, not a release to wait for.
    assert "(0,0).writer's own sem_inc(gather, (0,0), 1) at ops[0] ran 1 time before this wait (counted in the 2)" in t
    assert "(1,0).writer's sem_inc(gather, (0,0), 1) at ops[0] ran 1 time (counted in the 2); (1,0).writer " \
           "has finished" in t
    assert "the increment that never came: (2,0).writer never increments gather@(0,0) (its program is " \
           "(1,0).writer's without sem_inc(gather, (0,0), 1) at ops[0])" in t
    assert "waits for itself" not in t
    assert "no wait-for cycle" in t
    assert not [ln for ln in x.narrative if ln.startswith("wait-for cycle:")]
    (pic,) = x.pictures
    # No self-cycle: nothing points back at the waiting engine; the site that never incremented is drawn.
    assert '-> "engine:(0,0).writer"' not in pic.dot
    assert '-> "engine:(2,0).writer"' in pic.dot
    assert "never came" in pic.dot
    assert "sem0" not in pic.dot
    assert "sem0" not in t
    # The word never goes below 0: no explanation or reason says it does.
    for r in report.results:
        assert "-1" not in r.reason, r.reason
    # Balance is a rule of runs that end, and none does (the deadlock is the finding): it is proved, exactly,
    # without naming an end value.
    balance = [r for r in report.results if r.name == "balance-sem:sem0@(0,0)"]
    assert balance
    assert balance[0].verdict.value == "proved"
    assert "its last reset saw every increment issued" in balance[0].reason


def test_missing_increment_of_two_sites_names_the_other_site() -> None:
    """Two sites: (0,0)'s writer increments its own word, then waits for both increments; (1,0)'s increment is
    dropped. Its program is not the other's less an increment (that one also waits), so it is named as the one
    engine of the incrementing kind that never increments the word, the word being 1 short."""
    a, b = Site(0, 0), Site(1, 0)
    full = Program("pair", WORMHOLE, semaphores=(Semaphore(0, "gather", (a,)),), programs=(
        EngineProgram(a, Engine.WRITER, (SemInc(0, a), AtomicBarrier(), SemWait(0, WaitCond.EQ, 2), SemSet(0, 0))),
        EngineProgram(b, Engine.WRITER, (SemInc(0, a), AtomicBarrier()))))
    program = drop_first(full, "(1,0).writer", SemInc)
    x = by_rule(explain_report(program, run.certify(program)), "deadlock")
    t = text(x)
    assert "gather@(0,0) is 1, the wait needs == 2 (1 short)" in t
    assert "(0,0).writer's own sem_inc(gather, (0,0), 1) at ops[0] ran 1 time before this wait (counted in the 1)" in t
    assert "the increment that never came: gather@(0,0) is 1 short, no increment of it can still come, and " \
           "(1,0).writer, a writer like (0,0).writer, never increments it" in t
    assert "waits for itself" not in t
    assert not [ln for ln in x.narrative if ln.startswith("wait-for cycle:")]
    assert '-> "engine:(0,0).writer"' not in x.pictures[0].dot


def test_missing_increment_in_a_round_of_a_gather(example_reports: dict[str, Any]) -> None:
    """counter_release without (2,0)'s gather increment: (1,0)'s increment ran once (round 0) and its next one
    waits for the release, so the root's wait is 1 short and (2,0).reader is the site that never increments."""
    program = drop_first(load_program(Path(BROKEN).parent / "counter_release.json"), "(2,0).reader", SemInc)
    x = by_rule(explain_report(program, run.certify(program)), "deadlock")
    t = text(x)
    assert "gather@(0,0) is 1, the wait needs >= 2 (1 short)" in t
    assert "(1,0).reader's sem_inc(gather, (0,0), 1) at ops[0].body[0] ran 1 time (counted in the 1); its next run " \
           "cannot come: (1,0).reader is itself stuck at ops[0].body[1] sem_wait(release, ge, 1+1*k) k=0" in t
    assert "the increment that never came: (2,0).reader never increments gather@(0,0)" in t
    assert "sem0" not in t
    assert "sem1" not in t


def test_missing_push_names_the_engine_that_reserved_and_never_pushed() -> None:
    program = drop_first(load_program(Path(BROKEN).parent / "pipeline_small.json"), "(0,0).compute", Push)
    x = by_rule(explain_report(program, run.certify(program)), "deadlock")
    t = text(x)
    assert "(0,0).writer is stuck at ops[0] wait(c_16, 1): c_16@(0,0) holds 0 page(s) (pushed 0, popped 0), " \
           "the wait needs 1" in t
    assert "nothing releases it: no op of the program pushes c_16@(0,0)" in t
    assert "the push that never came: (0,0).compute reserved c_16@(0,0) (reserve(c_16, 1) at ops[2] ran 1 time) " \
           "and has no push of it" in t
    assert "b2" not in t


def test_missing_multicast_valid_names_the_sender() -> None:
    program = drop_first(load_program(Path(BROKEN).parent / "valid_source.json"), "(0,0).reader", McastSetValid)
    x = by_rule(explain_report(program, run.certify(program)), "deadlock")
    t = text(x)
    assert "flag@(1,0) is 0, the wait needs == 1 (1 short)" in t
    assert "(1,0).reader's own sem_set(flag, 0) at ops[0].body[1] writes it, but not to 1" in t
    assert "the flag that never came: g0 from (0,0) covers (1,0), and (0,0).reader multicasts over it " \
           "(mcast_send(c_0, 1, g0, 2 dests) at ops[0].body[5]) but never sets flag valid there" in t
    assert "sem1" not in t


def test_html_page_fits_each_picture_and_unfolds_the_ones_too_small_to_read() -> None:
    """Without a browser: every SVG is fitted by the page's style; one that fitting shrinks below LEGIBLE also comes
    at full size in a folded box that scrolls sideways and says how much it was shrunk."""
    from verispatial.report.explain import Picture
    from verispatial.report.html import LEGIBLE, PAGE_PX, Drawn, fit_scale

    def svg(width_pt: float, node: str) -> str:
        return (f'<svg width="{width_pt}pt" height="100pt" viewBox="0.00 0.00 {width_pt} 100.00">'
                f'<g id="{node}" class="node"></g></svg>')

    # A timeline that fits, with the op that breaks the rule; a wait-for graph four page widths wide.
    narrow, wide = svg(PAGE_PX * 0.75 * 0.9, "offending"), svg(PAGE_PX * 0.75 * 4, "node1")
    assert fit_scale(narrow) == 1.0
    assert fit_scale(wide) == pytest.approx(0.25)
    assert fit_scale(wide) < LEGIBLE
    pic = Picture("timeline", "t", "digraph t {}")
    x = Explanation("f", "n", "r", "h", ("line",), (pic, pic))
    report = Report("p", "wormhole_b0", ())
    page = html_page(report, [x], [[Drawn(pic, narrow), Drawn(pic, wide)]])
    assert "figure svg { max-width: 100%; height: auto;" in page
    assert page.count("<details>") == 1
    assert "scaled to 25% to fit the page: the full size, in a box that scrolls sideways" in page
    # The op's id is made unique per explanation.
    assert page.count('id="r0-offending"') == 1
    assert '<a href="#r0-timeline">' in page
    assert page.index("<figure") < page.index("<pre>")  # the picture before the narrative


# -------------------------------------------------- the non-atomic read-modify-write (SemRmw) is an increment


def test_a_lost_read_modify_write_update_is_the_increment_that_never_came() -> None:
    """zo_local_up_lost_increment: (0,0).writer ups its word three times, (1,0).reader increments it once, and the
    reader waits for 4. The remote increment lands between an up's load and its store and is lost, so the word stops
    at 3: the narrative counts each up once (two steps, one run) and names the lost update as what never came."""
    program = load_program(BROKEN / "zo_local_up_lost_increment.json")
    x = by_rule(explain_report(program, run.certify(program)), "deadlock")
    t = text(x)
    assert "partial_ready@(0,0) is 3, the wait needs >= 4 (1 short)" in t
    assert "(0,0).writer's sem_rmw(partial_ready, 1) at ops[0].body[0] ran 3 times" in t
    assert ("the increment that never came: a write landed on partial_ready@(0,0) between the load and the store of "
            "(0,0).writer's sem_rmw(partial_ready, 1) at ops[0].body[0] k=0, which stored over it (lost update: "
            "sem-rmw-race)") in t


def test_a_word_read_modify_writes_increment_is_no_flag_word() -> None:
    """(1,0).writer ups its word once and (1,0).reader waits for 2 (1 short, no increment can come); (0,0).reader
    multicasts another word's flag over g0, which covers (1,0). The word is counted by its ups, not flagged: no
    'flag that never came' is named for it."""
    a, b = Site(0, 0), Site(1, 0)
    program = Program("rmw_flag", WORMHOLE, semaphores=(Semaphore(0, "ready", (b,)), Semaphore(1, "go", (a, b))),
                      groups=(Group(0, a, (1, 0, 1, 0)),), programs=(
        EngineProgram(a, Engine.READER, (SemSet(1, 1), McastSetValid(1, 0, 1), WriteBarrier())),
        EngineProgram(b, Engine.READER, (SemWait(1, WaitCond.EQ, 1), SemWait(0, WaitCond.GE, 2))),
        EngineProgram(b, Engine.WRITER, (SemRmw(0, 1),))))
    x = by_rule(explain_report(program, run.certify(program)), "deadlock")
    t = text(x)
    assert "ready@(1,0) is 1, the wait needs >= 2 (1 short)" in t
    assert "(1,0).writer's sem_rmw(ready, 1) at ops[0] ran 1 time" in t
    assert "never came" not in t


def test_reproduce_tries_the_checkers_runs_from_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A violation with no positions to drive toward is looked for in the runs from launch the checker makes
    (``replay.launch_schedules``), one list for both, in its order (explain kept its own beside it)."""
    from verispatial.certify import replay
    from verispatial.petri.interp import simulate
    from verispatial.report import explain

    program = load_program(ROOT / "examples/broken/e_read_no_barrier.json")
    (v, *_) = simulate(program).violations
    schedules = [replay.Launch("random schedule seed 7", 7), replay.Launch("departures last", None, hold=True)]

    def launches(_program: Program, land_last: Any = None) -> list[Any]:
        return [*schedules, *([replay.Launch("landings last", None, land_last=tuple(land_last))]
                              if land_last is not None else [])]

    monkeypatch.setattr(replay, "launch_schedules", launches)
    tried: list[tuple[int | None, bool] | tuple[str, ...]] = []

    def record(_program: Program, _trips: Any, seed: int | None = None, hold: bool = False, **_kw: Any) -> Any:
        tried.append((seed, hold))
        return attrs.evolve(simulate(program), violations=[])

    def late(*_a: Any, land_last: Any = (), **_kw: Any) -> Any:
        tried.append(tuple(land_last))
        return attrs.evolve(simulate(program), violations=[])

    monkeypatch.setattr(replay, "simulate", record)
    # the run with landings last, the flagged engine's last of all, is the one list's too: a rule about an op in
    # flight tries it first, and it shows nothing here either
    monkeypatch.setattr(replay, "drive", late)
    assert explain.reproduce(program, {}, v) is None
    assert tried == [(v.position.engine,), (7, False), (None, True)]
