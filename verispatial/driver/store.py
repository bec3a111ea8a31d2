"""The persistent proof cache shared by ``certify``, ``compile`` and ``gate``: proofs kept on disk between runs.

**Content-addressed.** Every entry's key is the SHA-256 of what its verdicts depend on and nothing else:

- ``component``: one renaming-invariant obligation of an independent component (``cache.py``): its family, the
  component's canonical form (engine programs with ids renumbered and sites translated, buffer/word/group/trip
  tables, the target), the obligation's canonical subject and parameters (resource limit included);
- ``program``: one whole program (its canonical JSON, ``serialize.dumps``; the compositional checker's slices are
  already canonical, equal up to renaming), the certificate it was compared with (canonical JSON), the resource
  limit, whether the exact shortcuts were on and the checker's options;
- ``summary``: under a ``program`` entry's own key, what the human report of that proved report prints (its
  program, target and shape, per family the count and seconds: ``certify/summary.py``), a few hundred bytes where the
  report is the size of its obligations (17.7 MB for the 16-layer decode step's 54,817): a warm ``certify``
  (``cli/warm.py``) prints from it alone;
- ``file``: the bytes of a program file and of its certificate file with the same options: an index from the
  bytes to the ``program`` key, so a warm ``certify`` or ``gate`` never parses the file (the loader is part of the
  checker's version below, so equal bytes always load to the same program);
- ``refutations``: the refuted results of a program that did not prove, kept only as *candidates* for the gate
  (``gate.py``): a candidate is never a verdict, it is replayed by the interpreter before the gate counts it.

plus, in every key, the **checker's version** (``checker_version``: the package version and the SHA-256 of every
source and data file of the ``verispatial`` package, so any change to the checker, the interpreter or the loader
starts a new cache) and the **solver's version** (``solver_version``: the installed ``z3-solver``).

**Only ``proved`` is reused.** A ``component`` entry is written for a proved result only, a ``program`` entry for a
report whose every obligation proved; reading one back checks that again. A refutation needs its own replayed
counterexample and a failure to prove is re-derived.

**On disk**, one JSON file per entry, ``ROOT/v1/<kind>/<key[:2]>/<key>.json``; ``ROOT`` is ``--cache-dir``, else
``$VERISPATIAL_CACHE_DIR``, else the user's cache directory (``platformdirs.user_cache_dir("verispatial")``: on
Linux ``$XDG_CACHE_HOME/verispatial`` or ``~/.cache/verispatial``). Each file is an envelope — format, version,
kind, key, checker and solver versions, the SHA-256 of the payload and, last, the payload in its canonical text (the
text the SHA-256 is of, so a reader checks it on those bytes) — written to a temporary file
in the same directory and renamed into place (``os.replace`` is atomic), so concurrent writers (``--jobs``, several
CI jobs on one cache) never leave a half-written entry: a reader sees the old file, the new one, or none. An entry
that does not parse, whose envelope or digest does not match, that was written by another checker or solver, or
whose payload is not a proof, is *ignored* (counted in ``ignored``) and recomputed, and the new result replaces it.
A cache that cannot be written is not an error: the run goes on without it (``write_errors``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Light on purpose: a warm ``certify`` (``cli/warm.py``) reads the store before any IR, attrs or solver module is
# imported; the report's classes are imported by the functions that build or read a report.
if TYPE_CHECKING:
    from verispatial.certify.report import Report
    from verispatial.certify.summary import Summary
    from verispatial.ir.program import Program
    from verispatial.ir.templated import TemplatedProgram

FORMAT = "verispatial.proof-cache"
VERSION = 1
KINDS = ("component", "program", "summary", "file", "refutations")
#: Environment variable naming the cache directory (below ``--cache-dir``, above the user's cache directory).
ENV = "VERISPATIAL_CACHE_DIR"


@functools.cache
def checker_version() -> str:
    """``<package version>+<sha256 prefix>`` over every ``.py`` and ``.json`` file of the ``verispatial`` package
    (relative path and bytes, in sorted order): the checker, its interpreter and its loader as they are now."""
    from verispatial import __version__

    root = str(Path(__file__).resolve().parent.parent)
    files: list[tuple[list[str], str]] = []
    # os.walk without descending into __pycache__ (every warm run pays this walk: 5 ms against rglob's 9 ms);
    # sorted by path components, as the Path objects it replaced sorted
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        rel = os.path.relpath(d, root)
        parts = [] if rel == "." else rel.split(os.sep)
        files += [([*parts, n], os.path.join(d, n)) for n in names
                  if n.endswith((".py", ".json")) and os.path.isfile(os.path.join(d, n))]
    h = hashlib.sha256()
    for parts, path in sorted(files):
        with open(path, "rb") as fh:
            data = fh.read()
        h.update("/".join(parts).encode() + b"\0")
        h.update(data + b"\0")
    return f"{__version__}+{h.hexdigest()[:20]}"


@functools.cache
def solver_version() -> str:
    """``z3-solver <version>`` from the installed distribution's metadata (no import of z3), else the library's
    own ``z3.get_full_version()``."""
    found = _dist_info_version("z3_solver")
    if found is not None:
        return f"z3-solver {found}"
    from importlib import metadata

    try:
        return f"z3-solver {metadata.version('z3-solver')}"
    except metadata.PackageNotFoundError:
        import z3

        return f"z3 {z3.get_full_version()}"


def _dist_info_version(name: str) -> str | None:
    """The ``Version`` of distribution ``name`` (normalised: lower case, ``_`` for ``-``) as ``importlib.metadata``
    finds it — the first entry of ``sys.path`` holding a ``<name>-<version>.dist-info`` directory — read from that
    directory's ``METADATA``; None when the first entry that holds the distribution holds it any other way (an
    ``.egg-info``, two versions, an unreadable file): then ``importlib.metadata`` answers. Importing
    ``importlib.metadata`` costs a warm run 9 ms, this scan a fraction of one."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        hits = [n for n in names if n.lower().endswith((".dist-info", ".egg-info"))
                and n.rsplit(".", 1)[0].split("-", 1)[0].lower().replace(".", "_").replace("-", "_") == name]
        if not hits:
            continue
        if len(hits) != 1 or not hits[0].endswith(".dist-info"):
            return None
        try:
            with open(os.path.join(entry or ".", hits[0], "METADATA"), encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith("Version:"):
                        return line[len("Version:"):].strip() or None
                    if not line.strip():  # the end of the headers
                        return None
        except OSError:
            return None
        return None
    return None


def default_root() -> Path:
    """``$VERISPATIAL_CACHE_DIR``, else ``platformdirs.user_cache_dir("verispatial")``."""
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("verispatial", appauthor=False))


