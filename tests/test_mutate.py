"""MUTATION TESTING (``verispatial/mutate.py``, issue 9 deliverable 5): the mutant enumerator on a tiny program,
and a sample of the mutants of the small shipped examples, each refused or shown still correct — never proved
while the oracle breaks it. ``ci``: 5 mutants of each of five small examples (seeded); ``thorough``: every mutant
of them (``python benchmarks/mutate.py`` runs every example and, with ``--corpus``, the corpus; its figures are in
benchmarks/README.md, its survivors explained in docs/checker.md).
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path

import pytest

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.ir import (
    WORMHOLE,
    Addr,
    Buffer,
    BufferAt,
    Engine,
    EngineProgram,
    Group,
    Loop,
    McastSetValid,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    RemoteRead,
    Reserve,
    Role,
    Site,
    Tensor,
    Term,
    Wait,
)
from verispatial.ir.ops import body_at
from verispatial.ir.serialize import load_program, program_from_dict
from verispatial.mutate import Mutant, judge, kill_rate, mutants

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
VENDOR = EXAMPLES / "vendor"
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
#: Small examples the explorer decides in well under a second per mutant.
SMALL = ("counter_release", "kv_cache_update", "peeled_k_loop", "pipeline_small", "vendor_receiver")
PER_PROGRAM = 5


def _tiny() -> Program:
    """A reader fills two one-tile pages of b0 in a loop; a writer waits for and pops them."""
    s = Site(0, 0)
    reader = EngineProgram(s, Engine.READER, (Loop("k", 2, (Reserve(0, 1), ReadTiles("x", Addr(0, (Term("k", 1),)), 1, 0),
                                                          ReadBarrier(), Push(0, 1))),))
    writer = EngineProgram(s, Engine.WRITER, (Loop("k", 2, (Wait(0, 1), Pop(0, 1))),))
    return Program("tiny", WORMHOLE, tensors=(Tensor("x", (32, 64), "bf16", Role.INPUT),),
                   buffers=(Buffer(0, "cb0", s, 0, 1, 2, "bf16"),), programs=(reader, writer),
                   memory=(BufferAt(0, WORMHOLE.reserved_base, 2 * WORMHOLE.bytes_per_tile("bf16")),))


def test_every_single_op_mutant_of_a_tiny_program() -> None:
    ms = list(mutants(_tiny()))
    got = Counter((m.engine, m.kind) for m in ms)
    r, w = "(0,0).reader", "(0,0).writer"
    # reader: drop the loop and its 4 ops (the barrier as no-barrier), pages +-1 of Reserve/ReadTiles/Push (1 -> 2
    # only), loop 2 -> 3 and 2 -> 1, 3 adjacent swaps in the body, 4 ops moved out of the loop.
    assert got == Counter({(r, "drop"): 4, (r, "no-barrier"): 1, (r, "pages+1"): 3, (r, "loop+1"): 1,
                           (r, "loop-1"): 1, (r, "swap"): 3, (r, "hoist"): 4,
                           (w, "drop"): 3, (w, "pages+1"): 2, (w, "loop+1"): 1, (w, "loop-1"): 1, (w, "swap"): 1,
                           (w, "hoist"): 2})
    hoist = next(m for m in ms if m.kind == "hoist" and m.engine == w and m.path == (0, 1))
    assert hoist.program.programs[1].ops == (Loop("k", 2, (Wait(0, 1),)), Pop(0, 1))
    swap = next(m for m in ms if m.kind == "swap" and m.engine == w)
    assert swap.program.programs[1].ops == (Loop("k", 2, (Pop(0, 1), Wait(0, 1))),)


def test_the_tiny_programs_mutants_are_refused_or_still_correct() -> None:
    outs = [judge(m) for m in mutants(_tiny())]
    by = Counter(o.status for o in outs)
    assert by["unsound"] == 0
    assert by["error"] == 0
    assert by["unknown"] == 0
    killed, live = kill_rate(outs)
    assert killed == live
    # Without the read barrier the push publishes a read that may not have landed: refuted. A loop count changed on
    # one side starves the other (a wait or a reserve never returns: refuted), except the writer's one pop fewer,
    # which leaves a page the launch's end resets: shown still correct by the explorer.
    assert next(o for o in outs if o.mutant.kind == "no-barrier").status == "refuted"
    loops = {(o.mutant.engine, o.mutant.kind): o.status for o in outs if o.mutant.kind.startswith("loop")}
    assert loops == {("(0,0).reader", "loop+1"): "refuted", ("(0,0).reader", "loop-1"): "refuted",
                     ("(0,0).writer", "loop+1"): "refuted", ("(0,0).writer", "loop-1"): "still-correct"}


def _sample() -> list[tuple[str, int]]:
    rng = random.Random(9)
    picks: list[tuple[str, int]] = []
    for name in SMALL:
        n = len(list(mutants(load_program(EXAMPLES / f"{name}.json"))))
        idx = range(n) if THOROUGH else sorted(rng.sample(range(n), PER_PROGRAM))
        picks += [(name, i) for i in idx]
    return picks


@pytest.mark.parametrize(("name", "index"), _sample())
def test_a_mutant_of_a_small_example_is_refused_or_still_correct(name: str, index: int) -> None:
    m = list(mutants(load_program(EXAMPLES / f"{name}.json")))[index]
    o = judge(m)
    assert o.status not in ("unsound", "error", "unknown"), (m.kind, m.engine, m.path, m.what, o.verdict, o.detail)


def test_counts_set_values_and_coefficients_are_mutated() -> None:
    """The kinds of issue 16 items 6 and 7: a multicast's ``num_dests`` one off (the acknowledgement count), a set's
    value one off, a loop-index coefficient of a set or a wait one off; the mutated engine's source table is left
    out (it names the ops as written)."""
    p = load_program(VENDOR / "argmax_start_wait_min.json")
    ms = list(mutants(p))
    got = Counter(m.kind for m in ms if m.kind.startswith(("dests", "set", "coef")))
    # Two flag multicasts of 2 destinations; four sets (three of 0: no set-1); three terms (set, two waits).
    assert got == Counter({"dests+1": 2, "dests-1": 2, "set+1": 4, "set-1": 1, "coef+1": 3, "coef-1": 3})
    m = next(m for m in ms if m.kind == "coef+1" and m.path == (0, 1))
    assert "coefficient of k 1 -> 2" in m.what
    red = m.program.programs[0]
    assert red.sources == ()
    assert m.program.programs[1].sources == p.programs[1].sources


def test_the_sequence_kinds_of_argmax_are_refused_or_still_correct() -> None:
    """Every ``dests``, ``set`` and ``coef`` mutant of argmax's fixed start handshake is refused (a miscount hangs a
    write barrier; a start value one lower makes the copy of the first iteration fail its ``wait_min``; a
    coefficient one lower no longer rises; ...) or shown correct by the explorer — never proved while broken."""
    p = load_program(VENDOR / "argmax_start_wait_min.json")
    outs = [judge(m) for m in mutants(p) if m.kind.startswith(("dests", "set", "coef"))]
    by = Counter(o.status for o in outs)
    assert by["unsound"] == by["error"] == by["unknown"] == 0, [(o.mutant.what, o.detail) for o in outs]
    killed, live = kill_rate(outs)
    assert killed == live
    assert {o.status for o in outs if o.mutant.kind.startswith("dests")} == {"refuted"}


def test_a_remote_read_gets_its_own_kinds() -> None:
    """A remote read's offset one page further or nearer (``read-offset+1``/``-1``, never below 0) and its owner moved
    to each other site holding the buffer's cb index (``unsite``): all_to_all_read's four reads of offset 0 give four
    ``read-offset+1`` and, each read naming one of the two sites, four ``unsite``."""
    p = load_program(EXAMPLES / "all_to_all_read.json")
    ms = list(mutants(p))
    got = Counter(m.kind for m in ms if m.kind in ("read-offset+1", "read-offset-1", "unsite"))
    assert got == Counter({"read-offset+1": 4, "unsite": 4})
    m = next(m for m in ms if m.kind == "unsite" and m.engine == "(0,0).writer" and m.path == (4,))
    assert m.what == "remote_read(b0, (0,0), 1, b1) reads at (1,0) instead"
    moved = m.program.programs[1].ops[4]
    assert isinstance(moved, RemoteRead)
    assert moved.at == Site(1, 0)


def test_the_remote_read_kinds_of_all_to_all_read_are_refused_or_still_correct() -> None:
    p = load_program(EXAMPLES / "all_to_all_read.json")
    outs = [judge(m) for m in mutants(p) if m.kind in ("read-offset+1", "read-offset-1", "unsite")]
    by = Counter(o.status for o in outs)
    assert by["unsound"] == by["error"] == by["unknown"] == 0, [(o.mutant.what, o.detail) for o in outs]
    # One page past the pointer of a one-page ring is past its end: validate refuses it. Reading the other site's
    # page instead is as safe (both pages are published before either read and popped after both): still correct.
    assert {o.status for o in outs if o.mutant.kind == "read-offset+1"} == {"rejected"}
    assert {o.status for o in outs if o.mutant.kind == "unsite"} == {"still-correct"}


def test_a_non_atomic_up_gets_its_own_kinds() -> None:
    """``Semaphore.up(n)`` of the own word (``SemRmw``) with ``n`` one off (``rmw+1``/``rmw-1``): local_up's up of 1
    gives one of each; every one is refused (the word misses the count its wait or its balance expects) or shown
    correct by the explorer — never proved while broken."""
    p = load_program(EXAMPLES / "local_up.json")
    ms = [m for m in mutants(p) if m.kind.startswith("rmw")]
    got = Counter(m.kind for m in ms)
    assert set(got) == {"rmw+1", "rmw-1"}
    assert got["rmw+1"] == got["rmw-1"] >= 1
    outs = [judge(m) for m in ms]
    by = Counter(o.status for o in outs)
    assert by["unsound"] == by["error"] == by["unknown"] == 0, [(o.mutant.what, o.detail) for o in outs]
    assert "refuted" in by


def _per_core_flags() -> Program:
    """examples/vendor_receiver.json with a second receiver at (2,0), one block and no writers: the sender multicasts
    the tile to (1,0), flushes, sets (1,0)'s flag, then the same to (2,0), each to a one-core rectangle of its own
    (groups 0 and 1) on the one channel every write naming none shares. Proved: each flag follows its data in one
    landing order on an ordered target."""
    d = json.loads((EXAMPLES / "vendor_receiver.json").read_text())
    d["name"] = "per_core_flags"
    d["buffers"].append({**d["buffers"][1], "id": 2, "site": [2, 0]})
    d["memory"].append({**d["memory"][1], "buf": 2})
    d["semaphores"][1]["sites"].append([2, 0])
    d["groups"].append({"id": 1, "sender": [0, 0], "rect": [2, 0, 2, 0], "loopback": False})
    body = d["programs"][0]["ops"][1]["body"]
    assert [op["op"] for op in body[3:8]] == ["sem_wait", "mcast_send", "sem_set", "flush", "mcast_set_valid"]
    body[3]["value"] = 2  # both receivers say they are ready
    body[8:8] = [{**body[4], "group": 1}, body[6], {**body[7], "group": 1}]
    d["programs"] = [ep for ep in d["programs"] if ep["engine"] != "writer"]
    d["programs"].append(json.loads(json.dumps({**d["programs"][1], "site": [2, 0]}).replace('"buf": 1', '"buf": 2')))
    for ep in d["programs"]:
        for op in ep["ops"]:
            if op["op"] == "loop":
                op["count"] = 1
    return program_from_dict(d)


def _overtaken(m: Mutant) -> None:
    """``m`` is killed by ``async-flag-overtake`` refuted at its flag, with a run of the interpreter that breaks it."""
    o = judge(m)
    assert o.status == "refuted", (m.what, o.status, o.detail)
    report = certify(m.program)
    (r,) = [r for r in report.results if r.name.startswith("async-flag-overtake:")]
    assert r.verdict is Verdict.REFUTED, (m.what, r.verdict, r.reason)
    cex = r.counterexample or {}
    assert cex.get("replayed_by"), cex
    assert cex["violation"]["rule"] == "async-flag-overtake"


def test_a_writes_channel_and_rectangle_get_their_own_kinds() -> None:
    """``vc``: each multicast and flag on the lowest channel its engine's writes leave free (vendor_receiver's name
    none: VC 0); ``widen``: each one's rectangle one column or row wider where it stays in the mesh and reaches another
    site (not (0,0)-(1,0): the one site added is the non-loopback sender), its count grown with it."""
    p = load_program(EXAMPLES / "vendor_receiver.json")
    ms = [m for m in mutants(p) if m.kind in ("vc", "widen")]
    assert [(m.kind, m.path, m.what) for m in ms] == [
        ("vc", (1, 4), "McastSend on VC 0, not None"), ("vc", (1, 7), "McastSetValid on VC 0, not None"),
        ("widen", (1, 4), "McastSend to (1,0)-(2,0), not (1,0)-(1,0)"),
        ("widen", (1, 4), "McastSend to (1,0)-(1,1), not (1,0)-(1,0)"),
        ("widen", (1, 7), "McastSetValid to (1,0)-(2,0), not (1,0)-(1,0)"),
        ("widen", (1, 7), "McastSetValid to (1,0)-(1,1), not (1,0)-(1,0)")]
    wide = ms[4].program
    assert wide.groups[1] == Group(1, Site(0, 0), (1, 0, 2, 0))
    flag = body_at(wide.programs[0].ops, (1,))[7]
    assert isinstance(flag, McastSetValid)
    assert (flag.group, flag.num_dests) == (1, 2)


def test_a_flag_moved_to_another_channel_past_a_flush_is_refuted() -> None:
    """vendor_receiver's tile, a flush, then its flag: on one channel the flush is enough; the flag (or the tile) on
    another channel may land first, the flush seeing the tile leave, not land (tt-metal #55555)."""
    p = load_program(EXAMPLES / "vendor_receiver.json")
    assert certify(p).exit_code == 0
    for m in mutants(p):
        if m.kind == "vc":
            _overtaken(m)


def test_a_flag_widened_past_its_datas_rectangle_is_refuted() -> None:
    """The flag to (1,0) widened to (1,0)-(2,0): past its tile's rectangle, so the two keep no order at (1,0)
    (``noc.h:23-30``), and (2,0) sees a flag before its own tile is sent."""
    p = _per_core_flags()
    assert certify(p).exit_code == 0
    (m,) = [m for m in mutants(p) if m.kind == "widen" and m.path == (1, 7) and "(1,0)-(2,0)" in m.what]
    _overtaken(m)
