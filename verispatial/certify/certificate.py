"""Certificates (DESIGN §7): the marked-graph places that carry a program's synchronization, the obligations
that make it correct, and the witnesses the checker evaluates — a claim, never trusted.

``derive_certificate`` builds it from the program (and the checker's report for the obligation list);
``compare_certificate`` re-derives it and refuses one that omits, adds or misstates anything it derives: the program
digest, places, obligations and witnesses (with ``program_order``). The sections ``compile`` and ``compose`` add —
``compose``, ``passes``, ``pass_fragments``: what each pass claimed of its output — record provenance; the checker
does not re-derive the passes, so ``certify --certificate`` does not compare them (a change there proves nothing
about the program, whose claims are all re-derived).

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
from verispatial.ir import rules as R
from verispatial.ir.limits import format_mismatch
from verispatial.ir.ops import McastSetValid, Pop, Push, Reserve, SemWait, Wait
from verispatial.ir.program import Program
from verispatial.ir.serialize import dumps
from verispatial.ir.templated import TemplatedProgram

FORMAT = "verispatial.certificate"
#: Version 2 states places grouped (``derive_place_groups``: a buffer's pushes to its waits in one entry, not one
#: entry per pair, which is quadratic in the ops). Version 3 states a composed program's rendezvous as one entry
#: (``rendezvous_entry``: its words, participants and each participant's arrival per boundary, not ``P + S`` op
#: lists per boundary) and a proved obligation by its family and name alone (the reason of a proof is no claim;
#: one that did not prove keeps it). Certificates of versions 1 and 2 are still read and compared in their own form
#: (``READ_VERSIONS``); ``verispatial certify --write-certificate`` writes the current one.
VERSION = 3
READ_VERSIONS = (1, 2, 3, 4)
#: The versions of a program stated in full (version 4 is a templated program's, ``TEMPLATED_VERSION``).
PLAIN_VERSIONS = (1, 2, 3)
#: The place kinds ``rendezvous_entry`` stands for.
RENDEZVOUS_KINDS = ("rendezvous-arrival", "rendezvous-release")


def program_digest(p: Program | TemplatedProgram) -> str:
    """sha256 of the program's canonical JSON (a templated program's version-3 document): a certificate speaks of
    exactly one program."""
    return hashlib.sha256(dumps(p).encode()).hexdigest()


def _op(lf: Any) -> dict[str, Any]:
    return {"engine": lf.engine, "path": list(lf.path), "op": type(lf.op).__name__}


def derive_place_groups(a: Analysis, rendezvous_as_entry: bool = False) -> list[dict[str, Any]]:
    """Every place of the marked graph, grouped: each entry names the ops ``from`` (a list) and ``to`` (a list) and
    stands for one place per pair of them, all with its other fields (``expand_places``). Circular-buffer data and
    space: one group per buffer (its pushes to its waits; its pops to its reserves), semaphore signals by protocol
    (a word's increments to each class of its waits, a flag word's flags of one source to its waits), the compose
    rendezvous as ``group_places`` joins its arrivals and releases (with ``rendezvous_as_entry``: as the one version-3
    entry of ``rendezvous_entry``). Linear in the ops: the pairs themselves are
    quadratic in a buffer's pushes and waits (17.9 MB of places for a two-layer decode step of 583 KB)."""
    p = a.program
    places: list[dict[str, Any]] = []
    by_buf: dict[int, list[Any]] = {}
    for v in a.views.values():
        for lf in v.leaves:
            if isinstance(lf.op, (Push, Wait, Pop, Reserve)):
                by_buf.setdefault(lf.op.buf, []).append(lf)
    for b in p.buffers:
        mine = by_buf.get(b.id, [])
        pushes = [_op(lf) for lf in mine if isinstance(lf.op, Push)]
        waits = [_op(lf) for lf in mine if isinstance(lf.op, Wait)]
        pops = [_op(lf) for lf in mine if isinstance(lf.op, Pop)]
        reserves = [_op(lf) for lf in mine if isinstance(lf.op, Reserve)]
        if pushes and waits:
            places.append({"kind": "cb-data", "counter": f"cb{b.id}", "from": pushes, "to": waits,
                           "tokens": 0, "weight": "pages"})
        if pops and reserves:
            places.append({"kind": "cb-space", "counter": f"cb{b.id}", "from": pops, "to": reserves,
                           "tokens": b.capacity, "weight": "pages"})
    # The compose rendezvous: P arrival places and S release places per boundary (compositional.rendezvous_places),
    # not every increment of a word against every wait of it (quadratic in the boundaries).
    from verispatial.certify.compositional import Rendezvous, recognise, rendezvous_places

    rv = recognise(p) if any(s.barrier_after for s in p.sections[:-1]) else None
    skip: set[int] = set()
    if isinstance(rv, Rendezvous):
        places += [_rendezvous_entry(p, rv)] if rendezvous_as_entry else group_places(rendezvous_places(p, rv))
        skip = {rv.gather, rv.release}
    for w in a.words.values():
        if w.sem in skip:
            continue
        role = p.semaphores[w.sem].role.value
        if w.kind in ("monotone", "reset"):
            consuming = {lf.index for lf in w.consuming}
            # The waits in classes of equal fields (a growing threshold, a wait that takes no tokens), in order.
            classes: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
            takes = {lf.index: c for lf, c in w.consumed_by()}
            for dst in w.waits:
                extra: dict[str, Any] = {}
                op = dst.op
                if isinstance(op, SemWait) and op.terms:
                    # Occurrence i of the wait needs value + sum(coef * index) tokens (a growing threshold).
                    extra["threshold"] = {"value": op.value, "terms": [[t.var, t.coef] for t in op.terms]}
                if w.kind == "reset" and dst.index not in consuming:
                    extra["consumes"] = False  # a wait not followed by a reset takes no tokens
                elif w.kind == "reset" and isinstance(op, SemWait) and takes[dst.index] != op.value - w.init:
                    # A ge wait an increment jumps past takes what it saw, more than its threshold asks.
                    extra["takes"] = takes[dst.index]
                classes.setdefault(_key(extra), (extra, []))[1].append(_op(dst))
            incs = [_op(src) for src in w.incs]
            for extra, dsts in classes.values():
                if incs:
                    places.append({"kind": f"sem-{w.kind}", "role": role, "counter": w.name, "from": incs,
                                   "to": dsts, "tokens": w.init, "weight": "increments", **extra})
        elif w.kind == "flag":
            sources: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
            for src in w.flags:
                extra = {}
                op = src.op
                if isinstance(op, McastSetValid) and op.source != op.sem:
                    extra["source"] = f"sem{op.source}@{a.views[src.engine].program.site}"
                sources.setdefault(_key(extra), (extra, []))[1].append(_op(src))
            waits = [_op(dst) for dst in w.waits]
            for extra, srcs in sources.values():
                if waits:
                    places.append({"kind": "sem-flag", "role": role, "counter": w.name, "from": srcs, "to": waits,
                                   "tokens": 0, "weight": "flags", **extra})
    return places


