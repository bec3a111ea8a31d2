"""The accumulator family (verispatial/families/accumulator/): its rules in the reference interpreter, the per-engine
rules and the Promela model, each on a tiny program with the exact expected outcome."""

from __future__ import annotations

import re

from builders import CA, A, buf, ep, prog
from family_checks import only, where

from verispatial.certify.rules import engine_facts
from verispatial.certify.structure import engine_views
from verispatial.families.accumulator import encoding, promela, semantics
from verispatial.ir import AcquireAcc, Compute, Engine, PackAcc, ReleaseAcc, Reserve
from verispatial.ir import rules as R
from verispatial.petri.interp import simulate
from verispatial.petri.promela import to_promela


def test_acc_capacity() -> None:
    r = simulate(prog(ep(A, Engine.COMPUTE, AcquireAcc(8, "bf16"), ReleaseAcc(), AcquireAcc(9, "bf16"), Compute("mm"), ReleaseAcc())))
    v = only(r)
    assert where(v) == ("acc-capacity", CA, (2,), ())
    assert v.message == "acquire_acc(9, bf16) takes 9 bf16 tiles; wormhole_b0's accumulator holds 8 at that precision"
    # A 32-bit accumulator holds half as many tiles: 4 fp32 tiles fit, 5 do not.
    r32 = simulate(prog(ep(A, Engine.COMPUTE, AcquireAcc(4, "fp32"), ReleaseAcc(), AcquireAcc(5, "fp32"), ReleaseAcc())))
    v32 = only(r32)
    assert where(v32) == ("acc-capacity", CA, (2,), ())
    assert v32.message == "acquire_acc(5, fp32) takes 5 fp32 tiles; wormhole_b0's accumulator holds 4 at that precision"


def test_acc_unacquired_and_overrun_in_every_chain() -> None:
    """A compute before any acquire (``acc-unacquired``, ops[0]) and a pack of more tiles than the held acquire took
    (``acc-overrun``, ops[3]): the interpreter reports each at its op, the per-engine rules find the same two, and the
    Promela model asserts each at the ops that can break it (its escape is the op's id)."""
    p = prog(ep(A, Engine.READER, Reserve(0, 2)),
             ep(A, Engine.COMPUTE, Compute("mm"), ReleaseAcc(), AcquireAcc(1, "bf16"), PackAcc(0, 2), ReleaseAcc()),
             buffers=(buf(0),))
    got = [where(v) for v in simulate(p).violations if v.rule.startswith("acc-")]
    assert got == [(R.ACC_UNACQUIRED, CA, (0,), ()), (R.ACC_UNACQUIRED, CA, (1,), ()), (R.ACC_OVERRUN, CA, (3,), ())]
    found = sorted((f.rule, f.path) for v in engine_views(p).values() for f in engine_facts(p, v).findings
                   if f.rule.startswith("acc-"))
    assert found == [(R.ACC_OVERRUN, (3,)), (R.ACC_UNACQUIRED, (0,)), (R.ACC_UNACQUIRED, (1,))]
    model = to_promela(p)
    assert re.findall(r"assert\(R_acc_overrun \|\| (O_\d+_\d+) \|\|", model) == ["O_1_0", "O_1_3"]
    assert sorted(re.findall(r"assert\(R_acc_unacquired \|\| (O_\d+_\d+) \|\|", model)) == [
        "O_1_0", "O_1_1", "O_1_2", "O_1_3", "O_1_4"]


def test_the_family_tables_cover_the_family_op_classes() -> None:
    ops = {AcquireAcc, ReleaseAcc, Compute, PackAcc}
    assert set(semantics.HANDLERS) == set(promela.HANDLERS) == set(encoding.HANDLERS) == ops
