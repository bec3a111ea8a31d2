"""Graphviz DOT text and its rendering to SVG (the pictures of ``explain``).

Every picture is DOT first (a file a user can re-render or edit) and SVG second, drawn by Graphviz's own layout
programs (Debian package ``graphviz``): ``dot`` for graphs, ``neato -n2`` for pictures whose node positions are given
(timelines, memory maps: ``pos`` in points). ``render_svg`` raises ``RenderError`` when Graphviz is missing or fails.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping

#: Fill colours, one per group of a picture (ColorBrewer Set3, readable with black text).
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9",
           "#bc80bd", "#ccebc5", "#ffed6f")
#: What a refutation points at: the cycle, the racing pair, the overlap.
ALERT = "#d62728"
#: Render time limit per picture, seconds.
RENDER_SECONDS = 60


class RenderError(Exception):
    """Graphviz is not installed, or it rejected a picture (the message says which and why)."""


def quote(text: str) -> str:
    """``text`` as a DOT double-quoted string (backslashes, quotes and newlines escaped; ``\\l`` kept out)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def html(text: str) -> str:
    """``text`` escaped for a DOT HTML-like label."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def attrs_text(a: Mapping[str, str | int | float]) -> str:
    """``[k="v", ...]`` for DOT; a value starting with ``<`` is an HTML-like label and stays unquoted."""
    if not a:
        return ""
    parts = []
    for k, v in a.items():
        s = str(v)
        parts.append(f"{k}={s}" if s.startswith("<") and s.endswith(">") else f"{k}={quote(s)}")
    return " [" + ", ".join(parts) + "]"


def digraph(name: str, lines: Iterable[str], graph: Mapping[str, str | int | float] | None = None,
            node: Mapping[str, str | int | float] | None = None) -> str:
    """A complete ``digraph`` with graph and default node attributes and the given statement lines."""
    out = [f"digraph {quote(name)} {{"]
    for k, v in (graph or {}).items():
        out.append(f"  {k}={quote(str(v))};")
    if node:
        out.append(f"  node{attrs_text(node)};")
    out.append('  edge [fontname="Helvetica", fontsize=9];')
    out += [f"  {ln}" for ln in lines]
    out.append("}")
    return "\n".join(out) + "\n"


def graphviz_available() -> bool:
    """Whether Graphviz's ``dot`` and ``neato`` are on the PATH."""
    return shutil.which("dot") is not None and shutil.which("neato") is not None


def render_svg(dot_text: str, layout: str = "dot") -> str:
    """The SVG Graphviz draws for ``dot_text``: ``layout`` ``dot`` (layered graph) or ``neato`` (positions as given,
    ``neato -n2``). Raises ``RenderError`` when Graphviz is missing, fails or times out."""
    if layout not in ("dot", "neato"):
        raise ValueError(f"layout {layout!r}: expected dot or neato")
    exe = shutil.which(layout)
    if exe is None:
        raise RenderError(f"Graphviz's {layout} is not installed (Debian package graphviz): no SVG drawn")
    args = [exe, "-Tsvg"] + (["-n2"] if layout == "neato" else [])
    try:
        done = subprocess.run(args, input=dot_text.encode(), capture_output=True, timeout=RENDER_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise RenderError(f"{layout} took more than {RENDER_SECONDS} s") from None
    except OSError as e:
        raise RenderError(f"{layout}: {e.strerror or e}") from None
    if done.returncode != 0:
        err = done.stderr.decode(errors="replace").strip().splitlines()
        raise RenderError(f"{layout} failed (exit {done.returncode}): {err[0] if err else 'no message'}")
    svg = done.stdout.decode()
    # Drop the XML prolog and DOCTYPE so the SVG can be inlined in an HTML page as it is.
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg
