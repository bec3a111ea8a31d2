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


def scheduler_address(address: str) -> str:
    """``address`` as a Dask address: ``host:port`` gets Dask's default ``tcp://`` scheme. Raises ``ParseError``
    naming ``--scheduler`` for an address Dask cannot parse (``distributed.comm.addressing.parse_address``)."""
    try:
        from distributed.comm.addressing import parse_address, parse_host_port
        from distributed.comm.registry import get_backend
    except ImportError as e:  # the extra is optional
        raise ParseError("--scheduler", "needs Dask distributed: pip install 'verispatial[cluster]'") from e
    full = address if "://" in address else f"tcp://{address}"
    try:
        scheme, loc = parse_address(full, strict=True)
        get_backend(scheme)  # an unknown scheme (ftp://...) is a ValueError naming the known ones
        if scheme in ("tcp", "tls"):
            _host, port = parse_host_port(loc)
            if not 0 < int(port) < 65536:
                raise ValueError(f"port {port} is not in 1..65535")
    except (ValueError, TypeError) as e:
        raise ParseError("--scheduler", f"{address!r} is not a scheduler address (expected tcp://HOST:PORT): {e}"
                         ) from None
    return full


def _reachable(address: str) -> None:
    """Open and close one connection to the scheduler before a ``Client`` exists: a ``Client`` that fails to
    connect leaves a background loop whose finalizer blocks and prints a traceback at exit. Raises ``ParseError``
    when nothing answers within ``CONNECT_TIMEOUT_S``."""
    import asyncio

    from distributed.comm import connect

    async def probe() -> None:
        comm = await connect(address, timeout=CONNECT_TIMEOUT_S)
        await comm.close()

    try:
        asyncio.run(probe())
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        raise ParseError("--scheduler", f"cannot reach the Dask scheduler at {address!r}: {e}") from None


def _client(address: str) -> Any:
    """A ``distributed.Client`` on ``address``. Raises ``ParseError`` (bad input, exit 2) naming ``--scheduler``
    when Dask is not installed, the address does not parse or the scheduler cannot be reached."""
    full = scheduler_address(address)
    from distributed import Client

    if full.startswith("tcp://"):  # other schemes carry security settings only the Client reads
        _reachable(full)
    try:
        return Client(full, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        raise ParseError("--scheduler", f"cannot reach the Dask scheduler at {address!r}: {e}") from None


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