def derive_places(a: Analysis) -> list[dict[str, Any]]:
    """Every place of the marked graph, one per (producing op, consuming op): ``expand_places`` of
    ``derive_place_groups`` (the P/T net exports' places, and a version-1 certificate's)."""
    return expand_places(derive_place_groups(a))


def rendezvous_entry(p: Program) -> dict[str, Any] | None:
    """The compose rendezvous of ``p`` as one version-3 place entry (kind ``rendezvous``), or None when ``p`` has
    none (``compositional.recognise``): the ``gather`` word (``sem<id>@<root site>``), the ``release`` semaphore, the
    ``participants`` in order (the root first), the participating ``sites``, the closing ``boundaries`` (section
    indices) and ``starts[engine]``: the top-level index of each participant's arrival per boundary. Linear in
    participants x boundaries; ``expand_rendezvous`` gives back its arrival and release places."""
    from verispatial.certify.compositional import Rendezvous, recognise

    rv = recognise(p) if any(s.barrier_after for s in p.sections[:-1]) else None
    return _rendezvous_entry(p, rv) if isinstance(rv, Rendezvous) else None


def _rendezvous_entry(p: Program, rv: Any) -> dict[str, Any]:
    site_of = {ep.key: ep.site for ep in p.programs}
    return {"kind": "rendezvous", "gather": f"sem{rv.gather}@{site_of[rv.root]}", "release": rv.release,
            "participants": list(rv.participants), "sites": [str(s) for s in rv.sites],
            "boundaries": list(rv.boundaries), "starts": {k: list(v) for k, v in rv.starts.items()}}


