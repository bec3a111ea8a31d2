"""A multicast's rectangle and destination count as the hardware reads them (tests/data/ttmetal/flag/: core (0,0)
multicasts a flag to (1,0) and (2,0) and waits for the acknowledgements).

- The corners are (x_start, y_start, x_end, y_end) in the NoC's own direction: start <= end on NoC 0, end <= start on
  NoC 1 (``get_safe_multicast_noc_addr``'s swap, ttnn 0.81.1 ``moe_gpt/device/kernels/tilize_writer.cpp:17-29``,
  ``ccl/common/kernels/moe_utils.hpp:19-22``). Given the other way, Wormhole's and Blackhole's torus NoC sends a
  wrap-around multicast (``tt_metal/hw/inc/internal/debug/sanitize.h:563-564``) to cores across the grid's edge, not
  the rectangle: refused by name at the C++ line. A core range of the host file that ends before it starts is bad
  input (``CoreRange`` takes start <= end).
- ``num_dests`` is only the count the write barrier expects (``noc_nonposted_writes_acked[noc] += num_dests``,
  ``noc_nonblocking_api.h:505-506``); the NoC still writes every core of the rectangle and each acknowledges. So 0
  ("needs to be non-zero", ``dataflow_api.h:926``) is the too-few case of docs/semantics.md "Acknowledgement counts":
  the barrier after it hangs once every acknowledgement is back. Read as written and refuted in the deadlock family at
  the barrier's line, with a counterexample the interpreter replays.
- A non-loopback rectangle of the sender alone ("must not be just self", ``dataflow_api.h:921-922``; what the NoC does
  with it is not documented) is refused by name at its line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
yaml = pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from verispatial.certify.report import Verdict  # noqa: E402
from verispatial.cli import main  # noqa: E402
from verispatial.driver.run import certify  # noqa: E402
from verispatial.errors import ParseError  # noqa: E402
from verispatial.frontends.ttmetal import Refused, import_host  # noqa: E402
from verispatial.ir.core import Site  # noqa: E402
from verispatial.ir.ops import McastSetValid  # noqa: E402
from verispatial.ir.program import walk  # noqa: E402
from verispatial.petri.interp import drive  # noqa: E402
from verispatial.petri.position import Position  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "ttmetal"
#: the line of sender.cpp's noc_semaphore_set_multicast, and of its write barrier
MCAST_LINE, BARRIER_LINE = 16, 17


def _flag(tmp_path: Path, rect: tuple[int, int, int, int] = (1, 0, 2, 0), num_dests: int = 2, noc: int = 0) -> Path:
    """tests/data/ttmetal/flag/host.yaml with the sender's corners, count and NoC changed."""
    src = DATA / "flag" / "host.yaml"
    d = yaml.safe_load(src.read_text())
    d["kernel_root"] = str((src.parent / d["kernel_root"]).resolve())
    d["kernels"][0]["noc"] = noc
    d["work_units"][0]["runtime_args"]["sender"] = dict(zip(("x0", "y0", "x1", "y1"), rect, strict=True),
                                                        num_dests=num_dests)
    out = tmp_path / "flag.yaml"
    out.write_text(yaml.safe_dump(d))
    return out


@pytest.mark.parametrize(("noc", "rect"), [(0, (1, 0, 2, 0)), (1, (2, 0, 1, 0)), (0, (2, 0, 2, 0)), (1, (2, 0, 2, 0))])
def test_corners_in_the_order_of_their_noc_are_the_rectangle(tmp_path: Path, noc: int,
                                                             rect: tuple[int, int, int, int]) -> None:
    """NoC 0 from the lower corner, NoC 1 from the upper (the swap the vendor kernels do); a corner shared by both
    ends is in order on either NoC. The group is the rectangle of sites, lower corner first."""
    p = import_host(_flag(tmp_path, rect, 2 if rect[0] != rect[2] else 1, noc))
    lo = (min(rect[0], rect[2]), rect[1], max(rect[0], rect[2]), rect[3])
    assert [(g.sender, g.rect) for g in p.groups] == [(Site(0, 0), lo)]
    if rect[0] != rect[2]:
        assert certify(p).exit_code == 0


