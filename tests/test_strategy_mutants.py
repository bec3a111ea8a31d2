"""The random programs the differential tests draw are valid: a mutation ``validate`` refuses is not taken.

Found by the ``thorough`` differential run (random seeds): a blueprint whose compute engine packs into a write shard of
output ``sh0`` in a loop of 0 iterations (valid; its output is unwritten, a finding). Dropping that loop left a program
whose buffer publishes the tensor's tiles with nothing writing them, which ``validate`` refuses as bad input; the
strategy handed it on and the test failed on the generator, not on a disagreement.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings

from verispatial.ir import Loop, Program
from verispatial.ir.serialize import loads
from verispatial.ir.validate import validate
from verispatial.strategies.programs import mutants_of

BLUEPRINT = loads((Path(__file__).parent / "data" / "strategy_write_shard_of_nothing.json").read_text())
assert isinstance(BLUEPRINT, Program)


def test_the_blueprint_is_valid_and_dropping_its_only_pack_is_not() -> None:
    import attrs

    assert validate(BLUEPRINT) == []
    compute = BLUEPRINT.programs[0]
    assert isinstance(compute.ops[0], Loop)
    dropped = attrs.evolve(BLUEPRINT, programs=(attrs.evolve(compute, ops=()), *BLUEPRINT.programs[1:]))
    errs = validate(dropped)
    assert [e.rule for e in errs] == [
        "publishes tiles of output tensor 'sh0' without writing them: a tensor that is written and read is an activation"]


@settings(max_examples=200)
@given(mutants_of(BLUEPRINT))
def test_every_mutant_drawn_is_valid(p: Program) -> None:
    assert validate(p) == []
