"""The TT-Lang front end (verispatial/frontends/ttlang): sources under tests/data/ttlang read without running them, a
correct form of each construct proved and a broken form refuted in the right family, shape classes, refusals by
name with file:line, every op located in the .py, and the vendor's tutorials (downloaded into a cache; skipped
offline)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verispatial.driver.run import certify
from verispatial.errors import InvalidProgram, ParseError, SourceRefused
from verispatial.frontends.ttlang import import_file
from verispatial.frontends.ttlang import values as V
from verispatial.frontends.ttlang.shapes import sym_value
from verispatial.ir.ops import Loop, TripCount
from verispatial.ir.program import walk
from verispatial.ir.serialize import load_program
from verispatial.ir.validate import validate

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "ttlang"
MATMUL = DATA / "matmul.py"
ELTWISE = DATA / "eltwise.py"


def _json_files(stdout: str) -> list[dict[str, Any]]:
    """The reports of ``certify --json``: one document, or a list of them for several programs (shape classes)."""
    doc = json.loads(stdout)
    return list(doc) if isinstance(doc, list) else [doc]


def _mutant(tmp_path: Path, src: Path, *edits: tuple[str, str]) -> Path:
    text = src.read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    out = tmp_path / src.name
    out.write_text(text)
    return out


def _refuted(path: Path, *ranges: str) -> list[tuple[str, list[str]]]:
    """Per shape class: its program name and the families refuted in it (a class with none proves: every
    obligation proved)."""
    out = []
    for imp in import_file(str(path), ranges=ranges):
        assert validate(imp.program) == []
        rep = certify(imp.program)
        refuted = sorted({r.family for r in rep.results if r.verdict.value == "refuted"})
        if not refuted:
            assert rep.exit_code == 0, rep.results
        out.append((imp.program.name, refuted))
    return out


@pytest.mark.parametrize("src", [MATMUL, ELTWISE], ids=["matmul", "eltwise"])
def test_correct_sources_prove(src: Path) -> None:
    assert _refuted(src) == [(src.stem, [])]


ACC = ("block_count=2)  # acc", "block_count=1)  # acc")
K_LOOP = ("for _ in range(k_blocks):  # K loop", "for _ in range(k_blocks + 1):  # K loop")
NO_READ_WAIT = ("                        tx_a.wait()\n                        tx_b.wait()\n", "")
NO_WRITE_WAIT = ("                    tx.wait()\n", "")
#: the waits kept but moved past the block's push (the with's exit) / pop: the compiler adds no wait then
READ_WAIT_AFTER_PUSH = ("                        tx_a.wait()\n                        tx_b.wait()\n",
                        "                    tx_a.wait()\n                    tx_b.wait()\n")
WRITE_WAIT_AFTER_POP = ("                    tx.wait()\n", "                tx.wait()\n")


@pytest.mark.parametrize(("src", "edit", "family"), [
    (MATMUL, ACC, "deadlock"),  # the accumulator's ping-pong needs two blocks
    (MATMUL, K_LOOP, "deadlock"),  # compute waits for a K block the reader never sends
    (MATMUL, READ_WAIT_AFTER_PUSH, "async-noc"),  # blocks pushed before their reads land
    (ELTWISE, WRITE_WAIT_AFTER_POP, "async-noc"),  # a block popped while its write may still read it
], ids=["block-count-1", "k-loop-one-too-long", "read-wait-after-push", "write-wait-after-pop"])
def test_broken_forms_are_refuted_in_their_family(tmp_path: Path, src: Path, edit: tuple[str, str], family: str) -> None:
    (_, families), = _refuted(_mutant(tmp_path, src, edit))
    assert families == [family]


def test_one_wait_covers_every_copy_before_it(tmp_path: Path) -> None:
    """``tx.wait()`` lowers to the global read barrier TT-Lang's compiler emits by default, so a second copy's wait
    moved past the pushes is harmless, the first copy's wait covering it: proved, as the hardware runs it."""
    mut = _mutant(tmp_path, ELTWISE, ("                tx_b.wait()  # b wait\n                a_blk.push()\n"
                                      "                b_blk.push()\n",
                                      "                a_blk.push()\n                b_blk.push()\n"
                                      "                tx_b.wait()  # b wait\n"))
    assert _refuted(mut) == [("eltwise", [])]


def test_a_transfer_no_wait_uses_is_waited_right_after_its_copy(tmp_path: Path) -> None:
    """TT-Lang's compiler inserts a wait right after a copy whose handle has no wait (ttl-insert-copy-wait): the
    matmul without its read waits, the elementwise writer without its write wait and a bare ``ttl.copy(...)``
    statement prove, each copy's rows followed at once by the barrier; a handle bound again before its wait gets one
    too. The same waits moved past the push or pop are real hazards (test_broken_forms_are_refuted_in_their_family)."""
    from verispatial.ir.ops import ReadBarrier, ReadTiles

    assert _refuted(_mutant(tmp_path, MATMUL, NO_READ_WAIT)) == [("matmul", [])]
    (tmp_path / "w").mkdir()
    assert _refuted(_mutant(tmp_path / "w", ELTWISE, NO_WRITE_WAIT)) == [("eltwise", [])]
    (tmp_path / "b").mkdir()
    bare = _mutant(tmp_path / "b", MATMUL, ("tx_a = ttl.copy(", "ttl.copy("), ("                        tx_a.wait()\n", ""))
    (imp,) = import_file(str(bare))
    reader = next(ep for ep in imp.program.programs if ep.key == "(0,0).reader")
    body = [op for _, op in _paths(reader.ops)]
    kinds = [type(op) for op in body if isinstance(op, (ReadTiles, ReadBarrier))]
    # a's two tile rows, its barrier, b's two rows, b's own wait
    assert kinds == [ReadTiles, ReadTiles, ReadBarrier, ReadTiles, ReadTiles, ReadBarrier]
    assert certify(imp.program).exit_code == 0


def test_a_block_never_released_is_refused_by_name(tmp_path: Path) -> None:
    """TT-Lang's compiler pushes (pops) a block that has no release after its last use (ttl-insert-cb-sync); that
    placement is not lowered, so the block is refused at the line that took it rather than read as never pushed (which
    refuted a program the compiler makes correct)."""
    mut = _mutant(tmp_path, ELTWISE, ("                a_blk.push()\n", ""))
    with pytest.raises(SourceRefused, match=r"with no push\(\) in this kernel") as e:
        import_file(str(mut))
    assert (e.value.construct, e.value.line) == ("a_dfb.reserve()", 30)


CEIL_WRITER = ("w_blocks = a.shape[0] // TILE // ROWS  # writer", "w_blocks = -(-(a.shape[0] // TILE) // ROWS)  # writer")
ONE_NODE = ("grid=(2, 1)", "grid=(1, 1)")


def test_ceil_writer_proves_at_the_example_shape_and_is_refuted_where_ceil_and_floor_differ(tmp_path: Path) -> None:
    """The writer counts blocks with ceil where reader and compute use floor: equal at the example's 256 rows (a
    multiple of 4 tiles), so that shape proves (as the vendor's simulator runs it clean); at 160 rows (5 tiles) the
    writer waits for a second block nobody pushes."""
    mut = _mutant(tmp_path, ELTWISE, CEIL_WRITER, ONE_NODE)
    assert _refuted(mut) == [("eltwise", [])]
    (imp,) = import_file(str(mut), shapes=["a=160x32", "b=160x32", "y=160x32"])
    rep = certify(imp.program)
    assert "deadlock" in {r.family for r in rep.results if r.verdict.value == "refuted"}


CEIL_K = ("for _ in range(k_blocks):  # K loop", "for _ in range(-(-(a.shape[1] // TILE) // BLOCK)):  # K loop")


def test_ceil_k_loop_is_refuted_in_the_shape_classes_where_it_differs(tmp_path: Path) -> None:
    """Compute counts K blocks with ceil, the reader with floor: over K in 128..256 step 32 the front end splits K
    into its residues modulo the block (2 tiles) and certifies each class: the even one proves for every K in it, the
    odd one deadlocks."""
    mut = _mutant(tmp_path, MATMUL, CEIL_K)
    assert _refuted(mut, "K=128:256:32") == [("matmul.K128+64t", []), ("matmul.K160+64t", ["deadlock"])]


