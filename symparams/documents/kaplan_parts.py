"""Where Kaplan et al.'s forward estimate ``2N + 2·n_layer·s·d_attn`` and the exact FLOPs per token part ways.

Three things, each from the tree's own FLOP terms and counts:

* **attention**: the estimate counts one product over the ``s`` positions, ``QKᵀ``, in each self-attention
  layer; the model also multiplies the scores by the values, and a cross-attention does both;
* **weights**: ``2N`` multiplies every parameter outside the embedding tables, where the exact count multiplies
  the weight matrices only: a norm's scale and a bias multiply nothing, and an output layer tied to the
  embedding (a table, so outside ``N``) is multiplied all the same;
* **products**: products of activations that no weight matrix shows (a gate times its input).

:func:`kaplan_parts` returns them only when they add up to the difference exactly: a model whose difference has
another source (layers run more than once per token, a pooler run once per sequence) gets no such sentence.

>>> from symparams import model
>>> parts = kaplan_parts(model("t5-base"), 2048)
>>> parts.attention, parts.unmultiplied, parts.unmultiplied_kinds, parts.cross
(150994944, 95232, ('norms',), True)
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..analysis.flops import attention_width, flop_terms, laws, non_embedding
from ..core.compute import BATCH, SEQ, Attention
from ..core.model import Model


@dataclass(frozen=True)
class KaplanParts:
    """The exact FLOPs per token minus Kaplan's estimate, by where it comes from (at one sequence length)."""

    attention: int                 # attention's products beyond the estimate's QKᵀ term
    products: int                  # products of activations no weight matrix shows
    tied: int                      # 2 × the weights of output layers tied to a table: multiplied, outside N
    unmultiplied: int              # 2 × the parameters in N that no product multiplies
    unmultiplied_kinds: tuple      # "norms", "biases": which such parameters the model has
    cross: bool                    # the model has cross-attention


def kaplan_parts(m: Model, seq: int) -> KaplanParts | None:
    """The difference split as the module's docstring says, or None where these parts do not add up to it."""
    tree = m.tree
    per_token = {what: sp.Add(*(t.forward for t in flop_terms(tree) if t.what == what)) / (BATCH * SEQ)
                 for what in ("matmul", "attention", "product")}
    attention = per_token["attention"] - 2 * attention_width(tree) * SEQ
    unmultiplied, tied, kinds = sp.Integer(0), sp.Integer(0), set()
    for _, block, copies in tree.walk():
        if not block.is_leaf or block.kind == "embedding":
            continue
        if block.tied_to is not None:
            tied += copies * sp.Mul(*block.shape) if block.kind == "linear" else 0
            continue
        scales = sp.Add(*(n for _, n in block.params)) if block.kind in ("norm", "parameter") else 0
        biases = sp.Add(*(n for name, n in block.params if name == "bias")) if block.kind == "linear" else 0
        kinds.update(kind for kind, n in (("norms", scales), ("biases", biases)) if n != 0)
        unmultiplied += copies * (scales + biases)
    weights = per_token["matmul"] - 2 * non_embedding(tree)
    kaplan = next(law for law in laws(tree) if law.name == "kaplan_forward")
    parts = (attention, per_token["product"], 2 * tied, -2 * unmultiplied)
    if sp.expand(weights - 2 * tied + 2 * unmultiplied) != 0 or sp.expand(sum(parts) - kaplan.difference) != 0:
        return None
    at = {**m.values, SEQ: sp.Integer(seq), BATCH: sp.Integer(1)}
    values = [sp.expand(sp.sympify(p).xreplace(at)) for p in parts]
    if not all(v.is_Integer for v in values) or values[0] < 0:
        return None
    cross = any(isinstance(item, Attention) and item.cross for _, block, _ in tree.walk() for item in block.computes)
    return KaplanParts(int(values[0]), int(values[1]), int(values[2]), -int(values[3]),
                       tuple(kind for kind in ("norms", "biases") if kind in kinds), cross)
