"""FLOPs and caches of an inferred class, inferred from traced passes the way its count is inferred from builds.

The parameter inference's discovery gives the size fields, their relations
and the base configuration.  Here each field is moved once more (and the
fields that change no shape, which may still change the costs: a top-k, a
sliding window) and the pass traced on the meta device (:mod:`.tracing`),
to see which targets (:mod:`.observing`) each field, the sequence length
``s`` and the batch ``b`` move.  Random configurations, lengths and batches
are traced, every target is fitted exactly over the variables that move it
(:mod:`.fitting`'s bases), and the formulas are checked against fresh traces
module by module: forward FLOPs, backward FLOPs and the cache, at a length
past every sliding window too.  Anything not exact leaves the class's costs
"not inferred", with the reason.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import sympy as sp

from ...core.compute import BATCH, SEQ
from . import chunks
from .cost_result import HeldTensor, TracedProduct
from ...families.inferred_widths import names_of
from .discovered import Discovery
from .fitting import LEVELS, SPARSE_LEVELS, SURPLUS, basis, expression, fit, products_of_names, solve
from .observing import Observed, observe
from .probing import Builder, libraries, observation_of
from .real_tensors import reads_data, routed_together, zero_weights
from .result import Inferred, symbols_for
from .sampling import _Regimes, below_minimum, divisor, draw, layer_floor, too_deep, variables
from .tracing import Untraceable, build, trace
from .widths import fit_widths

#: random configurations the formulas are fitted on per round (the layer counts low; only the layer counts
#: random), fresh ones they are checked on
WIDTH_TRACES = 16
LAYER_TRACES = 8
VERIFY_TRACES = 8
#: fits tried, each on as many traces again as the last (a formula that does not fit, or not verify, on few)
ROUNDS = 2
#: the most layers a layer count has in a trace (a trace costs time per layer)
VERIFY_LAYERS = 12
#: every this many fit traces, the backward pass is traced too (a product's backward per forward FLOP is a
#: constant: the other traces need not repeat it)
BACKWARD_EVERY = 3
#: the base trace's length and batch, and the ranges random ones are drawn from (below any sliding window)
BASE_SEQ, BASE_BATCH = 7, 2
SEQ_RANGE, BATCH_RANGE = (3, 23), (1, 3)
#: the fit's names of the sequence length and the batch (no config field is spelled so)
S, B = "<s>", "<b>"
#: a draw is retried at most this many times per wanted trace
ATTEMPTS = 4
#: the most terms whose pairs a sparse fit tries
SPARSE_TERMS = 80
#: the bases a target tries with one variable more than those that move it (see the parameter engine)
UP_TO_FLOORS = LEVELS.index(("constant", "linear", "quadratic", "floor"))


class Domain:
    """Where the costs are traced: the parameter discovery's domain, the fields only the costs follow, the fields
    they hold, and which targets each variable moves."""

    def __init__(self, builder: Builder, found: Discovery):
        self.builder, self.found = builder, found
        self.regimes = _Regimes(builder, found)
        self.cost_fields: dict[str, int] = {}  # fields that change no shape but some cost → their base value
        self.held: dict = {}  # fields (and flags) that change the costs and cannot be variables → their value
        self.effects: dict[str, set] = {}  # variable → the targets it moves
        self.traces = 0
        self.errors: list[str] = []
        self.backward_everywhere = False  # backward FLOPs no forward product spends: traced in every pass
        self.relations: set = set()  # relations only the forward pass needs (f ⊑ g)
        self.low: dict = {}  # the layer counts most traces keep (see lowest_layers)
        self.start: dict = {}  # the configuration the fields are moved from
        self.steady: dict = {}  # fields that change how products are split, not what they cost: held in the fit
        self.quiet: dict = {}  # fields seen to change no cost → the value they were moved to
        self.seen_layers: set = set()  # the layer counts traced for the fit
        self.together = False  # a forward with the cache has the products of one without: one pass for both
        self.by_names = False  # layers of other parameter names are of other kinds (see tracing.module_paths)
        self.widths: set = set()  # the terms of the parameters' dimensions (see widths.py)
        self.device = "meta"  # "cpu": the model reads its data, traced on real tensors (see real_tensors.py, cpu_base.py)
        self.seed: int | None = None  # the CPU's weights and token ids (None: each trace its own)
        self.zeroed = False  # every weight zero (see real_tensors.data_independent)
        self.experts_loop = False  # each expert's products taken together (see real_tensors.routed_together)
        self.divides: dict = {}  # cost field → the free field it must divide (see _divided)
        self.chunk: int | None = None  # a kernel's chunk of positions (see chunks.py); its loops folded
        self.loops = False  # a loop of several products in one call folded into one run of each
        self.kinds_appear = False  # layers of a kind the fewest layers lack appear with more (see _with_every_kind)

    @property
    def seq_range(self) -> tuple[int, int]:
        """The range the traces' lengths are drawn from: over a few chunks of a chunked kernel."""
        return chunks.lengths(self.chunk) if self.chunk else SEQ_RANGE

    @property
    def names(self) -> list[str]:
        return [*self.found.free, *self.found.flag_variables, *self.cost_fields, S, B,
                *([chunks.CHUNKS] if self.chunk else [])]

    @property
    def binary(self) -> frozenset:
        return frozenset(self.found.flag_variables)

    def layer_counts(self) -> frozenset:
        """The variables that change how many times something runs (layer counts, expert counts)."""
        return frozenset(n for n, targets in self.effects.items()
                         if any(t[0] in ("count", "layers") for t in targets) and n not in (S, B))

    def point(self, values: dict, obs: Observed) -> dict:
        out = variables(self.found, values)
        out.update({n: values.get(n, base) for n, base in self.cost_fields.items()})
        out[S], out[B] = obs.seq, obs.batch
        if self.chunk:
            out[chunks.CHUNKS] = chunks.count(obs.seq, self.chunk)
        return out

    def observe(self, values: dict, seq: int, batch: int, backward: bool = False, regime: bool = True,
                decoder_seq: int | None = None, beyond: bool = False, steady: bool = True) -> Observed | None:
        """The targets of ``values`` traced at ``seq`` and ``batch`` (None: it does not build, trace or keep the
        base structure of parameters; or, unless ``beyond``, a sliding window is shorter than ``seq``); the fields
        that only split products held (``steady``)."""
        values = {**{n: self.found.flags[n].base for n in self.found.flag_variables}, **values,
                  **(self.steady if steady else {})}
        self.traces += 1
        try:
            config = self.builder.config({**values, **self.held})
            seed = self.traces if self.seed is None else self.seed
            model = build(self.builder.model_class, config, self.device, seed)
            if self.zeroed:
                zero_weights(model)
            if regime and observation_of(model).regime != self.regimes.of(values):
                return None
            traced = trace(model, seq, batch, self.device, backward=backward or self.backward_everywhere,
                           decoder_seq=decoder_seq, together=self.together and steady, by_names=self.by_names,
                           seed=seed)
            obs = observe(routed_together(traced) if self.experts_loop else traced, self.loops)
        except Untraceable:
            raise
        except Exception as exc:  # whatever the modeling code raises on this configuration: it does not trace
            text = f"{type(exc).__name__}: {exc}".splitlines()
            self.errors.append(text[0][:200] if text else type(exc).__name__)
            return None
        if not beyond and any(w - 1 < seq for w in obs.windows):
            return None
        return obs


