"""The differential against the vendor's TT-Lang simulator (issue 17 item 5) on a few mutants of a tutorial: where
the simulator deadlocks certify refutes, where certify proves the simulator runs clean. Needs the optional extra
``verispatial[ttlang]`` (tt-lang-sim and a CPU torch) or ``$VERISPATIAL_TTLANG_SIM`` (paths where they are); skips
without them. The full run over the single-node tutorials' mutants is ``benchmarks/ttlang_differential.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import ttlang_sim as S
from test_frontend_ttlang import tutorials_dir
from ttlang_differential import mutants, shrink, verdict

ELTWISE_1 = "elementwise/step_1_single_node_single_tile_block.py"


@pytest.fixture(scope="module")
def sim_paths() -> list[str]:
    paths = S.available()
    if paths is None:
        pytest.skip("the TT-Lang simulator cannot run here: install verispatial[ttlang] or set VERISPATIAL_TTLANG_SIM")
    return paths


@pytest.mark.parametrize("label", ["as shipped", "block_count 2->1", "range - 1", "range + 1", "wait dropped"])
def test_certify_and_the_simulator_agree_on_deadlock(tmp_path: Path, sim_paths: list[str], label: str) -> None:
    base = shrink((tutorials_dir() / ELTWISE_1).read_text())
    cands = [("as shipped", base)] + [m for m in mutants(base) if m[0].startswith(label)]
    # the writer's wait (dropping one of the reader's three is harmless: one wait covers every copy before it)
    name, text = cands[0] if label == "as shipped" else cands[-1] if label == "wait dropped" else cands[1]
    f = tmp_path / "op.py"
    f.write_text(text)
    v = verdict(f)
    sim, _, msg = S.run(f, sim_paths, timeout=300, dry_run=True)
    assert sim != "timeout", (name, msg)
    if label == "wait dropped":
        # the simulator on Python 3.11 refuses a copy without its wait (it injects waits only on 3.12+); certify
        # refutes it: the block is published before its transfer landed
        assert v == 1, name
    if sim == "deadlock":
        assert v == 1, name  # the simulator's deadlock is refuted
    if v == 0:
        assert sim in ("ok", "mismatch"), name  # a proof runs clean
