"""Lossless, versioned JSON for programs (``verispatial.program`` versions 2 and 3).

``load_program`` checks the document against the shipped JSON Schema first (so a bad field is named by its
JSON path and the rule it breaks), then structures it with cattrs, then runs ``validate``. A version-3 document
stores a composed program as its templates and their instances (``ir/templated.py``): ``load_document`` reads it as
a ``TemplatedProgram`` (validated by ``validate_templated``, never expanded), ``load_program`` as the ``Program`` it
stands for. Every other document is written as version 2, byte for byte as before.
"""

from __future__ import annotations

import enum
import functools
import gc
import json
import types
import typing
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import attrs
import cattrs
import jsonschema_rs

from verispatial.errors import InvalidProgram, IrViolation, ParseError
from verispatial.ir.core import SITES_BY_XY, Dynamic, Engine, Guard, Site, site_at
from verispatial.ir.fastjson import fast_parse as _fast_parse
from verispatial.ir.limits import DOCUMENT_MAX_BYTES, QUOTE_MAX, clip
from verispatial.ir.ops import (
    CONTAINERS,
    OP_TAGS,
    TAG_OPS,
    Compute,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Op,
    PackAcc,
    Part,
    ReadTiles,
    SemSet,
    TripCount,
    WriteTiles,
)
from verispatial.ir.program import FORMAT, VERSION, Buffer, EngineProgram, Program, Semaphore, Tensor
from verispatial.ir.source import LoopIndex, SourceLoc, Sources
from verispatial.ir.target import TARGETS, Target, get_target
from verispatial.ir.templated import TEMPLATED_VERSION, Instance, TemplatedProgram
from verispatial.regular_file import regular_stat

#: The program format versions this verispatial reads.
READ_VERSIONS = (VERSION, TEMPLATED_VERSION)
#: A document or the program read from one: the full program, or a composed one as templates and instances.
Document = Program | TemplatedProgram

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


def _unstructure_buffer(b: Buffer) -> dict[str, Any]:
    # persistent and scratch are written only when true and shard only when set, as host_init above.
    d = {a.name: _conv.unstructure(getattr(b, a.name)) for a in attrs.fields(Buffer)}
    if not b.persistent:
        del d["persistent"]
    if b.shard is None:
        del d["shard"]
    if not b.scratch:
        del d["scratch"]
    return d


_conv.register_unstructure_hook(Buffer, _unstructure_buffer)


def _unstructure_tensor(t: Tensor) -> dict[str, Any]:
    # trip_rows is written only when set, as host_init above.
    d = {a.name: _conv.unstructure(getattr(t, a.name)) for a in attrs.fields(Tensor)}
    if t.trip_rows is None:
        del d["trip_rows"]
    return d


_conv.register_unstructure_hook(Tensor, _unstructure_tensor)


def _unstructure_dynamic(x: Dynamic) -> dict[str, Any]:
    # buf is written only when named: documents from before the field (and their certificates' program digests)
    # stay byte for byte what they were.
    d = {a.name: _conv.unstructure(getattr(x, a.name)) for a in attrs.fields(Dynamic)}
    if x.buf is None:
        del d["buf"]
    return d


_conv.register_unstructure_hook(Dynamic, _unstructure_dynamic)


def _unstructure_part(x: Part) -> dict[str, Any]:
    # terms are written only when the offset grows with a loop.
    d = {a.name: _conv.unstructure(getattr(x, a.name)) for a in attrs.fields(Part)}
    if not x.terms:
        del d["terms"]
    return d


_conv.register_unstructure_hook(Part, _unstructure_part)


def _unstructure_op(op: Op) -> dict[str, Any]:
    d: dict[str, Any] = {"op": OP_TAGS[type(op)]}
    for a in attrs.fields(type(op)):
        v = getattr(op, a.name)
        if isinstance(op, CONTAINERS) and a.name == "body":
            d["body"] = [_unstructure_op(o) for o in v]
        elif isinstance(op, (McastSend, McastSetValid)) and a.name == "vc":
            # Written only when named: a write on the default channel (every document from before the field, and its
            # certificate's program digest) keeps its bytes.
            if v is not None:
                d["vc"] = v
        elif isinstance(op, PackAcc) and a.name == "accumulate":
            # Written only when true: documents from before the field (and their certificates' program digests)
            # stay byte for byte what they were.
            if v:
                d["accumulate"] = True
        elif isinstance(op, McastSend) and a.name in ("dst", "offset", "behind"):
            # Written only when set: documents from before the fields (and their certificates' program digests) stay
            # byte for byte what they were. ``dst`` is a buffer id, and buffer 0 is set.
            if v if a.name != "dst" else v is not None:
                d[a.name] = v
        elif isinstance(op, (ReadTiles, WriteTiles)) and a.name == "part":
            # Written only when set: whole-tile transfers (and their certificates' program digests) keep their bytes.
            if v is not None:
                d["part"] = _conv.unstructure(v)
        elif isinstance(op, Compute) and a.name == "in_place":
            # Written only when the step reads pages in place: documents from before the field keep their bytes.
            if v:
                d["in_place"] = _conv.unstructure(v)
        elif isinstance(op, SemSet) and a.name == "terms":
            # Written only when the value depends on loop indices: documents from before the field keep their bytes.
            if v:
                d["terms"] = _conv.unstructure(v)
        else:
            d[a.name] = _conv.unstructure(v)
    # Defaults are kept (the format is explicit so other tools need not know them), except pack_acc's accumulate,
    # mcast_send's dst, offset and behind, a write's vc
    # (and a semaphore's host_init, a dynamic address part's buf).
    return d


def _int(v: Any) -> int:
    # JSON Schema counts 8.0 as an integer; the IR wants the int (as cattrs' int(v) gave it).
    return v if type(v) is int else int(v)


def _site(v: Any) -> Site:
    # 8.0 finds the site of 8 (equal numbers hash alike): no int() call on a hit
    got = SITES_BY_XY.get((v[0], v[1]))
    return got if got is not None else site_at(int(v[0]), int(v[1]))  # int() of 8.0 (a JSON Schema integer): 8


def _member(v: Any, members: dict[Any, Any], cls: Any) -> Any:
    got = members.get(v) if isinstance(v, str) else None
    return got if got is not None else cls(v)


