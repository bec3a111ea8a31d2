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
from hypothesis import given, settings
from hypothesis import strategies as st
from test_validate_rules import fast_paths_off

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
from verispatial.ir.core import SemRole
from verispatial.ir.limits import U32
from verispatial.ir.ops import OP_TAGS, Loop, Op, Push, Reserve, SemInc, Wait
from verispatial.ir.program import SectionSpan, Semaphore
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


# ---------------------------------------------------------------------- loop counts and one-section programs


def _looped(count: int, body: tuple[Op, ...]) -> Program:
    """A reader with one loop of ``count`` iterations around ``body``; semaphore 0 has a word on its site."""
    site = Site(0, 0)
    return Program("looped", WORMHOLE, buffers=(Buffer(0, "cb0", site, 0, 1, 2, "bf16"),),
                   semaphores=(Semaphore(0, "s", (site,), 0, SemRole.RENDEZVOUS_GATHER),),
                   programs=(EngineProgram(site, Engine.READER, (Loop("i", count, body),)),))


@pytest.mark.parametrize("count", [0, 1, U32])
def test_a_constant_count_in_range_passes(count: int) -> None:
    """``_loop`` passes a constant count in ``[0, U32]`` over without its rules: none of them holds one."""
    assert validate(_looped(count, (Reserve(0, 1), Push(0, 1)))) == []


@pytest.mark.parametrize(("count", "rule"), [
    (-1, "count must be >= 0, got -1"),
    (U32 + 1, f"count {U32 + 1} is too large for the model (loop counts are 32-bit: at most {U32})"),
])
def test_a_constant_count_just_outside_the_range_is_reported(count: int, rule: str) -> None:
    assert [v.rule for v in validate(_looped(count, ()))] == [rule]


def test_the_word_rule_counts_a_constant_loop_at_its_count() -> None:
    """The iterations the fast path takes for a constant count are what the 32-bit word rule multiplies by: 2**31
    increments of 2 count past the word, 2**31 - 1 of them do not."""
    site = Site(0, 0)
    inc = (SemInc(0, site, 2),)
    assert validate(_looped(2**31 - 1, inc)) == []
    assert [v.rule for v in validate(_looped(2**31, inc))] == [
        "can be counted to 4294967296 (start + every increment, loops at their max), past the 32-bit word (max "
        "4294967295)"]


@pytest.mark.parametrize("starts", [(), (0,), (0, 2)])
def test_one_section_and_two_report_alike(starts: tuple[int, ...]) -> None:
    """A program of one section (no ``section_starts``, or one) takes ``_OpPass.program``'s one-section path; with two
    sections (of one phase) the general one: an op naming a buffer of another site, a page count past the model's, and a loop
    variable shadowing its loop's are reported alike, in order."""
    here, there = Site(0, 0), Site(1, 0)
    ops = (Reserve(1, 1), Loop("i", 2, (Loop("i", 1, (Wait(0, 70_000),)),)), Reserve(0, 1), Push(0, 1))
    sections = tuple(SectionSpan(f"s{k}") for k in range(max(len(starts), 1)))  # one phase: no rendezvous
    p = Program("sections", WORMHOLE, sections=sections,
                buffers=(Buffer(0, "cb0", here, 0, 1, 2, "bf16"), Buffer(1, "cb1", there, 0, 1, 2, "bf16")),
                programs=(EngineProgram(here, Engine.READER, ops, starts),))
    got = [(v.entity, v.rule) for v in validate(p)]
    assert got == [
        ("program (0,0).reader ops[0] Reserve", "buffer 1 lives on (1,0), not on this engine's site (0,0)"),
        ("program (0,0).reader ops[1].body[0] Loop", "loop variable 'i' shadows an enclosing loop's"),
        ("program (0,0).reader ops[1].body[0].body[0] Wait",
         "pages 70000 is too large for the model (16-bit CB counters: at most 65535)"),
    ]


# Program-wide fast paths: the common case (no name to refuse, no key twice, every buffer mapped once, a built-in
# target) decided without the per-entity rules, each against those rules.