def digest(*parts: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``parts``; ``bytes`` parts are hashed by their own SHA-256."""
    norm = [hashlib.sha256(p).hexdigest() if isinstance(p, bytes) else p for p in parts]
    return hashlib.sha256(json.dumps(norm, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _canonical(x: Any) -> bytes:
    """The canonical JSON text of ``x`` (as ``digest`` writes each part)."""
    return json.dumps(x, sort_keys=True, separators=(",", ":")).encode()


#: What separates an entry's envelope from its payload, written last (``ProofStore.put``).
_PAYLOAD = b',"payload":'


def _canonical_entry(data: bytes) -> dict[str, Any] | None:
    """The envelope of an entry ``put`` wrote (its payload last, in canonical text) with the payload read from the
    very bytes its digest is checked on; None when ``data`` is not such an entry (another layout, or a digest that
    does not match these bytes: the caller then parses and checks it the general way). The payload's SHA-256 over
    its bytes equals the recorded one only if those bytes are the canonical text ``put`` hashed, so the payload
    parsed from them is the one written: a warm read hashes 17.6 MB (the 16-layer decode step's report) instead of
    parsing them and writing them out again to hash."""
    at = data.find(_PAYLOAD)
    if at < 0 or not data.endswith(b"}"):
        return None
    try:
        head = json.loads(data[:at] + b"}")
    except (ValueError, RecursionError):
        return None
    body = data[at + len(_PAYLOAD):-1]
    if not isinstance(head, dict) or "payload" in head or not isinstance(head.get("sha256"), str) \
            or hashlib.sha256(b"[" + body + b"]").hexdigest() != head["sha256"]:
        return None
    head["payload"] = json.loads(body)
    return head


class ProofStore:
    """Entries on disk under ``root`` (module docstring). ``get`` and ``put`` never raise for a problem with the
    cache itself; the counters say what happened (``hits``, ``misses``, ``ignored``, ``written``, ``write_errors``)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.hits = 0
        self.misses = 0
        self.ignored = 0
        self.written = 0
        self.write_errors = 0

    @classmethod
    def default(cls) -> ProofStore:
        """The store in ``default_root()``."""
        return cls(default_root())

    def key(self, kind: str, *material: Any) -> str:
        """The content address of ``material`` for entries of ``kind``: with the checker's and the solver's
        versions. Raises ValueError for an unknown kind."""
        if kind not in KINDS:
            raise ValueError(f"unknown proof cache kind {kind!r}: one of {', '.join(KINDS)}")
        return digest(FORMAT, VERSION, kind, checker_version(), solver_version(), *material)

    def path(self, kind: str, key: str) -> Path:
        return self.root / f"v{VERSION}" / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str) -> Any:
        """The payload stored for ``key``, or None when there is none or it is not to be trusted (foreign,
        corrupt: counted in ``ignored``)."""
        p = self.path(kind, key)
        try:
            data = p.read_bytes()
        except OSError:
            self.misses += 1
            return None
        env: Any = None
        try:
            # An entry ``put`` wrote has its digest checked on its payload's bytes; any other (an older layout, a
            # damaged file) is parsed whole and its payload written out again to be hashed.
            env = _canonical_entry(data)
            if env is None:
                env = json.loads(data)
                ok = isinstance(env, dict) and "payload" in env and env.get("sha256") == digest(env["payload"])
            else:
                ok = True
            ok = (ok and isinstance(env, dict) and env.get("format") == FORMAT and env.get("version") == VERSION
                  and env.get("kind") == kind and env.get("key") == key and env.get("checker") == checker_version()
                  and env.get("solver") == solver_version())
        except (ValueError, RecursionError):
            ok = False
        if not ok:
            self.ignored += 1
            return None
        self.hits += 1
        return env["payload"]

    def reject(self) -> None:
        """Count an entry that was read but whose payload the caller will not use (not a proof, wrong shape): the
        read is moved from ``hits`` to ``ignored``."""
        self.hits -= 1
        self.ignored += 1

    def put(self, kind: str, key: str, payload: Any) -> bool:
        """Write ``payload`` under ``key`` atomically (temporary file in the same directory, then a rename); False
        when the cache cannot be written (``write_errors``)."""
        p = self.path(kind, key)
        head = {"format": FORMAT, "version": VERSION, "kind": kind, "key": key, "checker": checker_version(),
                "solver": solver_version()}
        try:
            # The payload in its canonical text (what ``digest`` hashes), last: a reader checks the digest on these
            # very bytes (``_canonical_entry``) instead of writing the payload out again.
            body = _canonical(payload)
        except (TypeError, ValueError):
            self.write_errors += 1
            return False
        head["sha256"] = hashlib.sha256(b"[" + body + b"]").hexdigest()
        text = json.dumps(head, separators=(",", ":"))[:-1] + _PAYLOAD.decode() + body.decode() + "}"
        from verispatial import atomic  # tempfile and shutil: only a run that writes needs them

        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            atomic.write_text(p, text, prefix=key[:12])  # mode 0o666 & ~umask: a team's shared cache is shared
        except (OSError, TypeError, ValueError):
            self.write_errors += 1
            return False
        self.written += 1
        return True

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "ignored": self.ignored, "written": self.written,
                "write_errors": self.write_errors}

    def merge_stats(self, others: Iterable[dict[str, int]]) -> None:
        """Add the counters of stores used in worker processes."""
        for o in others:
            self.hits += o.get("hits", 0)
            self.misses += o.get("misses", 0)
            self.ignored += o.get("ignored", 0)
            self.written += o.get("written", 0)
            self.write_errors += o.get("write_errors", 0)


