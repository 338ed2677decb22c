"""Pieces the BERT-like encoders (RoBERTa, DistilBERT, ELECTRA, ALBERT) share.

The module's name starts with ``_``, so the family discovery skips it.  What
is here is built the same way by transformers in at least two of these
families; what BERT already has is imported from :mod:`.bert` instead.

>>> from symparams.core.symbols import E
>>> embeddings(E).as_written
E*(P + S + V) + 2*E
>>> [b.name for b in lm_decoder(E, tie=True)], lm_decoder(E, tie=True)[1].count
(['bias', 'decoder'], 0)
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
from ..core.family import Constraint, Switch
from ..core.symbols import A, C, E, H, P, S, V

#: where the word embeddings sit in every one of these base models
WORD = "embeddings.word_embeddings"

TIE = Switch("tie", True,
             en="the LM head's decoder weight is the word embedding matrix (tie_word_embeddings)",
             zh="语言模型头的解码矩阵与词嵌入矩阵共享（tie_word_embeddings）")

#: ELECTRA's ``embeddings_project`` exists only when E ≠ H; a model that has
#: it must not be given E = H (transformers would build no projection).
#: As a Constraint: 1 when E ≠ H, 0 (not a positive whole number) when E = H.
PROJECTION = Constraint(
    sp.Piecewise((sp.Integer(1), sp.Ne(E, H)), (sp.Integer(0), True)),
    "E={E} equals H={H}: transformers builds no embeddings_project then (use project=false)",
    (r"E \neq H", "E differs from H: only then is there a projection E→H",
     "E 不等于 H：只有这时才有 E→H 的投影层"))


def embeddings(dim, *, segments=True, positions_title=None):
    """Word, position (and token-type) tables of width ``dim``, then LayerNorm."""
    rows = (V, P, S) if segments else (V, P)
    names = ("word_embeddings", "position_embeddings", "token_type_embeddings")
    titles = (None, positions_title, None)
    tables = [embedding(n, k, dim, title=t) for n, k, t in zip(names, rows, titles)]
    return group("embeddings", [*tables, layer_norm("LayerNorm", dim)],
                 written=sum_as_written(product_as_written(sum_as_written(*rows), dim), product_as_written(2, dim)))


def attention(name, q, k, v, out, *extra):
    """Q, K, V written per head (``A·(H·(H/A) + H/A)``), the output map H·H + H, then ``extra``; eager
    attention's ``Q·Kᵀ`` and ``softmax(·)·V`` over A heads H/A wide (an encoder: nothing cached)."""
    return group(name, [*(per_head_linear(n, H, A, H / A) for n in (q, k, v)),
                        linear(out, H, H, title="attention_output"), *extra], title="multi_head_attention",
                 computes=(Attention(A, H / A, H / A),))


def classification_head():
    """RoBERTa's and ELECTRA's ``ClassificationHead``: dense H·H + H, out_proj H·C + C, on the first token
    only (``features[:, 0, :]``)."""
    return group("classifier", [linear("dense", H, H, title="classifier_dense"),
                                linear("out_proj", H, C, title="classifier")], title="classification_head",
                 per_sequence=True)


def qa_outputs():
    """Start/end logits; transformers sizes the map by ``num_labels`` (C, 2 by default)."""
    return linear("qa_outputs", H, C, title="qa_outputs")


def lm_decoder(n_in, tie):
    """A head-level bias V, and the decoder ``Linear(n_in, V)`` (RoBERTa ``lm_head``, ALBERT ``predictions``).

    Tied (``tie_word_embeddings``): the decoder's weight is the word
    embedding matrix and its bias is the head's bias, so it adds nothing.
    Untied: the decoder has its own weight *and* its own bias (transformers
    ties the two biases only together with the weights).
    """
    return [parameter("bias", V, title="decoder_bias"),
            linear("decoder", n_in, V, tied_to=WORD if tie else None, title="mlm_decoder")]


def vocab_projection(name, n_in, tie):
    """``Linear(n_in, V)`` whose weight alone may be tied (DistilBERT, ELECTRA's generator)."""
    if not tie:
        return linear(name, n_in, V, title="mlm_decoder")
    return group(name, [linear("weight", n_in, V, bias=False, tied_to=WORD, title="mlm_decoder"),
                        parameter("bias", V, title="decoder_bias")], title="mlm_decoder")


def with_head(parts):
    """The task head group (``None`` for the base model)."""
    parts = [p for p in parts if p is not None]
    return group("head", parts, ref="", title="task_head") if parts else None


def pooler_default(table):
    """A ``resolve_switches`` hook: ``pooler`` unset takes the head's default from ``table``."""
    def resolve(switches, head):
        if switches["pooler"] is None:
            switches["pooler"] = table.get(head, True)
        return switches
    return resolve


def read_sizes(cfg, defaults, keys=None):
    """Values from a config: ``defaults`` maps a symbol name (and ``inter``) to its default.

    ``keys`` maps the same names to the config keys that hold them (the
    BERT-style keys unless given); ``inter`` (the intermediate size) becomes
    ``r = inter / H``; ``C`` is ``num_labels`` or the size of ``id2label``.
    """
    keys = {**BERT_KEYS, **(keys or {})}
    values = {name: cfg.int(*keys[name], default=d) for name, d in defaults.items()}
    values["r"] = Fraction(values.pop("inter"), values["H"])
    values["C"] = cfg.labels()
    return values


BERT_KEYS = {
    "V": ("vocab_size",), "P": ("max_position_embeddings",), "S": ("type_vocab_size",),
    "E": ("embedding_size",), "H": ("hidden_size",), "L": ("num_hidden_layers",),
    "A": ("num_attention_heads",), "inter": ("intermediate_size",),
}
