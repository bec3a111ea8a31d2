"""Gate tasks on a Dask distributed cluster (``verispatial gate --scheduler ADDRESS``).

The gate's programs are independent tasks: each is certified (or its recorded refutation replayed) by
``gate.check_one`` in a worker of an existing Dask scheduler — no scheduler of our own. The proof store is the
shared cache: a task carries the store's root, so workers that mount the same directory (one machine, or a shared
file system on a fleet) reuse each other's proofs, exactly as ``--jobs`` workers on one machine do. Nothing a worker
returns is trusted beyond what ``--jobs`` already trusts: the outcome is computed by the same function, and the
verdict is decided by the checker inside it.

Dask is an optional dependency (``pip install 'verispatial[cluster]'``; the test extra includes it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from verispatial.errors import ParseError

T = TypeVar("T")
R = TypeVar("R")

#: Seconds to wait for the scheduler to answer before the address is reported unreachable.
CONNECT_TIMEOUT_S = 10


def _client(address: str) -> Any:
    """A ``distributed.Client`` on ``address``. Raises ``ParseError`` (bad input, exit 2) naming ``--scheduler``
    when Dask is not installed or the scheduler cannot be reached."""
    try:
        from distributed import Client
    except ImportError as e:  # the extra is optional
        raise ParseError("--scheduler", "needs Dask distributed: pip install 'verispatial[cluster]'") from e
    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        raise ParseError("--scheduler", f"cannot reach the Dask scheduler at {address!r}: {e}") from e


def map_on_cluster(address: str, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[R]:
    """Run ``fn`` on every task as Dask tasks of the scheduler at ``address`` (``tcp://host:port``, or anything
    ``distributed.Client`` accepts) and yield the results in the order they complete. ``fn`` and the tasks must
    pickle (module-level function, attrs values). Leaving the iterator early (an interrupt, an error) cancels the
    tasks not yet done and closes the client. Raises ``ParseError`` as ``_client``; a task's exception is re-raised
    here."""
    from distributed import as_completed

    client = _client(address)
    futures: list[Any] = []
    try:
        # pure=False: two equal tasks (the same program twice) are still two runs, as under --jobs.
        futures = client.map(fn, list(tasks), pure=False)
        for fut in as_completed(futures, loop=client.loop):
            yield fut.result()
    finally:
        if futures:
            client.cancel(futures)
        client.close()
