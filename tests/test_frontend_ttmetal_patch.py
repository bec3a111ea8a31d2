"""Stores into a tile a NoC read filled (``KernelReader.patch_store``): matmul's padding of its last K tile after the
read (ttnn 0.81.1 ``ttnn/operations/matmul/device/kernels/dataflow/reader_bmm_tile_layout_in0.cpp:74-94``: read,
``noc.async_read_barrier()``, ``pad_last_ktile``, which stores through ``kernel_helper_functions/pad_tile.hpp:91`` and
drains with a blocking load of the tile's last word, :406-416). The tile stays the read's ``ReadTiles``; the stores are
no op of their own when the read has landed before them, they stay inside the tile, and a blocking load of the word of
the last store lands them before the push: a ``FillTiles`` of no tile (``kind`` ``patch``, docs/semantics.md "Local-store
fills") before the push, drained or not. Stores not drained before the push are refuted (``async-read-publish`` at the
push: the push may publish the tile before they land); a store while the read may still land over it, and a store
outside the read's tile, are refused by name at their line. Each case is a small kernel written here."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_remote import FIRST, WRITER, _host, _ops, _proved, _refused, _refuted
from verispatial.frontends.ttmetal import import_host
from verispatial.ir.ops import PATCH, FillTiles, ReadTiles
from verispatial.ir.program import walk

#: (0,0)'s reader up to its read of src's tile 0 into c_1's reserved page; ``t`` the page as 32-bit words
READ = ("    cb_reserve_back(1, 1);",
        "    const uint32_t page = get_write_ptr(1);",
        "    volatile tt_l1_ptr uint32_t* t = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(page);",
        "    noc_async_read_tile(0, s, page);")
BARRIER = "    noc_async_read_barrier();"
#: the right half of the tile zeroed (the padding), the last store at word 511
PAD = "    for (uint32_t m = 256; m < 512; ++m) { t[m] = 0; }"
DRAIN = "    (void)ckernel::load_blocking(t + 511);"
PUSH = "    cb_push_back(1, 1);"


def _path(tmp_path: Path, body: tuple[str, ...]) -> Path:
    return _host(tmp_path, {"reader": ("reader", body), "writer": ("writer", WRITER)},
                 {"0,0": ("reader", "writer"), "1,0": ()})


def test_padding_stores_after_the_reads_barrier_drained_before_the_push_are_proved(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(tmp_path, (*READ, BARRIER, PAD, DRAIN, PUSH))
    ops = [op for ep in import_host(path).programs for op in walk(ep.ops)]
    assert [(type(op), op.tiles, op.into) for op in ops if isinstance(op, (ReadTiles, FillTiles))] == \
        [(ReadTiles, 1, 1), (FillTiles, 0, 1)]
    assert [op for op in ops if isinstance(op, FillTiles)] == [FillTiles(1, 0, PATCH, drain=True)]
    _proved(path, capsys)


def test_a_copy_inside_the_read_tile_is_a_patch_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """moreh's ``l1_ptr[0] = l1_ptr[tilized_idx]`` after the read's barrier (reader_moreh_layer_norm_backward_input_
    grad_small.cpp:90-93): a load of the landed tile stored into it."""
    path = _path(tmp_path, (*READ, BARRIER, "    t[0] = t[37];", "    (void)ckernel::load_blocking(t);", PUSH))
    assert [op for _, op in _ops(path, FillTiles)] == [FillTiles(1, 0, PATCH, drain=True)]
    _proved(path, capsys)


def _looped(tmp_path: Path, guard: str | None) -> Path:
    """Two pages, each reserved, read, barriered, padded (under ``guard``, or always) with its drain, pushed."""
    pad = ("            for (uint32_t m = 256; m < 512; ++m) { t[m] = 0; }",
           "            (void)ckernel::load_blocking(t + 511);")
    body = ("    for (uint32_t i = 0; i < 2; ++i) {",
            "        cb_reserve_back(1, 1);",
            "        const uint32_t page = get_write_ptr(1);",
            "        volatile tt_l1_ptr uint32_t* t = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(page);",
            "        noc_async_read_tile(0, s, page);",
            "        noc_async_read_barrier();",
            *((f"        if ({guard}) {{", *pad, "        }") if guard else pad),
            "        cb_push_back(1, 1);",
            "    }")
    writer = ("    for (uint32_t i = 0; i < 2; ++i) {", *(f"    {w}" for w in WRITER), "    }")
    return _host(tmp_path, {"reader": ("reader", body), "writer": ("writer", writer)},
                 {"0,0": ("reader", "writer"), "1,0": ()})


def test_padding_of_every_page_read_and_barriered_in_a_loop_is_proved(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = _looped(tmp_path, None)
    assert [op for _, op in _ops(path, FillTiles)] == [FillTiles(1, 0, PATCH, drain=True)]
    _proved(path, capsys)


def test_a_drain_on_some_paths_only_is_not_credited(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Matmul pads only its last K tile (``if (block == num_blocks - 1 ...)``, reader_bmm_tile_layout_in0.cpp:83): the
    patch op stands at the push, on every path, so it claims a drain only where the stores (and their drain) are on
    every path — a drain claimed on a path that stored nothing would land the engine's other unlanded stores there,
    which no load did. Undrained, the path without the stores is refuted too: stricter than the kernel, never
    weaker."""
    path = _looped(tmp_path, "i == 1")
    assert [op for _, op in _ops(path, FillTiles)] == [FillTiles(1, 0, PATCH, drain=False)]
    _refuted(path, capsys, "async-read-publish")


