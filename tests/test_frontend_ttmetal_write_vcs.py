"""Which writes of one kernel stay ordered: the same NoC and the same static virtual channel (tests/data/ttmetal/mcast/:
core (0,0) multicasts a tile per block to (1,0) and (2,0), then a flag that the receivers wait on before they push).

Wormhole and Blackhole keep a data multicast and the flag multicast after it in issue order: both go on the NoC's
multicast VC (``NOC_MULTICAST_WRITE_VC`` 4, ``tt_metal/hw/inc/internal/dataflow/dataflow_api_common.h:62-64``) of one
NoC (``reader_bmm_tile_layout_in0_sender_padding.cpp:399-401``: "the same noc id, same vc"). The unicast forms go on
another VC: ``noc_async_write`` and ``noc_semaphore_set_remote`` on ``NOC_UNICAST_WRITE_VC`` 1
(``api/dataflow/dataflow_api.h:875-880, 1709-1730``), ``noc_async_write_multicast`` and
``noc_semaphore_set_multicast`` on ``NOC_MULTICAST_WRITE_VC`` (``:945-952, 1771-1777``). Across two VCs the NoC keeps
no order ("arbitrary reordering and interleaving can happen", tt-isa-documentation ``WormholeB0/NoC/Ordering.md``,
quoted in tt-metal #55555): a flag on the unicast VC may land before the data multicast it announces, and the
receiver then publishes a page the data has not reached. A kernel may also name a write's VC itself: the last
argument of ``noc_async_write_multicast`` and ``noc_semaphore_set_multicast`` (``:952, :1777``), or
``NocOptions::CUSTOM_VC`` of the object API (``api/dataflow/noc.h:72, 99-105``).

The program format does not say which VC a write takes (a unicast write is a ``McastSend`` on a one-core group, as is
a multicast to a one-core rectangle), and the checker orders one engine's writes as one VC does: a kernel writing to
other cores on both VCs is refused by name (``KernelReader.wrote_on``; docs/semantics.md, fidelity ledger). A write the kernel
puts on a VC of its own is refused by name at its line (``api.own_write_vc``; docs/ttmetal.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
yaml = pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from verispatial.certify.report import Verdict  # noqa: E402
from verispatial.driver.run import certify  # noqa: E402
from verispatial.frontends.ttmetal import Refused, import_host  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "ttmetal"
DATA_MCAST = "noc_async_write_multicast(l1, get_noc_multicast_addr(x0, y0, x1, y1, l1), get_tile_size(cb), num_dests);"
FLAG_MCAST = ("noc_semaphore_set_multicast(receiver_sem_addr, get_noc_multicast_addr(x0, y0, x1, y1, "
              "receiver_sem_addr),\n                                    num_dests);")
#: the line of the sender's flag multicast once the pair is put back in place (tests/data/ttmetal/mcast/sender.cpp)
FLAG_LINE = 29


def _per_core(between: str) -> str:
    """Each receiver in turn: the tile by a multicast to its one-core rectangle (multicast VC), ``between``, then its
    flag by ``noc_semaphore_set_remote`` (unicast VC)."""
    return "\n        ".join(
        f"noc_async_write_multicast(l1, get_noc_multicast_addr({x}, {y}, {x}, {y}, l1), get_tile_size(cb), 1);\n"
        f"        {between}noc_semaphore_set_remote(receiver_sem_addr, get_noc_addr({x}, {y}, receiver_sem_addr));"
        for x, y in (("x0", "y0"), ("x1", "y1")))


def _host(tmp_path: Path, target: str, calls: str) -> Path:
    """tests/data/ttmetal/mcast/ on ``target`` with the sender's data and flag multicasts replaced by ``calls``."""
    kernels = tmp_path / "mcast"
    kernels.mkdir()
    text = (DATA / "mcast" / "sender.cpp").read_text()
    pair = f"{DATA_MCAST}\n        {FLAG_MCAST}"
    assert pair in text
    (kernels / "sender.cpp").write_text(text.replace(pair, calls))
    (kernels / "receiver.cpp").write_text((DATA / "mcast" / "receiver.cpp").read_text())
    d = yaml.safe_load((DATA / "mcast" / "host.yaml").read_text())
    d["kernel_root"] = str(tmp_path)
    d["target"] = target
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "writer.cpp").write_text((DATA / "copy" / "writer.cpp").read_text())
    out = tmp_path / "host.yaml"
    out.write_text(yaml.safe_dump(d))
    return out


@pytest.mark.parametrize("target", ["blackhole", "wormhole_b0"])
def test_a_data_and_flag_multicast_on_one_vc_are_proved_without_a_flush(tmp_path: Path, target: str) -> None:
    """Both on the multicast VC of one NoC: the order the vendor's matmul relies on, on either target."""
    report = certify(import_host(_host(tmp_path, target, f"{DATA_MCAST}\n        {FLAG_MCAST}")))
    assert report.exit_code == 0, [r.name for r in report.results if r.verdict is not Verdict.PROVED]


@pytest.mark.parametrize("target", ["blackhole", "wormhole_b0"])
def test_a_kernel_writing_on_both_channels_is_refused_even_with_a_write_barrier(tmp_path: Path, target: str) -> None:
    """With ``noc_async_write_barrier`` between, this flag follows its data; but the next iteration's data multicast
    and this flag have none between, and the reading does not follow which barrier covers which pair across loops
    and branches: a kernel writing to other cores on both channels is refused whatever its barriers (a refusal the
    device would not give here: the program format needs each write's channel to do better)."""
    with pytest.raises(Refused, match="NoC writes into L1 on two virtual channels"):
        import_host(_host(tmp_path, target, _per_core("noc_async_write_barrier();\n        ")))


