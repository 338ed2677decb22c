"""The tensors a checkpoint stores, read off the Block tree: each parameter's shape and the part of the model it is.

A quantized format packs some tensors and keeps others (norms, embedding
tables, the output layer), so its bytes need more than the count: every
tensor's shape, its input (row) dimension, and what it is.  A linear layer's
weight is stored ``[out, in]`` (the tree writes ``(in, out)``), its bias
``[out]``; an embedding table ``[rows, width]``; an expert's tensor as the tree
holds it, ``[out, in]`` (the convention :mod:`.flops` multiplies by); a norm's
parameters are vectors.  Linear slices of one module (GPT-2's ``c_attn``, which
the tree splits into query, key and value) are stored as the one tensor they
are; a routed expert's fused ``gate_up`` tensor as its two halves, gate and up,
as the checkpoints of Mixtral and DeepSeek-V3 hold them (``pieces``).

The parts a quantization policy names (:data:`PARTS`):

* ``embeddings``: the token tables (indexed by the vocabulary);
* ``tables``: the other embedding tables (positions, token types, relative position buckets);
* ``output``: a 2-D weight outside the repeated layers (the LM head, a pooler,
  a classifier);
* ``routers``: a mixture-of-experts layer's router (one output per expert) and a shared expert's gate (one
  output);
* ``experts``: the routed experts' tensors;
* ``layers``: the other 2-D weights of the repeated layers;
* ``vectors``: every 1-D tensor (norms, biases), never quantized.

>>> from symparams import model
>>> [(t.path, t.shape, t.part) for t in stored_tensors(model("llama").tree)][:3]
[('embed_tokens.weight', (V, H), 'embeddings'), ('layers.*.input_layernorm.weight', (H,), 'vectors'), ('layers.*.self_attn.q_proj.weight', (H, H), 'layers')]
"""

from __future__ import annotations

from typing import NamedTuple

import sympy as sp

from ..core.algebra import evaluated
from ..core.blocks import ONE, Block, tree_fact, written_in_out
from ..core.errors import SymparamsError
from ..core.symbols import V, V_d
from ..families.inferred_tree import routed_experts

#: the parts of a model a quantization policy may keep unquantized (vectors are never quantized)
PARTS = ("embeddings", "tables", "output", "routers", "layers", "experts")


class Stored(NamedTuple):
    """One tensor as the checkpoint stores it: its path as ``named_parameters()`` prints it (a repeated layer's
    index as ``*``), ``copies`` of ``shape`` (the row, the input, last), each stored as ``pieces`` tensors split along
    the first dimension."""

    path: str
    shape: tuple
    copies: sp.Expr
    part: str
    pieces: int = 1

    @property
    def size(self) -> sp.Expr:
        return sp.expand(self.copies * sp.Mul(*self.shape))


@tree_fact
def stored_tensors(tree: Block) -> tuple[Stored, ...]:
    """Every tensor of ``tree`` as a checkpoint stores it (a tied block's tensor once, where it is owned)."""
    return tuple(_visit(tree, "", ONE, in_layers=False, experts=False, routers=()))


def _visit(block: Block, prefix: str, copies, in_layers: bool, experts: bool, routers: tuple):
    if block.tied_to is not None:
        return
    path = ".".join(p for p in (prefix, block.name if block.ref is None else block.ref) if p)
    copies = copies * block.repeat
    in_layers = in_layers or block.repeat != 1 or block.calls != 1
    experts = experts or _routed(block)
    if block.is_leaf:
        yield from _leaf(block, path, copies, _part(block, in_layers, experts, routers))
        return
    # a router gives one logit per expert: a 2-D weight beside the experts, as wide as they are many
    routers = routers + tuple(c.repeat for c in block.children if _routed(c))
    slices = [c for c in block.children if c.is_leaf and c.kind == "linear" and c.ref == "" and c.tied_to is None]
    if len(slices) > 1:
        yield from _fused(slices, path, copies, _part(slices[0], in_layers, experts, routers))
    for child in block.children:
        if child not in slices or len(slices) == 1:
            yield from _visit(child, path, copies, in_layers, experts, routers)


def _routed(block: Block) -> bool:
    """Routed experts: copies of which a token uses some (a shared expert, which every token uses, is not one)."""
    return block.used is not None or (routed_experts(block.name) and block.repeat != 1)


def _part(block: Block, in_layers: bool, experts: bool, routers: tuple) -> str:
    """The part of the model a leaf's 2-D weight is (vectors are told apart by their shape)."""
    if block.kind == "embedding":
        rows = _dim(block.shape[0]) if block.shape else None
        return "embeddings" if rows is not None and rows.free_symbols & {V, V_d} else "tables"
    if experts:
        return "experts"
    outputs = _dim(block.shape[-1]) if block.kind == "linear" and block.shape else \
        _dim(block.shape[0]) if block.shape else None
    # a router: one output per expert, or a shared expert's gate, one output (llama.cpp's ffn_gate_inp_shexp)
    if outputs is not None and routers and (outputs == 1 or any(sp.expand(outputs - n) == 0 for n in routers)):
        return "routers"
    return "layers" if in_layers else "output"


def _dim(dim) -> sp.Expr:
    """A dimension as a count (an as-written ``A·(H/A)`` is ``H``)."""
    return evaluated(sp.sympify(dim))


def _leaf(block: Block, path: str, copies, part: str):
    dims = tuple(_dim(d) for d in block.shape)
    for pname, size in block.params:
        if size == 0:  # a table of a field at 0: nothing stored
            continue
        shape, instances = _shape(block, pname, size, dims, path)
        pieces = 2 if part == "experts" and "gate_up" in block.name and _even(shape[0]) else 1
        yield Stored(".".join(p for p in (path, pname) if p), shape, sp.expand(copies * instances),
                     "vectors" if len(shape) == 1 else part, pieces)


def _shape(block: Block, pname: str, size, dims: tuple, path: str) -> tuple[tuple, sp.Expr]:
    """A parameter's shape as stored and how many of it one copy of the block holds (an inferred module's
    parameter may stand for several), from its block's shape and kind; refused where the tree does not say it."""
    if block.kind in ("norm", "parameter"):
        return (size,), sp.Integer(1)
    bias = pname.endswith("bias")  # PyTorch's biases are vectors
    if written_in_out(block) and len(dims) == 2:
        n_in, n_out = dims
        candidates = [(n_out,)] if bias else [(n_out, n_in), (n_out,)]
    else:
        candidates = [dims, (size,)] if bias else [dims]
    for shape in candidates:
        instances = sp.cancel(size / sp.Mul(*shape)) if shape else None
        if instances is not None and instances != 0 and sp.fraction(instances)[1] == 1:
            return shape, instances
    raise SymparamsError(f"the tree does not hold the shape of {path}.{pname}, so its stored bytes are not known")


def _even(dim) -> bool:
    half = sp.expand(dim / 2)
    return all(c.is_Integer for c in sp.Poly(half).coeffs()) if half.free_symbols else half.is_Integer


def _fused(slices: list, path: str, copies, part: str):
    """Linear slices of one module (query, key, value of GPT-2's ``c_attn``): one weight, one bias."""
    n_in = _dim(slices[0].shape[0])
    n_out = sp.expand(sp.Add(*(_dim(s.shape[1]) for s in slices)))
    yield Stored(f"{path}.weight", (n_out, n_in), copies, part)
    if any(pname == "bias" for s in slices for pname, _ in s.params):
        yield Stored(f"{path}.bias", (n_out,), copies, "vectors")
