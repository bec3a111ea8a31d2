"""The vendor wheel cache (``frontends/ttmetal/vendor.py``): each ttnn release under its own variable and cache
directory, so a host description can name the kernels of an older release (``examples/ttmetal/hangs/``). No
network here: the download itself is exercised by the wheel tests, which skip offline."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from verispatial.frontends.ttmetal import vendor


def test_each_release_has_its_own_variable() -> None:
    assert vendor.env_var() == "VERISPATIAL_TTNN"
    assert vendor.env_var(vendor.TTNN_VERSION) == "VERISPATIAL_TTNN"
    assert vendor.env_var("0.72.0") == "VERISPATIAL_TTNN_0_72_0"
    with pytest.raises(ValueError, match=r"a\.b\.c"):
        vendor.env_var("0.72")
    assert vendor.version_of_env("${VERISPATIAL_TTNN_0_72_0}/ttnn/ttnn/cpp") == "0.72.0"
    assert vendor.version_of_env("${VERISPATIAL_TTNN}/ttnn/ttnn/cpp") == vendor.TTNN_VERSION
    assert vendor.version_of_env("kernels") is None


def test_an_older_release_unpacks_only_its_kernel_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Of a non-pinned wheel only ``ttnn/ttnn/cpp/`` is unpacked; the variable then names the copy."""
    wheel = tmp_path / "ttnn-0.72.0-cp312-cp312-manylinux_2_34_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("ttnn/ttnn/cpp/ttnn/operations/op/device/kernels/k.cpp", "void kernel_main() {}\n")
        z.writestr("ttnn/ttnn/_ttnn.so", "not a kernel")
    root = tmp_path / "wheel"
    vendor.unpack(wheel, root, whole=False)
    assert (root / vendor.KERNELS / "op/device/kernels/k.cpp").is_file()
    assert not (root / "ttnn/ttnn/_ttnn.so").exists()
    monkeypatch.setenv("VERISPATIAL_TTNN_0_72_0", str(root))
    assert vendor.wheel_root(version="0.72.0") == root
    monkeypatch.setenv("VERISPATIAL_TTNN_0_72_0", str(tmp_path / "nothing"))
    assert vendor.wheel_root(download=True, version="0.72.0") is None  # a given variable is never downloaded into


def test_an_older_release_unpacks_its_device_headers(tmp_path: Path) -> None:
    """The release's own headers under ``ttnn/tt_metal/`` (its JIT include path: moe_utils.hpp's
    ``"fabric/fabric_edm_packet_header.hpp"`` is ``tt_metal/fabric/`` in 0.70.1 and ``tt_metal/hw/inc/hostdev/`` in
    0.81.1) are unpacked with the kernel tree; its firmware images are not."""
    wheel = tmp_path / "ttnn-0.70.1-cp312-cp312-manylinux_2_34_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("ttnn/ttnn/cpp/ttnn/operations/op/device/kernels/k.cpp", "void kernel_main() {}\n")
        z.writestr("ttnn/tt_metal/fabric/fabric_edm_packet_header.hpp", "#pragma once\n")
        z.writestr("ttnn/tt_metal/hw/inc/api/dataflow/dataflow_api.h", "#pragma once\n")
        z.writestr("ttnn/tt_metal/hw/inc/internal/tt-1xx/risc_common.h", "#pragma once\n")
        z.writestr("ttnn/tt_metal/pre-compiled/brisc.elf", "an image")
    root = tmp_path / "wheel"
    vendor.unpack(wheel, root, whole=False)
    assert (root / "ttnn/tt_metal/fabric/fabric_edm_packet_header.hpp").is_file()
    assert (root / "ttnn/tt_metal/hw/inc/api/dataflow/dataflow_api.h").is_file()
    assert (root / "ttnn/tt_metal/hw/inc/internal/tt-1xx/risc_common.h").is_file()
    assert not (root / "ttnn/tt_metal/pre-compiled/brisc.elf").exists()


