"""Typed obligation ids (verispatial/ir/obligation.py): one printer and one parser. Every name the corpus's
certificates hold parses and prints back to itself; every id prints to a name that parses back to it; a name of no
rule, or a subject of the wrong form, is refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verispatial.ir import rules as R
from verispatial.ir.core import Engine, Site
from verispatial.ir.obligation import (
    AliasRef,
    BadObligationId,
    BoundaryRef,
    BufferRef,
    ComponentRef,
    CrossingRef,
    LabelRef,
    LeafRef,
    ObligationId,
    OpRef,
    OrderingRef,
    RegionRef,
    TensorRef,
    WordRef,
    parse,
)
from verispatial.ir.rules import Subject

ROOT = Path(__file__).resolve().parent.parent


def _corpus_names() -> list[str]:
    names = []
    for path in sorted((ROOT / "proofs").rglob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("obligations"), list):
            names += [o["name"] for o in doc["obligations"] if isinstance(o, dict)]
    return names


def test_every_corpus_name_round_trips() -> None:
    names = _corpus_names()
    assert len(names) > 1000
    for name in names:
        assert str(parse(name)) == name


@pytest.mark.parametrize(("text", "want"), [
    ("cb-capacity", ObligationId(R.CB_CAPACITY)),
    ("cb-capacity:(0,0).reader:[0]", ObligationId(R.CB_CAPACITY, OpRef("(0,0).reader", (0,)))),
    ("async-pending-at-end:(1,2).writer:end", ObligationId(R.ASYNC_PENDING_AT_END, OpRef("(1,2).writer", None))),
    ("balance-cb:b12", ObligationId(R.BALANCE_CB, BufferRef(12))),
    ("async-source-reuse:b0", ObligationId(R.ASYNC_SOURCE_REUSE, BufferRef(0))),
    ("memory-range:resident:kv", ObligationId(R.MEMORY_RANGE, LabelRef("resident:kv"))),
    ("deadlock:composition", ObligationId(R.DEADLOCK, LabelRef("composition"))),
    ("alias-clobber:b10~b11", ObligationId(R.ALIAS_CLOBBER, AliasRef(10, 11))),
    ("sem-exact:sem1@(1,0)", ObligationId(R.SEM_EXACT, WordRef(1, Site(1, 0)))),
    ("deadlock:(0,0).reader+3", ObligationId(R.DEADLOCK, ComponentRef("(0,0).reader", 3))),
    ("deadlock:(0,0).reader", ObligationId(R.DEADLOCK, ComponentRef("(0,0).reader"))),
    ("memory-disjoint:(0,1).local.phase2", ObligationId(R.MEMORY_DISJOINT, RegionRef(Site(0, 1), "local", 2))),
    ("hb-state:k:v:(0,0).reader[4, 1]<(0,0).writer[1]",
     ObligationId(R.HB_STATE, OrderingRef("k:v", LeafRef("(0,0).reader", (4, 1)), LeafRef("(0,0).writer", (1,))))),
    ("hb-activation:A:(1,0).reader[4, 1]", ObligationId(R.HB_ACTIVATION, OrderingRef("A", LeafRef("(1,0).reader", (4, 1))))),
    ("hb-rendezvous:after-section-0", ObligationId(R.HB_RENDEZVOUS, BoundaryRef(0))),
    ("hb-cross:x:after-section-3", ObligationId(R.HB_CROSS, CrossingRef("x", 3))),
    ("bounds:kv", ObligationId(R.BOUNDS, TensorRef("kv"))),
    ("certificate:places", ObligationId(R.CERTIFICATE, LabelRef("places"))),
    ("slice2/balance-sem:sem0@(3,1)", ObligationId(R.BALANCE_SEM, WordRef(0, Site(3, 1)), 2)),
])
def test_known_forms(text: str, want: ObligationId) -> None:
    assert parse(text) == want
    assert str(want) == text


@pytest.mark.parametrize("text", ["cb-capcity", "cb-capacity:(0,0).reader", "balance-cb:sem1@(0,0)",
                                  "sem-exact:b3", "cb-straddle:(0,0).reader:[1]", "", "slice/x"])
def test_refused(text: str) -> None:
    with pytest.raises(BadObligationId):
        parse(text)


_engine = st.builds(lambda x, y, e: f"({x},{y}).{e.value}", st.integers(0, 15), st.integers(0, 15),
                    st.sampled_from(list(Engine)))
_path = st.lists(st.integers(0, 40), min_size=1, max_size=4).map(tuple)
_name = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=8)
_site = st.builds(Site, st.integers(0, 15), st.integers(0, 15))
_leaf = st.builds(LeafRef, _engine, _path)
_SUBJECTS = {
    Subject.OP: st.builds(OpRef, _engine, st.one_of(st.none(), _path)),
    Subject.BUFFER: st.builds(BufferRef, st.integers(0, 999)),
    Subject.ALIAS: st.builds(AliasRef, st.integers(0, 99), st.integers(0, 99)),
    Subject.WORD: st.builds(WordRef, st.integers(0, 99), _site),
    Subject.TENSOR: st.builds(TensorRef, _name),
    Subject.COMPONENT: st.builds(ComponentRef, _engine, st.integers(0, 99)),
    Subject.REGION: st.builds(RegionRef, _site, st.sampled_from(["local", "acc"]), st.integers(0, 9)),
    Subject.ORDERING: st.builds(OrderingRef, _name, _leaf, st.one_of(st.none(), _leaf), st.sampled_from("<~")),
    Subject.BOUNDARY: st.builds(BoundaryRef, st.integers(0, 99)),
    Subject.CROSSING: st.builds(CrossingRef, _name, st.integers(0, 99)),
    Subject.LABEL: st.builds(LabelRef, _name),
}


@st.composite
def _ids(draw: st.DrawFn) -> ObligationId:
    rule = draw(st.sampled_from(R.RULES))
    subject = None
    if rule.subjects and draw(st.booleans()):
        subject = draw(_SUBJECTS[rule.subjects[0]])
    return ObligationId(rule.name, subject, draw(st.one_of(st.none(), st.integers(0, 50))))


@given(_ids())
def test_print_then_parse_is_the_identity(oid: ObligationId) -> None:
    if isinstance(oid.subject, OrderingRef) and oid.subject.second is None:
        oid = ObligationId(oid.kind, OrderingRef(oid.subject.tensor, oid.subject.first), oid.slice)
    assert parse(str(oid)) == oid
