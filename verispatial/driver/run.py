"""The driver's entry to the checker: ``certify`` looks the program up in the proof store, hands the trusted kernel
(``certify.checker.check``) what makes it fast or helpful — the proof cache, a worker pool, the interpreter's
deadlock search — and keeps a report whose every obligation proves.

Trust: the kernel's verdict depends on none of these (docs/checker.md, "Trusted kernel"). A report read back from
the store is the kernel's own earlier verdict on this very content (program, certificate, resource limit, checker
and solver versions: ``store.program_key``), trusted by provenance, named by ``Report.cached`` and left out with
``--no-cache``; nothing is read from the store while queries are exported (``--smt2``).
"""

from __future__ import annotations

import time
from typing import Any

import attrs

from verispatial.certify import smt
from verispatial.certify.canon import ProofMemo
from verispatial.certify.checker import Progress, check
from verispatial.certify.report import Report
from verispatial.certify.smt import DEFAULT_RLIMIT
from verispatial.driver.cache import ProofCache
from verispatial.driver.search import propose_deadlock
from verispatial.driver.store import get_report, program_key, put_report
from verispatial.driver.workers import worker_pool
from verispatial.ir.program import Program
from verispatial.ir.templated import TemplatedProgram, document_summary


def certify(program: Program | TemplatedProgram, certificate: dict[str, Any] | None = None, *, jobs: int = 1,
            progress: Progress | None = None, rlimit: int = DEFAULT_RLIMIT,
            cache: ProofMemo | bool = True, compositional: bool = True) -> Report:
    """Every obligation of ``program`` decided by the kernel (``checker.check``; the arguments are its own) with
    the driver's worker pool for ``jobs`` > 1 and its deadlock search. ``cache``: True proves each
    renaming-invariant obligation once per class of isomorphic components; a ``ProofCache`` also reuses proofs
    of earlier runs given the same instance, and one with a ``store`` (``store.py``) also returns the report kept
    there for this very program, certificate and resource limit when every obligation of it proved before
    (``Report.cached`` names the entry), and keeps a report whose every obligation proves; False proves every
    component separately. Raises nothing for a well-formed program: solver trouble becomes ``failed-to-prove``.
    """
    say = progress or (lambda _m: None)
    t0 = time.perf_counter()
    memo = (ProofCache() if cache else None) if isinstance(cache, bool) else cache
    store = memo.store if isinstance(memo, ProofCache) and not smt.is_exporting() else None
    pkey = ""
    if store is not None:
        pkey = program_key(store, program, certificate, rlimit)
        hit = get_report(store, "program", pkey)
        if hit is not None:
            say("every obligation from the proof cache")
            return attrs.evolve(hit[0], seconds=time.perf_counter() - t0)
    report = check(program, certificate, jobs=jobs, progress=progress, rlimit=rlimit,
                   cache=memo if memo is not None else False, compositional=compositional,
                   pool=worker_pool, search=propose_deadlock)
    if store is not None:
        put_report(store, "program", pkey, report, document_summary(program))
    return attrs.evolve(report, seconds=time.perf_counter() - t0)
