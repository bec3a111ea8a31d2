"""The tt-metal front end's control flow on values it can fold: branches, ``while`` loops and range-for loops whose
condition or range is known statically once the reading folds what the kernel's build and the device headers say
(the kernel's NoC, the NoC parameters, ``std::``-qualified fixed-width types, a struct laid over the runtime args,
an array's elements), and, beside each, the refusal kept where the value is data. Small kernels written here (the
corpus figures these move are in benchmarks/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

import json
from typing import Any

from test_frontend_ttmetal_constructs import _main, _ops, _read

from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import ReadTiles
from verispatial.ir.program import walk


def _read_on(tmp_path: Path, source: str, target: str) -> Any:
    """``_read``'s kernel and host on the ``target`` named."""
    _read(tmp_path, _main())
    host = json.loads((tmp_path / "h.json").read_text())
    (tmp_path / "k.cpp").write_text(source)
    (tmp_path / "h.json").write_text(json.dumps({**host, "target": target}))
    return import_host(tmp_path / "h.json").programs[0]


# ------------------------------------------------------------------ std:: fixed-width types as template arguments


def test_std_qualified_type_argument_is_the_type(tmp_path: Path) -> None:
    """moreh_common.hpp:142-149's ``get_mask_value<T>``: ``std::is_same_v<T, uint16_t>`` of ``T`` bound to
    ``std::uint16_t`` / ``std::uint32_t`` (reader_moreh_softmax_w.cpp:43-45), and ``sizeof(T)`` of it."""
    ep = _read(tmp_path, _main("    put<std::uint16_t>();", "    put<std::uint32_t>();", prelude=(
        "template <typename T> void put() {",
        "    if constexpr (std::is_same_v<T, uint16_t>) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }",
        "    cb_push_back(0, sizeof(T));",
        "}")))
    assert _ops(ep) == [("Reserve", 1), ("Push", 2), ("Reserve", 2), ("Push", 4)]


def test_cast_as_a_template_argument_is_its_value(tmp_path: Path) -> None:
    """dit_rmsnorm_fused_writer.cpp:111-117: ``f<..., static_cast<bool>(fuse_rope)>(...)``, which tree-sitter reads
    as a type, is the cast's value."""
    src = _main("    constexpr uint32_t fuse = get_compile_time_arg_val(0);", "    put<static_cast<bool>(fuse)>();",
                prelude=("template <bool on> void put() {",
                         "    if constexpr (on) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }", "}"))
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [5]})) == [("Reserve", 1)]
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [0]})) == [("Reserve", 2)]


def test_namespaced_struct_as_a_template_argument(tmp_path: Path) -> None:
    """layernorm.cpp:237-238 passes ``policies::FullBlockWithoutPopPolicy``; numeric.h:75 reads its static
    ``pop`` (normalization/kernel_util/compute/policies.h:24-39)."""
    src = _main("    put<policies::WithPop>();", "    put<policies::WithoutPop>();", prelude=(
        "namespace policies {", "struct WithPop { static constexpr bool pop = true; };",
        "struct WithoutPop { static constexpr bool pop = false; };", "}",
        "template <typename P> void put() {",
        "    constexpr bool p = P::pop;",
        "    if constexpr (p) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }", "}"))
    assert _ops(_read(tmp_path, src)) == [("Reserve", 1), ("Reserve", 2)]


def test_type_not_followed_stays_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="branch on a value not known statically") as e:
        _read(tmp_path, _main("    put<MyType>();", prelude=(
            "template <typename T> void put() {",
            "    if constexpr (std::is_same_v<T, uint16_t>) { cb_reserve_back(0, 1); }",
            "}")))
    assert e.value.loc.line == 3


# ------------------------------------------------------------------ the kernel's NoC and the NoC parameters


