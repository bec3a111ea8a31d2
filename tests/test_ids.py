"""Entity ids inside ops (``verispatial/ir/ids.py``): every op field is either tagged with the id space it names
(``ops.ID_*``) or known to name none, so a field added without a tag fails here instead of being silently left
unrenamed by compose or slicing; ``Renaming`` and ``op_ids`` follow the tags, container bodies included."""

from __future__ import annotations

import attrs
import pytest

from verispatial.ir import (
    OP_TAGS,
    Addr,
    Compute,
    Guard,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Operand,
    ReadTiles,
    SemInc,
    SemWait,
    Site,
    Term,
    TripCount,
    WaitCond,
    WriteTiles,
)
from verispatial.ir.ids import Renaming, op_ids

#: Op fields that name no entity (sizes, values, flags, loop structure).
NOT_IDS = {"pages", "tiles", "by", "value", "cond", "terms", "num_dests", "front", "addr", "kind", "accumulate", "dtype",
           "var", "body", "when"}
ID_KINDS = {"buffer", "semaphore", "group", "tensor", "count", "site", "operands"}


@pytest.mark.parametrize("cls", list(OP_TAGS), ids=list(OP_TAGS.values()))
def test_every_op_field_is_tagged_or_names_no_entity(cls: type) -> None:
    for f in attrs.fields(cls):
        kind = f.metadata.get("id")
        if kind is None:
            assert f.name in NOT_IDS, f"{cls.__name__}.{f.name} has no id tag and is not known to name no entity"
        else:
            assert kind in ID_KINDS, f"{cls.__name__}.{f.name}: unknown id kind {kind!r}"
            assert f.name not in NOT_IDS


def test_src_is_a_buffer_in_write_tiles_and_a_semaphore_in_mcast_set_valid() -> None:
    assert list(op_ids(WriteTiles(3, "y", Addr(0), 1))) == [("buffer", 3), ("tensor", "y")]
    assert list(op_ids(McastSetValid(1, 0, 2, src=4))) == [("semaphore", 1), ("group", 0), ("semaphore", 4)]
    assert list(op_ids(McastSetValid(1, 0, 2))) == [("semaphore", 1), ("group", 0)]  # no source word of its own
    assert list(op_ids(Compute("mm", 4, (Operand(0, 2), Operand(5, 1))))) == [("buffer", 0), ("buffer", 5)]
    assert list(op_ids(Loop("k", TripCount("t", 2, -1), ()))) == [("trip", "t")]


def test_renaming_maps_every_tagged_field_and_every_body() -> None:
    r = Renaming(buffer=lambda b: b + 10, semaphore=lambda s: s + 20, group=lambda g: g + 30,
                 tensor=lambda t: f"s.{t}", trip=lambda t: f"s.{t}", site=lambda s: Site(s.x + 1, s.y))
    ops = (
        Loop("k", TripCount("t", 2, -1), (
            If("k", Guard.FIRST, (SemInc(0, Site(0, 0), 2), McastSetValid(1, 0, 2, src=2), McastSetValid(1, 0, 2))),
            ReadTiles("x", Addr(0, (Term("k", 1),)), 1, 0),
            Compute("mm", 4, (Operand(0, 2), Operand(1, 1))),
            McastSend(0, 1, 0, 2, front=True),
            SemWait(3, WaitCond.GE, 1, (Term("k", 1),)),
        )),
        Loop("j", "u", ()),
        Loop("i", 3, ()),
    )
    assert r.ops(ops) == (
        Loop("k", TripCount("s.t", 2, -1), (
            If("k", Guard.FIRST, (SemInc(20, Site(1, 0), 2), McastSetValid(21, 30, 2, src=22),
                                  McastSetValid(21, 30, 2))),
            ReadTiles("s.x", Addr(0, (Term("k", 1),)), 1, 10),
            Compute("mm", 4, (Operand(10, 2), Operand(11, 1))),
            McastSend(10, 1, 30, 2, front=True),
            SemWait(23, WaitCond.GE, 1, (Term("k", 1),)),
        )),
        Loop("j", "s.u", ()),
        Loop("i", 3, ()),
    )
    # The identity renaming changes nothing.
    assert Renaming().ops(ops) == ops
