"""Reads in place (``InPlace``, ``cb-read-unpublished``; docs/semantics.md "Reads in place"): a Compute that unpacks a
page by index with no wait of its own, as the sharded layernorm reads its resident input shard ``in0``
(``layernorm_sharded.cpp:357``) and its ``eps`` tile (``:520``, ttnn 0.81.1). The smallest proved and refuted program
of each form, the interpreter's exhaustive explorer agreeing with the checker, every refutation replayed."""

from __future__ import annotations

import json

import attrs
import pytest
from builders import CA, A, buf, ep, prog
from family_checks import where
from test_copy import mapped

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    AcquireAcc,
    Compute,
    Engine,
    FillTiles,
    InPlace,
    Loop,
    Pop,
    Program,
    Push,
    ReleaseAcc,
    Reserve,
    Role,
    Tensor,
    Term,
    Wait,
)
from verispatial.ir import rules as R
from verispatial.ir.program import Shard
from verispatial.ir.serialize import dumps, loads
from verispatial.ir.shards import resident_shards
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate
from verispatial.petri.promela import PromelaUnsupported, to_promela


def verdicts(p: Program) -> dict[str, str]:
    """Every obligation of ``p`` not proved, by name -> verdict; a refutation must carry a counterexample the
    interpreter replayed (its violation, the refuted rule)."""
    out: dict[str, str] = {}
    for r in certify(p).results:
        if r.verdict is Verdict.PROVED:
            continue
        out[r.name] = r.verdict.value
        if r.verdict is Verdict.REFUTED:
            assert r.counterexample is not None, r.name
            assert r.counterexample["replay"]["violation"]["rule"] == r.name.split(":")[0], r.counterexample
    return out


def resident(reads: int = 2, shard_tiles: int = 2, pushed: bool = False) -> Program:
    """Compute reads pages ``0 .. reads - 1`` of b0 by index: b0 globally allocated on the input ``x``'s shard of
    ``shard_tiles`` tiles (a two-page ring), nothing pushing or waiting it (``pushed``: a reader reserves and pushes
    it too, so it is no longer resident and its reads need its pushes)."""
    b0 = attrs.evolve(buf(0, cap=2), shard=Shard("x", 0, 0, 0, shard_tiles))
    reader = (ep(A, Engine.READER, Reserve(0, 2), Push(0, 2)),) if pushed else ()
    return mapped(prog(*reader, ep(A, Engine.COMPUTE, AcquireAcc(1, "bf16"),
                            Loop("i", reads, (Compute("sub_tiles_bcast_cols", 1, (),
                                                      (InPlace(0, 0, (Term("i", 1),)),)),)),
                            ReleaseAcc()),
                buffers=(b0,), tensors=(Tensor("x", (64, 32), "bf16", Role.INPUT),)))


def eps(ordered: bool = True, looped: bool = False) -> Program:
    """The writer fills and pushes eps (b0) and a scaler (b1); compute waits for the scaler only and reads eps at
    index 0 with no wait. ``ordered``: eps is pushed first, so the scaler's wait orders the read after eps's push
    (``layernorm_sharded.cpp:520`` behind ``:314``); else the scaler first and eps may not be pushed yet.
    ``looped``: the scaler's wait sits in a loop before the read, as the layernorm's (313-314)."""
    fill_eps = (Reserve(0, 1), FillTiles(0, 1, "bcast_scalar", drain=True), Push(0, 1))
    fill_scaler = (Reserve(1, 1), FillTiles(1, 1, "reduce_scaler", drain=True), Push(1, 1))
    writer = (*fill_eps, *fill_scaler) if ordered else (*fill_scaler, *fill_eps)
    return mapped(prog(ep(A, Engine.WRITER, *writer),
                ep(A, Engine.COMPUTE, Loop("k", 1, (Wait(1, 1),)) if looped else Wait(1, 1), AcquireAcc(1, "bf16"),
                   Compute("add_tiles", 1, (), (InPlace(0),)), ReleaseAcc(), Pop(1, 1)),
                buffers=(buf(0, cap=1), buf(1, cap=1))))


def test_a_resident_shard_is_named_by_in_place_reads_only() -> None:
    assert resident_shards(resident()) == {0}
    assert resident_shards(resident(pushed=True)) == frozenset()


def test_resident_shard_read_by_index_proves() -> None:
    p = resident()
    assert simulate(p).violations == ()
    assert explore(p).rules() == []
    assert verdicts(p) == {}


def test_resident_shard_read_past_its_shard_is_refuted_and_replayed() -> None:
    p = resident(reads=3)
    (v,) = simulate(p).violations
    assert where(v) == (R.CB_READ_UNPUBLISHED, CA, (1, 0), (("i", 2),))
    assert v.message == "compute(sub_tiles_bcast_cols, 1, b0@0+1*i) reads page 2 of resident shard b0, which holds pages [0, 2)"
    assert explore(p).rules() == [R.CB_READ_UNPUBLISHED]
    assert verdicts(p) == {f"{R.CB_READ_UNPUBLISHED}:{CA}:[1, 0]": "refuted"}


def test_an_in_place_read_of_a_pushed_shard_needs_the_push() -> None:
    """Pushed by a reader, b0 is not resident: its reads need its pages pushed, which nothing orders before them."""
    p = resident(pushed=True)
    assert R.CB_READ_UNPUBLISHED in explore(p).rules()
    assert verdicts(p).get(f"{R.CB_READ_UNPUBLISHED}:{CA}:[1, 0]") == "refuted"


