"""T5: encoder–decoder with relative attention bias and RMS-style LayerNorm.

A shared token embedding ``shared`` (V·H) feeds both stacks.  Each stack
(``encoder``, ``decoder``) has L blocks ``block.*``; a block holds
self-attention, in the decoder cross-attention, and the feed-forward
network, each behind a ``T5LayerNorm`` (a scale only).  No linear layer has
a bias.  The head dimension D (``d_kv``) is its own size, not H/A: Q, K, V
are each ``A·(H·D)`` and the output ``A·D·H``, so the inner dimension A·D
grows with A.  The first block of each stack also holds the relative
attention bias, an embedding of B buckets × A heads.  Both make the count
depend on A.  The FFN is ReLU (``wi``, ``wo``) or gated-GELU (``wi_0``,
``wi_1``, ``wo``; T5 v1.1, Flan-T5, mT5) with intermediate size F (``d_ff``).
The ``seq2seq-lm`` head is tied to ``shared`` (``tie=true``) or not.  The
decoder has L layers, or its own L_d (``split_layers``).

What it computes (:mod:`symparams.analysis.flops`): every attention is A
heads of width D (so its matmuls grow with A·D, not with H); the relative
position bias is looked up and added, no matmul.  The decoder's
self-attention is causal, its cross-attention reads the encoder's
positions; each caches 2·A·D elements per token and layer, the encoder
nothing.  The LM head and the question-answering head run on every
decoder position, the token classifier on every encoder position
(``T5ForTokenClassification`` is the encoder alone), the classification
head only on the state at each sequence's last ``<eos>``.

>>> from symparams import model
>>> model("t5-base").count
222903552
>>> model("flan-t5-base", head="seq2seq-lm").count  # gated FFN, untied lm_head
247577856
>>> model("t5").tree.find("encoder.relative_attention_bias").count
A*B
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import embedding, group, linear, per_head_linear, product_as_written, rms_norm
from ..core.compute import Attention
from ..core.errors import SymparamsError
from ..core.family import Family, Preset, Switch
from ..core.symbols import A, B, C, D, F, H, L, L_d, V

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("T5Model", None),
    "seq2seq-lm": ("T5ForConditionalGeneration", None),
    "sequence-classification": ("T5ForSequenceClassification", "transformer."),
    "token-classification": ("T5ForTokenClassification", "transformer."),  # encoder only
    "question-answering": ("T5ForQuestionAnswering", None),
}

#: defaults of transformers' config classes, by model_type
DEFAULTS = {
    "t5": dict(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8,
               feed_forward_proj="relu"),
    "mt5": dict(vocab_size=250112, d_model=512, d_kv=64, d_ff=1024, num_layers=8, num_heads=6,
                feed_forward_proj="gated-gelu"),
}


def attention(name, title, *, cached=False, causal=False, cross=False):
    """``T5Attention``: Q, K, V of A heads of width D, and the output A·D → H; no biases.

    Eager attention multiplies ``Q·Kᵀ`` and ``softmax(·)·V`` per head, of width D; the relative position
    bias added to the scores is a table lookup (no matmul).  ``cached``: a decoder's module, whose keys and
    values (A·D each) stay in the cache for every token of context, the decoder's own (``causal``) or the
    encoder's (``cross``).
    """
    return group(name, [
        *(per_head_linear(n, H, A, D, bias=False, title=t) for n, t in (("q", "query"), ("k", "key"), ("v", "value"))),
        linear("o", product_as_written(A, D), H, bias=False, title="attention_output"),
    ], title=title, computes=(Attention(A, D, D, cache=2 * A * D if cached else 0, causal=causal, cross=cross),))


def sublayer(name, inner, title):
    """``T5LayerSelfAttention`` / ``T5LayerCrossAttention`` / ``T5LayerFF``: a module and its norm."""
    return group(name, [inner, rms_norm("layer_norm", H)], ref="layer.*", title=title)


def ffn(gated):
    ins = [linear("wi_0", H, F, bias=False, title="ffn_gate"), linear("wi_1", H, F, bias=False, title="ffn_up")] \
        if gated else [linear("wi", H, F, bias=False, title="ffn_up")]
    return group("DenseReluDense", [*ins, linear("wo", F, H, bias=False, title="ffn_down")],
                 title="ffn")


def stack(name, decoder, gated, layers=L):
    block = group("block", [
        sublayer("self_attention", attention("SelfAttention", "masked_attention" if decoder
                                             else "multi_head_attention", cached=decoder, causal=decoder),
                 "self_attention_sublayer"),
        sublayer("cross_attention", attention("EncDecAttention", "cross_attention", cached=True, cross=True),
                 "cross_attention_sublayer")
        if decoder else None,
        sublayer("feed_forward", ffn(gated), "feed_forward"),
    ], repeat=layers, ref="block.*", title="cross_decoder_layer" if decoder else "encoder_layer")
    return group(name, [
        embedding("embed_tokens", V, H, tied_to="shared", title="token_embedding"),
        # only the first block's self-attention holds it (has_relative_attention_bias = i == 0): its one name
        embedding("relative_attention_bias", B, A, ref="block.0.layer.0.SelfAttention.relative_attention_bias",
                  title="relative_attention_bias"),
        block,
        rms_norm("final_layer_norm", H, title="final_norm"),
    ], title="decoder" if decoder else "encoder")


def head_block(head, tie):
    if head == "seq2seq-lm":
        return linear("lm_head", H, V, bias=False, title="output_projection", tied_to="shared" if tie else None)
    if head == "sequence-classification":  # on the decoder's state at the last <eos> of each sequence
        return group("classification_head", [linear("dense", H, H, title="classifier_dense"),
                                             linear("out_proj", H, C, title="classifier")], title="classifier",
                     per_sequence=True)
    if head == "token-classification":  # on every position of the encoder
        return linear("classifier", H, C, title="classifier")
    if head == "question-answering":  # on every position of the decoder
        return linear("qa_outputs", H, C, title="qa_outputs")  # T5 uses num_labels here
    return None


def build(switches, head):
    gated = switches["gated"]
    task = head_block(head, switches["tie"])
    return group("t5", [
        embedding("shared", V, H, title="token_embedding"),
        stack("encoder", False, gated),
        stack("decoder", True, gated, L_d if switches["split_layers"] else L)
        if head != "token-classification" else None,
        group("head", [task], ref="", title="task_head") if task is not None else None,
    ], ref="")


def from_config(cfg):
    """Values from a ``T5Config`` / ``MT5Config`` (defaults: t5-small / mt5-small, as transformers 5 has them).

    ``feed_forward_proj`` is ``ACT`` or ``gated-ACT``; an explicit
    ``is_gated_act`` wins, as in transformers.  ``num_decoder_layers`` other
    than ``num_layers`` is L_d (``split_layers``).  The
    ``seq2seq-lm`` head is untied when ``tie_word_embeddings`` is false, or
    when ``scale_decoder_outputs`` is false: transformers 5 writes that flag
    (and ``tie_word_embeddings: true``) for a T5 v1.1/Flan config whose
    checkpoint holds its own ``lm_head``, which ``from_pretrained`` keeps
    untied.
    """
    model_type = cfg.str("model_type")
    d = DEFAULTS.get(model_type, DEFAULTS["t5"])
    # the decoder's default is num_layers as the class sets it before applying the alias num_hidden_layers
    layers = cfg.int("num_hidden_layers", "num_layers", default=d["num_layers"])
    decoder_layers = cfg.int("num_decoder_layers", "num_layers", default=d["num_layers"], exact=True)
    proj = cfg.str("feed_forward_proj", default=d["feed_forward_proj"])
    parts = proj.split("-")
    if len(parts) > 2 or (len(parts) == 2 and parts[0] != "gated") or not all(parts):
        raise SymparamsError(f"{cfg.source}: key feed_forward_proj is {proj!r}; T5 takes ACT or gated-ACT "
                             f"(relu, gated-gelu, ...)")
    gated = cfg.bool("is_gated_act", default=len(parts) == 2)
    tie = cfg.bool("tie_word_embeddings", default=True)
    if cfg.bool("scale_decoder_outputs", default=True) is False:
        tie = False
    if not tie:
        cfg.note("the seq2seq-lm head is counted untied, as the checkpoint holds it; transformers' from_config "
                 "ties it to the shared embedding (V·H fewer)", departs=("seq2seq-lm",))
    values = dict(V=cfg.int("vocab_size", default=d["vocab_size"]), H=cfg.int("hidden_size", "d_model",
                                                                               default=d["d_model"]),
                  L=layers, A=cfg.int("num_attention_heads", "num_heads", default=d["num_heads"]),
                  D=cfg.int("head_dim", "d_kv", default=d["d_kv"]), F=cfg.int("d_ff", default=d["d_ff"]),
                  B=cfg.int("relative_attention_num_buckets", default=32), C=cfg.labels())
    if decoder_layers != layers:
        values["L_d"] = decoder_layers
    return values, dict(gated=gated, tie=tie, split_layers=decoder_layers != layers)


FAMILY = Family(
    name="t5",
    title={"en": "T5", "zh": "T5"},
    build=build,
    switches=(
        Switch("gated", False, en="gated-GELU FFN (`wi_0`, `wi_1`, `wo`; T5 v1.1, Flan-T5) instead of ReLU (`wi`, `wo`)",
               zh="门控 GELU 前馈网络（`wi_0`、`wi_1`、`wo`；T5 v1.1、Flan-T5），否则为 ReLU（`wi`、`wo`）"),
        Switch("tie", True, en="seq2seq-lm head tied to the shared embedding", zh="语言模型头与共享词嵌入共享权重"),
        Switch("split_layers", False, en="the decoder has its own layer count L_d (num_decoder_layers ≠ num_layers)",
               zh="解码器层数 L_d 与编码器不同（num_decoder_layers ≠ num_layers）"),
    ),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=(),
    defaults={C: sp.Integer(2)},
    components=("shared", "encoder", "decoder"),
    config_types=("t5", "mt5"),
    from_config=from_config,
)

_T5 = dict(V=32128, D=64, B=32)
_V11 = {"gated": True, "tie": False}

PRESETS = (
    Preset("t5-small", "t5", {**_T5, "H": 512, "L": 6, "A": 8, "F": 2048},
           en="T5-small (Raffel et al. 2020)", zh="T5-small（Raffel 等人，2020）", reference="T5Model"),
    Preset("t5-base", "t5", {**_T5, "H": 768, "L": 12, "A": 12, "F": 3072},
           en="T5-base", zh="T5-base", reference="T5Model"),
    Preset("t5-large", "t5", {**_T5, "H": 1024, "L": 24, "A": 16, "F": 4096},
           en="T5-large", zh="T5-large", reference="T5Model"),
    Preset("flan-t5-small", "t5", {**_T5, "H": 512, "L": 8, "A": 6, "F": 1024}, _V11,
           en="Flan-T5-small (T5 v1.1: gated-GELU, untied lm_head)",
           zh="Flan-T5-small（T5 v1.1：门控 GELU，语言模型头不共享）", reference="T5Model"),
    Preset("flan-t5-base", "t5", {**_T5, "H": 768, "L": 12, "A": 12, "F": 2048}, _V11,
           en="Flan-T5-base (T5 v1.1: gated-GELU, untied lm_head)",
           zh="Flan-T5-base（T5 v1.1：门控 GELU，语言模型头不共享）", reference="T5Model"),
    Preset("mt5-small", "t5", {**_T5, "V": 250112, "H": 512, "L": 8, "A": 6, "F": 1024}, _V11,
           en="mT5-small (multilingual, gated-GELU, untied lm_head)",
           zh="mT5-small（多语言，门控 GELU，语言模型头不共享）", reference="MT5Model"),
)
