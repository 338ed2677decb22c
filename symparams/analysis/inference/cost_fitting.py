"""The cost targets fitted: each traced factor, count, width and cache dimension as an exact formula over the
variables that move it (the bases of :mod:`.fitting`, tried from the plainest), the backward FLOPs no forward
product matches, and the products, backward and cache tensors assembled from them (see :mod:`.costs` for the
traces they are fitted on)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import sympy as sp

from ...core.compute import BATCH, SEQ
from ...families.inferred_widths import names_of
from . import chunks
from .cost_result import HeldTensor, TracedProduct
from .cost_orders import outside_count
from .costs import B, S, Domain
from .fitting import (LEVELS, SPARSE_LEVELS, SURPLUS, Term, basis, expression, fit, fit_terms, products_of_names,
                      solve)
from .observing import Observed
from .result import Inferred, symbols_for
from .tracing import Untraceable
from .widths import fit_widths

#: the bases a target tries with one variable more than those that move it (see the parameter engine)
UP_TO_FLOORS = LEVELS.index(("constant", "linear", "quadratic", "floor"))
#: the most terms whose pairs a sparse fit tries
SPARSE_TERMS = 80
def _dependencies(domain: Domain, target: tuple) -> list[str]:
    return [n for n in domain.names if target in domain.effects.get(n, ())]


def _fit_target(domain: Domain, target: tuple, points: list, values: list, symbols: dict | None = None,
                also: frozenset = frozenset()) -> dict:
    """``target``'s exact fit over the variables that move it, and ``also`` (the layer counts, for a kind of layers
    some traces lack: its count may follow only their larger moves)."""
    moving = _dependencies(domain, target)
    own = _distinct_columns(points, [*moving, *sorted(also - set(moving))])
    layers = domain.layer_counts() if target[0] in ("count", "layers") else frozenset()
    # the traces with the layer counts random keep the widths at the base: a level must have terms independent
    # on the points, or a head width would fit a large basis by accident
    result = fit(points, values, own, domain.binary, layers=layers, independent=True)
    for extra in [n for n in domain.names if n not in own]:
        if result is not None:
            break
        result = fit(points, values, own + [extra], domain.binary, UP_TO_FLOORS, layers, independent=True)
    for name, rule in domain.found.computed.items():  # a width computed with a float, for the fields it reads
        if result is None and names_of(rule) & set(own):
            in_width = [name, *(n for n in own if n not in names_of(rule))]
            result = fit(points, values, in_width, domain.binary, layers=layers, independent=True)
            # a computed width takes few values (ConvBERT keeps ⌊A/head_ratio⌋ heads, or 1): no whole basis level
            # in it is independent on the points, one term of it (b·s·heads, the batch of a product) may be
            result = result or _sparse(points, values, in_width, domain.binary, layers)
    if result is None and symbols is not None:  # a fused projection's width: a sum of the parameters' widths
        result = fit_widths(points, values, _with_partners(domain, own), domain.widths, symbols)
    if result is None:
        result = _sparse(points, values, own, domain.binary, layers)
    for flag, extra in _hidden_flags(domain, own) if result is None else ():
        result = fit(points, values, own + [flag, extra], domain.binary, UP_TO_FLOORS, layers, independent=True)
        if result is not None:
            break
    if result is None and layers:  # a pattern of layers: every layer count, every level (as the count's last resort)
        deeper = _distinct_columns(points, [*own, *sorted(layers - set(own))])
        # in layer counts alone, drawn each on its own, a level need not be independent: the c phases of a period,
        # floor((n + j)/c) for j < c, add up to n, so no level with a shifted period ever is; the layer counts
        # that move the target first (Flint's L − 2 − ⌊(L + 1)/4⌋ sliding layers: with the others' floors too,
        # the basis outgrows the layer counts the traces drew)
        for names in dict.fromkeys((tuple(own), tuple(deeper))) if set(own) <= layers else (tuple(deeper),):
            result = result or fit(points, values, list(names), domain.binary, len(LEVELS) - 1, layers,
                                   independent=not set(names) <= layers)
    if result is None:
        result = products_of_names(points, values, own)
    if result is None:
        result = _pooled(points, values, own, domain.binary)
    if result is None:
        raise Untraceable(f"no exact formula for the {_what(target)}")
    return result


#: the fixed strides a sequence may be pooled by (Funnel: each block at half the last one's length, so a quarter of
#: the first's, and an eighth)
POOLS = (2, 4, 8)
#: the basis a pooled length is added to: up to the products of two variables
QUADRATIC = LEVELS.index(("constant", "linear", "quadratic"))


def _pooled(points: list, values: list, names: list, binary: frozenset) -> dict | None:
    """A fit where the sequence is pooled: ``⌈s/c⌉`` (or ``⌊s/c⌋``) for a fixed stride c, alone and times each
    other variable (the batch of a matmul's flattened rows), beside the quadratic basis; the smallest stride
    first.  Funnel's blocks run at ``⌈s/2⌉`` and ``⌈s/4⌉`` positions, pooled with ``ceil_mode``.  The last try
    of a target (after every basis), so that no formula another fits changes."""
    if S not in names:
        return None
    plain = basis(names, QUADRATIC, binary)
    for stride, up in itertools.product(POOLS, (True, False)):
        pooled = [Term(floor=(S, stride), ceiling=up)]
        pooled += [Term(((n, 1),), (S, stride), ceiling=up) for n in names if n != S and n not in binary]
        result = fit_terms(points, values, names, [*plain, *pooled])
        if result is not None:
            return result
    return None


def _hidden_flags(domain: Domain, own: list) -> list[tuple[str, str]]:
    """Each flag that moves none of ``own``'s target, with each other variable: a flag whose effect the base hides
    where two fields are equal (Marian's tied output layer has the decoder's vocabulary, the untied one the
    shared one, equal by default), so that the field it chooses shows only with the flag."""
    return [(flag, extra) for flag in sorted(domain.binary - set(own))
            for extra in domain.names if extra not in own and extra != flag and extra not in domain.binary]


def _with_partners(domain: Domain, names: list) -> list:
    """``names`` and the fields a relation ties to them: moved together, a field and its partner may leave
    their ratio whole (heads ×3 still dividing the width), so a width ``A·⌊H/A⌋`` may be seen to follow only
    the partner moved with A."""
    tied = {f for pair in domain.found.relations if set(pair) & set(names) for f in pair}
    return [*names, *sorted(tied - set(names))]


def _distinct(points: list, values: list, names: list) -> dict | None:
    """Point (its values of ``names``) → value; None when one point has two values (no function of these)."""
    out: dict = {}
    for p, v in zip(points, values):
        if out.setdefault(tuple(sorted((n, p[n]) for n in names)), v) != v:
            return None
    return out


def _sparse(points: list, values: list, names: list, binary: frozenset, layers: frozenset) -> dict | None:
    """One or two terms of the largest basis (``G·H/A``, a product's width of grouped heads, on fewer points than
    the whole cubic basis needs), holding at twice :data:`~.fitting.SURPLUS` more distinct points than terms."""
    distinct = _distinct(points, values, names)
    if distinct is None:
        return None
    rows = [dict(k) for k in distinct]
    terms = list(dict.fromkeys(t for level in range(SPARSE_LEVELS) for t in basis(names, level, binary, layers)))
    for size in (1, 2) if len(terms) <= SPARSE_TERMS else (1,):  # pairs of many terms take long
        if size + 2 * SURPLUS > len(rows):
            return None
        for chosen in itertools.combinations(terms, size):
            solved = solve([[t.value(r) for t in chosen] for r in rows], [Fraction(v) for v in distinct.values()])
            if solved is not None:
                return {t: c for t, c in zip(chosen, solved[0]) if c != 0}
    return None


def _distinct_columns(points: list, names: list) -> list:
    """``names`` but those equal to an earlier one at every point (a relation keeps them equal: one is enough, and
    two equal columns are never independent)."""
    out = []
    for name in names:
        if not any(all(p[name] == p[kept] for p in points) for kept in out):
            out.append(name)
    return out


def _what(target: tuple) -> str:
    kind, key = target[0], target[1]
    where = f"{key[2]} #{key[1]} of {key[0] or 'the model'}" if kind in ("count", "factor") else \
        " ".join(map(str, key)) if isinstance(key, tuple) else key or "the model"
    return {"count": f"runs of {where}", "factor": f"factor {target[-1]} of {where}", "layers": f"layers of {where}",
            "dim": f"dimension {target[-1]} of {where}", "window": f"window of {where}",
            "extra": f"unmatched backward FLOPs of {where}"}[kind]


def _symbols(domain: Domain, inferred: Inferred) -> dict:
    """Each fit variable's symbol: the parameter formula's own, then the cost fields', then ``s`` and ``b``."""
    out = {**inferred.symbols, **inferred.flags}
    taken = set(out.values())
    for name, symbol in symbols_for([*inferred.symbols, *domain.cost_fields]).items():
        if name in domain.cost_fields:
            out[name] = symbol if symbol not in taken else sp.Symbol(name, integer=True, positive=True)
    out[S], out[B] = SEQ, BATCH
    if domain.chunk:
        out[chunks.CHUNKS] = domain.chunks_symbol(out)
    return out


def fitted(domain: Domain, samples: list, symbols: dict) -> dict:
    """Every target's formula, fitted on ``samples`` (the backward-only ones on the samples that traced it)."""
    out = {}
    kinds_vary = len({o.structure for _, o in samples}) > 1  # some traces lack a kind of layer the others have
    for target in samples[0][1].targets:
        used = [(domain.point(v, o), value) for v, o in samples if (value := _target_value(target, o)) is not None]
        lacked = len(used) > len([o for _, o in samples if target in o.targets])  # a kind some traces lack
        # a pattern of layers whose period is a field: the basis's floors have whole periods, and fitted on the
        # periods the traces drew they miss others (Jamba's one expert layer of 12 counted 2)
        runs = _per_instance(domain, target, samples, symbols, _not_linear)
        if runs is not None:
            out[target] = runs
            continue
        try:
            found = _fit_target(domain, target, [p for p, _ in used], [t for _, t in used], symbols,
                                domain.layer_counts() if lacked else frozenset())
        except Untraceable as exc:
            runs = _per_instance(domain, target, samples, symbols)
            if runs is not None:
                out[target] = runs
                continue
            if not kinds_vary or target[0] not in ("count", "layers"):
                raise
            # dots1's full-attention cache layers are min(L, max_window_layers): the traces with fewer layers than
            # the bound have no sliding ones, and no polynomial is a minimum
            bounds = " and ".join(_dependencies(domain, target))
            raise Untraceable(f"{exc}, in traces with and without layers of another kind (a count bounded by "
                              f"{bounds}, a minimum, is no polynomial)") from None
        out[target] = sp.expand(expression(found, symbols))
        if target[0] in ("factor", "dim") and not _whole_coefficients(out[target]):
            out[target] = _parameter_width(domain, target, used, symbols) or out[target]
    return out


def _not_linear(count: sp.Expr) -> bool:
    """Whether ``count`` has a floor or ceiling of a field (``⌊(L − o − 1)/p⌋``, Kimi Linear's ``⌈L/4⌉``
    full attention layers) or a product of two fields (MobileBERT's ``L·(N − 1)`` feed-forward blocks, N per
    layer): the traces hold few layers, where another period or a sum of the two fits the runs as well."""
    if any(f.free_symbols for f in count.atoms(sp.floor, sp.ceiling)):
        return True
    fields = sorted(count.free_symbols, key=str)
    return bool(fields and count.is_polynomial(*fields) and sp.Poly(count, *fields).total_degree() > 1)


def _per_instance(domain: Domain, target: tuple, samples: list, symbols: dict, kept=lambda count: True
                  ) -> sp.Expr | None:
    """A product's runs as the instances of a parameter of its module, in the count's own formula, times runs per
    instance fitted as any target is (a scan's steps run once per position): a pattern of layers the count found
    and no basis of the fit holds (Jamba's attention every 8th layer from the 5th, a Mamba mixer in the others).
    A cache tensor's layers likewise, as the instances of any parameter (a Mamba cache layer per mixer), or the
    layers of its stack without them (Kimi Linear's linear-attention layers: the first, dense, and those of
    experts other than the full-attention ones).  Only the counts ``kept`` takes are tried.  None where no
    parameter's instances divide the runs on every trace, or their quotient fits nothing."""
    if target[0] not in ("count", "layers"):
        return None
    names = {s: n for n, s in symbols.items()}
    module = target[1][0] if target[0] == "count" else ""
    # a field the costs hold (Qwen3-Next's decoder_sparse_step) is a number in them, not a symbol
    held = {s: sp.Integer(domain.held[n]) for s, n in names.items() if isinstance(domain.held.get(n), int)}
    owned = [p.count.xreplace(held) for p in domain.parameters if p.name.startswith(module + ".") or not module]
    if not module:  # a cache layer of the layers of several kinds: the stack's other layers than a kind's
        owned += [symbols[n] - c for n in sorted(domain.layer_counts()) if n in symbols for c in owned]
    for count in dict.fromkeys(c for c in owned if c.free_symbols and kept(c)):
        quotients = _quotients(domain, target, samples, count, names)
        if quotients:
            try:
                found = _fit_target(domain, target, [p for p, _ in quotients], [q for _, q in quotients], symbols)
            except Untraceable:
                continue
            return sp.expand(expression(found, symbols)) * count
    return None


def _quotients(domain: Domain, target: tuple, samples: list, count: sp.Expr, names: dict) -> list | None:
    """Each trace's point and its runs per instance of ``count`` (traces with no instance, and no run, left
    out); None where ``count`` does not divide the runs of some trace."""
    out = []
    # a trace outside a relation of the count on the fields of ``count`` (ERNIE 4.5's last expert layer drawn past
    # the layers) holds runs that are no instances of it; the other traces all tell (Jamba's expert layers' own
    # relation says nothing of its attention layers, and each trace more may refuse a wrong count)
    fields = {names[s] for s in count.free_symbols if s in names}
    for values, obs in [(v, o) for v, o in samples if not outside_count(domain, v, fields)]:
        runs, full = _target_value(target, obs), {**domain.start, **values}
        if runs is None or any(not isinstance(full.get(names.get(s)), int) for s in count.free_symbols):
            return None
        instances = int(count.xreplace({s: sp.Integer(full[names[s]]) for s in count.free_symbols}))
        if (runs and not instances) or (instances and runs % instances):
            return None
        if instances:
            out.append((domain.point(values, obs), runs // instances))
    return out


def _whole_coefficients(expr: sp.Expr) -> bool:
    return all(c.is_integer for c in sp.Poly(expr, *sorted(expr.free_symbols, key=str)).coeffs()) \
        if expr.free_symbols and expr.is_polynomial() else True


def _parameter_width(domain: Domain, target: tuple, used: list, symbols: dict) -> sp.Expr | None:
    """A width fitted with a fractional coefficient (``F/2``) as the parameters' own width of the fields that
    move it (``⌊F/2⌋``), where one fits the traces with whole coefficients; None where none does.  The fit's
    traces keep the fields on multiples of their bases, where the two are equal; off them (an odd ``F``) a
    tensor's width is a whole number, and the parameter count, verified there, says which.  It must hold on as
    many traces as the fractional fit did (the same surplus of points over terms).  A whole dimension of a
    parameter is tried first: on the fit's even head widths ZAYA's ``⌊G·D/2⌋`` value width is ``G·⌊D/2⌋``
    too, one of its terms, and only the whole dimension holds at an odd ``D``."""
    points, values, names = [p for p, _ in used], [v for _, v in used], _dependencies(domain, target)
    found = None
    for terms in (domain.dimensions, domain.widths):
        found = found or fit_widths(points, values, names, terms, symbols, whole=True, surplus=SURPLUS)
    return None if found is None else sp.expand(expression(found, symbols))


def _target_value(target: tuple, obs: Observed) -> int | None:
    """A target's value in a trace: 0 runs or layers of a product or cache tensor of a kind of layers it lacks; None
    where it does not tell (a width of a tensor it lacks, a backward it did not trace)."""
    if target in obs.targets:
        return obs.targets[target]
    return 0 if target[0] in ("count", "layers") and target[1] not in obs.structure else None


def _weight_inputs(factors: tuple) -> sp.Expr:
    """A convolution's weight's input channels (its factors: batch, output positions, then the weight's shape)."""
    positions = (len(factors) - 3) // 2
    return factors[2 + positions]


def backward_of(samples: list, formulas: dict, chunk_of=None, chunks_symbol: sp.Expr | None = None) -> dict:
    """Each product's backward FLOPs (all its runs), as a formula: ``α`` times its forward (2: both factors
    need a gradient, 1, 0), plus for a convolution ``β`` times its forward × its input channels / its weight's
    (the weight's gradient is a convolution over the batch, grouped or not), plus for a loop run once per chunk
    (see :mod:`.chunks`) ``γ`` times one run's forward (the last run's result may need no gradient), ``α``,
    ``β`` and ``γ`` solved exactly on every trace of the backward.  ``chunk_of(values)``: a sample's chunk (None
    without chunks); ``chunks_symbol``: their number."""
    chunk_of = chunk_of or (lambda values: None)
    out = {}
    for target in [t for t in formulas if t[0] == "count"]:
        key = target[1]
        factors = [formulas["factor", key, i] for i in range(len([t for t in formulas if t[:2] == ("factor", key)]))]
        forward = sp.expand(2 * formulas[target] * sp.Mul(*factors))
        grouped = sp.expand(forward * formulas["channels", key] / _weight_inputs(factors)) \
            if ("channels", key) in formulas else None
        looped = _looped([(obs, chunk_of(v)) for v, obs in samples], key)
        rows, seen = [], []
        for values, obs in samples:
            if obs.backward is None or key not in obs.by_key:
                continue
            f, b = obs.by_key[key]
            row = [Fraction(f)]
            if grouped is not None:
                inputs = obs.targets["factor", key, 2 + (len(factors) - 3) // 2]
                row.append(Fraction(f * obs.targets["channels", key], inputs))
            if looped:
                row.append(Fraction(f, chunks.count(obs.seq, chunk_of(values))))
            rows.append(row)
            seen.append(Fraction(b))
        solved = solve(rows, seen) if rows else None
        if solved is None:
            raise Untraceable(f"the backward of {key[2]} #{key[1]} of {key[0] or 'the model'} is not a fixed "
                              f"multiple of its forward")
        (alpha, *rest), _ = solved
        gamma = rest.pop() if looped else 0
        out[key] = sp.expand(_rational(alpha) * forward + (_rational(rest[0]) * grouped if rest else 0)
                             + (_rational(gamma) * forward / chunks_symbol if looped else 0))
    return out


def _looped(traced: list, key: tuple) -> bool:
    """Whether ``key`` is a loop folded in some trace (see :func:`.observing.fold_loops`) of ``traced`` (each with
    its chunk, None without); it must run once per chunk in every trace."""
    runs = [(obs.loops.get(key, 1), obs.seq, size) for obs, size in traced if key in obs.by_key]
    if all(n == 1 for n, _, _ in runs):
        return False
    if any(size is None or n != chunks.count(seq, size) for n, seq, size in runs):
        raise Untraceable(f"a loop of {key[2]} #{key[1]} of {key[0] or 'the model'} runs other than once per chunk")
    return True


def _rational(value: Fraction) -> sp.Rational:
    return sp.Rational(value.numerator, value.denominator)


def assemble(formulas: dict, backward: dict, weights: dict) -> tuple[tuple, tuple, tuple | None]:
    """The traced products, the unmatched backward FLOPs and the cache tensors, from the fitted targets."""
    products, extra, cache = [], [], {}
    for target, expr in formulas.items():
        if target[0] == "count":
            key = target[1]
            n = len([t for t in formulas if t[0] == "factor" and t[1] == key])
            factors = tuple(formulas["factor", key, i] for i in range(n))
            products.append(TracedProduct(key[0], key[1], key[2], expr, factors, backward[key],
                                          weights.get(key, False)))
        elif target[0] == "extra":
            extra.append((target[1], expr))
        elif target[0] == "layers":
            key = target[1]
            n = len([t for t in formulas if t[0] == "dim" and t[1] == key])
            shape = tuple(formulas["dim", key, i] for i in range(n))
            cache[key] = HeldTensor(key[0], key[1], key[2], expr, shape, formulas.get(("window", key)))
    return tuple(products), tuple(extra), tuple(cache[k] for k in sorted(cache))
