"""Where the tt-metal front end looks for an ``#include``d file, against GCC under the JIT's include path: a quoted
include (or a ttnn one in angle brackets) that resolves nowhere stops GCC with a fatal error, so the reading must not
pass it over (a skipped header can hide a ``#define`` that flips an ``#ifdef`` the reading then takes the other way);
one the JIT's include path resolves (``experimental/kernel_args.h`` under ``tt_metal/hw/inc``) is a device header,
modelled by name. ``#line`` changes the file:line GCC reports for the lines after it, which the reading does not
follow: refused by name. The kernels are the one-core pipeline of ``test_frontend_ttmetal_newuser``."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_newuser import FIRST, PUSH, _pipeline, _refused, _verdict
from verispatial.frontends.ttmetal import Refused
from verispatial.frontends.ttmetal.preprocess import host_macros, preprocess
from verispatial.frontends.ttmetal.vendor import wheel_root

#: a barrier the kernel needs, under a macro a header of the op would define: without it the push publishes a tile
#: still landing
_GUARDED = ("    for (uint32_t j = 0; j < 2; ++j) {", "        cb_reserve_back(0, 1);",
            "        noc_async_read_tile(start_id + j, s, get_write_ptr(0));", "#ifndef SKIP_BARRIER",
            "        noc_async_read_barrier();", "#endif", "        cb_push_back(0, 1);", "    }")


def test_a_quoted_include_found_nowhere_is_refused(tmp_path: Path) -> None:
    """``#include "op_config.hpp"`` with no such file: GCC stops ('No such file or directory'). The reading passed it
    over and took ``#ifndef SKIP_BARRIER`` as taken, whatever the missing header defines."""
    e = _refused(_pipeline(tmp_path, _GUARDED, 2, top=('#include "op_config.hpp"',)), "#include not found",
                 "reader.cpp", 1)
    assert "op_config.hpp" in e.detail


def test_a_ttnn_include_in_angle_brackets_found_nowhere_is_refused(tmp_path: Path) -> None:
    _refused(_pipeline(tmp_path, _GUARDED, 2, top=("#include <ttnn/operations/no_such_op/config.hpp>",)),
             "#include not found", "reader.cpp", 1)


@pytest.mark.parametrize("name", ["op_config.hpp", "cstdnit", "fabric/fabric_edm_packet_header.hpp"])
def test_an_angle_bracket_include_found_nowhere_is_refused(tmp_path: Path, name: str) -> None:
    """``#include <op_config.hpp>`` (or a misspelt system header) that no include directory holds and that is not a
    header of the compiler's own library: GCC stops ('No such file or directory'); passed over, its ``#define`` would
    be missing from the ``#ifndef`` after it."""
    e = _refused(_pipeline(tmp_path, _GUARDED, 2, top=(f"#include <{name}>",)), "#include not found", "reader.cpp", 1)
    assert name in e.detail


def test_an_angle_bracket_include_found_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``<...>`` header that is where the reading finds quoted ones is read as they are, and its ``#define``
    removes the barrier (refuted): passed over, the kernel would be read with the barrier GCC drops."""
    top = ("#include <op_config.hpp>",)
    rc, rules = _verdict(_pipeline(tmp_path, _GUARDED, 2, {"op_config.hpp": "#define SKIP_BARRIER 1\n"}, top), capsys)
    assert rc == 1
    assert rules


def test_an_include_not_found_inside_a_helper_is_refused_there(tmp_path: Path) -> None:
    files = {"helper.hpp": '#pragma once\n#include "gone.hpp"\n'}
    _refused(_pipeline(tmp_path, _GUARDED, 2, files, ('#include "helper.hpp"',)), "#include not found", "helper.hpp",
             2)


def test_the_header_found_is_read_and_decides_the_ifndef(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same kernel with the header present: its ``#define`` removes the barrier (refuted), its absence keeps it
    (proved) — what the refusal above stands for."""
    top = ('#include "op_config.hpp"',)
    rc, rules = _verdict(_pipeline(tmp_path, _GUARDED, 2, {"op_config.hpp": "#define SKIP_BARRIER 1\n"}, top), capsys)
    assert rc == 1
    assert rules
    assert _verdict(_pipeline(tmp_path, _GUARDED, 2, {"op_config.hpp": "// nothing\n"}, top), capsys) == (0, set())


