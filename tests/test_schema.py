"""The program JSON Schema (verispatial/ir/program.schema.json): in step with the IR classes, satisfied by
everything ``program_to_dict`` writes, and precise about where a mutated document goes wrong."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import attrs
import jsonschema
import pytest

from verispatial.errors import ParseError
from verispatial.ir import (
    BLACKHOLE,
    GPU,
    OP_TAGS,
    WORMHOLE,
    AcquireAcc,
    Addr,
    AtomicBarrier,
    Buffer,
    BufferAt,
    Compute,
    Dynamic,
    Engine,
    EngineProgram,
    Flush,
    Group,
    Guard,
    If,
    Loop,
    McastSend,
    McastSetValid,
    Operand,
    PackAcc,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    ReleaseAcc,
    Reserve,
    Resident,
    Role,
    SectionSpan,
    Semaphore,
    SemInc,
    SemIncMcast,
    SemRole,
    SemSet,
    SemWait,
    Site,
    Space,
    Target,
    Tensor,
    Term,
    Trip,
    TripCount,
    Wait,
    WaitCond,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.serialize import program_from_dict, program_to_dict, schema
from verispatial.ir.templated import Instance

SCHEMA = schema()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
DEFS = SCHEMA["$defs"]


def errors(doc: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


# ------------------------------------------------------------------------------------------- the schema itself


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


ENTITY_DEFS: list[tuple[str, type]] = [
    ("tensor", Tensor), ("buffer", Buffer), ("semaphore", Semaphore), ("group", Group), ("trip", Trip),
    ("buffer_at", BufferAt), ("target", Target), ("term", Term), ("resident", Resident),
]


def _fields(cls: type) -> tuple[set[str], set[str]]:
    """(all field names, names of fields without a default) of an attrs class."""
    fs = attrs.fields(cls)
    return {f.name for f in fs}, {f.name for f in fs if f.default is attrs.NOTHING}


@pytest.mark.parametrize(("def_name", "cls"), ENTITY_DEFS, ids=[d for d, _ in ENTITY_DEFS])
def test_entity_def_lists_exactly_the_class_fields(def_name: str, cls: type) -> None:
    d = DEFS[def_name]
    every, required = _fields(cls)
    assert set(d["properties"]) == every
    assert set(d["required"]) == required
    assert d["additionalProperties"] is False


def test_addr_and_dynamic_defs_match_their_classes() -> None:
    addr = DEFS["addr"]
    assert set(addr["properties"]) == _fields(Addr)[0]
    assert "required" not in addr  # every Addr field has a default
    dyn = addr["properties"]["dynamic"]
    assert set(dyn["properties"]) == _fields(Dynamic)[0]
    assert set(dyn["required"]) == _fields(Dynamic)[1]


def test_engine_program_and_program_defs_match_their_classes() -> None:
    ep = DEFS["engine_program"]
    assert set(ep["properties"]) == _fields(EngineProgram)[0]
    assert set(ep["required"]) == _fields(EngineProgram)[1]
    every, required = _fields(Program)
    # Version 3 adds the templates (a templated program, ``ir/templated.py``).
    assert set(SCHEMA["properties"]) == every | {"format", "version", "templates"}
    assert set(SCHEMA["required"]) == required | {"format", "version"}


def test_the_version_3_defs_match_the_templated_classes() -> None:
    """A section entry lists exactly an ``Instance``'s fields (a version-2 entry the ``SectionSpan``'s, the version-3
    ones forbidden there); a template every field of a one-section ``Program`` but its target and sections."""
    every, _ = _fields(Instance)
    assert set(DEFS["section"]["properties"]) == every
    assert _fields(SectionSpan)[0] <= every
    v3 = SCHEMA["allOf"][0]
    assert set(v3["else"]["properties"]["sections"]["items"]["properties"]) == every - _fields(SectionSpan)[0]
    assert set(v3["then"]["properties"]["sections"]["items"]["required"]) == {"template", "tensors"}
    template = DEFS["template"]
    assert set(template["properties"]) == _fields(Program)[0] - {"target", "sections", "resident"}
    assert template["additionalProperties"] is False


@pytest.mark.parametrize("cls", list(OP_TAGS), ids=list(OP_TAGS.values()))
def test_every_op_has_a_def_with_exactly_its_fields(cls: type) -> None:
    tag = OP_TAGS[cls]
    d = DEFS[f"op_{tag}"]
    every, required = _fields(cls)
    assert d["properties"]["op"] == {"const": tag}
    assert set(d["properties"]) == every | {"op"}
    assert set(d["required"]) == required | {"op"}
    assert d["additionalProperties"] is False
    assert tag in DEFS["op"]["properties"]["op"]["enum"]


def test_op_enum_is_exactly_the_op_tags() -> None:
    assert DEFS["op"]["properties"]["op"]["enum"] == list(OP_TAGS.values())
    assert len(DEFS["op"]["allOf"]) == len(OP_TAGS)


# ------------------------------------------------------------------------------------------- written programs


S0, S1, S2 = Site(0, 0), Site(1, 0), Site(2, 0)


def every_op_program(target: Target = WORMHOLE) -> Program:
    """One program that uses every op kind, every entity and non-default values of every optional field."""
    reader = (
        SemSet(0, 1),
        Loop("k", 4, (
            Reserve(0, 2),
            Loop("r", "t", (ReadTiles("a", Addr(3, (Term("k", 2), Term("r", 1))), 1, 0),)),
            ReadTiles("idx", Addr(0, (), Dynamic("row", 0, 7, 4)), 1, 0),
            ReadBarrier(),
            SemWait(1, WaitCond.EQ, 2),
            SemSet(1, 0),
            McastSend(0, 2, 0, 2),
            Flush(),
            McastSetValid(0, 0, 2),
            Push(0, 2),
        )),
        WriteBarrier(),
        SemInc(1, S1, by=3),
        SemInc(1, S2),
        AtomicBarrier(),
        # Version 2: a trip-affine count, a guarded first iteration, an inc multicast, a growing wait threshold, a
        # front multicast and a flag multicast from another word.
        Loop("j", TripCount("t", 2, -1), (
            If("j", Guard.FIRST, (SemIncMcast(1, 0, 2, by=2),)),
            SemWait(1, WaitCond.GE, 1, (Term("j", 1),)),
            Wait(0, 2),
            McastSend(0, 2, 0, 2, front=True),
            McastSetValid(0, 0, 2, src=1),
            WriteBarrier(),
            Pop(0, 2),
        )),
    )
    compute = (
        Loop("k", 4, (Wait(0, 2), AcquireAcc(4, "fp32"), Compute("matmul", 4, (Operand(0, 2),)), Compute("relu"),
                      Reserve(1, 1),
                      PackAcc(1, 4), ReleaseAcc(), Pop(0, 2), Push(1, 1))),
    )
    writer = (
        Loop("m", 4, (Wait(1, 1), WriteTiles(1, "c", Addr(0, (Term("m", 1),)), 1), Pop(1, 1))),
        WriteBarrier(),
        SemWait(1, WaitCond.GE, 1),
    )
    return Program(
        name="every_op",
        target=target,
        tensors=(Tensor("a", (2, 64, 128), "bf16", Role.INPUT), Tensor("idx", (32, 32), "int32", Role.PARAM),
                 Tensor("c", (64, 32), "fp32", Role.STATE, init="zeros")),
        buffers=(Buffer(0, "in", S0, 0, 1, 4, "bf16"),
                 Buffer(1, "acc_out", S0, 1, 4, 2, "fp32", space=Space.ACC, section=1),
                 Buffer(2, "alias", S0, 2, 4, 2, "fp32", space=Space.ACC, alias_of=1, section=1)),
        semaphores=(Semaphore(0, "valid", (S0, S1, S2), init=0, role=SemRole.MCAST_VALID, host_init=True),
                    Semaphore(1, "ready", (S0, S1, S2), init=1, section=0)),
        groups=(Group(0, S0, (1, 0, 2, 0)), Group(1, S0, (0, 0, 2, 0), loopback=True)),
        trips=(Trip("t", 8),),
        programs=(EngineProgram(S0, Engine.READER, reader, section_starts=(0, 2)),
                  EngineProgram(S0, Engine.COMPUTE, compute),
                  EngineProgram(S0, Engine.WRITER, writer, section_starts=(0, 1))),
        sections=(SectionSpan("load", barrier_after=True), SectionSpan("store")),
        memory=(BufferAt(0, 103_712, 8192), BufferAt(1, 0, 32768), BufferAt(2, 0, 32768)),
        resident=(Resident("c", S0, 111_904, 8192, 0, 1),),
    )


WRITTEN: list[tuple[str, Program]] = [
    ("every-op-wormhole", every_op_program()),
    ("every-op-blackhole", every_op_program(BLACKHOLE)),
    ("every-op-gpu", every_op_program(GPU)),
    ("inline-target", every_op_program(attrs.evolve(WORMHOLE, name="wormhole_n300_custom", mesh=(8, 10)))),
    ("inline-target-no-sources", Program("bare", attrs.evolve(GPU, name="gpu_mine", sources={}))),
    ("defaults-only", Program("empty", WORMHOLE)),
]


@pytest.mark.parametrize("prog", [p for _, p in WRITTEN], ids=[n for n, _ in WRITTEN])
def test_written_programs_validate_and_round_trip(prog: Program) -> None:
    d = program_to_dict(prog)
    assert errors(d) == []
    assert program_from_dict(json.loads(json.dumps(d))) == prog


def test_inline_target_is_written_as_an_object_and_builtin_as_a_name() -> None:
    assert program_to_dict(every_op_program())["target"] == "wormhole_b0"
    t = program_to_dict(WRITTEN[3][1])["target"]
    assert isinstance(t, dict)
    assert t["name"] == "wormhole_n300_custom"
    assert t["mesh"] == [8, 10]


def test_fields_with_defaults_may_be_omitted() -> None:
    doc = {
        "format": "verispatial.program", "version": 2, "name": "minimal", "target": "wormhole",
        "buffers": [{"id": 0, "name": "b", "site": [0, 0], "cb": 0, "page_tiles": 1, "capacity": 2,
                     "dtype": "bf16"}],
        "semaphores": [{"id": 0, "name": "s", "sites": [[0, 0], [1, 0]]}],
        "groups": [{"id": 0, "sender": [0, 0], "rect": [1, 0, 1, 0]}],
        "programs": [{"site": [0, 0], "engine": "reader", "ops": [
            {"op": "sem_inc", "sem": 0, "at": [1, 0]},
            {"op": "compute", "kind": "noop"},
            {"op": "read_tiles", "tensor": "x", "addr": {}, "tiles": 1, "into": 0},
            {"op": "read_tiles", "tensor": "x", "addr": {"dynamic": {"name": "i", "lo": 0, "hi": 3}}, "tiles": 1,
             "into": 0},
        ]}],
    }
    assert errors(doc) == []
    p = program_from_dict(doc)
    assert p.target == WORMHOLE
    assert p.buffers[0].space == Space.LOCAL
    assert p.buffers[0].alias_of is None
    assert p.buffers[0].section == 0
    assert p.semaphores[0].init == 0
    assert p.semaphores[0].role == SemRole.COUNTER
    assert p.groups[0].loopback is False
    assert p.sections == (SectionSpan("main"),)
    assert p.programs[0].section_starts == ()
    assert p.programs[0].ops[0] == SemInc(0, S1, 1)
    assert p.programs[0].ops[1] == Compute("noop", 1)
    assert p.programs[0].ops[2] == ReadTiles("x", Addr(), 1, 0)
    assert p.programs[0].ops[3] == ReadTiles("x", Addr(0, (), Dynamic("i", 0, 3, 1)), 1, 0)


def test_host_init_and_resident_are_written_only_when_set() -> None:
    """Documents from before the fields (and their certificates' program digests) keep their bytes."""
    plain = Program("p", WORMHOLE, semaphores=(Semaphore(0, "s", (S0,)),))
    d = program_to_dict(plain)
    assert "resident" not in d
    assert "host_init" not in d["semaphores"][0]
    d = program_to_dict(every_op_program())
    assert d["semaphores"][0]["host_init"] is True
    assert "host_init" not in d["semaphores"][1]
    assert d["resident"] == [{"tensor": "c", "site": [0, 0], "offset": 111_904, "size": 8192, "first_section": 0,
                              "last_section": 1}]


# ------------------------------------------------------------------------------------------- mutations

BASE = program_to_dict(every_op_program())
# programs[0] is the reader: ops[1] is loop k, whose body[1] is loop r, whose body[0] is a read_tiles.


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A mutation setting the value at ``path`` (dot/bracket syntax, as the messages print it)."""
    def f(d: dict[str, Any]) -> None:
        keys = _keys(path)
        obj: Any = d
        for k in keys[:-1]:
            obj = obj[k]
        obj[keys[-1]] = value
    return f


def _del(path: str) -> Callable[[dict[str, Any]], None]:
    def f(d: dict[str, Any]) -> None:
        keys = _keys(path)
        obj: Any = d
        for k in keys[:-1]:
            obj = obj[k]
        del obj[keys[-1]]
    return f


def _keys(path: str) -> list[str | int]:
    out: list[str | int] = []
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        out.append(int(part[1:-1]) if part.startswith("[") else part)
    return out


MUTATIONS: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("pages-zero", _set("programs[0].ops[1].body[0].pages", 0),
     "programs[0].ops[1].body[0].pages: 0 is less than the minimum of 1"),
    ("pages-string", _set("programs[1].ops[0].body[0].pages", "2"),
     "programs[1].ops[0].body[0].pages: '2' is not of type 'integer'"),
    ("pages-float", _set("programs[1].ops[0].body[0].pages", 1.5),
     "programs[1].ops[0].body[0].pages: 1.5 is not of type 'integer'"),
    ("buf-bool", _set("programs[1].ops[0].body[0].buf", True),
     "programs[1].ops[0].body[0].buf: True is not of type 'integer'"),
    ("buf-negative", _set("programs[1].ops[0].body[7].buf", -1),
     "programs[1].ops[0].body[7].buf: -1 is less than the minimum of 0"),
    ("nested-loop-tiles", _set("programs[0].ops[1].body[1].body[0].tiles", 0),
     "programs[0].ops[1].body[1].body[0].tiles: 0 is less than the minimum of 1"),
    ("nested-loop-addr-term", _set("programs[0].ops[1].body[1].body[0].addr.terms[0].coef", "2"),
     "programs[0].ops[1].body[1].body[0].addr.terms[0].coef: '2' is not of type 'integer'"),
    ("dynamic-missing-hi", _del("programs[0].ops[1].body[2].addr.dynamic.hi"),
     "programs[0].ops[1].body[2].addr.dynamic: 'hi' is a required property"),
    ("unknown-op", _set("programs[0].ops[3]", {"op": "barrier"}),
     "programs[0].ops[3].op: 'barrier' is not one of " + repr(list(OP_TAGS.values()))),
    ("op-not-object", _set("programs[0].ops[3]", "write_barrier"),
     "programs[0].ops[3]: 'write_barrier' is not of type 'object'"),
    ("op-tag-missing", _del("programs[0].ops[3].op"), "programs[0].ops[3]: 'op' is a required property"),
    ("op-field-missing", _del("programs[0].ops[0].value"), "programs[0].ops[0]: 'value' is a required property"),
    ("op-field-extra", _set("programs[0].ops[3].pages", 1),
     "programs[0].ops[3]: Additional properties are not allowed ('pages' was unexpected)"),
    ("field-of-other-op", _set("programs[1].ops[0].body[2].buf", 0),
     "programs[1].ops[0].body[2]: Additional properties are not allowed ('buf' was unexpected)"),
    ("sem-wait-cond", _set("programs[0].ops[1].body[4].cond", "lt"),
     "programs[0].ops[1].body[4].cond: 'lt' is not one of ['eq', 'ge']"),
    ("sem-inc-by-zero", _set("programs[0].ops[3].by", 0),
     "programs[0].ops[3].by: 0 is less than the minimum of 1"),
    ("sem-inc-at-short", _set("programs[0].ops[3].at", [1]), "programs[0].ops[3].at: [1] is too short"),
    ("loop-count-negative", _set("programs[0].ops[1].count", -1),
     "programs[0].ops[1].count: -1 is less than the minimum of 0"),
    ("loop-count-empty-trip", _set("programs[0].ops[1].count", ""),
     "programs[0].ops[1].count: '' should be non-empty"),
    ("loop-count-bool", _set("programs[0].ops[1].count", False),
     "programs[0].ops[1].count: False is not of type 'integer', 'string', 'object'"),
    ("loop-count-trip-missing", _set("programs[0].ops[1].count", {"scale": 2}),
     "programs[0].ops[1].count: 'trip' is a required property"),
    ("loop-count-scale-zero", _set("programs[0].ops[1].count", {"trip": "t", "scale": 0}),
     "programs[0].ops[1].count.scale: 0 is less than the minimum of 1"),
    ("loop-count-extra", _set("programs[0].ops[1].count", {"trip": "t", "step": 1}),
     "programs[0].ops[1].count: Additional properties are not allowed ('step' was unexpected)"),
    ("loop-body-missing", _del("programs[0].ops[1].body"), "programs[0].ops[1]: 'body' is a required property"),
    ("engine", _set("programs[2].engine", "brisc"),
     "programs[2].engine: 'brisc' is not one of ['reader', 'writer', 'compute']"),
    ("section-starts", _set("programs[0].section_starts", [0, -2]),
     "programs[0].section_starts[1]: -2 is less than the minimum of 0"),
    ("site-long", _set("programs[0].site", [0, 0, 0]),
     "programs[0].site: Expected at most 2 items but found 1 extra: 0"),
    ("capacity-zero", _set("buffers[0].capacity", 0), "buffers[0].capacity: 0 is less than the minimum of 1"),
    ("page-tiles-zero", _set("buffers[1].page_tiles", 0), "buffers[1].page_tiles: 0 is less than the minimum of 1"),
    ("space", _set("buffers[1].space", "dram"), "buffers[1].space: 'dram' is not one of ['local', 'acc']"),
    ("alias-of-string", _set("buffers[2].alias_of", "1"),
     "buffers[2].alias_of: '1' is not of type 'integer', 'null'"),
    ("buffer-id-negative", _set("buffers[0].id", -1), "buffers[0].id: -1 is less than the minimum of 0"),
    ("buffer-missing-dtype", _del("buffers[0].dtype"), "buffers[0]: 'dtype' is a required property"),
    ("sem-role", _set("semaphores[0].role", "mutex"),
     "semaphores[0].role: 'mutex' is not one of "
     "['mcast_ready', 'mcast_valid', 'rendezvous_gather', 'rendezvous_release', 'counter']"),
    ("sem-sites-empty", _set("semaphores[1].sites", []), "semaphores[1].sites: [] should be non-empty"),
    ("sem-host-init-int", _set("semaphores[0].host_init", 1), "semaphores[0].host_init: 1 is not of type 'boolean'"),
    ("resident-size-negative", _set("resident[0].size", -1), "resident[0].size: -1 is less than the minimum of 0"),
    ("resident-missing-site", _del("resident[0].site"), "resident[0]: 'site' is a required property"),
    ("resident-extra", _set("resident[0].phase", 0),
     "resident[0]: Additional properties are not allowed ('phase' was unexpected)"),
    ("group-rect-short", _set("groups[0].rect", [1, 0, 2]), "groups[0].rect: [1, 0, 2] is too short"),
    ("group-loopback-int", _set("groups[1].loopback", 1), "groups[1].loopback: 1 is not of type 'boolean'"),
    ("trip-max-negative", _set("trips[0].max", -1), "trips[0].max: -1 is less than the minimum of 0"),
    ("tensor-role", _set("tensors[0].role", "weight"),
     "tensors[0].role: 'weight' is not one of ['input', 'param', 'output', 'activation', 'state']"),
    ("tensor-shape-zero", _set("tensors[1].shape", [32, 0]), "tensors[1].shape[1]: 0 is less than the minimum of 1"),
    ("memory-size-zero", _set("memory[2].size", 0), "memory[2].size: 0 is less than the minimum of 1"),
    ("sections-empty", _set("sections", []), "sections: [] should be non-empty"),
    ("section-barrier-string", _set("sections[0].barrier_after", "yes"),
     "sections[0].barrier_after: 'yes' is not of type 'boolean'"),
    ("target-number", _set("target", 3), "target: 3 is not of type 'string', 'object'"),
    ("target-empty-name", _set("target", ""), "target: '' should be non-empty"),
    ("target-unknown-name", _set("target", "grayskull"),
     "target: unknown target 'grayskull'; known: blackhole, gpu_sm80, wormhole_b0"),
    ("name-missing", _del("name"), "(document): 'name' is a required property"),
    ("top-level-extra", _set("comment", "hi"),
     "(document): Additional properties are not allowed ('comment' was unexpected)"),
    ("format", _set("format", "verispatial.certificate"),
     "format: expected 'verispatial.program', got 'verispatial.certificate'"),
    ("version", _set("version", 4), "version: this verispatial reads versions 2 and 3, got 4"),
]


@pytest.mark.parametrize(("mutate", "message"), [(m, msg) for _, m, msg in MUTATIONS],
                         ids=[n for n, _, _ in MUTATIONS])
def test_mutated_document_names_its_path(mutate: Callable[[dict[str, Any]], None], message: str) -> None:
    d = copy.deepcopy(BASE)
    mutate(d)
    with pytest.raises(ParseError) as info:
        program_from_dict(d)
    assert str(info.value) == message


INLINE = program_to_dict(WRITTEN[3][1])

TARGET_MUTATIONS: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("mesh-zero", _set("target.mesh", [0, 8]), "target.mesh[0]: 0 is less than the minimum of 1"),
    ("tile-bytes-zero", _set("target.tile_bytes.bf16", 0), "target.tile_bytes.bf16: 0 is less than the minimum of 1"),
    ("acc-spill-string", _set("target.acc_spill", "no"), "target.acc_spill: 'no' is not of type 'boolean'"),
    ("missing-alignment", _del("target.alignment"), "target: 'alignment' is a required property"),
    ("extra-field", _set("target.dram_bytes", 1),
     "target: Additional properties are not allowed ('dram_bytes' was unexpected)"),
    ("source-not-string", _set("target.sources.mesh", 8), "target.sources.mesh: 8 is not of type 'string'"),
]


@pytest.mark.parametrize(("mutate", "message"), [(m, msg) for _, m, msg in TARGET_MUTATIONS],
                         ids=[n for n, _, _ in TARGET_MUTATIONS])
def test_mutated_inline_target_names_its_path(mutate: Callable[[dict[str, Any]], None], message: str) -> None:
    d = copy.deepcopy(INLINE)
    mutate(d)
    with pytest.raises(ParseError) as info:
        program_from_dict(d)
    assert str(info.value) == message


def test_integral_float_loop_count_loads_as_an_int() -> None:
    # JSON Schema accepts 4.0 as an integer; the loaded IR must hold the int (it is used as a range bound).
    d = copy.deepcopy(BASE)
    d["programs"][0]["ops"][1]["count"] = 4.0
    d["buffers"][0]["capacity"] = 4.0
    p = program_from_dict(d)
    loop = p.programs[0].ops[1]
    assert isinstance(loop, Loop)
    assert type(loop.count) is int
    assert loop.count == 4
    assert type(p.buffers[0].capacity) is int