# -- discovery ---------------------------------------------------------------------------------------------

def _moves(found: Discovery, name: str, start: dict) -> list[dict]:
    """The moves of a field from ``start``: a free one as the parameter discovery moved it (with the fields a
    relation moves with it), any other by one up or down first (a top-k must stay below the expert count), then
    ×3."""
    f, value = found.fields[name], start[name]
    scaled = {g: start[g] * 3 for g in _closure(found, name)}
    if f.kind == "free" and f.step == "scale":
        return [scaled, {name: value + 1}]
    return [{name: value + 1}] + ([{name: value - 1}] if value > 1 else []) + ([scaled] if value > 0 else [])


def _partner(domain: Domain, base: Observed, name: str, start: dict) -> bool:
    """A field that traces when multiplied only with another (kv heads dividing heads, a rotary width equal to a
    head width no shape follows: a build does not need it, the forward pass does): the relation ``name ⊑
    partner`` (both ways when their values are equal), so that random configurations respect it.  Each partner
    is tried with ``name`` alone, then with the fields a relation moves with ``name`` (heads dividing the width
    keep dividing it)."""
    found = domain.found
    own = {g: start[g] * 3 for g in _closure(found, name)}
    for other, g in found.fields.items():
        if other == name or g.kind not in ("free", "irrelevant") or not isinstance(start[other], int) \
                or start[other] <= 0:
            continue
        for kept in ({name: own[name]}, own) if len(own) > 1 else ({name: own[name]},):
            move = {**kept, **{h: start[h] * 3 for h in _closure(found, other) - set(kept)}}
            obs = domain.observe({**start, **move}, BASE_SEQ, BASE_BATCH)
            if obs is not None and obs.structure == base.structure:
                apart = _apart(domain, base, name, move, set(kept))
                domain.effects[name] = _changed(base, obs) | (apart or set())
                # equal values that must stay equal (a rotary width and a head width) do not trace further apart
                equal = start[other] == start[name] and apart is None
                pairs = {(name, other)} | ({(other, name)} if equal else set())
                found.relations |= pairs
                domain.relations |= pairs
                return True
    return False


