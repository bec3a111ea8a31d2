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

Each write's VC is in the program (``McastSend.vc``, ``McastSetValid.vc``: a unicast write is a ``McastSend`` on a
one-core group, as is a multicast to a one-core rectangle), set from its call (``KernelReader.write_vc``), and the
checker orders one engine's writes only on one VC to one rectangle (``internal/tt-1xx/wormhole/noc/noc.h:23-30``: no
order for "commands targeting different destinations"): a flag on another VC than its data, or to another rectangle,
with no write barrier between is refuted by ``async-flag-overtake`` (a flush is not enough: it sees the data leave,
not land), with a write barrier between it is proved. A VC the reading cannot know statically is refused by name at
its line (``api.own_write_vc``; docs/ttmetal.md)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
yaml = pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

import test_frontend_ttmetal_remote as remote  # noqa: E402
from test_frontend_ttmetal import one_block_without_writers  # noqa: E402

from verispatial.certify.report import Verdict  # noqa: E402
from verispatial.driver.run import certify  # noqa: E402
from verispatial.frontends.ttmetal import Refused, import_host  # noqa: E402
from verispatial.ir import McastSend, McastSetValid, SemInc  # noqa: E402
from verispatial.ir.program import walk  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "ttmetal"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "ttmetal"
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
    """tests/data/ttmetal/mcast/ on ``target`` with the sender's data and flag multicasts replaced by ``calls``, one
    block and no copy-out writers (``one_block_without_writers``: what these tests decide is the order of one flag and
    the data before it)."""
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
    one_block_without_writers(d)
    out = tmp_path / "host.yaml"
    out.write_text(yaml.safe_dump(d))
    return out


@pytest.mark.parametrize("target", ["blackhole", "wormhole_b0"])
def test_a_data_and_flag_multicast_on_one_vc_are_proved_without_a_flush(tmp_path: Path, target: str) -> None:
    """Both on the multicast VC of one NoC: the order the vendor's matmul relies on, on either target."""
    report = certify(import_host(_host(tmp_path, target, f"{DATA_MCAST}\n        {FLAG_MCAST}")))
    assert report.exit_code == 0, [r.name for r in report.results if r.verdict is not Verdict.PROVED]


def _not_proved(report: Any) -> dict[str, str]:
    return {r.name: r.verdict.value for r in report.results if r.verdict is not Verdict.PROVED}


def _overtaken(report: Any) -> list[str]:
    """The flags refuted by ``async-flag-overtake``, each with a counterexample the interpreter replayed."""
    out = []
    for r in report.results:
        if r.name.startswith("async-flag-overtake:") and r.verdict is Verdict.REFUTED:
            cex = r.counterexample or {}
            assert cex.get("kind") == "rule" or cex.get("replayed_by"), r.name
            out.append(r.name)
    return out


def _channels(program: Any) -> list[tuple[str, int | None]]:
    """Each write's class and virtual channel, in the sender's order."""
    return [(type(op).__name__, op.vc) for ep in program.programs for op in walk(ep.ops)
            if isinstance(op, (McastSend, McastSetValid))]


@pytest.mark.parametrize("target", ["blackhole", "wormhole_b0"])
def test_a_unicast_flag_after_its_data_multicast_and_a_write_barrier_is_proved(tmp_path: Path, target: str) -> None:
    """Each receiver's tile on the multicast VC, ``noc_async_write_barrier``, then its flag on the unicast VC: the
    barrier waits for the data to land, so the flag follows it on either target (this kernel was refused while the
    program format did not carry a write's channel)."""
    program = import_host(_host(tmp_path, target, _per_core("noc_async_write_barrier();\n        ")))
    assert _channels(program) == [("McastSend", 4), ("McastSetValid", 1)] * 2
    report = certify(program)
    assert report.exit_code == 0, _not_proved(report)


@pytest.mark.parametrize(("target", "between"), [("blackhole", ""), ("wormhole_b0", ""),
                                                 ("wormhole_b0", "noc_async_writes_flushed();\n        ")])
