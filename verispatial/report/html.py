"""One self-contained HTML report page (``explain --html``): the program, its verdict, one row per obligation family
with its counts, and every refutation with its narrative and its pictures inline (SVG drawn by Graphviz; the DOT text
when Graphviz cannot draw it). No script, no external style sheet, font or image: the page reads the same offline."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import attrs

from verispatial.certify.report import Report, Verdict
from verispatial.report.dot import RenderError, render_svg
from verispatial.report.explain import Explanation, Picture
from verispatial.report.text import VERDICT_WORD, tally

_CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; border-top: 1px solid #ccc; padding-top: 1em; }
table.families { border-collapse: collapse; } table.families td, table.families th { border: 1px solid #bbb;
  padding: 2px 8px; text-align: right; } table.families td:first-child { text-align: left; }
.refuted { color: #b2182b; font-weight: bold; } .proved { color: #1a9850; } .failed { color: #b8860b; }
pre { background: #f7f7f7; padding: 0.6em; white-space: pre-wrap; font-size: 0.85em; }
figure { margin: 1em 0; overflow-x: auto; } figcaption { font-size: 0.85em; color: #555; }
"""


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


def html_page(report: Report, exps: Sequence[Explanation], drawn: Sequence[Sequence[Drawn]]) -> str:
    """The page (module docstring) for ``report``, its explanations and their drawn pictures (``draw``)."""
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
        if x.narrative:
            parts.append("<pre>" + escape("\n".join(x.narrative)) + "</pre>")
        for d in pics:
            parts.append("<figure>")
            if d.svg is not None:
                parts.append(d.svg)
            else:
                parts.append(f"<p>(no SVG: {escape(d.error)}); the DOT text:</p><pre>{escape(d.picture.dot)}</pre>")
            parts.append(f"<figcaption>{escape(d.picture.title)}</figcaption></figure>")
    others = [r for r in report.results if r.verdict in (Verdict.FAILED, Verdict.ERROR)]
    if others:
        parts.append("<h2>not proved, not refuted</h2><ul>")
        parts += [f"<li>{escape(r.verdict.value)} {escape(r.family)}/{escape(r.name)}: {escape(r.reason)}</li>"
                  for r in others]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