def test_a_range_over_an_output_dimension_is_one_trip_and_one_proof(tmp_path: Path) -> None:
    """R (the rows of a, b and y) in 128..512 step 128: the block loops count ``TripCount(R, 1, 1)`` and y has as
    many tile rows as the trip says (``Tensor.trip_rows``), so its coverage and bounds are asked at every R."""
    (imp,) = import_file(str(_mutant(tmp_path, ELTWISE, ONE_NODE)), ranges=["R=128:512:128"])
    p = imp.program
    assert [(t.name, t.max) for t in p.trips] == [("R", 3)]
    assert {t.name: t.trip_rows for t in p.tensors} == {n: TripCount("R", 4, 4) for n in ("a", "b", "y")}
    assert certify(p).exit_code == 0


def test_a_range_that_moves_a_nodes_share_is_an_address_naming_the_trip() -> None:
    """On the 2x1 grid node 1's first block row is ``per_node`` blocks down, which R changes: its addresses name
    the trip (``ir.core.Addr``), and the program proves for every R of the class (R a multiple of the two nodes'
    blocks)."""
    from verispatial.ir.ops import ReadTiles

    (imp,) = import_file(str(ELTWISE), ranges=["R=256:1024:256"])
    node1 = next(ep for ep in imp.program.programs if ep.key == "(1,0).reader")
    reads = [op for op in walk(node1.ops) if isinstance(op, ReadTiles)]
    assert reads
    assert all("R" in {t.var for t in op.addr.terms} for op in reads)
    assert certify(imp.program).exit_code == 0


def test_a_range_is_one_trip_and_one_proof(tmp_path: Path) -> None:
    """K in 128..1024 step 64: K // 32 // 2 is exact (2 + t), so every K block loop counts ``TripCount(K, 1, 2)``
    and one program proves every value; the loops stay loops."""
    (imp,) = import_file(str(MATMUL), ranges=["K=128:1024:64"])
    p = imp.program
    assert [(t.name, t.max) for t in p.trips] == [("K", 14)]
    counts = {op.count for ep in p.programs for op in walk(ep.ops) if isinstance(op, Loop)}
    assert TripCount("K", 1, 2) in counts
    assert certify(p).exit_code == 0


def test_an_uneven_range_splits_into_classes() -> None:
    (a, b) = import_file(str(MATMUL), ranges=["K=128:1024:32"])
    assert (a.program.name, b.program.name) == ("matmul.K128+64t", "matmul.K160+64t")
    assert [str(c) for c in a.classes] == ["K in 128..1024 step 64"]


def test_every_op_is_located_in_the_source() -> None:
    (imp,) = import_file(str(MATMUL))
    lines = MATMUL.read_text().splitlines()
    for ep in imp.program.programs:
        table = dict(ep.sources)

        def paths(ops: tuple, at: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
            out = []
            for i, op in enumerate(ops):
                out.append((*at, i))
                if hasattr(op, "body"):
                    out += paths(op.body, (*at, i))
            return out

        for path in paths(ep.ops):
            loc = table[path]
            assert loc.file == str(MATMUL)
            assert 1 <= loc.line <= len(lines)
    reader = next(ep for ep in imp.program.programs if ep.engine.value == "reader")
    loc = reader.source_of((0, 0, 0, 2))  # the first read_tiles of a
    assert loc is not None
    assert "ttl.copy(a[" in lines[loc.line - 1]


@pytest.mark.parametrize(("body", "construct"), [
    ("    net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(2, 0))])\n", "ttl.Pipe"),  # a node off the grid
    ("    @ttl.datamovement()\n    def spin():\n        while True:\n            pass\n", "while"),
    ("    @ttl.compute()\n    def tri():\n        for i in range(4):\n            for j in range(i):\n                pass\n",
     "range(i)"),
    ("    @ttl.datamovement()\n    def c2():\n        with x_dfb.wait() as p, y_dfb.reserve() as q:\n"
     "            ttl.copy(p, q)\n", "ttl.copy(p, q)"),
    ("    @ttl.datamovement()\n    def odd():\n        for i in range(4):\n            if i == 2:\n"
     "                with x_dfb.wait() as p:\n                    pass\n", "if i == 2"),
    ("    @ttl.datamovement()\n    def carry():\n        row = 0\n        for i in range(2):\n"
     "            with x_dfb.reserve() as p:\n                tx = ttl.copy(x[row, 0], p)\n                tx.wait()\n"
     "            row = row + 1\n", "row"),  # a value carried across iterations
    ("    @ttl.datamovement()\n    def after():\n        for i in range(2):\n            row = i\n"
     "        with x_dfb.reserve() as p:\n            tx = ttl.copy(x[row, 0], p)\n            tx.wait()\n",
     "row"),  # a loop's value read after it
])
def test_unsupported_constructs_are_refused_by_name_and_line(tmp_path: Path, body: str, construct: str) -> None:
    head = ("import ttl\n\n\n@ttl.operation(grid=(2, 1))\ndef op(x, y):\n"
            "    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)\n"
            "    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)\n")
    src = tmp_path / "op.py"
    src.write_text(head + body)
    with pytest.raises(SourceRefused) as e:
        import_file(str(src), shapes=["x=64x64", "y=64x64"])
    assert e.value.construct.startswith(construct)
    line = (head + body).splitlines()[e.value.line - 1]
    assert construct.split("(")[0].split()[-1] in line
    if construct == "row":
        assert "ttl.copy(x[row" in line
    run = subprocess.run([sys.executable, "-m", "verispatial", "import", "ttlang", str(src), "--shape", "x=64x64",
                          "--shape", "y=64x64", "-o", str(tmp_path / "out.json")], capture_output=True, text=True,
                         check=False)
    assert run.returncode == 2
    assert run.stderr.startswith(f"verispatial: error: {src}:{e.value.line}: {construct}")
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "out.json").exists()


MESH = DATA / "mesh_shard.py"


def test_a_mesh_of_devices_is_read_at_one_devices_shard(tmp_path: Path) -> None:
    """ShardTensorToMesh along rows halves them on two devices, ReplicateTensorToMesh keeps b whole; the count comes
    from --devices where the example asks the machine, from a literal MeshShape otherwise."""
    with pytest.raises(SourceRefused, match="give it with --devices N") as e:
        import_file(str(MESH))
    assert (e.value.construct, e.value.line) == ("ttnn.open_mesh_device", 47)
    (imp,) = import_file(str(MESH), devices=2)
    assert {t.name: t.shape for t in imp.program.tensors} == {"a": (128, 64), "b": (128, 64), "y": (128, 64)}
    assert certify(imp.program).exit_code == 0
    with pytest.raises(SourceRefused, match="a tensor of 256x64 sharded along dimension 0 over 3 devices"):
        import_file(str(MESH), devices=3)
    literal = _mutant(tmp_path, MESH, ("n_devices = ttnn.GetNumAvailableDevices()", "n_devices = 4"))
    (imp,) = import_file(str(literal))
    assert {t.name: t.shape for t in imp.program.tensors} == {"a": (64, 64), "b": (64, 64), "y": (64, 64)}
    with pytest.raises(ParseError, match="--devices: the example does not take its device count from the machine"):
        import_file(str(literal), devices=4)
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(MESH), "--devices", "2", "-q"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(MESH), "--devices", "0"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 2
    assert "--devices" in run.stderr


def test_bad_options_are_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="--range"):
        import_file(str(MATMUL), ranges=["Q=1:4"])  # a parameter no shape is built from
    with pytest.raises(ParseError, match="--shape"):
        import_file(str(MATMUL), shapes=["z=32x32"])
    with pytest.raises(ParseError, match="--range"):
        import_file(str(MATMUL), ranges=["K=4:1"])
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(ROOT / "examples" / "mcast_pair.json"),
                          "--shape", "a=1x1"], capture_output=True, text=True, check=False)
    assert run.returncode == 2
    assert "--shape" in run.stderr
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(MATMUL), "--range", "K=128:1024:32",
                          "--write-certificate", str(tmp_path / "c.json")], capture_output=True, text=True, check=False)
    assert run.returncode == 2
    assert "has 2 shape classes" in run.stderr
    assert not (tmp_path / "c.json").exists()