def expand_rendezvous(e: dict[str, Any]) -> list[dict[str, Any]]:
    """The arrival and release places (one op pair or one release to its site's waits each, as
    ``compositional.rendezvous_places`` derives them) of a version-3 ``rendezvous`` entry."""
    parts: list[str] = e["participants"]
    sites: list[str] = e["sites"]
    root = parts[0]
    at_site: dict[str, list[str]] = {}
    for key in parts:
        at_site.setdefault(key.rsplit(".", 1)[0], []).append(key)
    out: list[dict[str, Any]] = []
    for i, b in enumerate(e["boundaries"]):
        k = i + 1
        first = {key: e["starts"][key][i] for key in parts}
        wait_at = first[root] + 2
        for key in parts:
            out.append({"kind": "rendezvous-arrival", "boundary": b, "k": k, "counter": e["gather"],
                        "from": {"engine": key, "path": [first[key]], "op": "SemInc"},
                        "to": {"engine": root, "path": [wait_at], "op": "SemWait"},
                        "tokens": 0, "weight": "increments", "threshold": k * len(parts)})
        for j, site in enumerate(sites):
            out.append({"kind": "rendezvous-release", "boundary": b, "k": k, "counter": f"sem{e['release']}@{site}",
                        "from": {"engine": root, "path": [first[root] + 3 + j], "op": "SemInc"},
                        "to": [{"engine": r, "path": [first[r] + (2 if r != root else 4 + len(sites))], "op": "SemWait"}
                               for r in at_site[site]],
                        "arcs": "read", "tokens": 0, "weight": "increments", "threshold": k})
    return out


