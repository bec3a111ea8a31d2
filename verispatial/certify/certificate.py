"""Certificates (DESIGN §7): the marked-graph places that carry a program's synchronization, the obligations
that make it correct, and the witnesses the checker evaluates — a claim, never trusted.

``derive_certificate`` builds it from the program (and the checker's report for the obligation list);
``compare_certificate`` re-derives it and refuses one that omits, adds or misstates anything.

Places name ops by (site, engine, op path); a place from producer op P to consumer op C with ``tokens`` initial
tokens says "occurrence n of C needs the n-th token P produces (counted in ``weight`` units: pages or
increments)", occurrences matched by count.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from verispatial.certify.handshake import find_handshakes
from verispatial.certify.reach import Analysis, analyse
from verispatial.certify.report import Report, Result, Verdict
from verispatial.certify.smt import PINNED_Z3
from verispatial.errors import ParseError
from verispatial.ir.limits import format_mismatch
from verispatial.ir.ops import McastSetValid, Pop, Push, Reserve, SemWait, Wait
from verispatial.ir.program import Program
from verispatial.ir.serialize import dumps

FORMAT = "verispatial.certificate"
VERSION = 1


def program_digest(p: Program) -> str:
    """sha256 of the program's canonical JSON: a certificate speaks of exactly one program."""
    return hashlib.sha256(dumps(p).encode()).hexdigest()


def _op(lf: Any) -> dict[str, Any]:
    return {"engine": lf.engine, "path": list(lf.path), "op": type(lf.op).__name__}


def derive_places(a: Analysis) -> list[dict[str, Any]]:
    """Every place of the marked graph: circular-buffer data and space, semaphore signals by protocol."""
    p = a.program
    places: list[dict[str, Any]] = []
    by_buf: dict[int, list[Any]] = {}
    for v in a.views.values():
        for lf in v.leaves:
            if isinstance(lf.op, (Push, Wait, Pop, Reserve)):
                by_buf.setdefault(lf.op.buf, []).append(lf)
    for b in p.buffers:
        mine = by_buf.get(b.id, [])
        pushes = [lf for lf in mine if isinstance(lf.op, Push)]
        waits = [lf for lf in mine if isinstance(lf.op, Wait)]
        pops = [lf for lf in mine if isinstance(lf.op, Pop)]
        reserves = [lf for lf in mine if isinstance(lf.op, Reserve)]
        for src in pushes:
            for dst in waits:
                places.append({"kind": "cb-data", "counter": f"cb{b.id}", "from": _op(src), "to": _op(dst),
                               "tokens": 0, "weight": "pages"})
        for src in pops:
            for dst in reserves:
                places.append({"kind": "cb-space", "counter": f"cb{b.id}", "from": _op(src), "to": _op(dst),
                               "tokens": b.capacity, "weight": "pages"})
    # The compose rendezvous: P arrival places and S release places per boundary (compositional.rendezvous_places),
    # not every increment of a word against every wait of it (quadratic in the boundaries).
    from verispatial.certify.compositional import Rendezvous, recognise, rendezvous_places

    rv = recognise(p) if any(s.barrier_after for s in p.sections[:-1]) else None
    skip: set[int] = set()
    if isinstance(rv, Rendezvous):
        places += rendezvous_places(p, rv)
        skip = {rv.gather, rv.release}
    for w in a.words.values():
        if w.sem in skip:
            continue
        role = p.semaphores[w.sem].role.value
        if w.kind in ("monotone", "reset"):
            consuming = {lf.index for lf in w.consuming}
            takes = {lf.index: c for lf, c in w.consumed_by()}
            for src in w.incs:
                for dst in w.waits:
                    place = {"kind": f"sem-{w.kind}", "role": role, "counter": w.name, "from": _op(src),
                             "to": _op(dst), "tokens": w.init, "weight": "increments"}
                    op = dst.op
                    if isinstance(op, SemWait) and op.terms:
                        # Occurrence i of the wait needs value + sum(coef * index) tokens (a growing threshold).
                        place["threshold"] = {"value": op.value, "terms": [[t.var, t.coef] for t in op.terms]}
                    if w.kind == "reset" and dst.index not in consuming:
                        place["consumes"] = False  # a wait not followed by a reset takes no tokens
                    elif w.kind == "reset" and isinstance(op, SemWait) and takes[dst.index] != op.value - w.init:
                        # A ge wait an increment jumps past takes what it saw, more than its threshold asks.
                        place["takes"] = takes[dst.index]
                    places.append(place)
        elif w.kind == "flag":
            for src in w.flags:
                for dst in w.waits:
                    place = {"kind": "sem-flag", "role": role, "counter": w.name, "from": _op(src),
                             "to": _op(dst), "tokens": 0, "weight": "flags"}
                    op = src.op
                    if isinstance(op, McastSetValid) and op.source != op.sem:
                        place["source"] = f"sem{op.source}@{a.views[src.engine].program.site}"
                    places.append(place)
    return places