#: the factor a field that traces only at multiples is moved by to find what it divides (a prime that a base's
#: ratio rarely holds already; 11 when 7 does)
DIVIDING = (7, 11)


def _divided(domain: Domain, base: Observed, name: str, start: dict) -> None:
    """A field only the costs follow that traces at ×3 but not one up or down (GPT-NeoX's head count, which no
    parameter shape follows but the forward pass splits the width by): the free field it must divide, found as
    the one that, moved by a prime with it, traces where it alone does not; the relation ``name ⊑ partner``, so
    that random configurations draw it among the divisors of its partner (see :func:`_draw`)."""
    found, value = domain.found, start[name]
    for k in DIVIDING:
        alone = domain.observe({**start, name: value * k}, BASE_SEQ, BASE_BATCH)
        if alone is not None and alone.structure == base.structure:
            continue  # the ratio holds k already: no evidence of what it divides
        for other, g in found.fields.items():
            if other == name or g.kind != "free" or not isinstance(start[other], int) or start[other] <= 0:
                continue
            move = {name: value * k, **{h: start[h] * k for h in _closure(found, other)}}
            obs = domain.observe({**start, **move}, BASE_SEQ, BASE_BATCH)
            if obs is not None and obs.structure == base.structure:
                found.relations.add((name, other))
                domain.relations.add((name, other))
                domain.divides[name] = other
                return
        return


def _closure(found: Discovery, name: str) -> set:
    """``name`` and every field a relation makes move with it (``f ⊑ g``: g's multiplier is a multiple of f's)."""
    out, todo = {name}, [name]
    while todo:
        f = todo.pop()
        for a, g in found.relations:
            if a == f and g not in out:
                out.add(g)
                todo.append(g)
    return out


#: a length shorter than any kernel: LFM2's default kernel is as long as the shortest length the fit draws
SHORTEST = 2


def _together(domain: Domain, start: dict, base: Observed) -> bool:
    """Whether a forward with the cache runs the products of one without, at the base and at two short lengths (a
    convolution may pad a short input to its kernel when it caches): then one pass traces both."""
    lengths = (BASE_SEQ, SEQ_RANGE[0], SHORTEST)
    alone = [base, *(domain.observe(start, seq, BASE_BATCH) for seq in lengths[1:])]
    domain.together = True
    same = [domain.observe(start, seq, BASE_BATCH, backward=seq == BASE_SEQ) for seq in lengths]
    domain.together = False
    return all(o is not None and (o.targets, o.by_key) == (b.targets, b.by_key) for o, b in zip(same, alone)
               if b is not None)


#: words of a field that may set a pattern of layers (one full-attention layer in every few): with few layers its
#: move may change nothing, so it is moved again with more
PATTERNS = ("pattern", "period", "interval", "step", "every", "freq", "layer", "offset", "sparse")


