"""GPT-2: a decoder-only stack with learned positions and pre-LayerNorm.

Token embedding ``wte`` (V·H) and learned positions ``wpe`` (P·H), then L
blocks ``h.*`` (LayerNorm → attention → LayerNorm → MLP), then the final
LayerNorm ``ln_f``.  The projections are ``Conv1D`` modules with biases; the
attention's Q, K and V live in one fused ``c_attn`` (H → 3H), written here
per head, ``A·(H·(H/A) + H/A)`` for each of Q, K and V, so A shows and
cancels; their parameters are summed into ``h.*.attn.c_attn.weight`` and
``.bias`` as in transformers.  The MLP's inner size is ``n_inner`` (``None``:
4H), written r·H.  The language-model head is tied to ``wte``.

>>> from symparams import model
>>> model("gpt2").count
124439808
>>> model("gpt2", head="causal-lm").count  # lm_head tied to wte
124439808
>>> model("gpt2").tree.find("decoder.h.attn.c_attn").count
3*H**2 + 3*H
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..core.blocks import embedding, group, layer_norm, linear, per_head_linear, product_as_written
from ..core.compute import Attention
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Preset, Switch
from ..core.symbols import A, C, H, L, P, V, r

#: heads, with the transformers class that builds each (``None``: the base model)
CLASSES = {
    None: "GPT2Model",
    "causal-lm": "GPT2LMHeadModel",
    "sequence-classification": "GPT2ForSequenceClassification",
    "token-classification": "GPT2ForTokenClassification",
    "question-answering": "GPT2ForQuestionAnswering",
}


def fused(name, parts):
    """A fused Conv1D (``c_attn``) written as one per-head projection per part.

    Every part is its own block (``query``, ``key``, ``value``) with ``ref=""``,
    so their weights and biases add up to ``c_attn.weight`` and ``c_attn.bias``.
    """
    return group(name, [per_head_linear(p, H, A, H / A, ref="") for p in parts], title="qkv_projections")


def attention(name, cross=False):
    """``GPT2Attention``: fused Q,K,V (cross-attention: K,V fused, Q apart) and ``c_proj``.

    Eager attention multiplies A heads of width H/A (``QKᵀ`` and the weighted sum), causal in the
    self-attention; the cache keeps each token's keys and values, 2H per layer (cross-attention: per token
    of the encoder's states, which ``c_attn`` maps to K and V)."""
    if cross:
        parts = [fused("c_attn", ("key", "value")), per_head_linear("q_attn", H, A, H / A, title="query")]
    else:
        parts = [fused("c_attn", ("query", "key", "value"))]
    return group(name, [*parts, linear("c_proj", H, H, title="attention_output")],
                 title="cross_attention" if cross else "masked_attention",
                 computes=(Attention(A, H / A, H / A, cache=2 * H, causal=not cross, cross=cross),))


def block(inner, cross):
    return group("h", [
        layer_norm("ln_1", H),
        attention("attn"),
        layer_norm("ln_2", H),
        attention("crossattention", cross=True) if cross else None,
        layer_norm("ln_cross_attn", H) if cross else None,
        group("mlp", [linear("c_fc", H, inner, title="ffn_up"), linear("c_proj", inner, H, title="ffn_down")],
              title="ffn"),
    ], repeat=L, ref="h.*", title="decoder_layer")


def head_block(head, tie):
    if head == "causal-lm":
        return linear("lm_head", H, V, bias=False, title="output_projection",
                      tied_to="embeddings.wte" if tie else None)
    if head == "sequence-classification":
        return linear("score", H, C, bias=False, title="classifier")
    if head == "token-classification":
        return linear("classifier", H, C, title="classifier")
    if head == "question-answering":
        return linear("qa_outputs", H, 2, title="qa_outputs")
    return None


def build(switches, head):
    inner = product_as_written(r, H)
    task = head_block(head, switches["tie"])
    return group("gpt2", [
        group("embeddings", [embedding("wte", V, H, title="token_embedding"),
                             embedding("wpe", P, H, title="learned_positions")], ref="", title="input"),
        group("decoder", [block(inner, switches["cross_attention"]),
                          layer_norm("ln_f", H, title="final_norm")], ref="", title="decoder"),
        group("head", [task], ref="", title="task_head") if task is not None else None,
    ], ref="")


def from_config(cfg):
    """Values from a ``GPT2Config`` (defaults: gpt2, as transformers 5 has them).

    ``n_inner`` missing or ``null`` is 4H.  ``n_embd`` ... may be spelled
    as the aliases transformers maps (``hidden_size``,
    ``max_position_embeddings``, ``num_attention_heads``,
    ``num_hidden_layers``).
    """
    hidden = cfg.int("hidden_size", "n_embd", default=768)
    inner = cfg.int("n_inner", default=4 * hidden)
    values = dict(V=cfg.int("vocab_size", default=50257), P=cfg.int("max_position_embeddings", "n_positions",
                                                                      default=1024),
                  H=hidden, L=cfg.int("num_hidden_layers", "n_layer", default=12),
                  A=cfg.int("num_attention_heads", "n_head", default=12), r=Fraction(inner, hidden), C=cfg.labels())
    switches = dict(tie=cfg.bool("tie_word_embeddings", default=True),
                    cross_attention=cfg.bool("add_cross_attention", default=False))
    return values, switches


FAMILY = Family(
    name="gpt2",
    title={"en": "GPT-2", "zh": "GPT-2"},
    build=build,
    switches=(
        Switch("tie", True, en="causal-lm head tied to the token embedding", zh="语言模型头与词嵌入共享权重"),
        Switch("cross_attention", False, en="cross-attention in every block (add_cross_attention)",
               zh="每层加入交叉注意力（add_cross_attention）"),
    ),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=(HEAD_DIM, FFN_SIZE),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("gpt2",),
    from_config=from_config,
)

_GPT2 = dict(V=50257, P=1024, r=4)

PRESETS = (
    Preset("gpt2", "gpt2", {**_GPT2, "H": 768, "L": 12, "A": 12},
           en="GPT-2 small (124M), Radford et al. 2019", zh="GPT-2 small（124M），Radford 等人，2019",
           reference="GPT2Model"),
    Preset("gpt2-medium", "gpt2", {**_GPT2, "H": 1024, "L": 24, "A": 16},
           en="GPT-2 medium (355M)", zh="GPT-2 medium（355M）", reference="GPT2Model"),
    Preset("gpt2-large", "gpt2", {**_GPT2, "H": 1280, "L": 36, "A": 20},
           en="GPT-2 large (774M)", zh="GPT-2 large（774M）", reference="GPT2Model"),
    Preset("gpt2-xl", "gpt2", {**_GPT2, "H": 1600, "L": 48, "A": 25},
           en="GPT-2 XL (1.5B)", zh="GPT-2 XL（1.5B）", reference="GPT2Model"),
    Preset("distilgpt2", "gpt2", {**_GPT2, "H": 768, "L": 6, "A": 12},
           en="DistilGPT2 (6 layers)", zh="DistilGPT2（6 层）", reference="GPT2Model"),
)
