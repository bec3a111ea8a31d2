"""``certify``'s text names buffers and semaphore words as ``explain`` does — the program's name with its site, the
id besides only where the name alone is ambiguous — through the one helper both call (``report/names.py``);
obligation ids and ``--json`` keep the ids (they are machine keys). (A new user's find: certify said ``b1`` and
``sem1@(1,0)`` where explain said ``c_0@(1,0)`` and ``release@(1,0)``, and two sites' ``c_0`` were told apart only by
the id.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import A, B, ep, prog

from verispatial.cli import main
from verispatial.ir import Buffer, Engine, Pop, Push, Reserve, Semaphore, Wait
from verispatial.ir.serialize import dumps
from verispatial.report.names import buffer_name, named, word_name

ROOT = Path(__file__).resolve().parent.parent


def _two_c0(tmp_path: Path) -> Path:
    """Two sites each with a buffer named ``c_0`` (ids 0 and 1); (1,0)'s reader reserves 8 pages of its 4."""
    p = prog(ep(A, Engine.READER, Reserve(0, 1), Push(0, 1)), ep(A, Engine.WRITER, Wait(0, 1), Pop(0, 1)),
             ep(B, Engine.READER, Reserve(1, 8), Push(1, 8)), ep(B, Engine.WRITER, Wait(1, 8), Pop(1, 8)),
             buffers=(Buffer(0, "c_0", A, 0, 1, 4, "bf16"), Buffer(1, "c_0", B, 0, 1, 4, "bf16")))
    path = tmp_path / "two_c0.json"
    path.write_text(dumps(p), encoding="utf-8")
    return path


def test_certify_names_a_buffer_with_its_site_and_json_keeps_the_id(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = _two_c0(tmp_path)
    assert main(["certify", str(path), "-q", "--no-cache"]) == 1
    out = capsys.readouterr().out
    line = ("refuted circular-buffer/cb-capacity:(1,0).reader:[0]: reserve of 8 pages on c_0@(1,0) whose capacity is "
            "4: it can never return")
    assert line in out.splitlines()
    assert "      message: reserve(c_0, 8) asks for 8 pages of c_0@(1,0), whose capacity is 4" in out.splitlines()
    assert " b1" not in out
    assert "(b1" not in out
    assert main(["certify", str(path), "-q", "--no-cache", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    [r] = [r for r in doc["results"] if r["name"] == "cb-capacity:(1,0).reader:[0]"]
    assert r["reason"] == "reserve of 8 pages on b1 whose capacity is 4: it can never return"
    # explain's headline is the same line: one naming for both
    assert main(["explain", str(path), "-q", "-o", str(tmp_path / "pictures")]) == 1
    assert line in capsys.readouterr().out.splitlines()


def test_certify_names_a_semaphore_word_as_explain_does(capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "examples" / "broken" / "r_release_overshoot.json"
    assert main(["certify", str(path), "-q", "--no-cache"]) == 1
    lines = capsys.readouterr().out.splitlines()
    # the obligation id keeps its id (sem1@(1,0)); the reason and the counterexample say the word's name
    assert ("refuted semaphore/sem-overshoot:sem1@(1,0): release@(1,0) can exceed 3 while (1,0).reader waits for it "
            "to equal 3 at [2]: it would wait forever") in lines
    assert "    word: release@(1,0)" in lines
    assert "              op: sem_wait(release, eq, 3)" in lines


def test_the_id_is_given_where_the_name_alone_is_ambiguous() -> None:
    """Two buffers named ``c_0`` on one site (from two sections) keep their ids; one of a name of its own does not;
    an id right after a ``:`` is an obligation id's subject and stays; an op's arguments read as ``op_text`` writes
    them."""
    p = prog(buffers=(Buffer(0, "c_0", A, 0, 1, 4, "bf16"), Buffer(1, "c_0", A, 1, 1, 4, "bf16"),
                      Buffer(2, "c_0", B, 0, 1, 4, "bf16")))
    assert [buffer_name(p, i) for i in range(3)] == ["c_0@(0,0) (b0)", "c_0@(0,0) (b1)", "c_0@(1,0)"]
    assert named(p, "b1 (c_0) and b2 hold pages; balance-cb:b1 is refuted at reserve(b1, 2)") == \
        "c_0@(0,0) (b1) and c_0@(1,0) hold pages; balance-cb:b1 is refuted at reserve(c_0, 2)"
    assert named(p, "b9 and sem0@(0,0) are not this program's") == "b9 and sem0@(0,0) are not this program's"
    q = prog(sems=(Semaphore(0, "s0", (A, B), 0), Semaphore(1, "s0", (A,), 0)))
    assert word_name(q, 0, B) == "s0@(1,0)"
    assert word_name(q, 0, A) == "s0@(0,0) (sem0)"
    assert named(q, "sem0@(1,0) is 2, sem1 (s0)@(0,0) is 1") == "s0@(1,0) is 2, s0@(0,0) (sem1) is 1"
