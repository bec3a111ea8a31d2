"""The tt-metal front end's ``#if`` groups against C's translation phases: comments are removed before directives
are read (a ``#else`` inside a ``/* ... */`` is no directive, in a skipped group too; a comment opened in a directive
continues it), and a ``#if`` is evaluated in intmax_t / uintmax_t with division toward zero and ``!`` binding as
tightly as unary minus. Each input once took the
other group than GCC does; the expected value is GCC's, or a refusal by name."""

from __future__ import annotations

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.frontends.ttmetal import Refused
from verispatial.frontends.ttmetal.preprocess import host_macros, preprocess


def _pp(*lines: str) -> list[str]:
    return preprocess("\n".join(lines), host_macros({}), "k.cpp").text.split("\n")


def test_else_inside_a_comment_of_a_skipped_group_is_no_directive() -> None:
    """GCC skips ``a();`` (the ``#else`` is commented out); the reading once took it as the group's ``#else``."""
    out = _pp("#if 0", "/*", "#else", "*/", "a();", "#endif", "b();")
    assert "a();" not in out
    assert out[6] == "b();"


def test_else_inside_a_comment_of_a_taken_group_is_no_directive() -> None:
    out = _pp("#if 1", "/*", "#else", "*/", "a();", "#endif")
    assert out[4] == "a();"


def test_block_comment_from_a_directive_across_lines_is_refused() -> None:
    """``#if 0 /* ... */ || 1`` over two lines is ``#if 0 || 1`` to GCC (taken); the reading once evaluated
    ``#if 0`` and left ``*/ || 1`` as code."""
    with pytest.raises(Refused, match="block comment from a directive across lines") as e:
        _pp("#if 0 /*", "*/ || 1", "a();", "#endif")
    assert e.value.loc.line == 1
    assert _pp("#if 0 /* one line */ || 1", "a();", "#endif")[1] == "a();"


@pytest.mark.parametrize(("cond", "taken"), [
    ("-1 > 0u", True),  # uintmax_t: -1 is 2**64 - 1 (the reading once compared Python's -1 and 0: false)
    ("1 > -1u", False),
    ("-7 / 2 == -3", True),  # toward zero (once Python's floor: -4)
    ("-7 % 3 == -1", True),  # (once Python's 2)
    ("!2 == 1", False),  # (!2) == 1 (once Python's not (2 == 1): true)
    ("!0 == 1 && !!3", True),
    ("0x1a == 26 && 010 == 8", True),
    ("1 << 40 == 0", False),  # 64-bit intmax_t
    ("M*2 == 4 && 7 / 2 == 3 && 1 - 2 < 0", True),  # M is 2+1: 2+1*2
])
def test_if_is_evaluated_as_gcc_does(cond: str, taken: bool) -> None:
    assert (_pp("#define M 2+1", f"#if {cond}", "a();", "#endif")[2] == "a();") is taken


@pytest.mark.parametrize(("cond", "detail"), [("3 > 2 > 1", "chained comparison"), ("08", ""), ("1 / 0", ""),
                                              ("(1 << 62) * 4", ""), ("1 << 64", "")])
def test_if_gcc_rejects_or_python_reads_otherwise_is_refused(cond: str, detail: str) -> None:
    """A chained comparison is C's ``(3 > 2) > 1`` (false) and Python's ``3 > 2 and 2 > 1``; an octal 8, a division
    by 0, a signed overflow, a shift past 64 bits are errors or undefined."""
    with pytest.raises(Refused, match="#if expression") as e:
        _pp(f"#if {cond}", "a();", "#endif")
    assert detail in e.value.detail