def _with_more_layers(domain: Domain, name: str, move: dict) -> set:
    """What moving ``name`` changes with every layer count at :data:`VERIFY_LAYERS`, or else only the deepest (the
    dense layers first stay below the others); empty when nothing, or when neither traces with one structure."""
    for raised in (domain.low, _deepest(domain.found, domain.start)):
        many = {**domain.start, **{n: VERIFY_LAYERS for n in raised}}
        try:
            before, after = (domain.observe(v, BASE_SEQ, BASE_BATCH) for v in (many, {**many, **move}))
        except Untraceable:  # layers of several kinds appear: the fit will see them, or refuse
            return set()
        if before is not None and after is not None and before.structure == after.structure:
            return _changed(before, after)
    return set()


def _apart(domain: Domain, base: Observed, name: str, move: dict, kept: set = frozenset()) -> set | None:
    """What a field moves through a ratio: moved with its partners by one multiplier, ``H/A`` stays put; the
    partners three times further show it, the fields ``kept`` where ``move`` has them (None: that does not trace
    with the base structure)."""
    if len(move) < 2:
        return set()
    further = {**move, **{g: v * 3 for g, v in move.items() if g != name and g not in kept}}
    obs = domain.observe({**domain.start, **further}, BASE_SEQ, BASE_BATCH)
    return _changed(base, obs) if obs is not None and obs.structure == base.structure else None


def _changed(a: Observed, b: Observed) -> set:
    return {t for t in a.targets.keys() | b.targets.keys() if a.targets.get(t) != b.targets.get(t)}


def discover_costs(builder: Builder, found: Discovery, on_real_tensors=None) -> tuple[Domain, Observed]:
    """Which targets each variable moves, from one trace per field moved at the base with its layer counts
    lowered; and the base trace (with its backward).  ``on_real_tensors(domain)``: the base traced on the CPU
    where the meta device cannot run the forward pass because it reads its data (see :mod:`.cpu_base`)."""
    domain = Domain(builder, found)
    try:
        base = domain.observe(found.base, BASE_SEQ, BASE_BATCH, backward=True)
    except Untraceable as exc:  # a hybrid stack: its layers' kinds by the names of their parameters
        if "differ between its copies" not in str(exc):
            raise
        domain.by_names = True
        base = domain.observe(found.base, BASE_SEQ, BASE_BATCH, backward=True)
    if base is None and on_real_tensors and domain.errors and reads_data(domain.errors[-1]):
        base = on_real_tensors(domain)
    if base is None:
        raise Untraceable("the base configuration does not trace: " + (domain.errors[-1] if domain.errors else
                                                                        "a sliding window shorter than the base length"))
    domain.backward_everywhere = bool(base.extra)
    base = _with_every_kind(domain, base)
    domain.low = lowest_layers(domain, base)
    start = domain.start = {**{n: f.base for n, f in found.fields.items()}, **found.base, **domain.low}
    base = domain.observe(start, BASE_SEQ, BASE_BATCH, backward=True)
    domain.together = _together(domain, start, base)
    for name, f in found.fields.items():
        if f.kind not in ("free", "irrelevant") or not isinstance(start[name], int):
            continue
        if not _moved(domain, base, name, start):
            if f.kind == "free":
                raise Untraceable(f"no move of {name} traces with the base structure")
            if f.kind == "irrelevant":  # no shape follows it, but the forward pass needs its value: the costs hold it
                domain.held[name] = start[name]
    _, transformers = libraries()
    common = set(transformers.PretrainedConfig().to_dict())  # return_dict, output_attentions, ...: no architecture
    for name, flag in found.flags.items():
        if name in common and not flag.free:
            continue
        obs = domain.observe({**start, name: not flag.base}, BASE_SEQ, BASE_BATCH)
        moved = None if obs is None or obs.structure != base.structure else _changed(base, obs)
        if flag.free and moved is not None:
            domain.effects[name] = moved
        elif flag.free or moved or (obs is not None and moved is None):
            # a flag whose other value changes the costs other than as a 0/1 variable (or does not trace): the
            # costs hold for its default
            domain.held[name] = flag.base
    longer = None  # the trace at the longer length, where a chunked kernel is looked for
    for var, seq, batch in ((S, BASE_SEQ + 4, BASE_BATCH), (B, BASE_SEQ, BASE_BATCH + 1)):
        obs = domain.observe(start, seq, batch)
        if obs is None or obs.structure != base.structure:
            raise Untraceable(f"another {'length' if var == S else 'batch'} changes the traced structure")
        domain.effects[var] = _changed(base, obs)
        longer = obs if var == S else longer
    if domain.device == "meta":
        chunks.look_for_chunks(domain, start, base, longer)
    for name in domain.held.keys() & found.flags.keys():
        found.flags[name].kind = "fixed"
    # a field a relation found here ties to a layer count stays with it
    domain.low = {**{n: start[n] for n in layer_fields(found)}, **domain.low}
    domain.seen_layers.add(tuple(sorted(domain.low.items())))
    return domain, base


