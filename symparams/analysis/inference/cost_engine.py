"""The cost inference of one class: discover, fit, find the attention modules, verify (see :mod:`.costs`), and
check against a tiny real model (:mod:`.real_check`): ``infer_costs(infer("llama", "causal-lm"), real=True)``."""

from __future__ import annotations

import copy
import math
from dataclasses import replace
import random
import time

import sympy as sp

from ...core.compute import BATCH, SEQ
from ...core.symbols import H
from ...families.inferred_costs import LAYER_KIND
from .cost_result import AttentionModule, Costs, CostVerification, TracedProduct
from . import chunks
from .cpu_base import on_real_tensors
from .cost_fitting import _symbols, assemble, backward_of, fitted
from .cost_orders import outside_count, relation_kind
from .cost_layers import VERIFY_LAYERS, least_layers
from .costs import (ATTEMPTS, BASE_BATCH, BASE_SEQ, ROUNDS, VERIFY_TRACES, WIDTH_TRACES, Domain, _allowed, _draw,
                    discover_costs, fit_samples)
from .discovered import Uninferable
from .probing import Builder
from .products import product_text
from .real_check import RealCheck, check_real
from .regular import head_widths, regular_runs
from .result import Inferred
from .sampling import variables
from .tracing import Untraceable
from .widths import width_terms

#: mismatches kept in the verification record
KEPT = 3
#: the draws a verification configuration gets to keep its layer counts within a trace's (each costs no trace)
DEEP_DRAWS = 200
#: a relation's kind as the reader reads it
WORDS = {"equals": "=", "divides": "divides", "below": "<"}


def infer_costs(inferred: Inferred, seed: int = 0, verify_traces: int = VERIFY_TRACES, real: bool = False) -> Costs:
    """The FLOPs and cache of an exactly inferred class (its parameter discovery kept in ``inferred``); with
    ``real``, checked against a tiny real model too (:mod:`.real_check`).  Costs that do not fit, verify or check
    at every head width are tried again at the widths the forward pass runs at regularly (see :mod:`.regular`)."""
    start = time.perf_counter()
    if not inferred.exact or inferred.discovery is None:
        return Costs(reason="the parameter count was not inferred")
    builder = Builder(inferred.model_type, inferred.cls)
    builder.companions.update(inferred.discovery.companions)
    builder.kinds.update(inferred.discovery.kinds)
    builder.sums.update(inferred.discovery.sums)
    domain = None
    try:
        domain, costs = _inferred_from(builder, inferred, seed, verify_traces, real)
    except (Untraceable, Uninferable) as exc:
        return Costs(reason=str(exc), traces=domain.traces if domain else 0, seconds=time.perf_counter() - start)
    return replace(costs, traces=domain.traces, seconds=time.perf_counter() - start)


def _inferred_from(builder: Builder, inferred: Inferred, seed: int, verify_traces: int, real: bool) -> tuple:
    """The cost domain discovered from the count's discovery, and its costs; a bound of a layer count discovered
    on the other side of it than the class's default is moved to the default (see :func:`bounds_the_default_meets`)
    and the domain discovered again."""
    domain, base = discover_costs(builder, copy.deepcopy(inferred.discovery), on_real_tensors)
    if bounds := bounds_the_default_meets(domain):
        found = copy.deepcopy(inferred.discovery)
        for (_, bound), value in bounds.items():
            found.base[bound] = found.fields[bound].base = value
        domain, base = discover_costs(builder, found, on_real_tensors)
        domain.bounds = set(bounds)
    symbols = _symbols(domain, inferred)
    domain.widths = width_terms(p.shape for p in inferred.parameters)
    domain.dimensions = {sp.expand(d) for p in inferred.parameters for d in p.shape if sp.sympify(d).free_symbols}
    domain.parameters = tuple(inferred.parameters)
    domain.count_relations = inferred.conditions.relations
    return domain, _at_regular_widths(domain, base, inferred, symbols, seed, verify_traces, real)


