"""Which activations tensor parallelism divides: Korthikanti et al.'s per-layer terms, each with its split.

Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
Models", section 4.1, count the bytes one GPT layer keeps for the backward pass
(16-bit activations, 1-byte dropout masks, ``s`` tokens, ``b`` sequences,
width ``h``, ``a`` heads) as a sum of tensors; section 4.2 says which of them
tensor parallelism over ``t`` ranks splits (those inside the attention and MLP
blocks) and which each rank keeps whole (the layer norms' inputs, the inputs of
the blocks' first matrices and the dropout masks after the blocks) until
sequence parallelism splits those along the sequence.  :data:`TERMS` lists
them; :func:`layer_bytes` adds them for a layout with ``t`` a symbol or a
number, so that the sum is the same expression as
:func:`~.memory.activation_bytes_per_layer`, which the ``memory`` command uses:

>>> from .memory import activation_bytes_per_layer
>>> s, b, h, a = sp.symbols("s b h a", positive=True)
>>> sp.expand(layer_bytes(s, b, h, a, 8, True) - activation_bytes_per_layer(s, b, h, a, 8, True))
0
>>> layer_bytes(s, b, h, a, TENSOR)
5*a*b*s**2/t + b*h*s*(10 + 24/t)
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..core.compute import Attention, costed
from ..core.symbols import H
from .law_shape import GATES, _width_in, _width_out, leaves

#: the ways a model's layers may differ from the GPT layer of the terms, in the order a document lists them
DEPARTURES = ("cross", "latent", "head_width", "kv_heads", "norms", "gated", "ffn_width", "experts")
#: the tensor-parallel ranks, as a symbol (a layout gives it a number)
TENSOR = sp.Symbol("t", positive=True, integer=True)


@dataclass(frozen=True)
class Term:
    """One tensor a layer keeps: bytes as ``linear·s·b·h + scores·a·s²·b``; ``split`` is ``"tensor"`` where tensor
    parallelism divides it, ``"sequence"`` where only sequence parallelism does."""

    key: str
    block: str  # "attention", "mlp" or "norms"
    linear: int
    scores: int
    split: str

    def bytes(self, s, b, h, a):
        return self.linear * s * b * h + self.scores * a * s**2 * b


#: Korthikanti et al. 2022, section 4.1 (the sizes) and 4.2 (the splits), in the order they list them
TERMS = (
    Term("qkv_input", "attention", 2, 0, "sequence"),
    Term("query_key", "attention", 4, 0, "tensor"),
    Term("softmax_output", "attention", 0, 2, "tensor"),
    Term("softmax_mask", "attention", 0, 1, "tensor"),
    Term("softmax_dropout_output", "attention", 0, 2, "tensor"),
    Term("values", "attention", 2, 0, "tensor"),
    Term("projection_input", "attention", 2, 0, "tensor"),
    Term("attention_mask", "attention", 1, 0, "sequence"),
    Term("mlp_input", "mlp", 2, 0, "sequence"),
    Term("activation_input", "mlp", 8, 0, "tensor"),
    Term("activation_output", "mlp", 8, 0, "tensor"),
    Term("mlp_mask", "mlp", 1, 0, "sequence"),
    Term("norm_inputs", "norms", 4, 0, "sequence"),
)


def divided(term: Term, sequence_parallel: bool) -> bool:
    """Whether ``term`` is split over the tensor-parallel ranks."""
    return term.split == "tensor" or sequence_parallel


def layer_bytes(s, b, h, a, t=TENSOR, sequence_parallel: bool = False):
    """One layer's activation bytes per tensor-parallel rank, written as Table 2 writes it: the ``s·b·h`` terms
    each rank keeps whole, plus those it keeps a ``1/t`` of, plus the attention scores' ``a·s²·b`` over ``t``."""
    whole = sum(term.linear for term in TERMS if not divided(term, sequence_parallel))
    split = sum(term.linear for term in TERMS if divided(term, sequence_parallel))
    scores = sum(term.scores for term in TERMS)  # all inside the attention block: always split
    t = sp.sympify(t)
    linear = s * b * h * (whole + split / t) if whole else split * s * b * h / t
    return linear + scores * a * s**2 * b / t


def departures(tree, evaluate) -> tuple[str, ...]:
    """How the layers of ``tree`` differ from the GPT layer the terms describe, each a key of
    :data:`DEPARTURES`; ``evaluate`` gives an expression's value at the model's values.  Empty: every
    self-attention layer has a GPT layer's widths, attention, norms and MLP."""
    tree = costed(tree)
    runs = list(tree.runs())
    found = set()
    layers = sp.Integer(0)
    for _, block, times, _ in runs:
        for item in (c for c in block.computes if isinstance(c, Attention)):
            found |= _attention_departures(item, evaluate)
            layers += 0 if item.cross else times
    widths = {leaf.title: _width_out(leaf) for _, leaf, _, _ in leaves(tree)
              if leaf.title in ("query", "key", "value")}
    if "query" in widths and any(evaluate(widths[k] - widths["query"]) for k in ("key", "value") if k in widths):
        found.add("kv_heads")
    for _, leaf, _, _ in leaves(tree):
        if leaf.title in GATES:
            found.add("gated")
        elif leaf.title == "expert_down":
            found.add("experts")
        elif leaf.title == "ffn_down" and evaluate(_width_in(leaf) - 4 * H):
            found.add("ffn_width")
    # the norms a layer runs (those that run once a pass are the embeddings' or the final one)
    norms = sp.Add(*(times for _, block, times, _ in runs if block.is_leaf and block.kind == "norm" and times != 1))
    if evaluate(norms - 2 * layers):
        found.add("norms")
    return tuple(key for key in DEPARTURES if key in found)


def _attention_departures(item: Attention, evaluate) -> set[str]:
    if item.cross:
        return {"cross"}
    if evaluate(item.key_width - item.value_width):
        return {"latent"}  # keys and values rebuilt from a compressed latent: neither is h wide
    found = set()
    if evaluate(item.heads * item.key_width - H):
        found.add("head_width")
    if evaluate(item.cache) and evaluate(item.cache - 2 * item.heads * item.key_width):
        found.add("kv_heads")  # fewer key/value heads than query heads
    return found
