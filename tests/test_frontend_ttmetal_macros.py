"""Macro expansion in the tt-metal front end's preprocessor (verispatial/frontends/ttmetal/macros.py): function-like
macros in ``#if`` and in code, ``#``, ``##``, ``__VA_ARGS__``, rescanning and hide sets as GCC expands them, lines
kept; and binary_ng's ``HAS_ACTIVATIONS(op)`` read from the wheel with its program factory's defines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.frontends.ttmetal import Refused, import_host, vendor
from verispatial.frontends.ttmetal.preprocess import host_macros, preprocess
from verispatial.ir.ops import Compute, Pop, Push, Reserve, Wait
from verispatial.ir.program import walk


def _pp(*lines: str, defines: dict[str, str] | None = None) -> list[str]:
    return preprocess("\n".join(lines), host_macros(defines or {}), "k.cpp").text.split("\n")


def test_function_like_macros_in_code() -> None:
    out = _pp("#define SQ(x) ((x) * (x))", "int a = SQ(3 + 1);", "int b = SQ;")
    assert out[1] == "int a = ((3 + 1) * (3 + 1));"
    assert out[2] == "int b = SQ;"  # a function-like macro's name not followed by ( is not an invocation


def test_an_invocation_over_several_lines_keeps_the_lines() -> None:
    """The expansion goes on the line of the macro's name; the lines its arguments took are left empty, so the
    statement after it keeps its number."""
    out = _pp("#define CALL(f, a, b) f(a, b)", "    CALL(go,", "         1,", "         2); after();")
    assert out[1] == "    go(1, 2)"
    assert out[2] == ""
    assert out[3] == "; after();"


def test_stringize_paste_and_rescan() -> None:
    out = _pp("#define A 1",
              "#define CAT(a, b) a##b",
              "#define XCAT(a, b) CAT(a, b)",
              "#define STR(x) #x",
              "CAT(A, 2) XCAT(A, 2) STR(a  +  \"b\")")
    # an operand of ## is not expanded first; through XCAT it is (C17 6.10.3.1)
    assert out[4] == 'A2 12 "a + \\"b\\""'


def test_variadic_macros_and_the_gnu_comma() -> None:
    out = _pp("#define CALL(f, ...) f(0, ##__VA_ARGS__)", "#define FIRST(a, ...) a", "CALL(g) CALL(g, 1, 2) FIRST(x, y, z)")
    assert out[2] == "g(0) g(0, 1, 2) x"


def test_a_macro_is_not_expanded_inside_its_own_expansion() -> None:
    out = _pp("#define f(x) f(x + 1)", "#define g f", "f(2) g(3)")
    assert out[2] == "f(2 + 1) f(3 + 1)"


def test_comments_are_not_expanded() -> None:
    out = _pp("#define F(x) boom", "// F(1)", "/* F(2)", "   F(3) */ F(4)")
    assert out[1:] == ["// F(1)", "/* F(2)", "   F(3) */ boom"]


#: an emptiness test in the style of binary_ng's eltwise_utils_common.hpp (written here): EMPTY(x) is 1 when x
#: expands to nothing, else 0
_EMPTY = ("#define FIRST_(a, ...) a",
          "#define FIRST(...) FIRST_(__VA_ARGS__, )",
          "#define CAT_(a, ...) a##__VA_ARGS__",
          "#define CAT(a, ...) CAT_(a, __VA_ARGS__)",
          "#define PROBE_R_1 1,",
          "#define PROBE_R_PROBE 0,",
          "#define PROBE(...) 1",
          "#define PARENS(...) FIRST(CAT(PROBE_R_, PROBE __VA_ARGS__))",
          "#define NONFUNC(...) ()",
          "#define EMPTY_0(...) PARENS(NONFUNC __VA_ARGS__())",
          "#define EMPTY_1(...) 0",
          "#define EMPTY(...) CAT(EMPTY_, PARENS(__VA_ARGS__))(__VA_ARGS__)",
          "#define NOT_0 1",
          "#define NOT_1 0",
          "#define HAS(op) CAT(NOT_, EMPTY(WORK_##op(0)))")


@pytest.mark.parametrize(("defines", "taken"), [
    ({"WORK_A(i)": ""}, "none"),                 # defined empty: nothing to do
    ({"WORK_A(i)": "exp_tile(i);"}, "some"),      # defined with work
    ({}, "some"),                                 # not defined: WORK_A(0) stays, not empty (as GCC reads it)
])
def test_an_emptiness_test_in_if_and_in_code(defines: dict[str, str], taken: str) -> None:
    out = _pp(*_EMPTY, "#if HAS(A)", "some();", "#else", "none();", "#endif", "int h = HAS(A);", defines=defines)
    assert next(x for x in out[len(_EMPTY):] if x.strip()) == f"{taken}();"
    assert out[-1] == f"int h = {int(taken == 'some')};"


def test_macros_that_cannot_be_expanded_are_refused_by_name() -> None:
    with pytest.raises(Refused, match="macro invoked with the wrong number of arguments") as e:
        _pp("#define F(a, b) a", "", "x = F(1);")
    assert e.value.loc.line == 3
    with pytest.raises(Refused, match="macro arguments across a directive"):
        _pp("#define F(a) a", "x = F(1,", "#ifdef Z", "2", "#endif", ");")
    with pytest.raises(Refused, match="#if expression"):  # a function-like macro not defined (GCC's error)
        _pp("#if WORK(1)", "#endif")


def test_host_defines_give_function_like_macros_to_a_kernel(tmp_path: Path) -> None:
    """The JIT's ``-D'PROCESS(i)=...'`` as a host define ``"PROCESS(i)": ...``: expanded in code into the SFPU op."""
    (tmp_path / "compute.cpp").write_text("\n".join([
        '#include "api/compute/eltwise_binary.h"',
        "void kernel_main() {",
        "    cb_wait_front(0, 1); cb_wait_front(1, 1); cb_reserve_back(16, 1);",
        "    tile_regs_acquire();",
        "    BINARY_OP(0, 1, 0, 0, 0);",
        "    PROCESS(0)",
        "    tile_regs_commit(); tile_regs_wait(); pack_tile(0, 16); tile_regs_release();",
        "    cb_push_back(16, 1); cb_pop_front(0, 1); cb_pop_front(1, 1);",
        "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "m", "kernel_root": str(tmp_path),
            "tensors": [],
            "buffers": [{"name": n, "index": i, "entry_size": 2048, "entries": 2, "data_format": "bf16"}
                        for n, i in (("a", 0), ("b", 1), ("out", 16))],
            "kernels": [{"name": "compute", "source": "compute.cpp", "processor": "compute",
                         "defines": {"BINARY_OP": "add_tiles", "PROCESS(i)": "exp_tile_init(); exp_tile(i);"}}],
            "work_units": [{"cores": "0,0", "kernels": ["compute"]}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    ep = import_host(tmp_path / "h.json").programs[0]
    assert [op.kind for op in walk(ep.ops) if isinstance(op, Compute)] == ["add", "exp"]


# ------------------------------------------------------------------ binary_ng from the wheel

@pytest.fixture(scope="module")
def ttnn_wheel() -> Path:
    root = vendor.wheel_root(download=True)
    if root is None:
        pytest.skip(f"the ttnn {vendor.TTNN_VERSION} wheel is not cached and could not be downloaded (offline?)")
    return root


def _binary_ng(tmp_path: Path, wheel: Path, activations: dict[str, str]) -> Any:
    """binary_ng's no-broadcast FPU compute kernel with the defines its program factory sets for ``add``
    (binary_ng_utils.cpp ``OpConfig::as_defines``: BINARY_OP, BINARY_OP_TYPE; ``add_activation_defines``: one
    ``PROCESS_<operand>_ACTIVATIONS(i)`` per operand, empty when it has none), 2 tiles a cycle, 4 tiles."""
    defines = {"BINARY_OP": "add_tiles", "BINARY_OP_TYPE": "EltwiseBinaryType::ELWADD",
               **{f"PROCESS_{op}_ACTIVATIONS(i)": activations.get(op, "") for op in ("LHS", "RHS", "POST")}}
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "binary_ng",
            "kernel_root": str(wheel / "ttnn" / "ttnn" / "cpp"), "tensors": [],
            "buffers": [{"name": f"c_{i}", "index": i, "entry_size": 2048, "entries": 4, "data_format": "bf16"}
                        for i in (0, 1, 2, 3, 4)],
            "kernels": [{"name": "compute", "processor": "compute", "compile_time_args": [2],
                         "source": "ttnn/operations/eltwise/binary_ng/device/kernels/compute/"
                                   "eltwise_binary_no_bcast.cpp",
                         "runtime_args": ["num_tiles"], "defines": defines}],
            "work_units": [{"cores": "0,0", "kernels": ["compute"], "runtime_args": {"compute": {"num_tiles": 4}}}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    return import_host(tmp_path / "h.json").programs[0]


def _buffer_ops(ep: Any) -> list[tuple[str, int, int]]:
    return [(type(op).__name__, op.buf, op.pages) for op in walk(ep.ops) if isinstance(op, (Reserve, Push, Wait, Pop))]


def test_binary_ng_without_activations_reads_its_plain_path(tmp_path: Path, ttnn_wheel: Path) -> None:
    """``HAS_ACTIVATIONS(LHS)`` is 0 for an empty ``PROCESS_LHS_ACTIVATIONS(i)``: no preprocess pass, the binary on
    c_0 and c_1 into c_2 (eltwise_binary_no_bcast.cpp:20-66)."""
    ep = _binary_ng(tmp_path, ttnn_wheel, {})
    assert [op.kind for op in walk(ep.ops) if isinstance(op, Compute)] == ["add"]
    assert _buffer_ops(ep) == [("Wait", 0, 2), ("Wait", 1, 2), ("Reserve", 2, 2), ("Push", 2, 2), ("Pop", 0, 2),
                               ("Pop", 1, 2)]


def test_binary_ng_with_an_lhs_activation_reads_its_preprocess_pass(tmp_path: Path, ttnn_wheel: Path) -> None:
    """``PROCESS_LHS_ACTIVATIONS(i)`` not empty: ``PREPROCESS(LHS, ...)`` pastes ``PREPROCESS_1`` (eltwise_utils.hpp),
    which copies c_0 through the activation into c_3, the binary reading c_3."""
    ep = _binary_ng(tmp_path, ttnn_wheel, {"LHS": "exp_tile_init(); exp_tile(i);"})
    kinds = [op.kind for op in walk(ep.ops) if isinstance(op, Compute)]
    assert "exp" in kinds
    assert kinds[-1] == "add"
    assert ("Push", 3, 2) in _buffer_ops(ep)
