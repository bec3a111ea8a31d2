"""Names inside the Promela model: a name is text the model quotes in comments, never code.

Found by trying them: a trip named ``t-1 ; assert(false)`` (a valid name: printable, under 256 characters) was
declared as ``int trip_t-1 ; assert(false);`` and used as such in every loop bound, and a program, buffer or tensor name
holding ``*/`` closed the comment the model quotes it in: SPIN refused both models with syntax errors, and a name
written for it could have put statements of its own into the model that cross-checks the checker. Now a trip is the
identifier ``trip_<index>`` (its name in a comment) and ``*/`` in a comment is written ``*\\/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verispatial.ir.serialize import loads
from verispatial.petri.promela import run_spin, spin_available, to_promela

EXAMPLES = Path(__file__).parent.parent / "examples"


def renamed(example: str, old: str, new: str) -> str:
    """The example's JSON with every string ``old`` (exactly) replaced by ``new``."""
    text = (EXAMPLES / example).read_text(encoding="utf-8")
    assert f'"{old}"' in text
    return text.replace(f'"{old}"', json.dumps(new))


TRIP = "t-1 ; assert(false)"


def test_a_trip_name_is_never_an_identifier_of_the_model() -> None:
    model = to_promela(loads(renamed("peeled_k_loop.json", "t", TRIP)))
    assert "int trip_0; /* t-1 ; assert(false) */" in model
    code = [line.split("/*")[0] for line in model.splitlines()]
    assert not any("assert(false)" in line for line in code)


def test_a_comment_is_never_closed_by_a_name() -> None:
    p = loads(renamed("pipeline_small.json", "pipeline_small", "prog*/ x").replace('"A"', '"A*/ y"'))
    model = to_promela(p)
    assert "prog*\\/ x" in model
    assert "A*\\/ y" in model
    for line in model.splitlines():
        # every comment opened on a line is closed once, at its end (the model's comments are one line or three)
        assert line.count("*/") <= 1


@pytest.mark.skipif(not spin_available(), reason="spin is not installed (apt-get install -y spin)")
@pytest.mark.parametrize(("example", "old", "new", "expect_ok"), [
    ("peeled_k_loop.json", "t", TRIP, True),
    ("pipeline_small.json", "pipeline_small", "prog*/ x", True),
    ("broken/b_ring_straddle.json", "b_ring_straddle", "p*/ bool x; /*", False),
])
def test_spin_reads_the_model_and_agrees(example: str, old: str, new: str, expect_ok: bool) -> None:
    sp = run_spin(to_promela(loads(renamed(example, old, new))), timeout=60)  # a model SPIN rejects raises
    assert sp.finished
    assert (sp.verdict == "ok") == expect_ok
