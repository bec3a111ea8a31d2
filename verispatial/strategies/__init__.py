"""Public Hypothesis strategies for property-based tests of verispatial and of your own sections.

Install with ``pip install 'verispatial[strategies]'`` (it adds ``hypothesis``); ``docs/strategies.md`` shows a
property test of your own in ten lines. What each strategy draws (page counts are pages, tile counts tiles, shapes
elements, memory offsets bytes):

Targets and model graphs (the compiler's input, ``verispatial/ir/graph.py``; ``strategies/graphs.py``):

- ``targets()``: Wormhole, Blackhole or the GPU class.
- ``model_graphs(max_ops=3, dims=DIMS, kinds=KINDS, read_states=True)``: a random DAG of ops of every graph op kind
  whose shapes fit (shared activations, states updated in place or by a scatter, outputs); large ``dims`` draw
  shapes that do not fit a target's local memory, which ``tile`` refuses by name.
- ``single_op_graphs()``: one op of any kind. ``misshapen_graphs()``: ``(graph, op)``, op's shapes do not fit;
  ``check_graph`` refuses it naming that op.

Section graphs and composed programs (``verispatial.passes.compose``; ``strategies/sections.py``):

- ``section_graphs(shape=None, broken=True)``: a ``SectionGraph`` (sections, ``barrier_after``, ``state``): a
  ``chain`` or a ``dag`` of 2-4 tiny sections sharing activations and a carried state, over 1-3 phases.
- ``composed_programs(shape=None, broken=True)``: one joined by the real ``compose``.

Scheduled programs (``strategies/programs.py``, ``strategies/protocols.py``):

- ``correct_programs()``: correct by construction (circular buffers, counting semaphores, ping-pong and multicast
  handshakes, remote writes announced by an increment, remote reads of published pages, accumulators, carried
  states, nested and trip loops on 1-2 sites): the checker must prove them.
- ``blueprints(broken=True)``: the same blueprint, sometimes broken by design; ``programs(max_mutations=2)``:
  blueprints mutated (an op dropped, a count changed, two ops swapped) about half of the time — arbitrary
  programs that still pass ``validate``; ``mutate(p)``: one such mutation of a program of yours.
- ``protocol_programs()``: ``programs()`` rewritten with ``If`` guards, trip-affine counts, growing wait
  thresholds, ``SemIncMcast``, flag sources and sections.
- ``straddle_programs(alone=False)`` (``strategies/straddles.py``): ``programs()`` (or nothing, ``alone``) with a
  ring whose pages are accessed from its pointer plus an offset by one op kind of ``cb-straddle``'s (reads, fills,
  packs, copies, writes, multicasts of the back, the front or pages already pushed or landing at its pointer, remote
  reads), correct about half of the time, else past the ring's end in one of ``STRADDLE_BREAKS``.

Every scheduled program drawn passes ``validate`` (asserted). Raises ``ImportError`` naming the extra when
``hypothesis`` is not installed.
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError("verispatial.strategies needs Hypothesis: pip install 'verispatial[strategies]'") from e

from verispatial.strategies.graphs import DIMS, KINDS, misshapen_graphs, model_graphs, single_op_graphs, targets
from verispatial.strategies.programs import (
    blueprints,
    correct_programs,
    describe,
    mutate,
    programs,
)
from verispatial.strategies.protocols import protocol_programs
from verispatial.strategies.sections import SectionGraph, composed_programs, section_graphs
from verispatial.strategies.straddles import straddle_programs

__all__ = [
    "DIMS",
    "KINDS",
    "SectionGraph",
    "blueprints",
    "composed_programs",
    "correct_programs",
    "describe",
    "misshapen_graphs",
    "model_graphs",
    "mutate",
    "programs",
    "protocol_programs",
    "section_graphs",
    "single_op_graphs",
    "straddle_programs",
    "targets",
]