def bounds_the_default_meets(domain: Domain) -> dict:
    """Cost fields that only move how many cached layers are of which kind, below a layer count at the start and at
    least it in the class's default (dots1's full-attention layers are ``min(L, max_window_layers)``: 4 of 5 at the
    start, all 62 by default): each (layer count, field) → the field's default.  The fit would see both sides of
    a minimum, which no polynomial is; at its default, above every layer count traced, the field changes nothing,
    and the costs hold wherever it stays at least the layers (the released dots1 has 62 of 62)."""
    defaults, out = domain.found.defaults, {}
    for name in domain.cost_fields:
        value, effects = defaults.get(name), domain.effects.get(name, ())
        if not effects or any(target[0] != "layers" for target in effects) or not _whole(value) \
                or value <= VERIFY_LAYERS:
            continue
        for count in domain.low:
            if _whole(defaults.get(count)) and value >= defaults[count] and domain.start[name] < domain.start[count]:
                out[count, name] = value
    return out


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _at_regular_widths(domain, base, inferred: Inferred, symbols: dict, seed: int, verify_traces: int,
                       real: bool) -> Costs:
    """The costs of :func:`_costs`; where they do not fit, verify or check, those at the head widths the forward
    pass runs at regularly, when some widths run otherwise (see :mod:`.regular`: a one-channel partial rotary runs
    one channel wider); the first failure where no width does."""
    seen_layers = set(domain.seen_layers)
    try:
        costs = _costs(domain, base, inferred, symbols, seed, verify_traces, real)
        if costs.exact:
            return costs
        failure = None
    except Untraceable as exc:
        failure = exc
    names = {s: n for n, s in symbols.items() if s.is_Symbol}
    domain.regular = regular_runs(domain, head_widths(domain.widths, names))
    if not domain.regular:
        if failure is not None:
            raise failure
        return costs
    domain.seen_layers = seen_layers  # the layer counts of the first try are drawn again
    return _costs(domain, base, inferred, symbols, seed, verify_traces, real)


def _costs(domain, base, inferred: Inferred, symbols: dict, seed: int, verify_traces: int, real: bool) -> Costs:
    """The costs fitted on random traces of ``domain`` (a second round of as many when the first does not fit or
    verify), verified, and with ``real`` checked on a tiny real model."""
    rng, samples = random.Random(seed), []
    for round_ in range(ROUNDS):
        samples += fit_samples(domain, base, rng)
        domain.least = least_layers(domain, samples)
        try:
            products, extra, cache = _fit(domain, base, samples, symbols)
            verification = _verified(domain, products, extra, cache, symbols, verify_traces, seed,
                                     _differences(inferred))
        except Untraceable:
            if round_ == ROUNDS - 1:
                raise
            continue
        if verification.passed:
            break
    attention, incomplete, why = attention_modules(domain, products, cache, symbols)
    cost_symbols = {n: symbols[n] for n in domain.cost_fields}
    # the class's default of a field only a relation of the costs names too (the reader checks it when a config
    # leaves it out)
    partners = sorted({n for pair in [*domain.relations, *(left + right for left, right in domain.products),
                                      *domain.bounds] for n in pair} - set(inferred.symbols))
    defaults = {n: inferred.discovery.defaults.get(n) for n in [*domain.cost_fields, *partners]}
    costs = Costs(None, cost_symbols, defaults, dict(domain.held), products, extra, cache, attention, why,
                  verification, domain.traces, 0.0, _relations(domain), incomplete, device=domain.device,
                  cache_refused=domain.cache_fails, least=dict(domain.least))
    if real and costs.exact:
        costs = checked_by(costs, check_real(domain, costs, symbols, base))
    return costs


def checked_by(costs: Costs, check: RealCheck) -> Costs:
    """``costs`` with the tiny real model's ``check``: refused where the model counts otherwise (exact or refused),
    or where no real model was run (formulas only meta traces confirmed share the modeling code's assumptions)."""
    costs = replace(costs, real=check.to_dict())
    if check.reason is None and not check.passed:
        wrong = next(f"{k} {a} by the formulas, {b} counted" for k, (a, b) in check.figures.items() if a != b)
        return replace(costs, reason=f"a tiny real model disagrees: {wrong}")
    if not check.passed:
        return replace(costs, reason=f"no tiny real model checks the formulas: {check.reason}")
    return costs


