"""The random-program strategies' sharded buffers: a correct program's sharded output is written whole.

Found by drawing ``correct_programs()`` and exploring each: 3 of 500 were refuted by ``output-unwritten``, each a
block-sharded output (rows of ``w`` tiles ``2 w`` apart) whose tensor is twice the shard's width, so the other half
of the output had no writer. ``correct_programs`` promises a program correct by construction
(``verispatial.strategies.programs.blueprints``), so such a shard may be drawn for an input, an activation or a broken
draw only.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings

from verispatial.ir import Program, Role
from verispatial.ir.serialize import load_program
from verispatial.petri.explore import explore
from verispatial.strategies import correct_programs


def _unwritten_output_tiles(p: Program) -> dict[str, set[int]]:
    """Each output tensor's tiles that no sharded buffer's ring holds, for outputs written only through shards."""
    missing: dict[str, set[int]] = {}
    for t in p.tensors:
        if t.role is not Role.OUTPUT:
            continue
        shards = [b for b in p.buffers if b.shard is not None and b.shard.tensor == t.name]
        if not shards:
            continue
        rows, cols = t.shape[0] // 32, t.shape[1] // 32
        held = {b.shard.tile(j) for b in shards for j in range(b.capacity * b.page_tiles)}  # type: ignore[union-attr]
        missing[t.name] = set(range(rows * cols)) - held
    return {k: v for k, v in missing.items() if v}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(correct_programs())
def test_a_correct_programs_sharded_output_is_held_whole_by_its_shards(p: Program) -> None:
    assert _unwritten_output_tiles(p) == {}


def test_the_program_that_showed_it_is_refuted_by_the_explorer() -> None:
    """The half-covered output the strategy used to draw: the explorer finds tile 0 unwritten (the test's premise)."""
    p = load_program(Path(__file__).parent / "data" / "half_covered_sharded_output.json")
    assert _unwritten_output_tiles(p) == {"sh0": {0}}
    assert "output-unwritten" in explore(p, max_states=4_000).rules()

