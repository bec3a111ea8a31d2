"""The checker's encoding of scratch buffers (``Buffer.scratch``): the per-engine rules of ``ScratchAccess`` and of a
``ReadTiles`` into or a ``WriteTiles`` from a scratch buffer (``families/noc/encoding.py`` calls ``read_into`` and
``write_from`` for those), run by ``certify/rules.py`` over every path of the engine.

A scratch buffer is private to one engine (``validate``) and both rules are decided in that engine's program order
from its own barriers, as the interpreter decides them (``families/scratch/semantics.py``), so a path of the engine
that reaches the op with the fact set is the whole counterexample; the interpreter's run confirms it at the op
(``Replay.AT_OP``). Facts this family reads or keeps:

- ``("rd", b)`` (the NoC family's): a read into ``b`` with no ReadBarrier since;
- ``("st", b)`` (the circular-buffer family's): stores into ``b`` with no drain since;
- ``("sc", b)``: a write from scratch ``b`` with no Flush or WriteBarrier since (``noc.flush`` and
  ``noc.write_barrier`` drop it).
"""

from __future__ import annotations

from collections.abc import Callable

from verispatial.certify.facts import EngineRun, State
from verispatial.ir import rules as R
from verispatial.ir.ops import ScratchAccess


def _unlanded(c: EngineRun, s: State, b: int, path: tuple[int, ...], what: str) -> None:
    if ("rd", b) in s:
        c.flag(R.SCRATCH_UNLANDED, path, f"{what} scratch b{b} while a read into it has no read_barrier since")


def _reuse(c: EngineRun, s: State, b: int, path: tuple[int, ...], what: str) -> None:
    if ("sc", b) in s:
        c.flag(R.SCRATCH_REUSE, path, f"{what} scratch b{b} while a write from it has no flush/write_barrier since")


def read_into(c: EngineRun, s: State, b: int, path: tuple[int, ...]) -> State:
    """A NoC read into scratch ``b``: nothing in flight on its bytes either way, nor undrained stores
    (``scratch-reuse``); outstanding until a ReadBarrier (``("rd", b)``)."""
    _unlanded(c, s, b, path, "read_tiles reads into")
    _reuse(c, s, b, path, "read_tiles reads into")
    if ("st", b) in s:
        c.flag(R.SCRATCH_REUSE, path, f"read_tiles reads into scratch b{b}, stored into with no drain since")
    return s | {("rd", b)}


def write_from(c: EngineRun, s: State, b: int, path: tuple[int, ...]) -> State:
    """A NoC write from scratch ``b``: its bytes landed (no read outstanding, no undrained store:
    ``scratch-unlanded``); its source until a Flush or WriteBarrier (``("sc", b)``)."""
    _unlanded(c, s, b, path, "write_tiles sends")
    if ("st", b) in s:
        c.flag(R.SCRATCH_UNLANDED, path, f"write_tiles sends scratch b{b}, stored into with no drain since")
    return s | {("sc", b), ("w",)}


def scratch_access(c: EngineRun, op: ScratchAccess, path: tuple[int, ...], s: State) -> State:
    """Loads or stores of the engine's own scratch bytes: landed reads only (``scratch-unlanded``); a store rewrites
    no byte a write still reads (``scratch-reuse``) and stays undrained (``("st", b)``) until a drain."""
    verb = "scratch_access stores into" if op.store else "scratch_access loads"
    _unlanded(c, s, op.buf, path, verb)
    if not op.store:
        return s
    _reuse(c, s, op.buf, path, verb)
    return frozenset(t for t in s if t[0] != "st") if op.drain else s | {("st", op.buf)}


#: The per-engine handlers of this family's op classes (``certify/rules.py`` assembles its table from these).
HANDLERS: dict[type, Callable[..., State]] = {ScratchAccess: scratch_access}