@pytest.mark.parametrize(("noc", "pages"), [(0, 2), (1, 1)])
def test_noc_index_is_the_kernels_noc(tmp_path: Path, noc: int, pages: int) -> None:
    """``noc_index`` is ``NOC_INDEX``, the kernel's NoC (internal/dataflow/dataflow_api_common.h:10, the JIT's
    define of ``DataMovementConfig.noc``); reader_full_width_sharded.cpp:41 branches on it."""
    src = _main("    if (noc_index == 1) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }")
    assert _ops(_read(tmp_path, src, kernel={"noc": noc})) == [("Reserve", pages)]


@pytest.mark.parametrize(("target", "pages"), [("wormhole_b0", 8192 // 2048 + 32 // 16), ("blackhole", 16384 // 2048 + 64 // 16)])
def test_noc_parameters_of_the_target(tmp_path: Path, target: str, pages: int) -> None:
    """noc_parameters.h's ``NOC_MAX_BURST_SIZE`` (256 words of 32 B on Wormhole, 64 B on Blackhole) and the
    alignment of each kind of transfer, by target (reader_depthwise_conv1d.cpp:87, moreh_common.hpp:767)."""
    src = _main("    cb_reserve_back(0, NOC_MAX_BURST_SIZE / 2048 + NOC_DRAM_READ_ALIGNMENT_BYTES / 16);")
    ep = _read_on(tmp_path, src, target)
    assert _ops(ep) == [("Reserve", pages)]


def test_an_unknown_device_macro_stays_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="branch on a value not known statically") as e:
        _read(tmp_path, _main("    if (NOC_NOT_A_PARAMETER > 1) { cb_reserve_back(0, 1); }"))
    assert "NOC_NOT_A_PARAMETER is not defined" in str(e.value)


def test_fabric_topology_is_a_number(tmp_path: Path) -> None:
    """minimal_default_reader.cpp:32 and :150-163: ``static_cast<Topology>(get_compile_time_arg_val(7))`` compared
    with ``Topology::Linear`` / ``Topology::Ring`` (fabric_edm_types.hpp:11) decides the count of the loop at :196."""
    src = _main("    constexpr Topology topology = static_cast<Topology>(get_compile_time_arg_val(0));",
                "    uint32_t expected = 0;",
                "    if constexpr (topology == Topology::Linear) { expected = 1; }",
                "    else if constexpr (topology == Topology::Ring) { expected = 2; }",
                "    uint32_t received = 0;",
                "    while (received < expected) { cb_reserve_back(0, 1); received++; }")
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [2]})) == [("Reserve", 1)] * 2
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [1]})) == [("Reserve", 1)]
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [3]})) == []


@pytest.mark.parametrize(("cfg", "pages"), [(2, 1), (3, 2)])
def test_accessor_args_flags(tmp_path: Path, cfg: int, pages: int) -> None:
    """``TensorAccessorArgs<0>().is_sharded`` is bit 0 of its config word (tensor_accessor_args.h:25,
    arg_config.hpp:19), ``is_dram`` bit 1; non_zero_indices_sc_reader.cpp:57 branches on the first."""
    src = _main("    constexpr auto args = TensorAccessorArgs<0>();",
                "    if constexpr (args.is_sharded) { cb_reserve_back(0, 2); } else { cb_reserve_back(0, 1); }",
                "    if constexpr (!args.is_dram) { cb_push_back(0, 7); }")
    assert _ops(_read(tmp_path, src, kernel={"compile_time_args": [cfg, 2048]})) == [("Reserve", pages)]
    with pytest.raises(Refused, match="branch on a value not known statically"):  # no config word given
        _read(tmp_path, src)


def test_unscoped_enumerator_named_by_its_namespace(tmp_path: Path) -> None:
    """dispatch_fabric2d_kernel_interface.hpp:182-223: ``enum ScratchBlock : uint32_t { kBlkIndices, ... }`` in a
    namespace, switched on as ``dspf2d::kBlkIndices``."""
    src = _main("    cb_reserve_back(0, ns::sz(ns::kB));", "    cb_push_back(0, ns::kC);", prelude=(
        "namespace ns {", "enum Blk : uint32_t { kA, kB, kC };",
        "constexpr uint32_t sz(uint32_t b) { switch (b) { case kA: return 1; case kB: return 5; default: return 3; } }",
        "}"))
    assert _ops(_read(tmp_path, src)) == [("Reserve", 5), ("Push", 2)]