def _field_code(tp: Any, v: str, env: dict[str, Any]) -> str:
    """Python source turning the JSON value ``v`` (an expression) into a field of type ``tp``; the schema has already
    checked the value's JSON type. Raises NotImplementedError for a type it has no rule for."""
    if tp is int:
        # An int as it is, 8.0 (a JSON Schema integer) as 8, as ``_int`` does: an int is taken without the call (most
        # fields of most ops are ints, and a call of ``int`` costs more than the test); an array's items by ``map``.
        return "int(x)" if v == "x" else f"(_v if type(_v := {v}) is int else int(_v))"
    if tp in (str, bool):
        return v
    if tp is Site:
        # the shared site of the coordinates looked up in place (``_site`` without its call: a site per engine
        # program, semaphore and remote op); ``_site`` makes one not met yet (and takes an array by ``map``)
        return "_site(x)" if v == "x" else f"(_s if (_s := _sites_get(((_w := {v})[0], _w[1]))) is not None else _site(_w))"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        # A member by its value from the enum's own table (a dict hit, not ``Enum.__call__``, and in place, not by
        # ``_member``'s call); a value not there goes through the call, which raises as before.
        env[tp.__name__] = tp
        members = f"_members_{tp.__name__}"
        env[members] = tp._value2member_map_
        if v == "x":
            return f"_member(x, {members}, {tp.__name__})"
        return f"({members}[_e] if type(_e := {v}) is str and _e in {members} else _member(_e, {members}, {tp.__name__}))"
    if isinstance(tp, type) and attrs.has(tp):
        env[f"_build_{tp.__name__}"] = _builder(tp)
        return f"_build_{tp.__name__}({v})"
    args = typing.get_args(tp)
    if typing.get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis:
        return _tuple_code(_field_code(args[0], "x", env), v)
    if typing.get_origin(tp) is tuple and args and all(a is int for a in args):  # a fixed tuple of ints (a rectangle)
        return f"tuple(map(int, {v}))"
    if len(args) == 2 and type(None) in args and typing.get_origin(tp) in (typing.Union, types.UnionType):
        inner = next(a for a in args if a is not type(None))
        return f"(None if {v} is None else {_field_code(inner, v, env)})"
    raise NotImplementedError(f"no structuring rule for {tp!r}")


def _tuple_code(item: str, v: str) -> str:
    """Python source of the tuple of ``item`` (an expression in ``x``) over the JSON array ``v``: by ``map`` where
    ``item`` is one call of ``x`` (no comprehension frame: most arrays here hold none or a few items), and an empty
    array as the empty tuple without building one (most ops' terms, most programs' groups and trips)."""
    if v == "x":  # an array of arrays: the inner one as it is
        return _tuple_of(item, "x")
    return f"({_tuple_of(item, '_t')} if (_t := {v}) else ())"


def _tuple_of(item: str, v: str) -> str:
    if item == "x":
        return f"tuple({v})"
    if item.endswith("(x)") and item[:-3].isidentifier():
        return f"tuple(map({item[:-3]}, {v}))"
    return f"tuple([{item} for x in {v}])"


def _builder(cls: type) -> Callable[[dict[str, Any]], Any]:
    """A constructor of ``cls`` from its JSON object, field by field (generated once per class): what cattrs would
    build for a document the schema accepted, without its generic dispatch. A missing field takes its default.

    A class whose attrs ``__init__`` only stores its arguments (``_stores_only``) is built without calling it: the
    instance is made by ``object.__new__`` and each field stored through its slot, in the builder's own frame (the
    ``__init__`` call and its bound ``object.__setattr__`` per field were a seventh of structuring the 16-layer
    decode step, benchmarks/bench_load.py). The object is the one ``__init__`` builds: equal, same hash."""
    attrs.resolve_types(cls)
    env: dict[str, Any] = {"_int": _int, "_site": _site, "_sites_get": SITES_BY_XY.get, "_member": _member,
                           cls.__name__: cls, "_new": object.__new__}
    args = []
    for f in attrs.fields(cls):
        code = _field_code(f.type, f"d[{f.name!r}]", env)
        if f.default is attrs.NOTHING:
            args.append(code)
        else:
            default = f.default.factory() if isinstance(f.default, attrs.Factory) else f.default  # type: ignore[arg-type]
            env[f"_default_{f.name}"] = default
            args.append(f"({code} if {f.name!r} in d else _default_{f.name})")
    if _stores_only(cls):
        stores = []
        for f, code in zip(attrs.fields(cls), args, strict=True):
            env[f"_set_{f.name}"] = cls.__dict__[f.name].__set__  # the slot's own setter
            inner = f.type
            if f.default is attrs.NOTHING and inner is not Site and isinstance(inner, type) and attrs.has(inner) \
                    and _stores_only(inner):  # (a site is an array, read by ``_field_code``'s own rule)
                # a field holding an object of its own (a transfer's address): built in this frame, not by a call
                # of its builder (a frame per op)
                stores.append(_inline_stores(inner, f"d[{f.name!r}]", f"_o_{f.name}", env))
                code = f"_o_{f.name}"
            stores.append(f"    _set_{f.name}(o, {code})\n")
        src = f"def build(d):\n    o = _new({cls.__name__})\n{''.join(stores)}    return o\n"
    else:
        src = f"def build(d):\n    return {cls.__name__}({', '.join(args)})\n"
    exec(src, env)  # generated from the class's own fields, no outside text
    return env["build"]  # type: ignore[no-any-return]


def _inline_stores(cls: type, v: str, name: str, env: dict[str, Any]) -> str:
    """Statements of a generated builder making ``name``, the ``cls`` (a ``_stores_only`` class) of the JSON object
    ``v``, as its own builder (``_builder``) makes it: each field stored through its slot, a missing one its default.
    Each field's code reads the object as ``_in<name>``."""
    attrs.resolve_types(cls)
    obj = f"_in{name}"
    env[cls.__name__] = cls
    lines = [f"    {obj} = {v}\n", f"    {name} = _new({cls.__name__})\n"]
    for f in attrs.fields(cls):
        code = _field_code(f.type, f"{obj}[{f.name!r}]", env)
        if f.default is not attrs.NOTHING:
            default = f.default.factory() if isinstance(f.default, attrs.Factory) else f.default  # type: ignore[arg-type]
            env[f"_default_{cls.__name__}_{f.name}"] = default
            code = f"({code} if {f.name!r} in {obj} else _default_{cls.__name__}_{f.name})"
        env[f"_set_{cls.__name__}_{f.name}"] = cls.__dict__[f.name].__set__
        lines.append(f"    _set_{cls.__name__}_{f.name}({name}, {code})\n")
    return "".join(lines)


def _stores_only(cls: type) -> bool:
    """Whether the attrs class ``cls``'s ``__init__`` does nothing but store each argument in its slot: generated by
    attrs, every field a slot of ``cls`` itself, no validator, converter or ``on_setattr`` hook, no
    ``__attrs_pre_init__`` or ``__attrs_post_init__``. (Every IR value class is; a class that grows a hook is built by
    its ``__init__`` again, tests/test_loader.py.)"""
    init = cls.__dict__.get("__init__")
    if not (getattr(init, "__doc__", None) or "").startswith("Method generated by attrs"):
        return False
    if hasattr(cls, "__attrs_pre_init__") or hasattr(cls, "__attrs_post_init__"):
        return False
    slots = cls.__dict__.get("__slots__", ())
    return all(f.name in slots and f.validator is None and f.converter is None and f.on_setattr is None
               for f in attrs.fields(cls))


def _op_builders() -> dict[str, Callable[[dict[str, Any]], Op]]:
    """Per op tag, its direct constructor (``_builder``), or cattrs' structuring where no rule applies."""
    out: dict[str, Callable[[dict[str, Any]], Op]] = {}
    for cls, tag in OP_TAGS.items():
        if cls in CONTAINERS:
            continue
        try:
            out[tag] = _builder(cls)
        except NotImplementedError:
            out[tag] = functools.partial(_by_cattrs, cls)
    return out