def _fit(domain: Domain, base, samples: list, symbols: dict) -> tuple:
    """The products, unmatched backward FLOPs and cache tensors fitted on ``samples``."""
    if len(samples) < WIDTH_TRACES // 2:
        raise Untraceable(f"only {len(samples)} random configurations traced with the base structure"
                          + (f" ({domain.errors[-1]})" if domain.errors else ""))
    weights = {k: any(o.weights.get(k, False) for _, o in samples) for k in base.weights}
    formulas = fitted(domain, samples, symbols)
    chunked = domain.chunk is not None
    backward = backward_of(samples, formulas, domain.chunk_of if chunked else None,
                           domain.chunks_symbol(symbols) if chunked else None)
    products, extra, cache = assemble(formulas, backward, weights)
    return products, extra, None if base.cache is None else cache


def _differences(inferred: Inferred) -> tuple[sp.Expr, ...]:
    """The parameters' counts and dimensions that are differences (layers less dense layers): where one is
    negative, ``count --config`` refuses the config, so its costs are no test (as the count's verification)."""
    return tuple(e for p in inferred.parameters for e in (p.count, *p.shape)
                 if any(c < 0 for c in e.as_coefficients_dict().values()))


def _relations(domain: Domain) -> tuple[str, ...]:
    """The relations only the forward pass needs, as the parameter conditions write theirs."""
    out = []
    for f, g in sorted(domain.relations):
        kind = relation_kind(domain.found, domain.relations, domain.orders, f, g)
        a, b = domain.found.fields[f].base, domain.found.fields[g].base
        if kind == "below" and (f, g) not in domain.orders and a >= b:
            out.append(_proportion(f, a, g, b))
        elif kind != "equals" or f < g:
            out.append(f"{f} {WORDS[kind]} {g}")
    out += [f"{product_text(left)} = {product_text(right)}" for left, right in domain.products]
    out += [f"{bound} ≥ {layers}" for layers, bound in sorted(domain.bounds)]
    return tuple(out)


def _proportion(f: str, a: int, g: str, b: int) -> str:
    """``f ⊑ g`` where the bases ``a`` and ``b`` hold no order (Bamba's hidden width of 4,096 over its 128 Mamba
    heads): what the draws kept, ``g``'s multiple of its base a multiple of ``f``'s, ``f·b divides g·a`` in lowest
    terms (``hidden_size divides 32*mamba_n_heads``)."""
    d = math.gcd(a, b)
    return f"{product_text([*([str(b // d)] if b > d else []), f])} divides " \
           f"{product_text([*([str(a // d)] if a > d else []), g])}"


# -- the attention modules -------------------------------------------------------------------------------

def _per_run(p: TracedProduct) -> sp.Expr:
    return sp.expand(2 * sp.Mul(*p.factors))


def _degree_in_length(expr: sp.Expr) -> int:
    """The degree of ``expr`` in ``s``, a number of chunks ``ceiling(s/c)`` (see :mod:`.chunks`) taken for no
    power of ``s``: a chunked kernel's products are not attention's."""
    rounded = {r: sp.Dummy() for r in expr.atoms(sp.floor, sp.ceiling) if SEQ in r.free_symbols}
    return sp.degree(expr.xreplace(rounded), SEQ)


def _scores(p: TracedProduct) -> sp.Expr:
    """The elements of a product's result: its factors but the contracted one (``k`` of ``[m, k] @ [k, n]``)."""
    return sp.expand(sp.Mul(*p.factors) / p.factors[-2])


def attention_modules(domain: Domain, products: tuple, cache, symbols: dict) -> tuple[tuple, str | None, str | None]:
    """The modules whose products that grow with s² are attention's score matmul and weighted sum (two per call),
    each with its query heads and widths; why not every such product is one of those (None: each is), and why
    the activations are not known (None: they are)."""
    quadratic: dict[str, list] = {}
    for p in products:
        if _degree_in_length(_per_run(p)) == 2:
            quadratic.setdefault(p.module, []).append(p)
    cross = _cross_modules(domain, quadratic) if quadratic else set()
    found, incomplete = [], None
    for module, ops in quadratic.items():
        ops = sorted(ops, key=lambda p: p.ordinal)
        heads = sp.expand(_scores(ops[0]) / (BATCH * SEQ**2)) if len(ops) == 2 else None
        widths = [sp.expand(_per_run(p) / (2 * BATCH * SEQ**2 * heads)) for p in ops] if heads else []
        if heads is None or ops[0].count != ops[1].count or heads.free_symbols & {SEQ, BATCH} \
                or any(w.free_symbols & {SEQ, BATCH} for w in widths):
            incomplete = f"the products of {module or 'the model'} that grow with s² are not attention's two"
            continue
        found.append(AttentionModule(module, ops[0].count, heads, widths[0], widths[1], module in cross,
                                     (ops[0].ordinal, ops[1].ordinal)))
    return tuple(found), incomplete, incomplete or _activations_refused(found, cache, symbols)