def version2_places(places: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Version-3 ``places`` in the version-2 form: a ``rendezvous`` entry grouped back into its places."""
    out: list[dict[str, Any]] = []
    for g in places:
        out += group_places(expand_rendezvous(g)) if g.get("kind") == "rendezvous" else [g]
    return out


def expand_places(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One place per (``from`` op, ``to`` op) of each group, with the group's other fields (a version-3
    ``rendezvous`` entry: its arrival and release places, each expanded)."""
    out: list[dict[str, Any]] = []
    for g in groups:
        if g.get("kind") == "rendezvous":
            out += expand_rendezvous(g)  # one place each already (a release's read arcs are its one ``to``)
            continue
        rest = {k: v for k, v in g.items() if k not in ("from", "to")}
        for src in g["from"]:
            for dst in g["to"]:
                out.append({**rest, "from": src, "to": dst})
    return out


def group_places(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Places of one op pair each, grouped exactly: ``expand_places`` of the result is ``pairs`` as a set. Pairs
    with equal fields and one ``from`` op collect their ``to`` ops; those with equal fields and equal ``to`` lists
    then collect their ``from`` ops (each group is a product of pairs that all occur)."""
    by_src: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]] = {}
    for pl in pairs:
        rest = {k: v for k, v in pl.items() if k not in ("from", "to")}
        got = by_src.setdefault((_key(rest), _key(pl["from"])), (rest, pl["from"], []))
        if pl["to"] not in got[2]:
            got[2].append(pl["to"])
    by_dsts: dict[tuple[str, str], dict[str, Any]] = {}
    for (rk, _), (rest, src, dsts) in by_src.items():
        g = by_dsts.setdefault((rk, _key(dsts)), {**rest, "from": [], "to": dsts})
        g["from"].append(src)
    return list(by_dsts.values())


def derive_certificate(program: Program | TemplatedProgram, report: Report) -> dict[str, Any]:
    """The certificate of ``program``; ``report`` (``certify``'s on it) supplies the obligation list (a templated
    program's: ``derive_templated_certificate``, version 4). Raises nothing for a well-formed program."""
    if isinstance(program, TemplatedProgram):
        return derive_templated_certificate(program, list(report.results))
    a = analyse(program)
    return _certificate(program, a, list(report.results))


def _certificate(program: Program, a: Analysis, results: list[Result], version: int = VERSION) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": version,
        "program": program.name,
        "program_sha256": program_digest(program),
        "solver": {"z3": PINNED_Z3},
        "places": (derive_places(a) if version == 1 else derive_place_groups(a) if version == 2
                   else derive_place_groups(a, rendezvous_as_entry=True)),
        "program_order": {v.key: len(v.leaves) for v in a.views.values()},
        "obligations": sorted((_obligation(r, version) for r in results if r.family != R.CERTIFICATE),
                              key=lambda o: (o["family"], o["name"])),
        "witnesses": {"handshakes": [{"sender": h.sender, "ready": h.ready, "flags": list(h.flags)}
                                     for h in find_handshakes(program, a.views, a.words)]},
    }


def _obligation(r: Result, version: int) -> dict[str, Any]:
    if version >= 3 and r.verdict == Verdict.PROVED:
        return {"family": r.family, "name": r.name}
    return {"family": r.family, "name": r.name, "reason": r.reason}


def _key(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def check_certificate_shape(cert: dict[str, Any]) -> None:
    """``ParseError`` naming the field when ``cert`` is not a certificate document of this format and version
    (``format``, ``version``, ``program_sha256`` a string, ``places`` / ``obligations`` lists, ``witnesses`` and
    ``program_order`` objects).
    A well-formed certificate whose claims are wrong is not bad input: ``compare_certificate`` refutes it."""
    if cert.get("format") != FORMAT or cert.get("version") not in READ_VERSIONS:
        raise ParseError("format", format_mismatch(FORMAT, VERSION, cert))
    if not isinstance(cert.get("program_sha256"), str):
        raise ParseError("program_sha256", "a string (the digest of the program it certifies)")
    if cert.get("version") == TEMPLATED_VERSION:  # a templated program's: per template, obligations grouped
        shape = {"templates": (list, "a list"), "obligations": (dict, "an object"), "rendezvous": (dict, "an object")}
        for section, (kind, what) in shape.items():
            if section in cert and not isinstance(cert[section], kind):
                raise ParseError(section, what)
        return
    for section in ("places", "obligations"):
        if section in cert and not isinstance(cert[section], list):
            raise ParseError(section, "a list")
    for section in ("witnesses", "program_order"):
        if section in cert and not isinstance(cert[section], dict):
            raise ParseError(section, "an object")


def compare_certificate(program: Program, a: Analysis, results: list[Result], cert: dict[str, Any]) -> list[Result]:
    """One ``certificate`` result per section of the certificate: PROVED when it matches the re-derived one,
    REFUTED naming the first omitted or misstated entry otherwise."""
    version = cert.get("version")
    mine = _certificate(program, a, results, version if version in PLAIN_VERSIONS else VERSION)  # type: ignore[arg-type]
    out: list[Result] = []
    if cert.get("format") != FORMAT or version not in PLAIN_VERSIONS:
        why = (f"version {TEMPLATED_VERSION} is the certificate of a templated program (a version-3 program "
               "document); this program is stated in full" if cert.get("format") == FORMAT
               and version == TEMPLATED_VERSION else format_mismatch(FORMAT, VERSION, cert))
        return [Result(R.CERTIFICATE, f"{R.CERTIFICATE}:format", Verdict.REFUTED, why,
                       {"kind": R.CERTIFICATE, "summary": "not a verispatial certificate of this version"})]
    if cert.get("program_sha256") != mine["program_sha256"]:
        out.append(Result(R.CERTIFICATE, f"{R.CERTIFICATE}:program", Verdict.REFUTED,
                          "the certificate is for another program (program_sha256 differs)",
                          {"kind": R.CERTIFICATE, "summary": "certificate of a different program"}))
    for section in ("places", "obligations"):
        claimed = cert.get(section)
        if not isinstance(claimed, list):
            out.append(Result(R.CERTIFICATE, f"{R.CERTIFICATE}:{section}", Verdict.REFUTED, f"{section} is missing or not a list",
                              {"kind": R.CERTIFICATE, "summary": f"{section} missing"}))
            continue
        want = {_key(x if section == "places" else {k: x[k] for k in ("family", "name")}) for x in mine[section]}
        got = {_key(x if section == "places" or not isinstance(x, dict) else {k: x.get(k) for k in ("family", "name")})
               for x in claimed}
        omitted, extra = sorted(want - got), sorted(got - want)
        if omitted or extra:
            what = f"omits {omitted[0]}" if omitted else f"states {extra[0]}, which the program does not have"
            out.append(Result(R.CERTIFICATE, f"{R.CERTIFICATE}:{section}", Verdict.REFUTED,
                              f"{section}: {what} ({len(omitted)} omitted, {len(extra)} misstated)",
                              {"kind": R.CERTIFICATE, "omitted": omitted[:20], "misstated": extra[:20],
                               "summary": f"certificate {section} {what}"}))
        else:
            out.append(Result(R.CERTIFICATE, f"{R.CERTIFICATE}:{section}", Verdict.PROVED,
                              f"all {len(want)} {section} match the re-derived ones"))
    if _key(cert.get("witnesses")) != _key(mine["witnesses"]):
        out.append(Result(R.CERTIFICATE, f"{R.CERTIFICATE}:witnesses", Verdict.REFUTED,
                          "witnesses differ from the handshakes the checker recognises",
                          {"kind": R.CERTIFICATE, "summary": "witnesses misstated"}))
    else:
        out.append(Result(R.CERTIFICATE, f"{R.CERTIFICATE}:witnesses", Verdict.PROVED,
                          f"{len(mine['witnesses']['handshakes'])} handshake witness(es) match"))
    return out


# ------------------------------------------------------------------------------------------- templated programs

#: The certificate version of a templated program (``ir/templated.py``): its places per template, its rendezvous as
#: one entry, its obligations per class of equal slices (``templated_obligations``).
TEMPLATED_VERSION = 4


def derive_templated_certificate(tp: TemplatedProgram, results: list[Result]) -> dict[str, Any]:
    """The certificate (version 4) of templated program ``tp``, ``results`` its obligations (``certify``'s report):
    the size of its templates plus a line per section, where the version-3 certificate of its expansion lists every
    place and obligation of every section.

    ``templates[j]``: template ``j``'s places (``derive_place_groups``, each op written ``ENGINE[path] Op``), program
    order and handshake witnesses, in its own ids and op paths — section ``k``'s are its template's, ids shifted by
    ``compose.sections[k].shift`` and op paths by the section's first op on each engine
    (``TemplatedProgram.section_starts``), as the expansion places them; ``rendezvous``: the one rendezvous entry
    (``expand_rendezvous`` gives its places, arrivals at ``TemplatedProgram.rendezvous_starts``); ``obligations``:
    ``templated_obligations``."""
    from verispatial.certify.compositional import cut_templated

    return {
        "format": FORMAT,
        "version": TEMPLATED_VERSION,
        "program": tp.name,
        "program_sha256": program_digest(tp),
        "solver": {"z3": PINNED_Z3},
        "templates": [_template_part(t) for t in tp.templates],
        "rendezvous": _templated_rendezvous(tp),
        "obligations": templated_obligations(cut_templated(tp), results, tp.section_starts),
    }


def _template_part(t: Program) -> dict[str, Any]:
    a = analyse(t)
    return {"places": [_op_texts(g) for g in derive_place_groups(a)],
            "program_order": {v.key: len(v.leaves) for v in a.views.values()},
            "witnesses": {"handshakes": [{"sender": h.sender, "ready": h.ready, "flags": list(h.flags)}
                                         for h in find_handshakes(t, a.views, a.words)]}}


def _op_texts(group: dict[str, Any]) -> dict[str, Any]:
    """A place group with each op it names (``{"engine", "path", "op"}``) written as one string,
    ``ENGINE[i, j] Op`` (``obligation.LeafRef`` and the op's class): version 4's form, a third of the bytes."""
    def text(x: Any) -> Any:
        if isinstance(x, list):
            return [text(v) for v in x]
        if isinstance(x, dict) and set(x) == {"engine", "path", "op"}:
            return f"{x['engine']}{list(x['path'])} {x['op']}"
        return x

    return {k: text(v) if k in ("from", "to") else v for k, v in group.items()}


def _by_family(pairs: list[list[str]]) -> dict[str, list[str]]:
    """``[family, name]`` pairs as ``{family: [names, sorted]}``."""
    out: dict[str, list[str]] = {}
    for fam, name in sorted(pairs):
        out.setdefault(fam, []).append(name)
    return out


def _templated_rendezvous(tp: TemplatedProgram) -> dict[str, Any]:
    """The version-3 ``rendezvous`` entry without ``starts``: each participant's arrival at boundary ``k`` follows the
    ops of its section there, the top-level op counts of its templates (``program_order`` of the templates' places
    gives their leaves; ``TemplatedProgram.rendezvous_starts`` the indices)."""
    root = tp.participants[0][0]
    return {"kind": "rendezvous", "gather": f"sem{tp.gather}@{root}", "release": tp.release,
            "participants": [f"{s}.{e.value}" for s, e in tp.participants], "sites": [str(s) for s in tp.sites],
            "boundaries": list(tp.boundaries)}


def templated_obligations(cut: Any, results: list[Result], starts: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    """The obligations of a templated program, grouped by slice: ``classes`` maps the key of each class of equal
    slices (its first 16 hex digits) to the obligations of its first slice in the slice's own names (``%t<i>``,
    ``b<i>``, op paths from the slice's start, phase 0, the rendezvous after it ``after-section-0``:
    ``unrendered``), names by family (``{family: [names]}``) — a slice's own (``slice<j>/...``) and those of the whole program
    about its ops, its phase or its closing rendezvous (a read's coverage across phases, its region's resident
    memory, its rendezvous; marked ``@``); ``slices[j]`` is slice ``j``'s key when its obligations are its class's,
    else ``{"class": key, "names": [...]}`` with its own (a slice whose composition drops or adds some);
    ``composed`` the other obligations of the whole program (crossings, output coverage, the composition's deadlock
    freedom, the rendezvous words' balance, resident ranges), names by family; ``open`` every obligation not
    proved, with its reason. ``starts``: each engine's section starts (``TemplatedProgram.section_starts``), which
    place an op in its slice. Linear in the sections, constant per section."""
    by_slice: dict[int, list[list[str]]] = {}
    composed: list[list[str]] = []
    opened: list[dict[str, str]] = []
    for r in results:
        if r.family == R.CERTIFICATE:
            continue
        if r.verdict != Verdict.PROVED:
            opened.append({"family": r.family, "name": r.name, "reason": r.reason})
        j = _slice_of(r.name)
        if j is not None:
            by_slice.setdefault(j, []).append([r.family, _unrendered(r.name, cut.slices[j])])
            continue
        j = _slice_about(r.name, starts)
        local = None if j is None else _unrendered(r.name, cut.slices[j], boundary=j)
        if j is None or local is None or local == r.name:
            composed.append([r.family, r.name])
        else:
            by_slice.setdefault(j, []).append([r.family, "@" + local])
    classes: dict[str, dict[str, list[str]]] = {}
    slices: list[Any] = []
    for sl in cut.slices:
        key = sl.key[:16]
        mine = _by_family(by_slice.get(sl.index, []))
        have = classes.setdefault(key, mine)
        slices.append(key if have == mine else {"class": key, "names": mine})
    return {"classes": classes, "slices": slices, "composed": _by_family(composed),
            "open": sorted(opened, key=lambda o: (o["family"], o["name"]))}


def _slice_about(name: str, starts: dict[str, tuple[int, ...]]) -> int | None:
    """The slice an obligation of the whole program is about, when it is about one: the section of its (first) op,
    the phase of its region, the section its rendezvous closes."""
    import bisect

    from verispatial.ir import obligation as O

    try:
        s = O.parse(name).subject
    except O.BadObligationId:
        return None
    if isinstance(s, O.OrderingRef):
        at = starts.get(s.first.engine)
        return None if at is None or not s.first.path else max(bisect.bisect_right(at, s.first.path[0]) - 1, 0)
    if isinstance(s, O.RegionRef):
        return s.phase
    if isinstance(s, O.BoundaryRef):
        return s.section
    return None


def _slice_of(name: str) -> int | None:
    head, sep, _ = name.partition("/")
    return int(head[5:]) if sep and head.startswith("slice") and head[5:].isdigit() else None


def _unrendered(name: str, sl: Any, boundary: int | None = None) -> str:
    """A slice obligation's name (``slice<j>/...``, in the composed program's names) in the slice's own names: tensors
    ``%t<i>``, buffers ``b<i>``, semaphores ``sem<i>``, op paths from the slice's first op on each engine, its phase
    0 — the name the slice's own certification gave it (``compositional.render`` the other way). A name whose
    subject names something the slice does not hold is kept as it is."""
    from verispatial.ir import obligation as O

    try:
        oid = O.parse(name)
    except O.BadObligationId:
        return name
    tensors = {t: f"%t{i}" for i, t in enumerate(sl.tensors)}
    bufs = {b: i for i, b in enumerate(sl.buffers)}
    sems = {s: i for i, s in enumerate(sl.semaphores)}

    def path(engine: str, p: tuple[int, ...]) -> tuple[int, ...]:
        off = sl.offsets.get(engine)
        if off is None or not p:
            raise KeyError(engine)
        return (p[0] - off, *p[1:])

    def leaf(x: O.LeafRef) -> O.LeafRef:
        return O.LeafRef(x.engine, path(x.engine, x.path))

    s = oid.subject
    try:
        if isinstance(s, O.OpRef):
            s = O.OpRef(s.engine, None if s.path is None else path(s.engine, s.path))
        elif isinstance(s, O.BufferRef):
            s = O.BufferRef(bufs[s.buffer])
        elif isinstance(s, O.AliasRef):
            s = O.AliasRef(bufs[s.buffer], bufs[s.partner])
        elif isinstance(s, O.WordRef):
            s = O.WordRef(sems[s.sem], s.site)
        elif isinstance(s, O.TensorRef):
            s = O.TensorRef(tensors[s.tensor])
        elif isinstance(s, O.RegionRef):
            s = O.RegionRef(s.site, s.space, 0)
        elif isinstance(s, O.OrderingRef):
            s = O.OrderingRef(tensors[s.tensor], leaf(s.first), None if s.second is None else leaf(s.second), s.sep)
        elif isinstance(s, O.BoundaryRef) and boundary is not None and s.section == boundary:
            s = O.BoundaryRef(0)
        elif isinstance(s, (O.ComponentRef, O.LabelRef)) or s is None:
            pass
        else:  # crossings belong to the whole program, never to one slice
            return name
    except KeyError:
        return name
    return str(O.ObligationId(oid.kind, s))


def compare_templated_certificate(tp: TemplatedProgram, results: list[Result], cert: dict[str, Any]) -> list[Result]:
    """``compare_certificate`` for a templated program: one ``certificate`` result each for the program digest (when it
    differs), the places (every template's and the rendezvous entry), the obligations and the witnesses, PROVED when
    the certificate states what ``derive_templated_certificate`` re-derives, REFUTED naming the first difference."""
    version = cert.get("version")
    if cert.get("format") != FORMAT or version != TEMPLATED_VERSION:
        return [Result(R.CERTIFICATE, f"{R.CERTIFICATE}:format", Verdict.REFUTED,
                       f"a templated program's certificate is {FORMAT} version {TEMPLATED_VERSION}, got "
                       f"{cert.get('format')!r} version {version!r}",
                       {"kind": R.CERTIFICATE, "summary": "not a certificate of a templated program"})]
    mine = derive_templated_certificate(tp, results)
    out: list[Result] = []
    if cert.get("program_sha256") != mine["program_sha256"]:
        out.append(Result(R.CERTIFICATE, f"{R.CERTIFICATE}:program", Verdict.REFUTED,
                          "the certificate is for another program (program_sha256 differs)",
                          {"kind": R.CERTIFICATE, "summary": "certificate of a different program"}))
    got_t: list[Any] = cert["templates"] if isinstance(cert.get("templates"), list) else []
    want_t = mine["templates"]
    parts = {
        "places": ([t.get("places") if isinstance(t, dict) else None for t in got_t] + [cert.get("rendezvous")],
                   [t["places"] for t in want_t] + [mine["rendezvous"]]),
        "obligations": (cert.get("obligations"), mine["obligations"]),
        "witnesses": ([(t.get("witnesses"), t.get("program_order")) if isinstance(t, dict) else None for t in got_t],
                      [(t["witnesses"], t["program_order"]) for t in want_t]),
    }
    for section, (got, want) in parts.items():
        if _key(got) == _key(want):
            out.append(Result(R.CERTIFICATE, f"{R.CERTIFICATE}:{section}", Verdict.PROVED,
                              f"the {section} of all {len(want_t)} templates match the re-derived ones"))
            continue
        what = _first_difference(got, want)
        out.append(Result(R.CERTIFICATE, f"{R.CERTIFICATE}:{section}", Verdict.REFUTED, f"{section}: {what}",
                          {"kind": R.CERTIFICATE, "summary": f"certificate {section} {what}"}))
    return out


def _first_difference(got: Any, want: Any, at: str = "") -> str:
    """Where ``got`` first departs from ``want`` (a JSON path and the two values, cut short)."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(want) | set(got)):
            if k not in got:
                return f"omits {at}/{k}"
            if k not in want:
                return f"states {at}/{k}, which the program does not have"
            if _key(got[k]) != _key(want[k]):
                return _first_difference(got[k], want[k], f"{at}/{k}")
    if isinstance(want, list) and isinstance(got, list):
        for i, (g, w) in enumerate(zip(got, want, strict=False)):
            if _key(g) != _key(w):
                return _first_difference(g, w, f"{at}/{i}")
        if len(got) != len(want):
            return f"{at} has {len(got)} entries, the program {len(want)}"
    return f"{at or '(all)'} is {_key(got)[:120]}, the program's {_key(want)[:120]}"
