"""Op-list paths (``ir.ops.body_at`` / ``with_body``), which the program strategies, the protocol rewrites and the
mutation tester use to edit one op list of an engine program."""

from __future__ import annotations

import pytest

from verispatial.ir import Guard, If, Loop, Pop, Push, Reserve, Wait
from verispatial.ir.ops import body_at, with_body

OPS = (Reserve(0, 1), Loop("k", 2, (Push(0, 1), If("k", Guard.LAST, (Pop(0, 1),)))))


def test_body_at_walks_loop_and_if_bodies() -> None:
    assert body_at(OPS, ()) == OPS
    assert body_at(OPS, (1,)) == (Push(0, 1), If("k", Guard.LAST, (Pop(0, 1),)))
    assert body_at(OPS, (1, 1)) == (Pop(0, 1),)


def test_with_body_rebuilds_only_the_containers_on_the_path() -> None:
    got = with_body(OPS, (1, 1), (Wait(0, 1),))
    assert got == (Reserve(0, 1), Loop("k", 2, (Push(0, 1), If("k", Guard.LAST, (Wait(0, 1),)))))
    assert with_body(OPS, (), ()) == ()
    assert got[0] is OPS[0]


def test_a_path_into_an_op_without_a_body_raises() -> None:
    with pytest.raises(TypeError, match="Reserve"):
        body_at(OPS, (0,))
    with pytest.raises(TypeError, match="Reserve"):
        with_body(OPS, (0,), ())
    with pytest.raises(IndexError):
        body_at(OPS, (5,))