def test_a_range_past_the_models_numbers_is_bad_input_not_a_proof(tmp_path: Path) -> None:
    # A fresh user's find: a range up to 10**12 used to be proved, on 32-bit trips the encodings wrap. The imported
    # program is validated like a loaded program.json: bad input naming the trip, exit 2, nothing written.
    with pytest.raises(InvalidProgram, match="trip K"):
        import_file(str(MATMUL), ranges=["K=128:999999999999:64"])
    for cmd in (["certify", str(MATMUL)], ["import", "ttlang", str(MATMUL), "-o", str(tmp_path / "p.json")]):
        run = subprocess.run([sys.executable, "-m", "verispatial", *cmd, "--range", "K=128:999999999999:64"],
                             capture_output=True, text=True, check=False)
        assert run.returncode == 2, run.stderr
        assert "trip K" in run.stderr
        assert "too large for the model" in run.stderr
        assert "Traceback" not in run.stderr
    assert not list(tmp_path.iterdir())


def test_a_counterexample_gives_the_range_value_beside_its_trip(tmp_path: Path) -> None:
    # A fresh user's find: a refutation over --range K=128:1024:64 said "K=0" (the class's trip), not K=128.
    mut = _mutant(tmp_path, MATMUL, K_LOOP)
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(mut), "--range", "K=128:1024:64",
                          "--json", "-q"], capture_output=True, text=True, check=False)
    assert run.returncode == 1, run.stderr
    cexes = [r["counterexample"] for f in _json_files(run.stdout) for r in f["results"]
             if r["verdict"] == "refuted" and r.get("counterexample", {}).get("trips")]
    assert cexes
    for cex in cexes:
        assert cex["shape"] == {"K": 128 + 64 * cex["trips"]["K"]}


def test_cli_import_writes_one_file_per_class(tmp_path: Path) -> None:
    out = tmp_path / "mm.json"
    run = subprocess.run([sys.executable, "-m", "verispatial", "import", "ttlang", str(MATMUL), "--range",
                          "K=128:1024:32", "-o", str(out)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert not out.exists()
    names = [load_program(tmp_path / f"mm.{i}.json").name for i in (1, 2)]
    assert names == ["matmul.K128+64t", "matmul.K160+64t"]
    assert load_program(tmp_path / "mm.1.json").programs[0].sources  # locations survive the file


def test_a_counterexample_names_the_python_line(tmp_path: Path) -> None:
    mut = _mutant(tmp_path, MATMUL, ACC)
    lines = mut.read_text().splitlines()
    acc_reserve = next(i + 1 for i, t in enumerate(lines) if "with acc_dfb.reserve() as acc_blk:" in t
                       and "store(pre" in lines[i + 1])
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(mut), "-q"], capture_output=True,
                         text=True, check=False)
    assert run.returncode == 1, run.stderr
    assert f"    at {mut}:{acc_reserve}:" in run.stdout
    assert "with acc_dfb.reserve() as acc_blk:" in run.stdout


# ------------------------------------------------------------------------------------- the vendor's tutorials

WHEEL = "tt-lang-sim==1.1.6"
SINGLE_DEVICE = ["matmul/step_1_single_node_single_tile_block.py", "matmul/step_2_single_node_multitile_block.py",
                 "matmul/step_3_multinode.py", "matmul/step_4_multinode_grid_full.py",
                 "elementwise/step_1_single_node_single_tile_block.py", "elementwise/step_2_single_node_multitile_block.py",
                 "elementwise/step_3_multinode.py", "elementwise/step_4_multinode_grid_full.py",
                 "broadcast/single_node_broadcast_single_tile_block.py",
                 "broadcast/single_node_broadcast_multitile_blocks.py"]
#: Those certified here (every single-device one: 0.1-4.6 s CPU each, benchmarks/bench_ttlang.py).
QUICK = SINGLE_DEVICE
MULTI_DEVICE = ["matmul/step_5_multidevice_shard_m.py", "matmul/step_6_multidevice_shard_k.py",
                "matmul/step_7_multidevice_shard_k_all_reduce.py"]


def tutorials_dir() -> Path:
    """The tutorials of the tt-lang-sim wheel, downloaded once into ``$VERISPATIAL_VENDOR_CACHE`` (default
    ~/.cache/verispatial/vendor) and unpacked there; the test skips when the download fails (offline)."""
    cache = Path(os.environ.get("VERISPATIAL_VENDOR_CACHE", Path.home() / ".cache" / "verispatial" / "vendor"))
    unpacked = cache / "tt-lang-sim-1.1.6"
    tut = unpacked / "ttl" / "tutorials"
    if not tut.is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        run = subprocess.run([sys.executable, "-m", "pip", "download", WHEEL, "--no-deps", "-q", "-d", str(cache)],
                             capture_output=True, text=True, check=False, timeout=300)
        wheels = sorted(cache.glob("tt_lang_sim-1.1.6-*.whl"))
        if run.returncode != 0 or not wheels:
            pytest.skip(f"cannot download {WHEEL} (offline?): {run.stderr.strip()[-200:]}")
        with zipfile.ZipFile(wheels[0]) as z:
            z.extractall(unpacked)
    return tut


@pytest.fixture(scope="module")
def tutorials() -> Path:
    return tutorials_dir()


@pytest.mark.parametrize("name", SINGLE_DEVICE)
def test_every_single_device_tutorial_imports(tutorials: Path, name: str) -> None:
    (imp,) = import_file(str(tutorials / name))
    assert validate(imp.program) == []
    assert all(ep.sources for ep in imp.program.programs)


@pytest.mark.parametrize("name", QUICK)
def test_single_node_tutorials_prove_at_their_own_shapes(tutorials: Path, name: str) -> None:
    (imp,) = import_file(str(tutorials / name))
    assert certify(imp.program).exit_code == 0


@pytest.mark.parametrize("name", MULTI_DEVICE)
def test_multi_device_tutorials_are_refused_by_name_without_a_device_count(tutorials: Path, name: str) -> None:
    """Steps 5-7 shard their tensors over every device of the machine (``ttnn.GetNumAvailableDevices()``): the
    per-device shapes are unknown until the count is given."""
    with pytest.raises(SourceRefused, match=r"GetNumAvailableDevices\(\)\): give it with --devices N") as e:
        import_file(str(tutorials / name))
    assert e.value.construct == "ttnn.open_mesh_device"


#: One device's shard of the example's 8192 x 8192 tensors over 4 devices: step 5 shards a and c (and y) along M,
#: steps 6 and 7 shard a along K and b along K (c is stacked per device, device 0's the real one).
PER_DEVICE = {MULTI_DEVICE[0]: {"a": (2048, 8192), "b": (8192, 8192), "c": (2048, 8192), "y": (2048, 8192)},
              MULTI_DEVICE[1]: {"a": (8192, 2048), "b": (2048, 8192), "c": (8192, 8192), "y": (8192, 8192)},
              MULTI_DEVICE[2]: {"a": (8192, 2048), "b": (2048, 8192), "c": (8192, 8192), "y": (8192, 8192)}}


@pytest.mark.parametrize("name", MULTI_DEVICE)
def test_multi_device_tutorials_prove_at_one_devices_shard(tutorials: Path, name: str) -> None:
    """Given the device count, each device's operation (step 4's, unchanged) is read at its shard and proves; three
    devices do not split 8192 evenly and are refused naming the dimension."""
    (imp,) = import_file(str(tutorials / name), devices=4)
    assert {t.name: t.shape for t in imp.program.tensors} == PER_DEVICE[name]
    assert certify(imp.program).exit_code == 0
    with pytest.raises(SourceRefused, match=r"sharded along dimension [01] over 3 devices does not split"):
        import_file(str(tutorials / name), devices=3)