def open_store(cache_dir: str | None, no_cache: bool) -> ProofStore | None:
    """The store the command-line options ask for: None with ``--no-cache``, ``--cache-dir`` when given, else the
    default."""
    if no_cache:
        return None
    return ProofStore(cache_dir) if cache_dir else ProofStore.default()


def file_key(store: ProofStore, program_bytes: bytes, certificate_bytes: bytes | None, rlimit: int) -> str:
    """The ``file`` entry's key: both files' bytes and the resource limit (the CLI never turns the shortcuts off)."""
    return store.key("file", program_bytes, certificate_bytes, rlimit, True)


def put_report(store: ProofStore, kind: str, key: str, report: Report, shape: tuple[int, int]) -> bool:
    """Keep ``report`` (with ``shape``: engine programs and ops of its program) under ``key``, only when every
    obligation proved; False when it is not kept. A ``program`` entry also gets its ``summary`` entry under the same
    key (``get_summary``: what the human report prints of it), written after it: a summary names a report that is
    there."""
    from verispatial.certify.report import Verdict, results_to_columns

    if report.exit_code != 0 or not report.results or any(r.verdict != Verdict.PROVED for r in report.results):
        return False
    kept = store.put(kind, key, {"program": report.program, "target": report.target, "seconds": report.seconds,
                                 "shape": list(shape), "columns": results_to_columns(report.results)})
    if kept and kind == "program":
        from verispatial.certify.summary import family_rows

        store.put("summary", key, {"program": report.program, "target": report.target, "seconds": report.seconds,
                                   "shape": list(shape), "families": [list(r) for r in family_rows(report)]})
    return kept


