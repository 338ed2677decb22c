"""ModernBERT (Warner et al. 2024), as transformers' ``ModernBertModel`` builds it.

A pre-LayerNorm encoder with rotary positions (no position table) and a
gated (GeGLU) MLP, without biases or LayerNorm shifts by default:

- ``embeddings``: ``tok_embeddings`` V·H, ``norm`` H (2H with ``norm_bias``);
- L layers ``layers.*``: ``attn.Wqkv``, one fused H → 3H map written per
  head as ``A·(H·(H/A))`` for each of Q, K and V (A cancels), ``attn.Wo``
  H·H, ``mlp_norm``, ``mlp.Wi`` H → 2F (the gate and the up projection in
  one map) and ``mlp.Wo`` F → H; ``attn_norm`` exists in every layer *but
  the first* (layer 0 has ``nn.Identity``), so it is counted L − 1 times;
- ``final_norm``.

Switches ``norm_bias``, ``attention_bias`` (Wqkv, Wo), ``mlp_bias`` (Wi, Wo)
and ``classifier_bias`` (the head's dense) add the biases the config asks
for; ``decoder_bias`` (the masked-LM decoder's, default true) and ``tie``.
Alternating global and sliding-window attention changes no parameter.
Heads (all with ``head``: dense H·H, norm, as ``ModernBertPredictionHead``):
``masked-lm`` (``decoder`` H → V, tied to the token embeddings unless
``tie=false``, its bias V), ``sequence-classification``,
``token-classification`` and ``question-answering`` (``classifier`` H·C +
C) and ``multiple-choice`` (H + 1).

>>> from symparams import model
>>> model("modernbert-base").count
149014272
>>> model("modernbert").tree.find("encoder.attn_norm").repeat
L - 1
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ..core.blocks import embedding, group, layer_norm, linear, parameter, per_head_linear, product_as_written
from ..core.compute import Attention
from ..core.family import HEAD_DIM, Family, Preset, Switch
from ..core.symbols import A, C, F, H, L, V
from .encoder_parts import TIE, with_head
from .seq2seq_parts import check_padding

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("ModernBertModel", None),
    "masked-lm": ("ModernBertForMaskedLM", "model."),
    "sequence-classification": ("ModernBertForSequenceClassification", "model."),
    "token-classification": ("ModernBertForTokenClassification", "model."),
    "question-answering": ("ModernBertForQuestionAnswering", "model."),
    "multiple-choice": ("ModernBertForMultipleChoice", "model."),
}

TOKENS = "embeddings.tok_embeddings"


def norm(name, switches, title=None):
    return layer_norm(name, H, bias=switches["norm_bias"], title=title)


def attention(bias):
    """``attn``: the fused Wqkv, Q, K and V each written per head (they add up to ``Wqkv.weight``), then Wo.

    Eager attention multiplies ``Q·Kᵀ`` and ``softmax(·)·V`` of A heads H/A wide over the full s × s square
    in every layer: a local (sliding-window) layer masks the scores outside its window but computes them
    all, so its FLOPs are a global layer's whatever s is.  Transformers' eager path does not unpad either
    (it runs on the padded batch).  A windowed kernel (flash attention) would do less once s exceeds the
    window (``local_attention``, 128).
    """
    fused = group("Wqkv", [per_head_linear(part, H, A, H / A, bias=bias, ref="", title=part)
                           for part in ("query", "key", "value")], title="qkv_projections")
    return group("attn", [fused, linear("Wo", H, H, bias=bias, title="attention_output")],
                 title="multi_head_attention", computes=(Attention(A, H / A, H / A),))


def mlp(bias):
    """``mlp``: Wi H → 2F (gate and up projection in one map), Wo F → H."""
    return group("mlp", [linear("Wi", H, product_as_written(2, F), bias=bias, title="ffn_gate_up"),
                         linear("Wo", F, H, bias=bias, title="ffn_down")], title="geglu")


def layers(switches):
    """L layers, and the L − 1 ``attn_norm`` of all but the first (layer 0 has ``nn.Identity`` there)."""
    every = group("layers", [attention(switches["attention_bias"]), norm("mlp_norm", switches),
                             mlp(switches["mlp_bias"])], repeat=L, ref="layers.*", title="encoder_layer")
    later = replace(norm("attn_norm", switches, title="attention_norm"), repeat=L - 1, ref="layers.*.attn_norm")
    return [every, later]


def decoder(switches):
    """The masked-LM decoder H → V: its weight is the token table unless ``tie=false`` (only the weight is
    tied); its bias V (``decoder_bias``) is its own either way."""
    bias = switches["decoder_bias"]
    if not switches["tie"]:
        return linear("decoder", H, V, bias=bias, title="mlm_decoder")
    return group("decoder", [linear("weight", H, V, bias=False, tied_to=TOKENS, title="mlm_decoder"),
                             parameter("bias", V, title="decoder_bias") if bias else None], title="mlm_decoder")


def heads(head, switches):
    """``ModernBertPredictionHead`` (``head``: dense, norm) and what follows it in ``ModernBertFor*``."""
    if head is None:
        return []
    transform = group("head", [linear("dense", H, H, bias=switches["classifier_bias"], title="mlm_transform"),
                               norm("norm", switches)], title="mlm_transform")
    if head == "masked-lm":
        return [transform, decoder(switches)]
    if head in ("token-classification", "question-answering"):  # every position
        return [transform, linear("classifier", H, C, title="classifier")]
    # sequence-classification, multiple-choice: the pooled sequence (classifier_pooling "cls": the first
    # token; "mean": an element-wise mean, no matmul), one position per sequence
    return [replace(transform, per_sequence=True),
            linear("classifier", H, 1 if head == "multiple-choice" else C, title="classifier", per_sequence=True)]


def build(switches, head):
    return group("modernbert", [
        group("embeddings", [embedding("tok_embeddings", V, H, title="token_embedding"),
                             norm("norm", switches, title="embedding_layer_norm")]),
        group("encoder", [*layers(switches), norm("final_norm", switches, title="final_norm")], ref="",
              title="encoder"),
        with_head(heads(head, switches)),
    ], ref="")


#: the bias switches: each is the config key of the same name (defaults of ``ModernBertConfig``)
BIASES = (
    Switch("norm_bias", False, en="every LayerNorm has a shift β (norm_bias)",
           zh="每个 LayerNorm 都有平移参数 β（norm_bias）"),
    Switch("attention_bias", False, en="biases in Wqkv and Wo (attention_bias)",
           zh="注意力的 Wqkv、Wo 带偏置（attention_bias）"),
    Switch("mlp_bias", False, en="biases in the MLP's Wi and Wo (mlp_bias)", zh="MLP 的 Wi、Wo 带偏置（mlp_bias）"),
    Switch("classifier_bias", False, en="a bias in the heads' dense layer (classifier_bias)",
           zh="任务头的全连接层带偏置（classifier_bias）"),
    Switch("decoder_bias", True, en="a bias V in the masked-LM decoder (decoder_bias)",
           zh="掩码语言模型解码层带偏置 V（decoder_bias）"),
)


def from_config(cfg):
    """Values from a ``ModernBertConfig`` (missing keys: its defaults, the ModernBERT-base sizes).

    The padding index (``pad_token_id``, 50283 unless given) must fit the
    vocabulary, as ``nn.Embedding`` requires.
    """
    hidden = cfg.int("hidden_size", default=768)
    values = dict(V=cfg.int("vocab_size", default=50368), H=hidden, L=cfg.int("num_hidden_layers", default=22),
                  A=cfg.int("num_attention_heads", default=12), F=cfg.int("intermediate_size", default=1152),
                  C=cfg.labels())
    check_padding(cfg, 50283, ("vocab_size", values["V"]))
    switches = {sw.name: cfg.bool(sw.name, default=sw.default) for sw in BIASES}
    return values, {**switches, "tie": cfg.bool("tie_word_embeddings", default=True)}


FAMILY = Family(
    name="modernbert",
    title={"en": "ModernBERT", "zh": "ModernBERT"},
    build=build,
    switches=(*BIASES, TIE),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=(HEAD_DIM,),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "encoder"),
    config_types=("modernbert",),
    from_config=from_config,
)

PRESETS = (
    Preset("modernbert-base", "modernbert", {"V": 50368, "H": 768, "L": 22, "A": 12, "F": 1152},
           en="ModernBERT-base (answerdotai/ModernBERT-base), Warner et al. 2024",
           zh="ModernBERT-base（answerdotai/ModernBERT-base），Warner 等人，2024", reference="ModernBertModel"),
)