# ------------------------------------------------------------------ a struct laid over the runtime args


_ARGS = ("struct Args {", "    uint32_t start_id;", "    uint32_t num_pages;", "};")


def test_struct_over_runtime_args_counts_a_while_loop(tmp_path: Path) -> None:
    """reader_tile_interleaved_unified.cpp:179-181: ``const auto* a = reinterpret_cast<const ArgsRepeat*>(
    get_arg_addr(0))`` and ``a->num_pages`` the count of a ``while`` loop: the field is the runtime arg at its word."""
    src = _main("    const auto* a = reinterpret_cast<const Args*>(get_arg_addr(1));",
                "    uint32_t left = a->num_pages;",
                "    while (left > 0) { cb_reserve_back(0, a->start_id); left--; }", prelude=_ARGS)
    ep = _read(tmp_path, src, kernel={"runtime_args": ["addr", "start", "n"]}, args={"start": 2, "n": 3})
    assert _ops(ep) == [("Reserve", 2)] * 3


def test_struct_over_runtime_args_with_a_base_class(tmp_path: Path) -> None:
    """``struct ArgsSlice : ArgsBase`` (reader_tile_interleaved_unified.cpp:51-57): the base's fields come first."""
    src = _main("    const auto* a = reinterpret_cast<const Derived*>(get_arg_addr(1));",
                "    cb_reserve_back(0, a->num_pages);", "    cb_push_back(0, a->extra);",
                prelude=(*_ARGS, "struct Derived : Args { uint32_t extra; };"))
    ep = _read(tmp_path, src, kernel={"runtime_args": ["addr", "start", "n", "x"]}, args={"start": 2, "n": 3, "x": 5})
    assert _ops(ep) == [("Reserve", 3), ("Push", 5)]


@pytest.mark.parametrize("store", ["a->num_pages = 1;", "a->num_pages++;", "a->num_pages += 1;"])
def test_store_into_a_struct_over_runtime_args_is_refused(tmp_path: Path, store: str) -> None:
    """Every read of an arg is the host's value: a kernel changing one through the struct is not read."""
    src = _main("    auto* a = reinterpret_cast<Args*>(get_arg_addr(1));", f"    {store}",
                "    cb_reserve_back(0, a->num_pages);", prelude=_ARGS)
    with pytest.raises(Refused, match="store into a runtime arg") as e:
        _read(tmp_path, src, kernel={"runtime_args": ["addr", "start", "n"]}, args={"start": 2, "n": 3})
    assert e.value.loc.line == 8


def test_struct_over_runtime_args_with_a_narrow_field_is_not_followed(tmp_path: Path) -> None:
    """A field after one not 32 bits wide (or itself narrower) is not at a whole word the reading follows."""
    src = _main("    const auto* a = reinterpret_cast<const Args*>(get_arg_addr(1));",
                "    while (a->num_pages > 0) { cb_reserve_back(0, 1); }",
                prelude=("struct Args {", "    uint16_t start_id;", "    uint32_t num_pages;", "};"))
    with pytest.raises(Refused, match="while loop") as e:
        _read(tmp_path, src, kernel={"runtime_args": ["addr", "start", "n"]}, args={"start": 2, "n": 3})
    assert e.value.loc.line == 8


# ------------------------------------------------------------------ range-for loops


