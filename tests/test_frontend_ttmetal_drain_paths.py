"""A copy's drain read by the tt-metal front end only where it runs after the copy's last store.

``ckernel::load_blocking`` of the page's last word lands the stores before it (ttnn 0.81.1
``ttnn/cpp/ttnn/operations/data_movement/common/kernels/common.hpp:166-179``, tt-metal PR #50183), not the stores of a
later iteration. Found by the new-user run: a load guarded ``if (i == 0)`` inside the copy loop ran after the first
store only, yet the front end emitted ``CopyTiles(drain=True)`` and the kernel was proved, while 511 stores may still
be unlanded at the push (``async-read-publish``)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from test_frontend_ttmetal_remote import WRITER, _copier, _host, _ops, _proved, _refuted

from verispatial.ir.ops import CopyTiles

#: the copy loop's store line in ``_copier``'s body, and the drain after the loop
STORE, DRAIN = 9, 11


def _path(tmp_path: Path, store: str, drain: str | None) -> Path:
    body = list(_copier())
    body[STORE] = store
    if drain is None:
        del body[DRAIN]
    else:
        body[DRAIN] = drain
    return _host(tmp_path, {"copier": ("reader", tuple(body)), "writer": ("writer", WRITER)},
                 {"0,0": ("copier", "writer"), "1,0": ()})


@pytest.mark.parametrize("store", [
    "        dst[i] = src[i]; if (i == 0) { (void)ckernel::load_blocking(dst + 511); }",
    "        dst[i] = src[i]; if (i != 511) { (void)ckernel::load_blocking(dst + 511); }",
])
def test_a_drain_in_an_iteration_before_the_last_store_is_no_drain(tmp_path: Path, store: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(tmp_path, store, None)
    assert [op for _, op in _ops(path, CopyTiles)] == [CopyTiles(0, 1, 1, False)]
    _refuted(path, capsys, "async-read-publish")


def test_a_drain_in_a_loop_that_may_run_no_time_is_no_drain(tmp_path: Path) -> None:
    """A loop over a runtime count (here an arg) may run no time: its load is not a drain."""
    path = _path(tmp_path, "        dst[i] = src[i];",
                 "    for (uint32_t j = 0; j < get_arg_val<uint32_t>(0); j++) { (void)ckernel::load_blocking(dst + 511); }")
    assert [op for _, op in _ops(path, CopyTiles)] == [CopyTiles(0, 1, 1, False)]


@pytest.mark.parametrize("store", [
    "        dst[i] = src[i]; if (i == 511) { (void)ckernel::load_blocking(dst + 511); }",
    "        dst[i] = src[i]; (void)ckernel::load_blocking(dst + 511);",
])
def test_a_drain_in_the_last_iteration_after_its_store_lands_the_copy(tmp_path: Path, store: str,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = _path(tmp_path, store, None)
    assert [op for _, op in _ops(path, CopyTiles)] == [CopyTiles(0, 1, 1, True)]
    _proved(path, capsys)
