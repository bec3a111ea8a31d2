"""A NoC call's options are read as values (``frontends/ttmetal/nocopts.py``), never matched as text.

The kernels under tests/data/ttmetal/noc_options/ are a new user's (nu15, 2026-12-08); each was proved until then:

* a barrier with ``NocOptions::TXN_ID`` waits only for the transfers tagged with its id (ttnn 0.81.1
  ``api/dataflow/noc.h:717-722, 738-742, 761-773`` call ``noc_async_{read,write}_barrier_with_trid`` /
  ``noc_async_write_flushed_with_trid``, ``dataflow_api.h:2562-2566, 2709-2714, 2734-2739``, which spin on
  ``NIU_MST_REQS_OUTSTANDING_ID(trid)``, wormhole ``noc_nonblocking_api.h:454-456, 602-604``), and was read as the
  whole barrier: an untagged read or write, or one tagged with another id, was taken as landed;
* a posted write (``noc_async_write<.., .., true>``, :874; ``noc_async_write_page<G, .., true>``, :1415;
  ``noc.async_write<kOpts>`` with ``kOpts = NocOptions::POSTED``, noc.h:410) is waited for by no barrier the ops have
  (``noc_async_write_barrier`` waits for non-posted acks, noc_nonblocking_api.h:593-595), and got through when its
  flag was spelled other than the text ``POSTED`` or ``true`` (``1``, a ``constexpr bool``, an alias, a template
  parameter).

Each is now refused by name at the call's line; a barrier on the id every transfer of its kind carries (t18) keeps
its proof, as do the non-posted spellings."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from tests.test_frontend_ttmetal_remote import _proved, _refused

DATA = Path(__file__).resolve().parent / "data" / "ttmetal" / "noc_options"


@pytest.mark.parametrize(("case", "construct", "file", "line"), [
    ("t01_txn_barrier", "Noc.async_read_barrier with a transaction id", "reader.cpp", 14),
    ("t01b_txn_mismatch", "Noc.async_read_barrier with a transaction id", "reader.cpp", 14),
    ("t06_m2_write_barrier_trid", "Noc.async_write_barrier with a transaction id", "writer.cpp", 14),
    ("t17_flushed_trid", "Noc.async_writes_flushed with a transaction id", "writer.cpp", 14),
    ("u02_trid_barrier_then_inc", "Noc.async_write_barrier with a transaction id", "snd.cpp", 17),
])
def test_a_barrier_on_a_transaction_id_some_transfer_lacks_is_refused(case: str, construct: str, file: str,
                                                                    line: int) -> None:
    e = _refused(DATA / case / "host.yaml", construct, file, line)
    assert "waits only for" in e.detail


@pytest.mark.parametrize(("case", "construct", "file", "line"), [
    ("t03_classic_posted", "posted noc_async_write", "writer.cpp", 11),
    ("t13_write_posted_constexpr", "posted noc_async_write", "writer.cpp", 9),
    ("u03_posted_write_then_inc", "posted noc_async_write", "snd.cpp", 14),
    ("t12_write_page_posted", "posted noc_async_write_page", "writer.cpp", 9),
    ("t14_write_page_posted_1", "posted noc_async_write_page", "writer.cpp", 9),
    ("t02_posted_alias", "posted async_write", "writer.cpp", 14),
    ("t07_posted_tparam", "posted async_write", "writer.cpp", 6),  # in the function the option is passed to
    ("t15_seminc_posted_1", "posted noc_semaphore_inc", "up.cpp", 4),
])
def test_a_posted_write_however_spelled_is_refused(case: str, construct: str, file: str, line: int) -> None:
    _refused(DATA / case / "host.yaml", construct, file, line)


def _edited(tmp_path: Path, case: str, file: str, old: str, new: str) -> Path:
    d = tmp_path / case
    shutil.copytree(DATA / case, d)
    text = (d / file).read_text()
    assert old in text
    (d / file).write_text(text.replace(old, new))
    return d / "host.yaml"


def test_a_barrier_on_the_id_every_read_carries_is_proved(capsys: pytest.CaptureFixture[str]) -> None:
    _proved(DATA / "t18_ctrl_txn_match" / "host.yaml", capsys)


def test_a_transaction_id_barrier_of_another_kind_is_not_excused(tmp_path: Path) -> None:
    """t18's reads all carry trid 1, but a write barrier on trid 1 does not wait for the writer's untagged writes."""
    path = _edited(tmp_path, "t18_ctrl_txn_match", "writer.cpp", "noc.async_write_barrier();",
                   "noc.async_write_barrier<NocOptions::TXN_ID>({.trid = 1});")
    _refused(path, "Noc.async_write_barrier with a transaction id", "writer.cpp", 14)


@pytest.mark.parametrize(("case", "file", "old", "new"), [
    ("t03_classic_posted", "writer.cpp", "true, true>", "true, false>"),
    ("t13_write_posted_constexpr", "writer.cpp", "kPosted = true", "kPosted = false"),
    ("t14_write_page_posted_1", "writer.cpp", "true, 1>", "true, 0>"),
    ("t02_posted_alias", "writer.cpp", "NocOptions::POSTED", "NocOptions::DEFAULT"),
    ("t07_posted_tparam", "writer.cpp", "put<NocOptions::POSTED>", "put<NocOptions::DEFAULT>"),
    ("t15_seminc_posted_1", "up.cpp", "noc_semaphore_inc<1>", "noc_semaphore_inc<false>"),
])
def test_the_non_posted_spellings_are_proved(tmp_path: Path, case: str, file: str, old: str, new: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _proved(_edited(tmp_path, case, file, old, new), capsys)


def test_an_option_not_known_statically_is_refused(tmp_path: Path) -> None:
    path = _edited(tmp_path, "t13_write_posted_constexpr", "writer.cpp", "constexpr bool kPosted = true;",
                   "")
    path.parent.joinpath("writer.cpp").write_text(path.parent.joinpath("writer.cpp").read_text().replace(
        "const uint32_t n = get_arg_val<uint32_t>(1);",
        "const uint32_t n = get_arg_val<uint32_t>(1);\n    const bool kPosted = get_arg_val<uint32_t>(0) > 4;"))
    _refused(path, "NoC noc_async_write posted flag not known statically", "writer.cpp", 10)


def test_a_bit_or_of_options_is_evaluated(tmp_path: Path) -> None:
    """``NocOptions::CUSTOM_VC | NocOptions::POSTED`` (``operator|``, noc.h:87-89) is posted."""
    path = _edited(tmp_path, "t02_posted_alias", "writer.cpp", "NocOptions::POSTED",
                   "NocOptions::CUSTOM_VC | NocOptions::POSTED")
    _refused(path, "posted async_write", "writer.cpp", 14)  # the bit-or evaluated
