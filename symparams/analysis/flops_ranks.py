"""The FLOPs of the most loaded rank of a parallel layout, from the same terms as :class:`~.flops.Flops`.

Each FLOP term (a weight's product, a module's attention) is placed as
:mod:`.parallel` places its weights, for one micro-batch of ``b`` sequences:

* tensor parallelism divides a column- or row-parallel layer's products by
  ``T``, the LM head's by its share of the vocabulary's rows (⌈V/T⌉/V, or
  the padded rows), attention's by ``T`` (each rank runs ``A/T`` heads); a
  replicated layer (a router, BERT's pooler) runs whole on every rank;
  sequence parallelism moves no product;
* a pipeline stage runs its ``L/P`` layers (in ``V`` chunks or not), the first
  stage what comes before the stack, the last what comes after (the head);
* context parallelism divides every product by ``C``: each rank multiplies its
  ``s/C`` tokens by the weights and its ``s/C`` queries against all ``s``
  keys;
* expert parallelism changes nothing per rank under balanced routing: the
  ``E`` ranks' tokens are dispatched among them, each running as many
  expert products as its own tokens would (the convention; the real split
  follows the router);
* data parallelism changes nothing per micro-batch.

>>> from symparams import model
>>> f = model("llama-3-8b", head="causal-lm").flops(2048, tensor_parallel=8, pipeline_parallel=4)
>>> head = 2 * 2048 * 4096 * 128256  # the LM head's product: the last stage runs it, an eighth on each rank
>>> f.per_rank.forward == ((f.forward - head) // 4 + head) // 8
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import sympy as sp

from ..core.errors import SymparamsError
from ..core.values import parse_whole
from .parallel import LAYOUT_OPTIONS, Layout, Split, of_most_loaded, parse_bool, parse_layout

#: the keyword options of :class:`~.flops.Flops` that set a layout (no optimizer, no data-parallel ranks)
FLOPS_LAYOUT = ("tensor_parallel", "sequence_parallel") + tuple(
    k for k in LAYOUT_OPTIONS if k not in ("distributed_optimizer", "micro_batches"))


def parse_flops_layout(options: dict) -> Layout:
    """The layout from :class:`~.flops.Flops`'s keyword options."""
    unknown = sorted(set(options) - set(FLOPS_LAYOUT))
    if unknown:
        raise SymparamsError(f"unknown FLOPs option {unknown[0]!r}: the options are {', '.join(FLOPS_LAYOUT)}")
    tensor = parse_whole("the tensor-parallel ranks t", options.get("tensor_parallel", 1))
    sequence = parse_bool(options.get("sequence_parallel", False), "sequence_parallel")
    rest = {k: v for k, v in options.items() if k in LAYOUT_OPTIONS}
    return parse_layout(rest, tensor, sequence, 1, 0)


@dataclass(frozen=True)
class StageFlops:
    """One stage's FLOPs on one of its ranks, for one micro-batch."""

    stage: int
    forward: int
    backward: int
    training: int

    def to_dict(self) -> dict:
        return {"stage": self.stage, "forward": self.forward, "backward": self.backward, "training": self.training}


class FlopsPerRank:
    """The FLOPs of each pipeline stage's rank under ``flops``'s layout, and the most loaded of them."""

    def __init__(self, flops, layout: Layout):
        self.flops, self.layout = flops, layout
        if flops.traced:
            raise SymparamsError(f"{flops.model.name}: its FLOPs are traced products with no module names Megatron "
                                 f"splits by: per-rank FLOPs are for the hand-written families")
        if flops.elementwise:
            raise SymparamsError("--elementwise with a parallel layout is not counted per rank (norms are split "
                                 "by sequence parallelism, the rest is not): leave one out")
        if layout.context > 1 and flops.causal:
            raise SymparamsError("--causal with context parallelism: how the causal half falls among the C ranks "
                                 "depends on the load balancing; leave one out")
        if flops.seq % layout.context:
            raise SymparamsError(f"the context-parallel ranks C = {layout.context} must divide the sequence length "
                                 f"s = {flops.seq}")
        self.split = Split(flops.model, layout)

    def _share(self, term, stage: int):
        """The factor of ``term`` that ``stage``'s rank runs (0 where another stage runs it)."""
        region, tensor_share = self.split.places[term.path]
        last = self.layout.pipeline - 1
        if region == "before" and stage != 0 or region == "after" and stage != last:
            return 0
        pipeline = self.split.layer_share(region, stage)
        if term.what == "attention":
            tensor_share = sp.Rational(1, self.layout.tensor)
        elif term.what != "matmul":
            raise SymparamsError(f"{self.flops.model.name}: the products of {term.path} are not placed per rank")
        return pipeline * tensor_share / self.layout.context

    def _stage(self, stage: int) -> StageFlops:
        exact = self.flops._exact
        forward = backward = again = 0
        for term in self.flops.terms:
            share = self._share(term, stage)
            if share:
                forward += exact(term.forward * share)
                backward += exact(term.backward * share)
                again += exact(term.forward * share) if term.recomputed and self.flops.recompute else 0
        training = forward + backward + again
        return StageFlops(stage, forward, backward, training)

    @cached_property
    def stages(self) -> tuple[StageFlops, ...]:
        last, computed = self.layout.pipeline - 1, {}

        def stage(index: int) -> StageFlops:
            like = index if index in (0, last) else 1  # the middle stages run the same
            if like not in computed:
                computed[like] = self._stage(like)
            return replace(computed[like], stage=index)

        return tuple(stage(i) for i in range(last + 1))

    @cached_property
    def most_loaded(self) -> StageFlops:
        return max(self.stages, key=lambda s: (s.training, -s.stage))

    forward = of_most_loaded("forward")
    training = of_most_loaded("training")

    @property
    def rank(self) -> str:
        p, stage = self.layout.pipeline, self.most_loaded.stage
        where = "" if p == 1 else f"pipeline stage {stage + 1} of {p}, "
        return f"{where}tensor rank 1 of {self.layout.tensor}"

    @property
    def conventions(self) -> list[str]:
        out = [f"per rank: one micro-batch of {self.flops.batch} sequence(s); tensor parallel {self.layout.tensor} "
               f"divides the column- and row-parallel products and attention's heads, the LM head by its share of "
               f"the vocabulary's rows; routers and poolers run whole"]
        if self.layout.pipeline > 1:
            out.append(f"per rank: each of {self.layout.pipeline} stages runs its layers, the first the embeddings, "
                       f"the last the head")
        if self.layout.context > 1:
            out.append(f"per rank: context parallel {self.layout.context}: each rank's s/C tokens and queries, "
                       f"against all s keys")
        if self.layout.expert > 1:
            out.append("per rank: expert parallel: balanced routing, so each rank runs as many expert products as "
                       "its own tokens need")
        return out

    def to_dict(self) -> dict:
        best = self.most_loaded
        return {"rank": self.rank, "stage": best.stage, "layout": {k: v for k, v in self.layout.to_dict().items()
                                                                  if k not in ("data_parallel",
                                                                               "distributed_optimizer")},
                "forward": best.forward, "backward": best.backward, "training": best.training,
                "stages": [s.to_dict() for s in self.stages], "conventions": self.conventions}