def test_the_shipped_example_proves_at_its_shapes_and_over_k() -> None:
    example = ROOT / "examples" / "ttlang" / "matmul_bias_relu.py"
    (imp,) = import_file(str(example))
    assert len(imp.program.programs) == 6  # 2 nodes x 3 engines
    assert certify(imp.program).exit_code == 0
    (imp,) = import_file(str(example), ranges=["K=128:1024:64"])
    assert [t.name for t in imp.program.trips] == ["K"]
    assert certify(imp.program).exit_code == 0


def test_sarif_points_at_the_python_line(tmp_path: Path) -> None:
    import json

    mut = _mutant(tmp_path, MATMUL, ACC)
    sarif = tmp_path / "r.sarif"
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(mut), "-q", "--sarif", str(sarif)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1, run.stderr
    (res,) = [r for r in json.loads(sarif.read_text())["runs"][0]["results"] if r["ruleId"] == "deadlock"]
    phys = res["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"]["uri"] == mut.name  # relative to the base of the directory it lies in
    line = phys["region"]["startLine"]
    assert "reserve()" in mut.read_text().splitlines()[line - 1]


# ------------------------------------------------------------------------------------- shape arithmetic


def _value(x: int | V.Aff, t: int) -> int:
    return x if isinstance(x, int) else x.const + sum(c * t for _, c in x.syms)


def _resolve(f, x: V.Aff, cls: V.SymClass) -> list[tuple[V.SymClass, object]]:
    """``f`` evaluated on ``x`` in class ``cls``, splitting as it asks: (class, result) per final class."""
    try:
        return [(cls, f(x, {"N": cls}))]
    except V.Split as e:
        parts = e.parts
        covered = sorted(p.value(t) for p in parts for t in range(p.top + 1))
        assert covered == [cls.value(t) for t in range(cls.top + 1)]  # the parts cut the class exactly
        out = []
        # x = c*N + k with N = m*t + base: rebuild it on each part's trip
        c = dict(x.syms)["N"] // cls.m
        k = x.const - c * cls.base
        for p in parts:
            n = sym_value(p)
            y = V.add(V.scale(n, c), k)
            out += _resolve(f, y, p) if isinstance(y, V.Aff) else [(p, f(y, {"N": p}))]
        return out


@given(st.integers(1, 5), st.integers(-20, 20), st.integers(1, 9), st.integers(1, 6), st.integers(0, 40),
       st.integers(0, 12))
@settings(max_examples=200, deadline=None)
def test_floor_division_is_exact_in_every_class(c: int, k: int, d: int, step: int, lo: int, top: int) -> None:
    """(c*N + k) // d over N in lo, lo+step, ..: each class's affine result equals Python's floor division at every
    value of the class, and the classes cover the range once."""
    cls = V.SymClass("N", step, lo, top)
    x = V.Aff(k + c * lo, (("N", c * step),))
    for part, got in _resolve(lambda v, cs: V.floordiv(v, d, cs), x, cls):
        for t in range(part.top + 1):
            n = part.value(t)
            assert _value(got, t) == (c * n + k) // d


@given(st.integers(-6, 6).filter(bool), st.integers(-30, 30), st.integers(1, 4), st.integers(0, 10),
       st.integers(0, 15))
@settings(max_examples=200, deadline=None)
def test_a_sign_is_constant_in_every_class(c: int, k: int, step: int, lo: int, top: int) -> None:
    cls = V.SymClass("N", step, lo, top)
    x = V.Aff(k + c * lo, (("N", c * step),))
    for part, got in _resolve(lambda v, cs: V.sign_of(v, cs), x, cls):
        for t in range(part.top + 1):
            n = part.value(t)
            assert got == (c * n + k > 0) - (c * n + k < 0)


GUARDED = DATA / "guarded.py"


def test_guards_on_the_loop_index_are_if_first_and_last() -> None:
    from verispatial.ir.core import Guard
    from verispatial.ir.ops import If

    (imp,) = import_file(str(GUARDED))
    guards = {(ep.engine.value, op.when) for ep in imp.program.programs for op in walk(ep.ops) if isinstance(op, If)}
    assert guards == {("reader", Guard.FIRST), ("compute", Guard.FIRST), ("compute", Guard.LAST)}
    assert certify(imp.program).exit_code == 0


def test_a_held_block_popped_too_early_is_refuted(tmp_path: Path) -> None:
    mut = _mutant(tmp_path, GUARDED, ("if i == n - 1:  # last", "if i == 0:  # last"))
    assert _refuted(mut) == [("guarded", ["circular-buffer"])]


# ------------------------------------------------------------------------------------- pipes and pipe nets

PIPE = DATA / "pipe_mcast.py"
NARROW = ("dst=(slice(1, 4), 0)", "dst=(slice(1, 3), 0)")
#: the receive's wait on node 1 only: nodes 2 and 3 never wait (the compiler adds no wait: the handle has one)
NO_RECV_WAIT = ("                xf = ttl.copy(pipe, c_blk)\n                xf.wait()\n",
                "                xf = ttl.copy(pipe, c_blk)\n                if x == 1:\n                    xf.wait()\n")
LOOPBACK = ("dst=(slice(1, 4), 0)", "dst=(slice(0, 4), 0)")


def test_a_multicast_pipe_lowers_to_the_receiver_post_handshake_and_proves() -> None:
    """Node (0, 0) multicasts a tile to nodes 1..3 through a pipe: the receivers count themselves ready at the
    source, the source waits for all three, resets, multicasts, barriers and counts completion at each; every
    receiver waits for its count before it publishes the block. Every op keeps the .py line of its copy."""
    from verispatial.ir.ops import AtomicBarrier, McastSend, SemInc, SemIncMcast, SemSet, SemWait

    (imp,) = import_file(str(PIPE))
    p = imp.program
    assert validate(p) == []
    lines = PIPE.read_text().splitlines()
    kinds = {}
    for ep in p.programs:
        if ep.engine.value != "reader":
            continue
        table = dict(ep.sources)
        ops = [(path, op) for path, op in _paths(ep.ops) if isinstance(
            op, (SemWait, SemSet, McastSend, SemInc, SemIncMcast, AtomicBarrier))]
        kinds[ep.site.x] = [type(op).__name__ for _, op in ops]
        for path, _ in ops:
            assert "ttl.copy(" in lines[table[path].line - 1] or "xf.wait()" in lines[table[path].line - 1]
    assert kinds[0] == ["SemWait", "SemSet", "McastSend", "SemIncMcast", "AtomicBarrier"]
    assert kinds[1] == kinds[3] == ["SemInc", "AtomicBarrier", "SemWait"]
    (g,) = p.groups
    assert [(d.x, d.y) for d in g.destinations()] == [(1, 0), (2, 0), (3, 0)]
    assert certify(p).exit_code == 0


def _paths(ops: tuple, at: tuple[int, ...] = ()) -> list:
    out = []
    for i, op in enumerate(ops):
        out.append(((*at, i), op))
        if hasattr(op, "body"):
            out += _paths(op.body, (*at, i))
    return out


@pytest.mark.parametrize(("edit", "families"), [
    # node 3 is in no pipe any more, so it runs no kernel (TT-Lang's active set): its column of y stays unwritten
    (NARROW, ["happens-before"]),
    (NO_RECV_WAIT, ["async-noc"]),  # nodes 2, 3 publish before the multicast is counted landed
    (LOOPBACK, ["deadlock"]),  # the source waits for its own post, which comes after its send
], ids=["endpoints-narrowed", "receive-waited-on-one-node", "source-among-destinations"])
def test_broken_pipes_are_refuted(tmp_path: Path, edit: tuple[str, str], families: list[str]) -> None:
    (_, got), = _refuted(_mutant(tmp_path, PIPE, edit))
    assert set(families) <= set(got)


