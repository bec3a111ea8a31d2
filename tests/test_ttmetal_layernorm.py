"""The sharded layernorm read from the ttnn 0.81.1 wheel (examples/ttmetal/layernorm_sharded, issue 18 item 4): the
two multicast readers, the writer and the compute kernel of ``normalization/layernorm/device/kernels/`` on a 2 x 1
grid. Read, it is the program examples/vendor/layernorm_sharded.json transcribes by hand; certified, it is refuted by
the vendor's own two findings, each replayed by the interpreter; with the receiver's atomic barrier added the atomic
finding goes, and with its VALID wait after the gather it reads a partial before it is pushed. Needs the cached
wheel (downloaded once; skipped offline, as the other vendor tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")

from verispatial.frontends.ttmetal import vendor

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "ttmetal" / "layernorm_sharded"
LN = "ttnn/operations/normalization/layernorm/device/kernels/dataflow"
RECEIVER = f"{LN}/reader_mcast_receiver_unary_sharded_ln.cpp"

#: The vendor's findings (examples/ttmetal/layernorm_sharded/notes.md): the writer's three constant tiles pushed with
#: their stores undrained, on both cores, and the receiver's remote increments never acknowledged.
PUBLISH = {f"async-read-publish:({x},0).writer:[{i}]" for x in (0, 1) for i in (2, 5, 8)}
ATOMIC = {"async-pending-at-end:(1,0).reader:end"}


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


def _verdicts(report: dict[str, Any], verdict: str) -> set[str]:
    return {r["name"] for r in report["results"] if r["verdict"] == verdict}


def _with_receiver(ttnn_wheel: Path, tmp_path: Path, edit: Any) -> Path:
    """The example's host with the receiver kernel replaced by ``edit`` of its lines (a copy here; its helper header
    is found through ``include_dirs``)."""
    import yaml

    cpp = ttnn_wheel / "ttnn" / "ttnn" / "cpp"
    lines = (cpp / RECEIVER).read_text().splitlines()
    (tmp_path / "receiver.cpp").write_text("\n".join(edit(lines)) + "\n")
    d = yaml.safe_load((EXAMPLE / "host.yaml").read_text())
    d["kernel_root"] = str(cpp)
    d["include_dirs"] = [LN]
    k = next(k for k in d["kernels"] if k["source"] == RECEIVER)
    k["source"] = str(tmp_path / "receiver.cpp")
    host = tmp_path / "host.yaml"
    host.write_text(yaml.safe_dump(d))
    return host


def test_layernorm_sharded_reads_as_transcribed_and_is_refused_by_the_vendors_findings(
        ttnn_wheel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Engine by engine the buffer and transfer ops of the kernels as read are the hand transcription's; the
    certificate refutes exactly the vendor's findings, replayed, and proves the other 129 obligations."""
    import sys

    from verispatial.frontends.ttmetal import import_host
    from verispatial.ir.serialize import load_program

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_ttmetal_vendor import _lifecycle

    read = import_host(EXAMPLE / "host.yaml")
    hand = load_program(EXAMPLE.parent.parent / "vendor" / "layernorm_sharded.json")
    by_key = {ep.key: ep for ep in hand.programs}
    names = {b.id: b.name for b in read.buffers}
    hand_names = {b.id: b.name for b in hand.buffers}
    for ep in read.programs:
        assert _lifecycle(ep.ops, names) == _lifecycle(by_key[ep.key].ops, hand_names), ep.key
    rc, report = _certify(EXAMPLE / "host.yaml", capsys)
    assert rc == 1
    assert _verdicts(report, "refuted") == PUBLISH | ATOMIC
    assert not _verdicts(report, "failed-to-prove")
    assert len(_verdicts(report, "proved")) == 129
    atomic = next(r for r in report["results"] if r["name"] in ATOMIC)
    text = json.dumps(atomic)
    assert "replayed_by" in text
    assert f"{RECEIVER}:156" in text
    assert f"{RECEIVER}:248" in text


def test_receiver_with_an_atomic_barrier_leaves_only_the_undrained_constants(
        ttnn_wheel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The fix of the atomic finding: ``noc.async_atomic_barrier();`` before the receiver returns (as its in0
    sibling of the 2D matmul does)."""
    def fix(lines: list[str]) -> list[str]:
        end = next(i for i, s in enumerate(lines) if s.strip() == "#endif  // IDLE_CORE")
        return [*lines[:end], "    noc.async_atomic_barrier();", *lines[end:]]

    rc, report = _certify(_with_receiver(ttnn_wheel, tmp_path, fix), capsys)
    assert rc == 1
    assert _verdicts(report, "refuted") == PUBLISH


def test_receiver_gathering_before_valid_reads_an_unpushed_partial(
        ttnn_wheel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The receiver's ``reduce_sender_sem.wait(VALID)`` (line 157) moved after its gather's push (192): it may read
    the sender's partial before the sender's compute pushed it (``remote-read-unpublished``, replayed)."""
    def late(lines: list[str]) -> list[str]:
        assert lines[156].strip() == "reduce_sender_sem.wait(VALID);"
        assert lines[191].strip().startswith("dfb_external_obj.push_back(")
        return [*lines[:156], *lines[157:192], "                reduce_sender_sem.wait(VALID);", *lines[192:]]

    rc, report = _certify(_with_receiver(ttnn_wheel, tmp_path, late), capsys)
    assert rc == 1
    unpublished = [r for r in report["results"] if r["verdict"] == "refuted" and
                   r["name"].startswith("remote-read-unpublished:(1,0).reader")]
    assert unpublished
    assert "receiver.cpp:179" in json.dumps(unpublished[0])  # line 180 of the vendor file, one line up here


def test_on_four_cores_a_non_all_to_all_receiver_can_miss_valid(ttnn_wheel: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """host_4cores.yaml: (2,0) and (3,0) only wait for the multicast; the sender's later flags of a pass are not
    ordered after their exact ``wait(VALID)`` (:157): ``sem-overshoot`` of their words and a deadlock there are
    refuted, replayed; the vendor's other findings on every core; what rests on the words' protocol is failed-to-prove
    as their consequence, nothing else (notes.md, "Four cores")."""
    rc, report = _certify(EXAMPLE / "host_4cores.yaml", capsys)
    assert rc == 1
    refuted = _verdicts(report, "refuted")
    assert {"sem-overshoot:sem0@(2,0)", "sem-overshoot:sem0@(3,0)"} <= refuted
    assert report["summary"]["other_failed_to_prove"] == 0
    assert {n for n in refuted if n.startswith("async-pending-at-end")} == {
        f"async-pending-at-end:({x},0).reader:end" for x in (1, 2, 3)}
    dead = [r for r in report["results"] if r["verdict"] == "refuted" and r["family"] == "deadlock"]
    assert len(dead) == 1
    text = json.dumps(dead[0])
    assert "replayed_by" in text
    assert f"{RECEIVER}:157" in text
