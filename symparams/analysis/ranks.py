"""The memory of the most loaded rank of a parallel layout: weights, gradients, optimizer state, activations.

:mod:`.parallel` says which parameters each pipeline stage holds on one
rank; this module turns them into bytes with :mod:`.memory`'s conventions,
adds what the layout changes, and names the rank that holds the most:

* data parallelism over ``N`` ranks: ZeRO 1–3 divides the optimizer state,
  then the gradients, then the weights among the ranks that hold the same
  weights (``N·C`` of them under context parallelism; a routed expert's
  ``N·C/E``, Megatron's expert-data-parallel group).  Megatron's distributed
  optimizer divides the fp32 master copy and the moments the same way and
  keeps every gradient, in fp32 when training in bf16 (Megatron accumulates
  and all-reduces bf16 gradients in fp32: ``megatron/training/arguments.py``),
  so 6 + 12/N bytes a parameter, as Megatron's theoretical memory counts it;
* activations (Korthikanti et al. 2022 per layer, per tensor-parallel rank):
  context parallelism keeps the ``s·b·h`` terms of its ``s/C`` tokens and the
  attention scores of its ``s/C`` queries against all ``s`` keys; a pipeline
  stage keeps them for its layers times the micro-batches in flight: with
  1F1B, stage ``r`` (from 0) holds ``min(P − r, M)`` micro-batches, the first
  stage ``P``; with the interleaved schedule, ``min(2·(P − 1 − r) + (V − 1)·P
  + 1, M·V)`` model chunks of ``L/(P·V)`` layers (Megatron's warm-up
  micro-batches, plus the one in its steady state), which is Korthikanti et
  al.'s ``L·(1 + (P − 1)/(P·V))`` layers on the first stage.

>>> from symparams import model
>>> m = model("llama-3-8b", head="causal-lm")
>>> r = per_rank(m.memory("bf16", "adam", ranks=8, tensor_parallel=8, pipeline_parallel=4, distributed_optimizer=True))
>>> r.stage + 1, r.weights == 2 * r.parameters, r.gradients == 4 * r.parameters, r.optimizer == 12 * r.parameters // 8
(4, True, True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import sympy as sp

from ..core.algebra import closed_form
from ..core.compute import BATCH, SEQ
from ..core.errors import SymparamsError
from ..core.symbols import H
from .cache import self_attention_layers
from .dtypes import weight_bytes
from .memory import activation_bytes_per_layer
from .parallel import Layout, Share, Split, of_most_loaded
from .traced import require

PARTS = ("weights", "gradients", "optimizer", "activations", "kv_cache")


def in_flight_layers(layers: int, layout: Layout, stage: int):
    """The layers' worth of activations pipeline ``stage`` (from 0) keeps at its peak, of ``layers`` in all.

    >>> [int(in_flight_layers(32, Layout(pipeline=4), stage)) for stage in range(4)]
    [32, 24, 16, 8]
    >>> int(in_flight_layers(32, Layout(pipeline=4, micro_batches=2), 0))
    16
    >>> in_flight_layers(32, Layout(pipeline=4, virtual=2), 0) == 32 * (1 + Fraction(3, 8))
    True
    """
    p, v, m = layout.pipeline, layout.virtual, layout.micro_batches
    if v == 1:
        held, cap, chunk = p - stage, m, Fraction(layers, p)
    else:
        held, cap, chunk = 2 * (p - 1 - stage) + (v - 1) * p + 1, None if m is None else m * v, Fraction(layers, p * v)
    return (held if cap is None else min(held, cap)) * chunk


def layer_activations(s, b, h, a, layout: Layout, recompute: str):
    """One layer's activation bytes on one rank: Korthikanti et al.'s per tensor-parallel rank, its sequence
    divided among ``C`` context-parallel ranks (each keeps its ``s/C`` queries' scores against all ``s`` keys).

    >>> layer_activations(2048, 1, 12288, 96, Layout(tensor=8, sequence=True), "none") == \\
    ...     activation_bytes_per_layer(2048, 1, 12288, 96, 8, True)
    True
    """
    t, c, sequence = layout.tensor, layout.context, layout.sequence
    local = s / c if isinstance(s, sp.Basic) else Fraction(s, c)
    if recompute == "full":
        return activation_bytes_per_layer(local, b, h, a, t, sequence, "full")
    linear = activation_bytes_per_layer(local, b, h, a, t, sequence, "selective")
    if recompute == "selective":
        return linear
    scores = activation_bytes_per_layer(local, b, h, a, t, sequence, "none") - linear  # 5·a·(s/C)²·b/t
    return linear + scores * c


@dataclass(frozen=True)
class StageMemory:
    """One stage's bytes on its most loaded rank, each rounded up."""

    stage: int
    parameters: int
    layers: int
    weights: int
    gradients: int
    optimizer: int
    activations: int
    kv_cache: int = 0

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.optimizer + self.activations + self.kv_cache

    def to_dict(self) -> dict:
        return {"stage": self.stage, "parameters": self.parameters, "layers": self.layers,
                **{k: getattr(self, k) for k in PARTS}, "total": self.total}


def per_rank(mem) -> PerRank | None:
    """The most loaded rank of ``mem``'s parallel layout (a :class:`~.memory.Memory` made with ``tensor_parallel``,
    ``pipeline_parallel``, ...), or None when no option spreads the model over more than its data-parallel
    ranks (or FSDP's first rank, :mod:`.fsdp`, with ``fsdp``)."""
    if getattr(mem, "fsdp", None) is not None:
        from .fsdp import FsdpRank

        return FsdpRank(mem)
    return PerRank(mem) if mem.layout.splits else None


class PerRank:
    """The memory of every pipeline stage's first rank under ``mem``'s layout, and the most loaded of them."""

    def __init__(self, mem):
        self.mem, self.layout = mem, mem.layout
        self.split = Split(mem.model, mem.layout)
        if (self.layout.data * self.layout.context) % self.layout.expert:
            raise SymparamsError(f"the expert-parallel ranks E = {self.layout.expert} must divide the data-parallel "
                                 f"ranks N·C = {self.layout.data * self.layout.context} (Megatron takes them from "
                                 f"the data- and context-parallel ranks)")
        if mem.seq is not None and mem.seq % self.layout.context:
            raise SymparamsError(f"the context-parallel ranks C = {self.layout.context} must divide the sequence "
                                 f"length s = {mem.seq}")

    # -- bytes per parameter
    @property
    def gradient_bytes(self) -> int:
        mem = self.mem
        return 4 if self.layout.distributed_optimizer and mem.dtype == "bf16" else mem.gradient_bytes

    @property
    def sharers(self) -> tuple[int, int]:
        """(ranks sharing the dense parameters' partition, ranks sharing a routed expert's)."""
        group = self.layout.data * self.layout.context
        return group, group // self.layout.expert

    def _states(self, share: Share):
        """(weights, gradients, optimizer state) of a stage's share: numbers give Fractions, symbols expressions."""
        mem, (dense_group, expert_group) = self.mem, self.sharers
        partition = 1 if self.layout.distributed_optimizer else mem.zero
        expert = share.expert_trainable
        dense = share.trainable - expert

        def divided(per_parameter: int, stage: int):
            if partition < stage:
                return per_parameter * share.trainable
            return per_parameter * (_over(dense, dense_group) + _over(expert, expert_group))

        weights = weight_bytes(share.parameters, mem.dtype)
        if partition >= 3:  # every weight, trainable or not, as ZeRO-3 partitions them
            each = int(weight_bytes(1, mem.dtype))
            weights = each * (_over(share.parameters - expert, dense_group) + _over(expert, expert_group))
        return weights, divided(self.gradient_bytes, 2), divided(mem.optimizer_bytes, 1)

    # -- activations
    def _layers_total(self) -> int:
        return sum(runs for runs, _ in self.mem._sizes.layers)

    def activations(self, stage: int):
        """Stage ``stage``'s activation bytes (exact, unrounded): 0 serving, or without a sequence length."""
        mem = self.mem
        if mem.seq is None or not mem.training:
            return 0
        require(mem.model, "activations", what="the activations are")
        per_micro_batch = sum(runs * layer_activations(mem.seq, mem.batch, mem._sizes.hidden, heads, self.layout,
                                                       mem.recompute) for runs, heads in mem._sizes.layers)
        return per_micro_batch * self._held_share(stage)

    def kv_cache(self, stage: int) -> Fraction:
        """Serving, stage ``stage``'s KV cache on one rank (0 while training, or without a sequence length)."""
        mem = self.mem
        return Fraction(0) if mem.training or mem.seq is None else mem.kv_cache * self._cache_share()

    def _cache_share(self) -> Fraction:
        """The share of the KV cache one rank of a stage holds: its layers' (every stage holds L/P), each layer's
        key/value heads divided by ``T`` (refused where that is not known: a compressed latent, layers keeping
        different amounts)."""
        mem, layout = self.mem, self.layout
        cache = mem._cache._sizes
        if layout.tensor > 1 and "R_kv" in {str(x) for x in mem.model.tree.symbols}:
            raise SymparamsError(f"{mem.model.name}: how tensor-parallel ranks share a compressed key/value latent "
                                 f"is not known here: use --tensor-parallel 1")
        uneven = cache.windows and (len(cache.windows) > 1 or cache.windows[0][1] != cache.cache)
        if layout.pipeline > 1 and (uneven or cache.state or cache.cross_cache):
            raise SymparamsError(f"{mem.model.name}: its layers cache different amounts (sliding windows, states), "
                                 f"so its KV cache per pipeline stage is not known here")
        if layout.pipeline > 1:
            self._require_even_layers("KV cache")
        return Fraction(1, layout.pipeline * layout.tensor)

    def _require_even_layers(self, what: str) -> None:
        """With pipeline stages, every layer the pipeline splits must hold as much (one attention module, the
        same heads), so that a stage's share is its share of the layers."""
        layers = self.mem._sizes.layers
        if self._layers_total() != self.split.stack_layers or len({heads for _, heads in layers}) > 1:
            raise SymparamsError(f"{self.mem.model.name}: its layers are not all alike (attention outside the "
                                 f"layers the pipeline splits, or other heads), so its {what} per stage are not known")

    def _held_share(self, stage: int) -> Fraction:
        """The share of all layers' activations for one micro-batch that ``stage`` keeps at its peak."""
        layers = self._layers_total()
        if self.layout.pipeline == 1:
            return Fraction(1)
        self._require_even_layers("activations")
        return in_flight_layers(layers, self.layout, stage) / layers

    # -- the stages, and the most loaded
    @cached_property
    def stages(self) -> tuple[StageMemory, ...]:
        out = []
        for stage in self.split.stages:
            states = [math.ceil(Fraction(x)) for x in self._states(stage.share)]
            activations = math.ceil(Fraction(self.activations(stage.index)))
            out.append(StageMemory(stage.index, stage.parameters, stage.layers, *states, activations,
                                   math.ceil(self.kv_cache(stage.index))))
        return tuple(out)

    @cached_property
    def most_loaded(self) -> StageMemory:
        """The stage whose rank holds the most bytes (the first of equals)."""
        return max(self.stages, key=lambda s: (s.total, -s.stage))

    stage = of_most_loaded("stage")
    parameters = of_most_loaded("parameters")
    weights = of_most_loaded("weights")
    gradients = of_most_loaded("gradients")
    optimizer = of_most_loaded("optimizer")
    total = of_most_loaded("total")

    @property
    def rank(self) -> str:
        """The most loaded rank, named."""
        p, stage = self.layout.pipeline, self.stage
        where = ("" if p == 1 else
                 f"pipeline stage {stage + 1} of {p} ({_stage_role(stage, p)}), ")
        vocab = ", the first of the vocabulary's shards" if self.layout.tensor > 1 else ""
        alike = [f"{n} {what}" for n, what in ((self.layout.context, "context-parallel"),
                                               (self.layout.expert, "expert-parallel"),
                                               (self.layout.data, "data-parallel")) if n > 1]
        others = f" (any of its {', '.join(alike)} ranks: each holds as much)" if alike else ""
        return f"{where}tensor rank 1 of {self.layout.tensor}{vocab}{others}"

    # -- symbolic
    @cached_property
    def formulas(self) -> dict[str, sp.Expr]:
        """The most loaded rank's parts in the model's symbols, ``s`` and ``b`` (the layout's numbers in)."""
        share = self.split.share(self.stage)
        parts = dict(zip(("weights", "gradients", "optimizer"), self._states(share)))
        if self.mem.training and "activations" in self.mem.formulas:
            held = self._held_share(self.stage)
            parts["activations"] = sp.Rational(held.numerator, held.denominator) * sp.Add(*(
                runs * layer_activations(SEQ, BATCH, H, heads, self.layout, self.mem.recompute)
                for runs, heads in self_attention_layers(self.mem.model.tree)))
        if not self.mem.training and "kv_cache" in self.mem.formulas:
            share = self._cache_share()
            parts["kv_cache"] = sp.Rational(share.numerator, share.denominator) * self.mem.formulas["kv_cache"]
        parts["total"] = sp.Add(*parts.values())
        return {k: closed_form(sp.sympify(v)) for k, v in parts.items()}

    @property
    def conventions(self) -> list[str]:
        return layout_conventions(self)

    def to_dict(self) -> dict:
        best = self.most_loaded
        return {"rank": self.rank, "stage": best.stage, "layout": self.layout.to_dict(),
                "parameters": best.parameters, **{k: getattr(best, k) for k in PARTS}, "total": best.total,
                "stages": [s.to_dict() for s in self.stages],
                "formulas": {k: str(v) for k, v in self.formulas.items()}, "conventions": self.conventions}


def _over(part, ranks: int):
    return Fraction(part, ranks) if isinstance(part, int) else part / ranks


def _stage_role(stage: int, stages: int) -> str:
    if stage == 0:
        return "the first: the embeddings"
    return "the last: the head" if stage == stages - 1 else "a middle one"


def layout_conventions(per_rank: PerRank) -> list[str]:
    """The conventions of the per-rank figures, one sentence each."""
    layout, mem = per_rank.layout, per_rank.mem
    t, p, v = layout.tensor, layout.pipeline, layout.virtual
    out = [f"per rank: tensor parallel {t} as Megatron splits it (the query, key, value and MLP input projections "
           f"by their output features, the attention output and MLP output projections by their input features, "
           f"their biases whole; norms, position embeddings and routers on every rank; the word embedding and the "
           f"LM head by the vocabulary's rows, "
           + (f"padded to a multiple of {128 * t}, as Megatron pads them)" if layout.pad_vocabulary else
              "unpadded: the first rank holds ⌈V/T⌉)")]
    if p > 1:
        out.append(f"per rank: {p} pipeline stages of {per_rank.split.stack_layers // p} layers"
                   + (f" in {v} model chunks each (interleaved)" if v > 1 else "")
                   + "; the embeddings on the first stage, the final norm and head on the last (a tied head as a "
                     "copy of the word embedding, as Megatron keeps it)")
        held = ("stage r (from 0) holds P − r micro-batches in flight (1F1B), the first P" if v == 1 else
                "stage r (from 0) holds the interleaved schedule's 2·(P − 1 − r) + (V − 1)·P + 1 model chunks in "
                "flight")
        cap = "" if layout.micro_batches is None else f", at most the {layout.micro_batches} micro-batches"
        out.append(f"per rank: activations: {held}{cap}, each of --batch sequences")
    if layout.context > 1:
        out.append(f"per rank: context parallel {layout.context}: each rank keeps the activations of its s/C tokens "
                   f"and its queries' attention scores against all s keys; the weights whole")
    if layout.expert > 1:
        out.append(f"per rank: expert parallel {layout.expert}: each layer's routed experts divided among the "
                   f"ranks (each expert split by T as the MLP), their gradients and optimizer state partitioned "
                   f"among the N·C/E ranks holding the same experts")
    dense, _ = per_rank.sharers
    if layout.distributed_optimizer:
        out.append(f"per rank: Megatron's distributed optimizer: the fp32 master copy and moments divided among the "
                   f"{dense} ranks holding the same weights, every gradient kept, in {per_rank.gradient_bytes} bytes")
    elif mem.zero:
        out.append(f"per rank: ZeRO stage {mem.zero} among the {dense} ranks holding the same weights")
    return out