def test_a_unicast_flag_after_its_data_multicast_without_a_write_barrier_is_refuted(tmp_path: Path, target: str,
                                                                                   between: str) -> None:
    """Data on the multicast VC, its flag on the unicast VC, nothing between (or a flush, which sees the data leave
    its source, not land): the flag may land first and the receiver publish the page before the tile reached it.
    Refuted at each flag, with a run of the interpreter that breaks it."""
    report = certify(import_host(_host(tmp_path, target, _per_core(between))))
    assert len(_overtaken(report)) == 2
    assert {n.split(":")[0] for n, v in _not_proved(report).items() if v == "refuted"} >= {
        "async-flag-overtake", "mcast-publish"}


@pytest.mark.parametrize("target", ["blackhole", "wormhole_b0"])
def test_unicast_data_then_a_flag_multicast_is_refuted(tmp_path: Path, target: str) -> None:
    """The tile by a unicast write (VC 1), then the flag multicast (VC 4): two VCs again, refuted at the flag."""
    calls = "noc_async_write(l1, get_noc_addr(x0, y0, l1), get_tile_size(cb));\n        " + FLAG_MCAST
    program = import_host(_host(tmp_path, target, calls))
    assert _channels(program) == [("McastSend", 1), ("McastSetValid", 4)]
    assert len(_overtaken(certify(program))) == 1


def _overtake_reasons(report: Any) -> list[str]:
    return [r.reason for r in report.results if r.name.startswith("async-flag-overtake:") and r.verdict is Verdict.REFUTED]


@pytest.mark.parametrize(("calls", "flag", "data"), [
    # a unicast write, then the flag multicast: the data is no multicast
    ("noc_async_write(l1, get_noc_addr(x0, y0, l1), get_tile_size(cb));\n        " + FLAG_MCAST, "multicast", "write"),
    # one core each (a unicast flag after a write to a one-core rectangle): neither is
    (_per_core(""), "write", "write"),
    # the flag multicast on a VC of its own after the data multicast: both are
    (f"{DATA_MCAST}\n        " + FLAG_MCAST.replace("num_dests);", "num_dests, false, noc_index, 5);"), "multicast",
     "multicast"),
])
def test_a_write_to_one_core_is_called_a_write_not_a_multicast(tmp_path: Path, calls: str, flag: str, data: str) -> None:
    """The program models a unicast write as a write to a one-core rectangle; the reason says "write" for it, as the
    kernel's call does, and keeps "multicast" for a rectangle of several cores."""
    reasons = _overtake_reasons(certify(import_host(_host(tmp_path, "blackhole", calls))))
    assert reasons
    for reason in reasons:
        assert re.match(rf"flag {flag} of sem\d+ may overtake the data {data} before it", reason), reason


@pytest.mark.parametrize("target", ["blackhole", "wormhole_b0"])
def test_a_flag_multicast_on_a_vc_of_its_own_is_refuted(tmp_path: Path, target: str) -> None:
    """The flag multicast on VC 5 (its ``vc`` argument), the data on the multicast VC 4, nothing between: the flag may
    land first."""
    flag = FLAG_MCAST.replace("num_dests);", "num_dests, false, noc_index, 5);")
    program = import_host(_host(tmp_path, target, f"{DATA_MCAST}\n        {flag}"))
    assert _channels(program) == [("McastSend", 4), ("McastSetValid", 5)]
    assert len(_overtaken(certify(program))) == 1


@pytest.mark.parametrize(("calls", "channels", "overtaken"), [
    # the data multicast on another multicast VC (6), the flag on the multicast VC
    (DATA_MCAST.replace("num_dests);", "num_dests, false, noc_index, 6);") + "\n        "
     + FLAG_MCAST, [("McastSend", 6), ("McastSetValid", 4)], 1),
    # a unicast write on another unicast VC (3), the flag multicast on its own (4): two VCs, refuted
    ("noc_async_write(l1, get_noc_addr(x0, y0, l1), get_tile_size(cb), noc_index, 3);\n        " + FLAG_MCAST,
     [("McastSend", 3), ("McastSetValid", 4)], 1),
    ("noc_async_write_one_packet(l1, get_noc_addr(x0, y0, l1), get_tile_size(cb), noc_index, 0);\n        "
     + FLAG_MCAST, [("McastSend", 0), ("McastSetValid", 4)], 1),
])
def test_a_classic_write_names_its_vc(tmp_path: Path, calls: str, channels: list[Any], overtaken: int) -> None:
    program = import_host(_host(tmp_path, "blackhole", calls))
    assert _channels(program) == channels
    assert len(_overtaken(certify(program))) == overtaken


