"""Proofs reused by content (DESIGN §7: "a section equal up to renaming is proved once").

An independent component of engines (``reach.components``: no counter is shared with any other engine) is
written in a *canonical form*: its engine programs in a fixed order, every op with its buffer ids, semaphore ids,
multicast groups and trips renumbered in order of first appearance and its sites written relative to the first
site of the component (so only translations of the mesh are identified, never reflections); then the table of
its buffers (capacity, page size, dtype, space, ring index, section, whether its coverage rules were proved), of
its semaphore words (initial value, role, protocol kind, owner, flag value, re-armed or not), of its trips (max),
the whole target, every trip maximum of the program and whether counts are linear. The SHA-256 of that form is
the component's key.

The families cached here (``FAMILIES``) speak only of counters over that content — circular-buffer ring
alignment (``cb-straddle``), buffer and semaphore balance, exact semaphore counting, deadlock and aliased buffers
(``alias-clobber``: positions and counters of the pair's pushes and writes, at page offsets its item states): each
of their queries is built from the component's ops, buffer capacities, semaphore words and trips alone, so an
isomorphism of canonical forms maps a proof for one component onto a proof for the other. Tensor names and the
*base* of tile addresses are left out of the key: none of those families reads them (bounds, the memory map's
byte ranges and happens-before do, and are never cached). Address coefficients and indirect ranges stay in the
key anyway (more than needed).

``alias-clobber`` pairs are also keyed by the engines their query starts from (``scope_form``): a pair proved by its
first scope (those engines and the facts of the counters no other engine touches) is reused for the pairs of an
equal scope form, in the same component or another (docs/checker.md, "Proofs cached by content").

Only ``proved`` verdicts are reused. A refutation needs its own replayed counterexample and a failure to prove
is re-derived, so both are always computed for the component itself. A reused result keeps its own name
(with the component's real buffers, words and engines) and its reason names the isomorphic component it was
proved for.

The canonical form is part of the trusted kernel: it decides which proofs transfer (and ``schedule.py`` reuses
its enabling proofs up to renaming by it). ``ProofMemo`` keeps the proofs of one process; the driver's
``ProofCache`` (``verispatial/driver/cache.py``) also keeps them in its persistent store (``driver/store.py``).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from verispatial.certify.reach import Analysis
from verispatial.certify.report import Result, Verdict
from verispatial.ir import rules as R
from verispatial.ir.core import Addr, Site, Term
from verispatial.ir.ops import (
    ID_BUFFER,
    ID_COUNT,
    ID_GROUP,
    ID_OPERANDS,
    ID_SEMAPHORE,
    ID_SITE,
    ID_TENSOR,
    If,
    Loop,
    Op,
    Operand,
    SemSet,
    TripCount,
)

#: Obligation families whose verdicts are invariant under renaming buffers, semaphores, groups, trips and
#: translating sites, and read no tensor address: only these are reused.
FAMILIES = (R.CB_STRADDLE, R.BALANCE_CB, R.BALANCE_SEM, R.SEM_EXACT, R.DEADLOCK, R.ALIAS_CLOBBER)


@attrs.frozen
class Canon:
    """The canonical form of one component: ``key`` (hex SHA-256), ``name`` (as the deadlock obligation names the
    component), and the renumbering of its buffers (real id -> canonical index), semaphore words (real name ->
    canonical index) and engines (real key -> canonical index)."""

    key: str
    name: str
    buffers: dict[int, int]
    words: dict[str, int]
    engines: dict[str, int]


def component_name(comp: frozenset[str]) -> str:
    """``min(engine)`` and how many more engines: the name the deadlock obligation gives a component."""
    return f"{min(comp)}" + (f"+{len(comp) - 1}" if len(comp) > 1 else "")


class _Namer:
    """Renumbers ids of one kind in order of first appearance."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}

    def __call__(self, x: Any) -> int:
        return self.index.setdefault(x, len(self.index))


