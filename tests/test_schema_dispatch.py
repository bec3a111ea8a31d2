"""The compiled validator's form of the program schema (``serialize.dispatch_trees``): the op dispatch, 25
conditionals on the ``op`` tag, as an ``anyOf`` of their op schemas (the op object requires its tag from exactly
those values, and each op schema requires its own), and a dispatch not closed so as a tree of conditionals on halves
of the tag set. Either must accept exactly what the shipped schema accepts: every op of the examples as it is and
mutated (a field dropped or of the wrong type, its tag swapped for every other tag, the tag missing or unknown, not
an object) gets the same answer from both."""

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


def test_the_op_dispatch_becomes_an_any_of_its_op_schemas_and_nothing_else_changes() -> None:
    schema = S.schema()
    rewritten = S.dispatch_trees(schema)
    assert rewritten != schema
    assert schema == S.schema()
    op = rewritten["$defs"]["op"]
    assert op["allOf"] == [{"anyOf": [b["then"] for b in schema["$defs"]["op"]["allOf"]]}]  # verbatim, in order
    # the tag's enum left to the alternatives, each of which requires its own tag
    assert "properties" not in op
    assert {k: v for k, v in op.items() if k != "allOf"} == {
        k: v for k, v in schema["$defs"]["op"].items() if k not in ("allOf", "properties")}
    # Everything but the op dispatch is the shipped schema verbatim.
    assert {k: v for k, v in rewritten["$defs"].items() if k != "op"} == {
        k: v for k, v in schema["$defs"].items() if k != "op"}
    assert rewritten["allOf"] == schema["allOf"]  # one conditional on the version: no rewrite


def _branches(then: Any = None) -> list[dict[str, Any]]:
    return [{"if": {"type": "object", "properties": {"k": {"const": c}}, "required": ["k"]},
             "then": {"properties": {"k": {"const": c}, c: {"type": "integer"}}, "required": ["k", c]}
             if then is None else then(c)} for c in "abcd"]


def _closed(branches: list[dict[str, Any]], drop: str = "", **over: Any) -> dict[str, Any]:
    """An object requiring ``k`` of one of ``abcd``, dispatched by ``branches``; ``drop``: a key left out."""
    node = {"type": "object", "properties": {"k": {"enum": list("abcd")}}, "required": ["k"], "allOf": branches}
    return {k: v for k, v in {**node, **over}.items() if k != drop}


def test_a_dispatch_is_an_any_of_only_where_the_node_and_each_branch_close_it() -> None:
    """The ``anyOf`` accepts what the ``allOf`` of conditionals accepts only where the node refuses every instance no
    ``if`` applies to (an object, the property required, its ``enum`` exactly the constants) and each ``then``
    refuses the other constants; any of these missing leaves the tree. Each opening comes with an instance the two
    forms would judge apart, where its node has one."""
    closed = _closed(_branches(), properties={"k": {"enum": list("abcd")}, "other": {"type": "integer"}})
    assert S.dispatch_trees(closed) == {**closed, "allOf": [{"anyOf": [b["then"] for b in _branches()]}],
                                        "properties": {"other": {"type": "integer"}}}
    via_ref = {"$defs": {c: {"properties": {"k": {"const": c}}, "required": ["k"]} for c in "abcd"},
               "allOf": [_closed(_branches(lambda c: {"$ref": f"#/$defs/{c}"}))]}
    assert "anyOf" in S.dispatch_trees(via_ref)["allOf"][0]["allOf"][0]
    opened = {
        "no type": (_closed(_branches(), drop="type"), None),  # these thens accept a non-object too: no instance
        "not required": (_closed(_branches(), drop="required"), {}),
        "an enum with one more value": (_closed(_branches(), properties={"k": {"enum": list("abcde")}}), {"k": "e"}),
        "an enum with no restriction": (_closed(_branches(), properties={}), {"k": "z"}),
        "a then not refusing other constants": (_closed(_branches(lambda c: {"required": ["k"]})), None),
        "a ref with siblings": ({"$defs": via_ref["$defs"], **_closed(_branches(
            lambda c: {"$ref": f"#/$defs/{c}", "required": ["k"]}))}, None),
        "a ref outside the document": (_closed(_branches(lambda c: {"$ref": f"other.json#/$defs/{c}"})), None),
        "an if testing more than the constant": (_closed([{**b, "if": {**b["if"], "minProperties": 2}}
                                                           for b in _branches()]), {"k": "a"}),
    }
    for what, (node, instance) in opened.items():
        got = S.dispatch_trees(node)["allOf"]
        assert len(got) == 1, what
        assert set(got[0]) == {"if", "then", "else"}, what
        if instance is not None and "$ref" not in json.dumps(node):
            shipped = jsonschema_rs.validator_for(node)
            as_any = jsonschema_rs.validator_for({**node, "allOf": [{"anyOf": [b["then"] for b in node["allOf"]]}]})
            tree = jsonschema_rs.validator_for(S.dispatch_trees(node))
            assert shipped.is_valid(instance) != as_any.is_valid(instance), what  # why the anyOf would be wrong
            assert tree.is_valid(instance) == shipped.is_valid(instance), what


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