def test_eps_read_with_no_wait_ordered_through_another_buffer_proves() -> None:
    p = eps()
    assert simulate(p).violations == ()
    assert explore(p).rules() == []
    assert verdicts(p) == {}


def test_eps_ordered_by_a_wait_in_an_earlier_loop_proves() -> None:
    """The wait's window ends with its loop body; what still holds after it is that pushed reached its count."""
    p = eps(looped=True)
    assert explore(p).rules() == []
    assert verdicts(p) == {}
    assert explore(eps(ordered=False, looped=True)).rules() == [R.CB_READ_UNPUBLISHED]
    assert verdicts(eps(ordered=False, looped=True)) == {f"{R.CB_READ_UNPUBLISHED}:{CA}:[2]": "refuted"}


def test_eps_read_before_its_push_is_refuted_and_replayed() -> None:
    p = eps(ordered=False)
    assert explore(p).rules() == [R.CB_READ_UNPUBLISHED]
    assert verdicts(p) == {f"{R.CB_READ_UNPUBLISHED}:{CA}:[2]": "refuted"}


def test_in_place_reads_round_trip_and_old_documents_keep_their_bytes() -> None:
    p = eps()
    text = dumps(p)
    compute = json.loads(text)["programs"][1]["ops"][2]
    assert compute["in_place"] == [{"buf": 0, "page": 0, "terms": []}]
    assert loads(text) == p
    plain = prog(ep(A, Engine.COMPUTE, AcquireAcc(1, "bf16"), Compute("x", 1), ReleaseAcc()))
    assert "in_place" not in dumps(plain)


def test_promela_refuses_reads_in_place_by_name() -> None:
    with pytest.raises(PromelaUnsupported, match="cb-read-unpublished is not modelled in Promela"):
        to_promela(eps())


def test_validate_names_a_bad_in_place_page() -> None:
    bad = resident()
    ops = list(bad.programs[0].ops)
    ops[1] = Loop("i", 2, (Compute("sub", 1, (), (InPlace(0, 0, (Term("j", 1),)),)),))
    bad = attrs.evolve(bad, programs=(attrs.evolve(bad.programs[0], ops=tuple(ops)),))
    assert [str(v) for v in validate(bad)] == [
        "program (0,0).compute ops[1].body[0] Compute: in-place page uses 'j', which is not an enclosing loop "
        "variable"]
    assert validate(resident()) == []


def test_the_index_mutants_are_killed_or_still_correct() -> None:
    """``index+1`` (verispatial/mutate.py; ``index-1`` never goes below page 0): the resident read of page ``i``
    moved to ``i + 1`` (page 2 of a two-page shard at i = 1) and eps's page 0 moved to 1 (never pushed) are refuted,
    the oracle agreeing."""
    from collections import Counter

    from verispatial.mutate import judge, mutants

    outs = [judge(m) for p in (resident(reads=2), eps()) for m in mutants(p) if m.kind.startswith("index")]
    got = Counter((o.mutant.kind, o.mutant.what, o.status) for o in outs)
    assert got == Counter({("index+1", "Compute reads b0 at page 0 -> 1", "refuted"): 2})


def past_the_ring(index: int) -> Program:
    """Compute pops one page of b0 (a 3-page ring, four pages filled and pushed one by one), so its read pointer
    sits at slot 1; with pages 1-3 live it reads index ``index`` in place. Index 2 is page 3, live, but its slot
    wrapped to 0 while ``fifo_rd_ptr + 2 * page_size`` is the ring's limit: the unpacker does not wrap
    (``llk_unpack_A_api.h:78-82``; ``cb_access_within_bounds``, ``circular_buffer_interface.h:139-143``)."""
    writer = ep(A, Engine.WRITER, Loop("k", 4, (Reserve(0, 1), FillTiles(0, 1, "mask", drain=True), Push(0, 1))))
    compute = ep(A, Engine.COMPUTE, Wait(0, 1), Pop(0, 1), Wait(0, 3), AcquireAcc(1, "bf16"),
                 Compute("add_tiles", 1, (), (InPlace(0, index),)), ReleaseAcc(), Pop(0, 2), Wait(0, 1), Pop(0, 1))
    return mapped(prog(writer, compute, buffers=(buf(0, cap=3),)))


def test_an_in_place_index_within_the_ring_from_the_read_pointer_proves() -> None:
    p = past_the_ring(1)
    assert validate(p) == []
    assert explore(p).rules() == []
    assert verdicts(p) == {}


def test_an_in_place_index_past_the_ring_end_from_the_read_pointer_is_refuted_and_replayed() -> None:
    """A live page is not enough: from slot 1 of a 3-page ring, index 2 addresses the ring's limit (it was proved
    before: the rule asked only popped <= page < pushed)."""
    p = past_the_ring(2)
    (v,) = simulate(p).violations
    assert where(v) == (R.CB_READ_UNPUBLISHED, CA, (4,), ())
    assert explore(p).rules() == [R.CB_READ_UNPUBLISHED]
    assert verdicts(p) == {f"{R.CB_READ_UNPUBLISHED}:{CA}:[4]": "refuted"}