def test_a_store_before_the_reads_barrier_is_refused(tmp_path: Path) -> None:
    """The NoC may land the read over the store: the padding lost (``noc_async_read`` returns at issue)."""
    path = _path(tmp_path, (*READ, PAD, BARRIER, DRAIN, PUSH))
    e = _refused(path, "plain store into a buffer page", "reader.cpp", FIRST + len(READ))
    assert "before the read barrier" in e.detail


def test_a_store_in_a_loop_whose_barrier_comes_after_it_is_refused(tmp_path: Path) -> None:
    """The barrier of the previous iteration does not cover this iteration's read."""
    body = ("    for (uint32_t i = 0; i < 2; ++i) {",
            "        cb_reserve_back(1, 1);",
            "        const uint32_t page = get_write_ptr(1);",
            "        volatile tt_l1_ptr uint32_t* t = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(page);",
            "        noc_async_read_tile(0, s, page);",
            "        t[511] = 0;",
            "        noc_async_read_barrier();",
            "        (void)ckernel::load_blocking(t + 511);",
            "        cb_push_back(1, 1);",
            "    }")
    _refused(_path(tmp_path, body), "plain store into a buffer page", "reader.cpp", FIRST + 5)


@pytest.mark.parametrize("drain", [
    (),
    ("    (void)ckernel::load_blocking(t + 256);",),  # the first store's word: lands the stores up to it only
])
def test_stores_not_drained_before_the_push_are_refuted(tmp_path: Path, drain: tuple[str, ...],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(tmp_path, (*READ, BARRIER, PAD, *drain, PUSH))
    assert [op for _, op in _ops(path, FillTiles)] == [FillTiles(1, 0, PATCH, drain=False)]
    hit = _refuted(path, capsys, "async-read-publish")
    assert any(f"reader.cpp:{FIRST + len(READ) + len(drain) + 2}" in loc for loc in _locations(hit)), hit


def test_a_narrow_last_store_drained_by_a_load_of_its_word_at_another_address_is_refuted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pad_tile.hpp:406-416 for bf16: the last store is the ``uint16_t`` at byte 2046, the drain loads the
    ``uint32_t`` at 2044. A load waits only for a store at the same starting byte address (tt-isa-documentation
    ``WormholeB0/TensixTile/BabyRISCV/MemoryOrdering.md``, "Store then load"), so nothing orders that store."""
    body = (*READ, BARRIER,
            "    volatile tt_l1_ptr uint16_t* h = reinterpret_cast<volatile tt_l1_ptr uint16_t*>(page);",
            "    for (uint32_t m = 512; m < 1024; ++m) { h[m] = 0; }",
            "    (void)ckernel::load_blocking(t + 511);", PUSH)
    path = _path(tmp_path, body)
    assert [op for _, op in _ops(path, FillTiles)] == [FillTiles(1, 0, PATCH, drain=False)]
    _refuted(path, capsys, "async-read-publish")


def _locations(result: dict[str, object]) -> list[str]:
    """The file:line places a certify --json result names (its counterexample's ops)."""
    return [m for m in str(result).replace("'", " ").replace('"', " ").split() if ".cpp:" in m]


def test_a_store_past_the_read_tile_is_refused(tmp_path: Path) -> None:
    path = _path(tmp_path, (*READ, BARRIER, "    t[512] = 0;", "    (void)ckernel::load_blocking(t + 512);", PUSH))
    _refused(path, "plain store not into the tile a NoC read filled", "reader.cpp", FIRST + len(READ) + 1)


def test_a_write_of_the_tile_before_the_stores_drain_is_refuted(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A NoC write of the back (here to the same place on core (1,0)) sends the tile as a push publishes it: the patch
    comes before it, undrained, and the write may send bytes the stores have not landed in (``async-read-publish``)."""
    body = (*READ, BARRIER, PAD,
            "    noc_async_write(get_write_ptr(1), get_noc_addr(1, 0, get_write_ptr(1)), tile_bytes);",
            "    noc_async_write_barrier();", PUSH)
    path = _path(tmp_path, body)
    assert [op for _, op in _ops(path, FillTiles)] == [FillTiles(1, 0, PATCH, drain=False)]
    _refuted(path, capsys, "async-read-publish")


def test_a_store_in_a_loop_that_reads_after_it_is_refused(tmp_path: Path) -> None:
    """The store comes first in its loop body, but the body reads (into c_2) after it with no barrier: from the
    second iteration on, the store follows a read that may still be in flight."""
    body = (*READ, BARRIER,
            "    for (uint32_t i = 0; i < 300; ++i) {",
            "        t[0] = 0;",
            "        cb_reserve_back(2, 1);",
            "        noc_async_read_tile(0, s, get_write_ptr(2));",
            "        cb_push_back(2, 1);",
            "    }",
            "    (void)ckernel::load_blocking(t);", PUSH)
    e = _refused(_path(tmp_path, body), "plain store into a buffer page", "reader.cpp", FIRST + len(READ) + 2)
    assert "later in its loop" in e.detail


def test_batch_norms_fill_with_the_first_element_through_an_auto_pointer_is_a_patch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``fill_tile_with_first_element_bfloat16`` (ttnn 0.81.1 ``eltwise/binary_ng/device/kernels/dataflow/
    fill_tile_utils.hpp:30-42``, after the read's barrier in ``writer_batch_norm.cpp:75-81``): a load of the landed
    tile's first element stored over the whole tile through an ``auto*`` pointer (the cast's ``uint32_t``), with no
    drain before the push: refuted at the push; with the drain, proved."""
    fill = ("    auto* first_ptr = reinterpret_cast<volatile tt_l1_ptr uint16_t*>(page);",
            "    const uint16_t first = first_ptr[0];",
            "    auto* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(page);",
            "    for (uint32_t m = 0; m < 512; ++m) { w[m] = (static_cast<uint32_t>(first) << 16) | first; }")
    path = _path(tmp_path, (*READ, BARRIER, *fill, PUSH))
    assert [op for _, op in _ops(path, FillTiles)] == [FillTiles(1, 0, PATCH, drain=False)]
    _refuted(path, capsys, "async-read-publish")
    path = _path(tmp_path, (*READ, BARRIER, *fill, "    (void)ckernel::load_blocking(w + 511);", PUSH))
    assert [op for _, op in _ops(path, FillTiles)] == [FillTiles(1, 0, PATCH, drain=True)]
    _proved(path, capsys)


def test_a_patch_of_an_earlier_tile_of_the_reservation_is_proved(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Two tiles read into a two-page reservation, then the first padded (matmul's padded sender pads the last tile
    of each row of its block, reader_bmm_tile_layout_in0_sender_padding_metal2.cpp:393-399): every tile filled since
    the write pointer is a landed read's."""
    body = ("    cb_reserve_back(1, 2);",
            "    const uint32_t page = get_write_ptr(1);",
            "    volatile tt_l1_ptr uint32_t* t = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(page);",
            "    noc_async_read_tile(0, s, page);",
            "    noc_async_read_tile(0, s, page + tile_bytes);",
            BARRIER, PAD, DRAIN,
            "    cb_push_back(1, 2);")
    writer = ("    cb_wait_front(1, 2);", "    noc_async_write_tile(0, d, get_read_ptr(1));",
              "    noc_async_write_barrier();", "    cb_pop_front(1, 2);")
    path = _host(tmp_path, {"reader": ("reader", body), "writer": ("writer", writer)},
                 {"0,0": ("reader", "writer"), "1,0": ()})
    assert [op for _, op in _ops(path, FillTiles)] == [FillTiles(1, 0, PATCH, drain=True)]
    _proved(path, capsys)
    # past the two tiles read: refused
    body = (*body[:5], BARRIER, "    t[1024] = 0;", "    (void)ckernel::load_blocking(t + 1024);", body[-1])
    path = _host(tmp_path, {"reader": ("reader", body), "writer": ("writer", writer)},
                 {"0,0": ("reader", "writer"), "1,0": ()})
    _refused(path, "plain store not into the tile a NoC read filled", "reader.cpp", FIRST + 6)


def test_a_multicast_of_the_patched_tile_publishes_it_and_a_later_store_is_refused(tmp_path: Path) -> None:
    """A multicast of the back sends the tile as a push publishes it: the patch comes before it (drained or not, as
    at a push); a store after it would rewrite the multicast's source while it may still be reading it."""
    mcast = "    noc_async_write_multicast(page, get_noc_multicast_addr(1, 0, 1, 0, page), tile_bytes, 1);"
    path = _path(tmp_path, (*READ, BARRIER, PAD, DRAIN, mcast, "    noc_async_write_barrier();", PUSH))
    ops = [op for ep in import_host(path).programs for op in walk(ep.ops)]
    kinds = [type(op).__name__ for op in ops if type(op).__name__ in ("FillTiles", "McastSend", "Push")]
    assert kinds[:3] == ["FillTiles", "McastSend", "Push"]
    path = _path(tmp_path, (*READ, BARRIER, PAD, DRAIN, mcast, "    t[0] = 1;", "    noc_async_write_barrier();",
                            PUSH))
    e = _refused(path, "plain store into a buffer page", "reader.cpp", FIRST + len(READ) + 4)
    assert "after a multicast" in e.detail
