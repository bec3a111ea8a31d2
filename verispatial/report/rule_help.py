"""The help of each rule kind, as the docs define it: what ``certify --sarif`` and ``gate --sarif`` put in each SARIF
rule's ``help`` (text and markdown; GitHub code scanning requires ``help.text`` and shows ``help.markdown``).

The docs are the one definition. ``build(root)`` reads, for every rule kind of ``SOURCES``, the pieces of the docs
that define it — an interpreter rule's bullet under docs/semantics.md "Rules", a row of a table (the checker's
families in docs/checker.md, the fidelity ledger), or a paragraph — and ``rule_help.json`` beside this module is its
output, shipped with the package (the docs are not). ``tests/test_rule_help.py`` fails when the two differ;
regenerate with ``python -m verispatial.report.rule_help .`` from the repository root.

Each entry: ``documentation`` (``<doc>#<anchor>``, a GitHub heading anchor: a rule's is its registry entry's
``anchor``, ``verispatial/ir/rules.py``; any other kind's is the section of its first piece),
``summary`` (one line, to follow the kind's name), ``text`` (plain text) and ``markdown``. A kind without an entry
takes its family's (``family:<name>``: the family's row of the checker's table), else ``default``.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from pathlib import Path

from verispatial.ir import rules as R
from verispatial.petri.position import RULES

SEMANTICS = "docs/semantics.md"
CHECKER = "docs/checker.md"
CI = "docs/ci.md"
README = "README.md"

#: One piece of a doc: (doc, how to find it, what): ``rule`` — the bullet under semantics.md "## Rules" that defines
#: that rule; ``row`` — the table row holding that text; ``para`` — the paragraph holding that text; ``sentences``
#: — the sentences of that paragraph that hold it.
Piece = tuple[str, str, str]

#: Family -> the text of its row in the checker's table of families (docs/checker.md).
_FAMILY_ROW = {
    R.Family.CIRCULAR_BUFFER.value: "capacity, one producer/consumer engine",
    R.Family.SEMAPHORE.value: "exact counting: no lost update",
    R.Family.ASYNC_NOC.value: "read published (push or multicast) without barrier",
    R.Family.ACCUMULATOR.value: "acquire within the target's accumulator tiles",
    R.Family.BOUNDS.value: "every tile access inside its tensor, affine and indirect",
    R.Family.MEMORY.value: "disjoint, inside usable memory, aligned",
    R.Family.HAPPENS_BEFORE.value: "per tile: activation read after completed write",
    R.Family.DEADLOCK.value: "no reachable state where every unfinished engine is blocked",
    R.Family.BALANCE.value: "every buffer whose counters outlive its section ends empty",
}

_HB = (SEMANTICS, "rule", R.TENSOR_RACE), (CHECKER, "row", _FAMILY_ROW[R.Family.HAPPENS_BEFORE.value])
_SEM = ((CHECKER, "row", _FAMILY_ROW[R.Family.SEMAPHORE.value]), (SEMANTICS, "rule", R.SEM_OVERSHOOT),
        (SEMANTICS, "rule", R.SEM_SET_RACE))
_MEMORY = ((CHECKER, "row", _FAMILY_ROW[R.Family.MEMORY.value]),)
_CERT = ((README, "sentences", "`--certificate` compares a certificate"),)

#: Where each rule kind is defined, its primary section first.
SOURCES: dict[str, tuple[Piece, ...]] = {
    **{r: ((SEMANTICS, "rule", r),) for r in RULES if r != R.RENDEZVOUS_EARLY},
    # The one rule defined in a paragraph (of "### Rendezvous", with the closing region it needs) not a bullet.
    R.RENDEZVOUS_EARLY: ((SEMANTICS, "para", "`rendezvous-early`: an engine"),),
    # The checker's obligations of tensor-race, each with the checker's statement of its question.
    R.HB_ACTIVATION: (*_HB, (CHECKER, "para", "- `hb-activation:T:R<W`")),
    R.HB_STATE: (*_HB, (CHECKER, "para", "- `hb-state:T:W<R`"), (CHECKER, "para", "- `hb-state:T:R<W`")),
    R.HB_WRITE_WRITE: (*_HB, (CHECKER, "para", "- `hb-write-write:T:W1~W2`")),
    R.HB_CROSS: (*_HB, (CHECKER, "sentences", "`hb-cross:<T>:after-section-<b>`")),
    R.HB_RENDEZVOUS: ((SEMANTICS, "para", "`rendezvous-early`: an engine"), (CHECKER, "row", _FAMILY_ROW[R.Family.HAPPENS_BEFORE.value])),
    R.RENDEZVOUS: ((SEMANTICS, "para", "`rendezvous-early`: an engine"), (CHECKER, "row", "every family per slice")),
    R.MCAST_PUBLISH: ((SEMANTICS, "rule", R.MCAST_PUBLISH_EARLY), (CHECKER, "row", "multicast address congruence")),
    R.MCAST_ADDRESS: ((SEMANTICS, "row", "multicast lands at the same L1 address"),
                      (CHECKER, "row", "multicast address congruence")),
    R.SEM_EXACT: _SEM, R.SEM_PROTOCOL: _SEM, R.SEM_FLAG_EARLY: _SEM,
    R.DEADLOCK: ((SEMANTICS, "para", "It **deadlocks**"), (CHECKER, "row", _FAMILY_ROW[R.Family.DEADLOCK.value])),
    R.MEMORY_DISJOINT: _MEMORY, R.MEMORY_RANGE: _MEMORY, R.MEMORY_MAP: _MEMORY,
    R.CERTIFICATE: _CERT,
    R.BUDGET: ((CHECKER, "para", "`budget:<family>`"),),
    **{f"gate-{s}": ((CI, "row", f"`gate-{s}`"), (CI, "sentences", "It fails (exit 1)"))
       for s in ("changed", "missing", "extra", "no-certificate", "bad-input", "error")},
    **{f"family:{f}": ((CHECKER, "row", row),) for f, row in _FAMILY_ROW.items()},
    # A front end's refusal: bad input at the user's source line, which certify --sarif writes as one result.
    "ttmetal-refused": ((CI, "sentences", "Rule `ttmetal-refused`"), (CI, "sentences", "The result is `kind: fail`")),
    "ttlang-refused": ((CI, "sentences", "Rule `ttlang-refused`"), (CI, "sentences", "The result is `kind: fail`")),
    "family:certificate": _CERT,
    "family:budget": ((CHECKER, "para", "`budget:<family>`"),),
    "family:gate": ((CI, "sentences", "It fails (exit 1)"),),
    "family:structure": ((CHECKER, "para", "is held to the op semantics"),),
    "default": ((CHECKER, "para", "is held to the op semantics"),),
}

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _slug(title: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped (letters, digits, ``-``, ``_`` and spaces kept),
    each space a ``-``."""
    t = re.sub(r"[`*]", "", title).strip().lower()
    t = "".join(c for c in t if c.isalnum() or c in "-_ ")
    return t.replace(" ", "-")


