"""The fast program reader agrees with the reference one it replaced: the compiled JSON Schema validator
(``jsonschema_rs``) accepts exactly what ``jsonschema`` accepts, and the per-op constructors build exactly what
cattrs built. Messages still come from ``jsonschema`` (``tests/test_schema.py`` pins them)."""

from __future__ import annotations

import copy
import gc
import json
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_schema import BASE, INLINE, MUTATIONS, TARGET_MUTATIONS, WRITTEN

from verispatial.errors import ParseError
from verispatial.ir import OP_TAGS, Loop, Op
from verispatial.ir.core import Site
from verispatial.ir.ops import TAG_OPS
from verispatial.ir.serialize import (
    _builder,
    _conv,
    _program_validator,
    _stores_only,
    _structure_op,
    _unstructure_op,
    load_program,
    loads_document,
    parse_json,
    program_to_dict,
    schema,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
REFERENCE = jsonschema.Draft202012Validator(schema())


def agree(doc: Any) -> bool:
    """Whether both validators give ``doc`` the same verdict; returns that verdict."""
    fast = _program_validator().is_valid(doc)
    assert fast == REFERENCE.is_valid(doc), json.dumps(doc)[:400]
    return bool(fast)


@pytest.mark.parametrize(("base", "mutate"), [(BASE, m) for _, m, _ in MUTATIONS] + [(INLINE, m) for _, m, _ in
                                                                                        TARGET_MUTATIONS],
                         ids=[n for n, _, _ in MUTATIONS] + [f"target-{n}" for n, _, _ in TARGET_MUTATIONS])
def test_validators_agree_on_every_pinned_mutation(base: dict[str, Any], mutate: Any) -> None:
    d = copy.deepcopy(base)
    mutate(d)
    agree(d)


def test_validators_accept_every_written_program() -> None:
    for _, p in WRITTEN:
        assert agree(json.loads(json.dumps(program_to_dict(p))))


def _paths(x: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at]
    if isinstance(x, dict):
        for k, v in x.items():
            out += _paths(v, (*at, k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            out += _paths(v, (*at, i))
    return out


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-3, 70_000) | st.floats(-2, 9, allow_nan=False)
                           | st.sampled_from(["", "k", "t", "bf16", "reader", "eq", "push", "loop", "local"]),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                               st.sampled_from(["op", "buf", "pages", "var", "count", "body", "x"]), inner, max_size=3),
                           max_leaves=6)