def _by_cattrs(cls: type, v: dict[str, Any]) -> Op:
    return _conv.structure({k: x for k, x in v.items() if k != "op"}, cls)  # type: ignore[no-any-return]


_OP_BUILDERS = _op_builders()


def _structure_op(v: Any, _t: Any = None) -> Op:
    if not isinstance(v, dict) or "op" not in v:
        raise ValueError("an op is an object with an 'op' field")
    tag = v["op"]
    build = _OP_BUILDERS.get(tag)
    if build is not None:
        return build(v)
    cls = TAG_OPS.get(tag)
    if cls is None:
        raise ValueError(f"unknown op {tag!r}")
    if cls is Loop:
        return _loop_op(v)
    if cls is If:
        return _MAKE_IF(v["var"], _member(v["when"], Guard._value2member_map_, Guard), _ops(v.get("body", [])))
    return _conv.structure({k: x for k, x in v.items() if k != "op"}, cls)  # type: ignore[no-any-return]


def _loop_op(v: dict[str, Any]) -> Loop:
    """The ``Loop`` of a loop object (its count an int, a trip's name or a ``TripCount``; 8.0 read as 8)."""
    count = v["count"]
    if type(count) is not int:
        if isinstance(count, dict):
            count = _BUILD_TRIP_COUNT(count)
        elif isinstance(count, float):
            count = int(count)
    return _MAKE_LOOP(v["var"], count, _ops(v.get("body", [])))


def _ops(vs: list[Any]) -> tuple[Op, ...]:
    """``_structure_op`` of each of ``vs``, a leaf op or a loop built by its tag's constructor directly (one call per
    op, not two: thousands of ops per load)."""
    builders = _OPS_BUILDERS
    try:  # every op's tag has a constructor (the common case): one list comprehension
        return tuple([builders[v["op"]](v) for v in vs])
    except (KeyError, TypeError):  # an if, or not an op object: op by op, the general way says which
        pass
    out: list[Op] = []
    append = out.append
    for v in vs:
        try:
            build = builders[v["op"]]
        except (KeyError, TypeError):  # a container (loop, if), or not an op object: the general way says which
            append(_structure_op(v))
        else:
            append(build(v))
    return tuple(out)


#: ``_ops``'s constructors by tag: every leaf op's and the loop's (an ``if`` takes the general way).
_OPS_BUILDERS: dict[str, Callable[[dict[str, Any]], Op]] = {**_OP_BUILDERS, OP_TAGS[Loop]: _loop_op}

_conv.register_unstructure_hook_func(lambda t: t is Op, _unstructure_op)
_conv.register_structure_hook_func(lambda t: t is Op, _structure_op)


def _target_to_json(t: Target) -> Any:
    if TARGETS.get(t.name) == t:
        return t.name
    return _conv.unstructure(t)


def _unstructure_engine_program(ep: EngineProgram) -> dict[str, Any]:
    d: dict[str, Any] = {
        "site": [ep.site.x, ep.site.y],
        "engine": ep.engine.value,
        "ops": [_unstructure_op(o) for o in ep.ops],
        "section_starts": list(ep.section_starts),
    }
    if ep.sources:  # written only when a front end recorded them (other documents keep their bytes)
        d["sources"] = [{"path": list(path), **_unstructure_loc(loc)} for path, loc in ep.sources]
    return d


def _unstructure_loc(loc: SourceLoc) -> dict[str, Any]:
    """A source location's fields; ``called_at`` only when there is one (other documents keep their bytes)."""
    d: dict[str, Any] = {"file": loc.file, "line": loc.line, "column": loc.column, "text": loc.text}
    if loc.called_at is not None:
        d["called_at"] = _unstructure_loc(loc.called_at)
    if loc.index is not None:
        x = loc.index
        d["index"] = {"name": x.name, "step": x.step, "const": x.const,
                      **({"loops": [list(t) for t in x.loops]} if x.loops else {}),
                      **({"trip": list(x.trip)} if x.trip is not None else {})}
    return d


def _structure_loc(e: Any) -> SourceLoc:
    """The ``SourceLoc`` of a location object the schema accepted: its strings taken as they are and its ints without
    an ``int`` call (8.0, a JSON Schema integer, still read as 8), built through its slots (``_positional``): a
    front end records one per op, and the calls were half of structuring a vendor kernel's program."""
    x = e.get("index")
    line, column = e["line"], e.get("column", 0)
    called = e.get("called_at")  # an object when present (the schema)
    return _MAKE_SOURCE_LOC(e["file"], line if type(line) is int else int(line),
                            column if type(column) is int else int(column), e.get("text", ""),
                            None if called is None else _structure_loc(called),
                            None if x is None else _loop_index(x))


def _loop_index(x: dict[str, Any]) -> LoopIndex:
    return LoopIndex(str(x["name"]), int(x["step"]), int(x.get("const", 0)),
                     tuple((str(v), int(c)) for v, c in x.get("loops", [])),
                     (str(x["trip"][0]), int(x["trip"][1])) if "trip" in x else None)


def _structure_sources(v: Any, _t: Any = None) -> Sources:
    """An engine program's source table from its array the schema accepted: each path's ints as they are unless one
    is not an int (8.0 read as 8: the sum of ints is an int), each location by ``_structure_loc``."""
    return tuple([(tuple(path) if type(sum(path := e["path"])) is int else tuple(map(int, path)), _structure_loc(e))
                  for e in v])


_conv.register_structure_hook_func(lambda t: t == Sources, _structure_sources)


def program_to_dict(p: Document) -> dict[str, Any]:
    """The JSON object of ``p`` (a plain dict of lists, strings and ints): version 2 for a ``Program``, version 3 for
    a ``TemplatedProgram``."""
    if isinstance(p, TemplatedProgram):
        return _templated_to_dict(p)
    d: dict[str, Any] = {"format": FORMAT, "version": VERSION}
    for a in attrs.fields(Program):
        v = getattr(p, a.name)
        if a.name == "target":
            d["target"] = _target_to_json(v)
        elif a.name == "programs":
            d["programs"] = [_unstructure_engine_program(ep) for ep in v]
        elif a.name == "resident" and not v:
            continue  # written only when some tensor is resident (older documents keep their bytes)
        else:
            d[a.name] = _conv.unstructure(v)
    return d


def _template_to_dict(t: Program) -> dict[str, Any]:
    return {"name": t.name, "tensors": _conv.unstructure(t.tensors), "buffers": _conv.unstructure(t.buffers),
            "semaphores": _conv.unstructure(t.semaphores), "groups": _conv.unstructure(t.groups),
            "trips": _conv.unstructure(t.trips), "programs": [_unstructure_engine_program(ep) for ep in t.programs],
            "memory": _conv.unstructure(t.memory)}