def _headings(text: str) -> list[tuple[int, str, str]]:
    """(line index, anchor, title) of every heading outside code fences, repeated anchors numbered as GitHub
    does (``aliases``, ``aliases-1``)."""
    out: list[tuple[int, str, str]] = []
    seen: dict[str, int] = {}
    fence = False
    for i, line in enumerate(text.split("\n")):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        m = _HEADING.match(line) if not fence else None
        if m:
            base = _slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.append((i, base if n == 0 else f"{base}-{n}", m.group(2)))
    return out


def anchors(text: str) -> list[str]:
    """The heading anchors of a Markdown document, in order."""
    return [a for _, a, _ in _headings(text)]


def _title(text: str, anchor: str) -> str:
    """The title of the heading whose anchor is ``anchor``; ``LookupError`` naming it when none is."""
    for _, a, title in _headings(text):
        if a == anchor:
            return title
    raise LookupError(f"no heading has the anchor {anchor!r}")


def _section_of(text: str, line: int) -> tuple[str, str]:
    """(anchor, title) of the heading above ``line``; the first heading when none is above."""
    hs = _headings(text)
    above = [h for h in hs if h[0] <= line] or hs[:1]
    return (above[-1][1], above[-1][2]) if above else ("", "")


def _defines(bullet: str, rule: str) -> bool:
    # "- `r`: ...", "- `a`, `r`: ...", "...; `r`: ...", "- `r`, decided per page: ...", "- `r` is decided ..."
    r = re.escape(rule)
    return re.search(rf"(?:\A- (?:`[a-z-]+`, )*|; )`{r}`(?::|,| is )", bullet) is not None