def test_a_cached_release_without_its_device_headers_gets_them_from_its_download(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy cached when only the kernel tree was unpacked is completed from the wheel kept beside it (no network);
    what was there stays."""
    monkeypatch.delenv("VERISPATIAL_TTNN_0_70_1", raising=False)
    monkeypatch.setattr(vendor, "cache_dir", lambda version=vendor.TTNN_VERSION: tmp_path / f"ttnn-{version}")
    (tmp_path / "ttnn-0.70.1/download").mkdir(parents=True)
    with zipfile.ZipFile(tmp_path / "ttnn-0.70.1/download/ttnn-0.70.1-cp312-cp312-manylinux_2_34_x86_64.whl",
                         "w") as z:
        z.writestr("ttnn/ttnn/cpp/ttnn/operations/op/device/kernels/k.cpp", "void kernel_main() {}\n")
        z.writestr("ttnn/tt_metal/hw/inc/api/dataflow/dataflow_api.h", "#pragma once\n")
    root = tmp_path / "ttnn-0.70.1/wheel"
    (root / vendor.KERNELS / "op/device/kernels").mkdir(parents=True)
    (root / vendor.KERNELS / "op/device/kernels/k.cpp").write_text("// cached\n")
    assert vendor.wheel_root(version="0.70.1") == root
    assert (root / "ttnn/tt_metal/hw/inc/api/dataflow/dataflow_api.h").is_file()
    assert (root / vendor.KERNELS / "op/device/kernels/k.cpp").read_text() == "// cached\n"


def test_completing_the_device_headers_is_one_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The headers are unpacked beside the copy and moved in whole: a second completion (another test worker that
    lost the race) leaves the first one's tree as it is and no staging directory behind."""
    monkeypatch.delenv("VERISPATIAL_TTNN_0_70_1", raising=False)
    (tmp_path / "ttnn-0.70.1/download").mkdir(parents=True)
    with zipfile.ZipFile(tmp_path / "ttnn-0.70.1/download/ttnn-0.70.1-cp312-cp312-manylinux_2_34_x86_64.whl",
                         "w") as z:
        z.writestr("ttnn/tt_metal/hw/inc/api/dataflow/dataflow_api.h", "// from the wheel\n")
    root = tmp_path / "ttnn-0.70.1/wheel"
    (root / "ttnn/tt_metal/hw/inc/api/dataflow").mkdir(parents=True)
    (root / "ttnn/tt_metal/hw/inc/api/dataflow/dataflow_api.h").write_text("// the first worker's\n")
    vendor._add_device_headers(root, "0.70.1")
    assert (root / "ttnn/tt_metal/hw/inc/api/dataflow/dataflow_api.h").read_text() == "// the first worker's\n"
    assert sorted(p.name for p in (tmp_path / "ttnn-0.70.1").iterdir()) == ["download", "wheel"]
    (root / "ttnn/tt_metal/hw/inc/api/dataflow/dataflow_api.h").unlink()
    for d in ("hw/inc/api/dataflow", "hw/inc/api", "hw/inc", "hw", ""):
        (root / "ttnn/tt_metal" / d).rmdir()
    vendor._add_device_headers(root, "0.70.1")
    assert (root / "ttnn/tt_metal/hw/inc/api/dataflow/dataflow_api.h").read_text() == "// from the wheel\n"
    assert sorted(p.name for p in (tmp_path / "ttnn-0.70.1").iterdir()) == ["download", "wheel"]


def test_a_host_naming_a_release_not_cached_says_which(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``kernel_root: ${VERISPATIAL_TTNN_9_9_9}/...`` with neither the variable nor the cached copy: bad input
    naming the variable and the release, nothing downloaded."""
    from verispatial.errors import ParseError
    from verispatial.frontends.ttmetal import import_host

    monkeypatch.delenv("VERISPATIAL_TTNN_9_9_9", raising=False)
    monkeypatch.setattr(vendor, "cache_dir", lambda version=vendor.TTNN_VERSION: tmp_path / f"ttnn-{version}")
    host = tmp_path / "h.json"
    host.write_text(json.dumps({
        "format": "verispatial.ttmetal-host", "version": 1, "name": "h",
        "kernel_root": "${VERISPATIAL_TTNN_9_9_9}/ttnn/ttnn/cpp",
        "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader"}],
        "work_units": [{"cores": "0,0", "kernels": ["k"]}]}))
    with pytest.raises(ParseError, match=r"VERISPATIAL_TTNN_9_9_9.*ttnn 9\.9\.9 wheel"):
        import_host(host)


# ------------------------------------------------------------------ vendor ops end to end (issue 18 item 4)


EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "ttmetal"


@pytest.fixture(scope="module")
def ttnn_wheel() -> Path:
    root = vendor.wheel_root(download=True)
    if root is None:
        pytest.skip(f"the ttnn {vendor.TTNN_VERSION} wheel is not cached and could not be downloaded (offline?)")
    return root


def _certify(host: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    from verispatial.cli import main

    capsys.readouterr()
    rc = main(["certify", str(host), "--json", "-q", "--no-cache"])
    return rc, json.loads(capsys.readouterr().out)


def _lifecycle(ops: Any, names: dict[int, str]) -> list[tuple[str, str, int]]:
    """The buffer and transfer ops of ``ops`` in program order, constant loops unrolled, buffers by name."""
    from verispatial.ir.ops import FillTiles, Loop, Pop, Push, ReadTiles, Reserve, Wait, WriteTiles

    out: list[tuple[str, str, int]] = []
    for op in ops:
        if isinstance(op, Loop):
            assert isinstance(op.count, int)
            out.extend(_lifecycle(op.body, names) * op.count)
        elif isinstance(op, (Reserve, Push, Wait, Pop)):
            out.append((type(op).__name__, names[op.buf], op.pages))
        elif isinstance(op, (ReadTiles, FillTiles)):
            out.append((type(op).__name__, names[op.into], op.tiles))
        elif isinstance(op, WriteTiles):
            out.append(("WriteTiles", names[op.src], op.tiles))
    return out


def test_softmax_w_reads_as_transcribed_and_is_proved(ttnn_wheel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ttnn.softmax along W (examples/ttmetal/softmax_w): the reader's two reduce scalers (prepare_reduce_scaler's
    zero fill and stores, one FillTiles each), the compute kernel's kernel_lib chain (``ckl::unary`` Exp, the row
    reduce with its reciprocal, ``ckl::mul`` by the column broadcast) and the blocked writer read from the wheel give,
    engine by engine, the buffer and transfer ops examples/vendor/softmax_w.json transcribes by hand; certified, it
    is refuted as the transcription is, at the scalers' undrained pushes only."""
    from verispatial.frontends.ttmetal import import_host
    from verispatial.ir.serialize import load_program

    host = EXAMPLES / "softmax_w" / "host.yaml"
    read = import_host(host)
    hand = load_program(EXAMPLES.parent / "vendor" / "softmax_w.json")
    by_key = {ep.key: ep for ep in hand.programs}
    for ep in read.programs:
        names = {b.id: b.name for b in read.buffers}
        hand_names = {b.id: b.name for b in hand.buffers}
        assert _lifecycle(ep.ops, names) == _lifecycle(by_key[ep.key].ops, hand_names), ep.key
    compute = next(ep for ep in read.programs if ep.key == "(0,0).compute")
    assert {str(loc).split(":")[0] for _, loc in compute.sources} == {
        "ttnn/operations/normalization/softmax/device/kernels/attention/compute/softmax.cpp",
        "ttnn/kernel_lib/reduce_helpers_compute.inl", "ttnn/kernel_lib/eltwise/api/convenience.inl"}
    rc, report = _certify(host, capsys)
    # prepare_reduce_scaler pushes its stores with no drain (docs/semantics.md "Local-store fills"): refuted there only
    assert rc == 1
    refuted = [r["name"] for r in report["results"] if r["verdict"] == "refuted"]
    assert refuted == ["async-read-publish:(0,0).reader:[2]", "async-read-publish:(0,0).reader:[5]"], refuted
    assert {r["name"] for r in report["results"] if r["verdict"] == "failed-to-prove"} <= {"async-source-reuse"}


def test_softmax_w_with_a_row_more_in_compute_deadlocks(ttnn_wheel: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The compute kernel told one row more than the reader reads waits at the exp chain's per-block wait
    (``ckl::unary``'s CopyTile, convenience.inl:45) forever: refuted as a deadlock there, replayed."""
    import yaml

    d = yaml.safe_load((EXAMPLES / "softmax_w" / "host.yaml").read_text())
    d["kernel_root"] = str(ttnn_wheel / "ttnn" / "ttnn" / "cpp")
    d["work_units"][0]["runtime_args"]["compute"]["num_rows"] = 3
    host = tmp_path / "host.yaml"
    host.write_text(yaml.safe_dump(d))
    rc, report = _certify(host, capsys)
    assert rc == 1
    dead = [r for r in report["results"] if r["verdict"] == "refuted" and r["family"] == "deadlock"]
    assert dead
    assert "convenience.inl:45" in json.dumps(dead[0])
