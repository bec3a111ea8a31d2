"""The shipped decoder-layer model graphs (``examples/models/``): they are what ``build_models.py`` writes, every
number cites its public source, every section compiles (and, for the decode graphs here, proves) under the tile caps
the tests use (the decode layers' attention included: a KV loop to a runtime trip), and a grid too small for a
layer's MLP is refused by name."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from verispatial.ir import WORMHOLE
from verispatial.ir.graph import dumps_graph, load_graph
from verispatial.ir.program import Trip
from verispatial.passes import Pipeline, capped_passes, compile_model, compose

MODELS = Path(__file__).resolve().parent.parent / "examples" / "models"
SHIPPED = ["llama3_2_1b_decode", "llama3_2_1b_prefill", "qwen2_5_0_5b_decode", "qwen2_5_0_5b_prefill",
           "llama3_2_1b_decode_step", "qwen2_5_0_5b_decode_step", "llama3_1_8b_decode_step",
           "llama3_1_70b_decode_step"]
#: A 2x2 matmul grid and 4 elementwise sites: every section proves in a few seconds.
CAPS = Pipeline(capped_passes(2, 2, 4))


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_models", MODELS / "build_models.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_shipped_files_are_what_the_builder_writes() -> None:
    built = _builder().graphs()
    assert sorted(built) == [f"{m}.json" for m in sorted(SHIPPED)]
    for name, g in built.items():
        assert (MODELS / name).read_text() == dumps_graph(g) + "\n"
        assert load_graph(MODELS / name) == g


@pytest.mark.parametrize(("model", "config", "dims"), [
    ("llama3_2_1b_decode", "https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json",
     {"x": [1, 2048], "w_q": [2048, 2048], "w_k": [2048, 512], "w_gate": [2048, 8192], "w_down": [8192, 2048]}),
    ("llama3_1_8b_decode_step", "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json",
     {"h0": [1, 4096], "l31.w_q": [4096, 4096], "l31.w_k": [4096, 1024], "l31.w_gate": [4096, 14336],
      "l31.w_down": [14336, 4096], "lm_head_weight": [4096, 128256]}),
    ("llama3_1_70b_decode_step", "https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json",
     {"h0": [1, 8192], "l79.w_q": [8192, 8192], "l79.w_k": [8192, 1024], "l79.w_gate": [8192, 28672],
      "l79.w_down": [28672, 8192], "lm_head_weight": [8192, 128256]}),
    ("qwen2_5_0_5b_prefill", "https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json",
     {"x": [128, 896], "w_q": [896, 896], "w_k": [896, 128], "b_k": [128], "w_gate": [896, 4864],
      "w_down": [4864, 896]}),
])
def test_numbers_come_from_the_cited_config(model: str, config: str, dims: dict[str, list[int]]) -> None:
    d = json.loads((MODELS / f"{model}.json").read_text())
    assert d["source"]["config"] == config
    shapes = {t["name"]: t["shape"] for t in d["tensors"]}
    assert {k: shapes[k] for k in dims} == dims


@pytest.mark.parametrize(("model", "programs", "ops"), [
    ("llama3_2_1b_decode", [3, 6, 6, 6, 2, 2, 12, 6, 12, 3, 6, 6, 12, 6, 12], 3134),
    ("qwen2_5_0_5b_decode", [3, 6, 6, 6, 2, 2, 12, 6, 12, 3, 6, 6, 12, 6, 12], 2996),
])
def test_decode_layer_compiles_and_every_section_proves(model: str, programs: list[int], ops: int) -> None:
    g = load_graph(MODELS / f"{model}.json")
    secs = compile_model(g, WORMHOLE, pipeline=CAPS)
    assert [s.name for s in secs] == [o.name for o in g.ops]
    assert [s.engine_programs for s in secs] == programs
    assert sum(s.ops for s in secs) == ops
    assert [s.op for s in secs][:7] == ["rmsnorm", "matmul", "matmul", "matmul", "scatter", "scatter", "attention"]
    # The attention's KV loop runs to the runtime trip kv_blocks, at most 2048 / 32 positions per block.
    att = secs[6].program
    assert att.trips == (Trip("kv_blocks", 64),)
    assert [(s.name, s.report.exit_code if s.report else None) for s in secs] == [(s.name, 0) for s in secs]


@pytest.mark.parametrize(("model", "programs", "ops"), [
    ("llama3_2_1b_prefill", [12, 12, 12, 12, 2, 2, *[12] * 8], 2804),
    ("qwen2_5_0_5b_prefill", [12, 12, 12, 12, 2, 2, *[12] * 8], 2748),
])
def test_prefill_layer_compiles(model: str, programs: list[int], ops: int) -> None:
    # Certifying the prefill layers takes 15-20 s each (see examples/models/README.md); compiling them is instant.
    secs = compile_model(load_graph(MODELS / f"{model}.json"), WORMHOLE, pipeline=CAPS, check=False)
    assert [s.engine_programs for s in secs] == programs
    assert sum(s.ops for s in secs) == ops


@pytest.mark.parametrize(("model", "items"), [
    ("llama3_2_1b_decode", {"gate_proj": (2, 1, 128), "up_proj": (2, 1, 128)}),
    ("qwen2_5_0_5b_prefill", {"gate_proj": (2, 4, 76), "up_proj": (2, 4, 76)}),
])
def test_mlp_on_one_site_runs_as_several_items(model: str, items: dict[str, tuple[int, int, int]]) -> None:
    # One site cannot hold gate/up_proj's whole block (the decode's 1x256 tiles over K 64 needed 1609728 B, the
    # prefill's 4x152 over K 28 1916928 B, of 1395424 usable): tile splits the columns into items and persist loops
    # over them.
    secs = compile_model(load_graph(MODELS / f"{model}.json"), WORMHOLE, pipeline=Pipeline(capped_passes(1, 1, 1)),
                         check=False)
    plans = {s.name: s.fragments[1]["plan"] for s in secs}
    assert {n: (p["items"], p["per_site_m"], p["per_site_n"]) for n, p in plans.items() if p.get("items", 1) > 1} == items
    assert all(s.fragments[-1]["items"] == plans[s.name].get("items", 1) for s in secs)


@pytest.mark.parametrize(("model", "config", "layers", "vocab", "hidden"), [
    ("llama3_2_1b_decode_step", "https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json", 16, 128_256,
     2048),
    ("qwen2_5_0_5b_decode_step", "https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json", 24, 151_936, 896),
])
def test_decode_step_is_embedding_every_layer_final_norm_and_tied_lm_head(model: str, config: str, layers: int,
                                                                         vocab: int, hidden: int) -> None:
    g = load_graph(MODELS / f"{model}.json")
    d = json.loads((MODELS / f"{model}.json").read_text())
    assert d["source"]["config"] == config
    assert d["source"]["num_hidden_layers"].startswith(f"{layers}: config.json num_hidden_layers")
    assert d["source"]["vocab_size"] == f"{vocab}: config.json vocab_size"
    assert d["source"]["tie_word_embeddings"].startswith("true: config.json tie_word_embeddings")
    assert len(g.ops) == 1 + 15 * layers + 2
    assert (g.ops[0].kind, g.ops[0].inputs, g.ops[0].output) == ("gather", ("embed_tokens", "token"), "h0")
    assert g.tensor("embed_tokens").shape == (vocab, hidden)
    head = g.ops[-1]
    assert (head.name, head.inputs, head.transpose_b) == ("lm_head", ("h_final", "embed_tokens"), True)
    assert g.tensor("logits").shape == (1, vocab)
    assert g.ops[-2].kind == "rmsnorm"
    states = sorted(t.name for t in g.tensors if t.role.value == "state")
    assert states == sorted(f"l{i}.{c}_cache" for i in range(layers) for c in "kv")
    # One position for every layer's cache updates; each layer reads the previous layer's residual stream.
    assert {o.inputs[1] for o in g.ops if o.kind == "scatter"} == {"position"}
    assert [o.inputs[0] for o in g.ops if o.name.endswith(".attn_norm")] == [f"h{i}" for i in range(layers)]


def test_one_layer_decode_step_composes_with_one_trip_and_carried_caches() -> None:
    mod = _builder()
    g = mod.decode_step(mod.LLAMA, layers=1)
    secs = compile_model(g, WORMHOLE, pipeline=Pipeline(capped_passes(1, 1, 1)), check=False)
    state = [t.name for t in g.tensors if t.role.value == "state"]
    p, frag = compose([s.program for s in secs], state=state, target=WORMHOLE)
    assert p.name == "logits_18_sections"
    assert len(p.sections) == 18
    assert p.trips == (Trip("kv_blocks", 64),)
    roles = {t.name: t.role.value for t in p.tensors}
    assert (roles["l0.k_cache"], roles["l0.v_cache"], roles["position"], roles["h1"], roles["logits"]) == (
        "state", "state", "input", "activation", "output")
    assert roles["embed_tokens"] == "param"
    assert len(frag["rendezvous"]["boundaries"]) == 17
