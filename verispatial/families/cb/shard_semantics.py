"""Sharded (globally allocated) circular buffers in the reference interpreter: what the ops of a sharded buffer do to
its tensor (docs/semantics.md "Sharded buffers"; ``ir/shards.py``).

A sharded buffer's pages are its tensor's bytes, so its producer's ops are tensor accesses (no NoC transaction, no
barrier):

- a **read shard**'s push publishes the tensor's tiles of the pages it pushes: a read of them at the push (an
  activation's tile must have a completed write and no incomplete one, ``tensor-race``);
- a **write shard**'s tiles change as its producer writes into the back (a pack, a fill, a read into it: the write is
  *issued* then, and no other engine's write of the tile may be incomplete) and the push that publishes the page
  *completes* the write — the packer's ``cb_push_back`` raises ``tiles_received`` only once its packs are done
  (``llk_io_pack.h:63-69``). In between, the tile has an incomplete write: a read of it, or another engine's write,
  races.

A state tensor is never sharded (``validate``): its per-tile versions would change while a page is held.

Each handler takes the interpreter, the state it changes, the engine index, its program counter and the buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verispatial.families.tensors.semantics import engines_text
from verispatial.ir import rules as R
from verispatial.ir.core import Role
from verispatial.ir.obligation import TensorRef
from verispatial.ir.shards import page_tiles_of, shard_tiles
from verispatial.petri.position import Violation

if TYPE_CHECKING:
    from verispatial.petri.interp import PC, Interp, State


def write_into(it: Interp, s: State, e: int, pc: PC, b: int, tiles: int, out: list[Violation]) -> None:
    """A write of ``tiles`` tiles into the back of write shard ``b`` (from its write pointer, before ``fill`` moves):
    the tensor tiles it reaches get an incomplete write by engine ``e`` until the push that publishes them; another
    engine's incomplete write of one of them is a ``tensor-race``."""
    buf = it.program.buffers[b]
    if buf.shard is None or b not in it.write_shards:
        return
    ti = it.tensor_index[buf.shard.tensor]
    first = s.pushed[b] * buf.page_tiles + s.fill[b]
    bit = 1 << e
    reported = False
    for k in dict.fromkeys(page_tiles_of(buf, first, tiles)):
        key = (ti, k)
        m, last, issuers = s.tiles.get(key, (0, -1, 0))
        others = m & ~bit
        if others and not reported:
            it._v(out, R.TENSOR_RACE, e, pc, f"writes {buf.shard.tensor} tile {k} of the shard under b{b} while a "
                  f"write to it by {engines_text(it, others)} is not complete", TensorRef(buf.shard.tensor))
            reported = True
        s.tiles[key] = (m | bit, last, issuers)


def push(it: Interp, s: State, e: int, pc: PC, b: int, n: int, out: list[Violation]) -> None:
    """The tensor access of ``Push(b, n)`` on sharded buffer ``b`` (nothing for another buffer): the tiles of pages
    ``[pushed, pushed + n)``, each page at its ring slot — a read shard's are read, a write shard's writes complete."""
    buf = it.program.buffers[b]
    if buf.shard is None:
        return
    ti = it.tensor_index[buf.shard.tensor]
    tiles = list(dict.fromkeys(shard_tiles(buf, s.pushed[b], n)))
    t = it.program.tensors[ti]
    if b in it.write_shards:
        bit = 1 << e
        mine = set(s.wtiles[e])  # this engine's own WriteTiles of a tile stay incomplete until its barrier
        for k in tiles:
            key = (ti, k)
            m, _last, issuers = s.tiles.get(key, (0, -1, 0))
            s.tiles[key] = (m if key in mine else m & ~bit, e, issuers | bit)
        return
    if t.role is Role.ACTIVATION:
        for k in tiles:
            got = s.tiles.get((ti, k))
            if got is None or got[1] < 0 or got[0]:
                why = ("while a write to it by " + engines_text(it, got[0]) + " is not complete"
                       if got is not None and got[0] else "before any completed write to it")
                it._v(out, R.TENSOR_RACE, e, pc, f"push(b{b}, {n}) publishes activation {t.name} tile {k} of its shard "
                      f"{why}", TensorRef(t.name))
                return
