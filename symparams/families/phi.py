"""Phi-1, Phi-1.5 and Phi-2 (Microsoft 2023), as transformers' ``PhiModel`` builds them.

Token table ``embed_tokens`` (V·H); L layers ``layers.*`` with ONE
LayerNorm ``input_layernorm`` each (attention and MLP run in parallel on
it); ``self_attn``: ``q_proj`` written per head ``A·(H·(H/A) + H/A)``,
``k_proj`` and ``v_proj`` with the key/value heads (A, or G with ``gqa``),
``dense`` H·H + H; the MLP ``fc1`` H·rH + rH, ``fc2`` rH·H + H; the final
``final_layernorm``.  Every linear layer has a bias.  Partial rotary
positions (``partial_rotary_factor``) hold no parameters.  With
``qk_layernorm`` each layer also normalises queries and keys per head:
``q_layernorm`` and ``k_layernorm``, 2·(H/A) each, which depend on A.  The
causal-LM head ``lm_head`` H·V has a bias V, and is untied by default.

>>> from symparams import model
>>> model("phi-2", head="causal-lm").count
2779683840
>>> model("phi", qk_layernorm=True).tree.find("decoder.layers.self_attn.q_layernorm").count
2*H/A
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..core.blocks import embedding, group, layer_norm, linear, product_as_written
from ..core.compute import Attention
from ..core.errors import SymparamsError
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Preset, Switch
from ..core.symbols import A, C, G, H, L, V, r
from .classic_parts import WIDTH, decoder_model, heads_of, mlp, qkv_parts, task_head, tie_switch
from .llama import KV_GROUPS

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("PhiModel", None),
    "causal-lm": ("PhiForCausalLM", "model."),
    "sequence-classification": ("PhiForSequenceClassification", "model."),
    "token-classification": ("PhiForTokenClassification", "model."),
}

TOKENS = "embeddings.embed_tokens"


def attention(switches):
    kv = G if switches["gqa"] else A
    norms = [layer_norm(n, WIDTH, title="qk_norm") for n in ("q_layernorm", "k_layernorm")]
    return group("self_attn", [
        *qkv_parts(("q_proj", "k_proj", "v_proj"), kv, bias=True),
        linear("dense", H, H, title="attention_output"),
        *(norms if switches["qk_layernorm"] else ()),
    ], title="grouped_query_attention" if switches["gqa"] else "masked_attention",
        # eager: K and V repeated to A heads, Q·Kᵀ and softmax·V over all s × s pairs; partial rotary and the
        # q/k LayerNorms are element-wise; the cache keeps K and V of the kv heads at full width H/A
        computes=(Attention(A, WIDTH, WIDTH, cache=2 * kv * WIDTH, causal=True),))


def layer(switches):
    return group("layers", [
        layer_norm("input_layernorm", H),
        attention(switches),
        mlp(product_as_written(r, H), ("fc1", "fc2")),
    ], repeat=L, ref="layers.*", title="decoder_layer")


def build(switches, head):
    # the token-classification head is GenericForTokenClassification's ``score``, with a bias
    task = task_head(head, tied_to=TOKENS if switches["tie"] else None, lm_bias=True, token="score")
    return decoder_model("phi", [embedding("embed_tokens", V, H, title="token_embedding")], layer(switches),
                         [layer_norm("final_layernorm", H, title="final_norm")], task)


def from_config(cfg):
    """Values from a ``PhiConfig`` (defaults: Phi-1.5, as transformers 5 has them).

    ``num_key_value_heads`` missing or equal to ``num_attention_heads``: plain
    multi-head attention (``gqa=false``, no G).  Refused, with the key named:
    key/value heads that do not divide the heads, a ``head_dim`` other than
    hidden/heads, and ``token_classification_bias: false`` under the
    token-classification head.
    """
    hidden = cfg.int("hidden_size", default=2048)
    heads = cfg.int("num_attention_heads", default=32)
    kv = cfg.int("num_key_value_heads", default=heads)
    if heads % kv:
        raise SymparamsError(f"{cfg.source}: key num_key_value_heads ({kv}) does not divide "
                             f"num_attention_heads ({heads})")
    if cfg.has("head_dim") and cfg.int("head_dim") * heads != hidden:
        raise SymparamsError(f"{cfg.source}: key head_dim ({cfg.data['head_dim']}) is not hidden_size / "
                             f"num_attention_heads; symparams' phi family counts heads H/A wide")
    if cfg.head == "token-classification":
        cfg.refuse("token_classification_bias", False, default=True, family="phi",
                   what="a token-classification score without a bias")
    values = dict(V=cfg.int("vocab_size", default=51200), H=hidden, L=cfg.int("num_hidden_layers", default=24),
                  A=heads, r=Fraction(cfg.int("intermediate_size", default=8192), hidden), C=cfg.labels())
    if kv != heads:
        values["G"] = kv
    switches = dict(gqa=kv != heads, qk_layernorm=cfg.bool("qk_layernorm", default=False),
                    tie=cfg.bool("tie_word_embeddings", default=False))
    return values, switches


FAMILY = Family(
    name="phi",
    title={"en": "Phi", "zh": "Phi"},
    build=build,
    switches=(
        Switch("gqa", False, en="grouped-query attention, K and V with G heads (false: A heads)",
               zh="分组查询注意力，K、V 有 G 个头（false 时为 A 个）"),
        Switch("qk_layernorm", False, en="a LayerNorm on each head's queries and keys (q_layernorm, k_layernorm)",
               zh="对每个头的查询和键做 LayerNorm（q_layernorm、k_layernorm）"),
        tie_switch(False),
    ),
    heads=heads_of(CLASSES),
    constraints=(HEAD_DIM, KV_GROUPS, FFN_SIZE),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("phi",),
    from_config=from_config,
)

_PHI = dict(V=51200, A=32, r=4)

PRESETS = (
    Preset("phi-1_5", "phi", {**_PHI, "H": 2048, "L": 24},
           en="Phi-1.5 (Microsoft 2023)", zh="Phi-1.5（微软 2023）", reference="PhiModel"),
    Preset("phi-2", "phi", {**_PHI, "H": 2560, "L": 32},
           en="Phi-2 (Microsoft 2023)", zh="Phi-2（微软 2023）", reference="PhiModel"),
)
