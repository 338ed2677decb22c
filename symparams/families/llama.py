"""LLaMA: RMSNorm, SwiGLU, rotary positions, grouped-query attention.

Token embedding ``embed_tokens`` (V·H); L decoder layers ``layers.*``
(RMSNorm → attention → RMSNorm → SwiGLU MLP); the final RMSNorm ``norm``.
RMSNorm has a scale only; rotary positions have no parameters; no linear
layer has a bias unless ``attention_bias`` / ``mlp_bias`` say so.

Attention has A query heads and G key/value heads (``gqa=true``), each of
width D = H/A, so Q is ``A·(H·(H/A))`` = H² and K, V are each ``G·(H·(H/A))``
= G·H²/A: the count depends on A unless G/A is held fixed.  With
``gqa=false`` K and V have A heads (plain multi-head attention, as in
Llama-2-7B).  ``free_head_dim=true`` sets the head width to its own symbol D
(a config ``head_dim`` other than hidden/heads).  The SwiGLU MLP has three
matrices (gate, up: H → F; down: F → H) with its own intermediate size F.

>>> from symparams import model
>>> model("llama-2-7b", head="causal-lm").count
6738415616
>>> model("llama").tree.find("decoder.layers.self_attn.k_proj").count
G*H**2/A
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import embedding, group, linear, per_head_linear, product_as_written, rms_norm
from ..core.errors import SymparamsError
from ..core.family import HEAD_DIM, Constraint, Family, Preset, Switch
from ..core.symbols import A, C, D, F, G, H, L, V

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("LlamaModel", None),
    "causal-lm": ("LlamaForCausalLM", "model."),
    "sequence-classification": ("LlamaForSequenceClassification", "model."),
    "token-classification": ("LlamaForTokenClassification", "model."),
    "question-answering": ("LlamaForQuestionAnswering", "transformer."),
}

#: grouped-query attention: each key/value head serves A/G query heads
KV_GROUPS = Constraint(
    A / G, "A={A} is not divisible by G={G} (each key/value head serves A/G query heads)",
    (r"G \mid A", "G divides A: each key/value head serves A/G query heads",
     "G 整除 A：每个键值头服务 A/G 个查询头"))


def attention(switches):
    bias = switches["attention_bias"]
    width = D if switches["free_head_dim"] else H / A
    kv = G if switches["gqa"] else A
    return group("self_attn", [
        per_head_linear("q_proj", H, A, width, bias=bias, title="query"),
        per_head_linear("k_proj", H, kv, width, bias=bias, title="key"),
        per_head_linear("v_proj", H, kv, width, bias=bias, title="value"),
        linear("o_proj", product_as_written(A, D) if switches["free_head_dim"] else H, H, bias=bias, title="attention_output"),
    ], title="grouped_query_attention" if switches["gqa"] else "masked_attention")


def mlp(bias):
    return group("mlp", [
        linear("gate_proj", H, F, bias=bias, title="ffn_gate"),
        linear("up_proj", H, F, bias=bias, title="ffn_up"),
        linear("down_proj", F, H, bias=bias, title="ffn_down"),
    ], title="swiglu")


def decoder_layer(switches):
    return group("layers", [
        rms_norm("input_layernorm", H),
        attention(switches),
        rms_norm("post_attention_layernorm", H),
        mlp(switches["mlp_bias"]),
    ], repeat=L, ref="layers.*", title="decoder_layer")


def head_block(head, switches):
    if head == "causal-lm":
        return linear("lm_head", H, V, bias=False, title="output_projection",
                      tied_to="embeddings.embed_tokens" if switches["tie"] else None)
    if head == "sequence-classification":
        return linear("score", H, C, bias=False, title="classifier")
    if head == "token-classification":
        return linear("score", H, C, bias=switches["token_classification_bias"], title="classifier")
    if head == "question-answering":
        return linear("qa_outputs", H, 2, title="qa_outputs")
    return None


def build(switches, head):
    task = head_block(head, switches)
    return group("llama", [
        group("embeddings", [embedding("embed_tokens", V, H, title="token_embedding")], ref="", title="input"),
        group("decoder", [decoder_layer(switches), rms_norm("norm", H, title="final_norm")], ref="",
              title="decoder"),
        group("head", [task], ref="", title="task_head") if task is not None else None,
    ], ref="")


def from_config(cfg):
    """Values from a ``LlamaConfig`` (defaults: Llama-7B, as transformers 5 has them).

    ``num_key_value_heads`` missing or equal to ``num_attention_heads`` is
    plain multi-head attention (``gqa=false``, no G); ``head_dim`` missing or
    equal to hidden/heads is H/A (no D).  As LlamaConfig does, a config is
    refused when heads do not divide the hidden size, key/value heads do not
    divide heads, or the head width is odd (rotary embeddings).
    """
    hidden = cfg.int("hidden_size", default=4096)
    heads = cfg.int("num_attention_heads", default=32)
    kv = cfg.int("num_key_value_heads", default=heads)
    if hidden % heads:
        raise SymparamsError(f"{cfg.source}: key hidden_size ({hidden}) is not divisible by "
                             f"num_attention_heads ({heads}), which LlamaConfig requires")
    if heads % kv:
        raise SymparamsError(f"{cfg.source}: key num_key_value_heads ({kv}) does not divide "
                             f"num_attention_heads ({heads})")
    head_dim = cfg.int("head_dim", default=hidden // heads)
    if head_dim % 2:
        key = "head_dim" if cfg.has("head_dim") else "hidden_size"
        raise SymparamsError(f"{cfg.source}: key {key} gives an odd head width ({head_dim}); rotary "
                             f"embeddings need an even one, and LlamaConfig refuses it")
    values = dict(V=cfg.int("vocab_size", default=32000), H=hidden, L=cfg.int("num_hidden_layers", default=32),
                  A=heads, F=cfg.int("intermediate_size", default=11008), C=cfg.labels())
    if kv != heads:
        values["G"] = kv
    if head_dim * heads != hidden:
        values["D"] = head_dim
    switches = dict(gqa=kv != heads, free_head_dim=head_dim * heads != hidden,
                    tie=cfg.bool("tie_word_embeddings", default=False),
                    attention_bias=cfg.bool("attention_bias", default=False),
                    mlp_bias=cfg.bool("mlp_bias", default=False),
                    token_classification_bias=cfg.bool("token_classification_bias", default=True))
    return values, switches


FAMILY = Family(
    name="llama",
    title={"en": "LLaMA", "zh": "LLaMA"},
    build=build,
    switches=(
        Switch("gqa", True, en="grouped-query attention: K and V have G heads (false: A heads)",
               zh="分组查询注意力：K、V 有 G 个头（false 时为 A 个）"),
        Switch("free_head_dim", False, en="head width D set on its own (false: D = H/A)",
               zh="每个头的维度 D 单独设定（false 时 D = H/A）"),
        Switch("tie", False, en="causal-lm head tied to the token embedding", zh="语言模型头与词嵌入共享权重"),
        Switch("attention_bias", False, en="biases in q/k/v/o projections", zh="注意力投影带偏置"),
        Switch("mlp_bias", False, en="biases in gate/up/down projections", zh="前馈网络投影带偏置"),
        Switch("token_classification_bias", True, en="bias of the token-classification score layer",
               zh="词元分类层带偏置"),
    ),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=(HEAD_DIM, KV_GROUPS),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("llama",),
    from_config=from_config,
)

_MHA = {"gqa": False}

PRESETS = (
    Preset("llama-2-7b", "llama", dict(V=32000, H=4096, L=32, A=32, F=11008), _MHA,
           en="Llama 2 7B (multi-head attention)", zh="Llama 2 7B（多头注意力）", reference="LlamaModel"),
    Preset("llama-2-13b", "llama", dict(V=32000, H=5120, L=40, A=40, F=13824), _MHA,
           en="Llama 2 13B (multi-head attention)", zh="Llama 2 13B（多头注意力）", reference="LlamaModel"),
    Preset("llama-2-70b", "llama", dict(V=32000, H=8192, L=80, A=64, G=8, F=28672),
           en="Llama 2 70B (grouped-query attention, 8 key/value heads)",
           zh="Llama 2 70B（分组查询注意力，8 个键值头）", reference="LlamaModel"),
    Preset("llama-3-8b", "llama", dict(V=128256, H=4096, L=32, A=32, G=8, F=14336),
           en="Llama 3 8B (grouped-query attention, 8 key/value heads)",
           zh="Llama 3 8B（分组查询注意力，8 个键值头）", reference="LlamaModel"),
    Preset("llama-3-70b", "llama", dict(V=128256, H=8192, L=80, A=64, G=8, F=28672),
           en="Llama 3 70B (grouped-query attention, 8 key/value heads)",
           zh="Llama 3 70B（分组查询注意力，8 个键值头）", reference="LlamaModel"),
)
