"""Write the shipped decoder-layer model graphs (shapes only, no weights) from the models' public configurations.

Run ``python examples/models/build_models.py`` to regenerate ``llama3_2_1b_{decode,prefill}.json``,
``qwen2_5_0_5b_{decode,prefill}.json``, the decode steps of both, and the decode steps of Llama-3.1-8B (32 layers)
and Llama-3.1-70B (80 layers); ``tests/test_passes_models.py`` checks the files equal what this writes.

One decoder layer (pre-norm, as both models' ``*DecoderLayer``): ``x_norm = rmsnorm(x)`` (a fold); the q/k/v
projections (Qwen2 adds a bias to each, fused into the matmul's chain); the KV-cache update (a scatter of the new
keys and values into ``k_cache``/``v_cache`` of ``max_seq`` positions at the runtime tile row ``position``); in a
decode step the attention (grouped-query, flash-decoding: q against the updated caches' first ``kv_blocks`` tile rows,
a count known only at run time, at most ``max_seq / 32``); the output projection of the attention's output ``attn``;
the residual add; ``h_norm = rmsnorm(h)``; SwiGLU (``silu(h_norm @ w_gate) * (h_norm @ w_up)``, the activation fused
into the gate matmul); the down projection; the second residual add. A prefill's attention (causal, over 128 query
rows) is not an op: there ``attn`` enters the graph as an input. The rotary embedding of q and k is not modelled (it
keeps their shapes).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from verispatial.ir.graph import GraphBuilder, ModelGraph, dumps_graph

HERE = Path(__file__).resolve().parent


@attrs.frozen
class Config:
    """The numbers of a model's public ``config.json`` this graph uses, and where they come from."""

    name: str
    url: str
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    qkv_bias: bool
    qkv_bias_source: str
    layers: int
    vocab: int
    tied: bool
    max_seq: int = 2048


LLAMA = Config(
    name="llama3_2_1b",
    url="https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json",
    hidden=2048, intermediate=8192, heads=32, kv_heads=8, head_dim=64,
    qkv_bias=False, qkv_bias_source="config.json attention_bias: false",
    layers=16, vocab=128_256, tied=True,
)
#: Llama-3.1-8B and Llama-3.1-70B (issue 19, goal 3: the decode step at 32 and 80 layers). Their config.json has no
#: head_dim key: it is hidden_size / num_attention_heads (128 for both), as transformers' LlamaAttention derives it.
LLAMA_8B = Config(
    name="llama3_1_8b",
    url="https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json",
    hidden=4096, intermediate=14336, heads=32, kv_heads=8, head_dim=4096 // 32,
    qkv_bias=False, qkv_bias_source="config.json attention_bias: false",
    layers=32, vocab=128_256, tied=False,
)
LLAMA_70B = Config(
    name="llama3_1_70b",
    url="https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json",
    hidden=8192, intermediate=28672, heads=64, kv_heads=8, head_dim=8192 // 64,
    qkv_bias=False, qkv_bias_source="config.json attention_bias: false",
    layers=80, vocab=128_256, tied=False,
)
QWEN = Config(
    name="qwen2_5_0_5b",
    url="https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json",
    # head_dim is not a key of Qwen2's config.json: it is hidden_size / num_attention_heads = 896 / 14.
    hidden=896, intermediate=4864, heads=14, kv_heads=2, head_dim=896 // 14,
    qkv_bias=True,
    qkv_bias_source="q_proj/k_proj/v_proj are nn.Linear(..., bias=True) in transformers' "
                    "models/qwen2/modeling_qwen2.py (Qwen2Attention)",
    layers=24, vocab=151_936, tied=True,
)