def _activations_refused(found: list, cache, symbols: dict) -> str | None:
    if cache and any(SEQ not in sp.Mul(*t.shape).free_symbols for t in cache):
        return ("layers keep a recurrent state (state-space or linear attention); the activations formula "
                "(Korthikanti et al.) is for attention layers")
    if not any(not a.cross for a in found):
        return "no self-attention module was found for the activations formula (Korthikanti et al.)"
    if H not in symbols.values():
        return "no config field is the hidden size H the activations formula needs"
    return None


def _cross_modules(domain: Domain, quadratic: dict) -> set:
    """The attention modules whose keys come from the encoder: traced with a decoder two tokens shorter, their
    score matmul is not square."""
    found = domain.found
    if not getattr(domain.builder.config(found.base), "is_encoder_decoder", False):
        return set()
    obs = domain.observe(found.base, BASE_SEQ, BASE_BATCH, decoder_seq=BASE_SEQ - 2)
    if obs is None:
        raise Untraceable("the encoder-decoder does not trace with a shorter decoder")
    out = set()
    for module, ops in quadratic.items():
        first = min(ops, key=lambda p: p.ordinal)
        key = (module, first.ordinal, first.op)
        n = len([t for t in obs.targets if t[0] == "factor" and t[1] == key])
        rows, cols = obs.targets["factor", key, n - 3], obs.targets["factor", key, n - 1]
        if rows != cols:
            out.add(module)
    return out


# -- verification ------------------------------------------------------------------------------------------

def _at(expr: sp.Expr, subs: dict) -> int:
    value = expr.xreplace(subs)
    if not value.is_Integer:
        raise Untraceable(f"a cost formula is not a whole number at a verification point ({value})")
    return int(value)


def predicted(products, extra, cache, subs: dict, seq_kept: dict | None = None) -> tuple[dict, dict, dict | None]:
    """(forward FLOPs by module, backward FLOPs by module, cache elements by part) at ``subs``."""
    forward, backward = {}, {}
    for p in products:
        forward[p.module] = forward.get(p.module, 0) + _at(p.forward, subs)
        backward[p.module] = backward.get(p.module, 0) + _at(p.backward, subs)
    for module, expr in extra:
        backward[module] = backward.get(module, 0) + _at(expr, subs)
    held = None
    if cache is not None:
        held = {"self": 0, "cross": 0}
        for t in cache:
            held[t.part] += _at(t.held(), subs)
    return {k: v for k, v in forward.items() if v}, {k: v for k, v in backward.items() if v}, held


def _substitution(domain: Domain, values: dict, seq: int, batch: int, symbols: dict) -> dict:
    point = variables(domain.found, values)
    point.update({n: values.get(n, b) for n, b in domain.cost_fields.items()})
    subs = {symbols[n]: sp.Integer(v) for n, v in point.items()}
    subs[SEQ], subs[BATCH] = sp.Integer(seq), sp.Integer(batch)
    return subs


def _observed(obs) -> tuple[dict, dict, dict | None]:
    return ({k: v for k, v in obs.forward.items() if v}, {k: v for k, v in (obs.backward or {}).items() if v},
            obs.cache)


