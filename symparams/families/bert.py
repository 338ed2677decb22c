"""BERT, as ``bert-parameter-count.zh.txt`` walks through it.

Embeddings → encoder layer × L → pooler, then an optional task head, each
named as in ``transformers``' ``BertModel`` so counts compare module by
module.

>>> from symparams.families.bert import FAMILY
>>> tree = FAMILY.build(FAMILY.resolve({}, None), None)
>>> [c.name for c in tree.children]
['embeddings', 'encoder', 'pooler']
>>> tree.find("encoder.layer").repeat
L
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..core.blocks import (
    embedding,
    group,
    layer_norm,
    linear,
    parameter,
    per_head_linear,
    product_as_written,
    sum_as_written,
)
from ..core.compute import Attention
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Switch
from ..core.symbols import A, C, H, L, P, S, V, r

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("BertModel", None),
    "sequence-classification": ("BertForSequenceClassification", "bert."),
    "token-classification": ("BertForTokenClassification", "bert."),
    "question-answering": ("BertForQuestionAnswering", "bert."),
    "masked-lm": ("BertForMaskedLM", "bert."),
    "causal-lm": ("BertLMHeadModel", "bert."),
    "pretraining": ("BertForPreTraining", "bert."),
    "multiple-choice": ("BertForMultipleChoice", "bert."),
    "next-sentence": ("BertForNextSentencePrediction", "bert."),
}

#: heads and whether transformers builds them on a BertModel with a pooler
HEADS = {
    "sequence-classification": True,
    "token-classification": False,
    "question-answering": False,
    "masked-lm": False,
    "causal-lm": False,
    "pretraining": True,
    "multiple-choice": True,
    "next-sentence": True,
}

#: the heads whose decoder is the word embedding matrix (``cls.predictions``)
LM_HEADS = ("masked-lm", "causal-lm", "pretraining")


def embeddings():
    return group("embeddings", [
        embedding("word_embeddings", V, H),
        embedding("position_embeddings", P, H),
        embedding("token_type_embeddings", S, H),
        layer_norm("LayerNorm", H),
    ], written=sum_as_written(product_as_written(sum_as_written(V, P, S), H), product_as_written(2, H)))


def self_attention(decoder=False):
    """``attention.self``: Q, K and V, each written per head, ``A·(H·(H/A) + H/A)``.

    Eager attention multiplies ``Q·Kᵀ`` and ``softmax(·)·V`` over all A heads, H/A wide.  As a decoder
    (``is_decoder``, the causal-lm head) the mask is causal and each layer caches its keys and values,
    A·(H/A) each: 2·H elements per token per layer.
    """
    cache = 2 * A * (H / A) if decoder else 0
    return group("self", [per_head_linear(n, H, A, H / A) for n in ("query", "key", "value")],
                 title="qkv_projections", computes=(Attention(A, H / A, H / A, cache=cache, causal=decoder),))


def ffn(inter):
    """``intermediate`` (H → inter) and ``output`` (inter → H, Add & LayerNorm)."""
    return [group("intermediate", [linear("dense", H, inter, title="ffn_up")], title="ffn_up"),
            group("output", [linear("dense", inter, H, title="ffn_down"), layer_norm("LayerNorm", H)],
                  title="ffn_down_norm")]


def encoder_layer(inter, attention_self=None, decoder=False):
    """One Transformer encoder layer: attention + Add&Norm, FFN + Add&Norm.

    ``attention_self`` replaces BERT's ``attention.self`` (DeBERTa's
    disentangled attention sits where BERT's does); ``decoder``: the layer
    of a causal LM (``is_decoder``), its self-attention causal and cached.
    """
    return group("layer", [
        group("attention", [
            attention_self or self_attention(decoder),
            group("output", [linear("dense", H, H, title="attention_output"),
                             layer_norm("LayerNorm", H)], title="attention_output_norm"),
        ]),
        *ffn(inter),
    ], repeat=L, ref="layer.*", title="encoder_layer", steps=ARTICLE_STEPS)


#: the encoder layer as the articles count it: multi-head attention with W^O, Add & Norm, both feed-forward
#: layers, Add & Norm (transformers splits it as attention / intermediate / output)
ARTICLE_STEPS = (
    ("attention_sublayer", ("attention.self", "attention.output.dense")),
    ("add_norm", ("attention.output.LayerNorm",)),
    ("ffn_sublayer", ("intermediate.dense", "output.dense")),
    ("add_norm", ("output.LayerNorm",)),
)


def heads(head):
    """The task head as transformers builds it (names as in ``BertFor*``)."""
    if head == "sequence-classification":  # on the pooled first token
        return linear("classifier", H, C, title="classifier", per_sequence=True)
    if head == "token-classification":
        return linear("classifier", H, C, title="classifier")
    if head == "question-answering":  # start and end logits: transformers sizes it by num_labels (2)
        return linear("qa_outputs", H, C, title="qa_outputs")
    if head == "multiple-choice":  # one score per choice; transformers flattens [batch, choices, s] to
        # [batch·choices, s]: for the FLOPs, b is the number of sequences, batch·choices
        return linear("classifier", H, 1, title="classifier", per_sequence=True)
    if head == "next-sentence":
        return group("cls", [linear("seq_relationship", H, 2, title="nsp_head", per_sequence=True)], title="nsp_head")
    if head in LM_HEADS:  # BertForMaskedLM, BertLMHeadModel, BertForPreTraining
        mlm = group("predictions", [
            parameter("bias", V, title="decoder_bias"),
            group("transform", [linear("dense", H, H, title="mlm_transform"), layer_norm("LayerNorm", H)],
                  title="mlm_transform"),
            linear("decoder", H, V, bias=False, tied_to="embeddings.word_embeddings", title="mlm_decoder"),
        ], title="mlm_head")
        nsp = linear("seq_relationship", H, 2, title="nsp_head", per_sequence=True) if head == "pretraining" else None
        return group("cls", [mlm, nsp], title="pretraining_heads" if nsp else "mlm_head")
    return None


def base_model(switches, decoder=False):
    """Embeddings, the encoder and (with ``pooler``) the pooler on the first token; ``decoder``: the
    encoder's layers are a causal LM's (``is_decoder``: transformers builds it so for the causal-lm heads)."""
    tree = [embeddings(), group("encoder", [encoder_layer(product_as_written(r, H), decoder=decoder)])]
    if switches["pooler"]:
        tree.append(group("pooler", [linear("dense", H, H, title="pooler")], per_sequence=True))
    return tree


def build(switches, head):
    tree = base_model(switches, decoder=head == "causal-lm")
    task = heads(head)
    if task is not None:
        tree.append(group("head", [task], ref="", title="task_head"))
    return group("bert", tree, ref="")


def _resolve(switches, head):
    if switches["pooler"] is None:
        switches["pooler"] = HEADS.get(head, True)
    return switches


def from_config(cfg):
    """Values from a ``BertConfig`` (defaults: bert-base-uncased, as transformers has them)."""
    hidden = cfg.int("hidden_size", default=768)
    values = dict(V=cfg.int("vocab_size", default=30522), P=cfg.int("max_position_embeddings", default=512),
                  S=cfg.int("type_vocab_size", default=2), H=hidden,
                  L=cfg.int("num_hidden_layers", default=12), A=cfg.int("num_attention_heads", default=12),
                  r=Fraction(cfg.int("intermediate_size", default=3072), hidden), C=cfg.labels())
    cfg.refuse("add_cross_attention", True, default=False, family="bert", what="cross-attention in every layer")
    if cfg.head in LM_HEADS:
        cfg.refuse("tie_word_embeddings", False, default=True, family="bert",
                   what="an untied masked-LM decoder, with its own weight and bias")
    return values, {}


FAMILY = Family(
    name="bert",
    title={"en": "BERT", "zh": "BERT"},
    build=build,
    switches=(
        Switch("pooler", None, en="the pooler (a dense layer on [CLS])", zh="池化层（[CLS] 上的全连接层）"),
    ),
    heads=tuple(HEADS),
    constraints=(
        HEAD_DIM,
        FFN_SIZE,
    ),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "encoder", "pooler"),
    resolve_switches=_resolve,
    config_types=("bert",),
    from_config=from_config,
)
