"""The tt-metal front end (verispatial/frontends/ttmetal): kernels written here in C++ (tests/data/ttmetal/) with
their host descriptions, each correct form proved, each broken form refuted in the family of the hang it stands
for, counterexamples naming the .cpp line, and what is not read refused by name at its file:line (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tree_sitter_cpp", reason="the tt-metal front end needs the ttmetal extra (tree-sitter-cpp)")
yaml = pytest.importorskip("yaml", reason="host descriptions are YAML (PyYAML)")

from tests.test_frontend_ttmetal_locations import shown  # noqa: E402
from verispatial.cli import main  # noqa: E402
from verispatial.errors import ParseError  # noqa: E402
from verispatial.frontends.ttmetal import Refused, import_host  # noqa: E402
from verispatial.frontends.ttmetal.preprocess import preprocess  # noqa: E402
from verispatial.ir.core import Guard, Site, Term  # noqa: E402
from verispatial.ir.ops import (  # noqa: E402
    AcquireAcc,
    FillTiles,
    If,
    Loop,
    McastSend,
    ReadTiles,
    SemInc,
    SemSet,
    SemWait,
    TripCount,
    Wait,
)
from verispatial.ir.program import walk  # noqa: E402

DATA = Path(__file__).resolve().parent / "data" / "ttmetal"


def _host(tmp_path: Path, name: str, edit: Any = None) -> Path:
    """``tests/data/ttmetal/<name>/host.yaml`` changed by ``edit`` (a function of the document), written to
    ``tmp_path`` with its kernel root made absolute."""
    src = DATA / name / "host.yaml"
    d = yaml.safe_load(src.read_text())
    d["kernel_root"] = str((src.parent / d.get("kernel_root", ".")).resolve())
    if edit is not None:
        edit(d)
    out = tmp_path / f"{name}.yaml"
    out.write_text(yaml.safe_dump(d))
    return out


def _kernel(d: dict[str, Any], name: str) -> dict[str, Any]:
    return next(k for k in d["kernels"] if k["name"] == name)


def _unit_args(d: dict[str, Any], kernel: str) -> list[dict[str, Any]]:
    return [u["runtime_args"][kernel] for u in d["work_units"] if kernel in u.get("runtime_args", {})]


def one_block_without_writers(d: dict[str, Any]) -> None:
    """The mcast host (tests/data/ttmetal/mcast/host.yaml) cut to one block and no copy-out writers: each receiver's
    tile stays in its cb. For a test about one multicast's handshake, its flag or its count: a second block and the
    three writers show nothing more there, but multiply the interleavings the interpreter's search walks to confirm or
    drop each candidate of a refuted certify (60,000 states, about 10 s on a quiet machine, against under 1 s)."""
    d["tensors"] = [t for t in d["tensors"] if t["name"] != "dst"]
    d["kernels"] = [k for k in d["kernels"] if k["name"] != "writer"]
    for unit in d["work_units"]:
        unit["kernels"].remove("writer")
        del unit["runtime_args"]["writer"]
        for args in unit["runtime_args"].values():
            args["num_blocks"] = 1


def _certify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    rc = main(["certify", str(path), "--json", "-q", "--no-cache"])
    out = capsys.readouterr().out
    return rc, json.loads(out)


def _refuted(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in report["results"] if r["verdict"] == "refuted"]


# ------------------------------------------------------------------ reading


def test_copy_reads_into_loops_with_sources() -> None:
    p = import_host(DATA / "copy" / "host.yaml")
    reader = next(ep for ep in p.programs if ep.key == "(1,0).reader")
    (loop,) = reader.ops
    assert isinstance(loop, Loop)
    assert loop.count == 8
    read = loop.body[1]
    assert isinstance(read, ReadTiles)
    assert read.tensor == "src"
    assert (read.addr.base, [(t.var, t.coef) for t in read.addr.terms]) == (8, [("i", 1)])  # start_id 8 + i
    assert str(reader.source_of((0, 1))) == "reader.cpp:18:9: noc_async_read_tile(i, s, l1_write_addr);"
    compute = next(ep for ep in p.programs if ep.key == "(0,0).compute")
    acq = [op for op in walk(compute.ops) if isinstance(op, AcquireAcc)]
    assert acq == [AcquireAcc(2, "bf16")]  # DST indices 0..block-1 with block = 2


def test_copy_is_proved(capsys: pytest.CaptureFixture[str]) -> None:
    rc, report = _certify(DATA / "copy" / "host.yaml", capsys)
    assert rc == 0, _refuted(report)


def test_import_writes_the_program(tmp_path: Path) -> None:
    out = tmp_path / "copy.json"
    assert main(["import", "ttmetal", str(DATA / "copy" / "host.yaml"), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["format"] == "verispatial.program"
    assert len(doc["programs"]) == 6
    assert main(["certify", str(out), "-q", "--no-cache"]) == 0


def test_a_missing_last_pop_is_harmless_for_one_launch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The consumer skips its last pop: nothing blocks, and the buffer ends holding a page, which the launch's end
    resets (trisc.cc init_sync_registers): proved, the balance saying why. A missing pop that hangs (PR #46658's
    paged cache writer: the producer waits for the page's room) is a deadlock, refuted elsewhere."""
    rc, report = _certify(_host(tmp_path, "copy", lambda d: _kernel(d, "writer").update(
        defines={"NO_LAST_POP": 1})), capsys)
    assert rc == 0
    balance = [r for r in report["results"] if r["name"].startswith("balance-cb:")]
    assert balance
    assert any("the launch's end resets its counters" in r["reason"] for r in balance)