def verify_costs(domain: Domain, products, extra, cache, symbols: dict, n: int, seed: int,
                 refused: tuple = ()) -> CostVerification:
    """``n`` fresh configurations (wider multipliers, the fields that change no shape moved too, a lifted field
    at its default half of the time, a sliding window of a few tokens, so that the length often passes it),
    every other one with its backward, each compared with the formulas module by module; a configuration where
    one of ``refused`` is negative (a parameter count the reader refuses) is none."""
    rng = random.Random(seed + 1)
    checked = exact = beyond = 0
    wrong = []
    windowed = sorted({s.name for t in cache or () if t.window is not None for s in t.window.free_symbols})
    names = {symbol.name: name for name, symbol in symbols.items() if symbol.is_Symbol}
    for _ in range(ATTEMPTS * n):
        if checked == n:
            break
        values, seq, batch = _draw(domain, rng, wide=True, every=True)
        for _ in range(DEEP_DRAWS):
            # drawn wide, several layer counts (or a pattern's periods and offsets) pass the layers a trace holds
            # nearly every time, or break a relation of the count (Zamba2's memory blocks below its hybrid layers):
            # drawn again, which costs no trace, until they fit
            if not any(values.get(f, 0) > VERIFY_LAYERS for f in domain.low) and not outside_count(domain, values):
                break
            values, seq, batch = _draw(domain, rng, wide=True, every=True)
        edges = chunks.boundaries(domain.chunk_of(values)) if domain.chunk else ()
        if checked < len(edges):  # a chunked kernel: first at both sides of a chunk's end (its own, with its field)
            seq = edges[checked]
        for field in windowed:  # a window of a few tokens, so that a random length passes it at little cost
            values[names[field]] = rng.randint(4, 16)
        subs = _substitution(domain, values, seq, batch, symbols)
        if not _allowed(domain, values, False) or any(_negative(e, subs) for e in refused):
            continue
        obs = domain.observe(values, seq, batch, backward=checked % 2 == 0, regime=False, beyond=True, steady=False)
        if obs is None:
            continue
        checked += 1
        beyond += any(w - 1 < seq for w in obs.windows)
        expected = predicted(products, extra, cache, subs)
        seen = _observed(obs)
        if obs.backward is None:
            expected, seen = (expected[0], {}, expected[2]), (seen[0], {}, seen[2])
        if not set(seen[0]) <= set(expected[0]):
            expected, seen = _kinds_together(expected), _kinds_together(seen)
        if expected != seen:
            wrong.append(({**values, "seq": seq, "batch": batch}, _difference(expected, seen)))
        else:
            exact += 1
    return CostVerification(checked, exact, seed, beyond, tuple(wrong[:KEPT]), n)


def _kinds_together(figures: tuple) -> tuple:
    """Forward and backward FLOPs by module with the layers of every kind together (``*k`` read as ``*``): where
    the widths of two kinds of layers are drawn equal (Gemma 4's sliding head width at the full layers' 512),
    their layers have one structure, and the trace names their modules ``*`` where the formulas name ``*1`` and
    ``*2``; the sums over the layers must still agree."""
    def merged(by_module: dict) -> dict:
        out: dict = {}
        for module, flops in by_module.items():
            out[LAYER_KIND.sub("*", module)] = out.get(LAYER_KIND.sub("*", module), 0) + flops
        return out

    return merged(figures[0]), merged(figures[1]), figures[2]


def _verified(domain: Domain, *args) -> CostVerification:
    """:func:`verify_costs` (``args`` its own); where it fails with the greater fields of orders drawn off the
    multiples (see :func:`~.cost_orders.ordered`), again with one of those relations, then all, taken for divisibility,
    the lattice the fit was drawn on: formulas that hold only there (a head width ``H/A`` fitted where a floor is)
    are vouched for only there."""
    orders = sorted(domain.orders)
    fewer = [[o for o in orders if o != dropped] for dropped in orders] if len(orders) > 1 else []
    for kept in [orders, *fewer] if orders else []:
        domain.orders = set(kept)
        try:
            verification = verify_costs(domain, *args)
        except Untraceable:  # a formula not whole off the multiples
            continue
        if verification.passed:
            return verification
    domain.orders = set()
    return verify_costs(domain, *args)


def _negative(expr: sp.Expr, subs: dict) -> bool:
    value = expr.xreplace(subs)
    return bool(value.is_Integer and value < 0)


def _difference(expected: tuple, seen: tuple) -> str:
    for what, e, s in zip(("forward", "backward", "cache"), expected, seen):
        if e != s:
            if isinstance(e, dict) and isinstance(s, dict):
                keys = sorted(k for k in e.keys() | s.keys() if e.get(k) != s.get(k))
                return f"{what} of {keys[0] or 'the model'}: formula {e.get(keys[0])}, traced {s.get(keys[0])}"
            return f"{what}: formula {e}, traced {s}"
    return ""
