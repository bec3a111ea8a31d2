"""Structural rules on what ops use: buffer phases, read-only inputs, write-only outputs, duplicate JSON keys."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from verispatial.errors import InvalidProgram, ParseError
from verispatial.ir import (
    WORMHOLE,
    Addr,
    Buffer,
    Engine,
    EngineProgram,
    Pop,
    Program,
    Push,
    ReadBarrier,
    ReadTiles,
    Reserve,
    Role,
    SectionSpan,
    Site,
    Tensor,
    Wait,
    WriteBarrier,
    WriteTiles,
)
from verispatial.ir.serialize import dumps, loads
from verispatial.ir.validate import validate

S = Site(0, 0)


def copy(x_role: Role = Role.INPUT, y_role: Role = Role.OUTPUT) -> Program:
    reader = (Reserve(0, 1), ReadTiles("X", Addr(), 1, 0), ReadBarrier(), Push(0, 1))
    writer = (Wait(0, 1), WriteTiles(0, "Y", Addr(), 1), WriteBarrier(), Pop(0, 1))
    return Program("copy", WORMHOLE,
                   tensors=(Tensor("X", (32, 32), "bf16", x_role), Tensor("Y", (32, 32), "bf16", y_role)),
                   buffers=(Buffer(0, "c_0", S, 0, 1, 2, "bf16"),),
                   programs=(EngineProgram(S, Engine.READER, reader), EngineProgram(S, Engine.WRITER, writer)))


def test_the_plain_copy_is_valid() -> None:
    assert validate(copy()) == []


def test_a_buffer_is_used_only_in_its_own_phase() -> None:
    p = copy()
    p = attrs.evolve(p, sections=(SectionSpan("s0", True), SectionSpan("s1")),
                     buffers=(attrs.evolve(p.buffers[0], section=1),))
    msgs = [str(v) for v in validate(p)]
    assert msgs == [
        "program (0,0).reader ops[0] Reserve: uses buffer 0 of section 1 (phase 1) from phase 0: a buffer is used "
        "only in its own phase",
        "program (0,0).reader ops[1] ReadTiles: uses buffer 0 of section 1 (phase 1) from phase 0: a buffer is used "
        "only in its own phase",
        "program (0,0).reader ops[3] Push: uses buffer 0 of section 1 (phase 1) from phase 0: a buffer is used "
        "only in its own phase",
        "program (0,0).writer ops[0] Wait: uses buffer 0 of section 1 (phase 1) from phase 0: a buffer is used "
        "only in its own phase",
        "program (0,0).writer ops[1] WriteTiles: uses buffer 0 of section 1 (phase 1) from phase 0: a buffer is used "
        "only in its own phase",
        "program (0,0).writer ops[3] Pop: uses buffer 0 of section 1 (phase 1) from phase 0: a buffer is used "
        "only in its own phase",
    ]


def test_inputs_are_read_only_and_outputs_write_only() -> None:
    p = copy(y_role=Role.INPUT)
    assert [str(v) for v in validate(p)] == [
        "program (0,0).writer ops[1] WriteTiles: writes input tensor 'Y': inputs and params are read-only"]
    p = copy(x_role=Role.OUTPUT)
    assert [str(v) for v in validate(p)] == [
        "program (0,0).reader ops[1] ReadTiles: reads output tensor 'X': a tensor that is written and read is an "
        "activation"]


def test_duplicate_json_keys_are_refused() -> None:
    text = dumps(copy())
    assert loads(text) == copy()
    doubled = text.replace('"capacity": 2,', '"capacity": 2, "capacity": 1,', 1)
    with pytest.raises(ParseError, match="key 'capacity' appears twice in one object"):
        loads(doubled)


def test_invalid_program_lists_every_violation(tmp_path: Path) -> None:
    d = json.loads(dumps(copy(y_role=Role.PARAM)))
    with pytest.raises(InvalidProgram, match="writes param tensor 'Y'"):
        loads(json.dumps(d))


def test_semaphore_values_fit_the_32_bit_word() -> None:
    # A word incremented by 2**32 on the board wraps to 0 and an == 2**32 wait never returns; the interpreter's
    # integers do not wrap, so the bound is structural. Increments count as often as their loops can run.
    from verispatial.ir import Engine, EngineProgram, Loop, Semaphore, SemInc, SemWait, Trip, WaitCond

    a, b = Site(0, 0), Site(1, 0)
    big = Program(name="wrap", target=WORMHOLE, semaphores=(Semaphore(0, "s", (a, b)),), programs=(
        EngineProgram(a, Engine.READER, (SemInc(0, b, 2**32),)),
        EngineProgram(b, Engine.READER, (SemWait(0, WaitCond.EQ, 2**32),)),
    ))
    assert [str(v) for v in validate(big)] == [
        "program (0,0).reader ops[0] SemInc: by 4294967296 exceeds the 32-bit word (max 4294967295)",
        "program (1,0).reader ops[0] SemWait: value 4294967296 exceeds the 32-bit word (max 4294967295)",
        "semaphore 0 at (1,0): can be counted to 4294967296 (start + every increment, loops at their max), past the "
        "32-bit word (max 4294967295)",
    ]
    looped = Program(name="loop", target=WORMHOLE, semaphores=(Semaphore(0, "s", (a, b), init=1),),
                     trips=(Trip("t", 2),), programs=(
        EngineProgram(a, Engine.READER, (Loop("t", "t", (Loop("k", 2, (SemInc(0, b, 2**30),)),)),)),
        EngineProgram(b, Engine.READER, (SemWait(0, WaitCond.GE, 1),)),
    ))
    assert [str(v) for v in validate(looped)] == [
        "semaphore 0 at (1,0): can be counted to 4294967297 (start + every increment, loops at their max), past the "
        "32-bit word (max 4294967295)"]
    assert validate(attrs.evolve(looped, trips=(Trip("t", 1),))) == []
