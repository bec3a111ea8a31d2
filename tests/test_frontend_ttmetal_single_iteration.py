"""A counted loop of one iteration (a host's count of 1: ``batch``, ``num_blocks`` of matmul's 2D-multicast compute
kernel) is read once, its index at its one value, and kept as a ``Loop`` of count 1 around the iteration's ops. It
was read with its index a symbol first (two to four readings of the body, each reading every nested loop again),
refused where a page id or branch needed the index's value, and read once more iteration by iteration: four nested
loops of count 1 read the innermost body hundreds of times (matmul_2d_mcast's import, 7 s of its 7.2 s)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.test_frontend_ttmetal import _snippet
from verispatial.frontends.ttmetal.lower import KernelReader
from verispatial.ir.ops import Loop, Reserve
from verispatial.ir.program import walk

NESTED = [
    "    for (uint32_t a = 0; a < 1; a++) {",
    "        for (uint32_t b = 0; b < 1; b++) {",
    "            for (uint32_t c = 0; c < 1; c++) {",
    "                for (uint32_t d = 0; d < 1; d++) {",
    "                    if ((a + b + c + d) % 2 == 0) {",  # a branch on i % 2: not read with the index a symbol
    "                        cb_reserve_back(0, 1);",
    "                    } else {",
    "                        cb_reserve_back(0, 2);",
    "                    }",
    "                }",
    "            }",
    "        }",
    "    }",
]


def _readings(monkeypatch: pytest.MonkeyPatch, marker: bytes) -> list[int]:
    """A counter of the statements read whose text starts with ``marker`` (the kernel reader's ``stmt``)."""
    count = [0]
    stmt = KernelReader.stmt

    def counting(self: KernelReader, n: Any) -> None:
        if n.text.startswith(marker):
            count[0] += 1
        stmt(self, n)

    monkeypatch.setattr(KernelReader, "stmt", counting)
    return count


def test_nested_loops_of_one_iteration_are_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bodies that name their indices: each loop's ops given to the block around it, every index at its one value
    (0: the even side), as the reading iteration by iteration gave them."""
    readings = _readings(monkeypatch, b"if ((a + b + c + d)")
    ep = _snippet(tmp_path, NESTED)
    assert readings[0] == 1  # 81 on the reading that tried the index as a symbol first at every level
    assert list(ep.ops) == [Reserve(0, 1)]
    assert ep.source_of((0,)).line == 8


def test_a_loop_whose_body_does_not_name_its_index_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``for (b < batch)`` at a batch of 1 around loops that need their own index: the outer loop stays a ``Loop`` of
    count 1 at its file:line (as the reading with the index a symbol kept it), the inner ones read flat."""
    readings = _readings(monkeypatch, b"if ((c + d)")
    ep = _snippet(tmp_path, ["    for (uint32_t e = 0; e < 1; e++) {",
                             *[line.replace("(a + b + c + d)", "(c + d)") for line in NESTED], "    }"])
    assert readings[0] == 1
    (outer,) = ep.ops
    assert isinstance(outer, Loop)
    assert (outer.count, len(outer.body)) == (1, 1)
    inner = outer.body[0]
    assert isinstance(inner, Loop)  # ``a``'s loop (its body names no ``a`` now), b's inside it likewise
    assert ep.source_of((0,)).line == 3
    assert [op for op in walk(ep.ops) if isinstance(op, Reserve)] == [Reserve(0, 1)]
    assert ep.source_of((0, 0)).line == 4


def test_the_one_value_is_the_start(tmp_path: Path) -> None:
    """``for (i = 3; i < 4; ++i)``: the ops see i = 3."""
    ep = _snippet(tmp_path, ["    for (uint32_t i = 3; i < 4; ++i) {", "        cb_reserve_back(0, i);", "    }"])
    assert list(ep.ops) == [Reserve(0, 3)]
    kept = _snippet(tmp_path, ["    for (uint32_t i = 3; i < 4; ++i) {", "        cb_reserve_back(0, 2);", "    }"])
    (loop,) = kept.ops
    assert isinstance(loop, Loop)
    index = kept.source_of((0,)).index  # the loop's location tells the C++ index's start
    assert index is not None
    assert index.const == 3


def test_an_iteration_that_moves_its_index_back_is_read_as_it_runs(tmp_path: Path) -> None:
    """A body that sets its index back runs the loop again: read iteration by iteration, as before (two reserves)."""
    ep = _snippet(tmp_path, ["    uint32_t n = 0;", "    for (int i = 0; i < 1; i++) {", "        cb_reserve_back(0, 1);",
                             "        n++;", "        if (n < 2) { i--; }", "    }"])
    assert [type(op).__name__ for op in ep.ops] == ["Reserve", "Reserve"]


def test_break_ends_the_one_iteration(tmp_path: Path) -> None:
    ep = _snippet(tmp_path, ["    for (uint32_t i = 0; i < 1; i++) {", "        cb_reserve_back(0, 1);", "        break;",
                             "        cb_reserve_back(0, 2);", "    }"])
    (loop,) = ep.ops
    assert isinstance(loop, Loop)
    assert loop.body == (Reserve(0, 1),)