def _templated_to_dict(p: TemplatedProgram) -> dict[str, Any]:
    d: dict[str, Any] = {"format": FORMAT, "version": TEMPLATED_VERSION, "name": p.name,
                         "target": _target_to_json(p.target), "tensors": _conv.unstructure(p.tensors),
                         "trips": _conv.unstructure(p.trips),
                         "templates": [_template_to_dict(t) for t in p.templates],
                         "sections": [{"name": i.name, "barrier_after": i.barrier_after, "template": i.template,
                                       "tensors": list(i.tensors), **({"trips": list(i.trips)} if i.trips else {})}
                                      for i in p.instances]}
    if p.resident:
        d["resident"] = _conv.unstructure(p.resident)
    return d


def dumps(p: Document) -> str:
    """``p`` as indented JSON text."""
    return json.dumps(program_to_dict(p), indent=1)


@functools.cache
def _schema_text() -> str:
    return resources.files("verispatial.ir").joinpath("program.schema.json").read_text()


def schema() -> dict[str, Any]:
    """The JSON Schema of the program format, shipped as ``verispatial/ir/program.schema.json`` (a fresh copy)."""
    return json.loads(_schema_text())  # type: ignore[no-any-return]


def _json_path(path: Any) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(document)"


#: Compiled validators (jsonschema-rs, Rust) by schema text: compiled once per schema and process.
_COMPILED: dict[str, Any] = {}


def _compiled(text: str, schema_doc: dict[str, Any]) -> Any:
    v = _COMPILED.get(text)
    if v is None:
        v = _COMPILED[text] = jsonschema_rs.validator_for(dispatch_trees(schema_doc))
    return v


#: A discriminated ``allOf`` of at least this many conditionals is rewritten as a tree (``dispatch_trees``).
_DISPATCH_MIN = 4


def dispatch_trees(schema_doc: Any, any_of: bool = True) -> Any:
    """``schema_doc`` with every discriminated ``allOf`` — conditionals ``{"if": {..., "properties": {K: {"const":
    V}}, ...}, "then": T}``, one per value ``V`` of one property ``K``, no ``else`` — rewritten for the compiled
    validator (a new document; ``schema_doc`` is not changed): as an ``anyOf`` of the ``T``s where that accepts the
    same (``_closed_dispatch``), else as a binary tree of conditionals on ``K``'s ``enum`` halves whose leaves are the
    original conditionals, verbatim. The compiled validator then evaluates about log2(n) + 1 conditions per op (the
    tree) or tries the alternatives, each refused at its own constant at once (``anyOf``, the tag's ``enum`` left to
    them: 7.5 against 14.8 us on examples/pipeline_small.json's 23 ops, benchmarks/bench_load.py), instead of all n
    conditions: the program schema's op dispatch (25 tags) was 11.5 of the
    12.2 ms its check took on the 16-layer decode step (benchmarks/bench_scale.py).

    The tree accepts exactly what the original accepts: an instance meeting the ``if`` of the conditional for ``V``
    has ``K == V``, so every inner node sends it towards that leaf, which applies ``T``; every other leaf it may reach
    has an ``if`` it fails, so holds vacuously. Only the compiled validator reads the rewritten form; the reference
    validator that words a message keeps the shipped schema, so messages are unchanged.

    The ``anyOf`` reports an op in error as one error at the op, where the shipped conditionals report each field
    (the instance paths ``_check`` cuts a document by, as the reference validator would): ``any_of`` False gives the
    trees alone, whose errors lie where the shipped schema's do (``_path_faithful``: for a document found invalid)."""
    defs = schema_doc.get("$defs") if isinstance(schema_doc, dict) else None
    return _dispatch(schema_doc, defs if isinstance(defs, dict) else {}, any_of)


def _dispatch(schema_doc: Any, defs: dict[str, Any], any_of: bool) -> Any:
    """``dispatch_trees`` of a part of a document whose ``$defs`` are ``defs``."""
    if isinstance(schema_doc, list):
        return [_dispatch(x, defs, any_of) for x in schema_doc]
    if not isinstance(schema_doc, dict):
        return schema_doc
    out = {k: _dispatch(v, defs, any_of) for k, v in schema_doc.items()}
    branches = out.get("allOf")
    key = _discriminator(branches) if isinstance(branches, list) and len(branches) >= _DISPATCH_MIN else None
    if key is not None:
        assert isinstance(branches, list)
        if any_of and _closed_dispatch(out, key, branches, defs):
            out["allOf"] = [{"anyOf": [b["then"] for b in branches]}]
            # The tag's enum is implied (each then requires its constant, one of the enum's values): checked once
            # fewer per op (7.5 against 9.3 us on pipeline_small).
            rest = {k: v for k, v in out["properties"].items() if k != key}
            if rest:
                out["properties"] = rest
            else:
                del out["properties"]
        else:
            out["allOf"] = [_tree(key, branches)]
    return out


def _closed_dispatch(node: dict[str, Any], key: str, branches: list[dict[str, Any]], defs: dict[str, Any]) -> bool:
    """Whether the discriminated ``allOf`` ``branches`` of ``node`` (on property ``key``) accepts what an ``anyOf`` of
    their ``then``s accepts. The ``allOf`` holds vacuously where no ``if`` applies, the ``anyOf`` never: so ``node``
    must refuse every such instance itself (it is an object that requires ``key``, whose ``enum`` is exactly the
    constants of the ``if``s, each ``if`` testing no more than ``key``'s constant). Where one ``if``, for ``V``,
    applies, the ``allOf`` is its ``then``; the ``anyOf`` is that ``then`` or another: so each ``then`` must refuse
    every other value of ``key`` (its own ``key`` a constant it requires, through at most one local ``$ref``)."""
    values = [b["if"]["properties"][key]["const"] for b in branches]
    if not (node.get("type") == "object" and key in node.get("required", ())
            and node.get("properties", {}).get(key) == {"enum": values}):
        return False
    for b, v in zip(branches, values, strict=True):
        test = b["if"]
        if not (set(test) <= {"type", "properties", "required"} and test.get("type", "object") == "object"
                and test.get("required", [key]) == [key]):
            return False
        then = b["then"]
        ref = then.get("$ref") if isinstance(then, dict) else None
        if isinstance(ref, str):
            if set(then) != {"$ref"} or not ref.startswith("#/$defs/"):
                return False
            then = defs.get(ref[len("#/$defs/"):])
        if not (isinstance(then, dict) and key in then.get("required", ())
                and then.get("properties", {}).get(key) == {"const": v}):
            return False
    return True


def _discriminator(branches: list[Any]) -> str | None:
    """The property ``K`` every conditional of ``branches`` tests against a distinct constant, else None."""
    keys: set[str] = set()
    values: list[str] = []
    for b in branches:
        if not (isinstance(b, dict) and set(b) == {"if", "then"} and isinstance(b["if"], dict)):
            return None
        props = b["if"].get("properties")
        if not (isinstance(props, dict) and len(props) == 1):
            return None
        (k, test), = props.items()
        if not (isinstance(test, dict) and set(test) == {"const"} and isinstance(test["const"], str)):
            return None
        keys.add(k)
        values.append(test["const"])
    return next(iter(keys)) if len(keys) == 1 and len(set(values)) == len(values) else None


