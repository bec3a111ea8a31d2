"""Sharded (globally allocated) circular buffers in the reference interpreter: what a push of a sharded buffer does to
its tensor (docs/semantics.md "Sharded buffers"; ``ir/shards.py``).

A sharded buffer's pages are its tensor's bytes, so its producer's ``Push`` is a tensor access, complete at once (no
NoC transaction, no barrier):

- a **read shard**'s push publishes the tensor's tiles of the pages it pushes: a read of them, issued and landed at
  the push (an activation's tile must have a completed write and no incomplete one; a state's tile is read at the
  version the sections before the push's wrote, ``tensor-race``);
- a **write shard**'s push publishes pages its producer filled (packed, read or stored into): a write of their
  tensor tiles, issued and complete at the push — the packer's ``cb_push_back`` comes after its packs, and the bytes
  are the tensor's (no other engine's write of the tile may be incomplete then; a state's tile is not rewritten after
  a later section read it).

Each handler takes the interpreter, the state it changes, the engine index, its program counter, the buffer and the
pages pushed, before the push moves ``pushed``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verispatial.ir import rules as R
from verispatial.ir.core import Role
from verispatial.ir.obligation import TensorRef
from verispatial.ir.shards import shard_tiles
from verispatial.petri.position import Cause, Violation

if TYPE_CHECKING:
    from verispatial.petri.interp import PC, Interp, State


def push(it: Interp, s: State, e: int, pc: PC, b: int, n: int, out: list[Violation]) -> None:
    """The tensor access of ``Push(b, n)`` on sharded buffer ``b`` (nothing for another buffer): the tiles of pages
    ``[pushed, pushed + n)``, each page at its ring slot."""
    buf = it.program.buffers[b]
    if buf.shard is None:
        return
    ti = it.tensor_index[buf.shard.tensor]
    tiles = list(dict.fromkeys(shard_tiles(buf, s.pushed[b], n)))
    if b in it.write_shards:
        _write(it, s, e, pc, b, n, ti, tiles, out)
    else:
        _read(it, s, e, pc, b, n, ti, tiles, out)


def _read(it: Interp, s: State, e: int, pc: PC, b: int, n: int, ti: int, tiles: list[int],
          out: list[Violation]) -> None:
    t = it.program.tensors[ti]
    what = f"push(b{b}, {n}) publishes"
    if t.role is Role.ACTIVATION:
        for k in tiles:
            got = s.tiles.get((ti, k))
            if got is None or got[1] < 0 or got[0]:
                why = ("while a write to it by " + it._engines_text(got[0]) + " is not complete"
                       if got is not None and got[0] else "before any completed write to it")
                it._v(out, R.TENSOR_RACE, e, pc, f"{what} activation {t.name} tile {k} of its shard {why}",
                      TensorRef(t.name))
                return
    elif t.role is Role.STATE:
        r = it._section(e, pc[0])
        nsec = len(it.program.sections)
        reported = False
        for k in tiles:
            key = (ti, k)
            issued, inc = s.swrites.get(key, (0, 0))
            early = [(x // nsec, x % nsec) for x in range(inc.bit_length()) if inc >> x & 1 and x % nsec < r]
            later = [(x // nsec, x % nsec) for x in range(issued.bit_length()) if issued >> x & 1 and x % nsec >= r]
            if early and not reported:
                we, ws = early[0]
                it._v(out, R.TENSOR_RACE, e, pc, f"{what} state {t.name} tile {k} of its shard (section {r}) while "
                      f"the write of it by {it.keys[we]} in section {ws} is not complete", TensorRef(t.name))
                reported = True
            elif later and not reported:
                who = it._engines_text(sum(1 << we for we, _ in set(later)))
                it._v(out, R.TENSOR_RACE, e, pc, f"{what} state {t.name} tile {k} of its shard after a write to it by "
                      f"{who} was issued (a state is written only after every read of its old value)",
                      TensorRef(t.name))
                reported = True
            s.sreads[key] = s.sreads.get(key, 0) | (1 << r)


def _write(it: Interp, s: State, e: int, pc: PC, b: int, n: int, ti: int, tiles: list[int],
           out: list[Violation]) -> None:
    t = it.program.tensors[ti]
    what = f"push(b{b}, {n}) writes"
    bit = 1 << e
    is_state = t.role is Role.STATE
    w_sec = it._section(e, pc[0])
    nsec = len(it.program.sections)
    reported = False
    for k in tiles:
        key = (ti, k)
        m, _last, issuers = s.tiles.get(key, (0, -1, 0))
        others = m & ~bit
        if others and not reported:
            it._v(out, R.TENSOR_RACE, e, pc, f"{what} {t.name} tile {k} of its shard while a write to it by "
                  f"{it._engines_text(others)} is not complete", TensorRef(t.name))
            reported = True
        if is_state:
            later_reads = s.sreads.get(key, 0) >> (w_sec + 1)
            if later_reads and not reported:
                rs = w_sec + 1 + (later_reads & -later_reads).bit_length() - 1
                it._v(out, R.TENSOR_RACE, e, pc, f"{what} state {t.name} tile {k} of its shard (section {w_sec}) after "
                      f"a read of it in the later section {rs} was issued (that read must see this version)",
                      TensorRef(t.name), Cause.LATE_STATE_WRITE)
                reported = True
            issued, inc = s.swrites.get(key, (0, 0))
            s.swrites[key] = (issued | (1 << (e * nsec + w_sec)), inc)  # issued and complete at once
        s.tiles[key] = (m, e, issuers | bit)