def test_range_for_over_a_constant_array(tmp_path: Path) -> None:
    """reader_llama_reduce_scatter.cpp:94's ``for (uint32_t target_device_id : device_order)``: one iteration per
    element, the loop variable the element."""
    src = _main("    constexpr uint32_t order[] = {3, 1, 2};",
                "    for (uint32_t d : order) { cb_reserve_back(0, d); }",
                "    for (auto d : {4u, 5u}) { cb_push_back(0, d); }",
                "    for (uint8_t d : {258u}) { cb_wait_front(0, d); }")  # a narrow loop variable converts
    assert _ops(_read(tmp_path, src)) == [("Reserve", 3), ("Reserve", 1), ("Reserve", 2), ("Push", 4), ("Push", 5),
                                          ("Wait", 2)]


def test_range_for_over_a_local_array_with_break(tmp_path: Path) -> None:
    src = _main("    uint32_t order[3];", "    order[0] = 1; order[1] = 7; order[2] = 2;",
                "    for (const auto& d : order) { if (d == 7) { break; } cb_reserve_back(0, d); }")
    assert _ops(_read(tmp_path, src)) == [("Reserve", 1)]


def test_range_for_over_a_local_array_sees_stores_of_its_body(tmp_path: Path) -> None:
    """Each element is read when its iteration starts: the body's store into a later element is seen."""
    src = _main("    uint32_t order[2];", "    order[0] = 1; order[1] = 2;",
                "    for (uint32_t d : order) { order[1] = 5; cb_reserve_back(0, d); }")
    assert _ops(_read(tmp_path, src)) == [("Reserve", 1), ("Reserve", 5)]


def test_range_for_over_an_array_not_followed_is_refused(tmp_path: Path) -> None:
    src = _main("    uint32_t order[3];", "    order[0] = 1;",
                "    for (uint32_t d : order) { cb_reserve_back(0, d); }")
    with pytest.raises(Refused, match="page count not known statically"):
        _read(tmp_path, src)
    with pytest.raises(Refused, match="range-for loop") as e:
        _read(tmp_path, _main("    for (uint32_t d : some_global_list) { cb_reserve_back(0, d); }"))
    assert e.value.loc.line == 3


_BLOCKED = (
    "template <typename SizeT = uint32_t>",
    "class Blocked {",
    "public:",
    "    class Block {",
    "    public:",
    "        class Iterator {",
    "        public:",
    "            Iterator(SizeT val) : val_(val) {}",
    "            SizeT operator*() const { return val_; }",
    "            Iterator& operator++() { ++val_; return *this; }",
    "            bool operator!=(const Iterator& other) const { return val_ != other.val_; }",
    "        private:",
    "            SizeT val_;",
    "        };",
    "        Block(SizeT start, SizeT end, SizeT block_size) : start_(start), end_(end), block_size_(block_size) {}",
    "        SizeT size() const { return end_ - start_; }",
    "        SizeT start() const { return start_; }",
    "        SizeT full_block_size() const { return block_size_; }",
    "        SizeT remainder() const { return block_size_ - size(); }",
    "        Iterator begin() const { return Iterator(start_ + SizeT(0)); }",
    "        Iterator end() const { return Iterator(end_); }",
    "    private:",
    "        SizeT start_;",
    "        SizeT end_;",
    "        SizeT block_size_;",
    "    };",
    "    class Iterator {",
    "    public:",
    "        Iterator(SizeT pos, SizeT block_size, SizeT total) : pos_(pos), block_size_(block_size), total_(total) {}",
    "        Block operator*() const { return Block{pos_, std::min(pos_ + block_size_, total_), block_size_}; }",
    "        Iterator& operator++() { pos_ += block_size_; return *this; }",
    "        bool operator!=(const Iterator& other) const { return pos_ < other.pos_; }",
    "    private:",
    "        SizeT pos_;",
    "        SizeT block_size_;",
    "        SizeT total_;",
    "    };",
    "    Blocked(SizeT total, SizeT block_size) : total_(total), block_size_(block_size) {}",
    "    Iterator begin() const { return Iterator(SizeT(0), block_size_, total_); }",
    "    Iterator end() const { return Iterator(total_, block_size_, total_); }",
    "private:",
    "    SizeT total_;",
    "    SizeT block_size_;",
    "};",
    "template <typename SizeT = uint32_t>",
    "inline Blocked<SizeT> blocks(SizeT total, SizeT block_size) { return Blocked<SizeT>(total, block_size); }")


