"""``validate``'s fast path (``ir/validate.py``: ``_PLAIN``, ``_quick``, ``_QUIET``) against the op classes' fields.

An op of a ``_PLAIN`` class gets no rule beyond its ids, ``pages`` and ``tiles``: ``_leaf`` returns after the generic
checks, and the walk skips a ``_QUIET`` op outright when its ``_quick`` predicate holds. That is sound only while every
field of such a class is one ``_quick`` checks or one that no rule constrains, which nothing but convention kept so.
These tests derive the fields from the attrs classes: a field added to a ``_PLAIN`` class fails here until it is
either checked by the fast path (an id with ``metadata["id"]``, ``pages``, ``tiles``) or listed in ``NO_RULE`` below
(any value of its type is valid), or its class leaves ``_PLAIN`` for a rule of its own in ``_leaf``."""

from __future__ import annotations

import attrs
import pytest

from verispatial.ir import (
    WORMHOLE,
    Buffer,
    Engine,
    EngineProgram,
    FillTiles,
    PackAcc,
    Program,
    ScratchAccess,
    Site,
)
from verispatial.ir.ops import OP_TAGS, Op
from verispatial.ir.validate import _PLAIN, _QUICK, _QUIET, ISSUED_BY, _shape, validate

#: The fields of ``_PLAIN`` classes that no rule of ``validate`` constrains (a kind is a label, a flag either value).
NO_RULE: dict[type, frozenset[str]] = {
    FillTiles: frozenset({"kind", "drain"}),
    PackAcc: frozenset({"accumulate"}),
    ScratchAccess: frozenset({"store", "drain"}),
}


def _checked(cls: type) -> set[str]:
    """The fields ``_quick`` checks, derived as it derives them (``_shape``): the id fields, ``pages``, ``tiles``."""
    ids, has_pages, has_tiles = _shape(cls)
    return {name for name, _kind in ids} | ({"pages"} if has_pages else set()) | ({"tiles"} if has_tiles else set())


@pytest.mark.parametrize("cls", sorted(_PLAIN, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_every_field_of_a_plain_op_is_checked_by_the_fast_path_or_free(cls: type) -> None:
    fields = {f.name for f in attrs.fields(cls)}
    unchecked = fields - _checked(cls) - NO_RULE.get(cls, frozenset())
    assert unchecked == set(), (
        f"{cls.__name__} has fields the fast path (_quick) does not check and NO_RULE does not list: "
        f"{sorted(unchecked)}; give the field its rule in _leaf (and take {cls.__name__} out of _PLAIN) or, if any "
        "value of its type is valid, list it in NO_RULE")


def test_no_rule_lists_only_fields_of_plain_ops_that_the_fast_path_leaves_unchecked() -> None:
    """A stale entry (a class that left ``_PLAIN``, a field renamed or now checked) is a claim nothing backs."""
    for cls, names in NO_RULE.items():
        assert cls in _PLAIN, cls.__name__
        assert names <= {f.name for f in attrs.fields(cls)}, (cls.__name__, names)
        assert not names & _checked(cls), (cls.__name__, names & _checked(cls))


def test_quiet_ops_are_plain_leaves_with_a_quick_predicate() -> None:
    assert _QUIET <= _PLAIN <= set(OP_TAGS)
    assert all(cls in _QUICK for cls in _PLAIN)


def _one(op: Op) -> Program:
    """A one-engine program holding ``op`` (on an engine that issues it, ``ISSUED_BY``), with a scratch buffer 0 and a
    circular buffer 1 on its site."""
    site = Site(0, 0)
    buffers = (Buffer(0, "scratch0", site, 0, 1, 1, "bf16", scratch=True), Buffer(1, "cb1", site, 1, 1, 2, "bf16"))
    engine = min(ISSUED_BY.get(type(op), (Engine.READER,)), key=lambda e: e.value)
    return Program("one", WORMHOLE, buffers=buffers, programs=(EngineProgram(site, engine, (op,)),))


@pytest.mark.parametrize("cls", sorted(_PLAIN, key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_quick_fails_on_each_checked_field_out_of_range_and_validate_reports_it(cls: type) -> None:
    """For every field ``_quick`` checks: a value out of its range (an id past the program's, a count of 0 or past the
    model's bound) makes ``_quick`` false, so ``_leaf``'s generic checks run and ``validate`` reports it."""
    fields = attrs.fields(cls)
    if not fields:
        return  # nothing to check: a barrier, a flush, a release
    good = {f.name: 1 if f.name in _checked(cls) else f.default for f in fields}
    if cls is ScratchAccess:
        good["buf"] = 0
    op = cls(**good)
    gb, gs = frozenset({0, 1}), frozenset[int]()
    assert _QUICK[cls](op, gb, gs, 0), op
    assert validate(_one(op)) == [], op
    for name in sorted(_checked(cls)):
        for bad in (0, 10**9) if name in ("pages", "tiles") else (7,):
            broken = attrs.evolve(op, **{name: bad})
            assert not _QUICK[cls](broken, gb, gs, 0), broken
            assert validate(_one(broken)) != [], broken
