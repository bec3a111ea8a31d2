"""Certify a program *file* through the persistent proof cache (``store.py``): what ``certify`` and ``gate`` run.

The ``file`` entry maps the bytes of the program file and of its certificate file (and the resource limit) to the
key of the ``program`` entry holding the proved report, so a warm run reads two small files of the cache and never
parses the program: equal bytes load to the same program, because the loader's source is part of the checker's
version in every key. A miss loads the program, certifies it with a ``ProofCache`` over the same store (whole
program, then each renaming-invariant obligation of each component), and indexes the file when every obligation
proved.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from verispatial.certify.report import Report
from verispatial.driver.store import ProofStore, file_key, get_report, program_key
from verispatial.ir.limits import DOCUMENT_MAX_BYTES
from verispatial.ir.program import Program
from verispatial.ir.templated import TemplatedProgram
from verispatial.regular_file import not_regular

Say = Callable[[str], None]

__all__ = ["FileReport", "certify_file", "file_key"]


@attrs.frozen(eq=False)
class FileReport:
    """The report on one program file, its program's (engine programs, ops), the loaded ``program`` (None when the
    report came from the file index: the program was not parsed) and ``how`` (``computed``, ``cache``: the whole
    report from the proof cache)."""

    report: Report
    shape: tuple[int, int]
    program: Program | TemplatedProgram | None
    how: str


def certify_file(program_path: str | Path, load_program: Callable[[str], Program | TemplatedProgram],
                 certificate_path: str | Path | None = None,
                 load_certificate: Callable[[str], dict[str, Any]] | None = None, *,
                 store: ProofStore | None = None, jobs: int = 1, progress: Say | None = None,
                 rlimit: int | None = None, cache: Any = None) -> FileReport:
    """Certify the program in ``program_path`` (against the certificate in ``certificate_path`` when given).

    ``load_program`` / ``load_certificate`` read the files (their errors propagate: the CLI's raise ``BadInput``).
    With ``store``, the file index and the store's proofs are used (module docstring); ``cache`` may pass a
    ``ProofCache`` to share across several files (it must hold the same store). Raises what the loaders raise.
    """
    from verispatial.certify.rlimits import DEFAULT_RLIMIT

    limit = DEFAULT_RLIMIT if rlimit is None else rlimit
    t0 = time.perf_counter()
    fkey = ""
    if store is not None:
        try:
            # a FIFO would block the read, /dev/zero never end it: the loader refuses both
            too_big = any(not_regular(x) is not None or Path(x).stat().st_size > DOCUMENT_MAX_BYTES
                          for x in (program_path, certificate_path) if x is not None)
            pbytes = b"" if too_big else Path(program_path).read_bytes()  # the loader refuses it
            cbytes = Path(certificate_path).read_bytes() if certificate_path is not None and not too_big else None
        except OSError:
            pbytes, cbytes = b"", None  # the loader reports it
        if pbytes:
            fkey = file_key(store, pbytes, cbytes, limit)
            got = store.get("file", fkey)
            pkey = got.get("program") if isinstance(got, dict) else None
            if got is not None and not isinstance(pkey, str):
                store.reject()
            hit = get_report(store, "program", pkey) if isinstance(pkey, str) else None
            if hit is not None:
                if progress is not None:
                    progress("every obligation from the proof cache")
                return FileReport(attrs.evolve(hit[0], seconds=time.perf_counter() - t0), hit[1], None, "cache")
    # The kernel is imported only now: a run the file index answers never needs it (its modules' imports were most
    # of a warm run's time).
    from verispatial.driver.cache import ProofCache
    from verispatial.driver.run import certify
    from verispatial.ir.templated import document_summary

    program = load_program(str(program_path))
    cert = load_certificate(str(certificate_path)) if certificate_path is not None and load_certificate else None
    if cert is not None:
        _check_certificate_kind(str(certificate_path), program, cert)
    pc = cache if cache is not None else ProofCache(store)
    kwargs: dict[str, Any] = {"certificate": cert, "jobs": jobs, "progress": progress}
    if rlimit is not None:
        kwargs["rlimit"] = rlimit
    if store is not None or cache is not None:
        kwargs["cache"] = pc
    report = certify(program, **kwargs)
    shape = document_summary(program)
    how = "cache" if report.cached else "computed"
    if store is not None and fkey and report.exit_code == 0:
        store.put("file", fkey, {"program": program_key(store, program, cert, limit)})
    return FileReport(report, shape, program, how)


def _check_certificate_kind(path: str, program: Program | TemplatedProgram, cert: dict[str, Any]) -> None:
    """``BadInput`` when ``cert`` is of the other kind of program: version 4 is a templated program's (a version-3
    document), versions 1-3 a program stated in full's — a certificate of the wrong kind is bad input, as one of an
    unknown version is, not a certificate the checker refutes."""
    from verispatial.certify.certificate import TEMPLATED_VERSION
    from verispatial.errors import BadInput

    templated = isinstance(program, TemplatedProgram)
    if (cert.get("version") == TEMPLATED_VERSION) != templated:
        want = (f"version {TEMPLATED_VERSION} (the program is templated: a version-3 document)" if templated
                else f"version 1-3 (version {TEMPLATED_VERSION} certifies a templated program; this one is stated "
                     "in full)")
        raise BadInput(path, "version", f"a certificate of {want}, got version {cert.get('version')}")

