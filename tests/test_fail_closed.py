"""Fail closed: every chain that gives ops their meaning — the reference interpreter, the checker's per-engine rules,
validate and the Promela export — has a case for every op class of the IR, and raises ``UnhandledOp`` for an op class
it does not know instead of running it as a no-op (a new op would otherwise be ignored by both the checker and the
oracle). The shipped examples hold every op class, so running each chain over them walks every class."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from verispatial.certify.rules import engine_facts
from verispatial.certify.structure import engine_views
from verispatial.errors import UnhandledOp
from verispatial.ir.ops import OP_TAGS
from verispatial.ir.program import Program, walk
from verispatial.ir.serialize import load_program
from verispatial.ir.validate import validate
from verispatial.petri.interp import simulate
from verispatial.petri.promela import PromelaUnsupported, to_promela

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.json")) + sorted((ROOT / "examples" / "broken").glob("*.json"))


@attrs.frozen
class Teleport:
    """An op class no chain knows (as a new op would be before its semantics are written)."""

    buf: int = 0


def _programs() -> list[Program]:
    return [load_program(p) for p in EXAMPLES]


def _with_unknown_op(p: Program) -> Program:
    ep = p.programs[0]
    return attrs.evolve(p, programs=(attrs.evolve(ep, ops=(Teleport(), *ep.ops)), *p.programs[1:]))


def test_the_examples_hold_every_op_class() -> None:
    seen = {type(op) for p in _programs() for ep in p.programs for op in walk(ep.ops)}
    assert set(OP_TAGS) <= seen


def test_every_chain_handles_every_op_class() -> None:
    for p in _programs():
        assert isinstance(validate(p), list)  # raises UnhandledOp for an op class it has no case for
        simulate(p, max_steps=20_000)
        views = engine_views(p)
        for view in views.values():
            engine_facts(p, view)
        try:
            to_promela(p)
        except PromelaUnsupported:
            pass  # a construct the model refuses by name (several sections, aliases, dynamic addresses)


def _per_engine_rules(p: Program) -> object:
    return engine_facts(p, engine_views(p)[p.programs[0].key])


CHAINS: dict[str, Callable[[Program], object]] = {
    "validate": validate, "interpreter": simulate, "per-engine rules": _per_engine_rules, "promela": to_promela}


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_an_unknown_op_class_is_refused_by_every_chain(chain: str) -> None:
    p = _with_unknown_op(load_program(ROOT / "examples" / "pipeline_small.json"))
    with pytest.raises(UnhandledOp, match="Teleport"):
        CHAINS[chain](p)


def test_what_an_op_issues_lands_through_its_family_in_the_interpreter_and_the_model() -> None:
    """Every op class a family's handler puts in flight (an asynchronous op) has a landing in the interpreter and in
    the Promela model's noc process, and a queue in the model: the same classes in the three tables."""
    from verispatial.ir.ops import (
        InlineWrite,
        McastSend,
        McastSetValid,
        ReadTiles,
        RemoteRead,
        SemInc,
        SemIncMcast,
        WriteTiles,
    )
    from verispatial.petri import interp, promela

    issuing = {ReadTiles, WriteTiles, SemInc, SemIncMcast, McastSend, McastSetValid, InlineWrite, RemoteRead}
    assert set(interp._LANDINGS) == issuing
    # The model refuses remote reads by name (``_Gen._refuse``): no queue, no landing.
    assert set(promela._LANDINGS) == set(promela._QUEUES) == issuing - {RemoteRead}


def test_every_blocking_op_class_has_its_guard_and_its_detail() -> None:
    """The ops that may block (a Reserve or Wait on a buffer, a SemWait, a barrier) each have a guard in their
    family, and a detail saying what blocks them (a stuck engine's reason): the same classes in both tables; every
    other op class is always enabled."""
    from verispatial.ir.ops import AtomicBarrier, Flush, ReadBarrier, Reserve, SemWait, Wait, WriteBarrier
    from verispatial.petri import interp

    blocking = {Reserve, Wait, SemWait, ReadBarrier, WriteBarrier, Flush, AtomicBarrier}
    assert set(interp._ENABLED) == set(interp._BLOCKED) == blocking


@pytest.mark.parametrize("chain", ["interpreter", "promela"])
def test_an_in_flight_op_with_no_landing_is_refused(monkeypatch: pytest.MonkeyPatch, chain: str) -> None:
    """A read whose landing no family provides is refused when it would land (interpreter) or when the model's noc
    process is written (Promela), never left in flight or dropped."""
    from verispatial.ir.ops import ReadTiles
    from verispatial.petri import interp, promela

    table = interp._LANDINGS if chain == "interpreter" else promela._LANDINGS
    monkeypatch.delitem(table, ReadTiles)
    p = load_program(ROOT / "examples" / "pipeline_small.json")
    assert any(isinstance(op, ReadTiles) for ep in p.programs for op in walk(ep.ops))
    with pytest.raises(UnhandledOp, match="landings has no case for op class ReadTiles"):
        CHAINS[chain](p)


def test_the_cli_reports_an_unhandled_op_as_a_checker_error(tmp_path: Path) -> None:
    """The fault is verispatial's, not the input's: exit 4, one line, no traceback (run in a child process with the
    interpreter's chain shortened, as a forgotten case would leave it)."""
    script = (
        "import sys\n"
        "from verispatial.petri import interp\n"
        "from verispatial.ir.ops import Pop\n"
        "orig = interp.Interp._exec\n"
        "def short(self, s, e, out):\n"
        "    op = self._ops[e][s.pcs[e][0]]\n"
        "    if isinstance(op, Pop):\n"
        "        raise interp.UnhandledOp('the interpreter', op)\n"
        "    return orig(self, s, e, out)\n"
        "interp.Interp._exec = short\n"
        "from verispatial.cli import main\n"
        "sys.argv = ['verispatial', 'simulate', sys.argv[1]]\n"
        "sys.exit(main())\n"
    )
    run = subprocess.run([sys.executable, "-c", script, str(ROOT / "examples" / "pipeline_small.json")],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 4, (run.stdout, run.stderr)
    assert "no case for op class Pop" in run.stderr
    assert "Traceback" not in run.stderr