def canonical_form(a: Analysis, comp: frozenset[str], trusted: set[int],
                   rearmed: frozenset[tuple[int, Site]] | None = None) -> tuple[list[Any], Canon]:
    """The canonical form of component ``comp`` (a JSON-able list) and its ``Canon``.

    Two components with equal forms are equal up to renaming buffer, semaphore, group and trip ids and
    translating sites; ``trusted`` (buffers whose coverage rules were proved) is part of the form.
    ``rearmed`` is ``a.program.rearmed_words()`` when the caller has it already (it walks every program).
    Raises KeyError if ``comp`` names an engine the analysis does not have.
    """
    p = a.program
    engines = sorted(comp)
    origin = a.views[engines[0]].program.site
    bufs, sems, groups, trips, tensors = _Namer(), _Namer(), _Namer(), _Namer(), _Namer()

    def site(s: Site) -> list[int]:
        return [s.x - origin.x, s.y - origin.y]

    def addr(x: Addr) -> list[Any]:
        # The base is left out on purpose: no cached family reads a tile address (module docstring).
        d = x.dynamic
        return [[[t.var, t.coef] for t in x.terms],
                None if d is None else [d.name, d.lo, d.hi, d.scale, None if d.buf is None else ["b", bufs(d.buf)]]]

    def count(c: int | str | TripCount) -> Any:
        if isinstance(c, int):
            return c
        if isinstance(c, str):
            return ["trip", trips(c)]
        return ["trip", trips(c.trip), c.scale, c.offset]

    def value(kind: str | None, v: Any) -> Any:
        # Ids are renamed by the id space their field is tagged with (``ops.ID_*``), never by the field's name: a
        # ``src`` is a buffer in write_tiles and a semaphore in mcast_set_valid.
        if v is None:
            return None
        if kind == ID_BUFFER:
            return ["b", bufs(v)]
        if kind == ID_SEMAPHORE:
            return ["s", sems(v)]
        if kind == ID_GROUP:
            return ["g", groups(v)]
        if kind == ID_TENSOR:
            return ["t", tensors(v)]
        if kind == ID_COUNT:
            return count(v)
        if kind == ID_OPERANDS:
            # An Operand's page count, or an InPlace's index (its page and loop terms).
            return [[["b", bufs(o.buf)], o.pages] if isinstance(o, Operand)
                     else [["b", bufs(o.buf)], o.page, [[t.var, t.coef] for t in o.terms]] for o in v]
        if kind == ID_SITE or isinstance(v, Site):
            return site(v)
        if isinstance(v, Addr):
            return addr(v)
        if isinstance(v, (bool, int, str)):
            return v
        if hasattr(v, "value") and isinstance(v.value, (int, str)):  # enums
            return [type(v).__name__, v.value]
        if isinstance(v, tuple) and all(isinstance(t, Term) for t in v):  # a wait threshold's loop terms
            return [[t.var, t.coef] for t in v]
        return repr(v)  # anything unforeseen is kept verbatim: more in the key, never less

    def op_form(op: Op) -> list[Any]:
        if isinstance(op, Loop):
            return ["Loop", op.var, count(op.count), [op_form(x) for x in op.body]]
        if isinstance(op, If):
            return ["If", op.var, op.when.value, [op_form(x) for x in op.body]]
        # A SemSet's terms are in the form only when it has any: the forms (and cache keys) of programs from
        # before the field stay what they were.
        return [type(op).__name__, *[[f.name, value(f.metadata.get("id"), getattr(op, f.name))]
                                     for f in attrs.fields(type(op))
                                     if not (isinstance(op, SemSet) and f.name == "terms" and not op.terms)]]

    programs = []
    for e in engines:
        ep = a.views[e].program
        # ``(0,)`` and ``()`` both say "every op is in section 0": one form (a section certified alone and the same
        # section cut from a composed program as a slice share their proofs).
        starts = [] if tuple(ep.section_starts) == (0,) else list(ep.section_starts)
        programs.append([site(ep.site), ep.engine.value, starts, [op_form(op) for op in ep.ops]])

    buffer_table = []
    for b in sorted(bufs.index, key=bufs.index.__getitem__):
        x = p.buffers[b]
        alias = None if x.alias_of is None else (["b", bufs.index[x.alias_of]] if x.alias_of in bufs.index else "outside")
        # A scratch buffer (private L1, no ring) is marked only when it is one: the forms of other programs stay.
        buffer_table.append([site(x.site), x.cb, x.page_tiles, x.capacity, x.dtype, x.space.value, alias, x.section,
                             b in trusted, *(["scratch"] if x.scratch else [])])
    comp_words = {w.name: w for w in a.words.values()
                  if {lf.engine for lf in (*w.incs, *w.flags, *w.sets, *w.waits)} & comp}
    rearmed = p.rearmed_words() if rearmed is None else rearmed
    word_table = []
    for w in sorted(comp_words.values(), key=lambda w: (sems(w.sem), w.site.y - origin.y, w.site.x - origin.x)):
        s = p.semaphores[w.sem]
        owner = engines.index(w.owner) if w.owner in comp else (None if w.owner is None else "outside")
        word_table.append([sems(w.sem), site(w.site), s.init, s.role.value, w.kind, w.init, w.value, owner, w.why,
                           (w.sem, w.site) in rearmed, w.primed, w.reset_value, list(w.consumes)])
    group_table = []
    for g in sorted(groups.index, key=groups.index.__getitem__):
        x = p.groups[g]
        group_table.append([site(x.sender), [site(d) for d in x.destinations()], x.loopback])
    trip_max = p.trip_max()
    trip_table = [trip_max[t] for t in sorted(trips.index, key=trips.index.__getitem__)]
    form: list[Any] = [
        "verispatial.component/1", programs, buffer_table, word_table, group_table, trip_table,
        # Program-wide facts the queries read: every trip's maximum (trip assignments are enumerated over all of
        # them), whether counts are linear, and the target.
        [t.max for t in p.trips], a.linear, repr(p.target),
    ]
    key = hashlib.sha256(json.dumps(form, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    sem_index = sems.index
    words = {w.name: n for n, w in enumerate(sorted(comp_words.values(), key=lambda w: (
        sem_index[w.sem], w.site.y - origin.y, w.site.x - origin.x)))}
    return form, Canon(key, component_name(comp), dict(bufs.index), words, {e: i for i, e in enumerate(engines)})


def scope_form(a: Analysis, engines: frozenset[str], trusted: set[int],
               rearmed: frozenset[tuple[int, Site]] | None = None) -> Canon | None:
    """The canonical form of the engines a query's first scope holds (``reach.solve_each``: the focus engines alone,
    with the facts of the counters no other engine touches), or None when a counter of theirs has no canonical id.

    ``canonical_form`` of ``engines`` (not a component: words and buffers they share with other engines are in it
    as they are seen from inside), plus what that form cannot say and the scope's query reads: for every counter an
    op of ``engines`` touches, in canonical ids, whether an engine outside touches it too (its facts are then left
    out of the scope), and the counters no engine touches (their facts are over constants: kind and initial value,
    in order). Two sets of engines with equal keys ask alpha-equivalent first-scope queries."""
    _, c = canonical_form(a, engines, trusted, rearmed)
    touched: list[list[Any]] = []
    untouched: list[list[Any]] = []
    words = {w.name: w for w in a.words.values()}
    for n, es in a.touches.items():
        w = words.get(n)
        if not es:
            untouched.append(["w", w.kind, w.init] if w is not None else ["cb", a.program.buffers[int(n[2:])].capacity])
            continue
        if not es & engines:
            continue
        if w is not None:
            if n not in c.words:
                return None
            touched.append(["w", c.words[n], es <= engines])
        else:
            b = int(n[2:])
            if b not in c.buffers:
                return None
            touched.append(["b", c.buffers[b], es <= engines])
    material = ["verispatial.scope/1", c.key, sorted(touched), sorted(untouched)]
    key = hashlib.sha256(json.dumps(material, separators=(",", ":")).encode()).hexdigest()
    return attrs.evolve(c, key=key)


@attrs.define
class Reuse:
    """One reused verdict: ``name`` was not proved again because ``source`` (of component ``component`` of
    ``program``) was."""

    name: str
    source: str
    component: str
    program: str = ""


class ProofMemo:
    """Proved verdicts of the ``FAMILIES`` keyed by (family, canonical form of the component, canonical item,
    parameters), kept in this process. One instance serves one certify run; passing the same instance to later runs
    of programs on the same target reuses across runs too (the key holds everything a verdict depends on).

    ``recall`` and ``keep`` are where a subclass finds and keeps proofs outside the process: the kernel's own memo
    has none; the driver's ``ProofCache`` (``verispatial/driver/cache.py``) reads and writes its persistent store
    there, trusted by provenance (docs/checker.md, "Trusted kernel").
    """

    def __init__(self) -> None:
        self._canon: dict[tuple[frozenset[str], frozenset[int]], Canon] = {}
        self._scopes: dict[tuple[frozenset[str], frozenset[int]], Canon | None] = {}
        self._analysis: Analysis | None = None  # the one analysis ``_canon`` speaks of (held, so its id stays unique)
        self._rearmed: frozenset[tuple[int, Site]] = frozenset()  # its program's re-armed words
        # key -> (family, obligation, reason, component, program)
        self._proved: dict[str, tuple[str, str, str, str, str]] = {}
        self.reused: list[Reuse] = []
        self.computed = 0

    def canon(self, a: Analysis, comp: frozenset[str], trusted: set[int]) -> Canon:
        """The canonical form of ``comp`` in ``a`` (memoised per component and trusted set for the latest analysis;
        ``run`` names the program of that analysis as the place a proof came from)."""
        self._analysed(a)
        # trusted as a set of its own (the strings "trusted:<b>" built per call were quadratic in a wide slice)
        k = (comp, frozenset(trusted))
        got = self._canon.get(k)
        if got is None:
            got = canonical_form(a, comp, trusted, self._rearmed)[1]
            self._canon[k] = got
        return got

    def _analysed(self, a: Analysis) -> None:
        if self._analysis is not a:
            self._canon.clear()
            self._scopes.clear()
            self._analysis = a
            self._rearmed = a.program.rearmed_words()

    def scope_canon(self, a: Analysis, engines: frozenset[str], trusted: set[int]) -> Canon | None:
        """``scope_form`` of ``engines`` in ``a``, memoised as ``canon`` is."""
        self._analysed(a)
        k = (engines, frozenset(trusted))
        if k not in self._scopes:
            self._scopes[k] = scope_form(a, engines, trusted, self._rearmed)
        return self._scopes[k]

    def recall(self, key: str, family: str) -> tuple[str, str, str, str, str] | None:
        """A proof of ``key`` kept outside this process, as (family, obligation, reason, component, program);
        None here (the kernel keeps nothing outside the process)."""
        return None

    def keep(self, key: str, family: str, r: Result, component: str, program: str) -> None:
        """Keep the proof ``r`` of ``key`` outside this process; nothing here."""

    def run(self, family: str, canon: Canon, item: Iterable[Any], name: str, compute: Callable[[], Result]) -> Result:
        """The result of obligation ``name`` of ``family`` on the component ``canon``: a proof of an isomorphic
        component with the same canonical ``item`` (the obligation's subject and parameters, in canonical ids)
        is reused, else ``compute()`` runs and a proved result is remembered. Raises ValueError for a family
        outside ``FAMILIES``."""
        hit = self.proof_for(family, canon, item, name)
        if hit is not None:
            return hit
        self.computed += 1
        r = compute()
        self.remember(family, canon, item, r)
        return r

    def proof_for(self, family: str, canon: Canon, item: Iterable[Any], name: str,
                  what: str = "component") -> Result | None:
        """Obligation ``name`` of ``family`` proved by reuse when a proof for an isomorphic ``what`` (a component, or
        the engines of a query's first scope: ``scope_form``) with the same canonical ``item`` is known, else None.
        Raises ValueError for a family outside ``FAMILIES``."""
        key = self._key(family, canon, item)
        hit = self._proved.get(key)
        if hit is None:
            hit = self.recall(key, family)
        if hit is None:
            return None
        t0 = time.perf_counter()
        fam, src, reason, comp, program = hit
        self.reused.append(Reuse(name, src, comp, program))
        where = comp if self._analysis is None or program == self._analysis.program.name else f"{comp} of {program}"
        return Result(fam, name, Verdict.PROVED,
                      f"proved as {src} for the isomorphic {what} {where} (equal up to renaming; canonical "
                      f"form {canon.key[:12]}): {reason}", seconds=time.perf_counter() - t0)

    def remember(self, family: str, canon: Canon, item: Iterable[Any], r: Result) -> None:
        """Keep ``r`` when it is proved, for whatever has the canonical form ``canon`` and ``item``: a component
        (``run``), or the engines of a first scope whose query proved it from them and the facts among them alone
        (``scope_form``)."""
        if r.verdict != Verdict.PROVED:
            return
        key = self._key(family, canon, item)
        program = self._analysis.program.name if self._analysis is not None else ""
        self._proved[key] = (r.family, r.name, r.reason, canon.name, program)
        self.keep(key, family, r, canon.name, program)

    @staticmethod
    def _key(family: str, canon: Canon, item: Iterable[Any]) -> str:
        if family not in FAMILIES:
            raise ValueError(f"{family!r} is not a family whose verdicts are invariant under renaming")
        return hashlib.sha256(json.dumps([family, canon.key, list(item)], sort_keys=True).encode()).hexdigest()
