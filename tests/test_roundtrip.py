"""ROUND TRIP: every random program survives JSON exactly (``verispatial.ir.serialize``)."""

from __future__ import annotations

import json

from hypothesis import given, settings

from verispatial.ir.program import Program
from verispatial.ir.serialize import dumps, loads
from verispatial.ir.validate import validate
from verispatial.strategies import programs


@settings(max_examples=max(50, settings().max_examples // 4))
@given(programs())
def test_loads_dumps_is_identity(p: Program) -> None:
    text = dumps(p)
    back = loads(text)
    assert back == p
    assert dumps(back) == text
    assert validate(back) == []


@settings(max_examples=max(50, settings().max_examples // 4))
@given(programs())
def test_dumps_is_plain_versioned_json(p: Program) -> None:
    d = json.loads(dumps(p))
    assert (d["format"], d["version"]) == ("verispatial.program", 2)
    assert d["target"] == p.target.name  # built-in targets are written by name
    assert [len(ep["ops"]) for ep in d["programs"]] == [len(ep.ops) for ep in p.programs]