def test_the_default_vc_named_explicitly_is_read_as_the_call(tmp_path: Path) -> None:
    """``NOC_MULTICAST_WRITE_VC`` by name or by its number 4 is the multicast calls' own VC: the pair is proved."""
    data = DATA_MCAST.replace("num_dests);", "num_dests, false, noc_index, NOC_MULTICAST_WRITE_VC);")
    flag = FLAG_MCAST.replace("num_dests);", "num_dests, false, noc_index, 4);")
    report = certify(import_host(_host(tmp_path, "blackhole", f"{data}\n        {flag}")))
    assert report.exit_code == 0, _not_proved(report)


@pytest.mark.parametrize(("vc", "construct", "detail"), [
    ("get_arg_val<uint32_t>(0)", "NoC write on a virtual channel not known statically",
     "the vc argument get_arg_val<uint32_t>(0)"),
    ("16", "NoC write on a virtual channel not of the NoC", "the vc argument 16: the NoC has VCs 0-15"),
])
def test_a_vc_not_known_statically_or_not_of_the_noc_is_refused_at_its_line(tmp_path: Path, vc: str, construct: str,
                                                                           detail: str) -> None:
    data = DATA_MCAST.replace("num_dests);", f"num_dests, false, noc_index, {vc});")
    with pytest.raises(Refused, match=construct) as e:
        import_host(_host(tmp_path, "blackhole", f"{data}\n        {FLAG_MCAST}"))
    assert e.value.loc.line == FLAG_LINE - 1
    assert detail in str(e.value)


def test_a_channel_not_of_the_noc_is_named_as_the_vc_argument(tmp_path: Path) -> None:
    """VC 260 (a ``uint8_t vc`` parameter, dataflow_api.h:952, would carry 4): the refusal names the channel argument,
    not the call cut before it (which read as if ``noc_index`` were 260)."""
    data = DATA_MCAST.replace("num_dests);", "num_dests, false, noc_index, 260);")
    with pytest.raises(Refused, match="NoC write on a virtual channel not of the NoC") as e:
        import_host(_host(tmp_path, "blackhole", f"{data}\n        {FLAG_MCAST}"))
    assert "the vc argument 260: the NoC has VCs 0-15" in str(e.value)
    assert "noc_index: VC" not in str(e.value)


#: Each unicast call that takes a channel, on the multicast class's VC 4 (or a macro of it), and the line the call
#: is on. The vendor documents a unicast call's ``vc`` as "0-3 (Unicast VCs)" (dataflow_api.h:834, 976, 1048, 1162,
#: 2199, 2392); ``noc_async_write`` and ``noc.async_write`` issue through the same ``noc_async_write_impl``
#: (:880, noc.h:449-455). Read as a channel number, a unicast write on VC 4 was ordered with the flag multicast after
#: it, and the program proved with no barrier between, although the vendor states no order across the two classes.
UNICAST_ON_VC4 = {
    "write": ("noc_async_write(l1, get_noc_addr(x0, y0, l1), get_tile_size(cb), noc_index, 4);", "4"),
    "write-macro": ("noc_async_write(l1, get_noc_addr(x0, y0, l1), get_tile_size(cb), noc_index, "
                    "NOC_MULTICAST_WRITE_VC);", "NOC_MULTICAST_WRITE_VC = 4"),
    "one-packet": ("noc_async_write_one_packet(l1, get_noc_addr(x0, y0, l1), get_tile_size(cb), noc_index, 7);",
                   "7"),
    "set-state": ("noc_async_write_set_state(get_noc_addr(x0, y0, l1), noc_index, 4);\n        "
                  "noc_async_write_with_state(l1, l1, get_tile_size(cb));", "4"),
    "inline": ("noc_inline_dw_write(get_noc_addr(x0, y0, receiver_sem_addr), 1, 0xF, noc_index, 4);", "4"),
    "inc": ("noc_semaphore_inc(get_noc_addr(x0, y0, receiver_sem_addr), 1, noc_index, 5);", "5"),
}


