"""The tt-metal front end's leftovers from earlier new users, each on a small kernel written here: an op's field past
the 32-bit word by unsigned arithmetic (C++ wraps it), an order of converted 64-bit constants, a ``break`` out of a
block nested in a ``case``, several reserved pages built at once and pushed one by one, and the reason a correct
loopback flag handshake fails to prove. The expected values are C++'s, or a refusal naming the construct."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.certify.report import Verdict
from verispatial.driver.run import certify
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import Push, SemInc, SemSet, SemWait
from verispatial.ir.program import walk

_WAITER = """#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    volatile tt_l1_ptr uint32_t* ready =
        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(get_compile_time_arg_val(0)));
    noc_semaphore_wait(ready, 1);
}
"""

_INCREMENTER = """#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#include "api/semaphore.h"
void kernel_main() {
    uint32_t ready_addr = get_semaphore(get_compile_time_arg_val(0));
    Semaphore<> rs(get_compile_time_arg_val(0));
    Noc noc;
%s
    %s
    noc_async_atomic_barrier();
}
"""
#: the line of the increment in ``_INCREMENTER``
INC_LINE = 9


def _inc_host(tmp_path: Path, inc: str, prelude: str = "") -> Path:
    """(0,0) waits for its word ``ready`` to reach 1; (1,0) increments it with ``inc`` after ``prelude``."""
    (tmp_path / "waiter.cpp").write_text(_WAITER)
    (tmp_path / "inc.cpp").write_text(_INCREMENTER % (prelude, inc))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "inc", "kernel_root": str(tmp_path),
            "buffers": [], "semaphores": [{"name": "ready", "initial_value": 0}],
            "kernels": [{"name": "waiter", "source": "waiter.cpp", "processor": "reader",
                         "compile_time_args": [{"semaphore": "ready"}]},
                        {"name": "inc", "source": "inc.cpp", "processor": "reader",
                         "compile_time_args": [{"semaphore": "ready"}]}],
            "work_units": [{"cores": "0,0", "kernels": ["waiter"]}, {"cores": "1,0", "kernels": ["inc"]}]}
    path = tmp_path / "host.json"
    path.write_text(json.dumps(host))
    return path


def _increments(p: Any) -> list[int]:
    return [op.by for ep in p.programs for op in walk(ep.ops) if isinstance(op, SemInc)]


INCREMENTS = ["noc_semaphore_inc(get_noc_addr(0, 0, ready_addr), %s);", "rs.up(noc, 0, 0, %s);"]


# ------------------------------------------------------------------ 1. op fields past the word


@pytest.mark.parametrize("inc", INCREMENTS)
@pytest.mark.parametrize(("value", "prelude"), [
    ("0xFFFFFFFFu + 2u", ""),  # uint32_t arithmetic wraps modulo 2**32
    ("0u - 1u + 2u", ""),
    ("k + 2", "    uint32_t k = 0xFFFFFFFF;"),  # a uint32_t variable: the sum is unsigned
    ("k * 2 + 1", "    uint32_t k = 0x80000000;"),
    ("big", "    uint32_t big = 0xFFFFFFFFu; big += 2;"),  # a compound store wraps the same
])
def test_an_increment_wrapped_by_unsigned_arithmetic_is_the_word_cpp_computes(tmp_path: Path, inc: str, value: str,
                                                                             prelude: str) -> None:
    """The increment is 1 on the device: the reading refused it as ``by 4294967297 exceeds the 32-bit word``."""
    p = import_host(_inc_host(tmp_path, inc % value, prelude))
    assert _increments(p) == [1]
    assert certify(p).exit_code == 0


@pytest.mark.parametrize("inc", INCREMENTS)
def test_an_increment_that_wraps_to_zero_is_refused_as_an_increment_of_zero(tmp_path: Path, inc: str) -> None:
    with pytest.raises(Refused, match="semaphore increment of 0") as e:
        import_host(_inc_host(tmp_path, inc % "0xFFFFFFFFu + 1u"))
    assert e.value.loc.line == INC_LINE


@pytest.mark.parametrize("inc", INCREMENTS)
@pytest.mark.parametrize(("value", "prelude"), [
    ("2147483647 + 2", ""),  # int + int past INT32_MAX: undefined behaviour
    ("k + 2", "    int32_t k = 2147483647;"),
    ("k * 2", "    int k = 1 << 30;"),
])
def test_a_signed_overflow_is_refused_by_name(tmp_path: Path, inc: str, value: str, prelude: str) -> None:
    """A signed 32-bit overflow is undefined: never read as the wrapped word (it was read as an increment of
    2147483649)."""
    with pytest.raises(Refused, match="signed 32-bit overflow") as e:
        import_host(_inc_host(tmp_path, inc % value, prelude))
    assert e.value.loc.line == INC_LINE


_SETTER = """#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    volatile tt_l1_ptr uint32_t* ready =
        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(get_compile_time_arg_val(0)));
    %s
    noc_semaphore_wait(ready, %s);
}
"""


@pytest.mark.parametrize("setter", ["noc_semaphore_set(ready, %s);", "*ready = %s;"])
def test_a_semaphore_value_and_threshold_wrapped_by_unsigned_arithmetic_are_the_words(tmp_path: Path,
                                                                                      setter: str) -> None:
    """``noc_semaphore_set`` and ``noc_semaphore_wait`` take ``uint32_t val``: ``0xFFFFFFFFu + 3u`` is 2 in both
    (the store through the pointer the same); the program schema refused them."""
    (tmp_path / "k.cpp").write_text(_SETTER % (setter % "0xFFFFFFFFu + 3u", "0xFFFFFFFFu + 3u"))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "set", "kernel_root": str(tmp_path),
            "buffers": [], "semaphores": [{"name": "ready", "initial_value": 0}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader",
                         "compile_time_args": [{"semaphore": "ready"}]}],
            "work_units": [{"cores": "0,0", "kernels": ["k"]}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    ops = list(walk(import_host(tmp_path / "h.json").programs[0].ops))
    assert [op.value for op in ops if isinstance(op, SemSet)] == [2]
    assert [op.value for op in ops if isinstance(op, SemWait)] == [2]


# ------------------------------------------------------------------ 2. orders of converted 64-bit constants


def _read(tmp_path: Path, *body: str) -> Any:
    """The reader engine of a kernel ``body`` (statements of ``kernel_main``) on core (0,0), buffer c_0 (one bf16
    tile a page, 8 pages)."""
    src = "\n".join(['#include "api/dataflow/dataflow_api.h"', "void kernel_main() {", *body, "}"])
    (tmp_path / "k.cpp").write_text(src)
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "ints", "kernel_root": str(tmp_path),
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 8, "data_format": "bf16"}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader"}],
            "work_units": [{"cores": "0,0", "kernels": ["k"]}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    return import_host(tmp_path / "h.json").programs[0]


def _pushed(ep: Any) -> int:
    return sum(op.pages for op in walk(ep.ops) if isinstance(op, Push))


@pytest.mark.parametrize(("cond", "taken"), [
    ("static_cast<uint32_t>(0xFFFFFFFFFull) > 5", True),  # the word 0xFFFFFFFF
    ("(uint32_t)(0x100000003ull) < 5", True),  # the word 3
    ("static_cast<int32_t>(0xFFFFFFFFFull) < 0", True),  # -1 as a signed word
    ("static_cast<uint8_t>(0x1FFFFFFFFull) == 255", True),
    ("static_cast<uint32_t>(0x1FFFFFFFFull) < static_cast<uint32_t>(0x2FFFFFFFEull)", False),
    ("static_cast<uint32_t>(b) >= 0xFFFFFFFFu", True),  # through a uint64_t variable holding the literal
])
def test_an_order_of_converted_64_bit_constants_is_the_words_compared(tmp_path: Path, cond: str, taken: bool) -> None:
    """C++ converts the 64-bit constant to the word first ([conv.integral]) and compares the words; the reading
    refused every such branch as a value not known statically (its 64-bit literal was not followed at all)."""
    ep = _read(tmp_path, "    uint64_t b = 0xFFFFFFFFFull;", f"    if ({cond}) {{ cb_push_back(0, 1); }}")
    assert _pushed(ep) == int(taken)


@pytest.mark.parametrize("cond", ["0xFFFFFFFFFull > 5", "static_cast<uint32_t>(0xFFFFFFFFFull + 1) > 5",
                                  "static_cast<uint32_t>(b * b) > 5"])
def test_an_order_of_64_bit_values_not_followed_stays_refused(tmp_path: Path, cond: str) -> None:
    """A 64-bit value compared as such, or converted after 64-bit arithmetic the reading does not follow: not known, refused by name."""
    with pytest.raises(Refused, match="branch on a value not known statically"):
        _read(tmp_path, "    uint64_t b = 0xFFFFFFFFFull;", f"    if ({cond}) {{ cb_push_back(0, 1); }}")


# ------------------------------------------------------------------ 5. the sequence protocol's limit named

_FLAG_SENDER = """#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    uint32_t flag_addr = get_semaphore(get_compile_time_arg_val(0));
    volatile tt_l1_ptr uint32_t* flag = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(flag_addr);
    noc_semaphore_set(flag, VALID);
    noc_semaphore_set_multicast_loopback_src(flag_addr, get_noc_multicast_addr(0, 0, 2, 0, flag_addr), 3);
    noc_async_write_barrier();
    noc_semaphore_wait(flag, VALID);
    noc_semaphore_set(flag, INVALID);
}
"""

_FLAG_RECEIVER = """#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    volatile tt_l1_ptr uint32_t* flag =
        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(get_compile_time_arg_val(0)));
    noc_semaphore_wait(flag, VALID);
    noc_semaphore_set(flag, INVALID);
}
"""


def test_a_loopback_flag_handshake_fails_to_prove_naming_the_sequence_protocols_limit(tmp_path: Path) -> None:
    """(0,0) sets its flag VALID, multicasts it to (0,0)-(2,0) with loopback, waits for its own copy and resets it;
    (1,0) and (2,0) wait for VALID and reset their copies. Correct (the interpreter's search finds no deadlock), but
    the loopback makes the flag a sequence, whose destinations only its copies may write: failed to prove, and the
    reason now says it is that documented limit (it named only the receiver's set)."""
    (tmp_path / "sender.cpp").write_text(_FLAG_SENDER)
    (tmp_path / "receiver.cpp").write_text(_FLAG_RECEIVER)
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "lbflag", "kernel_root": str(tmp_path),
            "buffers": [], "semaphores": [{"name": "flag", "initial_value": 0}],
            "kernels": [{"name": "sender", "source": "sender.cpp", "processor": "writer", "noc": 0,
                         "compile_time_args": [{"semaphore": "flag"}]},
                        {"name": "receiver", "source": "receiver.cpp", "processor": "reader",
                         "compile_time_args": [{"semaphore": "flag"}]}],
            "work_units": [{"cores": "0,0", "kernels": ["sender"]}, {"cores": "1,0-2,0", "kernels": ["receiver"]}]}
    (tmp_path / "host.json").write_text(json.dumps(host))
    report = certify(import_host(tmp_path / "host.json"))
    assert report.exit_code == 3
    assert not [r for r in report.results if r.verdict == Verdict.REFUTED]
    failed = [r for r in report.results if r.verdict == Verdict.FAILED]
    assert {r.family for r in failed} == {"semaphore", "deadlock"}, failed
    for r in failed:
        assert "the sequence protocol's documented limit, docs/checker.md 'Words that carry a sequence'" in r.reason, r


# ------------------------------------------------------------------ 4. a break nested in a case


@pytest.mark.parametrize(("case", "pushes"), [
    ("case 1: { { cb_push_back(0, 1); break; } }", 1),  # the break ends a block nested in the case's block
    ("case 1: { { cb_push_back(0, 1); break; } cb_push_back(0, 4); }", 1),  # and skips the rest of the case
    ("case 1: { if (k > 0) { cb_push_back(0, 1); break; } cb_push_back(0, 4); }", 1),  # a branch taken
    ("case 1: { if (k > 5) { cb_push_back(0, 1); break; } cb_push_back(0, 2); }", 4),  # not taken: falls through
    ("case 1: { if (k) { cb_push_back(0, 1); } break; }", 1),
    ("case 1: { { cb_push_back(0, 1); } } case 2: { { cb_push_back(0, 1); break; } }", 2),  # falls into case 2
])
def test_a_break_nested_in_a_case_ends_the_switch_where_it_runs(tmp_path: Path, case: str, pushes: int) -> None:
    """``switch (k)`` with ``k`` 1: C++ ends the switch at the first break that runs, however deep in plain blocks
    or branches decided statically (the reading refused a break not directly in the case or last in its block).
    Case 3 pushes 2 after the fall-through: 2 + 2."""
    ep = _read(tmp_path, "    uint32_t k = 1;", f"    switch (k) {{ {case} case 3: {{ cb_push_back(0, 2); break; }} "
                                                 "default: cb_push_back(0, 8); }")
    assert _pushed(ep) == pushes


def test_a_break_in_a_loop_of_a_case_ends_the_loop_not_the_switch(tmp_path: Path) -> None:
    """A break inside a loop read iteration by iteration is that loop's: the case goes on after it."""
    ep = _read(tmp_path, "    uint32_t k = 1;",
               "    switch (k) { case 1: { uint32_t i = 0; while (true) { cb_push_back(0, 1); if (++i == 3) break; }",
               "        cb_push_back(0, 4); break; } default: cb_push_back(0, 8); }")
    assert _pushed(ep) == 7


@pytest.mark.parametrize(("body", "construct"), [
    ("for (uint32_t i = 0; i < n; ++i) { switch (k) { case 1: { if (i == 0) { cb_push_back(0, 1); break; } "
     "cb_push_back(0, 2); break; } } }", "break"),  # a branch on a loop index: the break runs in some iterations
    ("for (uint32_t i = 0; i < n; ++i) { switch (k) { case 1: { cb_push_back(0, 1); continue; } } }", "continue"),
])
def test_a_break_that_runs_in_some_iterations_only_stays_refused(tmp_path: Path, body: str, construct: str) -> None:
    """In a loop over a runtime range (read once for every iteration), a break under a branch on its index ends
    the switch in some iterations only; a continue is the loop's: both refused by name."""
    (tmp_path / "k.cpp").write_text("\n".join([
        '#include "api/dataflow/dataflow_api.h"', "void kernel_main() {", "    uint32_t n = get_arg_val<uint32_t>(0);",
        "    uint32_t k = 1;", f"    {body}", "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "sw", "kernel_root": str(tmp_path),
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 8, "data_format": "bf16"}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader", "runtime_args": ["n"]}],
            "work_units": [{"cores": "0,0", "kernels": ["k"], "runtime_args": {"k": {"n": "1..8"}}}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    with pytest.raises(Refused, match=construct) as e:
        import_host(tmp_path / "h.json")
    assert e.value.loc.line == 5


def test_a_sum_with_int_min_from_a_shift_is_no_overflow(tmp_path: Path) -> None:
    """``(1 << 31) + 5`` is INT_MIN + 5 in C++ (no overflow); the reading holds ``1 << 31`` as 2**31, so it must not
    call the sum an overflow: the increment is the word 0x80000005."""
    p = import_host(_inc_host(tmp_path, INCREMENTS[0] % "(1 << 31) + 5"))
    assert _increments(p) == [0x80000005]
