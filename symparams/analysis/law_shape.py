"""What a published formula reads from a model's config, read off the Block tree: the layers, widths and heads.

The formulas of Megatron-LM, nanoGPT, torchtitan, MaxText, Narayanan et al. and
Hoffmann et al. take a GPT-style decoder's config (``num_layers``,
``hidden_size``, ``num_attention_heads``...).  :func:`read_shape` finds each of
those quantities in the tree, as a SymPy expression in the model's symbols, or
refuses with the reason the model is not the kind of model the formulas
describe (an encoder, an encoder-decoder, no language-model head, layers that
differ, latent attention, shared experts), so that no law is set beside a
model it does not describe.

>>> from symparams import model
>>> shape = read_shape(model("llama-3-8b", head="causal-lm").tree)
>>> shape.layers, shape.hidden, shape.heads, shape.kv_heads, shape.head_dim, shape.ffn, shape.gated
(L, H, A, G, H/A, F, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import sympy as sp

from ..core.blocks import Block, tree_fact, written_in_out
from ..core.compute import Attention, costed, traced
from ..core.errors import SymparamsError

#: the leaves of a gated FFN's gate (separate or fused with the up projection)
GATES = ("ffn_gate", "ffn_gate_up", "expert_gate", "expert_gate_up")
#: the leaf each FFN ends in: its input width is the FFN's width
DOWNS = ("ffn_down", "expert_down")


class NotDescribed(SymparamsError):
    """The model is not of the kind a law's source describes (the reason is the message)."""


@dataclass(frozen=True)
class Shape:
    """A decoder-only language model as a GPT-style config describes it (every field a SymPy expression).

    ``ffn`` is each layer's FFN width (an expert's, in a mixture of experts);
    ``experts`` and ``top_k`` are None for a dense model.
    """

    layers: sp.Expr
    hidden: sp.Expr
    vocab: sp.Expr
    heads: sp.Expr
    kv_heads: sp.Expr
    head_dim: sp.Expr
    ffn: sp.Expr
    gated: bool
    tied: bool
    norm_params: int  # 1 for an RMSNorm, 2 for a LayerNorm (scale and shift)
    experts: sp.Expr | None = None
    top_k: sp.Expr | None = None

    @property
    def moe(self) -> bool:
        return self.experts is not None


def leaves(tree: Block) -> Iterator[tuple[str, Block, sp.Expr, sp.Expr]]:
    """``(path, leaf, copies, used)``: each leaf with the copies the model holds and the copies one token uses
    (a routed expert's top-k)."""
    def visit(block: Block, prefix: str, copies: sp.Expr, used: sp.Expr):
        path = f"{prefix}.{block.name}" if prefix else block.name
        copies, used = copies * block.repeat, used * block.copies_used
        if block.is_leaf:
            yield path, block, copies, used
        for child in block.children:
            yield from visit(child, path, copies, used)

    yield from visit(tree, "", sp.Integer(1), sp.Integer(1))


def _one(found: list, what: str):
    if len(found) != 1:
        raise NotDescribed(f"{'no' if not found else 'more than one'} {what}")
    return found[0]


def _attention(tree: Block) -> tuple[sp.Expr, Attention]:
    items = [(runs, item) for _, block, runs, _ in tree.runs() for item in block.computes
             if isinstance(item, Attention)]
    if not items:
        raise NotDescribed("no attention modules")
    if any(item.cross or not item.causal for _, item in items):
        raise NotDescribed("not a decoder-only causal language model (the laws describe GPT-style decoders)")
    kinds = {(item.heads, item.key_width, item.value_width, item.cache) for _, item in items}
    if len(kinds) != 1:
        raise NotDescribed("its layers' attention modules differ (one config describes every layer)")
    return sp.Add(*(runs for runs, _ in items)), items[0][1]


def _width_in(block: Block) -> sp.Expr:
    """The input width of a projection: a linear map's shape is (in, out), another tensor's [out, in]."""
    return sp.sympify(block.shape[0] if written_in_out(block) else block.shape[-1]).doit()


def _width_out(block: Block) -> sp.Expr:
    return sp.sympify(block.shape[-1] if written_in_out(block) else block.shape[0]).doit()


def _read(tree: Block) -> Shape:
    if traced(tree):
        raise NotDescribed("an inferred type, whose tree does not name the layers and widths the laws read")
    tree = costed(tree)
    if any(block.title in ("shared_expert", "shared_experts") for _, block, _ in tree.walk()):
        raise NotDescribed("shared experts (not read into the laws' configs here)")
    layers, attention = _attention(tree)
    if sp.expand(attention.key_width - attention.value_width) != 0:
        raise NotDescribed("keys and values of different widths (latent attention)")
    kv_heads = sp.cancel(attention.cache / (attention.key_width + attention.value_width))
    all_leaves = list(leaves(tree))
    titled = {title: [entry for entry in all_leaves if entry[1].title == title]
              for title in ("token_embedding", "output_projection", "final_norm", *DOWNS)}
    token = _one(titled["token_embedding"], "token embedding")[1]
    head = _one(titled["output_projection"], "language-model head (the laws count its logits)")[1]
    if titled["ffn_down"] and titled["expert_down"]:
        raise NotDescribed("dense and mixture-of-experts layers mixed")
    _, down_leaf, _, down_used = _one(titled["expert_down"] or titled["ffn_down"], "feed-forward block")
    experts = top_k = None
    if titled["expert_down"]:
        routed = _one([block for _, block, _ in tree.walk() if block.used is not None], "set of routed experts")
        experts, top_k = routed.repeat, routed.used
    if sp.expand(down_used - layers * (top_k or 1)) != 0:
        raise NotDescribed("its layers' feed-forward blocks differ (one config describes every layer)")
    if sp.expand(_width_out(down_leaf) - token.shape[1]) != 0:
        raise NotDescribed("its layers are wider or narrower than its embeddings (a projection between them)")
    final_norm = titled["final_norm"][0][1] if titled["final_norm"] else None
    return Shape(layers=layers, hidden=token.shape[1], vocab=token.shape[0], heads=attention.heads,
                 kv_heads=kv_heads, head_dim=attention.key_width, ffn=_width_in(down_leaf),
                 gated=any(entry[1].title in GATES for entry in all_leaves), tied=head.tied_to is not None,
                 norm_params=len(final_norm.params) if final_norm is not None else 2,
                 experts=experts, top_k=top_k)


@tree_fact
def _shape_or_reason(tree: Block) -> Shape | str:
    try:
        return _read(tree)
    except NotDescribed as reason:
        return str(reason)


def read_shape(tree: Block) -> Shape:
    """The config a GPT-style law reads, from ``tree``; :class:`NotDescribed` (naming why) where the model is
    not a decoder-only language model of uniform layers."""
    found = _shape_or_reason(tree)
    if isinstance(found, str):
        raise NotDescribed(found)
    return found