def _tree(key: str, branches: list[dict[str, Any]]) -> dict[str, Any]:
    if len(branches) == 1:
        return branches[0]
    half = len(branches) // 2
    left = [b["if"]["properties"][key]["const"] for b in branches[:half]]
    return {"if": {"properties": {key: {"enum": left}}}, "then": _tree(key, branches[:half]),
            "else": _tree(key, branches[half:])}


def json_kind(v: Any) -> str:
    """What the parsed JSON value ``v`` is, in JSON's words (``an array``, ``null``, ``a number``, ...), for a message
    about a document or field of the wrong kind: a user wrote JSON (or YAML), not Python's ``list`` or
    ``NoneType``."""
    if v is None:
        return "null"
    kinds: dict[type, str] = {list: "an array", dict: "an object", str: "a string", bool: "a boolean", int: "a number",
                              float: "a number"}
    return kinds.get(type(v), type(v).__name__)


def _check(d: Any, validator: Any, schema_doc: Callable[[], dict[str, Any]]) -> None:
    if not isinstance(d, dict):
        raise ParseError("(document)", f"expected a JSON object, got {json_kind(d)}")
    if validator.is_valid(d):
        return
    # Not valid: the reference validator words the message (the most relevant error, by its JSON path and rule),
    # on the document cut down to the parts the compiled validator found errors in (``_pruned``). Imported here, on
    # the way to a message: a document that loads never needs it (its import was about a tenth of certify's).
    import jsonschema

    reference = _reference(validator, schema_doc)
    validator = _path_faithful(validator, schema_doc)
    where: dict[int, list[int]] = {}
    try:
        at = {tuple(e.instance_path) for e in validator.iter_errors(d)}
    except ValueError:  # the compiled validator's error walk stops at its recursion limit (a document nested deep)
        small, err = d, jsonschema.exceptions.best_match(reference.iter_errors(d))
    else:
        small = _cut(d, at, validator, where)
        err = jsonschema.exceptions.best_match(reference.iter_errors(small))
    if err is None:  # pragma: no cover - the cut hid the error: word it from the whole document
        where.clear()
        small = d
        err = jsonschema.exceptions.best_match(reference.iter_errors(d))
    if err is not None:
        found = _original_path(small, list(err.absolute_path), where)
        raise ParseError(clip(_json_path(found)), _clipped_message(err), tuple(found))
    raise ParseError("(document)", "does not match the schema")  # pragma: no cover - the two validators disagree


#: The reference validator (``jsonschema``) of each compiled one, by the compiled one's ``id`` (kept alive beside it).
_REFERENCES: dict[int, tuple[Any, Any]] = {}


def _reference(validator: Any, schema_doc: Callable[[], dict[str, Any]]) -> Any:
    """The ``jsonschema`` validator of the schema ``validator`` was compiled from, made once per schema (a report on a
    small file spent most of its time reading the schema and building this)."""
    got = _REFERENCES.get(id(validator))
    if got is None or got[0] is not validator:
        import jsonschema

        got = _REFERENCES[id(validator)] = (validator, jsonschema.Draft202012Validator(schema_doc()))
    return got[1]


#: The compiled validator whose errors lie where the shipped schema's do (``dispatch_trees(any_of=False)``) of each
#: compiled one, by the compiled one's ``id`` (kept alive beside it).
_PATH_FAITHFUL: dict[int, tuple[Any, Any]] = {}


def _path_faithful(validator: Any, schema_doc: Callable[[], dict[str, Any]]) -> Any:
    """The compiled validator of the schema ``validator`` was compiled from with its dispatches as trees, not as
    ``anyOf``s: its errors' instance paths are the reference validator's, which ``_cut`` relies on. Made once per
    schema, for the first document found invalid."""
    got = _PATH_FAITHFUL.get(id(validator))
    if got is None or got[0] is not validator:
        got = _PATH_FAITHFUL[id(validator)] = (validator, jsonschema_rs.validator_for(dispatch_trees(schema_doc(),
                                                                                                   any_of=False)))
    return got[1]


#: Arrays longer than this are cut to the elements that may hold the best match (``_pruned``).
_PRUNE_ITEMS = 1
#: Rounds of ``_cut`` that put back arrays whose cut the compiled validator finds an error in; then the whole document.
_CUT_ROUNDS = 8


def _cut(d: Any, at: set[tuple[Any, ...]], validator: Any, where: dict[int, list[int]]) -> Any:
    """``d`` cut down for the reference validator (``_pruned``; ``at``: the compiled validator's error paths in ``d``,
    ``where``: filled as ``_pruned`` fills it), checked by the compiled validator: a cut array that makes an error
    of its own (a ``minItems``: a version-3 program has at least two sections; a fixed-length array read by
    position, ``prefixItems``) is kept whole and the document cut again, until the cut holds no error that ``d``
    does not (else ``d`` itself, after ``_CUT_ROUNDS``)."""
    whole = set(at)
    least = _least_depths(at)
    for _ in range(_CUT_ROUNDS):
        where.clear()
        small = _pruned(d, (), whole, least, where)
        added = {tuple(_original_path(small, list(e.instance_path), where)) for e in validator.iter_errors(small)} - at
        if not added:
            return small
        whole |= added
    where.clear()
    return d


def _least_depths(at: set[tuple[Any, ...]]) -> dict[tuple[Any, ...], int]:
    """Per prefix of an error's instance path (``at``), the length of the shortest error path under it."""
    least: dict[tuple[Any, ...], int] = {}
    for q in at:
        n = len(q)
        for j in range(n + 1):
            k = q[:j]
            if least.get(k, n + 1) > n:
                least[k] = n
    return least


def _pruned(x: Any, path: tuple[Any, ...], at: set[tuple[Any, ...]], least: dict[tuple[Any, ...], int],
            where: dict[int, list[int]]) -> Any:
    """``x`` with every array longer than ``_PRUNE_ITEMS`` cut to the elements that may hold the error the reference
    validator's best match picks, or to its first element when no error lies in it (an empty array stays empty);
    ``least`` maps every prefix of an error's instance path to the length of the shortest error path under it
    (``_least_depths``); ``where`` maps each cut array (by ``id``) to the original indices it kept. An array at which
    an error itself lies (``at``: the errors' instance paths, and those ``_cut`` puts back) is kept whole.

    Why: the reference validator walks every element it is given, about half a millisecond per op: to word one
    misspelt op of a 100,000-op program it took 64 s (``validate``: 1.3 s), and with every tenth op misspelt it
    still walked 10,000 ops when the cut kept every element in error. Which elements may hold the best match:
    ``jsonschema.exceptions.best_match`` takes the error of greatest ``relevance``, which prefers the shortest path
    first, then the greatest path. Of two elements ``j < k`` of one array whose shortest errors are equally deep,
    each error of ``j`` that could win (one of the shortest paths of the document) has an equally short error in
    ``k`` with a greater path: ``j`` cannot hold the best match. So of the elements with errors, the last one of each
    shortest-error depth is kept (a handful per array, whatever the number of errors). The depths are the compiled
    validator's instance paths, which both validators take from the schema alike (an error lies where its keyword
    applies: JSON Schema's instance location).

    Sound for schemas whose ``items`` judge each element alone (no ``uniqueItems`` or ``contains``): the cut keeps the
    best error, and ``_cut`` makes sure it adds none."""
    if isinstance(x, dict):
        return {k: _pruned(v, (*path, k), at, least, where) for k, v in x.items()}
    if not isinstance(x, list):
        return x
    if len(x) <= _PRUNE_ITEMS or path in at:
        keep = list(range(len(x)))
    else:
        last: dict[int, int] = {}  # shortest error depth -> the last element with it
        for i in range(len(x)):
            depth = least.get((*path, i))
            if depth is not None:
                last[depth] = i
        keep = sorted(last.values()) or [0]
    out = [_pruned(x[i], (*path, i), at, least, where) for i in keep]
    if len(keep) < len(x):
        where[id(out)] = keep
    return out