def test_a_receive_waited_on_one_node_only_leaves_the_others_publishes_refuted(tmp_path: Path) -> None:
    # Nodes 2 and 3 publish the received block without waiting for it: since landings are tracked per page the
    # checker refutes their publish, and the interpreter replays it (mcast-publish-early at the push).
    mut = _mutant(tmp_path, PIPE, NO_RECV_WAIT)
    (imp,) = import_file(str(mut))
    rep = certify(imp.program)
    refuted = {r.name.split(":")[0] for r in rep.results if r.verdict.value == "refuted"}
    assert "async-pending-at-end" in refuted  # nodes 2 and 3: the ready increment is never flushed
    publish = {r.name.split(":")[1]: r for r in rep.results if r.name.startswith("mcast-publish")}
    assert {k: r.verdict.value for k, r in publish.items()} == {
        "(1,0).reader": "proved", "(2,0).reader": "refuted", "(3,0).reader": "refuted"}
    for node in ("(2,0).reader", "(3,0).reader"):
        c = publish[node].counterexample
        assert c is not None
        assert c["replay"]["violation"]["rule"] == "mcast-publish-early"
        assert c["replay"]["violation"]["position"]["engine"] == node


def test_a_pipe_between_two_dataflow_buffers_is_refused(tmp_path: Path) -> None:
    src = _mutant(tmp_path, PIPE, ("                xf = ttl.copy(pipe, c_blk)\n",
                                   "                with a_dfb.reserve() as other:\n"
                                   "                    xf = ttl.copy(pipe, other)\n                    xf.wait()\n"))
    with pytest.raises(SourceRefused, match="different dataflow buffers"):
        import_file(str(src))


def test_the_1037_all_gather_matmul_deadlock_is_refuted_naming_the_buffer_and_the_devices() -> None:
    """tt-lang #1037's protocol (examples/ttlang/allgather_matmul_1037.py): four devices gather activation blocks
    through pipes into one-block buffers; the writer streams every send before any output write, and deadlocks on
    its activation buffer's reservation. ``certify FILE.py`` refutes it, the counterexample at the .py line of the
    reservation on every device's node; the buffers are named per device (``act[1]@0,1``); the fixed schedule
    proves."""
    broken = ROOT / "examples" / "ttlang" / "allgather_matmul_1037.py"
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(broken), "-q"], capture_output=True,
                         text=True, check=False)
    assert run.returncode == 1, run.stderr
    assert "refuted deadlock/deadlock" in run.stdout
    line = next(i + 1 for i, t in enumerate(broken.read_text().splitlines()) if "with act[dev].reserve() as blk:" in t)
    for site in ("(0,0)", "(1,0)", "(2,0)", "(3,0)"):
        assert f"engine: {site}.writer" in run.stdout
    assert f"{broken}:{line}:" in run.stdout
    (imp,) = import_file(str(broken))
    names = {(b.site.x, b.name) for b in imp.program.buffers}
    assert (1, "act[1]@0,1") in names
    assert (3, "act[3]@0,3") in names
    assert {t.name for t in imp.program.tensors} >= {"y@0,0", "y@0,3"}  # one shard per device
    (fixed,) = import_file(str(ROOT / "examples" / "ttlang" / "allgather_matmul_1037_fixed.py"))
    assert certify(fixed.program).exit_code == 0


# ------------------------------------------------------------------------------------- tile sets (the checker's shortcuts)

STRIDED_R = ("            r = (node_col * per_node + i) * ROWS\n", "            r = (i * grid_cols + node_col) * ROWS\n")
STRIDED_W = ("            r = (node_col * w_per_node + i) * ROWS\n", "            r = (i * grid_cols + node_col) * ROWS\n")
READ_GRID = ("        node_col, _ = ttl.node(dims=2)\n        for i in range(per_node):",
             "        node_col, _ = ttl.node(dims=2)\n        grid_cols, _ = ttl.grid_size(dims=2)\n"
             "        for i in range(per_node):")
WRITE_GRID = ("        node_col, _ = ttl.node(dims=2)\n        for i in range(w_per_node):",
              "        node_col, _ = ttl.node(dims=2)\n        grid_cols, _ = ttl.grid_size(dims=2)\n"
              "        for i in range(w_per_node):")


def test_nodes_striding_over_one_output_prove_and_sharing_rows_is_a_race(tmp_path: Path) -> None:
    """The two nodes interleave their blocks (node c takes blocks c, c + 2, ...): their write hulls overlap, their
    tile sets do not, so no pair needs the solver and it proves; both nodes writing the same rows is a write-write
    race (happens-before) and leaves the other half unwritten."""
    strided = _mutant(tmp_path, ELTWISE, READ_GRID, WRITE_GRID, STRIDED_R, STRIDED_W)
    assert _refuted(strided) == [("eltwise", [])]
    shared = _mutant(tmp_path, ELTWISE, ("            r = (node_col * w_per_node + i) * ROWS\n",
                                         "            r = i * ROWS\n"))
    (imp,) = import_file(str(shared))
    rep = certify(imp.program)
    refuted = {r.name.split(":")[0] for r in rep.results if r.verdict.value == "refuted"}
    assert {"hb-write-write", "output-unwritten"} <= refuted


def test_an_output_column_never_written_is_refuted_with_constant_counts(tmp_path: Path) -> None:
    """Every count is a constant, so output coverage is decided by enumerating the writes' tiles: a writer that
    writes column 0 for every column leaves column 1 unwritten, refuted (the enumeration proves only a full
    cover)."""
    mut = _mutant(tmp_path, ELTWISE, ("tx = ttl.copy(y_blk, y[r:r + ROWS, c])", "tx = ttl.copy(y_blk, y[r:r + ROWS, 0])"))
    (imp,) = import_file(str(mut))
    rep = certify(imp.program)
    (out,) = [r for r in rep.results if r.name.startswith("output-unwritten")]
    assert out.verdict.value == "refuted"


UNICAST = DATA / "pipe_unicast.py"


@pytest.mark.parametrize("edits", [
    (),
    (("block_count=2", "block_count=1"),),
    (("                    xf = ttl.copy(pipe, blk)\n                    xf.wait()\n",
      "                    xf = ttl.copy(pipe, blk)\n"),),  # the receive's wait dropped: the compiler adds it
    (("                    tx.wait()\n                    xf = ttl.copy(blk, pipe)\n",
      "                    xf = ttl.copy(blk, pipe)\n"),),  # the read's wait dropped before the send: added
    (("                    tx.wait()\n                    xf = ttl.copy(blk, pipe)\n",
      "                    xf = ttl.copy(blk, pipe)\n                    tx.wait()\n"),),  # read waited after the send
    (("src=(0, 0), dst=(1, 0)", "src=(1, 0), dst=(0, 0)"),),  # the ends swapped: node 1 reads, sends and writes
], ids=["as-written", "one-block", "no-receive-wait", "no-read-wait", "read-wait-after-send", "ends-swapped"])
def test_pipe_verdicts_agree_with_the_interpreter(tmp_path: Path, edits: tuple[tuple[str, str], ...]) -> None:
    """The oracle: on a unicast pipe and its mutants, certify proves exactly when the interpreter's search of every
    interleaving finds no deadlock and no violation (complete), and each rule certify refutes is one the search
    reaches."""
    from verispatial.petri.explore import explore

    src = _mutant(tmp_path, UNICAST, *edits) if edits else UNICAST
    (imp,) = import_file(str(src))
    rep = certify(imp.program)
    found = explore(imp.program)
    assert found.complete
    reached = {v.violation.rule for v in found.violations} | ({"deadlock"} if found.deadlocks else set())
    if rep.exit_code == 0:
        assert reached == set()
    else:
        assert rep.exit_code == 1
        assert reached
        refuted = {r.name.split(":")[0] for r in rep.results if r.verdict.value == "refuted"}
        assert refuted - {"deadlock"} <= reached | {"mcast-publish", "mcast-slot", "hb-write-write"}
    waited_after_send = bool(edits) and edits[0][1].endswith("xf = ttl.copy(blk, pipe)\n                    tx.wait()\n")
    assert (rep.exit_code == 0) == (not waited_after_send)


def test_a_pipe_onto_its_own_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceRefused, match="a pipe from a node to itself"):
        import_file(str(_mutant(tmp_path, UNICAST, ("dst=(1, 0)", "dst=(0, 0)"))))


