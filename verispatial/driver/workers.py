"""Worker processes for ``--jobs``: a process pool that an interrupt, a spent budget or an error ends at once.

Why not ``with ProcessPoolExecutor(...)``: leaving that block waits for every submitted task, so after a SIGINT
the command went on for as long as the queued programs took (about two minutes for ``gate --jobs 2 proofs``)
before it exited 130. Here the workers are terminated by their own handles and the queued work dropped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """End the worker processes of ``pool`` (their tasks are not waited for), by their own handles, and drop the
    queued work. Waits at most 5 s per worker for it to go."""
    handles = list((getattr(pool, "_processes", None) or {}).values())  # taken before shutdown drops them
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in handles:
        with contextlib.suppress(Exception):
            proc.terminate()
    for proc in handles:
        with contextlib.suppress(Exception):
            proc.join(5)


@contextlib.contextmanager
def worker_pool(jobs: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``jobs`` worker processes (forked where the platform can, so they inherit the run's budget and
    loaded modules): shut down normally when the block ends, stopped at once (``stop_pool``) when anything is
    raised out of it, ``budget.Interrupted`` included. ``multiprocessing`` and ``concurrent.futures`` are imported
    here: a run of one job (``certify -q`` of a decode step) never needs them (about 25 ms of its start)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)
    try:
        yield pool
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown()