def test_compute_waiting_more_than_the_reader_pushes_deadlocks(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """tt-metal #52348: the compute kernel waits for 2 pages where a one-tile-wide reader pushes 1."""

    def edit(d: dict[str, Any]) -> None:
        for a in _unit_args(d, "reader"):
            a["num_tiles"] = 1
        for a in _unit_args(d, "compute"):
            a["per_core_block_cnt"] = 1
        for a in _unit_args(d, "writer"):
            a["num_pages"] = 2

    rc, report = _certify(_host(tmp_path, "copy", edit), capsys)
    assert rc == 1
    refuted = _refuted(report)
    assert "deadlock" in {r["family"] for r in refuted}
    dl = next(r for r in refuted if r["family"] == "deadlock")
    assert "compute.cpp:10" in json.dumps(dl["counterexample"])  # cb_wait_front(tt::CBIndex::c_0, block)


def test_announce_is_proved(capsys: pytest.CaptureFixture[str]) -> None:
    rc, report = _certify(DATA / "announce" / "host.yaml", capsys)
    assert rc == 0, _refuted(report)


def test_announce_without_write_barrier_is_a_race(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """PR #43507: the semaphore increment that announces a write is issued before the write barrier."""
    rc, report = _certify(_host(tmp_path, "announce", lambda d: _kernel(d, "producer").update(
        defines={"BARRIER_AFTER_INC": 1})), capsys)
    assert rc == 1
    refuted = _refuted(report)
    assert {r["family"] for r in refuted} == {"happens-before"}
    cex = refuted[0]["counterexample"]
    # kernels named as the user opens them (relative to the working directory), not to the host's kernel root
    assert cex["read"]["source"]["at"] == \
        f"{shown(DATA / 'announce/consumer_reader.cpp')}:15:9: noc_async_read_tile(i, s, get_write_ptr(cb_in));"
    assert cex["write"]["source"]["at"].startswith(
        f"{shown(DATA / 'announce/producer_writer.cpp')}:17:9: noc_async_write_tile")


def test_atomic_pending_at_kernel_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tt-metal #40879: the kernel ends with its semaphore increment not yet acknowledged."""
    rc, report = _certify(_host(tmp_path, "announce", lambda d: _kernel(d, "producer").update(
        defines={"NO_ATOMIC_BARRIER": 1})), capsys)
    assert rc == 1
    refuted = _refuted(report)
    assert [(r["family"], r["counterexample"]["rule"]) for r in refuted] == [("async-noc", "async-pending-at-end")]


def test_text_report_names_the_cpp_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _host(tmp_path, "announce", lambda d: _kernel(d, "producer").update(defines={"BARRIER_AFTER_INC": 1}))
    assert main(["certify", str(path), "-q", "--no-cache"]) == 1
    out = capsys.readouterr().out
    assert f"at {shown(DATA / 'announce/consumer_reader.cpp')}:15:9: noc_async_read_tile(i, s, get_write_ptr(cb_in));" \
        in out


def test_multicast_handshake_is_proved(capsys: pytest.CaptureFixture[str]) -> None:
    """A sender multicasting a tile per block to two receivers once both are ready (the reuse-multicast matmul's
    handshake): McastSend and McastSetValid to one group, the receivers' SemInc at the sender."""
    p = import_host(DATA / "mcast" / "host.yaml")
    assert [(g.sender, g.rect) for g in p.groups] == [(Site(0, 0), (1, 0, 2, 0))]
    rc, report = _certify(DATA / "mcast" / "host.yaml", capsys)
    assert rc == 0, _refuted(report)


def test_wrong_multicast_receiver_count_is_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tt-metal #42100's kind: num_dests disagrees with the rectangle. The front end keeps the kernel's count (at the
    multicast's line) and the checker refutes the hang as a deadlock; a count of 0 too (it is only the count the
    barrier expects: tests/test_frontend_ttmetal_mcast_rect.py)."""

    def edit(n: int) -> Any:
        def f(d: dict[str, Any]) -> None:
            one_block_without_writers(d)
            for a in _unit_args(d, "sender"):
                a["num_dests"] = n
        return f

    path = _host(tmp_path, "mcast", edit(3))
    p = import_host(path)
    sender = next(ep for ep in p.programs if ep.key == "(0,0).reader")
    sends = [op for op in walk(sender.ops) if isinstance(op, McastSend)]
    assert [op.num_dests for op in sends] == [3]
    assert [str(loc) for _, loc in sender.sources if "noc_async_write_multicast" in loc.text] == [
        "mcast/sender.cpp:28:9: noc_async_write_multicast(l1, get_noc_multicast_addr(x0, y0, x1, y1, l1), "
        "get_tile_size(cb), num_dests);"]
    rc, report = _certify(path, capsys)
    assert rc == 1
    assert {r["family"] for r in _refuted(report)} == {"deadlock"}
    rc, report = _certify(_host(tmp_path, "mcast", edit(0)), capsys)
    assert rc == 1
    assert "deadlock" in {r["family"] for r in _refuted(report)}


def test_semaphore_ops_and_volatile_pointer() -> None:
    p = import_host(DATA / "announce" / "host.yaml")
    producer = next(ep for ep in p.programs if ep.key == "(0,0).writer")
    consumer = next(ep for ep in p.programs if ep.key == "(1,0).reader")
    assert [op for op in producer.ops if isinstance(op, SemInc)] == [SemInc(0, Site(1, 0), 1)]
    assert isinstance(consumer.ops[0], SemWait)
    assert consumer.ops[0].value == 1
    assert p.semaphores[0].host_init
    assert p.semaphores[0].sites == (Site(0, 0), Site(1, 0))


def test_runtime_range_becomes_a_shared_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Counts the host gives as ranges: one trip shared by the three kernels, loops kept as loops."""

    def edit(d: dict[str, Any]) -> None:
        _kernel(d, "compute")["compile_time_args"] = [1]
        d["work_units"] = d["work_units"][:1]
        d["tensors"][1]["role"] = "activation"  # how much of it is written depends on n
        args = d["work_units"][0]["runtime_args"]
        args["reader"]["num_tiles"] = {"range": "1..8", "trip": "n"}
        args["compute"]["per_core_block_cnt"] = {"range": "1..8", "trip": "n"}
        args["writer"]["num_pages"] = {"range": "1..8", "trip": "n"}

    path = _host(tmp_path, "copy", edit)
    p = import_host(path)
    assert [(t.name, t.max) for t in p.trips] == [("n", 7)]
    reader = next(ep for ep in p.programs if ep.engine.value == "reader")
    assert isinstance(reader.ops[0], Loop)
    assert reader.ops[0].count == TripCount("n", 1, 1)
    rc, report = _certify(path, capsys)
    assert rc == 0, _refuted(report)


def test_helper_header_lambda_and_last_iteration_guard(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A helper of the op's own header inlined, a lambda inlined, ``if (!done(i)) ... else ...`` a not-last / last
    guard, with a constant count and with a trip."""
    for tiles in (8, {"range": "1..8", "trip": "n"}):
        def edit(d: dict[str, Any], tiles: Any = tiles) -> None:
            _kernel(d, "writer").update(source="../helpers/writer_last_barrier.cpp", compile_time_args=[16],
                                        runtime_args=["dst_addr", "num_tiles"])
            _kernel(d, "compute")["compile_time_args"] = [1]
            d["work_units"] = d["work_units"][:1]
            d["tensors"][1]["role"] = "activation"  # how much of it is written depends on the count
            args = d["work_units"][0]["runtime_args"]
            args["writer"] = {"dst_addr": {"tensor": "dst"}, "num_tiles": tiles}
            args["reader"]["num_tiles"] = tiles
            args["compute"]["per_core_block_cnt"] = tiles

        path = _host(tmp_path, "copy", edit)
        p = import_host(path)
        writer = next(ep for ep in p.programs if ep.engine.value == "writer")
        ifs = [op for op in walk(writer.ops) if isinstance(op, If)]
        assert [g.when for g in ifs] == [Guard.NOT_LAST, Guard.LAST]
        assert str(writer.source_of((0, 1))).startswith("../helpers/writer_helpers.hpp:7:5: noc_async_write_tile")
        rc, report = _certify(path, capsys)
        assert rc == 0, _refuted(report)


# ------------------------------------------------------------------ refusals and bad input


@pytest.mark.parametrize(("source", "line", "construct"), [
    ("while.cpp", 6, "while loop"),
    ("fabric.cpp", 6, "call to fabric_async_write"),
    ("const_tile.cpp", 10, "plain store into a buffer page never pushed"),
])
def test_refusals_name_construct_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, line: int,
                                          construct: str) -> None:
    path = _host(tmp_path, "refuse", lambda d: d["kernels"][0].update(source=source))
    with pytest.raises(Refused) as e:
        import_host(path)
    assert (e.value.loc.file, e.value.loc.line, e.value.construct) == (source, line, construct)
    out = tmp_path / "out.json"
    assert main(["import", "ttmetal", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"verispatial: error: {shown(DATA / 'refuse' / source)}:{line}: {construct}")
    assert "Traceback" not in err
    assert not out.exists()
    assert main(["certify", str(path), "-q"]) == 2


@pytest.mark.parametrize(("edit", "field", "rule"), [
    (lambda d: d.pop("kernels"), "(document)", "'kernels' is a required property"),
    (lambda d: d["buffers"][0].update(entry_size=1000), "buffers[0].entry_size", "not a whole number of bf16 tiles"),
    (lambda d: d["work_units"][0]["runtime_args"]["k"].update(bogus=1), "work_units[0].runtime_args.k.bogus",
     "declares no runtime arg 'bogus'"),
    (lambda d: d["work_units"][0].update(kernels=["nope"]), "work_units[0].kernels", "no kernel 'nope'"),
    (lambda d: d["work_units"][0]["runtime_args"]["k"].update(num_tiles="9..3"),
     "work_units[0].runtime_args.k.num_tiles", "range 9..3 is empty"),
    (lambda d: d["kernels"][0].update(processor="brisc"), "kernels[0].processor", "brisc"),
    # a fresh user's find: the schema's regular expression was the message
    (lambda d: d["work_units"][0]["runtime_args"]["k"].update(num_tiles="x"),
     "work_units[0].runtime_args.k.num_tiles", "'x' is not a range LO..HI (a trip); a value is an integer"),
    # the next fresh user's: a core's regular expression, and a core in two work units named as an IR program
    (lambda d: d["work_units"][0].update(cores="a,b"), "work_units[0].cores",
     "'a,b' is not a core \"x,y\" or a rectangle"),
    (lambda d: d["work_units"].append({"cores": "0,0-1,0", "kernels": ["k"]}), "work_units[1].cores",
     "core (0,0) is also in work_units[0], which runs 'k' on its reader processor"),
    # a kernel listed twice in one unit was named as the IR's "one program per (site, engine)", no field
    (lambda d: d["work_units"][0].update(kernels=["k", "k"]), "work_units[0].kernels", "kernel 'k' is listed twice"),
])
def test_bad_host_files(tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, field: str, rule: str) -> None:
    path = _host(tmp_path, "refuse", edit)
    with pytest.raises(ParseError) as e:
        import_host(path)
    assert e.value.field == field
    assert rule in e.value.rule
    assert main(["import", "ttmetal", str(path), "-o", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert field in err
    assert "Traceback" not in err


def test_not_yaml_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.yaml"
    path.write_text("kernels: [\n")
    assert main(["certify", str(path), "-q"]) == 2
    assert "not YAML" in capsys.readouterr().err
    # A file of comments only (a truncated host) is YAML of no value: said so, not as a JSON object and a type name.
    path.write_text("# the eltwise binary host\n# kernels: ...\n")
    assert main(["certify", str(path), "-q"]) == 2
    err = capsys.readouterr().err
    assert "a host description is a mapping of its fields" in err
    assert "got nothing" in err
    assert "JSON" not in err


# ------------------------------------------------------------------ preprocessor


def test_preprocessor_keeps_lines_and_decides_conditionals() -> None:
    src = "\n".join([
        "#define PRE defined A || defined B",  # 1
        "#if not PRE",                          # 2
        "x();",                                 # 3
        "#elif defined(A) && N > 2",            # 4
        "y(N);",                                # 5
        "#else",                                # 6
        "z();",                                 # 7
        "#endif",                               # 8
        '#include "helper.hpp"',                # 9
    ])
    none = preprocess(src, {}, "k.cpp")
    assert none.text.split("\n")[2] == "x();"
    assert none.text.count("\n") == 8
    a3 = preprocess(src, {"A": "1", "N": "3"}, "k.cpp")
    assert a3.text.split("\n")[4] == "y(3);"
    assert "x()" not in a3.text
    assert "z()" not in a3.text
    a1 = preprocess(src, {"A": "1", "N": "1"}, "k.cpp")
    assert a1.text.split("\n")[6] == "z();"
    assert [(i.name, i.quoted, i.line) for i in none.includes] == [("helper.hpp", True, 9)]



def test_preprocessor_refuses_a_function_like_macro_it_does_not_know() -> None:
    """``#if HAS_ACTIVATIONS(LHS)`` (binary_ng) with no definition: refused by name, and no Python warning leaks."""
    import warnings

    src = "#if HAS_ACTIVATIONS(LHS)\nx();\n#endif\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(Refused) as e:
            preprocess(src, {}, "k.cpp")
    assert e.value.line() == "k.cpp:1: not read: #if expression (a function-like macro): #if HAS_ACTIVATIONS(LHS)"

def test_semaphore_set_through_volatile_pointer(tmp_path: Path) -> None:
    """The raw-L1 semaphore pattern: ``*ptr = v`` on a pointer cast from get_semaphore is a SemSet."""
    k = tmp_path / "k.cpp"
    k.write_text("\n".join([
        '#include "api/dataflow/dataflow_api.h"',
        "void kernel_main() {",
        "    volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(0));",
        "    *p = 0;",
        "    noc_semaphore_wait_min(p, 0);",
        "}",
    ]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "sem", "kernel_root": str(tmp_path),
            "semaphores": [{"name": "s", "initial_value": 0}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader"}],
            "work_units": [{"cores": "0,0", "kernels": ["k"]}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    p = import_host(tmp_path / "h.json")
    assert p.programs[0].ops[0] == SemSet(0, 0)
    assert str(p.programs[0].source_of((0,))) == "k.cpp:4:5: *p = 0;"


def test_semaphore_set_of_the_iteration_number(tmp_path: Path) -> None:
    """``noc_semaphore_set(p, k + 1)`` in a loop (argmax's ``start_sem.set(k + 1)``) and the same store through
    the volatile pointer: a SemSet affine in ``k``; a value from a runtime range is refused by name."""
    k = tmp_path / "k.cpp"
    body = [
        '#include "api/dataflow/dataflow_api.h"',
        "void kernel_main() {",
        "    volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(0));",
        "    for (uint32_t k = 0; k < 3; ++k) {",
        "        noc_semaphore_set(p, k + 1);",
        "        noc_semaphore_wait_min(p, k + 1);",
        "    }",
        "}",
    ]
    k.write_text("\n".join(body))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "sem", "kernel_root": str(tmp_path),
            "semaphores": [{"name": "s", "initial_value": 0}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": "reader"}],
            "work_units": [{"cores": "0,0", "kernels": ["k"]}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    p = import_host(tmp_path / "h.json")
    (loop,) = p.programs[0].ops
    assert loop.body[0] == SemSet(0, 1, (Term(loop.var, 1),))  # type: ignore[union-attr]
    body[4] = "        *p = k + 1;"
    k.write_text("\n".join(body))
    (loop,) = import_host(tmp_path / "h.json").programs[0].ops
    assert loop.body[0] == SemSet(0, 1, (Term(loop.var, 1),))  # type: ignore[union-attr]


# ------------------------------------------------------------------ vendor kernels (the pinned ttnn wheel)


@pytest.fixture(scope="module")
def ttnn_wheel() -> Path:
    from verispatial.frontends.ttmetal.vendor import TTNN_VERSION, wheel_root

    root = wheel_root(download=True)
    if root is None:
        pytest.skip(f"the ttnn {TTNN_VERSION} wheel is not cached and could not be downloaded (offline?)")
    return root


EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "ttmetal"


@pytest.mark.parametrize(("example", "op_path", "located"), [
    ("eltwise_binary", (0, 0),
     "ttnn/operations/eltwise/binary/device/kernels/compute/eltwise_binary_kernel.cpp:109:9: dfb_inp0.wait_front"),
    ("eltwise_unary_exp", (0, 4),  # the SFPU_OP_CHAIN_0 define's line as written (not its expansion), at the macro
     "ttnn/operations/eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp:42:9: SFPU_OP_CHAIN_0"),
    ("argmax_nc", (0, 0),  # the acquire holds DST tiles 0..3 (where_tile's four indices), fp32
     "ttnn/operations/reduction/argmax/device/kernels/argmax_nc_compute.cpp:79:9: tile_regs_acquire();"),
    ("matmul_reuse", (0,),  # the batch loop of the blocked matmul (its block loop read block by block)
     "ttnn/operations/matmul/device/kernels/compute/bmm_large_block_zm.cpp:39:5: for (uint32_t b = 0; b < batch;"),
])
def test_vendor_ops_are_proved(ttnn_wheel: Path, capsys: pytest.CaptureFixture[str], example: str,
                               op_path: tuple[int, ...], located: str) -> None:
    """ttnn's interleaved eltwise binary add, unary exp and register-based argmax over N: the reader, compute and
    writer kernels of the wheel, as shipped, each op located in the vendor's file."""
    host = EXAMPLES / example / "host.yaml"
    compute = next(ep for ep in import_host(host).programs if ep.key == "(0,0).compute")
    assert str(compute.source_of(op_path)).startswith(located)
    rc, report = _certify(host, capsys)
    assert rc == 0, _refuted(report)


def test_clone_binds_its_writer_to_the_readers_buffer(ttnn_wheel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ttnn.clone with no dtype conversion: the writer's ``dfb::dst`` is the reader's buffer ``src`` by the
    program factory's ``DFBBinding`` (clone_program_factory.cpp:113, 183-185), which the host's ``dfb_bindings``
    say; both kernels then name one buffer, and the op proves (it was refused: no such buffer ``dst``)."""
    host = EXAMPLES / "clone" / "host.yaml"
    p = import_host(host)
    writer = next(ep for ep in p.programs if ep.key == "(0,0).writer")
    (buf,) = {op.buf for op in walk(writer.ops) if isinstance(op, Wait)}
    assert p.buffers[buf].name == "src"
    assert str(writer.source_of((0, 0))).startswith(
        "ttnn/operations/data_movement/clone/device/kernels/write_kernel.cpp:22:9: dst_dfb.wait_front(1);")
    rc, report = _certify(host, capsys)
    assert rc == 0, _refuted(report)


# ------------------------------------------------------------------ small snippets


def _snippet(tmp_path: Path, body: list[str], processor: str = "reader", prelude: tuple[str, ...] = (),
             args: dict[str, Any] | None = None) -> Any:
    """The one engine program of a kernel ``void kernel_main() { body }`` on core (0,0) with buffers c_0, c_16."""
    (tmp_path / "k.cpp").write_text("\n".join(['#include "api/dataflow/dataflow_api.h"', *prelude,
                                               "void kernel_main() {", *body, "}"]))
    host = {"format": "verispatial.ttmetal-host", "version": 1, "name": "snippet", "kernel_root": str(tmp_path),
            "tensors": [{"name": "t", "shape": [32, 256], "dtype": "bf16", "role": "input"}],
            "buffers": [{"name": "c_0", "index": 0, "entry_size": 2048, "entries": 8, "data_format": "bf16"},
                        {"name": "c_16", "index": 16, "entry_size": 2048, "entries": 8, "data_format": "bf16"}],
            "kernels": [{"name": "k", "source": "k.cpp", "processor": processor,
                         "runtime_args": ["addr", *(args or {})]}],
            "work_units": [{"cores": "0,0", "kernels": ["k"],
                            "runtime_args": {"k": {"addr": {"tensor": "t"}, **(args or {})}}}]}
    (tmp_path / "h.json").write_text(json.dumps(host))
    return import_host(tmp_path / "h.json").programs[0]


def test_reference_parameter_writes_back(tmp_path: Path) -> None:
    """``void next(uint32_t& id) { id += 2; }``: the caller's tile id moves, so the second read is of tile 2."""
    ep = _snippet(tmp_path, [
        "    const InterleavedAddrGenFast<true> s = {.bank_base_address = get_arg_val<uint32_t>(0)};",
        "    uint32_t id = 0;",
        "    for (uint32_t k = 0; k < 2; k++) {",
        "        cb_reserve_back(0, 1);",
        "        noc_async_read_tile(id, s, get_write_ptr(0));",
        "        step(id);",
        "        noc_async_read_barrier();",
        "        cb_push_back(0, 1);",
        "    }",
    ], prelude=("inline void step(uint32_t& id) { id += 2; }",))
    (loop,) = ep.ops
    read = loop.body[1]
    assert isinstance(read, ReadTiles)
    assert [(t.var, t.coef) for t in read.addr.terms] == [("k", 2)]


def test_sfpu_call_is_accumulator_compute_and_llk_is_refused(tmp_path: Path) -> None:
    ep = _snippet(tmp_path, [
        "    cb_wait_front(0, 1); cb_reserve_back(16, 1);",
        "    tile_regs_acquire(); copy_tile(0, 0, 0); exp_tile(0); tile_regs_commit();",
        "    tile_regs_wait(); pack_tile(0, 16); tile_regs_release();",
        "    cb_pop_front(0, 1); cb_push_back(16, 1);",
    ], processor="compute")
    kinds = [op.kind for op in walk(ep.ops) if type(op).__name__ == "Compute"]
    assert kinds == ["copy", "exp"]
    with pytest.raises(Refused, match="call to llk_pop_tiles"):
        _snippet(tmp_path, ["    llk_pop_tiles(0, 1);"], processor="compute")


def test_loop_index_assigned_in_its_body(tmp_path: Path) -> None:
    """A loop of constant count whose body steps its index too is read as it runs (i = 0, 2, 4, 6); over a runtime
    range it is refused."""
    ep = _snippet(tmp_path, ["    for (uint32_t i = 0; i < 8; i++) {", "        cb_reserve_back(0, i + 1);",
                             "        i += 1;", "    }"])
    assert [op.pages for op in ep.ops] == [1, 3, 5, 7]
    with pytest.raises(Refused, match="loop index assigned in its body") as e:
        _snippet(tmp_path, ["    for (uint32_t i = 0; i < get_arg_val<uint32_t>(1); i++) {", "        i += 1;",
                            "    }"], args={"n": "0..8"})
    assert e.value.loc.line == 3


def test_enumerator_template_argument_decides_a_branch(tmp_path: Path) -> None:
    """``read<Layout::TILE>()`` then ``if constexpr (L == Layout::TILE)``: enumerators are compared by name."""
    ep = _snippet(tmp_path, ["    read<Layout::TILE>();", "    read<Layout::ROW_MAJOR>();"], prelude=(
        "template <Layout L> void read() {",
        "    if constexpr (L == Layout::TILE) { cb_reserve_back(0, 1); } else { cb_reserve_back(0, 2); }",
        "}"))
    assert [op.pages for op in ep.ops] == [1, 2]


def test_variable_template_argument_is_its_value(tmp_path: Path) -> None:
    """``read<pages>()`` with ``constexpr uint32_t pages = 3``: tree-sitter reads the argument as a type."""
    ep = _snippet(tmp_path, ["    constexpr uint32_t pages = 3;", "    reserve<pages>();"], prelude=(
        "template <uint32_t N> void reserve() { cb_reserve_back(0, N); }",))
    assert [op.pages for op in ep.ops] == [3]


def test_vendor_move_overlap_ends_with_an_atomic_pending(ttnn_wheel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ttnn's move with overlap (move_interleaved_with_overlap.cpp): each worker's ``sem.up`` to the controller is
    a non-posted NoC atomic never followed by an atomic barrier (the kind of tt-metal #40879); refuted, replayed."""
    rc, report = _certify(EXAMPLES / "move_overlap" / "host.yaml", capsys)
    assert rc == 1
    refuted = _refuted(report)
    assert sorted((r["family"], r["counterexample"]["rule"], r["counterexample"]["engine"]) for r in refuted) == [
        ("async-noc", "async-pending-at-end", "(1,0).reader"), ("async-noc", "async-pending-at-end", "(2,0).reader")]


def test_vendor_argmax_reduce_all_reads_its_scratch_and_sends_undrained_stores(
        ttnn_wheel: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """reader_argmax_interleaved_multicore.cpp on one core (argmax_reduce_all/notes.md): every buffer is scratch L1
    (no circular-buffer op names them), each row read into the same bytes of src, barriered, its values loaded; the
    output written from dst right after the collation's store into it (:529, :536): refuted ``scratch-unlanded`` at
    the write, replayed. The one-core ``done`` increment no wait consumes is the semaphore family's finding."""
    host = EXAMPLES / "argmax_reduce_all" / "host.yaml"
    p = import_host(host)
    assert [(b.name, b.scratch) for b in p.buffers] == [("src", True), ("dst", True), ("red_idxs", True),
                                                        ("red_vals", True)]
    rc, report = _certify(host, capsys)
    assert rc == 1
    refuted = {r["counterexample"]["rule"] if r["counterexample"].get("kind") == "rule" else r["name"].split(":")[0]: r
               for r in _refuted(report)}
    assert sorted(refuted) == ["scratch-unlanded", "sem-set-race"]
    assert refuted["scratch-unlanded"]["counterexample"]["violation"]["position"]["source"]["line"] == 536


def test_multicast_into_another_buffer_is_refused(tmp_path: Path) -> None:
    """McastSend writes the buffer of the source's index at each destination: a target in another buffer is not
    that op."""
    with pytest.raises(Refused, match="multicast into another buffer") as e:
        _snippet(tmp_path, [
            "    cb_reserve_back(0, 1);",
            "    noc_async_write_multicast(get_write_ptr(0), get_noc_multicast_addr(1, 0, 2, 0, get_write_ptr(16)),"
            " 2048, 2);",
        ])
    assert e.value.loc.line == 4


def test_overloads_are_told_apart_by_arity(tmp_path: Path) -> None:
    """``reserve(cb)`` calling its two-argument overload is a call, not a recursion."""
    ep = _snippet(tmp_path, ["    reserve(0);"], prelude=(
        "inline void reserve(uint32_t cb, uint32_t n) { cb_reserve_back(cb, n); }",
        "inline void reserve(uint32_t cb) { reserve(cb, 3); }"))
    assert [op.pages for op in ep.ops] == [3]


def test_vendor_argmax_holds_four_fp32_dst_tiles_and_a_short_push_deadlocks(
        ttnn_wheel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """argmax_nc_compute.cpp keeps max, argmax and two scratch tiles in DST (AcquireAcc(4, fp32): where_tile names
    all four); a compute kernel told to reduce 5 tiles where the reader pushes 4 deadlocks (tt-metal #52348's
    kind), replayed."""
    host = EXAMPLES / "argmax_nc" / "host.yaml"
    compute = next(ep for ep in import_host(host).programs if ep.key == "(0,0).compute")
    assert compute.ops[0].body[0] == AcquireAcc(4, "fp32")
    d = yaml.safe_load(host.read_text())
    d["kernel_root"] = str(ttnn_wheel / "ttnn" / "ttnn" / "cpp")
    _kernel(d, "compute")["compile_time_args"] = [2, 5]
    bad = tmp_path / "argmax.yaml"
    bad.write_text(yaml.safe_dump(d))
    rc, report = _certify(bad, capsys)
    assert rc == 1
    assert {r["family"] for r in _refuted(report)} == {"deadlock"}


def test_vendor_matmul_with_a_block_more_in_compute_deadlocks(ttnn_wheel: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """bmm_large_block_zm told num_blocks = 3 where the reader reads 2 blocks over K waits for a third in0 block
    that never comes: refuted as a deadlock, replayed."""
    d = yaml.safe_load((EXAMPLES / "matmul_reuse" / "host.yaml").read_text())
    d["kernel_root"] = str(ttnn_wheel / "ttnn" / "ttnn" / "cpp")
    _kernel(d, "compute")["compile_time_args"][7] = 3
    bad = tmp_path / "matmul.yaml"
    bad.write_text(yaml.safe_dump(d))
    rc, report = _certify(bad, capsys)
    assert rc == 1
    assert "deadlock" in {r["family"] for r in _refuted(report)}


# ------------------------------------------------------------------ constant tiles built by stores


def test_scaler_tile_built_by_stores_proves_and_freed_early_is_refuted(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """generate_reduce_scaler's shape (a zero fill, its barrier, the value's words on some paths): one ``FillTiles``
    located at the first store, waited once by compute and never popped: refuted only at the push, which publishes
    the stores with no drain. Popped after its first use, the
    pop is beyond its wait window and the next ``mul_tiles`` reads the scaler outside it: both refuted at compute.cpp's
    lines."""
    p = import_host(DATA / "scaler" / "host.yaml")
    reader = next(ep for ep in p.programs if ep.engine.value == "reader")
    fills = [(path, op) for path, op in enumerate(reader.ops) if isinstance(op, FillTiles)]
    assert [(p.buffers[op.into].name, op.tiles) for _, op in fills] == [("scaler", 1)]
    assert str(reader.source_of((fills[0][0],))).startswith("reader.cpp:15:5: noc.async_write_zeros(cb, 2048);")
    rc, report = _certify(_host(tmp_path, "scaler"), capsys)
    # the stores are pushed with no drain, as the vendor helper does (docs/semantics.md "Local-store fills")
    assert rc == 1
    assert [r["name"] for r in _refuted(report)] == ["async-read-publish:(0,0).reader:[2]"], _refuted(report)
    rc, report = _certify(_host(tmp_path, "scaler", lambda d: _kernel(d, "compute").update(
        defines={"POP_SCALER": 1})), capsys)
    assert rc == 1
    bad = {r["name"].split(":", 1)[0]: r for r in _refuted(report)}
    assert sorted(bad) == ["async-read-publish", "cb-pop-uncovered", "cb-read-unwaited"]
    assert bad["cb-pop-uncovered"]["counterexample"]["source"]["line"] == 20
    assert bad["cb-read-unwaited"]["counterexample"]["source"]["line"] == 13


def test_sarif_locates_kernel_lines_under_the_source_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel's file:line is named relative to the host's kernel root (``reader.cpp``); the SARIF log's URIs are
    relative to ``%SRCROOT%``, the directory the run started in. Run from above the host's directory, the log named
    ``reader.cpp`` at the root, a file that is not there (code scanning shows no line), with its region cut to one
    column (the writer could not read the line). Each location is now the kernel's path from the root."""
    import shutil

    proj = tmp_path / "proj"
    shutil.copytree(DATA / "copy", proj / "ops" / "copy")
    host = proj / "ops" / "copy" / "host.yaml"
    d = yaml.safe_load(host.read_text())
    for a in _unit_args(d, "compute"):
        a["per_core_block_cnt"] = 5  # waits for 10 pages where the reader pushes 8: a deadlock in the reader
    host.write_text(yaml.safe_dump(d))
    (proj / ".git").mkdir()  # the source root
    monkeypatch.chdir(proj)
    sarif = proj / "out.sarif"
    assert main(["certify", "ops/copy/host.yaml", "-q", "--no-cache", "--sarif", str(sarif)]) == 1
    run = json.loads(sarif.read_text())["runs"][0]
    uris = {a["location"]["uri"] for a in run["artifacts"]}
    assert "ops/copy/compute.cpp" in uris
    results = [r for r in run["results"] if r["ruleId"] == "deadlock"]
    assert results
    for r in results:
        for loc in [r["locations"][0], *r.get("relatedLocations", [])]:
            art = loc["physicalLocation"]["artifactLocation"]
            assert art["uriBaseId"] == "%SRCROOT%"
            assert (proj / art["uri"]).is_file(), art
    first = results[0]["locations"][0]["physicalLocation"]
    line = (proj / first["artifactLocation"]["uri"]).read_text().split("\n")[first["region"]["startLine"] - 1]
    assert first["region"]["endColumn"] == len(line) + 1
