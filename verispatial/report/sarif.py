"""SARIF 2.1.0 (OASIS Standard, errata 01) for code-scanning tools: ``certify --sarif`` and ``gate --sarif``.

One *rule* per rule kind — the part of an obligation's name before its first ``:`` (``cb-capacity``,
``deadlock``, ``hb-activation``, ``memory-disjoint``, ...; a composed program's ``slice<j>/`` prefix is not part
of it) — and one *result* per obligation that is not proved. Each result is located in ``program.json`` by the
JSON pointer (RFC 6901) of the entity it speaks of: the op (``/programs/<engine program>/ops/<i>/body/<j>``) from
the counterexample's engine and path, or the first stuck engine's position of a deadlock, or the op named in
the obligation; else the engine program, the buffer, the semaphore or the tensor it names; else the document. The
pointer is the result's logical location (``fullyQualifiedName``, kind ``element``) and, with the line and
column where that JSON value starts in the file, its physical location.

Levels: refuted and error are ``error``, failed-to-prove is ``warning`` (never accepted, never called refuted).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from verispatial.certify.report import Report, Result, Verdict

#: The ``$schema`` of the documents written: the official schema's own id.
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

_ENGINE = r"\((-?\d+),(-?\d+)\)\.([a-z_]+)"
_ENGINE_PATH = re.compile(_ENGINE + r":?\[([\d, ]*)\]")
_ENGINE_ONLY = re.compile(_ENGINE)
_BUFFER = re.compile(r"(?:^|[:<~])b(\d+)\b")
_SEM = re.compile(r"\bsem(\d+)@")
_SLICE = re.compile(r"^slice\d+/")

LEVEL = {Verdict.REFUTED: "error", Verdict.FAILED: "warning", Verdict.ERROR: "error"}
KIND = {Verdict.REFUTED: "fail", Verdict.FAILED: "open", Verdict.ERROR: "fail"}


def rule_kind(name: str) -> str:
    """The rule kind of obligation ``name``: its part before the first ``:`` (a ``slice<j>/`` prefix dropped)."""
    return _SLICE.sub("", name).split(":", 1)[0]


@attrs.frozen
class ProgramIndex:
    """What locating needs of one program file: its engine keys in file order, its tensors' names."""

    engines: tuple[str, ...]
    tensors: tuple[str, ...]

    @classmethod
    def of(cls, doc: dict[str, Any]) -> ProgramIndex:
        """From the program's JSON document (``program_to_dict``'s shape)."""
        engines = []
        for ep in doc.get("programs", []):
            site = ep.get("site", [0, 0])
            engines.append(f"({site[0]},{site[1]}).{ep.get('engine')}")
        return cls(tuple(engines), tuple(str(t.get("name")) for t in doc.get("tensors", [])))