@pytest.mark.parametrize("target", ["blackhole", "wormhole_b0"])
def test_a_unicast_flag_after_a_data_multicast_is_refused(tmp_path: Path, target: str) -> None:
    """Data on the multicast VC, its flag on the unicast VC, nothing between: the flag may land first and the
    receiver publish the page before the tile reached it. The program format orders one engine's writes as one VC
    does, so the kernel is refused by name at the first write on the second VC (it was proved)."""
    with pytest.raises(Refused, match="NoC writes into L1 on two virtual channels") as e:
        import_host(_host(tmp_path, target, _per_core("")))
    assert "a unicast write here and a multicast write at" in str(e.value)


@pytest.mark.parametrize("target", ["blackhole", "wormhole_b0"])
def test_unicast_data_then_a_flag_multicast_is_refused(tmp_path: Path, target: str) -> None:
    """The tile by a unicast write, then the flag multicast: two VCs again, refused at the flag's line."""
    calls = "noc_async_write(l1, get_noc_addr(x0, y0, l1), get_tile_size(cb));\n        " + FLAG_MCAST
    with pytest.raises(Refused, match="NoC writes into L1 on two virtual channels") as e:
        import_host(_host(tmp_path, target, calls))
    assert e.value.loc.line == FLAG_LINE
    assert "a multicast write here and a unicast write at" in str(e.value)


@pytest.mark.parametrize("target", ["blackhole", "wormhole_b0"])
def test_a_flag_multicast_on_a_vc_of_its_own_is_refused_at_its_line(tmp_path: Path, target: str) -> None:
    """The flag multicast on VC 5 (its ``vc`` argument), the data on the multicast VC 4, nothing between: the flag may
    land first, and the program format cannot say which VC a write takes. Refused by name at the flag's line."""
    flag = FLAG_MCAST.replace("num_dests);", "num_dests, false, noc_index, 5);")
    with pytest.raises(Refused, match="NoC write on a virtual channel of its own") as e:
        import_host(_host(tmp_path, target, f"{DATA_MCAST}\n        {flag}"))
    assert e.value.loc.line == FLAG_LINE
    assert "VC 5, the call's own is NOC_MULTICAST_WRITE_VC (4)" in str(e.value)


@pytest.mark.parametrize(("calls", "line"), [
    # the data multicast on the unicast VC
    (DATA_MCAST.replace("num_dests);", "num_dests, false, noc_index, NOC_UNICAST_WRITE_VC);") + "\n        "
     + FLAG_MCAST, FLAG_LINE - 1),
    # a unicast write on the multicast VC, the flag on its own default
    ("noc_async_write(l1, get_noc_addr(x0, y0, l1), get_tile_size(cb), noc_index, 4);\n        " + FLAG_MCAST,
     FLAG_LINE - 1),
    ("noc_async_write_one_packet(l1, get_noc_addr(x0, y0, l1), get_tile_size(cb), noc_index, 4);\n        "
     + FLAG_MCAST, FLAG_LINE - 1),
])
def test_a_classic_write_on_another_vc_is_refused_at_its_line(tmp_path: Path, calls: str, line: int) -> None:
    with pytest.raises(Refused, match="NoC write on a virtual channel of its own") as e:
        import_host(_host(tmp_path, "blackhole", calls))
    assert e.value.loc.line == line


def test_the_default_vc_named_explicitly_is_read_as_the_call(tmp_path: Path) -> None:
    """``NOC_MULTICAST_WRITE_VC`` by name or by its number 4 is the multicast calls' own VC: the pair is proved."""
    data = DATA_MCAST.replace("num_dests);", "num_dests, false, noc_index, NOC_MULTICAST_WRITE_VC);")
    flag = FLAG_MCAST.replace("num_dests);", "num_dests, false, noc_index, 4);")
    report = certify(import_host(_host(tmp_path, "blackhole", f"{data}\n        {flag}")))
    assert report.exit_code == 0, [r.name for r in report.results if r.verdict is not Verdict.PROVED]


@pytest.mark.parametrize(("edit", "detail"), [
    (lambda t: t.replace("noc.async_write(", "noc.async_write<NocOptions::CUSTOM_VC>(").replace(
        "{.page_id = i});", "{.page_id = i}, {.vc = 2});"), "NocOptions::CUSTOM_VC"),
    (lambda t: t.replace("        noc.async_write(", "        noc.set_async_write_state(s, page_bytes, {.page_id = i}, "
                         "{.vc = 2});\n        noc.async_write("), "noc_opts {.vc = 2}"),
])
def test_an_object_api_write_on_a_vc_of_its_own_is_refused(tmp_path: Path, edit: Any, detail: str) -> None:
    """Metal 2.0: ``async_write<NocOptions::CUSTOM_VC>`` writes on ``noc_opts.vc``; ``set_async_write_state`` on
    ``noc_opts.vc`` whatever its options (``api/dataflow/noc.h:552-556``). Refused by name at the call."""
    text = (DATA / "copy" / "writer.cpp").read_text()
    changed = edit(text)
    assert changed != text
    for f in (DATA / "copy").glob("*.cpp"):
        (tmp_path / f.name).write_text(changed if f.name == "writer.cpp" else f.read_text())
    d = yaml.safe_load((DATA / "copy" / "host.yaml").read_text())
    d["kernel_root"] = str(tmp_path)
    d["target"] = "blackhole"
    host = tmp_path / "host.yaml"
    host.write_text(yaml.safe_dump(d))
    line = next(k for k, x in enumerate(changed.splitlines(), 1) if "vc = 2" in x)
    with pytest.raises(Refused, match="NoC write on a virtual channel of its own") as e:
        import_host(host)
    assert e.value.loc.line == line
    assert detail in str(e.value)
