"""The drain of a constant page built by stores (docs/semantics.md "Local-store fills"): a blocking load
(``ckernel::load_blocking``) lands every store of the engine up to the last store to the word it loads — a load
waits only for a store to the same address in the store queue, and stores to L1 are processed in order
(tt-isa-documentation ``WormholeB0/TensixTile/BabyRISCV/MemoryOrdering.md``; ttnn 0.81.1
``ttnn/kernel_lib/index_tile_dataflow.hpp:85-115``, ``data_movement/common/kernels/common.hpp:91-96, 166-179``). So
the tt-metal front end reads a ``load_blocking`` as the drain of the page only when it loads, provably, the word of
the page's last store (``KernelReader.drain_load``): then the ``FillTiles`` at the push is drained, and a NoC
loopback read inside the page may follow it. A load of any other word drains nothing. Each case is a small kernel
written here, certified end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_remote import FIRST, WRITER, _host, _proved, _refused, _refuted
from verispatial.frontends.ttmetal import Refused, import_host
from verispatial.ir.ops import FillTiles
from verispatial.ir.program import walk

#: the page of c_1 as 32-bit words (2048 B)
WORDS = 512


def _filler(stores: tuple[str, ...], load: str | None, after: tuple[str, ...] = ()) -> tuple[str, ...]:
    """(0,0)'s reader: reserves c_1, runs ``stores`` through ``seed`` (a ``uint32_t`` pointer at the write
    pointer), then the blocking load ``load`` (None: none), then ``after``, and pushes."""
    return ("    cb_reserve_back(1, 1);",
            "    const uint32_t page = get_write_ptr(1);",
            "    volatile tt_l1_ptr uint32_t* seed = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(page);",
            *stores,
            *((f"    (void)ckernel::load_blocking({load});",) if load is not None else ()),
            *after,
            "    cb_push_back(1, 1);")


def _path(tmp_path: Path, body: tuple[str, ...]) -> Path:
    return _host(tmp_path, {"filler": ("reader", body), "writer": ("writer", WRITER)},
                 {"0,0": ("filler", "writer"), "1,0": ()})


def _fills(path: Path) -> list[FillTiles]:
    return [op for ep in import_host(path).programs for op in walk(ep.ops) if isinstance(op, FillTiles)]


FORWARD = (f"    for (uint32_t m = 0; m < {WORDS}; ++m) {{ seed[m] = m; }}",)
#: the same words stored last to first: the last store is word 0
BACKWARD = (f"    for (uint32_t m = 0; m < {WORDS}; ++m) {{ seed[{WORDS - 1} - m] = m; }}",)


@pytest.mark.parametrize(("stores", "load"), [
    (FORWARD, f"seed + {WORDS - 1}"),
    (BACKWARD, "seed"),
    (("    seed[3] = 1;", "    *(seed + 7) = 2;"), "seed + 7"),
    # an address held as an integer, cast at the load: the same word
    (FORWARD, f"reinterpret_cast<volatile tt_l1_ptr uint32_t*>(page + {4 * (WORDS - 1)})"),
])
def test_a_fill_drained_by_a_load_of_its_last_stored_word_is_proved(tmp_path: Path, stores: tuple[str, ...],
                                                                    load: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(tmp_path, _filler(stores, load))
    assert _fills(path) == [FillTiles(1, 1, "stores", True)]
    _proved(path, capsys)


@pytest.mark.parametrize(("stores", "load"), [
    (FORWARD, None),
    (FORWARD, "seed"),  # an earlier word: lands the stores up to its own last store only
    (FORWARD, f"seed + {WORDS - 2}"),
    (BACKWARD, f"seed + {WORDS - 1}"),  # the page's last word, but stored first
    (("    seed[3] = 1;", "    *(seed + 7) = 2;"), "seed + 3"),
])
def test_a_fill_whose_load_is_not_of_its_last_stored_word_is_refuted(tmp_path: Path, stores: tuple[str, ...],
                                                                     load: str | None,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """No drain: the push may publish the page before the later stores land, ``async-read-publish`` at it."""
    path = _path(tmp_path, _filler(stores, load))
    assert _fills(path) == [FillTiles(1, 1, "stores", False)]
    hit = _refuted(path, capsys, "async-read-publish")
    assert hit["counterexample"] is not None


def test_a_store_after_the_drain_leaves_the_fill_undrained(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(tmp_path, _filler(FORWARD, f"seed + {WORDS - 1}", ("    seed[0] = 7;",)))
    assert _fills(path) == [FillTiles(1, 1, "stores", False)]
    _refuted(path, capsys, "async-read-publish")


def test_a_second_load_of_the_new_last_word_drains_again(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(tmp_path, _filler(FORWARD, f"seed + {WORDS - 1}",
                                   ("    seed[0] = 7;", "    (void)ckernel::load_blocking(seed);")))
    assert _fills(path) == [FillTiles(1, 1, "stores", True)]
    _proved(path, capsys)


def test_a_branch_on_the_loop_index_leaves_the_last_store_unknown_where_its_sides_differ(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The last iteration stores word 0 (its ``then`` side), the others their own word: the page's last store is
    word 0, not word 15, so the load of word 15 drains nothing (the sides are read from the same state and merged,
    not one after the other)."""
    stores = ("    seed[0] = 0;",
              "    for (uint32_t m = 0; m < 16; ++m) {",
              "        if (m == 15) { seed[0] = 1; } else { seed[m] = m; }",
              "    }")
    path = _path(tmp_path, _filler(stores, "seed + 15"))
    assert _fills(path) == [FillTiles(1, 1, "stores", False)]
    _refuted(path, capsys, "async-read-publish")


