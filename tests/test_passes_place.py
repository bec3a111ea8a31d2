"""``place`` on targets with and without a multicast: a Tenstorrent grid shares in0 along rows and in1 down
columns through multicast groups; a GPU before thread block clusters cannot, so every site loads its own operands
and no semaphore is needed between sites."""

from __future__ import annotations

from verispatial.driver.run import certify
from verispatial.ir import GPU, WORMHOLE, Addr, Engine, ReadTiles, Target, Term
from verispatial.ir.graph import GraphBuilder, ModelGraph
from verispatial.ir.ops import Loop
from verispatial.passes import Pipeline, compile_section
from verispatial.passes.handshakes import SynthesizeHandshakes
from verispatial.passes.lower import Lower
from verispatial.passes.place import Place
from verispatial.passes.size import Size
from verispatial.passes.tile import Tile

PIPE = Pipeline((Lower(), Tile(max_cols=2, max_rows=2), Place(), Size(), SynthesizeHandshakes()))


def _graph(m: int, k: int, n: int) -> ModelGraph:
    b = GraphBuilder("g")
    b.tensor("a", [m, k], role="input")
    b.tensor("w", [k, n], role="param")
    b.tensor("o", [m, n], role="output")
    b.matmul("mm", "a", "w", "o")
    return b.build()


def _reads(t: Target, m: int, k: int, n: int) -> dict[tuple[int, int], list[str]]:
    p, _ = compile_section(_graph(m, k, n), 0, t, PIPE)
    out: dict[tuple[int, int], list[str]] = {}
    for ep in p.programs:
        if ep.engine == Engine.READER:
            kl = next(o for o in ep.ops if isinstance(o, Loop) and o.var == "k")
            out[(ep.site.x, ep.site.y)] = [r.tensor for o in kl.body if isinstance(o, Loop) for r in o.body
                                           if isinstance(r, ReadTiles)]
    return out


def test_wormhole_grid_multicasts_and_gpu_grid_loads_per_site() -> None:
    wh, frags = compile_section(_graph(64, 128, 64), 0, WORMHOLE, PIPE)
    assert [(g["buffer"], g["sender"], g["destinations"]) for g in frags[2]["groups"]] == [
        ("c_0", [0, 0], 1), ("c_0", [0, 1], 1), ("c_1", [0, 0], 1), ("c_1", [1, 0], 1)]
    # A ready counter and a flag per multicast input, and each input's constant VALID flag source on its senders.
    assert [(x.name, len(x.sites)) for x in wh.semaphores] == [
        ("in0_sender_sem", 4), ("in0_receiver_sem", 4), ("in1_sender_sem", 4), ("in1_receiver_sem", 4),
        ("in0_valid_sem", 2), ("in1_valid_sem", 2)]
    # Only the senders read: column 0 reads in0, row 0 reads in1; (1,1) receives both.
    assert _reads(WORMHOLE, 64, 128, 64) == {(0, 0): ["a", "w"], (1, 0): ["w"], (0, 1): ["a"], (1, 1): []}

    gpu, frags = compile_section(_graph(32, 64, 32), 0, GPU, PIPE)
    assert frags[2]["groups"] == []
    assert gpu.semaphores == ()
    assert gpu.groups == ()
    # The GPU's mesh is one row of SMs: a 2x1 grid, both sites reading both operands.
    assert _reads(GPU, 32, 64, 32) == {(0, 0): ["a", "w"], (1, 0): ["a", "w"]}
    # Site (1,0) reads its own in1 columns: tile column 1 of w (2 tile columns), rows k*2 + r.
    rd = next(ep for ep in gpu.programs if ep.engine == Engine.READER and (ep.site.x, ep.site.y) == (1, 0))
    kl = next(o for o in rd.ops if isinstance(o, Loop) and o.var == "k")
    w_read = [r for o in kl.body if isinstance(o, Loop) for r in o.body if isinstance(r, ReadTiles) and r.tensor == "w"]
    assert w_read[0].addr == Addr(1, (Term("r", 2), Term("k", 4)))
    assert certify(wh).exit_code == 0
    assert certify(gpu).exit_code == 0


def test_place_keeps_loads_on_the_reader_by_default() -> None:
    p, frags = compile_section(_graph(32, 64, 32), 0, WORMHOLE, PIPE)
    assert frags[2]["engines"] == {"read_in0": "reader", "read_in1": "reader", "matmul": "compute", "write_out": "writer"}
    assert Place().one_mover is False
    assert sorted({ep.engine.value for ep in p.programs}) == ["compute", "reader", "writer"]
