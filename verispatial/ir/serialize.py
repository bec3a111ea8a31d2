"""Lossless, versioned JSON for programs (``verispatial.program`` v1).

``load_program`` checks the document against the shipped JSON Schema first (so a bad field is named by its
JSON path and the rule it breaks), then structures it with cattrs, then runs ``validate``.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import cattrs
import jsonschema

from verispatial.errors import InvalidProgram, ParseError
from verispatial.ir.core import Guard, Site
from verispatial.ir.ops import CONTAINERS, OP_TAGS, TAG_OPS, If, Loop, Op, PackAcc, TripCount
from verispatial.ir.program import FORMAT, VERSION, Program, Semaphore
from verispatial.ir.target import TARGETS, Target, get_target

# Tuples are written as JSON arrays (lists), so program_to_dict's output is plain JSON data that the schema
# validator accepts as is.
_conv = cattrs.Converter(forbid_extra_keys=True, unstruct_collection_overrides={tuple: list})
_conv.register_unstructure_hook(Site, lambda s: [s.x, s.y])
_conv.register_structure_hook(Site, lambda v, _t: Site(int(v[0]), int(v[1])))


def _unstructure_semaphore(s: Semaphore) -> dict[str, Any]:
    # host_init is written only when true: documents from before the field (and their certificates' program
    # digests) stay byte for byte what they were.
    d = {a.name: _conv.unstructure(getattr(s, a.name)) for a in attrs.fields(Semaphore)}
    if not s.host_init:
        del d["host_init"]
    return d


_conv.register_unstructure_hook(Semaphore, _unstructure_semaphore)


def _unstructure_op(op: Op) -> dict[str, Any]:
    d: dict[str, Any] = {"op": OP_TAGS[type(op)]}
    for a in attrs.fields(type(op)):
        v = getattr(op, a.name)
        if isinstance(op, CONTAINERS) and a.name == "body":
            d["body"] = [_unstructure_op(o) for o in v]
        elif isinstance(op, PackAcc) and a.name == "accumulate":
            # Written only when true: documents from before the field (and their certificates' program digests)
            # stay byte for byte what they were.
            if v:
                d["accumulate"] = True
        else:
            d[a.name] = _conv.unstructure(v)
    # Defaults are kept (the format is explicit so other tools need not know them), except pack_acc's accumulate.
    return d


def _structure_op(v: Any, _t: Any = None) -> Op:
    if not isinstance(v, dict) or "op" not in v:
        raise ValueError("an op is an object with an 'op' field")
    cls = TAG_OPS.get(v["op"])
    if cls is None:
        raise ValueError(f"unknown op {v['op']!r}")
    rest = {k: x for k, x in v.items() if k != "op"}
    if cls is Loop:
        body = tuple(_structure_op(o) for o in rest.get("body", []))
        count = rest["count"]
        # JSON Schema counts 8.0 as an integer; the IR wants the int.
        if isinstance(count, dict):
            count = _conv.structure(count, TripCount)
        elif isinstance(count, float):
            count = int(count)
        return Loop(var=rest["var"], count=count, body=body)
    if cls is If:
        return If(var=rest["var"], when=Guard(rest["when"]), body=tuple(_structure_op(o) for o in rest.get("body", [])))
    return _conv.structure(rest, cls)  # type: ignore[no-any-return]


_conv.register_unstructure_hook_func(lambda t: t is Op, _unstructure_op)
_conv.register_structure_hook_func(lambda t: t is Op, _structure_op)


def _target_to_json(t: Target) -> Any:
    if TARGETS.get(t.name) == t:
        return t.name
    return _conv.unstructure(t)


def program_to_dict(p: Program) -> dict[str, Any]:
    """The JSON object of ``p`` (a plain dict of lists, strings and ints)."""
    d: dict[str, Any] = {"format": FORMAT, "version": VERSION}
    for a in attrs.fields(Program):
        v = getattr(p, a.name)
        if a.name == "target":
            d["target"] = _target_to_json(v)
        elif a.name == "programs":
            d["programs"] = [
                {
                    "site": [ep.site.x, ep.site.y],
                    "engine": ep.engine.value,
                    "ops": [_unstructure_op(o) for o in ep.ops],
                    "section_starts": list(ep.section_starts),
                }
                for ep in v
            ]
        elif a.name == "resident" and not v:
            continue  # written only when some tensor is resident (older documents keep their bytes)
        else:
            d[a.name] = _conv.unstructure(v)
    return d


def dumps(p: Program) -> str:
    """``p`` as indented JSON text."""
    return json.dumps(program_to_dict(p), indent=1)


def schema() -> dict[str, Any]:
    """The JSON Schema of the program format, shipped as ``verispatial/ir/program.schema.json``."""
    text = resources.files("verispatial.ir").joinpath("program.schema.json").read_text()
    return json.loads(text)  # type: ignore[no-any-return]


def _json_path(path: Any) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(document)"


def check_schema(d: Any, schema_doc: dict[str, Any]) -> None:
    """``ParseError`` naming the JSON path and rule of the most relevant way ``d`` breaks ``schema_doc`` (or that
    ``d`` is not an object). Shared by every document format verispatial reads."""
    if not isinstance(d, dict):
        raise ParseError("(document)", f"expected a JSON object, got {type(d).__name__}")
    err = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema_doc).iter_errors(d))
    if err is not None:
        raise ParseError(_json_path(err.absolute_path), err.message)


def program_from_dict(d: Any) -> Program:
    """Build a ``Program`` from its JSON object; ``ParseError`` names the first bad field and its rule."""
    if not isinstance(d, dict):
        raise ParseError("(document)", f"expected a JSON object, got {type(d).__name__}")
    if d.get("format") != FORMAT:
        raise ParseError("format", f"expected {FORMAT!r}, got {d.get('format')!r}")
    if d.get("version") != VERSION:
        raise ParseError("version", f"this verispatial reads version {VERSION}, got {d.get('version')!r}")
    check_schema(d, schema())
    body = {k: v for k, v in d.items() if k not in ("format", "version")}
    tgt = body.pop("target")
    target = get_target(tgt) if isinstance(tgt, str) else _structure(tgt, Target, "target")
    return attrs.evolve(_structure(body | {"target": _conv.unstructure(target)}, Program, ""), target=target)


def _structure(v: Any, cls: type, where: str) -> Any:
    try:
        return _conv.structure(v, cls)
    except Exception as e:  # cattrs raises nested groups; flatten to the first leaf with its path
        msgs = cattrs.transform_error(e, path=where or "$") if isinstance(e, cattrs.BaseValidationError) else [str(e)]
        raise ParseError("", msgs[0]) from None


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """JSON readers disagree on which of two equal keys wins; a certified program must mean one thing."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def parse_json(text: str | bytes) -> Any:
    """JSON text as Python values; ``ParseError`` (field ``(document)``) for text that is not UTF-8, not JSON, or
    has one key twice in an object. Shared by every document verispatial reads (programs, graphs, certificates)."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except UnicodeDecodeError:
        raise ParseError("(document)", "not UTF-8 text (a binary file?)") from None
    except json.JSONDecodeError as e:
        raise ParseError("(document)", f"not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except _DuplicateKey as e:
        raise ParseError("(document)", f"key {e.args[0]!r} appears twice in one object (readers disagree on which "
                                       "wins)") from None


def read_document(path: str | Path, expected: str) -> bytes:
    """The bytes of the file at ``path``; ``ParseError`` (field: the path) when it is missing, a directory or
    empty. ``expected`` names what it should be, e.g. ``"a program.json file"``."""
    p = Path(path)
    if not p.exists():
        raise ParseError(str(path), "no such file")
    if p.is_dir():
        raise ParseError(str(path), f"is a directory, expected {expected}")
    data = p.read_bytes()
    if not data.strip():
        raise ParseError(str(path), "the file is empty")
    return data


def loads(text: str | bytes) -> Program:
    """Parse program JSON text and validate it; raises ``ParseError`` or ``InvalidProgram``."""
    p = program_from_dict(parse_json(text))
    from verispatial.ir.validate import validate

    violations = validate(p)
    if violations:
        raise InvalidProgram(violations)
    return p


def load_program(path: str | Path) -> Program:
    """Read and validate ``path``; ``ParseError`` for a missing, unreadable or malformed file."""
    return loads(read_document(path, "a program.json file"))
