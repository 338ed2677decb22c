"""Memory in bytes, from the same Block tree: weights, gradients, optimizer state, activations, KV cache.

>>> from symparams import model
>>> cache_per_token(model("llama-3-8b").tree)
(2*G*H*L/A, 0)
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import Block, tree_fact
from ..core.compute import Attention


@tree_fact
def cache_per_token(tree: Block) -> tuple[sp.Expr, sp.Expr]:
    """Elements one token leaves in the cache: (self-attention, per token of context; cross-attention,
    per token of the encoder's input)."""
    own, cross = [], []
    for _, block, runs, _ in tree.runs():
        for item in block.computes:
            if isinstance(item, Attention) and item.cache != 0:
                (cross if item.cross else own).append(runs * item.cache)
    return sp.expand(sp.Add(*own)), sp.expand(sp.Add(*cross))
