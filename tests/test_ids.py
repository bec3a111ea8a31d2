"""Entity ids inside ops (``verispatial/ir/ids.py``): every op field is either tagged with the id space it names
(``ops.ID_*``) or known to name none, so a field added without a tag fails here instead of being silently left
unrenamed by compose or slicing; ``Renaming`` and ``op_ids`` follow the tags, container bodies included."""

from __future__ import annotations

import typing

import attrs
import pytest

from verispatial.ir import (
    OP_TAGS,
    Addr,
    Compute,
    Dynamic,
    Guard,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Operand,
    Part,
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

#: Op fields that name no entity (sizes, values, flags, loop structure, a write's NoC virtual channel).
NOT_IDS = {"pages", "tiles", "by", "value", "cond", "terms", "num_dests", "front", "addr", "kind", "accumulate", "dtype",
           "var", "body", "when", "offset", "drain", "behind", "part", "store", "vc"}
ID_KINDS = {"buffer", "semaphore", "group", "tensor", "count", "site", "operands"}


#: Fields of the value classes ops hold that name no entity a compose or slice renames: tile offsets and
#: coefficients, loop variables (local to an engine program), a dynamic address part's name (one runtime value,
#: unified by name across sections like a tensor), a trip count's scale and offset (its trip is renamed through the
#: loop's tagged ``count``).
NESTED_NOT_IDS = {
    Addr: {"base", "terms", "dynamic"},
    Term: {"var", "coef"},
    Dynamic: {"name", "lo", "hi", "scale"},  # ``buf`` is tagged: a buffer id
    TripCount: {"trip", "scale", "offset"},
    Operand: {"pages"},
    Part: {"offset", "size", "at", "terms"},  # byte counts inside one page; terms name enclosing loops only
}


def _leaf_types(tp: object) -> set[object]:
    """Every type a field annotation can hold: unions, tuples and aliases unfolded."""
    args = typing.get_args(tp)
    if not args:
        return {tp}
    out: set[object] = set()
    for a in args:
        if a is not Ellipsis:
            out |= _leaf_types(a)
    return out


def _names_something(tp: object) -> bool:
    """A field of this type could hold an id: an int, a str or a Site (or an attrs class holding one)."""
    return any(t in (int, str, Site) or (isinstance(t, type) and attrs.has(t)) for t in _leaf_types(tp))


@pytest.mark.parametrize("cls", [*OP_TAGS, *NESTED_NOT_IDS], ids=[*OP_TAGS.values(), *(c.__name__ for c in NESTED_NOT_IDS)])
def test_every_field_that_could_hold_an_id_is_tagged_or_allowed(cls: type) -> None:
    """Walks every op class's attrs fields by their resolved types: each int, str or Site field (or one holding a
    value class) is tagged with the id space it names, or on the explicit allow-list of fields that name none."""
    hints = typing.get_type_hints(cls)
    allowed = NESTED_NOT_IDS.get(cls, NOT_IDS)
    for f in attrs.fields(cls):
        if f.metadata.get("id") is not None or not _names_something(hints[f.name]):
            continue
        assert f.name in allowed, f"{cls.__name__}.{f.name} ({hints[f.name]}) may name an id and is not tagged"
    # Every value class an op field holds is itself walked here.
    for f in attrs.fields(cls):
        for t in _leaf_types(hints[f.name]):
            if isinstance(t, type) and attrs.has(t) and t not in (Site, *OP_TAGS):
                assert t in NESTED_NOT_IDS or f.metadata.get("id") is not None, f"{cls.__name__}.{f.name}: {t}"


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
    # An indirect address's index buffer is an id too, held inside the address.
    assert list(op_ids(ReadTiles("x", Addr(0, (), Dynamic("i", 0, 3, 1, buf=2)), 1, 5))) == [
        ("tensor", "x"), ("buffer", 5), ("buffer", 2)]


def test_renaming_maps_every_tagged_field_and_every_body() -> None:
    r = Renaming(buffer=lambda b: b + 10, semaphore=lambda s: s + 20, group=lambda g: g + 30,
                 tensor=lambda t: f"s.{t}", trip=lambda t: f"s.{t}", site=lambda s: Site(s.x + 1, s.y))
    ops = (
        Loop("k", TripCount("t", 2, -1), (
            If("k", Guard.FIRST, (SemInc(0, Site(0, 0), 2), McastSetValid(1, 0, 2, src=2), McastSetValid(1, 0, 2))),
            ReadTiles("x", Addr(0, (Term("k", 1),)), 1, 0),
            WriteTiles(1, "y", Addr(0, (), Dynamic("x", 0, 3, 1, buf=0)), 1),
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
            # The index buffer inside the address is renamed; the dynamic part's name is not (unified by name).
            WriteTiles(11, "s.y", Addr(0, (), Dynamic("x", 0, 3, 1, buf=10)), 1),
            Compute("mm", 4, (Operand(10, 2), Operand(11, 1))),
            McastSend(10, 1, 30, 2, front=True),
            SemWait(23, WaitCond.GE, 1, (Term("k", 1),)),
        )),
        Loop("j", "s.u", ()),
        Loop("i", 3, ()),
    )
    # The identity renaming changes nothing.
    assert Renaming().ops(ops) == ops