@pytest.mark.parametrize("form", sorted(UNICAST_ON_VC4))
def test_a_unicast_call_on_a_channel_not_of_the_unicast_class_is_refused_at_its_line(tmp_path: Path,
                                                                                    form: str) -> None:
    call, said = UNICAST_ON_VC4[form]
    with pytest.raises(Refused, match="NoC unicast write on a virtual channel not of the unicast class") as e:
        import_host(_host(tmp_path, "wormhole_b0", f"{call}\n        {FLAG_MCAST}"))
    assert e.value.loc.line == FLAG_LINE - 1
    assert f"the vc argument {said}: a unicast write's vc is 0-3 (Unicast VCs), dataflow_api.h:834" in str(e.value)


def _object_api_vc(vc: int) -> list[Any]:
    """Edits of tests/data/ttmetal/copy/writer.cpp that write on ``vc``: ``async_write<NocOptions::CUSTOM_VC>`` with
    ``noc_opts.vc``, and ``set_async_write_state`` with it before the write."""
    return [
        lambda t: t.replace("noc.async_write(", "noc.async_write<NocOptions::CUSTOM_VC>(").replace(
            "{.page_id = i});", f"{{.page_id = i}}, {{.vc = {vc}}});"),
        lambda t: t.replace("        noc.async_write(", "        noc.set_async_write_state(s, page_bytes, "
                            f"{{.page_id = i}}, {{.vc = {vc}}});\n        noc.async_write("),
    ]


@pytest.mark.parametrize("edit", _object_api_vc(4))
def test_an_object_api_unicast_write_on_a_multicast_channel_is_refused(tmp_path: Path, edit: Any) -> None:
    """Metal 2.0's unicast writes issue through the classic unicast path (api/dataflow/noc.h:449-455, 552-556), whose
    ``vc`` is 0-3: ``noc_opts.vc`` 4 is refused by name."""
    with pytest.raises(Refused, match="not of the unicast class") as e:
        import_host(_copy_with(tmp_path, edit))
    assert e.value.detail.startswith("the vc argument noc_opts.vc = 4:"), e.value.detail


@pytest.mark.parametrize(("form", "vc"), [
    ("classic", 1),
    ("classic-vc", 3),
    ("endpoint", 1),
    ("endpoint-vc", 2),
])
def test_a_remote_write_takes_the_vc_its_call_names(tmp_path: Path, form: str, vc: int) -> None:
    """A unicast remote write of pages (tests/test_frontend_ttmetal_remote.py): ``noc_async_write`` on
    ``NOC_UNICAST_WRITE_VC`` 1 or its ``vc`` argument; Metal 2.0 ``noc.async_write`` on ``NOC_UNICAST_WRITE_VC``, or
    ``noc_opts.vc`` with ``NocOptions::CUSTOM_VC`` (api/dataflow/noc.h:417-418, 449-451)."""
    base = write = remote.WRITES[form.removesuffix("-vc")]
    if form == "classic-vc":
        write = base.replace("tile_bytes);", "tile_bytes, noc_index, 3);")
    elif form == "endpoint-vc":
        write = base.replace("noc.async_write(", "noc.async_write<NocOptions::CUSTOM_VC>(").replace(
            "c2.get_write_ptr()});", "c2.get_write_ptr()}, {.vc = 2});")
    assert (write != base) == form.endswith("-vc")
    ((_site, op),) = remote._ops(remote._push(tmp_path, write), McastSend)
    assert op.vc == vc