def test_range_for_over_a_class_with_iterators(tmp_path: Path) -> None:
    """normalization/kernel_util/generic/blocked_range.h's ``BlockedRange``: ``for (auto block : blocks(Wt, b))``
    runs the iterators C++ desugars a range-for into (``begin()``, ``end()``, ``operator!=``, ``operator++``,
    ``operator*``), nested classes and all; 5 tiles in blocks of 2 are blocks of 2, 2 and 1."""
    src = _main("    for (auto block : blocks(5u, 2u)) {",
                "        cb_reserve_back(0, block.full_block_size());",
                "        for (auto i : block) { cb_push_back(0, i + 1); }",
                "        if (block.remainder() > 0) { cb_wait_front(0, block.remainder()); }",
                "    }", prelude=_BLOCKED)
    assert _ops(_read(tmp_path, src)) == [
        ("Reserve", 2), ("Push", 1), ("Push", 2), ("Reserve", 2), ("Push", 3), ("Push", 4), ("Reserve", 2),
        ("Push", 5), ("Wait", 1)]


def test_range_for_over_a_runtime_count_is_refused(tmp_path: Path) -> None:
    """A range whose end is a runtime range is not a number at every iteration: refused by the loop's name."""
    src = _main("    uint32_t n = get_arg_val<uint32_t>(1);",
                "    for (auto block : blocks(n, 2u)) { cb_reserve_back(0, block.full_block_size()); }",
                prelude=_BLOCKED)
    with pytest.raises(Refused, match="range-for loop") as e:
        _read(tmp_path, src, kernel={"runtime_args": ["addr", "n"]}, args={"n": "1..8"})
    assert e.value.loc.line == len(_BLOCKED) + 4


#: A range-for over a tensor's pages (nd_reshard_copy_pages_reader.cpp:26-33), one read per page of ``[start, end)``.
_PAGES_LOOP = ("    auto s = TensorAccessor(tensor::t);", "    Noc noc;", "    DataflowBuffer dfb(0);",
               "    auto pages = s.pages(get_arg_val<uint32_t>(1), get_arg_val<uint32_t>(2));",
               "    for (const auto& page : pages) {",
               "        dfb.reserve_back(1);",
               "        noc.async_read(s, dfb, 2048, {.page_id = page.page_id()}, {.offset_bytes = 0});",
               "        noc.async_read_barrier();",
               "        dfb.push_back(1);",
               "    }")