def _moved(domain: Domain, base: Observed, name: str, start: dict) -> bool:
    """Whether a move of ``name`` traces with the base structure, its effects (or what it is to the costs: a
    cost field, a chunk size, quiet) recorded; a free field none of whose moves traces, whether it does with a
    partner (see :func:`_partner`).  A scaled field whose ×3 move does not trace looks for its partner before
    its other moves: the fit's draws move it by multiples only, so a move by one that traces (129 heads over 128
    key/value heads still repeat the keys once, by a floor) says nothing of them."""
    found = domain.found
    f = found.fields[name]
    partnered = f.kind == "free"  # a partner is still to be looked for
    moves = _moves(found, name, start)
    for i, move in enumerate(moves):
        obs = domain.observe({**start, **move}, BASE_SEQ, BASE_BATCH)
        if obs is None or obs.structure != base.structure:
            if i == 0 and partnered and f.step == "scale":
                if _partner(domain, base, name, start):
                    return True
                partnered = False
            continue
        moved = _changed(base, obs) | (_apart(domain, base, name, move) or set())
        if not moved and f.kind == "irrelevant" and any(w in name for w in PATTERNS):
            moved = _with_more_layers(domain, name, move)
        if f.kind == "irrelevant" and moved and obs.forward == base.forward \
                and all(t[0] in ("count", "factor", "channels") for t in moved):
            domain.steady[name] = start[name]  # a chunk size: the same FLOPs in more products
        elif f.kind == "irrelevant" and moved:
            domain.cost_fields[name] = f.base
            if 0 < i == len(moves) - 1:  # only ×3 traced: a head count that must divide a width
                _divided(domain, base, name, start)
        elif f.kind == "irrelevant":
            domain.quiet[name] = move[name]  # moved so in the verification: no cost may follow it
        if f.kind == "free" or name in domain.cost_fields:
            domain.effects[name] = moved
        return True
    return partnered and _partner(domain, base, name, start)


# -- sampling ---------------------------------------------------------------------------------------------

def _layer_counts(found: Discovery) -> set:
    """The layer counts: fields named for layers that change how many times something runs."""
    return {n for n, f in found.fields.items() if f.free and f.counts and "layer" in n}


def _deepest(found: Discovery, values: dict) -> set:
    """The layer counts largest in ``values``: a smaller one is likely some of their layers (the dense ones first)."""
    counts = {n: values.get(n, found.fields[n].base) for n in _layer_counts(found)}
    top = max(counts.values(), default=None)
    return {n for n, v in counts.items() if v == top}


def layer_fields(found: Discovery) -> set:
    """The layer counts, and the fields a relation ties to them (dense layers below the layer count): a trace
    costs time per layer, so most traces keep these low."""
    out = _layer_counts(found)
    for a, b in found.relations:
        if a in out or b in out:
            out |= {a, b}
    return out