@pytest.mark.parametrize(("side", "drain"), [
    ("if (sem0[0] == 7) { seed[0] = 1; }", False),  # the path through the side stores after the drain
    ("if (sem0[0] == 7) { seed[0] = 1; (void)ckernel::load_blocking(seed); }", True),  # every path drained
    ("if (sem0[0] == 7) { seed[0] = 1; (void)ckernel::load_blocking(seed); } else { seed[1] = 1; }", False),
])
def test_a_branch_on_a_value_not_followed_is_drained_only_if_every_path_is(tmp_path: Path, side: str, drain: bool,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(tmp_path, _filler(FORWARD, f"seed + {WORDS - 1}", (f"    {side}",)))
    assert _fills(path) == [FillTiles(1, 1, "stores", drain)]
    if drain:
        _proved(path, capsys)
    else:
        _refuted(path, capsys, "async-read-publish")


@pytest.mark.parametrize(("stores", "drain"), [
    # each iteration loads the page's last word after its store: the last iteration's load is of its last store
    (f"    for (uint32_t m = 0; m < {WORDS}; ++m) {{ seed[m] = m; (void)ckernel::load_blocking(seed + {WORDS - 1}); }}",
     True),
    (f"    for (uint32_t m = 0; m < {WORDS}; ++m) {{ seed[m] = m; if (m == {WORDS - 1}) {{ "
     f"(void)ckernel::load_blocking(seed + {WORDS - 1}); }} }}", True),
    # a store after the load in the same iteration, or the load in the first iteration only: no drain
    (f"    for (uint32_t m = 0; m < {WORDS}; ++m) {{ seed[m] = m; (void)ckernel::load_blocking(seed + {WORDS - 1}); "
     "seed[0] = 1; }", False),
    (f"    for (uint32_t m = 0; m < {WORDS}; ++m) {{ seed[m] = m; if (m == 0) {{ "
     f"(void)ckernel::load_blocking(seed + {WORDS - 1}); }} }}", False),
])
def test_a_load_in_the_loop_drains_where_the_last_iteration_loads_its_last_store(
        tmp_path: Path, stores: str, drain: bool, capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(tmp_path, _filler((stores,), None))
    assert _fills(path) == [FillTiles(1, 1, "stores", drain)]
    if drain:
        _proved(path, capsys)
    else:
        _refuted(path, capsys, "async-read-publish")


def test_a_drain_in_each_iteration_of_a_face_loop_is_the_last_iterations(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``generate_index_tile``'s shape (index_tile_dataflow.hpp:85-115): per face, seed words stored in nested
    loops, the last of them loaded back, NoC loopback reads of the seed down the face; a read barrier, the push.
    The last store of each face is its seed's last word (the inner loops' last iterations)."""
    body = ("    cb_reserve_back(1, 1);",
            "    const uint32_t page = get_write_ptr(1);",
            "    for (uint32_t j = 0; j < 2; ++j) {",
            "        const uint32_t face = page + j * 1024;",
            "        volatile tt_l1_ptr uint32_t* seed = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(face);",
            "        for (uint32_t r = 0; r < 2; ++r) {",
            "            for (uint32_t m = 0; m < 8; ++m) { seed[r * 8 + m] = m; }",
            "        }",
            "        (void)ckernel::load_blocking(seed + 15);",
            "        for (uint32_t k = 1; k < 16; ++k) {",
            "            noc_async_read(get_noc_addr(my_x[0], my_y[0], face), face + k * 64, 64);",
            "        }",
            "    }",
            "    noc_async_read_barrier();",
            "    cb_push_back(1, 1);")
    path = _path(tmp_path, body)
    assert _fills(path) == [FillTiles(1, 1, "stores", True)]
    _proved(path, capsys)
    wrong = list(body)
    wrong[8] = "        (void)ckernel::load_blocking(seed + 7);"  # the last word of row 0, stored before row 1
    _refused(_path(tmp_path, tuple(wrong)), "NoC read of stores not drained", "filler.cpp", FIRST + 10)


def test_the_loopback_address_through_noc_x_and_noc_y_is_this_cores(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``NOC_X(x)`` / ``NOC_Y(y)`` are ``NOC_0_X(noc_index, noc_size_x, (x))`` (ttnn 0.81.1
    tt_metal/hw/inc/internal/tt-1xx/risc_common.h:21-22), which is ``x`` on Wormhole and Blackhole
    (internal/tt-1xx/wormhole/noc_nonblocking_api.h:27-28, blackhole/noc_nonblocking_api.h:45-46): the deepseek_prefill
    combine's ``fill_zero_buffer`` (zero_init_common.hpp:16) addresses its own L1 as ``get_noc_addr(NOC_X(my_x[0]),
    NOC_Y(my_y[0]), buf)``. The same fill as above, read and proved the same; a core other than this one's (NOC_X of
    a coordinate 1 on core (0,0)) is no loopback and is refused as the plain coordinate is."""
    body = _filler(("    for (uint32_t m = 0; m < 16; ++m) { seed[m] = m; }",), "seed + 15",
                   ("    for (uint32_t k = 1; k < 16; ++k) {",
                    "        noc_async_read(get_noc_addr(NOC_X(my_x[0]), NOC_Y(my_y[0]), page), page + k * 64, 64);",
                    "    }",
                    "    noc_async_read_barrier();"))
    path = _path(tmp_path, body)
    assert _fills(path) == [FillTiles(1, 1, "stores", True)]
    _proved(path, capsys)
    plain = _fills(_path(tmp_path, tuple(b.replace("NOC_X(my_x[0]), NOC_Y(my_y[0])", "my_x[0], my_y[0]")
                                         for b in body)))
    assert plain == [FillTiles(1, 1, "stores", True)]
    elsewhere = tuple(b.replace("NOC_X(my_x[0])", "NOC_X(1)") for b in body)
    with pytest.raises(Refused) as theirs:
        import_host(_path(tmp_path, elsewhere))
    with pytest.raises(Refused) as plain_elsewhere:
        import_host(_path(tmp_path, tuple(b.replace("NOC_X(my_x[0])", "1") for b in body)))
    assert theirs.value.construct == plain_elsewhere.value.construct
    assert (theirs.value.loc.file, theirs.value.loc.line) == ("filler.cpp", FIRST + 6)


def test_a_loopback_read_after_a_drain_of_the_wrong_word_is_refused(tmp_path: Path) -> None:
    body = _filler(("    for (uint32_t m = 0; m < 16; ++m) { seed[m] = m; }",), "seed + 14",
                   ("    noc_async_read(get_noc_addr(my_x[0], my_y[0], page), page + 64, 64);",
                    "    noc_async_read_barrier();"))
    _refused(_path(tmp_path, body), "NoC read of stores not drained", "filler.cpp", FIRST + 5)


@pytest.mark.parametrize(("count", "construct", "line"), [
    # read once for its iterations: the store that makes the next iteration's read stale is refused
    (300, "plain store after a read of the page earlier in its loop", FIRST + 8),
    # a loop of few iterations is then read iteration by iteration: the second iteration's read is refused
    (3, "NoC read of stores not drained", FIRST + 6),
])
def test_a_store_later_in_the_loop_of_a_loopback_read_is_refused(tmp_path: Path, count: int, construct: str,
                                                                 line: int) -> None:
    """The read of iteration k + 1 follows iteration k's store, which no load has drained: the drain before the
    loop covers the first iteration only."""
    body = _filler(("    seed[0] = 1;",), "seed",
                   (f"    for (uint32_t k = 0; k < {count}; ++k) {{",
                    "        noc_async_read(get_noc_addr(my_x[0], my_y[0], page), page + 64, 64);",
                    "        noc_async_read_barrier();",
                    "        seed[0] = k;",
                    "    }"))
    _refused(_path(tmp_path, body), construct, "filler.cpp", line)


def test_a_store_earlier_in_the_loop_of_a_read_relying_on_the_state_before_it_is_refused(tmp_path: Path) -> None:
    """The first iteration's store is on the side read first, the later iterations' reads on the other: they rely
    on the drain before the loop, which that store has undone. Refused at the loop."""
    body = _filler(("    seed[0] = 1;",), "seed",
                   ("    for (uint32_t k = 0; k < 300; ++k) {",
                    "        if (k == 0) { seed[0] = k; } else {",
                    "        noc_async_read(get_noc_addr(my_x[0], my_y[0], page), page + 64, 64);",
                    "        noc_async_read_barrier(); }",
                    "    }"))
    _refused(_path(tmp_path, body), "plain store after a read of the page earlier in its loop", "filler.cpp",
             FIRST + 5)


# ------------------------------------------------------------------ the vendor helper (the pinned ttnn wheel)



def _index_tile_host(tmp_path: Path, ttnn_cpp: Path, call: str) -> Path:
    """(0,0)'s reader builds c_1's page with the wheel's ``generate_index_tile`` (``call``), its writer writes it
    out."""
    path = _path(tmp_path, (call,))
    host = json.loads(path.read_text())
    host["include_dirs"] = [str(ttnn_cpp)]
    src = tmp_path / "filler.cpp"
    src.write_text('#include "ttnn/kernel_lib/index_tile_dataflow.hpp"\n' + src.read_text())
    path.write_text(json.dumps(host))
    return path


def test_the_vendor_index_tile_helper_drains_its_seed_and_proves(tmp_path: Path, ttnn_cpp: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """ttnn 0.81.1 ``generate_index_tile<uint16_t>`` (``kernel_lib/index_tile_dataflow.hpp:85-115``): per upper
    face the seed rows stored, ``load_blocking(seed + (seed_words - 1))`` — the word of the face's last store —
    then NoC loopback reads, a read barrier, the lower faces copied, a barrier, the push. Its fill is drained: proved
    (refuted by ``async-read-publish`` while the front end read every fill undrained)."""
    path = _index_tile_host(tmp_path, ttnn_cpp, "    dataflow_kernel_lib::generate_index_tile<uint16_t>(1, 0);")
    assert _fills(path) == [FillTiles(1, 1, "stores", True)]
    _proved(path, capsys)


def test_the_vendor_index_tile_helper_without_a_drain_is_refuted(tmp_path: Path, ttnn_cpp: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Its ``uint32_t`` form (Quasar's Int32 index tile) stores all 1024 words and pushes with no blocking load:
    undrained on a Wormhole target, ``async-read-publish`` at the helper's push. Its 4096 B need an Int32 page: into
    a 2048-B bf16 page the second half of the stores lands past it (refused at the store)."""
    path = _index_tile_host(tmp_path, ttnn_cpp, "    dataflow_kernel_lib::generate_index_tile<uint32_t>(1, 0);")
    with pytest.raises(Refused, match="plain store not into the buffer's next unfilled page"):
        import_host(path)
    host = json.loads(path.read_text())
    for t in host["tensors"]:
        t["dtype"] = "int32"
    for b in host["buffers"]:
        b["entry_size"], b["data_format"] = 4096, "int32"
    path.write_text(json.dumps(host))
    assert _fills(path) == [FillTiles(1, 1, "stores", False)]
    _refuted(path, capsys, "async-read-publish")


SORT = "ttnn/operations/data_movement/sort/device/kernels/dataflow/"


@pytest.mark.parametrize(("kernel", "drains"), [
    (SORT + "writer_cross_core_data_exchange.cpp", [True]),
    (SORT + "coordinator_single_row_multi_core.cpp", [True]),
    (SORT + "writer_single_row_single_core.cpp", [True]),
    ("ttnn/operations/reduction/moe/device/kernels/dataflow/reader_create_index_tensor.cpp", [True, True]),
])
def test_vendor_kernels_building_index_tiles_drain_them(ttnn_cpp: Path, kernel: str, drains: list[bool]) -> None:
    """The wheel's kernels that call ``generate_index_tile<uint16_t>``, read as the corpus survey reads them (every
    arg 2): each index tile's ``FillTiles`` is drained."""
    from verispatial.frontends.ttmetal.cpp import read_kernel
    from verispatial.frontends.ttmetal.host import HostBuffer, HostKernel, HostSemaphore, HostSpec
    from verispatial.frontends.ttmetal.lower import KernelReader, Shared
    from verispatial.ir.core import Engine, Site
    from verispatial.ir.target import WORMHOLE

    bufs = tuple(HostBuffer(f"c_{i}", i, 2048, 8, "bf16", 1, None, None, None) for i in range(64))
    sems = tuple(HostSemaphore(f"s{i}", 0, None) for i in range(16))
    host = HostSpec("survey", WORMHOLE, ttnn_cpp, ttnn_cpp, (), (), bufs, sems, (), ())
    path = ttnn_cpp / kernel
    display = path.relative_to(ttnn_cpp).as_posix()
    reader = KernelReader(Shared(host), HostKernel(path.stem, path, display, Engine.READER, 0, (), {}, (), {}, False),
                          Site(0, 0), {}, read_kernel(path, display, {}, ttnn_cpp, ()), survey=True)
    reader.read()
    assert [op.drain for b in reader.blocks for op in walk(tuple(b.ops)) if isinstance(op, FillTiles)] == drains
