"""SARIF 2.1.0 (OASIS Standard, errata 01) for code-scanning tools: ``certify --sarif`` and ``gate --sarif``.

One *rule* per rule kind — the part of an obligation's name before its first ``:`` (``cb-capacity``,
``deadlock``, ``hb-activation``, ``memory-disjoint``, ...; a composed program's ``slice<j>/`` prefix is not part
of it) — and one *result* per obligation that is not proved. Each result is located in ``program.json`` by the
JSON pointer (RFC 6901) of the entity it speaks of: the op (``/programs/<engine program>/ops/<i>/body/<j>``) from
the counterexample's engine and path, or the first stuck engine's position of a deadlock, or the op named in
the obligation; else the engine program, the buffer, the semaphore or the tensor it names; else the document. The
pointer is the result's logical location (``fullyQualifiedName``, kind ``element``) and, with the line and
column where that JSON value starts in the file, its physical location. The gate's own findings (``Finding``: a
missing, extra or changed program, one without its certificate) sit at the manifest entry or at line 1 of the file.

Every rule carries the help the docs give it (``rule_help``: text and Markdown, which GitHub code scanning requires,
and ``helpUri`` when the documentation's absolute address is known: ``docs_url``).

**Kinds and levels** (SARIF §3.27.9, §3.27.10): refuted is ``kind: fail`` at ``level: error``; failed-to-prove is
``kind: open`` — a proof tool that could not decide — whose level must be ``none`` (never accepted, never called
refuted); a checker error is ``open`` too and, besides, an error notification of the invocation (§3.20.21: the run
failed).

**URIs** are relative to ``%SRCROOT%``, the git work tree holding the current directory (else that directory),
percent-encoded (RFC 3986), never absolute and never with ``..``; ``originalUriBaseIds`` declares ``%SRCROOT%``
without its machine-dependent address (§3.14.14 allows it; Appendix F.4). A file outside that tree is relative to a
base of its own, ``ROOT<k>`` (its directory, whose ``file:`` URI ``originalUriBaseIds`` gives).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from verispatial.certify.report import Report, Result, Verdict
from verispatial.errors import SourcePlace, SourceRefusal
from verispatial.ir import obligation
from verispatial.ir.source import SourceLoc
from verispatial.report import rule_help
from verispatial.report.consequences import Grouping
from verispatial.report.hostargs import arg_lines, args_of, field_position
from verispatial.report.sources import located_sources

#: The ``$schema`` of the documents written: the official schema's own id.
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

#: The largest file whose text a region is measured in (bytes).
TEXT_MAX = 64 * 1024 * 1024

#: The URI base id of every repository-relative location (the name GitHub code scanning's examples use).
SRCROOT = "%SRCROOT%"

# §3.27.10: a result whose kind is not "fail" has level "none".
LEVEL = {Verdict.REFUTED: "error", Verdict.FAILED: "none", Verdict.ERROR: "none"}
KIND = {Verdict.REFUTED: "fail", Verdict.FAILED: "open", Verdict.ERROR: "open"}

# GitHub code scanning's limits on a rule's descriptions ("SARIF support for code scanning").
_DESCRIPTION_MAX = 1024


def rule_kind(name: str) -> str:
    """The rule kind of obligation ``name`` (its typed id's ``kind``); the name itself when it is no obligation id
    (a gate-level finding's rule)."""
    try:
        return obligation.parse(name).kind
    except obligation.BadObligationId:
        return name


@attrs.frozen
class ProgramIndex:
    """What locating needs of one program file: its engine keys in file order, its tensors' names; for a templated
    program (format version 3), where each of its sections sits instead (``TemplatedSections``)."""

    engines: tuple[str, ...]
    tensors: tuple[str, ...]
    templated: TemplatedSections | None = None

    @classmethod
    def of(cls, doc: dict[str, Any]) -> ProgramIndex:
        """From the program's JSON document (``program_to_dict``'s shape)."""
        engines = []
        for ep in doc.get("programs", []):
            site = ep.get("site", [0, 0])
            engines.append(f"({site[0]},{site[1]}).{ep.get('engine')}")
        tensors = tuple(str(t.get("name")) for t in doc.get("tensors", []))
        if doc.get("version") == 3:
            from verispatial.errors import VerispatialError
            from verispatial.ir.serialize import document_from_dict
            from verispatial.ir.templated import TemplatedProgram

            try:
                tp = document_from_dict(doc)
            except VerispatialError:
                tp = None
            if isinstance(tp, TemplatedProgram):
                return cls((), tensors, TemplatedSections.of(tp))
        return cls(tuple(engines), tensors)


@attrs.frozen
class TemplatedSections:
    """Where the ops, buffers and semaphores of a templated program's expansion are stated in its document: per engine
    key, each section's first top-level op there with its template and the engine program's position in it (None:
    the template does not run there); per section its buffer and semaphore shifts."""

    starts: dict[str, tuple[int, ...]]
    placed: dict[str, tuple[tuple[int, int | None, int], ...]]  # per engine: (template, program index, ops) per section
    shifts: tuple[tuple[int, int, int], ...]
    templates: tuple[int, ...]

    @classmethod
    def of(cls, tp: Any) -> TemplatedSections:
        placed: dict[str, list[tuple[int, int | None, int]]] = {}
        where = [{(ep.site, ep.engine): i for i, ep in enumerate(t.programs)} for t in tp.templates]
        for who in tp.participants:
            key = f"{who[0]}.{who[1].value}"
            mine = placed[key] = []
            for inst in tp.instances:
                i = where[inst.template].get(who)
                mine.append((inst.template, i, 0 if i is None else len(tp.templates[inst.template].programs[i].ops)))
        return cls(dict(tp.section_starts), {k: tuple(v) for k, v in placed.items()}, tp.shifts,
                   tuple(i.template for i in tp.instances))

    def op(self, engine: str, path: Sequence[int] | None) -> str | None:
        """The pointer of the op (``path`` in the expansion) in its section's template, or of the section entry for
        a rendezvous op; None for an engine the program does not have."""
        starts = self.starts.get(engine)
        if starts is None:
            return None
        if not path:
            return ""
        k = max(bisect.bisect_right(starts, path[0]) - 1, 0)
        j, i, n = self.placed[engine][k]
        top = path[0] - starts[k]
        if i is None or top >= n:
            return f"/sections/{k}"  # the rendezvous after the section
        out = f"/templates/{j}/programs/{i}/ops/{top}"
        for x in path[1:]:
            out += f"/body/{x}"
        return out

    def entity(self, kind: str, ident: int) -> str:
        """The pointer of buffer or semaphore ``ident`` of the expansion in its section's template."""
        col = 0 if kind == "buffers" else 1
        k = max(bisect.bisect_right([s[col] for s in self.shifts[:-1]], ident) - 1, 0)
        return f"/templates/{self.templates[k]}/{kind}/{ident - self.shifts[k][col]}"


def escape(token: str | int) -> str:
    """One reference token of a JSON pointer (RFC 6901: ``~`` as ``~0``, ``/`` as ``~1``)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def op_pointer(index: ProgramIndex, engine: str, path: Sequence[int] | None) -> str | None:
    """The JSON pointer of the op at ``path`` of engine ``engine`` (of its engine program when ``path`` is None or
    empty); None when the program has no such engine."""
    if index.templated is not None:
        return index.templated.op(engine, path)
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
    try:
        oid = obligation.parse(r.name)
    except obligation.BadObligationId:
        return ""
    op = oid.op
    if op is not None and op.path is not None:
        got = op_pointer(index, op.engine, op.path)
        if got is not None:
            return got
    buffers = cex.get("buffers")
    in_templates = index.templated
    if isinstance(buffers, list) and buffers and isinstance(buffers[0], int):
        return in_templates.entity("buffers", buffers[0]) if in_templates else f"/buffers/{buffers[0]}"
    if oid.buffer is not None:
        return in_templates.entity("buffers", oid.buffer) if in_templates else f"/buffers/{oid.buffer}"
    if oid.word is not None:
        return in_templates.entity("semaphores", oid.word.sem) if in_templates else f"/semaphores/{oid.word.sem}"
    if op is not None:
        got = op_pointer(index, op.engine, None)
        if got is not None:
            return got
    if oid.tensor is not None and oid.tensor in index.tensors:
        return f"/tensors/{index.tensors.index(oid.tensor)}"
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
    """One program file of the log: ``path`` as given (relative to the current directory, or absolute), its JSON
    ``text`` (None when it cannot be read: results then sit at line 1 of the file), the report on it and its
    ``grouping`` (``consequences.py``: a consequence's result names its finding in ``properties.consequenceOf``
    and relates the finding's place; the finding lists them in ``properties.consequences``)."""

    path: str
    report: Report
    text: str | None = None
    grouping: Grouping | None = None
    #: The user's source line of the op each unproved obligation without a counterexample names
    #: (``sources.obligation_sources``): such a result sits there, the op in the program beside it.
    op_sources: Mapping[str, SourceLoc] = attrs.field(factory=dict)
    #: Puts the program's names into a message (``names.namer`` of the program: ``c_0@(1,0)``, not ``b1``).
    name: Callable[[str], str] = str


@attrs.frozen
class Finding:
    """A result that is not an obligation (the gate's): rule id, message, the file it sits in and the JSON pointer
    of the value there (None, or a pointer the file does not hold: line 1), related places as (file, pointer),
    and properties."""

    rule: str
    message: str
    path: str
    pointer: str | None = None
    related: tuple[tuple[str, str | None], ...] = ()
    properties: dict[str, Any] = attrs.field(factory=dict)


def source_root(start: str | Path | None = None) -> Path:
    """The ``%SRCROOT%`` of a log written from directory ``start`` (default: the current one): the nearest
    directory at or above it holding ``.git`` (a directory, or the file of a linked work tree), else ``start``."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    return here


def docs_url() -> str | None:
    """The absolute URL of the ``docs/`` folder the rules' ``helpUri`` point into: ``$VERISPATIAL_DOCS_URL``, else
    the installed package's ``Documentation`` project URL; None when neither is an absolute URL."""
    url = os.environ.get("VERISPATIAL_DOCS_URL", "")
    if not url:
        try:
            from importlib.metadata import PackageNotFoundError, metadata

            for entry in metadata("verispatial").get_all("Project-URL") or []:
                label, _, value = entry.partition(",")
                if label.strip().lower() == "documentation":
                    url = value.strip()
        except PackageNotFoundError:
            url = ""
    parts = urllib.parse.urlsplit(url)
    if not (parts.scheme and parts.netloc) or parts.query or parts.fragment:
        return None
    return url if url.endswith("/") else url + "/"


class _Places:
    """URIs relative to ``%SRCROOT%`` (or to a base of their own outside it) and the log's ``artifacts``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bases: dict[Path, str] = {}
        self.index: dict[Path, int] = {}
        self.artifacts: list[dict[str, Any]] = []
        self.texts: dict[Path, str | None] = {}

    def location(self, path: str | Path) -> dict[str, Any]:
        """The ``artifactLocation`` of ``path`` (percent-encoded relative URI, base id, artifact index)."""
        full = Path(path).resolve()
        try:
            rel, base = full.relative_to(self.root), SRCROOT
        except ValueError:
            top = full.parent
            base = self.bases.setdefault(top, f"ROOT{len(self.bases) + 1}")
            rel = full.relative_to(top)
        art = {"uri": urllib.parse.quote(rel.as_posix(), safe="/"), "uriBaseId": base}
        if full not in self.index:
            self.index[full] = len(self.artifacts)
            self.artifacts.append({"location": dict(art)})
        return {**art, "index": self.index[full]}

    def text(self, path: str | Path, known: str | None = None) -> str | None:
        """The file's text for its regions: only a regular file of at most ``TEXT_MAX`` bytes is read (a source
        location may name any path: a device, a pipe or a huge file gets regions without an end column)."""
        full = Path(path).resolve()
        if full not in self.texts:
            if known is not None:
                self.texts[full] = known
            else:
                try:
                    ok = full.is_file() and full.stat().st_size <= TEXT_MAX
                except OSError:
                    ok = False
                self.texts[full] = read_text(full) if ok else None
        return self.texts[full]

    def region(self, path: str | Path, line: int, col: int) -> dict[str, int]:
        """The region from (``line``, ``col``) to the end of that line (GitHub code scanning documents all four
        fields as required; columns count code points: the run's ``columnKind``), at least one character."""
        text = self.text(path)
        lines = text.split("\n") if text is not None else []
        width = len(lines[line - 1].rstrip("\r")) if line <= len(lines) else 0
        return {"startLine": line, "startColumn": col, "endLine": line, "endColumn": max(width + 1, col + 1)}

    def physical(self, path: str | Path, pointer: str | None) -> dict[str, Any]:
        """``physicalLocation`` of the JSON value at ``pointer`` in ``path``; line 1 when it is not found."""
        text = self.text(path)
        line, col = (1, 1)
        if pointer is not None and text is not None:
            line, col = locate(text, [pointer]).get(pointer, (1, 1))
        return {"artifactLocation": self.location(path), "region": self.region(path, line, col)}

    def original_uri_base_ids(self) -> dict[str, Any]:
        out: dict[str, Any] = {SRCROOT: {"description": {
            "text": "The root of the source tree: the git work tree the analysis ran in (else its directory)."}}}
        for top, base in self.bases.items():
            # "/" is already a directory URI (file:///); appending another slash would give file:////.
            uri = top.as_uri()
            out[base] = {"uri": uri if uri.endswith("/") else uri + "/",
                         "description": {"text": "The directory of a file outside the source tree."}}
        return out


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 2].rsplit(" ", 1)[0] + " \u2026"


def rule_descriptor(kind: str, family: str, docs: str | None) -> dict[str, Any]:
    """The ``reportingDescriptor`` of rule kind ``kind``: its help from the docs (``rule_help``), its section's
    address as ``helpUri`` when ``docs`` (the ``docs/`` folder's absolute URL) is known."""
    h = rule_help.help_for(kind, family)
    first = h["text"].split("\n\n")[0]
    out: dict[str, Any] = {
        "id": kind,
        "name": "".join(w.capitalize() for w in re.split(r"[^A-Za-z0-9]+", kind) if w),
        "shortDescription": {"text": _clip(f"{kind}: {h['summary']}", _DESCRIPTION_MAX)},
        "fullDescription": {"text": _clip(first, _DESCRIPTION_MAX)},
        "help": {"text": h["text"], "markdown": h["markdown"]},
        "defaultConfiguration": {"level": "error"},
        "properties": {"family": family, "documentation": h["documentation"], "tags": [family]},
    }
    if docs is not None:
        doc = h["documentation"]
        out["helpUri"] = urllib.parse.urljoin(docs, doc[len("docs/"):] if doc.startswith("docs/") else "../" + doc)
    return out


def _fingerprints(key: str, identity: str, where: str) -> dict[str, str]:
    """``key`` (our own, versioned: ``identity``) and ``primaryLocationLineHash``, the one code scanning matches
    alerts by: from the file's URI and the identity, not from the line's text (an op's line in a program file is
    ``{`` for many ops and moves with edits elsewhere; an obligation's name is stable: it is the certificate's
    key)."""
    digest = hashlib.sha256(f"{where}\0{identity}".encode()).hexdigest()[:16]
    return {key: identity, "primaryLocationLineHash": f"{digest}:1"}


def sarif_log(artifacts: Sequence[Artifact], exit_code: int, extra: Sequence[Finding] = (),
              tool_version: str | None = None, root: str | Path | None = None,
              docs: str | None = None) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run: every obligation not proved of every artifact's report as a result (rule =
    its kind), plus the ``extra`` findings (the gate's own), each rule with its help. URIs are relative to ``root``
    (default: ``source_root()``); ``docs`` is the ``docs/`` folder's URL for ``helpUri`` (default: ``docs_url()``)."""
    places = _Places(Path(root).resolve() if root is not None else source_root())
    rules = _Rules(docs if docs is not None else docs_url())
    results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    for art in artifacts:
        places.location(art.path)  # every program is an artifact, in order, whatever its results
        places.text(art.path, art.text)
    for art in artifacts:
        _artifact_results(art, places, rules, results, notifications)
    results += [_extra_result(x, places, rules) for x in extra]
    invocation: dict[str, Any] = {"executionSuccessful": exit_code not in (2, 4) and not notifications,
                                  "exitCode": exit_code}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return _log(places, rules, invocation, results, tool_version,
                {"programs": [a.report.program for a in artifacts],
                 "targets": sorted({a.report.target for a in artifacts})})


def _log(places: _Places, rules: _Rules, invocation: dict[str, Any], results: list[dict[str, Any]],
         tool_version: str | None, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """The SARIF document of one run: the tool with its ``rules``, ``places``' bases and artifacts, the
    ``invocation``, the ``results`` and the run's ``properties`` (none: left out)."""
    from verispatial import __version__

    run: dict[str, Any] = {
        "tool": {"driver": {"name": "verispatial", "version": tool_version or __version__, "rules": rules.rules}},
        "originalUriBaseIds": places.original_uri_base_ids(),
        "columnKind": "unicodeCodePoints",  # locate counts characters, not UTF-16 code units (the default)
        "artifacts": places.artifacts,
        "invocations": [invocation],
        "results": results,
    }
    if properties is not None:
        run["properties"] = properties
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def refusal_log(refusal: SourceRefusal, tool_version: str | None = None, root: str | Path | None = None,
                docs: str | None = None) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one front end's refusal (bad input at a line of the user's source, exit 2): one result,
    rule ``refusal.kind`` (``ttmetal-refused``, ``ttlang-refused``) at ``level: error``, its message the refusal's one
    line, located at the refused construct's file and line (the kernel's call that got there a related location);
    the invocation unsuccessful with exit code 2. ``root`` and ``docs`` as for ``sarif_log``."""
    places = _Places(Path(root).resolve() if root is not None else source_root())
    rules = _Rules(docs if docs is not None else docs_url())

    def physical(at: SourcePlace) -> dict[str, Any]:
        # line 0: the front end knows no line (a construct of the whole file); the region is then left out
        phys: dict[str, Any] = {"artifactLocation": places.location(at.file)}
        if at.line >= 1:
            phys["region"] = places.region(at.file, at.line, 1)
        return phys

    at = physical(refusal.at)
    result: dict[str, Any] = {
        "ruleId": refusal.kind,
        "ruleIndex": rules.index(refusal.kind, "frontend"),
        "level": "error",
        "kind": "fail",
        "message": {"text": refusal.line()},
        "locations": [{"physicalLocation": at}],
        "partialFingerprints": _fingerprints("refusal/v1", f"{refusal.kind}:{refusal.construct}",
                                             at["artifactLocation"]["uri"]),
        "properties": {"frontend": refusal.frontend, "construct": refusal.construct, "detail": refusal.detail},
    }
    if refusal.called_at is not None:
        result["relatedLocations"] = [{"id": 1, "message": {"text": f"called here: {refusal.called_at.text}"},
                                       "physicalLocation": physical(refusal.called_at)}]
    return _log(places, rules, {"executionSuccessful": False, "exitCode": refusal.exit_code}, [result], tool_version)


class _Rules:
    """The run's rule descriptors, each kind once, in order of first use (a result's ``ruleIndex``)."""

    def __init__(self, docs_base: str | None) -> None:
        self.docs_base = docs_base
        self.rules: list[dict[str, Any]] = []
        self._index: dict[str, int] = {}

    def index(self, kind: str, family: str) -> int:
        if kind not in self._index:
            self._index[kind] = len(self.rules)
            self.rules.append(rule_descriptor(kind, family, self.docs_base))
        return self._index[kind]


def _artifact_results(art: Artifact, places: _Places, rules: _Rules, results: list[dict[str, Any]],
                      notifications: list[dict[str, Any]]) -> None:
    """Append to ``results`` one result per obligation of ``art``'s report not proved, located at its op in the
    program's text (or the front end's source line), and to ``notifications`` one per checker error."""
    bad = [r for r in art.report.results if r.verdict != Verdict.PROVED]
    if not bad:
        return
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

    def physical(r: Result) -> dict[str, Any]:
        line, col = where.get(pointers[id(r)], (1, 1))
        return {"artifactLocation": places.location(art.path), "region": places.region(art.path, line, col)}

    grouping = art.grouping
    # where each finding's own result is located (for a front end's program, the source line the engineer wrote, as
    # below), so a consequence relates the place its finding is reported at
    finding_at = {r.name: _source_locations(r, physical(r), places, art.op_sources.get(r.name))[0]
                  for r in bad if grouping is not None and r.name in grouping.findings}
    for r in bad:
        kind = rule_kind(r.name)
        text = f"{r.verdict.value}: {r.family}/{r.name}" + (f": {art.name(r.reason)}" if r.reason else "")
        summary = (r.counterexample or {}).get("summary")
        if isinstance(summary, str) and summary != r.reason:
            text += f" ({art.name(summary)})"
        args = arg_lines(r.counterexample)
        text += "".join(f"; {a}" for a in args)  # a host's range named as the argument it is (hostargs.py)
        ptr = pointers[id(r)]
        phys, related = _source_locations(r, physical(r), places, art.op_sources.get(r.name))
        related += _host_arg_locations(r, art, places, len(related))
        props: dict[str, Any] = {"obligation": r.name, "verdict": r.verdict.value, "family": r.family,
                                 "program": art.report.program, "seconds": round(r.seconds, 3),
                                 "jsonPointer": ptr}
        if r.assumes:
            props["assumes"] = list(r.assumes)
        root = grouping.of.get(r.name) if grouping is not None else None
        if root is not None and root in finding_at:
            # A consequence of a refuted finding (report/consequences.py): related to that finding's place.
            props["consequenceOf"] = root
            related.append({"id": len(related) + 1, "physicalLocation": finding_at[root],
                            "message": {"text": f"not proved because of the refuted finding {root}"}})
        elif grouping is not None and grouping.under(r.name):
            props["consequences"] = grouping.under(r.name)
        if r.counterexample is not None:
            props["counterexample"] = r.counterexample
        k = rules.index(kind, r.family)
        results.append({
            "ruleId": kind,
            "ruleIndex": k,
            "level": LEVEL[r.verdict],
            "kind": KIND[r.verdict],
            "message": {"text": text},
            "locations": [{"physicalLocation": phys,
                           "logicalLocations": [{"fullyQualifiedName": ptr or "/", "kind": "element"}]}],
            "partialFingerprints": _fingerprints("obligation/v1", f"{art.report.program}:{r.name}",
                                                 phys["artifactLocation"]["uri"]),
            "properties": props,
            **({"relatedLocations": related} if related else {}),
        })
        if r.verdict == Verdict.ERROR:
            notifications.append({"level": "error", "associatedRule": {"id": kind, "index": k},
                                  "message": {"text": f"checker error on {art.report.program}: {text}"}})


def _source_locations(r: Result, phys: dict[str, Any], places: _Places, op_source: SourceLoc | None = None
                      ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A result's physical location and related locations: for a program read by a front end, the alert sits at the
    line the engineer wrote, the op in program.json (``phys``) and any further source lines the counterexample names
    beside it — for a result with no counterexample, the line of the op its obligation names (``op_source``);
    otherwise at ``phys``, with none. A relative source file is relative to the current directory (a tt-metal host's
    kernels are named so by ``cli.imports.openable``)."""
    srcs = located_sources(r.counterexample) or ([op_source] if op_source is not None else [])
    if not srcs:
        return phys, []

    def place(loc: SourceLoc) -> dict[str, Any]:
        return {"artifactLocation": places.location(loc.file), "region": places.region(loc.file, loc.line,
                                                                                       max(loc.column, 1))}

    related: list[dict[str, Any]] = [{"id": 1, "physicalLocation": phys, "message": {"text": "the op in the program"}}]
    at = place(srcs[0])
    for i, loc in enumerate(srcs):
        if i:
            related.append({"id": len(related) + 1, "message": {"text": loc.text or str(loc)},
                            "physicalLocation": place(loc)})
        if loc.called_at is not None:  # an op of an included helper: where the kernel calls it
            related.append({"id": len(related) + 1, "message": {"text": f"called here: {loc.called_at.text}"},
                            "physicalLocation": place(loc.called_at)})
    return at, related