@pytest.mark.parametrize(("start", "end", "sharded", "pages", "refused"), [
    pytest.param(3, 5, False, [3, 4], None, id="pages-3-to-5"),
    # end 0 is the whole tensor: not followed
    pytest.param(3, 0, False, None, ("range-for loop", 7), id="end-0-refused"),
    # an interleaved tensor's iterator begins at the end (pages_address_iterator.h:307-310): no page
    pytest.param(5, 3, False, [], None, id="inverted-interleaved-no-page"),
    # a sharded tensor's iterator steps to the volume and stays there, never equal to 3 (:52-61; the start <= end
    # assert is the watcher's only, :425): the loop never ends and its reserves hang. It was read as no iteration and
    # the kernel proved; refused at the pages call
    pytest.param(5, 3, True, None, ("pages of a sharded tensor from after their end", 6), id="inverted-sharded-refused"),
])
def test_range_for_over_a_tensors_pages(tmp_path: Path, start: int, end: int, sharded: bool, pages: list[int] | None,
                                        refused: tuple[str, int] | None) -> None:
    """nd_reshard_copy_pages_reader.cpp:26-33: ``for (const auto& page : accessor.pages(start, end))``, each page's
    ``page_id()`` its global page id (api/tensor/tensor_accessor.h:290-294, page.h:37); ``accessor.pages(5, 3)`` is no
    page of an interleaved tensor and, of a sharded one, a loop that never ends (refused)."""
    kernel, args = {"runtime_args": ["addr", "start", "end"]}, {"start": start, "end": end}
    if refused is None:
        ep = _read(tmp_path, _main(*_PAGES_LOOP), kernel=kernel, args=args)
        assert [o.addr.base for o in walk(ep.ops) if isinstance(o, ReadTiles)] == pages
        assert _ops(ep) == [("Reserve", 1), ("Push", 1)] * len(pages or [])
        return
    match, line = refused
    if not sharded:
        with pytest.raises(Refused, match=match) as e:
            _read(tmp_path, _main(*_PAGES_LOOP), kernel=kernel, args=args)
    else:
        _read(tmp_path, _main(*_PAGES_LOOP), kernel=kernel, args=args)  # the kernel and host, interleaved
        host = json.loads((tmp_path / "h.json").read_text())
        host["tensors"][0]["shard"] = {"layout": "height", "cores": "0,0", "shape": [32, 256]}
        (tmp_path / "h.json").write_text(json.dumps(host))
        with pytest.raises(Refused, match=match) as e:
            import_host(tmp_path / "h.json")
    assert e.value.loc.line == line


# ------------------------------------------------------------------ stores into struct fields

_S = ("struct S { uint32_t a; uint8_t b; };", "inline void bump(S& t) { t.a = 5; }")


@pytest.mark.parametrize(("stmt", "pages"), [
    ("s.a = 3;", 3), ("s.a++;", 2), ("++s.a;", 2), ("s.a += 2;", 3), ("bump(s);", 5),
    ("s.b = 258; s.a = s.b;", 2),  # a uint8_t field holds its value converted
])
def test_store_into_a_struct_field_is_read_back(tmp_path: Path, stmt: str, pages: int) -> None:
    """A store into a field of a struct variable changes it: the reading used to drop it and read the field's old
    value back (``s.a = 2; cb_reserve_back(0, s.a)`` read as a reserve of 1, a count the kernel never asks)."""
    src = _main("    S s{1, 0};", f"    {stmt}", "    cb_reserve_back(0, s.a);", prelude=_S)
    assert _ops(_read(tmp_path, src)) == [("Reserve", pages)]


def test_store_into_a_nested_field_and_through_this(tmp_path: Path) -> None:
    src = _main("    Outer o{{1, 0}, 1};", "    o.in.a = 4;", "    o.set(6);",
                "    cb_reserve_back(0, o.in.a);", "    cb_push_back(0, o.n);", prelude=(
                    *_S, "struct Outer {", "    S in;", "    uint32_t n;",
                    "    void set(uint32_t v) { this->n = v; }", "};"))
    assert _ops(_read(tmp_path, src)) == [("Reserve", 4), ("Push", 6)]


def test_store_into_a_field_not_followed_is_refused(tmp_path: Path) -> None:
    """A field the struct does not declare (or of an object the reading cannot name) is not silently dropped."""
    src = _main("    S s{1, 0};", "    s.zz = 3;", "    cb_reserve_back(0, s.a);", prelude=_S)
    with pytest.raises(Refused, match="store into a field not followed") as e:
        _read(tmp_path, src)
    assert e.value.loc.line == 6


_SEQ = ("struct St { uint32_t lo; uint32_t n; };",
        "inline St init(uint32_t a) { uint32_t lo = a % 3; return {lo, 3}; }",
        "inline uint32_t next(St& st) { if (++st.lo == st.n) { st.lo = 0; } return st.lo; }")