def _with_every_kind(domain: Domain, base: Observed) -> Observed:
    """The base with its deepest layer counts raised to the fewest that hold every kind of layer more hold (Gemma 3:
    a full-attention layer in every 6, the others sliding): the fields are moved where every kind shows."""
    found = domain.found
    counts = sorted(_deepest(found, found.base))
    deepest = range(max([found.base.get(n, 0) for n in counts] or [VERIFY_LAYERS]) + 1, VERIFY_LAYERS + 1)
    many = deepest and domain.observe({**found.base, **{n: VERIFY_LAYERS for n in counts}}, BASE_SEQ, BASE_BATCH)
    if not many or not many.structure > base.structure:
        return base
    for value in deepest:
        raised = {n: max(value, found.base.get(n, 0)) for n in counts}
        obs = domain.observe({**found.base, **raised}, BASE_SEQ, BASE_BATCH, backward=True)
        if obs is not None and obs.structure == many.structure:
            found.base.update(raised)
            domain.kinds_appear = True
            return obs
    return base


def lowest_layers(domain: Domain, base: Observed) -> dict:
    """The base's layer counts, each lowered to the fewest layers (1 or 2) that keep the traced structure."""
    found = domain.found
    floor = layer_floor(found)
    low = {n: found.base.get(n, found.fields[n].base) for n in layer_fields(found)}
    for name in sorted(low):
        for value in (1, 2):
            if value >= low[name]:
                break
            if value < floor.get(name, 1):  # the count holds from there up (a branch, a pattern's first layers)
                continue
            obs = domain.observe({**found.base, **low, name: value}, BASE_SEQ, BASE_BATCH)
            if obs is not None and obs.structure == base.structure:
                low[name] = value
                break
    return low


def _draw(domain: Domain, rng: random.Random, wide: bool = False, every: bool = False) -> tuple[dict, int, int]:
    found = domain.found
    values = draw(found, rng, wide, lattice=True)
    for name, base in domain.cost_fields.items():
        if name in domain.divides:
            values[name] = divisor(base, values[domain.divides[name]], rng, 10 if wide else 8)
        else:
            values[name] = max(1, base + rng.randint(-2, 2))
    if every:  # the fields no cost was seen to follow, each half of the time as it was moved then
        for name, value in [*found.lifted.items(), *domain.quiet.items()]:
            if rng.random() < 0.5:
                values[name] = value
    return values, rng.randint(*domain.seq_range), rng.randint(*BATCH_RANGE)


def _allowed(domain: Domain, values: dict, fitting: bool) -> bool:
    found = domain.found
    if too_deep(found, values) or below_minimum(found, values):
        return False
    if any(values.get(n, 0) > VERIFY_LAYERS for n in domain.low):
        return False
    return not fitting or not any(values[n] == v for n, v in found.lifted.items())


def fit_samples(domain: Domain, base: Observed, rng: random.Random, width: int = WIDTH_TRACES,
                layer: int = LAYER_TRACES) -> list[tuple[dict, Observed]]:
    """Traces of the base structure for the fit: ``width`` random configurations, lengths and batches with the
    layer counts low (every :data:`BACKWARD_EVERY`-th with its backward), then ``layer`` with only the layer
    counts random, each combination once (fewer when too many are refused)."""
    out = []
    for _ in range(ATTEMPTS * width):
        if len(out) == width:
            break
        values, seq, batch = _draw(domain, rng)
        values.update(domain.low)
        if _allowed(domain, values, True):
            obs = domain.observe(values, seq, batch, backward=len(out) % BACKWARD_EVERY == 0)
            if obs is not None and obs.structure == base.structure:
                out.append((values, obs))
    layers, seen = [], domain.seen_layers
    for _ in range(ATTEMPTS * layer if domain.low else 0):
        if len(layers) == layer:
            break
        # every layer count drawn on its own (not as multiples of the base): a pattern of layers shows as such
        floor = layer_floor(domain.found)
        values = {**domain.found.base, **domain.low,
                  **{n: rng.randint(min(floor.get(n, 1), VERIFY_LAYERS), VERIFY_LAYERS) for n in domain.low}}
        combination = tuple(sorted((n, values[n]) for n in domain.low))
        if combination not in seen and _allowed(domain, values, True):  # a layer count seen twice tells nothing
            seen.add(combination)
            # a random length too: a count may grow with both (a scan over the positions of every layer)
            obs = domain.observe(values, rng.randint(*domain.seq_range), rng.randint(*BATCH_RANGE))
            if obs is not None and (obs.structure == base.structure
                                    or domain.kinds_appear and obs.structure < base.structure):
                layers.append((values, obs))
    return out + layers