@settings(max_examples=max(50, settings().max_examples // 10))
@given(st.data())
def test_validators_agree_on_random_edits(data: st.DataObject) -> None:
    d = copy.deepcopy(BASE)
    paths = [p for p in _paths(d) if p]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        parent: Any = d
        try:
            for k in path[:-1]:
                parent = parent[k]
            how = data.draw(st.sampled_from(["set", "delete", "add"]))
            if how == "set":
                parent[path[-1]] = data.draw(JSON_VALUES)
            elif how == "delete":
                del parent[path[-1]]
            elif isinstance(parent, dict):
                parent[data.draw(st.sampled_from(["extra", "by", "front", "src", "terms"]))] = data.draw(JSON_VALUES)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed or replaced this path
    agree(d)


def _all_ops(ops: tuple[Op, ...]) -> list[Op]:
    out: list[Op] = []
    for op in ops:
        out.append(op)
        if isinstance(op, Loop) or hasattr(op, "body"):
            out += _all_ops(op.body)  # type: ignore[union-attr]
    return out


def _by_cattrs(d: dict[str, Any]) -> Op:
    cls = TAG_OPS[d["op"]]
    return _conv.structure({k: v for k, v in d.items() if k != "op"}, cls)  # type: ignore[no-any-return]


def test_constructors_build_what_cattrs_built() -> None:
    programs = [p for _, p in WRITTEN] + [load_program(f) for f in sorted(EXAMPLES.glob("*.json"))]
    seen: set[str] = set()
    for p in programs:
        for ep in p.programs:
            for op in _all_ops(ep.ops):
                d = json.loads(json.dumps(_unstructure_op(op)))
                assert _structure_op(d) == op
                seen.add(d["op"])
                if d["op"] in ("loop", "if"):
                    continue
                assert _structure_op(d) == _by_cattrs(d)
                # a field left out takes its default, as cattrs does; an integral float loads as the int
                for k, v in d.items():
                    if k != "op" and type(v) is int:
                        e = dict(d, **{k: float(v)})
                        got = _structure_op(e)
                        assert got == _by_cattrs(e) == op
                        assert type(getattr(got, k)) is int
    assert seen == set(OP_TAGS.values())


def test_duplicate_keys_are_still_named() -> None:
    with pytest.raises(ParseError, match="key 'pages' appears twice in one object"):
        parse_json('{"a": [{"op": "push", "buf": 0, "pages": 1, "pages": 2}], "b": 1}')
    with pytest.raises(ParseError, match="key 'a' appears twice in one object"):
        parse_json('{"a": 1, "b": {"c": 1}, "a": 2}')
    assert parse_json('{"a": {"a": 1}, "b": [{"a": 2}]}') == {"a": {"a": 1}, "b": [{"a": 2}]}


@attrs.frozen
class _Plain:
    n: int
    at: Site
    tag: str = "x"


@attrs.frozen
class _Checked:
    n: int = attrs.field(validator=attrs.validators.gt(0))


@attrs.frozen
class _PostInit:
    n: int

    def __attrs_post_init__(self) -> None:
        if self.n > 9:
            raise ValueError("n > 9")


def test_a_class_is_built_through_its_slots_only_when_its_init_just_stores() -> None:
    """``_builder`` stores a plain class's fields through its slots, skipping ``__init__``: the same object (equal,
    same hash, an integral float read as the int); a class with a validator or a post-init hook is built by its
    ``__init__``, so the hook still runs."""
    assert _stores_only(_Plain)
    assert all(_stores_only(cls) for cls in OP_TAGS)
    assert not _stores_only(_Checked)
    assert not _stores_only(_PostInit)
    got = _builder(_Plain)({"n": 8.0, "at": [1, 2]})
    assert got == _Plain(8, Site(1, 2))
    assert hash(got) == hash(_Plain(8, Site(1, 2)))
    assert type(got.n) is int
    assert got.tag == "x"
    with pytest.raises(ValueError, match="'n' must be > 0"):
        _builder(_Checked)({"n": 0})
    with pytest.raises(ValueError, match="n > 9"):
        _builder(_PostInit)({"n": 10})


# ----------------------------------------------------------------------------- the collector around a load


def test_a_load_hands_its_objects_to_the_oldest_generation_and_leaves_the_collector_on() -> None:
    """``no_cycle_collection`` pauses the collector and, when the read ends, moves what it made to the oldest
    generation without walking it (``gc.freeze`` then ``gc.unfreeze``): the collector is on again, nothing is left
    frozen, and the program's objects are in the oldest generation (not walked by the next young collections)."""
    text = (EXAMPLES / "matmul_reuse_mcast_wormhole.json").read_bytes()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    p = loads_document(text)
    assert (gc.isenabled(), gc.get_freeze_count()) == (True, 0)
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert {id(p), id(p.programs[0]), id(p.programs[0].ops[0])} <= oldest


def test_a_load_leaves_a_callers_frozen_objects_and_a_paused_collector_as_they_were() -> None:
    text = (EXAMPLES / "pipeline_small.json").read_bytes()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        loads_document(text)
        assert (gc.isenabled(), gc.get_freeze_count()) == (True, frozen)
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        loads_document(text)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_load_that_fails_turns_the_collector_on_again() -> None:
    with pytest.raises(ParseError):
        loads_document(b'{"format": "verispatial.program", "version": 2, "name": 1}')
    assert (gc.isenabled(), gc.get_freeze_count()) == (True, 0)


def test_programs_are_built_as_their_init_builds_them() -> None:
    """``_fast_program`` builds a ``Program`` and its ``EngineProgram``s through their slots (``_positional``): the
    very objects their ``__init__`` builds from the same fields (equal; an engine program's hash too), for every example and written
    program, and an object whose ``__init__`` does more is built by it."""
    from verispatial.ir.program import EngineProgram, Program
    from verispatial.ir.serialize import _positional, _structure_program

    docs = [json.loads(f.read_text()) for f in sorted(EXAMPLES.glob("*.json"))]
    docs += [json.loads(json.dumps(program_to_dict(p))) for _, p in WRITTEN]
    for d in docs:
        if d.get("version") != 2:
            continue
        got = _structure_program(d)
        again = Program(**{f.name: getattr(got, f.name) for f in attrs.fields(Program)})
        assert got == again  # (a Program holds its target's dicts: it has no hash)
        for ep in got.programs:
            built = EngineProgram(*(getattr(ep, f.name) for f in attrs.fields(EngineProgram)))
            assert ep == built
            assert hash(ep) == hash(built)

    @attrs.frozen
    class Checked:
        x: int = attrs.field(validator=attrs.validators.gt(0))

    assert _positional(Checked) is Checked
    assert _positional(Program) is not Program


def test_loops_ifs_trip_counts_and_source_locations_are_built_as_their_init_builds_them() -> None:
    """A loop and an if (through their slots), a loop's trip count (its generated constructor), an if's guard (the
    enum's own table) and a source table (its strings as read, its ints without ``int``): the objects their
    ``__init__`` builds from the same fields, equal and hashing alike; an integral float of a count, a path, a line or
    a column (a JSON Schema integer) is read as the int."""
    from verispatial.ir.core import Guard
    from verispatial.ir.ops import If, Push, TripCount
    from verispatial.ir.serialize import _structure_sources
    from verispatial.ir.source import LoopIndex, SourceLoc

    loop = {"op": "loop", "var": "i", "count": {"trip": "n", "scale": 2.0, "offset": 1}, "body": [
        {"op": "if", "var": "i", "when": "not_last", "body": [{"op": "push", "buf": 0, "pages": 1}]}]}
    want = Loop("i", TripCount("n", 2, 1), (If("i", Guard.NOT_LAST, (Push(0, 1),)),))
    got = _structure_op(loop)
    assert got == want
    assert hash(got) == hash(want)
    assert got.count == _conv.structure(loop["count"], TripCount)
    assert type(got.count.scale) is int
    assert _structure_op(dict(loop, count={"trip": "n"})).count == TripCount("n")
    table = [{"path": [0, 1.0], "file": "k.cpp", "line": 3.0, "column": 2.0, "text": "x();",
              "called_at": {"file": "h.hpp", "line": 7}},
             {"path": [1], "file": "k.cpp", "line": 4, "index": {"name": "j", "step": 2, "const": 1}}]
    want_table = (((0, 1), SourceLoc("k.cpp", 3, 2, "x();", SourceLoc("h.hpp", 7))),
                  ((1,), SourceLoc("k.cpp", 4, index=LoopIndex("j", 2, 1))))
    got_table = _structure_sources(table)
    assert got_table == want_table
    assert hash(got_table) == hash(want_table)
    assert all(type(v) is int for path, loc in got_table for v in (*path, loc.line, loc.column))
    with pytest.raises(ValueError, match="never"):  # a guard the enum does not hold (the schema refuses it first)
        _structure_op(dict(loop["body"][0], when="never"))


def test_lists_sites_and_members_are_structured_in_place_as_their_calls_build_them() -> None:
    """The generated code that structures a program's lists (``_program_maker``) and an item's empty arrays, sites and
    enum members in place (``_field_code``): a list left out takes the field's default and an empty one is the empty
    tuple (a program's sections: the one main section, or none); a site not met before is made (``site_at``), one of
    integral floats is the site of the ints; a member the enum does not hold raises as the enum's call does."""
    from verispatial.ir.core import SemRole, Space, site_at
    from verispatial.ir.program import Buffer, Group, Program, SectionSpan, Semaphore
    from verispatial.ir.serialize import _builders, _structure_program

    d = json.loads((EXAMPLES / "local_up.json").read_text())
    got = _structure_program(d)
    assert got.sections == (SectionSpan("main", False),)
    assert got.tensors == ()
    assert got.groups == ()
    left_out = {k: v for k, v in d.items() if k not in ("sections", "tensors", "groups")}
    default = {f.name: f.default for f in attrs.fields(Program)}
    assert _structure_program(left_out).sections == default["sections"] == (SectionSpan("main"),)
    assert _structure_program(dict(d, sections=[])).sections == ()
    assert _structure_program(left_out).tensors == default["tensors"]

    group = _builders()[Group]
    far = group({"id": 0, "sender": [4001, 4003.0], "rect": [0, 0, 1, 1]})
    assert far.sender == site_at(4001, 4003)
    assert type(far.sender.y) is int
    assert group({"id": 0, "sender": [2.0, 1], "rect": [0, 0, 1, 1]}).sender is site_at(2, 1)
    sem = _builders()[Semaphore]({"id": 0, "name": "s", "sites": [], "role": "counter"})
    assert sem.sites == ()
    assert sem.role is SemRole("counter")
    assert _builders()[Semaphore]({"id": 0, "name": "s", "sites": [[1, 0]]}).sites == (site_at(1, 0),)
    buffer = {"id": 0, "name": "b", "site": [0, 0], "cb": 0, "page_tiles": 1, "capacity": 2, "dtype": "bf16"}
    assert _builders()[Buffer](dict(buffer, space="acc")).space is Space("acc")
    with pytest.raises(ValueError, match="not a valid Space"):  # as ``Space("dram2")`` raises (the schema refuses it first)
        _builders()[Buffer](dict(buffer, space="dram2"))
    wait = _structure_op({"op": "sem_wait", "sem": 0, "cond": "ge", "value": 1, "terms": []})
    assert wait == _structure_op({"op": "sem_wait", "sem": 0, "cond": "ge", "value": 1})
    assert wait.terms == ()