def test_a_completion_count_is_no_cover_without_the_senders_write_barrier() -> None:
    """The checker proves a receiver's publish from its completion counter only because each increment follows the
    sender's write barrier after the data multicast: with the barrier removed from the program the publish is not
    proved, and the interpreter reaches a publish before the data landed."""
    import attrs

    from verispatial.ir.ops import WriteBarrier
    from verispatial.petri.explore import explore

    def strip(ops: tuple) -> tuple:
        return tuple(attrs.evolve(o, body=strip(o.body)) if hasattr(o, "body") else o for o in ops
                     if not isinstance(o, WriteBarrier))

    (imp,) = import_file(str(UNICAST))
    p = imp.program
    p = attrs.evolve(p, programs=tuple(attrs.evolve(ep, ops=strip(ep.ops), sources=()) if ep.key == "(0,0).reader"
                                       else ep for ep in p.programs))
    rep = certify(p)
    publish = [r for r in rep.results if r.name.startswith("mcast-publish")]
    assert publish
    assert all(r.verdict.value != "proved" for r in publish)
    assert "mcast-publish-early" in {v.violation.rule for v in explore(p).violations}


def test_an_argument_no_kernel_reads_is_an_output_even_unwritten(tmp_path: Path) -> None:
    """The writer's copy (and its wait) dropped: y is neither read nor written. It stays an output, so the proof is
    refused: every tile of y unwritten (the vendor's simulator rejects the same file: a waited block popped unused)."""
    mut = _mutant(tmp_path, ELTWISE, ("                    tx = ttl.copy(y_blk, y[r:r + ROWS, c])\n"
                                      "                    tx.wait()\n", "                    pass\n"))
    (imp,) = import_file(str(mut))
    assert imp.program.tensor("y").role.value == "output"
    (out,) = [r for r in certify(imp.program).results if r.name.startswith("output-unwritten")]
    assert out.verdict.value == "refuted"


BCAST = ROOT / "examples" / "ttlang" / "pipe_bcast_add.py"
#: pipe_bcast_add on five nodes, node 4 reading c itself instead of through the pipe (which names nodes 0-3 only)
FIFTH_NODE = (("@ttl.operation(grid=(4, 1))", "@ttl.operation(grid=(5, 1))"),
              ("R, C = 128, 256", "R, C = 128, 320"),
              ("            net.if_src(send)\n",
               "            if x == 4:\n                tx = ttl.copy(c[0:1, 0:1], c_blk)\n                tx.wait()\n"
               "            net.if_src(send)\n"))


def test_nodes_no_pipe_names_run_no_kernel(tmp_path: Path) -> None:
    """With a pipe net, TT-Lang runs the kernels only on the nodes some pipe names as source or destination: the
    compiler guards them with an scf.if on that set, and tt-lang-sim 1.1.6 skips the others (ttl/sim/program.py,
    ``_is_active``; ttl/_pipenets ``active_node_set``). A fifth node that reads c itself never runs, so its columns of
    y stay unwritten: refuted, where running its kernels proved the output whole."""
    mut = _mutant(tmp_path, BCAST, *FIFTH_NODE)
    (imp,) = import_file(str(mut))
    assert sorted(str(ep.site) for ep in imp.program.programs if ep.engine.value == "writer") == [
        "(0,0)", "(1,0)", "(2,0)", "(3,0)"]
    rep = certify(imp.program)
    assert {r.name.split(":")[0] for r in rep.results if r.verdict.value == "refuted"} == {"output-unwritten"}


IDLE_NODES = (("@ttl.operation(grid=(4, 1))", "@ttl.operation(grid=(8, 1))"),
              ("    grid_cols, _ = ttl.grid_size(dims=2)\n", "    grid_cols = 4  # the nodes of the pipe net\n"),
              ("    def read():\n", "    def read():\n        if not net.is_active():\n            return\n"))


def test_idle_nodes_outside_every_pipe_net_are_not_a_false_alarm(tmp_path: Path) -> None:
    """On an 8-node grid whose pipe net names nodes 0-3 (as tt-lang examples/eltwise_pipe.py does on its grid, with
    the same ``if not net.is_active(): return`` guard), nodes 4-7 run nothing: proved. Lowering their kernels read
    an early return (refused) or, without the guard, a c block pushed unfilled (refuted)."""
    (imp,) = import_file(str(_mutant(tmp_path, BCAST, *IDLE_NODES)))
    assert len(imp.program.programs) == 12  # 4 active nodes x 3 engines
    assert certify(imp.program).exit_code == 0
    unguarded = _mutant(tmp_path, BCAST, *IDLE_NODES[:2])
    (imp,) = import_file(str(unguarded))
    assert certify(imp.program).exit_code == 0


#: The elementwise and broadcast tutorials over a range of an output dimension (issue 17): the example's tensors given
#: with --shape at a small fixed other dimension, rows M (or, for the multitile broadcast, columns N, numbered
#: column-major) ranging; each is one shape class proved for every value. On the grids of steps 3 and 4 a node's
#: share moves with M (its addresses name the trip); step 4's `if row < rows` guards are prefixes of its loops whose
#: length M sets (4 block columns on 8 grid columns: half the nodes idle).
OUTPUT_RANGES = {
    "elementwise/step_1_single_node_single_tile_block.py": (("a=Mx128", "b=Mx128", "c=Mx128", "y=Mx128"), "M=32:512:32"),
    "elementwise/step_2_single_node_multitile_block.py": (("a=Mx128", "b=Mx128", "c=Mx128", "y=Mx128"), "M=128:1024:128"),
    "elementwise/step_3_multinode.py": (("a=Mx512", "b=Mx512", "c=Mx512", "y=Mx512"), "M=512:2048:512"),
    "elementwise/step_4_multinode_grid_full.py": (("a=Mx512", "b=Mx512", "c=Mx512", "y=Mx512"), "M=1024:4096:1024"),
    "broadcast/single_node_broadcast_single_tile_block.py": (("a=Mx1", "b=1x128", "c=1x1", "y=Mx128"), "M=32:512:32"),
    "broadcast/single_node_broadcast_multitile_blocks.py": (("a=128x1", "b=1xN", "c=1x1", "y=128xN"), "N=128:1024:128"),
}


@pytest.mark.parametrize("name", list(OUTPUT_RANGES))
def test_single_node_tutorials_prove_over_a_range_of_an_output_dimension(tutorials: Path, name: str) -> None:
    shapes, rng = OUTPUT_RANGES[name]
    (imp,) = import_file(str(tutorials / name), shapes=shapes, ranges=[rng])
    y = imp.program.tensor("y")
    assert y.trip_rows is not None
    assert y.trip_rows.trip == rng[0]
    # at the range's top; a tensor whose columns range is declared transposed (its tiles numbered column-major)
    assert y.shape == (int(rng.split(":")[1]), 512 if "multinode" in name else 128)
    assert certify(imp.program).exit_code == 0


STEP_2 = "elementwise/step_2_single_node_multitile_block.py"
STEP_2_ARGS = ["--shape", "a=Mx128", "--shape", "b=Mx128", "--shape", "c=Mx128", "--shape", "y=Mx128",
               "--range", "M=128:256:32"]


def _classes(path: Path, args: list[str]) -> list[tuple[str, list[str]]]:
    """Per shape class of ``path`` under CLI options ``args``: its program name and the families refuted in it."""
    shapes = [a for k, a in itertools.pairwise(args) if k == "--shape"]
    (rng,) = [a for k, a in itertools.pairwise(args) if k == "--range"]
    out = []
    for imp in import_file(str(path), shapes=shapes, ranges=[rng]):
        rep = certify(imp.program)
        refuted = sorted({r.family for r in rep.results if r.verdict.value == "refuted"})
        assert refuted or rep.exit_code == 0
        out.append((imp.program.name, refuted))
    return out


