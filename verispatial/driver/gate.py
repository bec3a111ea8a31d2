"""The pre-merge proof gate (DESIGN §1 use 3): every program of a corpus is re-certified against the certificate
beside it and compared with the verdict the corpus's manifest expects; a lost proof fails the gate.

**Layout** (the one ``compile`` writes): a program ``NAME.program.json`` (or ``NAME.json``, what ``compile -o
NAME.json`` writes) with its certificate ``NAME.certificate.json`` beside it, anywhere under the directory; the
program's gate name is its path relative to the directory without the suffix (``models/mlp_block.wormhole/up``).
A plain ``NAME.json`` with no certificate is a program (failing as ``no-certificate``) when its first bytes say
``"format": "verispatial.program"``; other JSON is not.

**Manifest** (``DIR/manifest.json``; ``MANIFEST`` is its format)::

    {"format": "verispatial.proof-manifest", "version": 1, "regenerate": "<the command that rebuilds the corpus>",
     "programs": {"<name>": {"expect": "proved" | "refuted", "refuted": [<families>], "ci": true | false,
                             "source": {...how it was made...}}}}

``refuted`` lists the obligation families that must each hold a refutation (the interpreter replayed) when
``expect`` is ``refuted``. ``ci: false`` leaves a program out of ``gate --ci`` (e.g. the whole decode steps, which
are regenerated rather than committed). Without a manifest every program found is expected to prove.

**Outcomes** per program: ``holds`` (the expectation is met), ``lost`` (expected proved, some obligation did not
prove: a lost proof), ``changed`` (expected refuted, but an expected family holds no replayed refutation: a changed
verdict), ``missing`` (in the manifest, no program file), ``extra`` (a program the manifest does not list),
``no-certificate``, ``bad-input`` (a file that does not load), ``error`` (a checker fault), ``skipped`` (``--changed``:
its files are those of the revision). The gate fails when any outcome is not ``holds`` or ``skipped``.

**Proofs are not recomputed when nothing changed** (``store.py``): a program expected to prove whose bytes, with its
certificate's, were proved by this checker and solver before takes its report from the proof cache. A program
expected refuted keeps its refutations in the cache as *candidates* only: a warm gate replays one per expected
family in the interpreter (``checker.replay_refutation``), and a candidate that does not reproduce sends the
program to a full certify. Nothing but a proof is ever reused, and a refutation is never taken on trust.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from verispatial.certify.report import Report, Result, Verdict, result_from_data, result_to_data
from verispatial.driver.store import ProofStore
from verispatial.errors import ParseError, VerispatialError
from verispatial.ir import rules as R
from verispatial.ir.limits import QUOTE_MAX, clip, format_mismatch

MANIFEST = "verispatial.proof-manifest"
MANIFEST_VERSION = 1
EXPECT = ("proved", "refuted")
FAILING = ("lost", "changed", "missing", "extra", "no-certificate", "bad-input", "error")

Say = Callable[[str], None]


@attrs.frozen
class Expectation:
    """What the manifest expects of one program: ``expect`` (``proved`` / ``refuted``), the ``refuted`` families,
    whether it is in the ``ci`` set, and its ``source`` (how the corpus builder made it; informative)."""

    name: str
    expect: str
    refuted: tuple[str, ...] = ()
    ci: bool = True
    source: dict[str, Any] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"expect": self.expect}
        if self.expect == "refuted":
            out["refuted"] = list(self.refuted)
        out["ci"] = self.ci
        if self.source:
            out["source"] = self.source
        return out


@attrs.frozen
class Manifest:
    path: Path | None
    programs: dict[str, Expectation]
    regenerate: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"format": MANIFEST, "version": MANIFEST_VERSION, "regenerate": self.regenerate,
                "programs": {n: e.to_json() for n, e in sorted(self.programs.items())}}


def parse_manifest(doc: Any, where: str = "manifest.json") -> Manifest:
    """The manifest in the JSON document ``doc``; ``ParseError`` naming the field for anything else."""
    from verispatial.certify.report import FAMILIES

    if not isinstance(doc, dict):
        raise ParseError(where, "a manifest is a JSON object")
    if doc.get("format") != MANIFEST or doc.get("version") != MANIFEST_VERSION:
        raise ParseError(where, format_mismatch(MANIFEST, MANIFEST_VERSION, doc))
    progs = doc.get("programs")
    if not isinstance(progs, dict):
        raise ParseError(where, "programs: an object from program name to its expectation")
    out: dict[str, Expectation] = {}
    families = set(FAMILIES) | {R.CERTIFICATE, R.FRAGMENT}
    for name, e in progs.items():
        field = f"programs.{name}"
        if not isinstance(e, dict):
            raise ParseError(where, f"{field}: an object")
        expect = e.get("expect")
        if expect not in EXPECT:
            raise ParseError(where, f"{field}.expect: one of {', '.join(EXPECT)}, got {expect!r}")
        refuted = e.get("refuted", [])
        if not isinstance(refuted, list) or not all(isinstance(f, str) and f in families for f in refuted):
            raise ParseError(where, f"{field}.refuted: a list of obligation families ({', '.join(sorted(families))})")
        if expect == "refuted" and not refuted:
            raise ParseError(where, f"{field}.refuted: a refuted program names the families that must be refuted")
        if expect == "proved" and refuted:
            raise ParseError(where, f"{field}.refuted: only a refuted program lists refuted families")
        ci = e.get("ci", True)
        if not isinstance(ci, bool):
            raise ParseError(where, f"{field}.ci: true or false")
        source = e.get("source", {})
        if not isinstance(source, dict):
            raise ParseError(where, f"{field}.source: an object")
        out[name] = Expectation(name, expect, tuple(refuted), ci, source)
    regen = doc.get("regenerate", "")
    if not isinstance(regen, str):
        raise ParseError(where, "regenerate: a string (the command that rebuilds the corpus)")
    return Manifest(None, out, regen)


def load_manifest(path: str | Path) -> Manifest:
    """Read and check the manifest at ``path``; ``ParseError`` naming the file and the field."""
    from verispatial.ir.serialize import parse_json
    from verispatial.regular_file import not_regular

    p = Path(path)
    if (why := not_regular(p, "a manifest")) is not None:
        raise ParseError(str(p), why)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ParseError(str(p), f"cannot read the manifest: {e.strerror or e}") from None
    try:
        doc = parse_json(data)
    except ParseError as e:
        raise ParseError(str(p), f"{e.field}: {e.rule}" if e.field else e.rule) from None
    return attrs.evolve(parse_manifest(doc, str(p)), path=p)


@attrs.frozen
class Found:
    """A program of the corpus on disk: its gate ``name``, program file and certificate file (None: missing)."""

    name: str
    program: Path
    certificate: Path | None


#: How much of a plain ``NAME.json`` is read to tell a program document from other JSON (its ``format`` field
#: comes first in every document ``dumps`` writes).
_PEEK_BYTES = 4096


def _says_program(p: Path) -> bool:
    """Whether ``p`` looks like a program document: ``"format": "verispatial.program"`` in its first bytes. Such a
    file without a certificate beside it is in the corpus (and fails as ``no-certificate``), never skipped."""
    from verispatial.regular_file import not_regular

    if not_regular(p) is not None:  # a FIFO would block the peek
        return False
    try:
        with p.open("rb") as f:
            head = f.read(_PEEK_BYTES)
    except OSError:
        return False
    return re.search(rb'"format"\s*:\s*"verispatial\.program"', head) is not None


def _json_files(directory: Path) -> list[Path]:
    """Every ``*.json`` file under ``directory`` not hidden (nor in a hidden directory), sorted; symbolic links to
    directories are not followed. A directory removed while the walk reaches it holds nothing to check and is passed
    over (a live directory such as /tmp changes under the gate); one that cannot be read otherwise is a
    ``ParseError`` naming it, since its programs would go unchecked."""

    def unreadable(e: OSError) -> None:
        if isinstance(e, FileNotFoundError):
            return
        raise ParseError(str(e.filename or directory), f"cannot read the directory: {e.strerror or e}")

    out: list[Path] = []
    for root, dirs, files in os.walk(directory, onerror=unreadable):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        out += [Path(root, f) for f in files if f.endswith(".json") and not f.startswith(".")]
    return sorted(out)


def discover(directory: Path) -> list[Found]:
    """Every program under ``directory`` in the gate's layout (module docstring), by name. Hidden files and
    directories and the manifest are not programs."""
    found: dict[str, Found] = {}
    for p in _json_files(directory):
        rel = p.relative_to(directory)
        if rel.as_posix() == "manifest.json":
            continue
        s = rel.as_posix()
        if s.endswith(".certificate.json"):
            continue
        name = s[: -len(".program.json")] if s.endswith(".program.json") else s[: -len(".json")]
        cert = directory / f"{name}.certificate.json"
        if not s.endswith(".program.json") and not cert.exists() and not _says_program(p):
            continue  # a plain .json that is no program document and has no certificate is not in the layout
        if name in found:
            raise ParseError(str(p), f"two programs are named {name!r} ({found[name].program.name} and {p.name})")
        found[name] = Found(name, p, cert if cert.exists() else None)
    return [found[n] for n in sorted(found)]


@attrs.frozen
class Outcome:
    """The gate's verdict on one program (module docstring): ``status``, a one-line ``detail``, the ``report``
    (all results when certified, only the replayed refutations when re-established from candidates; None when not
    run, or dropped by ``summary_only``), the program's (engine programs, ops), ``how`` (``computed``, ``cache``,
    ``replayed``), seconds, and ``proved`` (obligations proved, obligations in the report; None when not run)."""

    name: str
    status: str
    detail: str
    expected: Expectation | None = None
    program: Path | None = None
    report: Report | None = None
    shape: tuple[int, int] = (0, 0)
    how: str = ""
    seconds: float = 0.0
    proved: tuple[int, int] | None = attrs.field(default=None)

    @proved.validator
    def _counted(self, _a: Any, v: tuple[int, int] | None) -> None:
        # the counts are the report's whenever the report is kept (the summary table reads either)
        if self.report is not None and v is not None:
            rs = self.report.results
            if v != (sum(1 for r in rs if r.verdict == Verdict.PROVED), len(rs)):
                raise ValueError(f"{self.name}: proved {v} is not its report's")

    @property
    def ok(self) -> bool:
        return self.status not in FAILING

    def summary_only(self) -> Outcome:
        """This outcome without its report when the report says nothing the summary does not (a program expected
        to prove that holds: every obligation proved, counted in ``proved``); a gate over thousands of programs
        keeps one line each instead of every report (docs/ci.md)."""
        if self.report is None or self.status != "holds" or (self.expected is not None
                                                              and self.expected.expect != "proved"):
            return self
        rs = self.report.results
        return attrs.evolve(self, report=None, proved=(sum(1 for r in rs if r.verdict == Verdict.PROVED), len(rs)))


@attrs.frozen
class GateRun:
    """Every outcome, in name order, and what the gate did: the store's counters, seconds, the revision of
    ``--changed`` and whether the checker itself changed since it."""

    directory: Path
    outcomes: tuple[Outcome, ...]
    seconds: float
    cache: dict[str, int] = attrs.field(factory=dict)
    changed_since: str | None = None
    checker_changed: bool = False
    manifest: Manifest | None = None

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


# --------------------------------------------------------------------------------------------- one program


def judge(name: str, report: Report, exp: Expectation | None) -> tuple[str, str]:
    """(status, detail) of a full report against the expectation (None: expected proved)."""
    bad = [r for r in report.results if r.verdict != Verdict.PROVED]
    if exp is None or exp.expect == "proved":
        if not bad:
            return "holds", f"proved: {len(report.results)} obligations"
        fams = sorted({r.family for r in bad})
        names = ", ".join(f"{r.family}/{r.name} ({r.verdict.value})" for r in bad[:3])
        more = f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""
        return "lost", f"lost proof in {', '.join(fams)}: {len(bad)} obligations not proved: {names}{more}"
    refuted = {r.family for r in report.results if r.verdict == Verdict.REFUTED}
    missing = [f for f in exp.refuted if f not in refuted]
    if missing:
        got = "proved" if report.exit_code == 0 else ("refuted in " + ", ".join(sorted(refuted)) if refuted
                                                      else "not refuted (" + ", ".join(sorted({r.verdict.value
                                                                                               for r in bad})) + ")")
        return "changed", f"changed verdict: expected refuted in {', '.join(exp.refuted)}, got {got}"
    also = sorted(refuted - set(exp.refuted))
    return "holds", (f"refuted as expected in {', '.join(exp.refuted)}"
                     + (f" (also refuted: {', '.join(also)})" if also else ""))


def recording_refusal(report: Report, expect: str = "proved") -> str | None:
    """Why the certificate of ``report``'s program is not to be recorded (``certify --write-certificate
    --expect``) when ``expect`` (``EXPECT``) is what the manifest expects of it, or None when it is: ``proved``
    needs every obligation proved; ``refuted`` (a broken program kept in a corpus on purpose, docs/ci.md) needs
    some obligation refuted, which the interpreter replayed, and no checker error. Raises ``ValueError`` for an
    ``expect`` not in ``EXPECT``."""
    if expect not in EXPECT:
        raise ValueError(f"expect is one of {', '.join(EXPECT)}, got {expect!r}")

    def which(v: Verdict) -> str:
        rs = [r for r in report.results if r.verdict == v]
        fams = sorted({r.family for r in rs})
        return f"{len(rs)} obligation{'s' if len(rs) != 1 else ''} {v.value} ({', '.join(fams)})"

    vs = {r.verdict for r in report.results}
    if expect == "proved":
        if vs <= {Verdict.PROVED}:
            return None
        worst = next(v for v in (Verdict.REFUTED, Verdict.ERROR, Verdict.FAILED) if v in vs)
        hint = ": a certificate is written only when every obligation is proved"
        if worst == Verdict.REFUTED:
            hint += ", or with --expect refuted for a program the gate's manifest expects refuted"
        return which(worst) + hint
    if Verdict.ERROR in vs:
        return which(Verdict.ERROR) + ": a checker error is never recorded"
    if Verdict.REFUTED not in vs:
        return "expected refuted, but no obligation is refuted" + (f" ({which(Verdict.FAILED)})"
                                                                     if Verdict.FAILED in vs else "")
    return None


@attrs.frozen
class Task:
    """One program for a worker: paths, expectation, cache root (None: no persistent cache), resource limit."""

    found: Found
    expected: Expectation | None
    cache_root: str | None
    rlimit: int | None = None


def _in_file(path: str, e: VerispatialError) -> ParseError:
    """``e`` as a ``ParseError`` whose field starts with the file's name: the gate's line names the program, and a
    program has two files (its program and its certificate)."""
    name = Path(path).name
    if isinstance(e, ParseError):
        field = e.field if e.field not in ("", path) else ""
        return ParseError(f"{name}: {field}" if field else name, e.rule)
    return ParseError(name, str(e))


def _load(path: str) -> Any:
    """The program of ``path``: a templated one as it is (``serialize.load_document``; the checker proves it from its
    templates)."""
    from verispatial.ir.serialize import load_document

    try:
        return load_document(path)
    except VerispatialError as e:
        raise _in_file(path, e) from None


def _load_cert(path: str) -> dict[str, Any]:
    from verispatial.certify.certificate import check_certificate_shape
    from verispatial.ir.serialize import parse_json, read_document

    try:
        doc = parse_json(read_document(path, "a certificate .json file"))
        if not isinstance(doc, dict):
            raise ParseError("(document)", "a certificate is a JSON object")
        check_certificate_shape(doc)
    except VerispatialError as e:
        raise _in_file(path, e) from None
    return doc


def _candidates_key(store: ProofStore, t: Task) -> str:
    from verispatial.certify.rlimits import DEFAULT_RLIMIT
    from verispatial.driver.files import file_key

    cert = t.found.certificate.read_bytes() if t.found.certificate is not None else None
    return store.key("refutations", file_key(store, t.found.program.read_bytes(), cert,
                                             DEFAULT_RLIMIT if t.rlimit is None else t.rlimit))


def _replayed(t: Task, store: ProofStore, say: Say | None) -> Outcome | None:
    """The expected refutations re-established from cached candidates, or None (then certify in full)."""
    from verispatial.certify.checker import replay_refutation
    from verispatial.driver.search import propose_deadlock
    from verispatial.ir.templated import TemplatedProgram, document_summary

    exp = t.expected
    assert exp is not None
    t0 = time.perf_counter()
    got = store.get("refutations", _candidates_key(store, t))
    if got is None:
        return None
    try:
        cands = [result_from_data(d) for d in got["results"]]
        program_name, target = str(got["program"]), str(got["target"])
    except (ValueError, KeyError, TypeError):
        store.reject()
        return None
    program = _load(str(t.found.program))
    if isinstance(program, TemplatedProgram):
        program = program.expand()  # a replay runs the whole program
    replayed: list[Result] = []
    for fam in exp.refuted:
        mine = sorted((c for c in cands if c.family == fam and c.verdict == Verdict.REFUTED), key=lambda c: c.seconds)
        again = None
        for c in mine[:2]:
            again = replay_refutation(program, c, search=propose_deadlock)
            if again is not None:
                break
        if again is None:
            return None
        replayed.append(again)
        if say is not None:
            say(f"{t.found.name}: {fam}: {again.name} replayed")
    report = Report(program_name, target, tuple(replayed), time.perf_counter() - t0)
    return Outcome(t.found.name, "holds",
                   f"refuted as expected in {', '.join(exp.refuted)} (candidates replayed by the interpreter)",
                   exp, t.found.program, report, document_summary(program), "replayed", time.perf_counter() - t0)


def check_one(t: Task, say: Say | None = None, cache: Any = None) -> tuple[Outcome, dict[str, int]]:
    """The outcome for one program and the counters of the store it used (a top-level function: worker processes
    run it). ``cache`` may share a ``ProofCache`` over the same store between programs of one process."""
    from verispatial.driver.files import certify_file

    t0 = time.perf_counter()
    store = ProofStore(t.cache_root) if t.cache_root is not None else None
    if cache is not None and getattr(cache, "store", None) is not None:
        store = cache.store
    before = store.stats() if store is not None else {}
    exp = t.expected
    f = t.found

    def done(o: Outcome) -> tuple[Outcome, dict[str, int]]:
        after = store.stats() if store is not None else {}
        return o, {k: after[k] - before.get(k, 0) for k in after}

    if f.certificate is None:
        return done(Outcome(f.name, "no-certificate", f"{f.program.name} has no {f.name.split('/')[-1]}"
                            ".certificate.json beside it: every program under the gate carries its certificate",
                            exp, f.program, seconds=time.perf_counter() - t0))
    try:
        if exp is not None and exp.expect == "refuted" and store is not None:
            hit = _replayed(t, store, say)
            if hit is not None:
                return done(hit)
        fr = certify_file(f.program, _load, f.certificate, _load_cert, store=store, rlimit=t.rlimit, cache=cache,
                          progress=None)
    except VerispatialError as e:
        return done(Outcome(f.name, "bad-input", str(e), exp, f.program, seconds=time.perf_counter() - t0))
    except OSError as e:  # e.g. a file removed between the walk and the read
        return done(Outcome(f.name, "bad-input", f"cannot read {Path(e.filename).name if e.filename else f.program.name}"
                            f": {e.strerror or e}", exp, f.program, seconds=time.perf_counter() - t0))
    except Exception as e:
        return done(Outcome(f.name, "error", f"checker error: {type(e).__name__}: {e}", exp, f.program,
                            seconds=time.perf_counter() - t0))
    status, detail = judge(f.name, fr.report, exp)
    if store is not None and exp is not None and exp.expect == "refuted" and status == "holds":
        refs = [result_to_data(r) for r in fr.report.results if r.verdict == Verdict.REFUTED]
        store.put("refutations", _candidates_key(store, t),
                  {"program": fr.report.program, "target": fr.report.target, "results": refs})
    return done(Outcome(f.name, status, detail, exp, f.program, fr.report, fr.shape, fr.how,
                        time.perf_counter() - t0))


def _check_in_worker(t: Task) -> tuple[Outcome, dict[str, int]]:
    return check_one(t)


# --------------------------------------------------------------------------------------------- --changed


def _git(cwd: Path, *args: str) -> str:
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise ParseError("--changed", (r.stderr.strip().splitlines() or ["git failed"])[-1])
    return r.stdout


def changed_names(directory: Path, rev: str, found: Sequence[Found], manifest: Manifest | None) -> tuple[set[str], bool]:
    """The names of programs whose program or certificate file differs from revision ``rev`` (or is not tracked),
    or whose manifest entry differs; and whether the checker's own source (the ``verispatial`` package, when it
    lives in the same repository) differs, in which case every program is to be re-checked. ``ParseError`` when
    ``directory`` is not in a git work tree or ``rev`` is not a revision."""
    top = Path(_git(directory, "rev-parse", "--show-toplevel").strip())
    try:
        _git(directory, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except ParseError:  # --quiet: git says nothing; name the revision
        raise ParseError("--changed", f"{clip(rev, QUOTE_MAX)!r} is not a revision of {top}") from None
    diff = _git(top, "diff", "--name-only", rev, "--", str(directory.resolve().relative_to(top.resolve())))
    untracked = _git(top, "ls-files", "--others", "--exclude-standard", "--",
                     str(directory.resolve().relative_to(top.resolve())))
    touched = {(top / line).resolve() for line in (diff + untracked).splitlines() if line}
    names = {f.name for f in found if f.program.resolve() in touched
             or (f.certificate is not None and f.certificate.resolve() in touched)}
    if manifest is not None and manifest.path is not None:
        rel = manifest.path.resolve().relative_to(top.resolve()).as_posix()
        shown = subprocess.run(["git", "show", f"{rev}:{rel}"], cwd=top, capture_output=True, check=False)
        old: dict[str, Expectation] = {}
        if shown.returncode == 0:
            try:
                old = parse_manifest(json.loads(shown.stdout), rel).programs
            except (ParseError, ValueError):
                old = {}
        for n, e in manifest.programs.items():
            if old.get(n) != e:
                names.add(n)
    pkg = Path(__file__).resolve().parent.parent
    checker = False
    try:
        rel_pkg = pkg.relative_to(top.resolve())
    except ValueError:
        rel_pkg = None
    if rel_pkg is not None:
        checker = bool(_git(top, "diff", "--name-only", rev, "--", str(rel_pkg)).strip())
    return names, checker


# --------------------------------------------------------------------------------------------- the gate


def gate(directory: str | Path, *, manifest: str | Path | None = None, ci_only: bool = False, jobs: int = 1,
         changed: str | None = None, store: ProofStore | None = None, progress: Say | None = None,
         rlimit: int | None = None, scheduler: str | None = None, summary_only: bool = False) -> GateRun:
    """Run the gate over ``directory`` (module docstring). ``manifest`` defaults to ``DIR/manifest.json`` when it
    exists; ``ci_only`` checks only the manifest's ``ci`` programs; ``jobs`` > 1 checks programs in that many
    worker processes; ``changed`` re-checks only programs whose files differ from that git revision (all of them
    when the checker changed); ``store`` is the persistent proof cache (None: none); ``progress`` gets one line per
    program; ``scheduler`` (a Dask scheduler's address) runs the programs as tasks on that cluster instead
    (``cluster.map_on_cluster``; the store's directory must be one the workers see); ``summary_only`` keeps no
    report of a program expected to prove that holds (``Outcome.summary_only``: what the summary table needs, not
    the ``--json`` or JUnit outputs). Raises ``ParseError`` for a
    directory that is not one, a bad manifest, a bad revision or a scheduler that cannot be reached."""
    from verispatial.driver.cache import ProofCache

    t0 = time.perf_counter()
    d = Path(directory)
    if not d.is_dir():
        raise ParseError(str(d), "is not a directory of proofs")
    mpath = Path(manifest) if manifest is not None else (d / "manifest.json")
    man = load_manifest(mpath) if (manifest is not None or mpath.exists()) else None
    found = discover(d)
    if not found and man is None:
        raise ParseError(str(d), "holds no *.program.json")
    by_name = {f.name: f for f in found}
    outcomes: dict[str, Outcome] = {}
    tasks: list[Task] = []
    root = str(store.root) if store is not None else None
    selected = {n: e for n, e in man.programs.items() if e.ci or not ci_only} if man is not None else None
    for f in found:
        if selected is not None and f.name not in man.programs:  # type: ignore[union-attr]
            outcomes[f.name] = Outcome(f.name, "extra", "not in the manifest: add it (with its expected verdict) "
                                       "or remove the files", None, f.program)
        elif selected is None or f.name in selected:
            tasks.append(Task(f, selected.get(f.name) if selected is not None else None, root, rlimit))
    unbuilt = sorted(n for n, e in (selected or {}).items() if n not in by_name and not e.ci)
    if unbuilt:
        # Programs kept out of --ci are regenerated rather than committed: on a fresh clone they are simply not
        # built yet, which is no lost proof; say what to build instead of failing each one after checking the rest.
        how = f"`{man.regenerate}`" if man is not None and man.regenerate else "the corpus's builder"
        more = f" (+{len(unbuilt) - 3} more)" if len(unbuilt) > 3 else ""
        raise ParseError(str(d), f"{len(unbuilt)} program{'s' if len(unbuilt) != 1 else ''} the manifest lists "
                         f"with ci: false (regenerated, not committed) {'are' if len(unbuilt) != 1 else 'is'} not "
                         f"built: {', '.join(unbuilt[:3])}{more}; build them first with {how}, or gate only the "
                         "committed programs with --ci")
    for name, e in (selected or {}).items():
        if name not in by_name:
            outcomes[name] = Outcome(name, "missing", f"listed in the manifest, but {name}.program.json is not under {d}"
                                  + (f" (regenerate: {man.regenerate})" if man is not None and man.regenerate else ""),
                                  e)
    checker_changed = False
    if changed is not None:
        names, checker_changed = changed_names(d, changed, found, man)
        if not checker_changed:
            keep = []
            for t in tasks:
                if t.found.name in names:
                    keep.append(t)
                else:
                    outcomes[t.found.name] = Outcome(t.found.name, "skipped", f"unchanged since {changed}",
                                                     t.expected, t.found.program)
            tasks = keep
    stats: dict[str, int] = {}
    n = len(tasks)

    def record(k: int, o: Outcome, st: dict[str, int]) -> None:
        outcomes[o.name] = o.summary_only() if summary_only else o
        for key, v in st.items():
            stats[key] = stats.get(key, 0) + v
        if progress is not None:
            progress(f"[{k}/{n}] {o.name}: {o.status} ({o.how or 'not run'}, {o.seconds:.2f} s)")

    if scheduler is not None and n:
        from verispatial.driver.cluster import map_on_cluster

        for k, (o, st) in enumerate(map_on_cluster(scheduler, _check_in_worker, tasks), 1):
            record(k, o, st)
    elif jobs > 1 and n > 1:
        from concurrent.futures import as_completed

        from verispatial.driver.workers import worker_pool

        with worker_pool(min(jobs, n)) as pool:  # one worker per program at most: a forked pool starts them all
            futs = [pool.submit(_check_in_worker, t) for t in tasks]
            for k, fut in enumerate(as_completed(futs), 1):
                o, st = fut.result()
                record(k, o, st)
    else:
        shared = ProofCache(store)  # isomorphic components of different programs share proofs in one process
        for k, t in enumerate(tasks, 1):
            o, st = check_one(t, cache=shared)
            record(k, o, st)
    ordered = tuple(outcomes[k] for k in sorted(outcomes))
    return GateRun(d, ordered, time.perf_counter() - t0, stats, changed, checker_changed, man)
