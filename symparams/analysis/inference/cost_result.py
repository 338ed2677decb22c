"""What the cost inference returns: every traced product and cache tensor as formulas, and how they were checked.

Formulas are in the class's config fields (the symbols of its parameter
formula, and of the fields only the costs follow: a top-k, a sliding
window), the sequence length ``s`` and the batch ``b`` (:data:`~symparams.
core.compute.SEQ`, :data:`~symparams.core.compute.BATCH`).  A product runs
``count`` times in a forward pass and costs ``2 · Π factors`` FLOPs each
(PyTorch's counter), its backward ``backward`` times that; a cache tensor is
held by ``layers`` layers, each ``Π shape`` elements after ``s`` tokens, or
after ``min(s, window - 1)`` on a sliding-window layer.

>>> from symparams.core.compute import BATCH, SEQ
>>> from symparams.core.symbols import H
>>> p = TracedProduct("lm_head", 0, "mm", sp.Integer(1), (BATCH * SEQ, H, 7), 28 * H * BATCH * SEQ, True)
>>> p.forward
14*H*b*s
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from ...core.compute import SEQ
from .result import encode_value


@dataclass(frozen=True)
class TracedProduct:
    """One product of the forward pass: ``count`` runs of ``2 · Π factors`` FLOPs, and ``backward`` FLOPs in the
    backward pass for all of them; ``weight``: one factor is a weight (a linear layer's matmul)."""

    module: str
    ordinal: int
    op: str
    count: sp.Expr
    factors: tuple[sp.Expr, ...]
    backward: sp.Expr
    weight: bool

    @property
    def forward(self) -> sp.Expr:
        return sp.expand(2 * self.count * sp.Mul(*self.factors))

    def to_data(self, what: str) -> list:
        """``[module, ordinal, op, count, [factor, ...], backward, what]``, ``what`` the product's kind (matmul:
        a weight's, attention, product: any other)."""
        return [self.module, self.ordinal, self.op, encode_value(self.count), [encode_value(f) for f in self.factors],
                encode_value(self.backward), what]


@dataclass(frozen=True)
class HeldTensor:
    """One tensor every layer of a kind keeps in the cache: ``layers`` such layers, each ``Π shape`` elements after
    ``s`` tokens (a sliding-window layer: after ``min(s, window - 1)``)."""

    part: str  # "self" or "cross" (one entry per token of the encoder's input)
    kind: str  # the cache layer's class
    attribute: str
    layers: sp.Expr
    shape: tuple[sp.Expr, ...]
    window: sp.Expr | None

    def held(self, seq: sp.Expr = SEQ) -> sp.Expr:
        """Elements every layer of the kind holds together after ``seq`` tokens."""
        kept = seq if self.window is None else sp.Min(seq, self.window - 1)
        return sp.expand(self.layers * sp.Mul(*(d.xreplace({SEQ: kept}) for d in self.shape)))

    def to_data(self) -> list:
        return [self.part, self.kind, self.attribute, encode_value(self.layers), [encode_value(d) for d in self.shape],
                None if self.window is None else encode_value(self.window)]


@dataclass(frozen=True)
class AttentionModule:
    """A module whose two products are attention's score matmul and weighted sum, each ``2·b·heads·s²·width``."""

    module: str
    runs: sp.Expr  # how many times it runs in a forward pass
    heads: sp.Expr
    key_width: sp.Expr
    value_width: sp.Expr
    cross: bool
    ordinals: tuple[int, int] = (0, 1)  # which of the module's products are the two

    def to_data(self) -> list:
        return [self.module, encode_value(self.runs), encode_value(self.heads), encode_value(self.key_width),
                encode_value(self.value_width), self.cross]


@dataclass(frozen=True)
class CostVerification:
    """Fresh configurations traced again, each compared with the formulas module by module: forward and backward
    FLOPs and the cache; ``beyond_window`` of them at a length past every sliding window."""

    configurations: int
    exact: int
    seed: int
    beyond_window: int = 0
    mismatches: tuple = ()
    wanted: int = 1  # the configurations drawn for: at least half of them must trace

    @property
    def passed(self) -> bool:
        return 2 * self.configurations >= self.wanted and self.exact == self.configurations


@dataclass(frozen=True)
class Costs:
    """The FLOPs and cache of one inferred class, or (``reason``) why they were not inferred."""

    reason: str | None = None
    symbols: dict = field(default_factory=dict)  # fields only the costs follow → symbol
    defaults: dict = field(default_factory=dict)  # those fields' defaults
    held: dict = field(default_factory=dict)  # fields the costs hold at a value (a flag that changes them)
    products: tuple[TracedProduct, ...] = ()
    extra: tuple[tuple[str, sp.Expr], ...] = ()  # (module, backward FLOPs no forward product spends)
    cache: tuple[HeldTensor, ...] | None = None  # None: the class returns no cache
    attention: tuple[AttentionModule, ...] = ()
    activations: str | None = None  # why the activations are not known (None: they are)
    verification: CostVerification | None = None
    traces: int = 0
    seconds: float = 0.0
    relations: tuple[str, ...] = ()  # relations only the forward pass needs ("num_key_value_heads divides ...")
    incomplete: str | None = None  # why the attention modules found do not hold every product that grows with s²
    real: dict | None = None  # the tiny real model's check (see real_check.RealCheck.to_dict)
    device: str = "meta"  # where the passes were traced ("cpu": real tensors at small sizes, see real_tensors.py)
    cache_refused: str | None = None  # why the cache was not traced (a forward with one fails): none is given
    least: dict = field(default_factory=dict)  # layer counts the costs hold from (fewer built another structure)

    @property
    def exact(self) -> bool:
        return self.reason is None and self.verification is not None and self.verification.passed

    @property
    def forward(self) -> sp.Expr:
        """The forward FLOPs of the whole model."""
        return sp.expand(sp.Add(*(p.forward for p in self.products)))

    @property
    def backward(self) -> sp.Expr:
        """The backward FLOPs of the whole model."""
        return sp.expand(sp.Add(*(p.backward for p in self.products), *(e for _, e in self.extra)))

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the data file (formulas as :func:`~.result.encode_value` writes them)."""
        if not self.exact:
            return {"exact": False, "reason": self.reason or _failure(self.verification),
                    **({"check": self.real} if self.real is not None else {})}
        v = self.verification
        return {"exact": True, "symbols": {k: str(s) for k, s in self.symbols.items()}, "defaults": self.defaults,
                "held": self.held, "relations": list(self.relations),
                "products": [p.to_data(self._what(p)) for p in self.products], "attention_incomplete": self.incomplete,
                "extra_backward": [[m, encode_value(e)] for m, e in self.extra],
                "cache": None if self.cache is None else [t.to_data() for t in self.cache],
                "attention": [a.to_data() for a in self.attention], "activations": self.activations,
                "verification": {"configurations": v.configurations, "exact": v.exact, "seed": v.seed,
                                 "beyond_window": v.beyond_window},
                **({"check": self.real} if self.real is not None else {}),
                **({"traced_on": self.device} if self.device != "meta" else {}),
                **({"cache_refused": self.cache_refused} if self.cache_refused else {}),
                **({"least": self.least} if self.least else {})}

    def _what(self, p: TracedProduct) -> str:
        if any(a.module == p.module and p.ordinal in a.ordinals for a in self.attention):
            return "attention"
        return "matmul" if p.weight else "product"


def _failure(v: CostVerification | None) -> str:
    if v is None or 2 * v.configurations < v.wanted:
        return f"only {0 if v is None else v.configurations} fresh configurations traced for the verification"
    first = f" (the first differs in the {v.mismatches[0][1]})" if v.mismatches else ""
    return f"verification failed: {v.exact} of {v.configurations} fresh configurations exact{first}"