def test_a_ceil_writer_is_refuted_only_in_the_classes_where_ceil_and_floor_differ(tutorials: Path,
                                                                                  tmp_path: Path) -> None:
    """Step 2's writer counts block rows with ceil where the reader and compute use floor. Over M in 128..256 step
    32 the rows split by M's residue modulo the block (4 tiles): where the block divides M (128, 256) ceil is floor
    and the class proves for both values; in the three others the writer waits for a block nobody pushes (a
    deadlock at its ``y_dfb.wait()``, named by file:line). The tutorial itself proves in the first class and, in the
    others, leaves the partial block's rows unwritten (floor), refuted as such and not as a deadlock."""
    src = (tutorials / STEP_2).read_text()
    old = "        for row in range(rows):"
    at = src.rindex(old)  # the writer's loop, the last of the three
    mut = tmp_path / "step_2_ceil_writer.py"
    mut.write_text(src[:at] + "        for row in range(-(-(a.shape[0] // TILE_SIZE) // row_tiles_per_block)):"
                   + src[at + len(old):])
    names = ["tutorial_operation.M128+128t", "tutorial_operation.M160", "tutorial_operation.M192",
             "tutorial_operation.M224"]
    assert _classes(mut, STEP_2_ARGS) == [(names[0], []), *((n, ["deadlock"]) for n in names[1:])]
    assert _classes(tutorials / STEP_2, STEP_2_ARGS) == [(names[0], []), *((n, ["happens-before"]) for n in names[1:])]
    line = next(i for i, x in enumerate(mut.read_text().splitlines(), 1)
                if "with y_dfb.wait() as y_blk:" in x)
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(mut), *STEP_2_ARGS[:-1], "M=160:160"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1, run.stderr
    assert f"{mut.name}:{line}:" in run.stdout


def test_guards_on_a_ceil_share_split_an_uneven_range_into_classes_that_each_prove() -> None:
    """Step 4's pattern on a 2x1 grid (tests/data/ttlang/eltwise_ceil.py): each node takes ``ceil(blocks / 2)``
    block rows and guards the trailing ones with ``if row < blocks``. Over R in 128..640 step 128 (1 to 5 blocks)
    the ceil splits R by its residue modulo the two nodes and node 1's guarded prefix where it crosses zero; every
    class is a program of its own, the classes cover the values exactly, and each proves."""
    src = DATA / "eltwise_ceil.py"
    imps = import_file(str(src), ranges=["R=128:640:128"])
    covered = sorted(c.value(t) for imp in imps for c in imp.classes for t in range(c.top + 1))
    assert covered == list(range(128, 641, 128))
    assert len(imps) > 1
    for imp in imps:
        assert certify(imp.program).exit_code == 0, imp.label


# --- module constants: the value the operation sees at its example call ---------------------------------------------

def _page_tiles(path: Path) -> int:
    (imp,) = import_file(str(path))
    return imp.program.buffers[0].page_tiles


@pytest.mark.parametrize(("edit", "line"), [
    (("ROWS = 4\n", "ROWS = 4\nROWS += 4\n"), 9),  # Python: 8
    (("ROWS = 4\n", "ROWS = 4\nif TILE == 32:\n    ROWS = 2\n"), 9),  # Python: 2
    (("ROWS = 4\n", "ROWS = 4\nimport os\nROWS = int(os.environ.get('R', '4'))\n"), 10),
    (("ROWS = 4\n", "ROWS = 4\ndef setup():\n    global ROWS\n    ROWS = 2\nsetup()\n"), 9),
], ids=["augmented", "in-an-if", "value-not-read", "global-in-a-function"])
def test_a_module_constant_rebound_in_a_way_not_followed_is_refused(tmp_path: Path, edit: tuple[str, str],
                                                                    line: int) -> None:
    """``ROWS = 4`` then ``ROWS += 4`` (or a rebinding under an ``if``, to a value not read, through ``global``): the
    operation sees another value; the reading kept 4, the last plain assignment, and read blocks of 4 tiles."""
    with pytest.raises(SourceRefused, match="ROWS") as e:
        import_file(str(_mutant(tmp_path, ELTWISE, edit)))
    assert f"line {line}" in str(e.value)


def test_a_module_constant_rebound_after_the_example_call_is_the_value_before_it(tmp_path: Path) -> None:
    """The example call runs the operation with ``ROWS = 4``; a ``ROWS = 2`` after it was read as the value."""
    assert _page_tiles(_mutant(tmp_path, ELTWISE, ("eltwise(a, b, y)\n", "eltwise(a, b, y)\nROWS = 2\n"))) == 4
    assert _page_tiles(_mutant(tmp_path, ELTWISE, ("R, C = 256, 64\n", "ROWS: int = 2\nR, C = 256, 64\n"))) == 2


def test_ttl_imported_under_another_name_is_named_in_the_refusal(tmp_path: Path) -> None:
    """``import ttl as tl`` and ``@tl.operation``: the refusal said only that the file has no operation."""
    text = ELTWISE.read_text().replace("import ttl\n", "import ttl as tl\n").replace("ttl.", "tl.")
    (tmp_path / "renamed.py").write_text(text)
    with pytest.raises(ParseError, match=r"line 4: import ttl as tl: the reading follows the API by the name ttl only"):
        import_file(str(tmp_path / "renamed.py"))


def test_an_integer_operator_not_read_is_named_in_the_refusal(tmp_path: Path) -> None:
    """``per_node >> 0`` was refused as ``integer None is not read``."""
    mut = _mutant(tmp_path, ELTWISE, ("        for i in range(per_node):\n            r = (node_col * per_node + i)",
                                      "        for i in range(per_node >> 0):\n            r = (node_col * per_node + i)"))
    with pytest.raises(SourceRefused, match="integer RShift is not read"):
        import_file(str(mut))


COPY_TWICE = DATA / "copy_twice.py"


def test_a_second_copy_into_one_block_is_refused_at_its_line() -> None:
    """Two ``ttl.copy`` calls into one reserved block both write the block's pages: the hardware writes a copy at the
    block's address and moves the write pointer only at the push (ttnn 0.81.1
    ``tt_metal/hw/inc/api/dataflow/dataflow_api.h:309-312``), so the kernel is correct. program.json's ReadTiles fills
    the next unfilled tiles and cannot say "these tiles again": the second copy was refuted ``cb-write-unreserved``
    (blaming the first); it is refused by name at its own line, never refuted."""
    with pytest.raises(SourceRefused, match=r"a second copy into one block \(the first at line 20\)") as e:
        import_file(str(COPY_TWICE))
    assert e.value.line == 22
    assert e.value.construct.startswith("ttl.copy(a[r, c], blk)")


#: the block taken outside a loop that copies into it each iteration (its second copy dropped)
COPY_IN_LOOP = (("                with a_dfb.reserve() as blk:\n                    tx = ttl.copy(a[r, c], blk)\n",
                 "                with a_dfb.reserve() as blk:\n                  for _ in range(COUNT):\n"
                 "                    tx = ttl.copy(a[r, c], blk)\n"),
                ("                    tx2 = ttl.copy(a[r, c], blk)\n                    tx2.wait()\n", ""))


def _copy_in_loop(count: int) -> tuple[tuple[str, str], ...]:
    return tuple((old, new.replace("COUNT", str(count))) for old, new in COPY_IN_LOOP)


def test_a_copy_repeated_into_one_block_by_a_loop_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceRefused, match=r"a copy into a block in a loop inside the block's a_dfb\.reserve\(\)") as e:
        import_file(str(_mutant(tmp_path, COPY_TWICE, *_copy_in_loop(2))))
    assert e.value.line == 21


def test_a_copy_into_a_block_in_a_loop_of_one_iteration_is_lowered(tmp_path: Path) -> None:
    mut = _mutant(tmp_path, COPY_TWICE, *_copy_in_loop(1))
    assert _refuted(mut) == [("expop", [])]


def test_two_pipes_into_one_block_are_refused_not_refuted(tmp_path: Path) -> None:
    """pipe_bcast_add with two overlapping pipes from (0, 0): the source copies c into its one block once per pipe and
    node 2 receives both pipes into its one block. Both rewrite a block's pages (correct on the hardware, the same
    data at the same address); the second copy into the source's block is refused at its line, where it was refuted
    ``cb-write-unreserved`` and ``mcast-slot``."""
    mut = _mutant(tmp_path, BCAST, ("net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, 4), 0))])",
                                    "net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(slice(1, 3), 0)), "
                                    "ttl.Pipe(src=(0, 0), dst=(slice(2, 4), 0))])"))
    with pytest.raises(SourceRefused, match=r"a second copy into one block \(this line ran already, for an earlier "
                                            r"pipe of the net\)") as e:
        import_file(str(mut))
    assert "ttl.copy(c[0:1, 0:1], c_blk)" in mut.read_text().splitlines()[e.value.line - 1]


