"""Falcon (TII 2023), as transformers' ``FalconModel`` builds it.

Token table ``word_embeddings`` (V·H); L blocks ``h.*``: LayerNorms,
``self_attention`` — one fused ``query_key_value`` written per head as Q
with A heads and K, V with the key/value heads, each H/A wide — and ``dense``
H·H, the MLP ``dense_h_to_4h`` H·rH and ``dense_4h_to_h`` rH·H; the final
``ln_f``.  The linear layers have biases only with ``bias`` (false in every
released checkpoint); LayerNorms always have their shift.  Rotary positions
and ALiBi (``alibi``) hold no parameters.

The key/value heads: the new decoder architecture (Falcon-40B, 180B) has G
of them, so ``query_key_value`` is H → (A + 2G)·H/A and the count depends on
A unless G/A is held fixed; the old one either shares one key/value head
among all A query heads (``multi_query``, Falcon-7B: H → H + 2H/A, which
depends on A) or has A of them (H → 3H, which does not).

The norms: without ``parallel_attn`` each block has ``input_layernorm`` and
``post_attention_layernorm``; with it, ``ln_attn`` and ``ln_mlp`` when
``num_ln_in_parallel_attn`` is 2 (the default of the new architecture), else
one ``input_layernorm`` that attention and MLP share.

>>> from symparams import model
>>> model("falcon-7b").tree.find("decoder.h.self_attention.query_key_value").count
H**2 + 2*H**2/A
>>> model("falcon-40b").tree.find("decoder.h.self_attention.query_key_value").count
H**2 + 2*G*H**2/A
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..core.blocks import embedding, group, layer_norm, linear, product_as_written
from ..core.errors import SymparamsError
from ..core.family import FFN_SIZE, HEAD_DIM, Constraint, Family, Preset, Switch
from ..core.symbols import A, C, G, H, L, V, r
from .classic_parts import causal_attention, decoder_model, fused_qkv, heads_of, mlp, task_head, tie_switch
from .llama import KV_GROUPS

#: transformers' FalconConfig refuses an odd head width (it checks the rotary settings even with ALiBi)
EVEN_HEAD_DIM = Constraint(
    H / (2 * A), "H={H} and A={A} give an odd head width H/A, which FalconConfig refuses",
    (r"2A \mid H", "2A divides H: each head's width H/A is even, as FalconConfig requires",
     "2A 整除 H：每个头的维度 H/A 为偶数（FalconConfig 的要求）"))

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("FalconModel", None),
    "causal-lm": ("FalconForCausalLM", "transformer."),
    "sequence-classification": ("FalconForSequenceClassification", "transformer."),
    "token-classification": ("FalconForTokenClassification", "transformer."),
    "question-answering": ("FalconForQuestionAnswering", "transformer."),
}

TOKENS = "embeddings.word_embeddings"


def key_value_heads(switches):
    """The key/value heads: G (new architecture), one (multi-query) or A."""
    if switches["new_decoder_architecture"]:
        return G
    return sp.Integer(1) if switches["multi_query"] else A


def query_key_value(switches):
    """Q, K, V fused: G key/value heads (new architecture), one (multi-query) or A."""
    title = "grouped_query_attention" if switches["new_decoder_architecture"] else \
        "multi_query_attention" if switches["multi_query"] else "multi_head_attention"
    return fused_qkv(key_value_heads(switches), bias=switches["bias"], title=title)


def norms(switches):
    """The block's LayerNorms, as FalconDecoderLayer builds them."""
    if not switches["parallel_attn"]:
        names = ("input_layernorm", "post_attention_layernorm")
    elif switches["num_ln_in_parallel_attn"] == "2":
        names = ("ln_attn", "ln_mlp")
    else:
        names = ("input_layernorm",)
    return [layer_norm(n, H) for n in names]


def block(switches):
    bias = switches["bias"]
    return group("h", [
        *norms(switches),
        group("self_attention", [query_key_value(switches),
                                 linear("dense", H, H, bias=bias, title="attention_output")], title="masked_attention",
                 computes=(causal_attention(key_value_heads(switches)),)),
        mlp(product_as_written(r, H), bias=bias),
    ], repeat=L, ref="h.*", title="decoder_layer")


def build(switches, head):
    task = task_head(head, tied_to=TOKENS if switches["tie"] else None)
    return decoder_model("falcon", [embedding("word_embeddings", V, H, title="token_embedding")], block(switches),
                         [layer_norm("ln_f", H, title="final_norm")], task)