def test_a_built_in_target_passes_every_target_rule() -> None:
    from verispatial.ir.target import TARGETS
    from verispatial.ir.validate import _check_target

    found: list[tuple[str, str]] = []
    for t in TARGETS.values():
        # a copy is not the built-in object itself: every rule runs on it
        _check_target(Program("p", attrs.evolve(t)), lambda e, r: found.append((e, r)))
    assert found == []
    odd = attrs.evolve(WORMHOLE, max_cbs=U32 + 1)
    _check_target(Program("p", odd), lambda e, r: found.append((e, r)))
    assert found == [("target wormhole_b0", f"max_cbs [{U32 + 1}] is too large for the model (at most {U32})")]


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.sampled_from("abcd"), max_size=8))
def test_repeated_is_the_counter_of_keys_seen_twice(keys: list[str]) -> None:
    from collections import Counter

    from verispatial.ir.validate import _repeated

    assert _repeated(keys) == [(k, n) for k, n in Counter(keys).items() if n > 1]


_NAMES = st.text(st.sampled_from(["a", "é", "\n", "\x1b", "\u202e", "\udcff", " "]), max_size=4) | st.just("x" * 257)


@settings(max_examples=200, deadline=None)
@given(names=st.lists(_NAMES, min_size=4, max_size=4))
def test_names_are_judged_one_by_one_when_any_is_not_printable_ascii(names: list[str]) -> None:
    from verispatial.ir.limits import name_rule
    from verispatial.ir.validate import name_violations

    site = Site(0, 0)
    p = Program(names[0], WORMHOLE, buffers=(Buffer(0, names[1], site, 0, 1, 2, "bf16"),),
                sections=(SectionSpan(names[2]),),
                programs=(EngineProgram(site, Engine.READER, (Loop(names[3], 1, (Reserve(0, 1),)),)),))
    expected = [rule for rule in map(name_rule, names) if rule is not None]
    assert [v.rule for v in name_violations(p)] == expected


@settings(max_examples=100, deadline=None)
@given(var=_NAMES, depth=st.sampled_from([0, 1, 2, 31, 32, 33]))
def test_a_bad_loop_variable_is_reported_alone_at_any_depth(var: str, depth: int) -> None:
    """``validate``'s op walk gathers the loop variables (``_OpPass.loop_vars``, judged after it): a loop variable that
    breaks ``name_rule`` at the top or ``depth`` loops and ifs deep (past the model's nesting limit too, where the walk
    stops and every name is judged again) is reported alone, as ``name_violations`` words it; a good one is not
    reported."""
    from verispatial.ir import Guard, If
    from verispatial.ir.limits import NEST_MAX, name_rule
    from verispatial.ir.validate import name_violations, validate

    assert NEST_MAX == 32
    site = Site(0, 0)
    body: tuple[Op, ...] = (Loop(var, 1, (Reserve(0, 1),)),)
    for j in range(depth):
        body = (Loop(f"i{j}", 2, body),) if j % 2 else (Loop(f"i{j}", 2, (If(f"i{j}", Guard.FIRST, body),)),)
    p = Program("p", WORMHOLE, buffers=(Buffer(0, "b", site, 0, 1, 2, "bf16"),), sections=(SectionSpan("s"),),
                programs=(EngineProgram(site, Engine.READER, body),))
    names = name_violations(p)
    assert [v.rule for v in names] == ([] if name_rule(var) is None else [name_rule(var)])
    if names:
        assert [str(v) for v in validate(p)] == [str(v) for v in names]
    else:
        assert not any("name" in v.rule for v in validate(p))


@pytest.mark.parametrize(("memory", "expected"), [
    ((0, 1), []),
    ((1, 0), []),
    ((0,), ["buffer 1 (b1): appears 0 times in the memory map, expected once"]),
    ((0, 1, 1), ["buffer 1 (b1): appears 2 times in the memory map, expected once"]),
    ((0, 1, 2), ["memory entry for buffer 2: no such buffer"]),
    ((0, 2), ["buffer 1 (b1): appears 0 times in the memory map, expected once",
              "memory entry for buffer 2: no such buffer"]),
])
def test_every_buffer_is_mapped_once(memory: tuple[int, ...], expected: list[str]) -> None:
    from verispatial.ir.program import BufferAt

    site = Site(0, 0)
    buffers = tuple(Buffer(i, f"b{i}", site, i, 1, 2, "bf16") for i in range(2))
    p = Program("p", WORMHOLE, buffers=buffers, sections=(SectionSpan("s"),),
                memory=tuple(BufferAt(i, 0x10000 * (k + 1), 4096) for k, i in enumerate(memory)))
    assert [str(v) for v in validate(p) if "memory" in str(v)] == expected