def _original_path(small: Any, path: list[Any], where: dict[int, list[int]]) -> list[Any]:
    """``path`` (into the cut document ``small``) with each index into a cut array mapped back to the original."""
    out: list[Any] = []
    node = small
    for k in path:
        if isinstance(node, list) and isinstance(k, int):
            out.append(where[id(node)][k] if id(node) in where else k)
        else:
            out.append(k)
        try:
            node = node[k]
        except (KeyError, IndexError, TypeError):
            node = None
    return out


def _clipped_message(err: Any) -> str:
    """The validator's message with the quoted input cut to ``limits.QUOTE_MAX`` characters (a message quotes the
    offending value, which may be a huge array or a number of thousands of digits). A pattern the schema describes
    (a ``description`` starting "a " or "an ") is said in its words, not as the regular expression; so is a value
    of none of the forms a described ``oneOf`` or ``anyOf`` takes (its description starting "NOUN: "), not as "not
    valid under any of the given schemas"."""
    msg = str(err.message)
    desc = err.schema.get("description") if isinstance(err.schema, dict) else None
    if (err.validator in ("oneOf", "anyOf") and isinstance(desc, str) and ": " in desc
            and msg.endswith("is not valid under any of the given schemas")):
        return f"{clip(repr(err.instance))} is not {desc}"
    if err.validator == "pattern" and isinstance(desc, str) and desc.startswith(("a ", "an ")):
        try:
            return f"{clip(repr(err.instance))} is not {desc}"
        except ValueError:  # pragma: no cover - a pattern applies to strings, whose repr never fails
            pass
    try:
        quoted = repr(err.instance)
    except ValueError:  # an integer too long to print
        quoted = ""
    if quoted and len(quoted) > QUOTE_MAX and msg.startswith(quoted):
        return clip(quoted) + msg[len(quoted):]
    return clip(msg, 4 * QUOTE_MAX)


def check_schema(d: Any, schema_doc: dict[str, Any]) -> None:
    """``ParseError`` naming the JSON path and rule of the most relevant way ``d`` breaks ``schema_doc`` (or that
    ``d`` is not an object). Shared by every document format verispatial reads.

    A compiled validator (``jsonschema_rs``, about as fast as parsing the JSON) decides; only a document it finds
    invalid is checked again by ``jsonschema``, whose best match words the message."""
    text = json.dumps(schema_doc, sort_keys=True)
    _check(d, _compiled(text, schema_doc), lambda: schema_doc)


def check_program_schema(d: Any) -> None:
    """``check_schema`` against the shipped program schema (compiled once)."""
    _check(d, _program_validator(), schema)


@functools.cache
def _program_validator() -> Any:
    return _compiled(_schema_text(), schema())


def schema_violations(p: Program) -> list[IrViolation]:
    """How the written form of ``p`` breaks the program schema (empty when it does not), for a front end: it builds
    ops from values its source computes (an increment of 0 read from a kernel), which the schema bounds and
    ``validate`` does not, and must refuse them rather than write a document the loader rejects. A field of an op is
    named by its engine program's key and op path, so the front end can name the source line it read the op from."""
    try:
        check_program_schema(program_to_dict(p))
    except ParseError as e:
        return [_schema_violation(p, e)]
    return []


def _schema_violation(p: Program, e: ParseError) -> IrViolation:
    at = e.at or ()
    if len(at) < 4 or at[0] != "programs" or not isinstance(at[1], int) or at[2] != "ops":
        return IrViolation(e.field, e.rule)
    path: list[int] = []
    rest = list(at[3:])
    # ops[j].body[k].body[...]: the op path is the indices; what follows them is the op's own field
    while rest and isinstance(rest[0], int):
        path.append(rest[0])
        rest.pop(0)
        if len(rest) >= 2 and rest[0] == "body" and isinstance(rest[1], int):
            rest.pop(0)
    return IrViolation(e.field, e.rule, p.programs[at[1]].key, tuple(path))


def program_from_dict(d: Any) -> Program:
    """Build a ``Program`` from its JSON object (a version-3 document expanded, ``TemplatedProgram.expand``);
    ``ParseError`` names the first bad field and its rule."""
    got = document_from_dict(d)
    return got.expand() if isinstance(got, TemplatedProgram) else got


def document_from_dict(d: Any) -> Document:
    """The ``Program`` of a version-2 document or the ``TemplatedProgram`` of a version-3 one, never expanded;
    ``ParseError`` names the first bad field and its rule (an older version names ``verispatial upgrade``)."""
    if not isinstance(d, dict):
        raise ParseError("(document)", f"expected a JSON object, got {json_kind(d)}")
    if d.get("format") != FORMAT:
        # a tt-metal host description in JSON: certify and explain tell hosts from programs by the .yaml suffix
        hint = (" (a tt-metal host description: `verispatial import ttmetal HOST -o PROGRAM.json` reads it, and "
                "certify reads it directly as HOST.yaml)" if d.get("format") == "verispatial.ttmetal-host" else "")
        raise ParseError("format", f"expected {FORMAT!r}, got {_quote(d.get('format'))}{hint}")
    if d.get("version") not in READ_VERSIONS:
        hint = " (format 1: convert it with `verispatial upgrade IN.json -o OUT.json`)" if d.get("version") == 1 else ""
        raise ParseError("version", f"this verispatial reads versions {VERSION} and {TEMPLATED_VERSION}, got "
                                    f"{_quote(d.get('version'))}{hint}")
    # The two forms' fields, said in words before the schema's conditional does (its message names no field).
    if d["version"] == TEMPLATED_VERSION:
        for key in _FULL_FIELDS:
            if key in d:
                raise ParseError(key, f"a version-{TEMPLATED_VERSION} program states no {key}: each section's are its "
                                      "template's (verispatial/ir/templated.py)")
    elif "templates" in d:
        raise ParseError("templates", f"only a version-{TEMPLATED_VERSION} program has templates, this one says "
                                      f"version {VERSION}")
    check_program_schema(d)
    if d["version"] == TEMPLATED_VERSION:
        return _structure_templated(d)
    return _structure_program(d)