def _host_arg_locations(r: Result, art: Artifact, places: _Places, before: int) -> list[dict[str, Any]]:
    """Related locations of a host description's ranges a counterexample's trips set (``hostargs``): each at the
    field of the host file giving the range, its message the argument's name and value. ``before``: how many related
    locations come first (the ids follow them)."""
    got = args_of(r.counterexample)  # a witness run's are its replay's, as the message's (arg_lines)
    if not got or art.text is None:
        return []
    out: list[dict[str, Any]] = []
    for a in got:
        for field in a.get("fields", []):
            where = field_position(art.text, str(field))
            if where is not None:
                out.append({"id": before + len(out) + 1, "message": {"text": str(a.get("text", field))},
                            "physicalLocation": {"artifactLocation": places.location(art.path),
                                                 "region": places.region(art.path, *where)}})
    return out


def _extra_result(x: Finding, places: _Places, rules: _Rules) -> dict[str, Any]:
    """The result of one of the gate's own findings."""
    family = str(x.properties.get("family", "gate"))
    at = places.physical(x.path, x.pointer)
    res: dict[str, Any] = {
        "ruleId": x.rule,
        "ruleIndex": rules.index(x.rule, family),
        "level": "error",
        "kind": "fail",
        "message": {"text": x.message},
        "locations": [{"physicalLocation": at}],
        "partialFingerprints": _fingerprints("finding/v1", f"{x.rule}:{x.properties.get('program', x.path)}",
                                             at["artifactLocation"]["uri"]),
        "properties": {**x.properties, "family": family},
    }
    if x.related:
        res["relatedLocations"] = [{"id": i + 1, "physicalLocation": places.physical(path, ptr)}
                                   for i, (path, ptr) in enumerate(x.related)]
    return res


def program_artifact(path: str | Path, report: Report, shown: Any, grouping: Grouping | None = None) -> Artifact:
    """The ``Artifact`` of one program file as ``certify --sarif`` and ``gate --sarif`` both write it: its text (only
    when something did not prove: a proof sits nowhere), the consequences grouped under their findings (``grouping``,
    else derived when something is refuted), the source lines of ops that unproved obligations name, and the
    program's own names in messages (``c_0@(1,0)``, not ``b1``). ``shown``: the program the report's texts are shown
    in (a templated program's expansion; None for a proved run, which locates nothing)."""
    from verispatial.report.consequences import grouped
    from verispatial.report.names import namer
    from verispatial.report.sources import obligation_sources

    failed = report.exit_code != 0
    if grouping is None and any(r.verdict == Verdict.REFUTED for r in report.results):
        grouping = grouped(report, shown)
    return Artifact(Path(path).as_posix(), report, read_text(path) if failed else None, grouping,
                    obligation_sources(shown, report) if shown is not None else {}, namer(shown))


def read_text(path: str | Path) -> str | None:
    """The file's text, or None when it cannot be read as UTF-8."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