def _cite_layer(b: GraphBuilder, cfg: Config, tokens: int) -> None:
    b.cite("config", cfg.url)
    b.cite("hidden_size", f"{cfg.hidden}: config.json hidden_size")
    b.cite("intermediate_size", f"{cfg.intermediate}: config.json intermediate_size")
    b.cite("num_attention_heads", f"{cfg.heads}: config.json num_attention_heads")
    b.cite("num_key_value_heads", f"{cfg.kv_heads}: config.json num_key_value_heads")
    b.cite("head_dim", f"{cfg.head_dim}: config.json head_dim" if cfg.name.startswith("llama3_2")
           else f"{cfg.head_dim}: hidden_size / num_attention_heads")
    b.cite("qkv_bias", cfg.qkv_bias_source)
    b.cite("hidden_act", "silu: config.json hidden_act (SwiGLU MLP: down(silu(gate(x)) * up(x)))")
    b.cite("rms_norm", "RMSNorm before attention and before the MLP: transformers LlamaDecoderLayer / Qwen2DecoderLayer "
                       "(input_layernorm, post_attention_layernorm); eps is config.json rms_norm_eps (a value, not a shape)")
    b.cite("dtype", "bfloat16: config.json torch_dtype")
    b.cite("tokens", f"{tokens}: {'one decode step' if tokens == 1 else 'a 128-token prefill'} (this graph's choice)")
    b.cite("kv_cache", f"{cfg.max_seq} positions (this graph's choice)")
    b.cite("attention", "decode: grouped-query attention over the cache's first kv_blocks tile rows of 32 positions, "
                        f"a runtime count in [0, {cfg.max_seq // 32}] (transformers repeat_kv: query head h uses kv head "
                        f"h // {cfg.heads // cfg.kv_heads})" if tokens == 1 else
                        "prefill: the attention's output attn is a graph input (causal prefill attention is not an op)")


def _layer(b: GraphBuilder, cfg: Config, tokens: int, p: str, x: str, out: str, *, alone: bool) -> None:
    """The tensors and ops of one decoder layer, names prefixed ``p``, reading the residual stream ``x`` and writing
    ``out``. ``alone``: the layer is the whole graph (``x`` an input, ``out`` the output, ``position`` declared
    here); else the caller declared ``x`` and ``position`` and ``out`` is an activation the next op reads."""
    q_dim, kv_dim = cfg.heads * cfg.head_dim, cfg.kv_heads * cfg.head_dim
    t, h, f = tokens, cfg.hidden, cfg.intermediate
    if alone:
        b.tensor(x, [t, h], role="input")
    b.tensor(f"{p}attn_norm_weight", [h], role="param")
    b.tensor(f"{p}mlp_norm_weight", [h], role="param")
    b.tensor(f"{p}attn", [t, q_dim], role="activation" if tokens == 1 else "input")
    for w, shape in (("w_q", [h, q_dim]), ("w_k", [h, kv_dim]), ("w_v", [h, kv_dim]), ("w_o", [q_dim, h]),
                     ("w_gate", [h, f]), ("w_up", [h, f]), ("w_down", [f, h])):
        b.tensor(f"{p}{w}", shape, role="param")
    if cfg.qkv_bias:
        b.tensor(f"{p}b_q", [q_dim], role="param")
        b.tensor(f"{p}b_k", [kv_dim], role="param")
        b.tensor(f"{p}b_v", [kv_dim], role="param")
    for a, shape in (("x_norm", [t, h]), ("h_norm", [t, h]),
                     ("q", [t, q_dim]), ("k", [t, kv_dim]), ("v", [t, kv_dim]), ("o", [t, h]), ("h", [t, h]),
                     ("gate", [t, f]), ("up", [t, f]), ("act", [t, f]), ("down", [t, h])):
        b.tensor(f"{p}{a}", shape)
    b.tensor(out, [t, h], role="output" if alone else "activation")
    if alone:
        b.tensor("position", [1], "int32", role="input")
    b.tensor(f"{p}k_cache", [cfg.max_seq, kv_dim], role="state")
    b.tensor(f"{p}v_cache", [cfg.max_seq, kv_dim], role="state")
    bias = {"q": f"{p}b_q", "k": f"{p}b_k", "v": f"{p}b_v"} if cfg.qkv_bias else {}
    b.rmsnorm(f"{p}attn_norm", x, f"{p}attn_norm_weight", f"{p}x_norm")
    b.matmul(f"{p}q_proj", f"{p}x_norm", f"{p}w_q", f"{p}q", bias=bias.get("q"))
    b.matmul(f"{p}k_proj", f"{p}x_norm", f"{p}w_k", f"{p}k", bias=bias.get("k"))
    b.matmul(f"{p}v_proj", f"{p}x_norm", f"{p}w_v", f"{p}v", bias=bias.get("v"))
    b.scatter(f"{p}k_cache_update", f"{p}k", "position", f"{p}k_cache")
    b.scatter(f"{p}v_cache_update", f"{p}v", "position", f"{p}v_cache")
    if tokens == 1:
        b.attention(f"{p}attention", f"{p}q", f"{p}k_cache", f"{p}v_cache", f"{p}attn", heads=cfg.heads,
                    kv_heads=cfg.kv_heads)
    b.matmul(f"{p}o_proj", f"{p}attn", f"{p}w_o", f"{p}o")
    b.binary(f"{p}attn_residual", "add", x, f"{p}o", f"{p}h")
    b.rmsnorm(f"{p}mlp_norm", f"{p}h", f"{p}mlp_norm_weight", f"{p}h_norm")
    b.matmul(f"{p}gate_proj", f"{p}h_norm", f"{p}w_gate", f"{p}gate", activation="silu")
    b.matmul(f"{p}up_proj", f"{p}h_norm", f"{p}w_up", f"{p}up")
    b.binary(f"{p}swiglu", "mul", f"{p}gate", f"{p}up", f"{p}act")
    b.matmul(f"{p}down_proj", f"{p}act", f"{p}w_down", f"{p}down")
    b.binary(f"{p}mlp_residual", "add", f"{p}h", f"{p}down", out)