# -- fitting ------------------------------------------------------------------------------------------------

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
        # floor((n + j)/c) for j < c, add up to n, so no level with a shifted period ever is
        result = fit(points, values, deeper, domain.binary, len(LEVELS) - 1, layers,
                     independent=not set(deeper) <= layers)
    if result is None:
        result = products_of_names(points, values, own)
    if result is None:
        raise Untraceable(f"no exact formula for the {_what(target)}")
    return result


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
        out[chunks.CHUNKS] = chunks.symbol(domain.chunk)
    return out


def fitted(domain: Domain, samples: list, symbols: dict) -> dict:
    """Every target's formula, fitted on ``samples`` (the backward-only ones on the samples that traced it)."""
    out = {}
    for target in samples[0][1].targets:
        used = [(domain.point(v, o), value) for v, o in samples if (value := _target_value(target, o)) is not None]
        lacked = len(used) > len([o for _, o in samples if target in o.targets])  # a kind some traces lack
        found = _fit_target(domain, target, [p for p, _ in used], [t for _, t in used], symbols,
                            domain.layer_counts() if lacked else frozenset())
        out[target] = sp.expand(expression(found, symbols))
    return out


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


def backward_of(samples: list, formulas: dict, chunk: int | None = None) -> dict:
    """Each product's backward FLOPs (all its runs), as a formula: ``α`` times its forward (2: both factors
    need a gradient, 1, 0), plus for a convolution ``β`` times its forward × its input channels / its weight's
    (the weight's gradient is a convolution over the batch, grouped or not), plus for a loop run once per chunk
    (see :mod:`.chunks`) ``γ`` times one run's forward (the last run's result may need no gradient), ``α``,
    ``β`` and ``γ`` solved exactly on every trace of the backward."""
    out = {}
    for target in [t for t in formulas if t[0] == "count"]:
        key = target[1]
        factors = [formulas["factor", key, i] for i in range(len([t for t in formulas if t[:2] == ("factor", key)]))]
        forward = sp.expand(2 * formulas[target] * sp.Mul(*factors))
        grouped = sp.expand(forward * formulas["channels", key] / _weight_inputs(factors)) \
            if ("channels", key) in formulas else None
        looped = _looped(samples, key, chunk)
        rows, seen = [], []
        for _, obs in samples:
            if obs.backward is None or key not in obs.by_key:
                continue
            f, b = obs.by_key[key]
            row = [Fraction(f)]
            if grouped is not None:
                inputs = obs.targets["factor", key, 2 + (len(factors) - 3) // 2]
                row.append(Fraction(f * obs.targets["channels", key], inputs))
            if looped:
                row.append(Fraction(f, chunks.count(obs.seq, chunk)))
            rows.append(row)
            seen.append(Fraction(b))
        solved = solve(rows, seen) if rows else None
        if solved is None:
            raise Untraceable(f"the backward of {key[2]} #{key[1]} of {key[0] or 'the model'} is not a fixed "
                              f"multiple of its forward")
        (alpha, *rest), _ = solved
        gamma = rest.pop() if looped else 0
        out[key] = sp.expand(_rational(alpha) * forward + (_rational(rest[0]) * grouped if rest else 0)
                             + (_rational(gamma) * forward / chunks.symbol(chunk) if looped else 0))
    return out


def _looped(samples: list, key: tuple, chunk: int | None) -> bool:
    """Whether ``key`` is a loop folded in some trace (see :func:`.observing.fold_loops`); it must run once per
    chunk in every trace."""
    runs = [(obs.loops.get(key, 1), obs.seq) for _, obs in samples if key in obs.by_key]
    if all(n == 1 for n, _ in runs):
        return False
    if chunk is None or any(n != chunks.count(seq, chunk) for n, seq in runs):
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
