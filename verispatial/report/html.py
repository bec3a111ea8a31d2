"""One self-contained HTML report page (``explain --html``): the program, its verdict, one row per obligation family
with its counts, and every refutation with its pictures and its narrative inline (SVG drawn by Graphviz; the DOT text
when Graphviz cannot draw it). No script, no external style sheet, font or image: the page reads the same offline.

Fit to the page: every SVG is scaled to the page's width (its ``viewBox`` kept, ``max-width: 100%``), so nothing is
cut at the right edge; a picture that scaling shrinks below ``LEGIBLE`` of its size also comes at full size, folded,
in a box that scrolls sideways and says so. The op that breaks a rule has the id ``r<i>-offending`` (the racing
op ``r<i>-racing-<k>``), in the figure ``r<i>-timeline`` the explanation's headline links to: the link (or the page
opened at that fragment) brings the timeline, the op in it, into view."""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

import attrs

from verispatial.certify.report import Report, Verdict
from verispatial.ir.program import Program
from verispatial.report.dot import RenderError, render_svg
from verispatial.report.explain import Explanation, Picture
from verispatial.report.names import named
from verispatial.report.text import VERDICT_WORD, tally

_CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; border-top: 1px solid #ccc; padding-top: 1em; }
table.families { border-collapse: collapse; } table.families td, table.families th { border: 1px solid #bbb;
  padding: 2px 8px; text-align: right; } table.families td:first-child { text-align: left; }
.refuted { color: #b2182b; font-weight: bold; } .proved { color: #1a9850; } .failed { color: #b8860b; }
pre { background: #f7f7f7; padding: 0.6em; white-space: pre-wrap; font-size: 0.85em; }
figure { margin: 1em 0; max-width: 100%; } figcaption { font-size: 0.85em; color: #555; }
figure svg { max-width: 100%; height: auto; display: block; }
.wide { overflow-x: auto; border: 1px dashed #999; box-shadow: inset -12px 0 10px -10px #666; }
.wide svg { max-width: none; }
details summary { cursor: pointer; font-size: 0.85em; color: #2166ac; }
"""

#: Below this scale (page width over the picture's width) a fitted picture is hard to read: it is offered at full
#: size too. The page width assumed is a 1280-pixel window less the body's margins.
LEGIBLE = 0.6
PAGE_PX = 1200
_WIDTH = re.compile(r'<svg\b[^>]*?\bwidth="([0-9.]+)(pt|px)?"')


@attrs.frozen
class Drawn:
    """A picture and its SVG (None when Graphviz could not draw it: ``error`` says why)."""

    picture: Picture
    svg: str | None
    error: str = ""


def draw(exps: Sequence[Explanation]) -> list[list[Drawn]]:
    """Every picture of every explanation drawn as SVG (``render_svg``); a picture Graphviz cannot draw keeps its
    reason instead."""
    out: list[list[Drawn]] = []
    for x in exps:
        row: list[Drawn] = []
        for p in x.pictures:
            try:
                row.append(Drawn(p, render_svg(p.dot, p.layout)))
            except RenderError as e:
                row.append(Drawn(p, None, str(e)))
        out.append(row)
    return out


def fit_scale(svg: str) -> float:
    """How much fitting ``svg`` (Graphviz output: ``width`` in points) to ``PAGE_PX`` pixels shrinks it: 1.0 when
    it fits as it is."""
    m = _WIDTH.search(svg)
    if m is None:
        return 1.0
    px = float(m.group(1)) * (4 / 3 if m.group(2) in (None, "pt") else 1.0)
    return min(1.0, PAGE_PX / px) if px > 0 else 1.0


def html_page(report: Report, exps: Sequence[Explanation], drawn: Sequence[Sequence[Drawn]],
              program: Program | None = None) -> str:
    """The page (module docstring) for ``report``, its explanations and their drawn pictures (``draw``); with
    ``program``, the reasons of what is neither proved nor refuted call buffers and semaphores by its names too."""
    code = report.exit_code
    word = VERDICT_WORD.get(code, "error")
    cls = {0: "proved", 1: "refuted"}.get(code, "failed")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>verispatial: {escape(report.program)}</title>", f"<style>{_CSS}</style></head><body>",
             f"<h1>verispatial report: program {escape(report.program)}, target {escape(report.target)}</h1>",
             f'<p>verdict: <span class="{cls}">{escape(word)}</span> ({escape(tally(report))})</p>',
             '<table class="families"><tr><th>family</th><th>proved</th><th>refuted</th><th>failed-to-prove</th>'
             "<th>error</th></tr>"]
    for fam, results in report.by_family().items():
        n = {v: sum(1 for r in results if r.verdict == v) for v in Verdict}
        parts.append(f"<tr><td>{escape(fam)}</td><td>{n[Verdict.PROVED]}</td>"
                     f'<td class="{"refuted" if n[Verdict.REFUTED] else ""}">{n[Verdict.REFUTED]}</td>'
                     f"<td>{n[Verdict.FAILED]}</td><td>{n[Verdict.ERROR]}</td></tr>")
    parts.append("</table>")
    if not exps:
        parts.append("<p>No refutation: nothing to explain.</p>")
    for i, (x, pics) in enumerate(zip(exps, drawn, strict=True)):
        parts.append(f'<h2 id="r{i}"><span class="refuted">refuted</span> {escape(x.family)}/{escape(x.name)}</h2>')
        parts.append(f"<p>{escape(x.headline)}</p>")
        if x.args or x.at:  # a host's ranges as the arguments they are; the kernel lines the counterexample names
            parts.append('<pre class="source">' + escape("\n".join((*x.args, *x.at))) + "</pre>")
        svgs = [d.svg or "" for d in pics]
        if any('id="offending"' in svg for svg in svgs):
            parts.append(f'<p><a href="#r{i}-timeline">the op that breaks the rule, in the timeline below</a></p>')
        racing = 0
        for d in pics:
            timeline = d.svg is not None and 'id="offending"' in d.svg
            parts.append(f'<figure id="r{i}-timeline">' if timeline else "<figure>")
            if d.svg is not None:
                svg = d.svg.replace('id="offending"', f'id="r{i}-offending"')
                while 'id="racing"' in svg:
                    svg = svg.replace('id="racing"', f'id="r{i}-racing-{racing}"', 1)
                    racing += 1
                parts.append(svg)
                scale = fit_scale(d.svg)
                if scale < LEGIBLE:
                    full = re.sub(r'\bid="r\d+-(offending|racing-\d+)"', "", svg)
                    parts.append(f"<details><summary>scaled to {scale:.0%} to fit the page: the full size, in a box "
                                 "that scrolls sideways (&rarr;)</summary>"
                                 f'<div class="wide">{full}</div></details>')
            else:
                parts.append(f"<p>(no SVG: {escape(d.error)}); the DOT text:</p><pre>{escape(d.picture.dot)}</pre>")
            parts.append(f"<figcaption>{escape(d.picture.title)}</figcaption></figure>")
        # The picture first, the narrative after it: the op in red is in the window when the explanation's
        # heading is (the schedule in words, often long, follows).
        if x.narrative:
            parts.append("<pre>" + escape("\n".join(x.narrative)) + "</pre>")
    others = [r for r in report.results if r.verdict in (Verdict.FAILED, Verdict.ERROR)]
    if others:
        parts.append("<h2>not proved, not refuted</h2><ul>")
        parts += [f"<li>{escape(r.verdict.value)} {escape(r.family)}/{escape(r.name)}: "
                  f"{escape(r.reason if program is None else named(program, r.reason))}</li>" for r in others]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