def _cached_note(key: str, seconds: float) -> str:
    """``Report.cached`` of a report read from the ``program`` entry ``key`` that took ``seconds`` to prove."""
    return f"entry {key[:16]}, proved in {seconds:.2f} s by checker {checker_version()}"


def get_summary(store: ProofStore, key: str) -> Summary | None:
    """The ``summary`` entry of the proved report kept under ``program`` entry ``key`` (``put_report``), as the
    ``certify.summary.Summary`` its human report prints (``cached`` naming the entry, ``seconds`` 0: the caller
    measures its run); None when there is none or it is not the summary of a report whose every obligation proved
    (then it is ignored, as ``get_report`` ignores such a report)."""
    from verispatial.certify.summary import FamilyRow, Summary

    got = store.get("summary", key)
    if got is None:
        return None
    try:
        rows = tuple(FamilyRow(f, p, x, u, e, s) for f, p, x, u, e, s in got["families"])
        shape = got["shape"]
        ok = (bool(rows) and type(got["program"]) is str and type(got["target"]) is str
              and type(got["seconds"]) in (int, float) and type(shape) is list and len(shape) == 2
              and all(type(v) is int and v >= 0 for v in shape)
              and all(type(r.family) is str and type(r.proved) is int and r.proved > 0 and r.refuted == 0
                      and r.failed == 0 and r.error == 0 and type(r.seconds) in (int, float) for r in rows)
              and len({r.family for r in rows}) == len(rows))
    except (ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        store.reject()
        return None
    return Summary(got["program"], got["target"], (shape[0], shape[1]), rows, 0.0,
                   _cached_note(key, float(got["seconds"])))


def get_report(store: ProofStore, kind: str, key: str) -> tuple[Report, tuple[int, int]] | None:
    """The report kept under ``key`` and its program's shape, marked ``cached``; None when there is none, or it is
    not a report whose every obligation proved (then it is ignored)."""
    from verispatial.ir.serialize import no_cycle_collection

    with no_cycle_collection():
        return _read_report(store, kind, key)


def _read_report(store: ProofStore, kind: str, key: str) -> tuple[Report, tuple[int, int]] | None:
    from verispatial.certify.report import Report, Verdict, results_from_columns

    got = store.get(kind, key)
    if got is None:
        return None
    try:
        results = results_from_columns(got["columns"])
        shape = (int(got["shape"][0]), int(got["shape"][1]))
        if not results or any(r.verdict != Verdict.PROVED for r in results) or not isinstance(got["program"], str) \
                or not isinstance(got["target"], str) or not isinstance(got["seconds"], (int, float)):
            raise ValueError("not a proved report")
    except (ValueError, KeyError, TypeError, IndexError):
        store.reject()
        return None
    # ``seconds`` is the time of this run, which the caller measures; the entry's own time is in ``cached``.
    return Report(got["program"], got["target"], results, 0.0, cached=_cached_note(key, float(got["seconds"]))), shape


_LAST_KEY: list[tuple[Program | TemplatedProgram, Any, int, bool, str]] = []


def program_key(store: ProofStore, program: Program | TemplatedProgram, certificate: dict[str, Any] | None,
                rlimit: int) -> str:
    """The ``program`` entry's key (``store.py``): the program's canonical JSON (``serialize.dumps``), the
    certificate compared with it, the resource limit and whether the exact shortcuts are on. The last key is
    remembered for the same objects (a large program's text is not built twice)."""
    from verispatial.certify import smt
    from verispatial.ir.serialize import dumps

    route = smt.shortcuts()
    for prog, cert, lim, rt, key in _LAST_KEY:
        if prog is program and cert is certificate and lim == rlimit and rt == route:
            return key
    key = store.key("program", dumps(program).encode(), certificate, rlimit, route)
    _LAST_KEY[:] = [(program, certificate, rlimit, route, key)]
    return key
