"""The compiled validator's form of the program schema (``serialize.dispatch_trees``): the op dispatch, 25
conditionals on the ``op`` tag, as a tree of conditionals on halves of the tag set. It must accept exactly what the
shipped schema accepts: every op of the examples as it is and mutated (a field dropped or of the wrong type, its
tag swapped for every other tag, the tag missing or unknown, not an object) gets the same answer from both."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema_rs

from verispatial.ir import serialize as S

ROOT = Path(__file__).resolve().parent.parent


def _ops(x: Any) -> list[dict[str, Any]]:
    """Every op object of a program document, loop and if bodies included."""
    out: list[dict[str, Any]] = []
    if isinstance(x, dict):
        if isinstance(x.get("op"), str):
            out.append(x)
        for v in x.values():
            out += _ops(v)
    elif isinstance(x, list):
        for v in x:
            out += _ops(v)
    return out


def _mutants(op: dict[str, Any], tags: list[str]) -> list[Any]:
    out: list[Any] = [op, [op], "reserve", None, {k: v for k, v in op.items() if k != "op"}, {**op, "op": "nope"},
                      {**op, "op": 3}]
    out += [{**op, "op": t} for t in tags]
    for k in op:
        if k != "op":
            out.append({j: v for j, v in op.items() if j != k})
            out.append({**op, k: "x" if not isinstance(op[k], str) else 7})
    return out


def test_the_tree_replaces_the_op_dispatch_and_nothing_else() -> None:
    schema = S.schema()
    tree = S.dispatch_trees(schema)
    assert tree != schema
    assert schema == S.schema()
    op = tree["$defs"]["op"]
    assert len(op["allOf"]) == 1
    assert set(op["allOf"][0]) == {"if", "then", "else"}
    # Everything but the op dispatch is the shipped schema verbatim.
    assert {k: v for k, v in tree["$defs"].items() if k != "op"} == {
        k: v for k, v in schema["$defs"].items() if k != "op"}
    assert tree["allOf"] == schema["allOf"]  # one conditional on the version: no tree

    def leaves(node: dict[str, Any]) -> list[dict[str, Any]]:
        return leaves(node["then"]) + leaves(node["else"]) if "else" in node else [node]

    assert leaves(op["allOf"][0]) == schema["$defs"]["op"]["allOf"]  # every conditional once, verbatim, in order


def test_the_tree_accepts_exactly_what_the_schema_accepts() -> None:
    schema = S.schema()
    shipped, tree = jsonschema_rs.validator_for(schema), jsonschema_rs.validator_for(S.dispatch_trees(schema))
    op_schema = {"$schema": schema["$schema"], "$defs": copy.deepcopy(schema["$defs"]), "$ref": "#/$defs/op"}
    tags = schema["$defs"]["op"]["properties"]["op"]["enum"]
    one_op, one_op_tree = jsonschema_rs.validator_for(op_schema), jsonschema_rs.validator_for(
        S.dispatch_trees(op_schema))
    seen: set[str] = set()
    checked = accepted = 0
    for path in sorted(ROOT.glob("examples/*.json")):
        doc = json.loads(path.read_text())
        if doc.get("format") != "verispatial.program":
            continue
        assert shipped.is_valid(doc) == tree.is_valid(doc), path
        for op in _ops(doc):
            for m in _mutants(op, tags):
                text = json.dumps(m, sort_keys=True)
                if text in seen:
                    continue
                seen.add(text)
                want = one_op.is_valid(m)
                assert one_op_tree.is_valid(m) == want, text
                checked += 1
                accepted += want
    assert {o["op"] for p in ROOT.glob("examples/*.json") for o in _ops(json.loads(p.read_text()))} >= {
        "reserve", "push", "wait", "pop", "read_tiles", "write_tiles", "loop"}
    assert checked > 1000
    assert 0 < accepted < checked


def test_a_dispatch_that_is_not_one_property_on_distinct_constants_is_left_alone() -> None:
    branch = [{"if": {"properties": {"k": {"const": c}}}, "then": {"required": [c]}} for c in "abcd"]
    assert S.dispatch_trees({"allOf": branch})["allOf"] != branch
    for bad in ([*branch[:3], {"if": {"properties": {"j": {"const": "d"}}}, "then": {}}],  # two properties
                [*branch[:3], branch[0]],  # a constant twice
                [*branch[:3], {**branch[3], "else": {}}],  # an else
                branch[:3]):  # too few to gain
        assert S.dispatch_trees({"allOf": bad}) == {"allOf": bad}