def test_a_struct_a_loop_changes_is_read_iteration_by_iteration(tmp_path: Path) -> None:
    """sequencers.h:186-199's ``seq_repeat_interleave_next(st)``, a state struct stepped through a reference
    parameter, called in a loop: each iteration sees the state the one before left. A loop read once (a ``Loop`` op
    with one body) would give every iteration the first one's value (reserves of 3, 3 for the kernel's 3, 1)."""
    src = _main("    auto s = init(1);",
                "    for (uint32_t t = 0; t < 2; t++) { uint32_t x = next(s); cb_reserve_back(0, x + 1); }",
                "    cb_push_back(0, s.lo + 1);", prelude=_SEQ)
    assert _ops(_read(tmp_path, src)) == [("Reserve", 3), ("Reserve", 1), ("Push", 1)]


def test_a_struct_a_loop_of_a_runtime_count_changes_is_refused(tmp_path: Path) -> None:
    src = _main("    auto s = init(1);", "    uint32_t n = get_arg_val<uint32_t>(1);",
                "    for (uint32_t t = 0; t < n; t++) { uint32_t x = next(s); cb_reserve_back(0, x + 1); }",
                prelude=_SEQ)
    with pytest.raises(Refused, match="value changed from one iteration to the next") as e:
        _read(tmp_path, src, kernel={"runtime_args": ["addr", "n"]}, args={"n": "1..4"})
    assert e.value.loc.line == 8


# ------------------------------------------------------------------ 64-bit values in a branch condition


@pytest.mark.parametrize(("cond", "ops"), [
    ("65536u * 65536u != 0", [("Reserve", 2)]),  # a uint32_t product wraps to 0 (C++'s unsigned wrap)
    ("0xFFFFFFFFu + 1u == 0", [("Reserve", 1)]),
    ("5ull > 3", [("Reserve", 1)]),  # 64-bit operands whose values fit the word: as 32-bit ones
    ("(uint64_t)7 * 3 == 21", [("Reserve", 1)]),
])
def test_a_condition_on_values_in_the_word_is_folded(tmp_path: Path, cond: str, ops: list[tuple[str, int]]) -> None:
    src = _main(f"    if ({cond}) {{ cb_reserve_back(0, 1); }} else {{ cb_reserve_back(0, 2); }}")
    assert _ops(_read(tmp_path, src)) == ops