def decoder_layer(cfg: Config, tokens: int) -> ModelGraph:
    """One decoder layer of ``cfg`` over ``tokens`` tokens (1: a decode step; 128: a prefill), bf16 throughout."""
    phase = "decode" if tokens == 1 else "prefill"
    b = GraphBuilder(f"{cfg.name}_{phase}")
    _cite_layer(b, cfg, tokens)
    _layer(b, cfg, tokens, "", "x", "out", alone=True)
    return b.build()


def decode_step(cfg: Config, layers: int | None = None) -> ModelGraph:
    """A whole decode step of ``cfg`` (one token): the embedding gather of the token's row of the table, ``layers``
    decoder layers (default: the model's ``num_hidden_layers``), the final RMSNorm and the LM head over the full
    vocabulary — reading the embedding table itself, transposed, when the model ties its embeddings. Every layer's
    KV caches are carried state; ``position`` (the cache row written) and the attention's ``kv_blocks`` trip are
    shared by every layer. Layer ``i``'s tensors and ops are prefixed ``l<i>.``; the residual stream between layers
    is ``h0`` .. ``h<layers>``."""
    n = cfg.layers if layers is None else layers
    b = GraphBuilder(f"{cfg.name}_decode_step" + ("" if layers is None else f"_{n}_layers"))
    _cite_layer(b, cfg, 1)
    b.cite("num_hidden_layers", f"{cfg.layers}: config.json num_hidden_layers"
           + ("" if layers is None else f" (this graph keeps the first {n})"))
    b.cite("vocab_size", f"{cfg.vocab}: config.json vocab_size")
    b.cite("tie_word_embeddings", "true: config.json tie_word_embeddings (the LM head is the embedding table, "
                                  "read transposed)" if cfg.tied else "false: config.json tie_word_embeddings")
    b.cite("embedding", "model.embed_tokens (nn.Embedding(vocab_size, hidden_size)): a gather of the token's row; "
                        "the final RMSNorm model.norm, then lm_head (transformers LlamaForCausalLM / Qwen2ForCausalLM)")
    h = cfg.hidden
    b.tensor("token", [1], "int32", role="input")
    b.tensor("embed_tokens", [cfg.vocab, h], role="param")
    b.tensor("position", [1], "int32", role="input")
    b.tensor("h0", [1, h])
    b.gather("embed", "embed_tokens", "token", "h0")
    for i in range(n):
        _layer(b, cfg, 1, f"l{i}.", f"h{i}", f"h{i + 1}", alone=False)
    b.tensor("final_norm_weight", [h], role="param")
    b.tensor("h_final", [1, h])
    b.tensor("logits", [1, cfg.vocab], role="output")
    b.rmsnorm("final_norm", f"h{n}", "final_norm_weight", "h_final")
    if cfg.tied:
        b.matmul_transposed("lm_head", "h_final", "embed_tokens", "logits")
    else:
        b.tensor("lm_head_weight", [h, cfg.vocab], role="param")
        b.matmul("lm_head", "h_final", "lm_head_weight", "logits")
    return b.build()


def graphs() -> dict[str, ModelGraph]:
    """File name -> graph, for every shipped model graph."""
    out = {}
    for cfg in (LLAMA, QWEN):
        for tokens in (1, 128):
            g = decoder_layer(cfg, tokens)
            out[f"{g.name}.json"] = g
        step = decode_step(cfg)
        out[f"{step.name}.json"] = step
    for cfg in (LLAMA_8B, LLAMA_70B):  # the decode step alone: the layer count is the point (issue 19)
        step = decode_step(cfg)
        out[f"{step.name}.json"] = step
    return out


def main() -> None:
    for name, g in graphs().items():
        (HERE / name).write_text(dumps_graph(g) + "\n")


if __name__ == "__main__":
    main()
