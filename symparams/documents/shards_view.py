"""The section on which activations tensor parallelism divides: Korthikanti et al.'s terms, per rank, proven.

The per-layer terms and their splits are :mod:`~symparams.analysis.activation_shards`'s; the model's formula is
their sum over its self-attention layers (each with its own heads); the bytes are the ``memory`` command's
(:class:`~symparams.analysis.memory.Memory` and, for a split layout, :func:`~symparams.analysis.ranks.per_rank`),
and the formula is checked against the one the ``memory`` command evaluates before a document shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..analysis.activation_shards import TENSOR, TERMS, departures, divided, layer_bytes
from ..analysis.cache import self_attention_layers
from ..analysis.ranks import per_rank
from ..core.compute import BATCH, SEQ, traced
from ..core.errors import SymparamsError
from ..core.model import Model
from ..core.symbols import H
from .formulas import latex

#: the tensor-parallel ranks a document works its numbers out for, the first that the model's layout allows
TENSOR_CHOICES = (8, 4, 2)
#: Korthikanti et al.'s own letters for one layer's forms
_s, _b, _h, _a = sp.symbols("s b h a", positive=True)


@dataclass(frozen=True)
class ShardView:
    """The shards section of ``m``'s document: one sequence of ``seq`` tokens, 16-bit activations.

    ``activations`` holds the bytes one rank keeps over all layers, as the ``memory`` command gives them, for
    ``"none"`` (one GPU), ``"tensor"`` (t = ``tensor``) and ``"sequence"`` (t = ``tensor`` with sequence
    parallelism); ``whole`` is the part of the ``"tensor"`` figure that tensor parallelism leaves whole.
    """

    seq: int
    layers: int
    terms: tuple[dict, ...]       # key, block, bytes (LaTeX), split ("tensor" or "sequence")
    layer: str                    # one layer, no parallelism (LaTeX)
    layer_tensor: str             # per tensor-parallel rank (LaTeX, t a symbol)
    layer_sequence: str           # with sequence parallelism too
    model_tensor: str             # the model's activations per rank, t a symbol (LaTeX)
    departures: tuple[str, ...] | None  # None: an inferred type, whose layers are not read
    tensor: int | None            # None: the memory command splits no layout of TENSOR_CHOICES
    refusal: str                  # then its message for the last of them
    activations: dict
    whole: int


def shards_view(m: Model, seq: int) -> ShardView:
    """The shards section of ``m``'s document, for one sequence of ``seq`` tokens."""
    layers = by_heads(m.tree)
    layer_count = sp.Add(*(runs for runs, _ in layers))
    model_tensor = sp.Add(*(runs * layer_bytes(SEQ, BATCH, H, heads) for runs, heads in layers))
    tensor, refusal = _tensor_choice(m, seq)
    activations = {"none": m.memory("bf16", "adam", seq=seq).activations}
    whole = 0
    if tensor is not None:
        for key, sequence in (("tensor", False), ("sequence", True)):
            activations[key] = _checked(m, seq, tensor, sequence, model_tensor)
        # the s·b·h terms each rank keeps whole without sequence parallelism, over every layer (b = 1)
        kept = sum(term.linear for term in TERMS if not divided(term, False))
        whole = int(m.evaluate(layer_count * kept * H * seq))
    terms = tuple({"key": t.key, "block": t.block, "bytes": latex(t.bytes(_s, _b, _h, _a)), "split": t.split}
                  for t in TERMS)
    return ShardView(
        seq=seq, layers=int(m.evaluate(layer_count)), terms=terms,
        layer=latex(layer_bytes(_s, _b, _h, _a, 1)), layer_tensor=latex(layer_bytes(_s, _b, _h, _a)),
        layer_sequence=latex(layer_bytes(_s, _b, _h, _a, TENSOR, True)), model_tensor=latex(model_tensor),
        departures=None if traced(m.tree) else departures(m.tree, lambda e: m.evaluate(e) != 0), tensor=tensor, refusal=refusal,
        activations=activations, whole=whole)


def by_heads(tree) -> list[tuple[sp.Expr, sp.Expr]]:
    """``(runs, heads)`` of the self-attention layers, the runs of layers with the same heads added (DeepSeek's
    dense and mixture-of-experts layers: one ``L``)."""
    runs: dict = {}
    for times, heads in self_attention_layers(tree):
        runs[heads] = runs.get(heads, 0) + times
    return [(sp.expand(times), heads) for heads, times in runs.items()]


def _tensor_choice(m: Model, seq: int) -> tuple[int | None, str]:
    """The first t of :data:`TENSOR_CHOICES` that the ``memory`` command accepts for ``m`` (None, and the
    command's message for the last, where it accepts none)."""
    refusal = ""
    for t in TENSOR_CHOICES:
        try:
            per_rank(m.memory("bf16", "adam", seq=seq, tensor_parallel=t)).stages
        except SymparamsError as error:  # t does not divide the heads, or a module is not split as Megatron would
            refusal = str(error)
            continue
        return t, ""
    return None, refusal


def _checked(m: Model, seq: int, t: int, sequence: bool, model_tensor: sp.Expr) -> int:
    """The most loaded rank's activations as ``memory --tensor-parallel t`` gives them, after checking that its
    formula is the terms' sum at that t (the section's formula is then the command's)."""
    rank = per_rank(m.memory("bf16", "adam", seq=seq, tensor_parallel=t, sequence_parallel=sequence))
    ours = model_tensor if not sequence else sp.Add(*(
        runs * layer_bytes(SEQ, BATCH, H, heads, TENSOR, True) for runs, heads in by_heads(m.tree)))
    if sp.expand(ours.subs(TENSOR, t) - rank.formulas["activations"]) != 0:
        raise SymparamsError(f"{m.name}: the activation terms do not add up to the memory command's formula")
    return rank.most_loaded.activations
