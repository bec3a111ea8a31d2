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


def test_nested_loops_of_one_iteration_are_read_once_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readings = _readings(monkeypatch, b"if ((a + b + c + d)")
    ep = _snippet(tmp_path, NESTED)
    assert readings[0] == 1  # 81 on the reading that tried the index as a symbol first at every level
    op, lines = ep.ops[0], [3]
    for depth in range(3):
        assert isinstance(op, Loop), op
        assert (op.count, len(op.body)) == (1, 1), op
        op = op.body[0]
        lines.append(4 + depth)
    assert isinstance(op, Loop)
    assert op.count == 1
    assert op.body == (Reserve(0, 1),)  # the even side: every index at its one value, 0
    assert [ep.source_of(p).line for p in [(0,), (0, 0), (0, 0, 0), (0, 0, 0, 0)]] == lines
    assert ep.source_of((0, 0, 0, 0, 0)).line == 8


def test_the_one_value_is_the_start(tmp_path: Path) -> None:
    """``for (i = 3; i < 4; ++i)``: the ops see i = 3; the loop's location tells the C++ index's start."""
    ep = _snippet(tmp_path, ["    for (uint32_t i = 3; i < 4; ++i) {", "        cb_reserve_back(0, i);", "    }"])
    (loop,) = ep.ops
    assert isinstance(loop, Loop)
    assert (loop.count, loop.body) == (1, (Reserve(0, 3),))
    index = ep.source_of((0,)).index
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
