"""The differential against the vendor's TT-Lang simulator (issue 17 item 5), a CI-sized slice of
``benchmarks/ttlang_differential.py``: a tutorial and mutants of each kind, a pipe example and its endpoints moved, a
certify-only mutant confirmed at a larger shape, and one no shape of the simulator can confirm, with its reason.
Where the simulator deadlocks certify refutes, where certify proves the simulator runs clean. Needs the optional
extra ``verispatial[ttlang]`` (tt-lang-sim and a CPU torch) or ``$VERISPATIAL_TTLANG_SIM`` (paths where they are);
skips without them. The full run: ``python benchmarks/ttlang_differential.py`` (benchmarks/README.md)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import ttlang_sim as S
from test_frontend_ttlang import tutorials_dir
from ttlang_differential import (
    PARTIAL_TILE,
    PIPE_READY,
    Differential,
    Mutant,
    Probe,
    classify,
    mutants,
    source_text,
    unconfirmable,
)

ELTWISE_1 = "elementwise/step_1_single_node_single_tile_block.py"
ELTWISE_2 = "elementwise/step_2_single_node_multitile_block.py"
PIPE = "examples/ttlang/pipe_bcast_add.py"
PRIMARY = Probe(1, None, "fair", True)


@pytest.fixture(scope="module")
def diff(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Differential]:
    paths = S.available()
    if paths is None:
        pytest.skip("the TT-Lang simulator cannot run here: install verispatial[ttlang] or set VERISPATIAL_TTLANG_SIM")
    with S.Simulator(paths) as sim:
        yield Differential(sim, tmp_path_factory.mktemp("differential"), timeout=300)


def _pick(name: str, label: str) -> tuple[str, Mutant]:
    base = source_text(name, tutorials_dir())
    if label == "as shipped":
        return base, Mutant("as shipped", label, base)
    (m,) = [m for m in mutants(base) if m.label == label]
    return base, m


@pytest.mark.parametrize(("name", "label", "expected"), [
    (ELTWISE_1, "as shipped", "agree-proved"),
    (ELTWISE_1, "block_count 2->1 @62", "agree-proved"),  # a_dfb: one block at a time still flows
    (ELTWISE_1, "range - 1 @72", "agree-refuted"),  # compute's row loop short: the reader stops at a full buffer
    (ELTWISE_1, "range + 1 @93", "both-reject"),  # the reader reads past the tensor's last row
    (ELTWISE_1, "wait dropped @139", "sim-unsupported"),  # the writer's wait: 3.11 refuses it, certify proves
    (ELTWISE_1, "copy dropped @106", "both-reject"),  # a block pushed unfilled
    (PIPE, "as shipped", "agree-proved"),
    (PIPE, "pipe dst (slice(1, 4), 0): 4->3 @21", "certify-only"),  # node 3 gets no c: pushed unfilled
    (PIPE, "range - 1 @52", "agree-refuted"),
])
def test_certify_and_the_simulator_agree(diff: Differential, name: str, label: str, expected: str) -> None:
    _, m = _pick(name, label)
    v, run = diff.run(m.text, PRIMARY)
    kind = classify(v, run)
    assert kind == expected, (v, run)
    if kind == "sim-unsupported":
        # TT-Lang's compiler (and the simulator on 3.12+) waits right after a copy no wait uses: the same program
        assert v.code == 0


def test_a_writer_one_row_short_is_confirmed_at_a_larger_shape(diff: Differential) -> None:
    """Elementwise step 2's writer loop one short: at 256 (2x2 blocks) the two unwritten blocks fit the output
    buffer and the simulator runs clean; at 512 (4x4) compute stops at a full buffer and the simulator deadlocks, as
    certify says for every shape (the output rows are never written)."""
    base, m = _pick(ELTWISE_2, "range - 1 @135")
    v, run = diff.run(m.text, PRIMARY)
    assert (v.code, classify(v, run)) == (1, "certify-only")
    assert any(f.startswith("happens-before/output-unwritten") for f in v.findings)
    conf, _ = diff.confirm(ELTWISE_2, base, m)
    assert conf is not None
    assert (conf.probe.scale, conf.outcome, conf.certify) == (2, "deadlock", 1)
    assert not diff.disagreements


def test_a_loopback_pipe_sent_before_its_own_post_is_refuted_but_unconfirmable(diff: Differential) -> None:
    """The pipe's destinations widened to include its source, whose receive comes after its send in the same kernel:
    under TT-Lang's receiver-post protocol the send waits for the source's own post, which comes after it (certify:
    deadlock at the sender's ready wait). The simulator queues pipe data and never makes a sender wait, so no probe
    shows it; the benchmark says why from the counterexample's stuck op."""
    base, m = _pick(PIPE, "pipe dst (slice(1, 4), 0): 1->0 @21")
    v, run = diff.run(m.text, PRIMARY)
    assert classify(v, run) == "certify-only"
    conf, tried = diff.confirm(PIPE, base, m)
    assert conf is None
    assert len(tried) >= 5
    assert unconfirmable(v) == PIPE_READY


def test_a_node_outside_every_pipe_runs_nothing_in_the_simulator_too(diff: Differential, tmp_path: Path) -> None:
    """The five-node pipe_bcast_add whose fifth node reads its operand itself (tests/test_frontend_ttlang.py
    FIFTH_NODE): the simulator skips the kernels of a node no pipe names, as TT-Lang's compiler does, so that node's
    output tiles are never written (observed on the simulator's copies); certify refutes output-unwritten."""
    from test_frontend_ttlang import BCAST, FIFTH_NODE, _mutant

    text = _mutant(tmp_path, BCAST, *FIFTH_NODE).read_text()
    v, run = diff.run(text, PRIMARY)
    assert (v.code, classify(v, run)) == (1, "certify-only")
    assert all(f.startswith("happens-before/output-unwritten") for f in v.findings)
    ((rows, cols, n, first),) = run.unwritten
    assert (rows, cols, n, first) == (4, 10, 8, (0, 4))  # columns 4 and 9 of every tile row
    _, math = diff.run(text, Probe(1, None, "fair", False))
    assert (math.outcome, math.exception) == ("mismatch", "AssertionError")  # the file's own result check


def test_a_partial_tile_is_judged_at_the_simulators_padded_shape(diff: Differential) -> None:
    """The simulator pads tensors to whole tiles and reports the padded shape; ttnn keeps the logical one. Matmul step
    1 at M = 144: certify refutes the device's program (the tutorial's M // 32 leaves rows 128-143 unwritten) and
    proves the simulator's (M = 160), which runs clean: certify-only, unconfirmable, why said. The #1037 example with 80
    rows of x: proved at 80 (two row blocks), refuted at the simulator's 96 (a third block written past y), where the
    simulator stops on that write: both reject, no disagreement."""
    _, m = _pick("matmul/step_1_single_node_single_tile_block.py", "dim 0 128->144 (half a tile more) @185")
    v, run = diff.run(m.text, PRIMARY)
    assert (v.code, v.padded, classify(v, run)) == (1, 0, "certify-only")
    assert unconfirmable(v) == PARTIAL_TILE
    _, m = _pick("examples/ttlang/allgather_matmul_1037_fixed.py", "dim 0 64->80 (half a tile more) @91")
    v, run = diff.run(m.text, PRIMARY)
    assert (v.code, v.padded, run.outcome, classify(v, run)) == (0, 1, "error", "both-reject")