@pytest.mark.parametrize(("lines", "ops"), [
    # the conversion to 32 bits is the word: (uint32_t)(2**64 - 1) is 0xFFFFFFFF, (uint32_t)2**32 is 0 (g++)
    (["    uint64_t a = 0;", "    auto b = a - 1;",
      "    if ((uint32_t)b == 0xFFFFFFFFu) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
     [("Reserve", 1)]),
    (["    uint64_t a = 65536;",
      "    if (static_cast<uint32_t>(a * a) == 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
     [("Reserve", 1)]),
    (["    uint64_t a = 0;",
      "    if ((uint32_t)(a - 1) + 1 == 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
     [("Reserve", 1)]),
])
def test_a_64_bit_value_converted_to_32_bits_is_the_word(tmp_path: Path, lines: list[str],
                                                         ops: list[tuple[str, int]]) -> None:
    """An explicit conversion to a 32-bit type truncates a 64-bit value to the word (C++'s modulo 2**32): the
    comparison of the converted value is the word's, folded as g++ folds it, not refused."""
    assert _ops(_read(tmp_path, _main(*lines))) == ops


@pytest.mark.parametrize(("lines", "ops"), [
    # the second report's ok_scast_sub: (uint32_t)(2**64 - 1) is 4294967295 > 5, compared as unsigned words (g++)
    (["    uint64_t a = 0;", "    auto b = a - 1;",
      "    if (static_cast<uint32_t>(b) > 5) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
     [("Reserve", 1)]),
    (["    uint64_t a = 0;", "    if ((uint32_t)(a - 1) <= 7u) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
     [("Reserve", 2)]),
    # ok_int32conv: (int32_t)(2**64 - 1) is -1, below 0 in a signed comparison
    (["    uint64_t a = 0;", "    auto b = a - 1;",
      "    if ((int32_t)b < 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
     [("Reserve", 1)]),
    # 2**32 + 3 as a word is 3
    (["    if ((uint32_t)(65536ull * 65536ull + 3) < 4) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
     [("Reserve", 1)]),
])
def test_an_order_of_a_64_bit_value_converted_to_32_bits_compares_the_word(tmp_path: Path, lines: list[str],
                                                                           ops: list[tuple[str, int]]) -> None:
    """``<``, ``<=``, ``>``, ``>=`` of an explicitly converted value compare the word, unsigned for ``uint32_t`` and
    signed for ``int32_t`` (C++'s usual arithmetic conversions of two 32-bit operands). They were refused as an
    order of a negative and a non-negative number, naming the value before the conversion (-1)."""
    assert _ops(_read(tmp_path, _main(*lines))) == ops


@pytest.mark.parametrize("lines", [
    # the converted word beside a 64-bit value: C++ compares in 64 bits
    ["    uint64_t a = 0;", "    uint64_t c = 5;",
     "    if ((int32_t)(a - 1) < c) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
    # a signed word against an unsigned literal: converted to unsigned by C++, not followed here
    ["    uint64_t a = 0;", "    if ((int32_t)(a - 1) < 5u) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
])
def test_an_order_of_a_converted_word_beside_another_type_stays_refused(tmp_path: Path, lines: list[str]) -> None:
    with pytest.raises(Refused):
        _read(tmp_path, _main(*lines))


@pytest.mark.parametrize("lines", [
    # the conversion covers only its operand: the 64-bit b beside it is still compared in 64 bits
    ["    uint64_t a = 0;", "    auto b = a - 1;",
     "    if ((uint32_t)b == 0xFFFFFFFFu && b == 0xFFFFFFFFu) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
    # a conversion to 16 bits, or to 64, is not the word's
    ["    uint64_t a = 0;", "    if ((uint64_t)(a - 1) == 0xFFFFFFFF) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
    # a division of the converted word below 0 is not followed (unsigned or signed)
    ["    uint64_t a = 0;", "    if ((uint32_t)(a - 1) / 2 == 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
])
def test_a_64_bit_value_beside_or_under_a_conversion_stays_refused(tmp_path: Path, lines: list[str]) -> None:
    with pytest.raises(Refused):
        _read(tmp_path, _main(*lines))


@pytest.mark.parametrize("lines", [
    ["    if (65536ull * 65536ull != 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
    ["    if ((uint64_t)65536 * 65536 != 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
    ["    if (0xFFFFFFFFull + 1 == 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
    ["    uint64_t big = 65536;", "    big = big * 65536;",
     "    if (big != 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
    # below 0 in 64 bits: 2**64 - 1, not the word 0xFFFFFFFF (g++ takes the else branch of each)
    ["    uint64_t a = 0;", "    if (a - 1 == 0xFFFFFFFF) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
    ["    uint64_t a = 0;", "    uint64_t c = a - 1;",
     "    if (c == 0xFFFFFFFF) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
    ["    uint64_t a = 0;", "    if (~a == 0xFFFFFFFF) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
    ["    uint64_t a = 1;", "    if (-a == 0xFFFFFFFF) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
    # an auto variable's type is not deduced: it may be 64 bits
    ["    uint64_t a = 65536;", "    auto b = a;",
     "    if (b * b == 0) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }"],
])
def test_a_64_bit_value_past_the_word_is_refused_not_wrapped(tmp_path: Path, lines: list[str]) -> None:
    """The RISC's words are 32 bits, C++'s ``uint64_t`` / ``long long`` 64: ``65536ull * 65536ull != 0`` is true on
    the device, where the reading's 32-bit word would wrap the product to 0 and take the other branch (the wrong
    program). A 64-bit value past the word is refused by name at its line, never folded as a wrapped word."""
    with pytest.raises(Refused) as e:
        _read(tmp_path, _main(*lines))
    assert e.value.loc.line == 2 + len(lines)
    assert "64-bit" in str(e.value)