def derive_certificate(program: Program, report: Report | None = None) -> dict[str, Any]:
    """The certificate of ``program``. ``report`` (from ``certify``) supplies the obligation list; without it the
    checker is run. Raises nothing for a well-formed program."""
    if report is None:
        from verispatial.certify.checker import certify

        report = certify(program)
    a = analyse(program)
    return _certificate(program, a, list(report.results))


def _certificate(program: Program, a: Analysis, results: list[Result]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "program": program.name,
        "program_sha256": program_digest(program),
        "solver": {"z3": PINNED_Z3},
        "places": derive_places(a),
        "program_order": {v.key: len(v.leaves) for v in a.views.values()},
        "obligations": sorted(({"family": r.family, "name": r.name, "reason": r.reason} for r in results
                               if r.family != "certificate"), key=lambda o: (o["family"], o["name"])),
        "witnesses": {"handshakes": [{"sender": h.sender, "ready": h.ready, "flags": list(h.flags)}
                                     for h in find_handshakes(program, a.views, a.words)]},
    }


def _key(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def check_certificate_shape(cert: dict[str, Any]) -> None:
    """``ParseError`` naming the field when ``cert`` is not a certificate document of this format and version
    (``format``, ``version``, ``program_sha256`` a string, ``places`` / ``obligations`` lists, ``witnesses`` and
    ``program_order`` objects).
    A well-formed certificate whose claims are wrong is not bad input: ``compare_certificate`` refutes it."""
    if cert.get("format") != FORMAT or cert.get("version") != VERSION:
        raise ParseError("format", format_mismatch(FORMAT, VERSION, cert))
    if not isinstance(cert.get("program_sha256"), str):
        raise ParseError("program_sha256", "a string (the digest of the program it certifies)")
    for section in ("places", "obligations"):
        if section in cert and not isinstance(cert[section], list):
            raise ParseError(section, "a list")
    for section in ("witnesses", "program_order"):
        if section in cert and not isinstance(cert[section], dict):
            raise ParseError(section, "an object")


def compare_certificate(program: Program, a: Analysis, results: list[Result], cert: dict[str, Any]) -> list[Result]:
    """One ``certificate`` result per section of the certificate: PROVED when it matches the re-derived one,
    REFUTED naming the first omitted or misstated entry otherwise."""
    mine = _certificate(program, a, results)
    out: list[Result] = []
    if cert.get("format") != FORMAT or cert.get("version") != VERSION:
        return [Result("certificate", "certificate:format", Verdict.REFUTED,
                       format_mismatch(FORMAT, VERSION, cert),
                       {"kind": "certificate", "summary": "not a verispatial certificate of this version"})]
    if cert.get("program_sha256") != mine["program_sha256"]:
        out.append(Result("certificate", "certificate:program", Verdict.REFUTED,
                          "the certificate is for another program (program_sha256 differs)",
                          {"kind": "certificate", "summary": "certificate of a different program"}))
    for section in ("places", "obligations"):
        claimed = cert.get(section)
        if not isinstance(claimed, list):
            out.append(Result("certificate", f"certificate:{section}", Verdict.REFUTED, f"{section} is missing or not a list",
                              {"kind": "certificate", "summary": f"{section} missing"}))
            continue
        want = {_key(x if section == "places" else {k: x[k] for k in ("family", "name")}) for x in mine[section]}
        got = {_key(x if section == "places" or not isinstance(x, dict) else {k: x.get(k) for k in ("family", "name")})
               for x in claimed}
        omitted, extra = sorted(want - got), sorted(got - want)
        if omitted or extra:
            what = f"omits {omitted[0]}" if omitted else f"states {extra[0]}, which the program does not have"
            out.append(Result("certificate", f"certificate:{section}", Verdict.REFUTED,
                              f"{section}: {what} ({len(omitted)} omitted, {len(extra)} misstated)",
                              {"kind": "certificate", "omitted": omitted[:20], "misstated": extra[:20],
                               "summary": f"certificate {section} {what}"}))
        else:
            out.append(Result("certificate", f"certificate:{section}", Verdict.PROVED,
                              f"all {len(want)} {section} match the re-derived ones"))
    if _key(cert.get("witnesses")) != _key(mine["witnesses"]):
        out.append(Result("certificate", "certificate:witnesses", Verdict.REFUTED,
                          "witnesses differ from the handshakes the checker recognises",
                          {"kind": "certificate", "summary": "witnesses misstated"}))
    else:
        out.append(Result("certificate", "certificate:witnesses", Verdict.PROVED,
                          f"{len(mine['witnesses']['handshakes'])} handshake witness(es) match"))
    return out
