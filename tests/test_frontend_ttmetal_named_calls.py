"""Named calls and spellings the tt-metal front end reads as C++ does (issue 18's ranked refusals of the corpus):
each construct from a small kernel written here, its expected value C++'s."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from test_frontend_ttmetal_calls import _reserved


def test_comments_in_a_braced_initializer_are_no_elements(tmp_path: Path) -> None:
    """``return {/*nb=*/a, /*nq=*/b};`` (sdpa's q_chunk_remapping.hpp:83-87) initialises two fields; the reading once
    counted the comments as values (``initializer of GlobalQIndex with too many values``, 6 for 3)."""
    prelude = ("struct Pair { uint32_t a; uint32_t b; };",
               "Pair make(uint32_t x) { return { /*a=*/x + 1, /*b=*/x * 2, }; }")
    assert _reserved(tmp_path, "    const auto p = make(3);", "    cb_reserve_back(0, p.a);",
                     "    cb_reserve_back(0, p.b);", "    Pair q{/*a=*/1, /*b=*/2};", "    cb_reserve_back(0, q.b);",
                     prelude=prelude) == [4, 6, 2]