@pytest.mark.parametrize("edit", _object_api_vc(2))
def test_an_object_api_write_to_a_tensor_on_a_vc_of_its_own_is_read(tmp_path: Path, edit: Any) -> None:
    """Metal 2.0: ``async_write<NocOptions::CUSTOM_VC>`` writes on ``noc_opts.vc``; ``set_async_write_state`` on
    ``noc_opts.vc`` whatever its options (``api/dataflow/noc.h:552-556``). A write to a tensor page is a
    ``WriteTiles``, which the model orders with nothing but its barriers on any channel: the copy proves."""
    report = certify(import_host(_copy_with(tmp_path, edit)))
    assert report.exit_code == 0, _not_proved(report)


def _copy_with(tmp_path: Path, edit: Any) -> Path:
    """tests/data/ttmetal/copy/ on Blackhole with its writer's text changed by ``edit``."""
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
    return host


@pytest.mark.parametrize(("calls", "said"), [
    (DATA_MCAST.replace("num_dests);", "num_dests, false, noc_index, NOC_UNICAST_WRITE_VC);") + "\n        "
     + FLAG_MCAST, "NOC_UNICAST_WRITE_VC = 1"),
    (DATA_MCAST.replace("num_dests);", "num_dests, false, noc_index, 1);") + "\n        "
     + "noc_semaphore_set_remote(receiver_sem_addr, get_noc_addr(x0, y0, receiver_sem_addr));", "1"),
])
def test_a_multicast_call_on_a_channel_of_the_unicast_class_is_refused_at_its_line(tmp_path: Path, calls: str,
                                                                                  said: str) -> None:
    """A multicast on VC 1 to the one core a unicast flag on VC 1 then sets: read as one channel and one rectangle,
    the two were ordered and the program proved with no barrier between, although the vendor states no order between
    a unicast and a multicast packet (the mirror of a unicast call on a multicast channel): refused by name."""
    with pytest.raises(Refused, match="NoC multicast write on a virtual channel of the unicast class") as e:
        import_host(_host(tmp_path, "wormhole_b0", calls))
    assert e.value.loc.line == FLAG_LINE - 1
    assert f"the vc argument {said}: unicast writes use VCs 0-3" in str(e.value)


@pytest.mark.parametrize(("vc", "refused"), [("", False), (", 2", False), (", 5", True), (", 4", True)])
def test_an_object_api_semaphore_up_is_held_to_the_unicast_channels(tmp_path: Path, vc: str, refused: bool) -> None:
    """Metal 2.0 ``sem.up(noc, x, y, value, vc)`` is ``up_remote``: a ``noc_semaphore_inc`` on ``vc``
    (tt_metal/hw/inc/api/dataflow/semaphore_dm_impl.h:235-253), a unicast atomic whose ``vc`` is 0-3
    (dataflow_api.h:834). Its fifth argument was dropped, so a channel of the multicast class read as any other
    increment; now it is refused by name at its line, as ``noc_semaphore_inc``'s is."""
    from verispatial.frontends.ttmetal.vendor import wheel_root

    root = wheel_root(download=True)
    if root is None:
        pytest.skip("the pinned ttnn wheel is not at hand")
    d = yaml.safe_load((EXAMPLES / "move_overlap" / "host.yaml").read_text())
    src = root / "ttnn" / "ttnn" / "cpp" / d["kernels"][0]["source"]
    text = src.read_text()
    call = "sem.up(noc, controller_noc_x, controller_noc_y, 1);"
    assert call in text
    line = text[:text.index(call)].count("\n") + 1
    (tmp_path / "move.cpp").write_text(text.replace(call, call.replace("1);", f"1{vc});")))
    d["kernel_root"] = str(tmp_path)
    d["kernels"][0]["source"] = "move.cpp"
    host = tmp_path / "host.yaml"
    host.write_text(yaml.safe_dump(d))
    if refused:
        with pytest.raises(Refused, match="NoC unicast write on a virtual channel not of the unicast class") as e:
            import_host(host)
        assert e.value.loc.line == line
    else:
        assert any(isinstance(op, SemInc) for ep in import_host(host).programs for op in walk(ep.ops))