#: The fields of a program stated in full (version 2) that a templated one (version 3) leaves to its templates.
_FULL_FIELDS = ("programs", "buffers", "semaphores", "groups", "memory")


def _quote(v: Any) -> str:
    """``repr(v)`` cut to ``limits.QUOTE_MAX`` characters."""
    try:
        return clip(repr(v))
    except ValueError:  # an integer too long to print
        return "an integer of more than 4300 digits"


def _structure_program(d: dict[str, Any]) -> Program:
    """The ``Program`` of a document the schema accepted."""
    tgt = d["target"]
    target = get_target(tgt) if isinstance(tgt, str) else _structure(tgt, Target, "target")
    return _fast_program(d, target)  # reads the program's own fields only: format, version and target stay behind


def _structure_templated(d: dict[str, Any]) -> TemplatedProgram:
    """The ``TemplatedProgram`` of a version-3 document the schema accepted."""
    tgt = d["target"]
    target = get_target(tgt) if isinstance(tgt, str) else _structure(tgt, Target, "target")
    templates = tuple(_fast_program(t, target) for t in d["templates"])
    instances = tuple(Instance(str(s["name"]), _int(s["template"]), tuple(s["tensors"]), tuple(s.get("trips", ())),
                               bool(s.get("barrier_after", False))) for s in d["sections"])
    rest = _fast_program({"name": d["name"], "tensors": d.get("tensors", []), "trips": d.get("trips", []),
                          "resident": d.get("resident", [])}, target)
    return TemplatedProgram(rest.name, target, rest.tensors, rest.trips, templates, instances, rest.resident)


@functools.cache
def _builders() -> dict[type, Callable[[dict[str, Any]], Any]]:
    from verispatial.ir.program import BufferAt, Group, Resident, SectionSpan, Trip

    return {cls: _builder(cls) for cls in (Tensor, Buffer, Semaphore, Group, Trip, SectionSpan, BufferAt, Resident)}


@functools.cache
def _program_plan() -> tuple[tuple[str, Callable[[dict[str, Any]], Any], Any], ...]:
    """Each field of ``Program`` after its name and target, in field order: its key, the constructor of one item of
    its list (``_builders``; ``_engine_program`` for the programs) and its default (a document may leave it out)."""
    from verispatial.ir.program import BufferAt, Group, Resident, SectionSpan, Trip

    b = _builders()
    item = {"tensors": b[Tensor], "buffers": b[Buffer], "semaphores": b[Semaphore], "groups": b[Group],
            "trips": b[Trip], "sections": b[SectionSpan], "memory": b[BufferAt], "resident": b[Resident],
            "programs": _engine_program}
    fields = attrs.fields(Program)
    assert [f.name for f in fields[:2]] == ["name", "target"]
    assert {f.name for f in fields[2:]} == set(item)
    assert not any(isinstance(f.default, attrs.Factory) for f in fields[2:])  # type: ignore[arg-type]  # one shared
    return tuple((f.name, item[f.name], f.default) for f in fields[2:])


def _fast_program(d: dict[str, Any], target: Target) -> Program:
    """The ``Program`` (on ``target``) of a program object the schema accepted, built field by field with the
    generated constructors (``_builder``) rather than cattrs' generic dispatch: what ``_conv.structure`` builds, about
    twice as fast (loading stays within 5x ``json.loads``, benchmarks/bench_load.py)."""
    return _program_maker()(d, target)


@functools.cache
def _program_maker() -> Callable[[dict[str, Any], Target], Program]:
    """``_fast_program``'s body generated from ``_program_plan``: each field a line of its own (no loop over the
    plan, no comprehension frame), a list by ``map`` (no frame per item) and an empty or missing one without a call
    (most small programs leave half their lists empty): a fixed cost of every load."""
    env: dict[str, Any] = {"_make": _MAKE_PROGRAM}
    args = []
    for key, build, default in _program_plan():
        env[f"_build_{key}"], env[f"_default_{key}"] = build, default
        # an array when present (the schema): empty, the empty tuple as ``tuple(map(...))`` makes it
        args.append(f"        tuple(map(_build_{key}, _x)) if (_x := d.get({key!r})) else "
                    f"(_default_{key} if _x is None else ()),\n")
    exec(f"def make(d, target):\n    return _make(\n        d['name'], target,\n{''.join(args)}    )\n", env)
    return env["make"]  # type: ignore[no-any-return]


def _engine_program(d: dict[str, Any]) -> EngineProgram:
    starts, sources, site, engine = d.get("section_starts"), d.get("sources"), d["site"], d["engine"]
    # arrays when present (the schema); the site and the engine looked up in place (``_site``, ``_member``)
    return _MAKE_ENGINE_PROGRAM(
        s if (s := SITES_BY_XY.get((site[0], site[1]))) is not None else _site(site),
        _ENGINES[engine] if type(engine) is str and engine in _ENGINES else _member(engine, _ENGINES, Engine),
        _ops(d["ops"]), tuple(map(int, starts)) if starts else (), _structure_sources(sources) if sources else ())


_ENGINES = Engine._value2member_map_


def _positional(cls: type) -> Callable[..., Any]:
    """A constructor of ``cls`` taking every field in order, built through its slots when its ``__init__`` only
    stores its arguments (``_stores_only``, as ``_builder`` builds), else ``cls`` itself: the same object."""
    if not _stores_only(cls):
        return cls
    names = [f.name for f in attrs.fields(cls)]
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls, **{f"_set_{n}": cls.__dict__[n].__set__ for n in names}}
    exec(f"def make({', '.join(names)}):\n    o = _new(_cls)\n"  # generated from the class's own fields
         + "".join(f"    _set_{n}(o, {n})\n" for n in names) + "    return o\n", env)
    return env["make"]  # type: ignore[no-any-return]


_MAKE_PROGRAM = _positional(Program)
_MAKE_ENGINE_PROGRAM = _positional(EngineProgram)
_MAKE_SOURCE_LOC = _positional(SourceLoc)
# a loop or an if built through its slots: a frozen attrs class's ``__init__`` stores each field by
# ``object.__setattr__``, half a microsecond a loop (most programs hold a loop per engine, some dozens)
_MAKE_LOOP = _positional(Loop)
_BUILD_TRIP_COUNT = _builder(TripCount)  # a loop's count read from a trip: the generated constructor, not cattrs
_MAKE_IF = _positional(If)


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
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _v in pairs:
            if k in seen:
                raise _DuplicateKey(k)
            seen.add(k)
    return out


def _unpaired_surrogate(doc: Any) -> tuple[str, str] | None:
    """The path (``buffers[0].name``) and the character of the first string (or key) of ``doc`` holding an unpaired
    surrogate, or None. ``json.loads`` joins an escaped pair into one character, so any surrogate left is alone."""
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        path, v = stack.pop()
        if isinstance(v, str):
            bad = next((c for c in v if "\ud800" <= c <= "\udfff"), None)
            if bad is not None:
                return path or "(document)", bad
        elif isinstance(v, dict):
            for k in reversed(list(v)):
                stack.append((f"{path}.{k}" if path else str(k), v[k]))
                stack.append((path or "(document)", k))
        elif isinstance(v, list):
            stack.extend((f"{path}[{i}]", v[i]) for i in reversed(range(len(v))))
    return None