@pytest.mark.parametrize(("fn", "accepted"), [("ttl.math.exp", True), ("ttl.math.sigmoid", True),
                                              ("ttl.math.nosuch", False), ("ttl.block.nosuch", False)])
def test_a_block_function_not_in_ttl_api_is_refused_by_name(tmp_path: Path, fn: str, accepted: bool) -> None:
    """``yb.store(ttl.math.nosuch(ab))`` was read as math and proved: a ``ttl.math`` / ``ttl.block`` function that
    TT-Lang does not have is refused at its line (docs/ttlang.md: a call that cannot be read statically)."""
    one = _mutant(tmp_path, COPY_TWICE, ("                    tx2 = ttl.copy(a[r, c], blk)\n                    tx2.wait()\n",
                                         ""), ("ttl.math.exp(ab)", f"{fn}(ab)"))
    if accepted:
        assert _refuted(one) == [("expop", [])]
        return
    with pytest.raises(SourceRefused, match=rf"{fn.replace('.', '[.]')} is not a function of TT-Lang's "
                                            rf"{fn.rsplit('.', 1)[0].replace('.', '[.]')}") as e:
        import_file(str(one))
    assert e.value.line == 28  # the store, two lines up once the second copy is dropped


def test_the_block_functions_read_are_ttl_api_s(tutorials: Path) -> None:
    """The names the front end reads as block math are exactly tt-lang-sim 1.1.6's ``ttl.math`` (every public
    function of ``ttl/sim/math.py``: its unary table, the functions it defines, ``matmul``) and ``ttl.block``
    (``_TTLBlockNamespace``)."""
    import ast

    from verispatial.frontends.ttlang import vocabulary

    sim = tutorials.parent / "sim"
    tree = ast.parse((sim / "math.py").read_text())
    math = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
    (table,) = [n.value for n in tree.body if isinstance(n, ast.AnnAssign)
                and getattr(n.target, "id", "") == "_TORCH_UNARY_OPS"]
    assert isinstance(table, ast.Dict)
    math |= {k.value for k in table.keys if isinstance(k, ast.Constant)}
    assert "matmul" in {a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert vocabulary.MATH == math | {"matmul"}
    ns = next(n for n in ast.parse((sim / "__init__.py").read_text()).body
              if isinstance(n, ast.ClassDef) and n.name == "_TTLBlockNamespace")
    block = {t.attr for n in ast.walk(ns) if isinstance(n, ast.Assign) for t in n.targets
             if isinstance(t, ast.Attribute)}
    assert vocabulary.BLOCK == block


def test_a_ranged_deadlock_names_the_shape_value_in_every_report(tmp_path: Path) -> None:
    """``--range M=32:320:32`` on a compute loop that drops an odd tile count: the class M = 32 + 64t hangs at t = 1,
    M = 96. The headline said "deadlock with M=1" (the trip under the shape's name; 1 is not in the range): the text
    report, SARIF message and JUnit failure give the shape's value with the trip beside it."""
    src = _mutant(tmp_path, COPY_TWICE, ("                    tx2 = ttl.copy(a[r, c], blk)\n                    tx2.wait()\n",
                                         ""),
                  ("        for _ in range(rows):\n            for _ in range(cols):\n                with a_dfb.wait()",
                   "        for _ in range(rows * cols // 2 * 2):\n            if True:\n                with a_dfb.wait()"),
                  ("a = ttnn.from_torch(torch.randn((64, 96))", "M = 64\na = ttnn.from_torch(torch.randn((M, 96))"),
                  ("y = ttnn.from_torch(torch.zeros((64, 96))", "y = ttnn.from_torch(torch.zeros((M, 96))"))
    sarif, junit = tmp_path / "r.sarif", tmp_path / "r.xml"
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(src), "--range",
                          "M=32:320:32", "--sarif", str(sarif), "--junit", str(junit), "-q"],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1, run.stderr
    assert "deadlock with M=96 (trip M=1) after" in run.stdout
    assert "with M=1 " not in run.stdout
    (res,) = [r for r in json.loads(sarif.read_text())["runs"][0]["results"] if r["ruleId"] == "deadlock"]
    assert "deadlock with M=96 (trip M=1) after" in res["message"]["text"]
    assert "with M=1 " not in res["message"]["text"]
    xml = junit.read_text()
    assert "deadlock with M=96 (trip M=1) after" in xml
    assert "with M=1 " not in xml


def test_a_counterexample_two_refutations_share_is_printed_once(tmp_path: Path) -> None:
    """matmul_bias_relu with a one-block accumulator: the deadlock obligations of its two nodes' components are
    refuted by one and the same run, which the report printed twice in full; the second refers to the first."""
    mut = _mutant(tmp_path, ROOT / "examples" / "ttlang" / "matmul_bias_relu.py",
                  ("acc_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK, BLOCK), block_count=2)",
                   "acc_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK, BLOCK), block_count=1)"))
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", "-q", str(mut)], capture_output=True,
                         text=True, check=False)
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    heads = [i for i, ln in enumerate(lines) if ln.startswith("refuted deadlock/")]
    assert len(heads) == 2
    first = lines[heads[0]].split(": ", 1)[0].removeprefix("refuted ")  # deadlock/deadlock:(0,0).compute+2
    assert lines[heads[1] + 1] == f"    counterexample: the one of {first} above"
    assert sum(1 for ln in lines if ln.strip() == "kind: deadlock") == 1


def test_an_unwritten_output_names_the_shape_value_in_its_headline() -> None:
    """``--range M=64:512:64`` on the example: at M=64 no node has a row block, so output y is written by nothing
    (refuted, rightly). The headline said "(trips M=0)", the class's trip, where the user's M is 64."""
    run = subprocess.run([sys.executable, "-m", "verispatial", "certify", str(ROOT / "examples" / "ttlang" /
                                                                              "matmul_bias_relu.py"),
                          "--range", "M=64:512:64", "-q", "--no-cache"], capture_output=True, text=True, check=False)
    assert run.returncode == 1, run.stderr
    (headline,) = [ln for ln in run.stdout.splitlines() if ln.startswith("refuted happens-before/output-unwritten:y")]
    assert headline.endswith("output y tile 0 is written by no write of it when M=64 (trip M=0)"), headline


def test_shape_values_replace_the_trip_in_every_phrase_that_names_it() -> None:
    """A reason names its trips after "with" (a deadlock's run) or "when" (a balance or an unwritten output); each
    gets the shape's value with the trip beside it, and a longer value (M=10) is not taken for M=1."""
    from types import SimpleNamespace

    from verispatial.certify.report import Report, Result, Verdict
    from verispatial.report.sources import with_shape_values

    def refuted(reason: str, trips: dict[str, int]) -> Result:
        return Result("balance", "x", Verdict.REFUTED, reason, {"kind": "x", "trips": trips, "summary": reason})

    report = Report("p", "wormhole_b0", (refuted("b0 (c_0) ends with 2 pages left (pushed 4, popped 2) when M=1", {"M": 1}),
                                         refuted("output y tile 3 is written by no write of it when M=10", {"M": 10}),
                                         refuted("deadlock with M=1 after 9 steps: (0,0).reader", {"M": 1})))
    got = with_shape_values(report, [SimpleNamespace(name="M", m=64, base=32)])
    assert [r.reason for r in got.results] == [
        "b0 (c_0) ends with 2 pages left (pushed 4, popped 2) when M=96 (trip M=1)",
        "output y tile 3 is written by no write of it when M=672 (trip M=10)",
        "deadlock with M=96 (trip M=1) after 9 steps: (0,0).reader"]
    assert [(r.counterexample or {})["summary"] for r in got.results] == [r.reason for r in got.results]