@pytest.mark.parametrize("name", ["noc_config.h", "llk_settings.h", "api/op_config.h", "risc_common_cfg.h"])
def test_a_quoted_include_beside_the_kernel_named_like_a_device_header_is_read(
        tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """GCC finds a quoted include beside the including file first: the kernel's own ``"noc_config.h"`` defining
    ``SKIP_BARRIER`` removes the barrier (a push of a tile still landing, refuted). The reading passed over every
    name with a device API prefix (``noc_``, ``llk_``, ``api/``, ``risc_``) and proved the kernel."""
    (tmp_path / "api").mkdir()
    rc, rules = _verdict(_pipeline(tmp_path, _GUARDED, 2, {name: "#define SKIP_BARRIER 1\n"}, (f'#include "{name}"',)),
                         capsys)
    assert rc == 1
    assert rules


@pytest.mark.parametrize("top", [("#if 0", '#include "op_config.hpp"', "#endif"),
                                 ("#ifdef NOT_DEFINED", '#include "op_config.hpp"', "#endif"),
                                 ("#include <cstdint>", "#include <array>"),
                                 ("#include <stdint.h>", "#include <sys/types.h>", "#include <type_traits>"),
                                 ('#include "api/dataflow/dataflow_api.h"',)])
def test_includes_gcc_does_not_open_or_finds_on_its_own_path_are_read(
        tmp_path: Path, top: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    """A missing header in a group GCC skips is never opened; system headers and the device API's are the
    compiler's and the JIT's (modelled by name)."""
    assert _verdict(_pipeline(tmp_path, _GUARDED, 2, top=top), capsys) == (0, set())


def test_a_device_header_on_the_jits_include_path_is_modelled_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``experimental/kernel_args.h`` (663 includes in the 0.81.1 kernels) is not beside the kernel, in ttnn's tree or
    under a device prefix: it resolves under ``tt_metal/hw/inc``, on the JIT's include path, as GCC finds it."""
    if wheel_root() is None:
        pytest.skip("the pinned ttnn wheel is not cached")
    top = ('#include "experimental/kernel_args.h"',)
    assert _verdict(_pipeline(tmp_path, _GUARDED, 2, top=top), capsys) == (0, set())


def test_line_directive_is_refused(tmp_path: Path) -> None:
    """``#line 100 "gen.cpp"``: GCC reports the next line as gen.cpp:100, the reading would point at reader.cpp."""
    body = ('#line 100 "gen.cpp"', f"    {PUSH}", f"    {PUSH}")
    e = _refused(_pipeline(tmp_path, body, 2), "#line", "reader.cpp", FIRST)
    assert "gen.cpp" in e.loc.text


@pytest.mark.parametrize("directive", ["#line 7", '# line 7 "x.cpp"', "#line LINE_NO", '# 7 "x.cpp" 2'])
def test_every_form_of_line_is_refused(directive: str) -> None:
    with pytest.raises(Refused, match="#line") as e:
        preprocess("\n".join(["a();", directive, "b();"]), host_macros({"LINE_NO": "9"}), "k.cpp")
    assert e.value.loc.line == 2


def test_line_in_a_skipped_group_is_not_refused() -> None:
    out = preprocess("\n".join(["#if 0", "#line 7", "#endif", "b();"]), host_macros({}), "k.cpp").text.split("\n")
    assert out[3] == "b();"


def test_an_include_nested_past_the_depth_followed_is_refused(tmp_path: Path) -> None:
    """h0.hpp includes h1.hpp ... h9.hpp, which defines SKIP_BARRIER: the reading follows 8 levels and passed the
    rest over, taking the ``#ifndef`` GCC does not."""
    files = {f"h{i}.hpp": f'#pragma once\n#include "h{i + 1}.hpp"\n' for i in range(9)}
    files["h9.hpp"] = "#define SKIP_BARRIER 1\n"
    _refused(_pipeline(tmp_path, _GUARDED, 2, files, ('#include "h0.hpp"',)), "#include nested too deep", "h7.hpp", 2)


@pytest.mark.parametrize(("directive", "construct"), [('#include_next "op_config.hpp"', "#include_next"),
                                                      ('#import "op_config.hpp"', "#import"),
                                                      ("#inclde \"op_config.hpp\"", "unknown preprocessing directive")])
def test_includes_of_other_forms_and_unknown_directives_are_refused(tmp_path: Path, directive: str,
                                                                    construct: str) -> None:
    """``#include_next`` and ``#import`` read a file as ``#include`` does (op_config.hpp defines SKIP_BARRIER, and GCC
    keeps no barrier); a misspelt directive stops GCC ('invalid preprocessing directive'). All three were passed over
    and the kernel read with its barrier."""
    files = {"op_config.hpp": "#define SKIP_BARRIER 1\n"}
    e = _refused(_pipeline(tmp_path, _GUARDED, 2, files, top=(directive,)), construct, "reader.cpp", 1)
    assert e.loc.text == directive


@pytest.mark.parametrize("directive", ["#pragma GCC unroll 4", "#warning check", '#ident "v1"', "#"])
def test_directives_that_change_no_reading_are_passed_over(directive: str) -> None:
    out = preprocess("\n".join(["a();", directive, "b();"]), host_macros({}), "k.cpp").text.split("\n")
    assert out[2] == "b();"


def test_an_unknown_directive_in_a_skipped_group_is_not_refused() -> None:
    out = preprocess("\n".join(["#if 0", "#inclde x", "#endif", "b();"]), host_macros({}), "k.cpp").text.split("\n")
    assert out[3] == "b();"


def _release(top: Path, headers: dict[str, str]) -> Path:
    """An unpacked release under ``top`` (``ttnn/ttnn/cpp`` and, with ``headers``, its ``ttnn/tt_metal/`` device
    tree): the kernel root of ``k.cpp``, which includes ``"ttnn/operations/op/helper.hpp"``."""
    root = top / "ttnn/ttnn/cpp"
    (root / "ttnn/operations/op").mkdir(parents=True)
    (root / "k.cpp").write_text('#include "ttnn/operations/op/helper.hpp"\nvoid kernel_main() {}\n')
    for name, text in headers.items():
        (top / "ttnn/tt_metal" / name).parent.mkdir(parents=True, exist_ok=True)
        (top / "ttnn/tt_metal" / name).write_text(text)
    return root


def test_a_release_reads_its_own_device_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ttnn 0.70.1's moe_utils.hpp -> minimal_ccl_common.hpp:12 includes ``"fabric/fabric_edm_packet_header.hpp"``,
    which its JIT finds as ``tt_metal/fabric/fabric_edm_packet_header.hpp`` (the ``tt_metal`` include dir); 0.81.1
    moved it to ``tt_metal/hw/inc/hostdev/``. The release's own tree decides; a header only the pinned wheel has is
    one GCC does not find for that release."""
    from verispatial.frontends.ttmetal import vendor
    from verispatial.frontends.ttmetal.cpp import read_kernel

    pinned = tmp_path / "pinned"
    (pinned / "ttnn/tt_metal/hw/inc/hostdev").mkdir(parents=True)
    (pinned / "ttnn/tt_metal/hw/inc/hostdev/moved.hpp").write_text("#pragma once\n")
    monkeypatch.setattr(vendor, "wheel_root", lambda download=False, version=vendor.TTNN_VERSION: pinned)
    own = {"hw/inc/api/dataflow/dataflow_api.h": "#pragma once\n", "fabric/fabric_edm_packet_header.hpp": "\n"}
    root = _release(tmp_path / "rel", own)
    helper = root / "ttnn/operations/op/helper.hpp"
    helper.write_text('#pragma once\n#include "fabric/fabric_edm_packet_header.hpp"\n')
    read_kernel(root / "k.cpp", "k.cpp", {}, root, ())
    helper.write_text('#pragma once\n#include "hostdev/moved.hpp"\n')
    with pytest.raises(Refused, match="#include not found") as e:
        read_kernel(root / "k.cpp", "k.cpp", {}, root, ())
    assert e.value.loc.file.endswith("helper.hpp")
    assert e.value.loc.line == 2
    # kernels with no device tree above them (a user's, or a release cached before its headers were) fall back on
    # the pinned wheel's
    bare = _release(tmp_path / "bare", {})
    (bare / "ttnn/operations/op/helper.hpp").write_text('#pragma once\n#include "hostdev/moved.hpp"\n')
    read_kernel(bare / "k.cpp", "k.cpp", {}, bare, ())
