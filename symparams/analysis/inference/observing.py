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

from dataclasses import dataclass, field, replace

from .tracing import Product, Trace, Untraceable

ProductKey = tuple  # (module, ordinal in its call, op)
CacheKey = tuple  # (part, layer kind, attribute)


class CopiesDiffer(Untraceable):
    """The copies of ``module`` (its layers, its calls) run other products under one key."""

    def __init__(self, module: str, message: str):
        super().__init__(message)
        self.module = module


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
    loops: dict = field(default_factory=dict)  # product key → the runs of the loop folded into it (see fold_loops)

    @property
    def structure(self) -> frozenset:
        """The product and cache keys: configurations of one structure are fitted together."""
        return frozenset(t[1] for t in self.targets if t[0] in ("count", "layers"))

    @property
    def extra(self) -> dict:
        """Module → backward FLOPs no forward product spends."""
        return {t[1]: v for t, v in self.targets.items() if t[0] == "extra"}


def observe(trace: Trace, loops: bool = False, by_calls: bool = False) -> Observed:
    """The targets of one trace (see the module's introduction); with ``loops``, a loop of several products in
    one call is folded into one run of each (see :func:`fold_loops`); with ``by_calls``, the calls of a module
    within one call of the module around it are one call (see :func:`_products`)."""
    out = Observed(trace.seq, trace.batch)
    if loops:
        folded, runs = fold_loops(trace.products)
        trace = replace(trace, products=folded)
    keys = _products(trace, out, by_calls)
    if loops:
        out.loops = {key: runs[id(p)] for p, key in zip(trace.products, keys) if id(p) in runs}
    if trace.cache is not None:
        _cache(trace, out)
    return out


def fold_loops(products: list[Product]) -> tuple[list[Product], dict[int, int]]:
    """``products`` with each loop of several products in one call of a module (a scan over chunks: the same
    products, in the same order, again and again) folded into its first pass, each product's first factor and
    FLOPs those of all its runs together (a product's FLOPs are twice its factors': the folded ones still are),
    and each folded product's id → how many runs it stands for.  A loop of one product stays as it was (one key
    counted once per run, see :func:`_products`)."""
    calls: dict[tuple[str, int], list[Product]] = {}
    for p in products:
        calls.setdefault((p.module, p.call), []).append(p)
    out, runs = [], {}
    for call in calls.values():
        out += _folded(call, runs)
    return out, runs


def _folded(call: list[Product], runs: dict) -> list[Product]:
    shapes = [(p.op, p.factors) for p in call]
    out, i = [], 0
    while i < len(call):
        period = next((n for n in range(2, (len(call) - i) // 2 + 1) if shapes[i:i + n] == shapes[i + n:i + 2 * n]
                       and len(set(shapes[i:i + n])) > 1), None)
        if period is None:
            out.append(call[i])
            i += 1
            continue
        times = 1
        while shapes[i:i + period] == shapes[i + times * period:i + (times + 1) * period]:
            times += 1
        for j in range(period):
            copies = call[i + j:i + times * period:period]
            first = copies[0]
            folded = replace(first, factors=(first.factors[0] * times, *first.factors[1:]),
                             forward=sum(p.forward for p in copies), backward=sum(p.backward for p in copies))
            runs[id(folded)] = times
            out.append(folded)
        i += times * period
    return out


def _products(trace: Trace, out: Observed, by_calls: bool = False) -> list[ProductKey]:
    """Each product's targets in ``out``; the key of each product, in order.  ``by_calls``: a product's ordinal
    is its place among the products of every call of its module within one call of the module around it, so
    that one module called twice there on other inputs (Pegasus-X's query projection of the tokens, then of the
    global tokens; ProphetNet's relative positions of the main stream, then of the predicted one) keys each
    call's products apart, as the products of one call are."""
    keys = []
    last: dict[tuple[str, int], tuple] = {}  # (module, call) → (ordinal, op, factors) of its latest product
    forward: dict[ProductKey, int] = {}
    backward: dict[ProductKey, int] = {}
    for p in trace.products:
        call = (p.module, p.outer if by_calls else p.call)
        ordinal, op, factors = last.get(call, (-1, None, None))
        if (op, factors) != (p.op, p.factors):  # a loop of one product (a scan over positions) is one key
            ordinal += 1
        last[call] = (ordinal, p.op, p.factors)
        key = (p.module, ordinal, p.op)
        keys.append(key)
        count = ("count", key)
        out.targets[count] = out.targets.get(count, 0) + 1
        for i, value in enumerate(p.factors):
            seen = out.targets.setdefault(("factor", key, i), value)
            if seen != value:
                raise CopiesDiffer(p.module, f"the products of {p.module or 'the model'} differ between its "
                                             f"copies (aten.{p.op} {tuple(p.factors)})")
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
    return keys


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