def _resolve(switches, head):
    """``num_ln_in_parallel_attn`` unset: 2 with the new decoder architecture, else 1 (as FalconDecoderLayer)."""
    if switches["num_ln_in_parallel_attn"] is None:
        switches["num_ln_in_parallel_attn"] = "2" if switches["new_decoder_architecture"] else "1"
    return switches


def from_config(cfg):
    """Values from a ``FalconConfig`` (defaults: Falcon-7B, as transformers 5 has them).

    ``hidden_size`` may be spelled ``n_embed``; ``ffn_hidden_size`` missing or null
    is 4H; ``num_kv_heads`` (missing: A) counts only in the new decoder
    architecture, and must divide the heads there.  ``alibi`` and the rotary
    settings hold no parameters and are not read.
    """
    hidden = cfg.int("n_embed", "hidden_size", default=4544)
    heads = cfg.int("num_attention_heads", default=71)
    new = cfg.bool("new_decoder_architecture", default=False)
    values = dict(V=cfg.int("vocab_size", default=65024), H=hidden, L=cfg.int("num_hidden_layers", default=32),
                  A=heads, r=Fraction(cfg.int("ffn_hidden_size", default=4 * hidden), hidden), C=cfg.labels())
    if new:
        values["G"] = kv = cfg.int("num_kv_heads", default=heads)
        if heads % kv:
            raise SymparamsError(f"{cfg.source}: key num_kv_heads ({kv}) does not divide num_attention_heads "
                                 f"({heads}): each key/value head must serve a whole number of query heads")
    norms_in_parallel = cfg.int("num_ln_in_parallel_attn", default=None)
    if norms_in_parallel not in (None, 1, 2):
        raise SymparamsError(f"{cfg.source}: key num_ln_in_parallel_attn must be 1 or 2, not {norms_in_parallel}")
    switches = dict(new_decoder_architecture=new, multi_query=cfg.bool("multi_query", default=True),
                    parallel_attn=cfg.bool("parallel_attn", default=True), bias=cfg.bool("bias", default=False),
                    tie=cfg.bool("tie_word_embeddings", default=True))
    if norms_in_parallel is not None:  # unset: the family's default, which follows the architecture
        switches["num_ln_in_parallel_attn"] = str(norms_in_parallel)
    return values, switches


FAMILY = Family(
    name="falcon",
    title={"en": "Falcon", "zh": "Falcon"},
    build=build,
    switches=(
        Switch("new_decoder_architecture", False,
               en="the new decoder architecture, K and V with G heads fused with Q (Falcon-40B)",
               zh="新解码器架构，K、V 有 G 个头，与 Q 融合在一起（Falcon-40B）"),
        Switch("multi_query", True, en="one key/value head shared by all A query heads (old architecture only)",
               zh="所有 A 个查询头共用一个键值头（仅旧架构）"),
        Switch("parallel_attn", True, en="attention and MLP read the same input, in parallel",
               zh="注意力与 MLP 并行，读同一个输入"),
        Switch("num_ln_in_parallel_attn", None, ("1", "2"),
               en="LayerNorms per block with parallel_attn (2: ln_attn and ln_mlp; 1: input_layernorm)",
               zh="并行注意力下每层的 LayerNorm 个数（2 个为 ln_attn 与 ln_mlp，1 个为 input_layernorm）"),
        Switch("bias", False, en="biases in query_key_value, dense and the MLP",
               zh="query_key_value、dense 与 MLP 带偏置"),
        tie_switch(True),
    ),
    heads=heads_of(CLASSES),
    constraints=(HEAD_DIM, EVEN_HEAD_DIM, KV_GROUPS, FFN_SIZE),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    resolve_switches=_resolve,
    config_types=("falcon",),
    from_config=from_config,
)

PRESETS = (
    Preset("falcon-7b", "falcon", dict(V=65024, H=4544, L=32, A=71, r=4),
           en="Falcon-7B (TII 2023): multi-query attention, parallel attention and MLP",
           zh="Falcon-7B（TII 2023）：多查询注意力，注意力与 MLP 并行", reference="FalconModel"),
    Preset("falcon-40b", "falcon", dict(V=65024, H=8192, L=60, A=128, G=8, r=4), {"new_decoder_architecture": True},
           en="Falcon-40B (TII 2023): new decoder architecture, 8 key/value heads",
           zh="Falcon-40B（TII 2023）：新解码器架构，8 个键值头", reference="FalconModel"),
)