def test_the_buffers_an_op_names_are_those_op_ids_names() -> None:
    """``_buffers_named`` (the scratch rules' reading of an op's buffer ids through ``_SHAPE``) lists what
    ``ir.ids.op_ids`` lists as buffers, for an op of every class (operands, in-place reads, index buffers included)."""
    from pathlib import Path

    from test_schema import WRITTEN

    from verispatial.ir.ids import op_ids
    from verispatial.ir.ops import ID_BUFFER
    from verispatial.ir.program import walk
    from verispatial.ir.serialize import load_program
    from verispatial.ir.validate import _buffers_named

    examples = Path(__file__).resolve().parent.parent / "examples"
    programs = [p for _, p in WRITTEN] + [load_program(f) for f in sorted(examples.glob("*.json"))]
    seen: set[type] = set()
    for p in programs:
        for ep in p.programs:
            for op in walk(ep.ops):
                assert sorted(_buffers_named(op)) == sorted(v for k, v in op_ids(op) if k == ID_BUFFER), op
                seen.add(type(op))
    assert seen == set(OP_TAGS)


def test_no_control_character_is_printable() -> None:
    """The source rule passes printable text over without its per-character test (``str.isprintable``): sound only
    while no character of category Cc is printable, checked over every code point of this Python's Unicode."""
    import sys
    import unicodedata

    assert not [c for c in map(chr, range(sys.maxunicode + 1)) if unicodedata.category(c) == "Cc" and c.isprintable()]


@pytest.mark.parametrize(("wide", "sectioned"), [(16, 0), (17, 0), (16, 1), (15, 1), (0, 17)])
def test_semaphore_slots_on_a_site_of_program_wide_words_only_and_of_sections(wide: int, sectioned: int) -> None:
    """A site whose words are all program-wide takes the slot rule's short way (its count is the words); with a
    section's word too, the per-phase count. Either way past the target's slots is the one message, with the count."""
    site = Site(0, 0)
    cap = WORMHOLE.max_semaphores
    sems = tuple(Semaphore(i, f"s{i}", (site,), 0, SemRole.COUNTER, None if i < wide else 0)
                 for i in range(wide + sectioned))
    p = Program("slots", WORMHOLE, semaphores=sems, sections=(SectionSpan("main"),))
    n = wide + sectioned
    expected = [] if n <= cap else [f"site (0,0): {n} semaphores live at once (in one phase) exceed the target's {cap}"]
    assert [str(v) for v in validate(p)] == expected


@pytest.mark.parametrize(("n", "listed"), [(8, 2), (9, 2), (16, 1), (6, 3), (1, 17)])
def test_semaphore_slots_of_a_semaphore_listing_its_site_twice(n: int, listed: int) -> None:
    """The slot rules are counted only for a program that might break them: more semaphores than the target's slots,
    or one listing a site twice (each listing takes a slot, as the count has always taken it). ``n`` program-wide
    semaphores each listing site (0,0) ``listed`` times: every repeat is reported, then the site's count past the
    slots."""
    site = Site(0, 0)
    cap = WORMHOLE.max_semaphores
    sems = tuple(Semaphore(i, f"s{i}", (site,) * listed, 0, SemRole.COUNTER, None) for i in range(n))
    p = Program("slots", WORMHOLE, semaphores=sems, sections=(SectionSpan("main"),))
    twice = [f"semaphore {i} (s{i}): lists a site twice" for i in range(n)] if listed > 1 else []
    over = [f"site (0,0): {n * listed} semaphores live at once (in one phase) exceed the target's {cap}"]
    assert [str(v) for v in validate(p)] == twice + (over if n * listed > cap else [])
    with fast_paths_off():  # every program's slots counted: the same
        assert [str(v) for v in validate(p)] == twice + (over if n * listed > cap else [])


def test_printable_is_isprintable() -> None:
    """``validate.printable`` judges ASCII text by deleting its printable bytes: the same answer as ``str.isprintable``
    for every character of the first planes' start (controls, DEL, Latin-1, line and bidirectional separators), alone
    and inside printable ASCII text."""
    from verispatial.ir.validate import printable

    for c in [*map(chr, range(0x400)), "\u2028", "\u202e", "\udcff", "\U0001f600"]:
        for text in (c, f"ab{c}cd"):
            assert printable(text) == text.isprintable(), repr(text)
    assert printable("")
