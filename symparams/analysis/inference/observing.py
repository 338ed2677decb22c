"""A traced pass as the cost fit sees it: targets (whole numbers) keyed as the parameters' are, and the sums they
must add up to.

A product of the forward pass is keyed by its module, its place among the
products of one call of that module (a run of equal products, a loop over
positions, taking one place) and its operation (``("model.layers.*.
self_attn", 0, "bmm")``, the score matmul); its targets are how many times it
runs in the pass (``("count", key)``) and each of its factors (``("factor",
key, i)``).  A cache tensor is keyed by its part (``self``, ``cross``), its
layer's kind (the layer's class; ``#2`` for a second shape of one class, in
layer order) and its attribute (``keys``, ``conv_states.0``); its targets are
how many layers hold it, each of its dimensions and, for a sliding-window
layer, the window.  Backward FLOPs that no forward product spends (a backward
product whose node no counted forward product made) are kept by module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .tracing import Trace, Untraceable

ProductKey = tuple  # (module, ordinal in its call, op)
CacheKey = tuple  # (part, layer kind, attribute)


@dataclass
class Observed:
    """One traced configuration: its targets, and what the fitted formulas must add up to there."""

    seq: int
    batch: int
    targets: dict = field(default_factory=dict)  # target → whole number
    by_key: dict = field(default_factory=dict)  # product key → (forward, backward) FLOPs of all its runs
    weights: dict = field(default_factory=dict)  # product key → whether a factor is a weight
    forward: dict = field(default_factory=dict)  # module → forward FLOPs of its own products
    backward: dict | None = None  # module → backward FLOPs of its own products and unmatched ones; None: not traced
    cache: dict | None = None  # part → elements the cache holds; None: no cache returned
    windows: tuple = ()  # the sliding windows of the cache's layers

    @property
    def structure(self) -> frozenset:
        """The product and cache keys: configurations of one structure are fitted together."""
        return frozenset(t[1] for t in self.targets if t[0] in ("count", "layers"))

    @property
    def extra(self) -> dict:
        """Module → backward FLOPs no forward product spends."""
        return {t[1]: v for t, v in self.targets.items() if t[0] == "extra"}


def observe(trace: Trace) -> Observed:
    """The targets of one trace (see the module's introduction)."""
    out = Observed(trace.seq, trace.batch)
    _products(trace, out)
    if trace.cache is not None:
        _cache(trace, out)
    return out


def _products(trace: Trace, out: Observed) -> None:
    last: dict[tuple[str, int], tuple] = {}  # (module, call) → (ordinal, op, factors) of its latest product
    forward: dict[ProductKey, int] = {}
    backward: dict[ProductKey, int] = {}
    for p in trace.products:
        ordinal, op, factors = last.get((p.module, p.call), (-1, None, None))
        if (op, factors) != (p.op, p.factors):  # a loop of one product (a scan over positions) is one key
            ordinal += 1
        last[p.module, p.call] = (ordinal, p.op, p.factors)
        key = (p.module, ordinal, p.op)
        count = ("count", key)
        out.targets[count] = out.targets.get(count, 0) + 1
        for i, value in enumerate(p.factors):
            seen = out.targets.setdefault(("factor", key, i), value)
            if seen != value:
                raise Untraceable(f"the products of {p.module or 'the model'} differ between its copies "
                                  f"(aten.{p.op} {tuple(p.factors)})")
        out.weights[key] = out.weights.get(key, False) or p.weight
        if p.channels is not None:
            out.targets["channels", key] = p.channels
        forward[key] = forward.get(key, 0) + p.forward
        backward[key] = backward.get(key, 0) + p.backward
        out.forward[p.module] = out.forward.get(p.module, 0) + p.forward
    out.by_key = {key: (forward[key], backward[key]) for key in forward}
    if trace.traced_backward:
        out.backward = {}
        for key, flops in backward.items():
            out.backward[key[0]] = out.backward.get(key[0], 0) + flops
        for module, flops in trace.extra_backward.items():
            out.targets["extra", module] = flops
            out.backward[module] = out.backward.get(module, 0) + flops


def _cache(trace: Trace, out: Observed) -> None:
    layers: dict[tuple[str, int], dict] = {}
    for t in trace.cache:
        layer = layers.setdefault((t.part, t.layer), {"kind": t.kind, "window": t.window, "tensors": []})
        layer["tensors"].append((t.attribute, t.shape))
    signatures: dict[tuple[str, str], list] = {}  # (part, class) → the distinct tensor shapes of its layers
    out.cache = {"self": 0, "cross": 0}
    windows = set()
    for (part, _), layer in sorted(layers.items()):
        signature = tuple(sorted(layer["tensors"]))
        seen = signatures.setdefault((part, layer["kind"]), [])
        if signature not in seen:
            seen.append(signature)
        label = layer["kind"] + (f"#{seen.index(signature) + 1}" if seen.index(signature) else "")
        for attribute, shape in layer["tensors"]:
            key = (part, label, attribute)
            out.targets["layers", key] = out.targets.get(("layers", key), 0) + 1
            for i, value in enumerate(shape):
                out.targets["dim", key, i] = value
            if layer["window"] is not None:
                out.targets["window", key] = layer["window"]
                windows.add(layer["window"])
            out.cache[part] += _elements(shape)
    out.windows = tuple(sorted(windows))


def _elements(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