def _rule_bullet(text: str, rule: str) -> tuple[str, int]:
    """The top-level bullet under ``## Rules`` defining ``rule`` (continuation lines dedented by two) and its line."""
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if ln.strip() == "## Rules"), None)
    if start is None:
        raise LookupError(f"{SEMANTICS}: no ## Rules section")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    i = start
    while i < end:
        if lines[i].startswith("- "):
            j = i + 1
            while j < end and (lines[j].startswith("  ") or (not lines[j].strip() and j + 1 < end
                                                             and lines[j + 1].startswith("  "))):
                j += 1
            bullet = "\n".join(lines[i:j])
            if _defines(bullet, rule):
                return "\n".join(ln[2:] if ln.startswith("  ") else ln for ln in lines[i:j])[2:], i
            i = j
        else:
            i += 1
    raise LookupError(f"{SEMANTICS}: no bullet under ## Rules defines `{rule}`")


def _row(text: str, needle: str) -> tuple[str, int]:
    """The table row holding ``needle``: ``header: cell`` for each cell, one per line, and its line."""
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        if ln.startswith("|") and needle in ln:
            k = i
            while k > 0 and lines[k - 1].startswith("|"):
                k -= 1
            header = [c.strip() for c in lines[k].strip().strip("|").split("|")]
            cells = [c.strip() for c in ln.strip().strip("|").split("|")]
            return "\n".join(f"- {h}: {c}" for h, c in zip(header, cells, strict=False) if c), i
    raise LookupError(f"no table row holds {needle!r}")


def _para(text: str, needle: str) -> tuple[str, int]:
    """The paragraph (lines between blank lines, a heading, a code fence, a table or a list item; not a table row)
    holding ``needle``, and its first line."""
    lines = text.split("\n")

    def stop(ln: str) -> bool:
        return not ln.strip() or _HEADING.match(ln) is not None or ln.lstrip().startswith(("```", "|"))

    for i, ln in enumerate(lines):
        if needle in ln and not stop(ln):
            a = i
            while a > 0 and not stop(lines[a - 1]) and not lines[a].lstrip().startswith("- "):
                a -= 1
            b = i
            while b + 1 < len(lines) and not stop(lines[b + 1]) and not lines[b + 1].lstrip().startswith("- "):
                b += 1
            return "\n".join(lines[a:b + 1]), a
    raise LookupError(f"no paragraph holds {needle!r}")


def _sentences(text: str, needle: str) -> tuple[str, int]:
    """The sentences of the paragraph holding ``needle`` that mention it (a list item's ``- `` dropped)."""
    para, line = _para(text, needle)
    joined = re.sub(r"\s*\n\s*", " ", para).strip()
    joined = joined[2:] if joined.startswith("- ") else joined
    keep = [s for s in re.split(r"(?<=\.)\s+(?=[A-Z`])", joined) if needle in s]
    return " ".join(keep), line


def plain(markdown: str) -> str:
    """Markdown as plain text: code spans, emphasis and link targets dropped; a paragraph's lines joined, each list
    item on a line of its own (indented as in the source)."""
    t = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown)
    t = re.sub(r"\*\*([^*]+)\*\*", r"\1", t)
    t = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\1", t)
    t = t.replace("`", "")
    paras = []
    for para in t.split("\n\n"):
        lines: list[str] = []
        for ln in para.split("\n"):
            if not lines or ln.lstrip().startswith("- "):
                lines.append(ln.rstrip())
            else:
                lines[-1] += " " + ln.strip()
        paras.append("\n".join(lines).strip("\n"))
    return "\n\n".join(paras)


