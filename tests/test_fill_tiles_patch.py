"""``FillTiles`` of no tile, kind ``patch``: stores into tiles the engine already filled by a read that has landed (matmul's
padding of its last K tile after the read's barrier, ttnn 0.81.1 ``kernel_helper_functions/pad_tile.hpp:91``; moreh's
masks). No tile is counted — the read filled it — but the stores land for the other agents only at a drain, as any
fill's (docs/semantics.md "Local-store fills"): a push before one is ``async-read-publish``. The interpreter, the
explorer, the checker and the Promela model agree on the drained and the undrained patch; ``validate`` takes a fill of
no tile only as a patch."""

from __future__ import annotations

import jsonschema
import pytest

from tests.test_fill_tiles import SCALER, reduce_with_scaler, spin_agrees_with_explorer
from verispatial.driver.run import certify
from verispatial.ir import Addr, FillTiles, Push, ReadBarrier, ReadTiles, Reserve
from verispatial.ir import rules as R
from verispatial.ir.ops import PATCH
from verispatial.ir.program import Program
from verispatial.ir.serialize import dumps, loads, program_to_dict, schema
from verispatial.ir.validate import validate
from verispatial.petri.explore import explore
from verispatial.petri.interp import simulate
from verispatial.petri.promela import spin_available


def _patched(drain: bool, tiles: int = 0, kind: str = PATCH) -> Program:
    """The scaler page read from X's tile 0, landed, then patched by stores (drained or not), then pushed."""
    p = reduce_with_scaler((Reserve(SCALER, 1), ReadTiles("X", Addr(0), 1, SCALER), ReadBarrier(),
                            FillTiles(SCALER, tiles, kind, drain=drain), Push(SCALER, 1)))
    assert isinstance(p, Program)
    return p


def test_a_drained_patch_of_a_landed_read_proves() -> None:
    p = _patched(drain=True)
    assert simulate(p).violations == ()
    assert explore(p).verdict == "ok"
    report = certify(p, cache=False)
    assert report.exit_code == 0, [(r.name, r.reason) for r in report.results if r.verdict.value != "proved"]


def test_an_undrained_patch_is_refuted_at_the_push_and_replayed() -> None:
    p = _patched(drain=False)
    assert [(v.rule, v.position.path) for v in simulate(p).violations] == [(R.ASYNC_READ_PUBLISH, (4,))]
    assert any(f.violation.rule == R.ASYNC_READ_PUBLISH for f in explore(p).violations)
    report = certify(p, cache=False)
    refuted = [r for r in report.results if r.verdict.value == "refuted"]
    assert [r.name for r in refuted] == [f"{R.ASYNC_READ_PUBLISH}:(0,0).reader:[4]"]
    assert refuted[0].counterexample is not None


@pytest.mark.skipif(not spin_available(), reason="spin is not installed (apt-get install -y spin)")
@pytest.mark.parametrize("drain", [True, False])
def test_spin_agrees_with_the_explorer_on_the_patch(drain: bool) -> None:
    sp, _ = spin_agrees_with_explorer(_patched(drain))
    assert (sp.rules == set()) == drain


def test_a_fill_of_no_tile_is_valid_only_as_a_patch() -> None:
    assert validate(_patched(drain=True)) == []
    (bad,) = validate(_patched(drain=True, kind="const"))
    assert "tiles must be >= 1, got 0 (0 only for a fill_tiles of kind 'patch')" in str(bad)


def test_a_patch_round_trips_and_meets_the_schema() -> None:
    p = _patched(drain=False)
    assert loads(dumps(p)) == p
    jsonschema.Draft202012Validator(schema()).validate(program_to_dict(p))


@pytest.mark.parametrize(("where", "ops"), [
    # after the push: the read's tile is published (the consumer may read it) and the window is empty
    pytest.param("after-push", (Reserve(SCALER, 1), ReadTiles("X", Addr(0), 1, SCALER), ReadBarrier(), Push(SCALER, 1),
                                FillTiles(SCALER, 0, PATCH, drain=True)), id="after-push"),
    # before the read: no tile of the window is filled yet (the read would land over the stores)
    pytest.param("before-read", (Reserve(SCALER, 1), FillTiles(SCALER, 0, PATCH, drain=True),
                                 ReadTiles("X", Addr(0), 1, SCALER), ReadBarrier(), Push(SCALER, 1)), id="before-read"),
    # before the read's barrier: the read may still land over the stores
    pytest.param("before-barrier", (Reserve(SCALER, 1), ReadTiles("X", Addr(0), 1, SCALER),
                                    FillTiles(SCALER, 0, PATCH, drain=True), ReadBarrier(), Push(SCALER, 1)),
                 id="before-barrier"),
])
def test_a_patch_with_no_filled_tile_in_its_window_is_refused_cb_write_unreserved(where: str, ops: tuple) -> None:
    """A patch stores into a tile of its reserved window that a read of the engine filled and that landed
    (docs/semantics.md "Local-store fills": after the read's barrier and before the push; ``get_write_ptr`` is valid
    only between reserve and push, ``dataflow_api.h:309-312``): one with no filled tile in the window (after the push,
    before the read) or with a read into the buffer still in flight (before its barrier) stores where the engine holds
    nothing landed, ``cb-write-unreserved``. The mutation benchmark found these: a patch swapped after its push or
    before its read's barrier was proved and judged still correct. Interpreter, explorer and checker agree; the
    refutation replays."""
    p = reduce_with_scaler(ops)
    assert isinstance(p, Program)
    assert validate(p) == []
    at = next(i for i, op in enumerate(ops) if isinstance(op, FillTiles))
    assert [(v.rule, v.position.path) for v in simulate(p).violations] == [(R.CB_WRITE_UNRESERVED, (at,))]
    assert {f.violation.rule for f in explore(p).violations} == {R.CB_WRITE_UNRESERVED}
    report = certify(p, cache=False)
    refuted = [r for r in report.results if r.verdict.value == "refuted"]
    assert [r.name for r in refuted] == [f"{R.CB_WRITE_UNRESERVED}:(0,0).reader:[{at}]"]
    assert refuted[0].counterexample is not None


@pytest.mark.skipif(not spin_available(), reason="spin is not installed (apt-get install -y spin)")
@pytest.mark.parametrize("barrier_first", [True, False], ids=["after-push", "before-barrier"])
def test_spin_agrees_with_the_explorer_on_a_misplaced_patch(barrier_first: bool) -> None:
    read = (ReadTiles("X", Addr(0), 1, SCALER), ReadBarrier())
    patch = FillTiles(SCALER, 0, PATCH, drain=True)
    ops = (Reserve(SCALER, 1), *read, Push(SCALER, 1), patch) if barrier_first else (
        Reserve(SCALER, 1), read[0], patch, read[1], Push(SCALER, 1))
    sp, _ = spin_agrees_with_explorer(reduce_with_scaler(ops))
    assert sp.rules == {R.CB_WRITE_UNRESERVED}