@pytest.mark.parametrize(("noc", "rect", "detail"), [
    (0, (2, 0, 1, 0), "x_start 2 > x_end 1"),
    (1, (1, 0, 2, 0), "x_start 1 < x_end 2"),
    (0, (1, 1, 2, 0), "y_start 1 > y_end 0"),
])
def test_corners_against_the_noc_are_refused_at_their_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           noc: int, rect: tuple[int, int, int, int],
                                                           detail: str) -> None:
    """The torus NoC reads start > end (NoC 0) or start < end (NoC 1) as a wrap-around multicast across the grid's
    edge, not as the rectangle between the corners: refused by name at the multicast's line, exit 2, one line."""
    path = _flag(tmp_path, rect, 2, noc)
    with pytest.raises(Refused, match="multicast rectangle against its NoC's direction") as e:
        import_host(path)
    assert e.value.loc.line == MCAST_LINE
    assert detail in str(e.value)
    assert f"NoC {noc}" in str(e.value)
    assert main(["certify", str(path), "-q", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"flag/sender.cpp:{MCAST_LINE}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("arg", "refused"), [("1", True), ("0", False), ("noc_index", False)])
def test_the_noc_named_by_the_call_decides_the_order(tmp_path: Path, arg: str, refused: bool) -> None:
    """``noc_semaphore_set_multicast(src, addr, n, linked, noc)`` issues on ``noc``, not the kernel's NoC (0 here):
    the NoC-0 corners (1,0)-(2,0) on NoC 1 are a wrap-around, refused; on 0 or ``noc_index`` they are the rectangle."""
    flag = tmp_path / "flag"
    flag.mkdir()
    (flag / "receiver.cpp").write_text((DATA / "flag" / "receiver.cpp").read_text())
    text = (DATA / "flag" / "sender.cpp").read_text()
    call = "get_noc_multicast_addr(x0, y0, x1, y1, flag_addr), num_dests)"
    assert call in text
    (flag / "sender.cpp").write_text(text.replace(call, call[:-1] + f", false, {arg})"))
    path = _flag(tmp_path)
    d = yaml.safe_load(path.read_text())
    d["kernel_root"] = str(tmp_path)
    path.write_text(yaml.safe_dump(d))
    if refused:
        with pytest.raises(Refused, match="x_start 1 < x_end 2 on NoC 1") as e:
            import_host(path)
        assert e.value.loc.line == MCAST_LINE
    else:
        assert [g.rect for g in import_host(path).groups] == [(1, 0, 2, 0)]


def _replays(p: Any, cx: dict[str, Any]) -> bool:
    targets = {st["position"]["engine"]: Position.from_json(st["position"]) for st in cx["stuck"]}
    run = drive(p, cx["trips"] or None, targets)
    return bool(run.reached) and run.status == "deadlock"


@pytest.mark.parametrize("num_dests", [0, 1, 3])
def test_a_count_other_than_the_rectangle_hangs_the_barrier(tmp_path: Path, num_dests: int) -> None:
    """0 (which the vendor documents as a hang), too few and too many: the kernel's count is kept at the multicast's
    line, and the write barrier after it is refuted as a deadlock that the reference interpreter replays."""
    p = import_host(_flag(tmp_path, num_dests=num_dests))
    sender = next(ep for ep in p.programs if ep.key == "(0,0).writer")
    (flag,) = [op for op in walk(sender.ops) if isinstance(op, McastSetValid)]
    assert flag.num_dests == num_dests
    report = certify(p)
    assert report.exit_code == 1
    (dl,) = [r for r in report.results if r.family == "deadlock" and r.verdict is Verdict.REFUTED]
    assert dl.counterexample is not None
    stuck = {st["position"]["engine"]: st for st in dl.counterexample["stuck"]}
    at = sender.source_of(tuple(stuck["(0,0).writer"]["position"]["path"]))
    assert at is not None
    assert at.line == BARRIER_LINE
    assert _replays(p, dl.counterexample)
    assert all(r.verdict is not Verdict.PROVED for r in report.results if r.family == "deadlock")


def test_a_rectangle_of_the_sender_alone_is_refused_at_its_line(tmp_path: Path) -> None:
    """dataflow_api.h:921-922: a non-loopback multicast's range "must not be just self"; what the NoC does then is
    not documented, so it is refused by name where it is written, not read as a multicast to no one."""
    with pytest.raises(Refused, match="multicast to its sender alone") as e:
        import_host(_flag(tmp_path, (0, 0, 0, 0), 1))
    assert e.value.loc.line == MCAST_LINE


def test_a_host_core_range_that_ends_before_it_starts_is_bad_input(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``CoreRange(start, end)`` takes start <= end on both axes; "2,0-1,0" is named, not read as 1,0-2,0."""
    path = _flag(tmp_path)
    d = yaml.safe_load(path.read_text())
    d["work_units"][1]["cores"] = "2,0-1,0"
    path.write_text(yaml.safe_dump(d))
    with pytest.raises(ParseError) as e:
        import_host(path)
    assert e.value.field == "work_units[1].cores"
    assert "ends before it starts" in e.value.rule
    assert main(["import", "ttmetal", str(path), "-o", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "work_units[1].cores" in err


# ------------------------------------------------------------------ tt-metal #42100's move kernel on one column

MOVE = "ttnn/operations/data_movement/move/device/kernels/dataflow/move_interleaved_with_overlap.cpp"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "ttmetal"


def _release(version: str) -> None:
    """Skip unless the ttnn ``version`` wheel is at hand (the pinned one is downloaded as the other wheel tests do;
    an older one only when already cached, as tests/test_ttmetal_hangs.py)."""
    import os

    from verispatial.frontends.ttmetal.vendor import TTNN_VERSION, wheel_root

    download = version == TTNN_VERSION or os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
    if wheel_root(download=download, version=version) is None:
        pytest.skip(f"the ttnn {version} wheel is not cached")


def _move_column(tmp_path: Path, version: str) -> Path:
    """examples/ttmetal/move_overlap on the single column (0,0)-(0,2), as MoveOverlapProgramFactory gives it when the
    pages fit one column of the grid (cores ``{i / num_cores_y, i % num_cores_y}``): 2 tiles per core, controller
    (0,0). Before 0.81.1 get_multicast_regions splits the controller's range into right_block ((1,0), end) — here
    (1,0)-(0,2), ends before it starts, of size() 0 — and the stick (0,1)-(0,2), and the kernel multicasts both
    (0.78.0 move_overlap_program_factory.cpp:35-42, kernel :73-76); 0.81.1 leaves an empty split out (:33-44) and the
    kernel multicasts only ``num_multicast_regions`` (1 here, the unused slots zero, :155-170)."""
    d = yaml.safe_load((EXAMPLES / "move_overlap" / "host.yaml").read_text())
    after = version == "0.81.1"
    if not after:
        var = "VERISPATIAL_TTNN_" + version.replace(".", "_")
        d["kernel_root"] = "${" + var + "}/ttnn/ttnn/cpp"
        d["kernels"][0]["runtime_args"][-1] = "do_third_multicast"
    stick, zero = (0, 1, 0, 2, 2), (0, 0, 0, 0, 0)
    regions = [stick, zero, zero] if after else [(1, 0, 0, 2, 0), stick, stick]
    units = []
    for y in range(3):
        a = dict(d["work_units"][0]["runtime_args"]["move"], start_id=2 * y, is_controller=int(y == 0))
        for k, r in enumerate(regions):
            a.update({f"range_{k}_{f}": v for f, v in zip(("start_noc_x", "start_noc_y", "end_noc_x", "end_noc_y",
                                                             "size"), r, strict=True)})
        a.pop("num_multicast_regions")
        a["num_multicast_regions" if after else "do_third_multicast"] = 1 if after else 0
        units.append({"cores": f"0,{y}", "kernels": ["move"], "runtime_args": {"move": a}})
    d["work_units"] = units
    out = tmp_path / f"move_{version}.yaml"
    out.write_text(yaml.safe_dump(d))
    return out


@pytest.mark.parametrize(("version", "line"), [("0.72.0", 70), ("0.78.0", 73)])
def test_move_before_the_fix_multicasts_around_the_torus(tmp_path: Path, version: str, line: int) -> None:
    """The controller's first flag multicast goes to right_block (1,0)-(0,2) with num_dests 0: on NoC 0 a wrap-around
    multicast (x_start 1 > x_end 0) to cores across the grid's edge, whose acknowledgements the write barrier after it
    (:91 / :93) does not expect — the hang of tt-metal #42100's kind. What the wrap-around reaches is outside the model,
    so the reading stops there by name, at the kernel's line; it is no longer read as the rectangle (0,0)-(1,2)."""
    _release(version)
    with pytest.raises(Refused, match="multicast rectangle against its NoC's direction") as e:
        import_host(_move_column(tmp_path, version))
    assert (e.value.loc.file, e.value.loc.line) == (MOVE, line)
    assert "x_start 1 > x_end 0 on NoC 0" in str(e.value)


def test_move_after_the_fix_reads_and_ends_with_its_increments_unacknowledged(tmp_path: Path) -> None:
    """0.81.1 multicasts the stick alone, read as the rectangle (0,1)-(0,2). Refuted: each worker's ``sem.up(noc, x,
    y, 1)`` (:88) is ``up_remote``, a non-posted ``noc_semaphore_inc`` with no atomic barrier (tt_metal/hw/inc/api/
    dataflow/semaphore_dm_impl.h:235-253; the local ``up`` has one, :88-89), and the kernel never waits for it: a real
    finding, as in examples/ttmetal/move_overlap, not a model fault."""
    _release("0.81.1")
    p = import_host(_move_column(tmp_path, "0.81.1"))
    assert [(g.sender, g.rect) for g in p.groups] == [(Site(0, 0), (0, 1, 0, 2))]
    report = certify(p)
    assert report.exit_code == 1
    refuted = [r for r in report.results if r.verdict is Verdict.REFUTED]
    assert sorted((r.counterexample or {}).get("rule", "") for r in refuted) == ["async-pending-at-end"] * 2
    assert not [r for r in report.results if r.verdict is Verdict.PROVED and r.family == "deadlock"]


def test_a_runtime_arg_written_as_a_number_with_no_fraction_is_that_integer(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """JSON Schema's ``integer`` takes ``2.0`` (host.schema.json lets it through): read as 2, the rectangle's count,
    and proved. Before, the host reading failed on it (``checker error: TypeError``, exit 4); ``2.5`` stays bad
    input, exit 2, one line naming the field."""
    assert main(["certify", str(_flag(tmp_path, num_dests=2.0)), "-q", "--no-cache"]) == 0  # type: ignore[arg-type]
    capsys.readouterr()
    assert main(["certify", str(_flag(tmp_path, num_dests=2.5)), "-q", "--no-cache"]) == 2  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "work_units[0].runtime_args.sender.num_dests" in err