def _clause(text: str, name: str) -> str | None:
    """What ``text`` says after defining ``name`` (``name:``, ``name is``, ``a, name:``), to the end of its clause."""
    m = re.search(rf"(?:^|; |\. |- |, ){re.escape(name)}(?::| is |, )\s*(.*)", text)
    if m is None:
        return None
    body = re.sub(r"^(?:[a-z-]+, )*[a-z-]+: ", "", m.group(1))  # "a, b: ..." defines both
    head = _first_clause(body)
    if head == body and body[-1:].isalnum():  # the text breaks off here (a list follows)
        return body + " \u2026"
    return head.rstrip(";")


def _first_clause(text: str) -> str:
    """``text`` up to its first ``. `` or ``; `` outside parentheses (inclusive)."""
    depth = 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if c in ".;" and depth == 0 and text[i + 1:i + 2] in (" ", ""):
            return text[:i + 1]
    return text


def _summary(kind: str, first: str, how: str, what: str) -> str:
    """One line, after the kind's name: the clause defining the kind (or, for a kind checked for another rule, that
    rule's clause); for a table row its first cell past the key (``family``, ``rule``); else the first paragraph of
    the piece (its first sentence when long)."""
    t = plain(first).split("\n\n")[0]
    head = t.split("\n")[0]
    own = _clause(head, kind)
    defined = re.match(r"`([a-z-]+)`:", what)
    named = what if how == "rule" else (defined.group(1) if defined else None)
    if own is not None:
        line = own
    elif named is not None:
        line = f"checked for {named}: {_clause(head, named)}"
    elif how == "row":
        cells = [c[2:].split(": ", 1) for c in t.split("\n")]
        line = next(v for h, v in cells if h not in ("family", "rule"))
    else:
        line = t if len(t) <= 300 else _first_clause(t)
    return line if len(line) <= 300 else line[:297].rsplit(" ", 1)[0] + " \u2026"


def build(root: str | Path) -> dict[str, dict[str, str]]:
    """Every entry of ``SOURCES`` read from the docs under repository ``root``; ``LookupError`` when a doc no longer
    holds a piece (the name of the doc and of the piece)."""
    docs: dict[str, str] = {}
    out: dict[str, dict[str, str]] = {}
    for kind, pieces in SOURCES.items():
        parts: list[str] = []
        where: tuple[str, str, str] | None = None
        for doc, how, what in pieces:
            if doc not in docs:
                docs[doc] = (Path(root) / doc).read_text(encoding="utf-8")
            text = docs[doc]
            find = {"rule": _rule_bullet, "row": _row, "para": _para, "sentences": _sentences}[how]
            md, line = find(text, what)
            parts.append(md)
            if where is None:
                where = (doc, *_section_of(text, line))
        assert where is not None  # every entry has a piece
        doc, anchor, section = where
        if kind in R.BY_NAME:  # a rule's section is the registry's (its anchor), not wherever its first piece sits
            doc, _, anchor = R.BY_NAME[kind].anchor.partition("#")
            if doc not in docs:
                docs[doc] = (Path(root) / doc).read_text(encoding="utf-8")
            section = _title(docs[doc], anchor)
        markdown = "\n\n".join(parts) + f"\n\nDefined in `{doc}`, section \u201c{plain(section)}\u201d."
        out[kind] = {"documentation": f"{doc}#{anchor}",
                     "summary": _summary(kind, parts[0], pieces[0][1], pieces[0][2]),
                     "text": plain(markdown),
                     "markdown": markdown}
    return out


_TABLE = Path(__file__).with_name("rule_help.json")


@cache
def load() -> dict[str, dict[str, str]]:
    """The shipped table (``build``'s output)."""
    data: dict[str, dict[str, str]] = json.loads(_TABLE.read_text(encoding="utf-8"))
    return data


def help_for(kind: str, family: str) -> dict[str, str]:
    """The entry of rule kind ``kind``, else of its family, else the default one."""
    table = load()
    return table.get(kind) or table.get(f"family:{family}") or table["default"]


def _main(argv: list[str]) -> int:
    root = argv[0] if argv else "."
    _TABLE.write_text(json.dumps(build(root), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