def parse_json(text: str | bytes) -> Any:
    """JSON text as Python values; ``ParseError`` (field ``(document)``) for text that is not UTF-8, not JSON, or
    has one key twice in an object; ``ParseError`` naming the field for a string holding an unpaired surrogate (a
    ``\\udcff`` escape: not Unicode text, no report could print it). Shared by every document verispatial reads
    (programs, graphs, certificates). Read by orjson where it is certain to agree (``_fast_parse``), else by
    ``json``."""
    fast = _fast_parse(text)
    return fast if fast is not None else _parse_general(text)


def _parse_general(text: str | bytes) -> Any:
    """``parse_json`` by ``json.loads`` with the duplicate-key hook: every document, every message."""
    try:
        doc = json.loads(text, object_pairs_hook=_no_duplicate_keys)
        # Only an escape spells a surrogate (UTF-8 cannot encode one), so the walk runs only when there is one.
        escapes = (b"\\ud", b"\\uD") if isinstance(text, bytes) else ("\\ud", "\\uD")
        if any(e in text for e in escapes):  # type: ignore[operator]  # bytes in bytes, str in str
            found = _unpaired_surrogate(doc)
            if found is not None:
                raise ParseError(found[0], f"an unpaired surrogate ({found[1]!a}) is not Unicode text")
        return doc
    except UnicodeDecodeError:
        raise ParseError("(document)", "not UTF-8 text (a binary file?)") from None
    except json.JSONDecodeError as e:
        raise ParseError("(document)", f"not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except _DuplicateKey as e:
        raise ParseError("(document)", f"key {clip(repr(e.args[0]))} appears twice in one object (readers disagree on "
                                       "which wins)") from None
    except MemoryError:  # a document under the size limit whose values still do not fit (deep repetition)
        raise ParseError("(document)", "its values do not fit in memory: too large for the model") from None
    except ValueError as e:  # an integer literal past Python's digit limit (4300): far past every model limit
        if "digits" not in str(e):
            raise
        raise ParseError("(document)", "an integer has more than 4300 digits: too large for the model (counts and "
                                       "sizes are at most 32-bit)") from None


def read_document(path: str | Path, expected: str) -> bytes:
    """The bytes of the file at ``path``; ``ParseError`` (field: the path) when it is missing, not a regular file
    (a directory, a FIFO, a device) or empty. ``expected`` names what it should be, e.g. ``"a program.json file"``."""
    got = regular_stat(path, expected)  # a FIFO would block the read, /dev/zero never end it
    if isinstance(got, str):
        raise ParseError(str(path), got)
    size = got.st_size
    if size > DOCUMENT_MAX_BYTES:
        raise ParseError(str(path), f"{size} bytes: larger than the {DOCUMENT_MAX_BYTES // 2**20} MiB a document may "
                                    "have (verispatial/ir/limits.py)")
    with open(path, "rb", buffering=0) as f:  # unbuffered: one read of the whole file, no buffer to copy through
        data = f.read()
    if not data.strip():
        raise ParseError(str(path), "the file is empty")
    return data


def no_cycle_collection() -> _CyclesPaused:
    """Pause the cyclic garbage collector while a document is read: reading a program (or a stored report) allocates
    one container per JSON object and IR value, all kept alive and none in a cycle, so each collection the
    allocations trigger would only walk the growing heap again (more than half of a large document's parse time; a
    stored report of the 16-layer step: 374 ms with it, 194 ms without, benchmarks/bench_scale.py's warm certify).

    When the block ends normally, what it made is handed to the oldest generation at once (``gc.freeze`` then
    ``gc.unfreeze``, each a splice of the generations' lists) before the collector is on again: otherwise the first
    allocation after it walks every object the read made in one young collection (10-15% of loading a decode step,
    benchmarks/bench_load.py), and the next older collection walks them again. Any cyclic garbage among them (and
    among the young objects from before) is found by the next full collection, as for every long-lived object. A
    caller that froze objects of its own (``gc.get_freeze_count()``) is left alone, and so is a block that raises
    (its traceback's frames are cycles best collected young)."""
    return _CyclesPaused()


class _CyclesPaused:
    """``no_cycle_collection``'s context manager: a class rather than ``contextlib.contextmanager``'s generator, whose
    set-up is a fixed cost of every load (a microsecond or two: a tenth of ``json.loads`` of a small program)."""

    __slots__ = ("was",)

    def __enter__(self) -> None:
        self.was = gc.isenabled()
        if self.was and gc.get_freeze_count() == 0:
            # The young objects from before are handed to the oldest generation on exit: their cyclic garbage (the
            # last certify's solver objects) is collected first, over the young generations only, or it would
            # wait for a full collection that moved objects never set off (a gate's memory grew by each program's
            # solver garbage, 16 MB a program; benchmarks/bench_gate_memory.py)
            gc.collect(1)
        gc.disable()

    def __exit__(self, kind: type[BaseException] | None, _e: BaseException | None,
                 _tb: types.TracebackType | None) -> None:
        if not self.was:
            return
        if kind is None and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def loads(text: str | bytes) -> Program:
    """Parse program JSON text and validate it; raises ``ParseError`` or ``InvalidProgram``. A version-3 document
    is validated as templates and instances, then expanded."""
    got = loads_document(text)
    return got.expand() if isinstance(got, TemplatedProgram) else got


def loads_document(text: str | bytes) -> Document:
    """Parse program JSON text and validate it, a version-3 document as a ``TemplatedProgram`` (never expanded:
    ``validate_templated``); raises ``ParseError`` or ``InvalidProgram``."""
    checks = _CHECKS or _import_checks()
    with no_cycle_collection():
        p = document_from_dict(parse_json(text))
        violations = checks.validate_templated(p) if isinstance(p, TemplatedProgram) else checks.validate(p)
    if violations:
        raise InvalidProgram(violations)
    return p


#: ``verispatial.ir.validate``, imported by the first load (``_import_checks``).
_CHECKS: types.ModuleType | None = None


def _import_checks() -> types.ModuleType:
    """``verispatial.ir.validate``, imported here, not with this module (whose readers do not all validate), and kept
    in ``_CHECKS``: an import statement (a look-up in ``sys.modules`` and of the module's spec) was a microsecond of
    every load."""
    global _CHECKS
    import verispatial.ir.validate as checks

    _CHECKS = checks
    return checks


def load_program(path: str | Path) -> Program:
    """Read and validate ``path``; ``ParseError`` for a missing, unreadable or malformed file."""
    return loads(read_document(path, "a program.json file"))


def load_document(path: str | Path) -> Document:
    """Read and validate ``path`` as ``loads_document`` does; ``ParseError`` for a missing, unreadable or malformed
    file."""
    return loads_document(read_document(path, "a program.json file"))