def escape(token: str | int) -> str:
    """One reference token of a JSON pointer (RFC 6901: ``~`` as ``~0``, ``/`` as ``~1``)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def op_pointer(index: ProgramIndex, engine: str, path: Sequence[int] | None) -> str | None:
    """The JSON pointer of the op at ``path`` of engine ``engine`` (of its engine program when ``path`` is None or
    empty); None when the program has no such engine."""
    if engine not in index.engines:
        return None
    out = f"/programs/{index.engines.index(engine)}"
    if not path:
        return out
    out += f"/ops/{path[0]}"
    for i in path[1:]:
        out += f"/body/{i}"
    return out


def _path(v: Any) -> list[int] | None:
    if isinstance(v, list) and all(isinstance(i, int) for i in v):
        return list(v)
    return None


def pointer_of(r: Result, index: ProgramIndex) -> str:
    """The JSON pointer of what ``r`` speaks of (module docstring); ``""`` (the document) when nothing finer."""
    cex = r.counterexample or {}
    candidates: list[tuple[Any, Any]] = []
    if isinstance(cex.get("engine"), str):
        candidates.append((cex["engine"], _path(cex.get("path"))))
    stuck = cex.get("stuck")
    if isinstance(stuck, list) and stuck and isinstance(stuck[0], dict):
        pos = stuck[0].get("position", stuck[0])
        if isinstance(pos, dict) and isinstance(pos.get("engine"), str):
            candidates.append((pos["engine"], _path(pos.get("path"))))
    for engine, path in candidates:
        got = op_pointer(index, engine, path)
        if got is not None:
            return got
    name = _SLICE.sub("", r.name)
    m = _ENGINE_PATH.search(name)
    if m:
        path = [int(x) for x in m.group(4).replace(" ", "").split(",") if x]
        got = op_pointer(index, f"({m.group(1)},{m.group(2)}).{m.group(3)}", path)
        if got is not None:
            return got
    kind = rule_kind(r.name)
    buffers = cex.get("buffers")
    if isinstance(buffers, list) and buffers and isinstance(buffers[0], int):
        return f"/buffers/{buffers[0]}"
    m2 = _BUFFER.search(name)
    if m2 and kind.startswith(("cb-", "balance-cb", "alias")):
        return f"/buffers/{m2.group(1)}"
    m3 = _SEM.search(name)
    if m3:
        return f"/semaphores/{m3.group(1)}"
    m4 = _ENGINE_ONLY.search(name)
    if m4:
        got = op_pointer(index, f"({m4.group(1)},{m4.group(2)}).{m4.group(3)}", None)
        if got is not None:
            return got
    if kind in ("bounds", "hb-activation", "hb-state", "hb-write-write", "output"):
        parts = name.split(":")
        if len(parts) > 1 and parts[1] in index.tensors:
            return f"/tensors/{index.tensors.index(parts[1])}"
    return ""


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def locate(text: str, pointers: Iterable[str]) -> dict[str, tuple[int, int]]:
    """Line and column (both from 1; columns in characters) where the JSON value at each pointer starts in the JSON
    ``text``; pointers that name no value are left out. One pass over the text, stopping once all are found."""
    want = set(pointers)
    found: dict[str, tuple[int, int]] = {}
    if not want:
        return found
    # Each open container: [is_object, current key or index, expecting a key].
    stack: list[list[Any]] = []
    starts: dict[str, int] = {}

    def here() -> str:
        return "".join("/" + escape(c[1]) for c in stack)

    for m in _TOKEN.finditer(text):
        t = m.group()
        top = stack[-1] if stack else None
        if t == ":":
            if top is not None:
                top[2] = False
            continue
        if t == ",":
            if top is not None:
                if top[0]:
                    top[2] = True
                else:
                    top[1] += 1
            continue
        if t in ("}", "]"):
            stack.pop()
            continue
        if top is not None and top[0] and top[2] and t.startswith('"'):
            top[1] = json.loads(t)
            continue
        ptr = here()
        if ptr in want and ptr not in starts:
            starts[ptr] = m.start()
            if len(starts) == len(want):
                break
        if t == "{":
            stack.append([True, "", True])
        elif t == "[":
            stack.append([False, 0, False])
    for ptr, off in starts.items():
        line = text.count("\n", 0, off) + 1
        col = off - (text.rfind("\n", 0, off) + 1) + 1
        found[ptr] = (line, col)
    return found


@attrs.frozen
class Artifact:
    """One program file of the log: ``uri`` as written (relative paths stay relative), its JSON ``text`` (None when
    it cannot be read: results then point at the file without a region) and the report on it."""

    uri: str
    report: Report
    text: str | None = None


def rule_description(kind: str, family: str) -> str:
    return f"verispatial obligation {kind} (family {family}); rules are documented in docs/semantics.md"


def sarif_log(artifacts: Sequence[Artifact], exit_code: int, extra: Sequence[dict[str, Any]] = (),
              tool_version: str | None = None) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run: every obligation not proved of every artifact's report as a result (rule =
    its kind), plus ``extra`` results already in SARIF form (the gate's own findings: a missing program, a changed
    verdict), whose ``ruleId`` gets a rule too."""
    from verispatial import __version__

    rules: list[dict[str, Any]] = []
    rule_index: dict[str, int] = {}

    def rule(kind: str, family: str) -> int:
        if kind not in rule_index:
            rule_index[kind] = len(rules)
            rules.append({"id": kind, "name": "".join(w.capitalize() for w in re.split(r"[^A-Za-z0-9]+", kind) if w),
                          "shortDescription": {"text": f"{kind} ({family})"},
                          "fullDescription": {"text": rule_description(kind, family)},
                          "properties": {"family": family}})
        return rule_index[kind]

    results: list[dict[str, Any]] = []
    for ai, art in enumerate(artifacts):
        bad = [r for r in art.report.results if r.verdict != Verdict.PROVED]
        if not bad:
            continue
        index = ProgramIndex((), ())
        doc: Any = None
        if art.text is not None:
            try:
                doc = json.loads(art.text)
            except ValueError:
                doc = None
            if isinstance(doc, dict):
                index = ProgramIndex.of(doc)
        pointers = {id(r): pointer_of(r, index) for r in bad}
        where = locate(art.text, {p for p in pointers.values() if p}) if art.text is not None and doc else {}
        for r in bad:
            kind = rule_kind(r.name)
            text = f"{r.verdict.value}: {r.family}/{r.name}" + (f": {r.reason}" if r.reason else "")
            summary = (r.counterexample or {}).get("summary")
            if isinstance(summary, str) and summary != r.reason:
                text += f" ({summary})"
            ptr = pointers[id(r)]
            phys: dict[str, Any] = {"artifactLocation": {"uri": art.uri, "index": ai}}
            if ptr in where:
                line, col = where[ptr]
                phys["region"] = {"startLine": line, "startColumn": col}
            elif doc is None and _source_line(r.counterexample) is not None:
                # a source file read by a front end (TT-Lang .py): the line the counterexample's first op came from
                line, col = _source_line(r.counterexample)  # type: ignore[misc]
                phys["region"] = {"startLine": line, "startColumn": max(col, 1)}
            elif art.text is not None and ptr == "":
                phys["region"] = {"startLine": 1, "startColumn": 1}
            props: dict[str, Any] = {"obligation": r.name, "verdict": r.verdict.value, "family": r.family,
                                     "program": art.report.program, "seconds": round(r.seconds, 3),
                                     "jsonPointer": ptr}
            if r.assumes:
                props["assumes"] = list(r.assumes)
            if r.counterexample is not None:
                props["counterexample"] = r.counterexample
            results.append({
                "ruleId": kind,
                "ruleIndex": rule(kind, r.family),
                "level": LEVEL[r.verdict],
                "kind": KIND[r.verdict],
                "message": {"text": text},
                "locations": [{"physicalLocation": phys,
                               "logicalLocations": [{"fullyQualifiedName": ptr or "/", "kind": "element"}]}],
                "partialFingerprints": {"obligation/v1": f"{art.report.program}:{r.name}"},
                "properties": props,
            })
    for x in extra:
        kind = str(x["ruleId"])
        results.append({**x, "ruleIndex": rule(kind, str(x.get("properties", {}).get("family", "gate")))})
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "verispatial", "version": tool_version or __version__, "rules": rules}},
            "artifacts": [{"location": {"uri": a.uri}} for a in artifacts],
            "invocations": [{"executionSuccessful": exit_code not in (2, 4), "exitCode": exit_code}],
            "results": results,
            "properties": {"programs": [a.report.program for a in artifacts],
                           "targets": sorted({a.report.target for a in artifacts})},
        }],
    }


def _source_line(cex: Any) -> tuple[int, int] | None:
    """(line, column) of the first ``source`` (``FILE:LINE[:COL]: text``, report/sources.py) in a counterexample."""
    if isinstance(cex, dict):
        src = cex.get("source")
        m = re.match(r".*?:(\d+)(?::(\d+))?(?:: |$)", src) if isinstance(src, str) else None
        if m:
            return int(m.group(1)), int(m.group(2) or 0)
        values: Any = cex.values()
    elif isinstance(cex, list):
        values = cex
    else:
        return None
    for v in values:
        got = _source_line(v)
        if got is not None:
            return got
    return None


def read_text(path: str | Path) -> str | None:
    """The file's text, or None when it cannot be read as UTF-8."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
