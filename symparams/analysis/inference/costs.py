"""FLOPs and caches of an inferred class, inferred from traced passes the way its count is inferred from builds.

The parameter inference's discovery gives the size fields, their relations
and the base configuration.  Here each field is moved once more (and the
fields that change no shape, which may still change the costs: a top-k, a
sliding window) and the pass traced on the meta device (:mod:`.tracing`),
to see which targets (:mod:`.observing`) each field, the sequence length ``s`` and the batch ``b`` move.
Random configurations, lengths and batches are traced, every target is fitted exactly over the variables that
move it (:mod:`.fitting`'s bases, in :mod:`.cost_fitting`), and the formulas are checked against fresh traces
module by module: forward FLOPs, backward FLOPs and the cache, at a length past every sliding window too.
Anything not exact leaves the class's costs "not inferred", with the reason.
"""

from __future__ import annotations

import copy
import itertools
import random

import sympy as sp

from . import chunks
from .cost_keying import keyed_apart
from .cost_layers import BASE_BATCH, BASE_SEQ, VERIFY_LAYERS, _deepest, _with_every_kind, layer_fields, lowest_layers
from .discovered import Discovery, Field
from .cost_orders import off_multiples, ordered, outside_count
from .discovery import UNSET_TRIES
from .observing import Observed, observe
from .probing import Builder, libraries, observation_of
from .products import balanced, beside_product, in_product, tied
from .real_tensors import reads_data, routed_together, zero_weights
from .regular import regular_widths
from .sampling import _Regimes, below_minimum, divisor, draw, layer_floor, too_deep, variables
from .tracing import CachedPassFailed, Untraceable, build, trace

#: random configurations the formulas are fitted on per round (the layer counts low; only the layer counts
#: random), fresh ones they are checked on
WIDTH_TRACES = 16
LAYER_TRACES = 8
VERIFY_TRACES = 8
#: fits tried, each on as many traces again as the last (a formula that does not fit, or not verify, on few)
ROUNDS = 2
#: every this many fit traces, the backward pass is traced too (a product's backward per forward FLOP is a
#: constant: the other traces need not repeat it)
BACKWARD_EVERY = 3
#: the ranges random lengths and batches are drawn from (below any sliding window)
SEQ_RANGE, BATCH_RANGE = (3, 23), (1, 3)
#: the fit's names of the sequence length and the batch (no config field is spelled so)
S, B = "<s>", "<b>"
#: a draw is retried at most this many times per wanted trace
ATTEMPTS = 4


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
        self.by_calls = False  # a module's calls within one call of its parent keyed apart (see observing._products)
        self.positions: dict[str, int] = {}  # lists whose layers are keyed by their place → its period (cost_keying)
        self.widths: set = set()  # the terms of the parameters' dimensions (see widths.py)
        self.dimensions: set = set()  # the parameters' whole dimensions
        self.parameters: tuple = ()  # the count's parameters, each's instances a formula (see cost_fitting)
        self.device = "meta"  # "cpu": the model reads its data, traced on real tensors (see real_tensors.py, cpu_base.py)
        self.seed: int | None = None  # the CPU's weights and token ids (None: each trace its own)
        self.zeroed = False  # every weight zero (see real_tensors.data_independent)
        self.experts_loop = False  # each expert's products taken together (see real_tensors.routed_together)
        self.divides: dict = {}  # cost field → the free field it must divide (see _divided)
        self.orders: set = set()  # relations (f, g) traced as orders, not divisibility (see cost_orders.py)
        self.products: list = []  # (left, right): products of fields only the forward pass needs equal
        self.chunk: int | None = None  # a kernel's chunk of positions (see chunks.py); its loops folded
        self.chunk_field: str | None = None  # the cost field the chunk is the value of (see chunks.follows_field)
        self.chunk_offset = 0  # what the chunk adds to its field's value (see chunks.OFFSETS)
        self.loops = False  # a loop of several products in one call folded into one run of each
        self.kinds_appear = False  # layers of a kind the fewest layers lack appear with more (see _with_every_kind)
        self.regular: list = []  # the head widths the costs hold at, where the smallest run another way (regular.py)
        self.cache_fails: str | None = None  # why a forward with use_cache=True fails: traced without the cache
        self.count_relations: tuple = ()  # the count's relations (result.Relation): where its formula holds
        self.least: dict = {}  # layer counts the costs hold from (see least_layers)
        self.bounds: set = set()  # (layer count, bound): held at least the layers (see cost_engine._bounds_the_default_meets)

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
            out[chunks.CHUNKS] = chunks.count(obs.seq, self.chunk_of(values))
        return out

    def chunk_of(self, values: dict) -> int:
        """The chunk of a configuration: the field's value (and offset) where the chunk follows one, else the one
        found."""
        if self.chunk_field is None:
            return self.chunk
        return values.get(self.chunk_field, self.cost_fields[self.chunk_field]) + self.chunk_offset

    def chunks_symbol(self, symbols: dict) -> sp.Expr:
        """The number of chunks of ``s`` positions, in the fit's ``symbols``."""
        if self.chunk_field is None:
            return chunks.symbol(self.chunk)
        return chunks.symbol(symbols[self.chunk_field] + self.chunk_offset)

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
            traced = trace(model, seq, batch, self.device, cache=self.cache_fails is None,
                           backward=backward or self.backward_everywhere, decoder_seq=decoder_seq,
                           together=self.together and steady, by_names=self.by_names, seed=seed,
                           positions=self.positions)
            obs = observe(routed_together(traced) if self.experts_loop else traced, self.loops, self.by_calls)
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
    if f.step == "double":  # a power of two the config takes at no other value
        return [{name: value * 2}, {name: value // 2}]
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
            move = balanced(found, {**kept, **{h: start[h] * 3 for h in _closure(found, other) - set(kept)}}, start)
            obs = domain.observe({**start, **move}, BASE_SEQ, BASE_BATCH)
            if obs is not None and obs.structure == base.structure:
                apart = _apart(domain, base, name, move, set(kept))
                domain.effects[name] = _changed(base, obs) | (apart or set())
                if in_product(domain, (name, other)):  # the count's product equality holds them already
                    return True
                # equal values that must stay equal (a rotary width and a head width) do not trace further apart
                equal = start[other] == start[name] and apart is None
                pairs = {(name, other)} | ({(other, name)} if equal else set())
                found.relations |= pairs
                domain.relations |= pairs
                if not equal and ordered(lambda v: domain.observe(v, BASE_SEQ, BASE_BATCH), base, name, other,
                                         {**start, **move}):
                    domain.orders.add((name, other))
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
    pristine = copy.deepcopy(found)
    domain = Domain(builder, found)

    def traced_base():
        return domain.observe(found.base, BASE_SEQ, BASE_BATCH, backward=True)

    base = keyed_apart(domain, traced_base)
    if base is None and domain.errors and domain.errors[-1].startswith(CachedPassFailed.__name__):
        # transformers' own forward fails with its cache (BlenderbotForCausalLM sizes it by the encoder's layers
        # and runs the decoder's): the FLOPs are those of a pass without one, and the cache is refused
        domain.cache_fails = domain.errors[-1].partition(": ")[2]
        base = keyed_apart(domain, traced_base)
    if base is None and found.quiet:
        base = _with_unset_set(domain)
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
        moved_or_held(domain, base, name, start)
    if back := {n: found.lifted[n] for n, v in domain.held.items() if found.lifted.get(n, v) != v}:
        return discover_costs(builder, _unlifted(pristine, back), on_real_tensors)
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
    for left, right in domain.products:
        domain.relations = beside_product(domain, left, right[-1])
    # a field a relation found here ties to a layer count stays with it
    domain.low = {**{n: start[n] for n in layer_fields(found)}, **domain.low}
    # a held layer field is drawn by no layer trace: the trace would build the held value, the fit read the drawn
    domain.low = {n: v for n, v in domain.low.items() if n not in domain.held}
    domain.seen_layers.add(tuple(sorted(domain.low.items())))
    return domain, base


def _unlifted(found: Discovery, defaults: dict) -> Discovery:
    """``found`` with the fields the costs hold back at their class's defaults: the parameter discovery lifted
    them (Qwen3-Next's ``decoder_sparse_step`` from 1 to 2, to see dense layers beside the sparse ones), but the
    costs can hold a field at one value only, and it should be the one configs have."""
    for name, value in defaults.items():
        found.base[name] = found.fields[name].base = value
        del found.lifted[name]
    return found


def moved_or_held(domain: Domain, base: Observed, name: str, start: dict) -> None:
    """What a move of ``name`` changes (see :func:`_moved`); where no move traces with the base structure, its
    value held by the costs: the forward pass needs it though no shape follows it, or every other value builds
    another structure (Qwen3-Next's ``decoder_sparse_step`` makes other layers sparse), and the count alone keeps
    it free.  A field traced away from its base (a layer count lowered) has no value of its own to hold."""
    f = domain.found.fields[name]
    if _moved(domain, base, name, start):
        return
    if f.kind == "free" and start[name] != f.base:
        raise Untraceable(f"no move of {name} traces with the base structure")
    domain.held[name] = start[name]
    if f.kind == "free":
        f.kind = "fixed"


def _with_unset_set(domain: Domain) -> Observed | None:
    """The base traced with one of the fields the default config leaves unset and no shape follows set, as the
    parameter discovery sets an unset field (the first of its tries that traces), written into the base: a forward
    pass may need one (DeepSeek-V2's default leaves the experts a token is routed to unset, and its router fails on
    it).  The costs then follow it as any other field; the class's default stays unset, a config that leaves it out
    has no costs.  None: no such field makes the base trace."""
    found = domain.found
    for name in sorted(n for n in found.quiet if found.base.get(n) is None):
        for value in UNSET_TRIES:
            base = domain.observe({**found.base, name: value}, BASE_SEQ, BASE_BATCH, backward=True)
            if base is not None:
                found.base[name] = value
                found.fields[name] = Field(name, value, kind="irrelevant", step="jitter")
                return base
    return None


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
            # only ×3 traced, alone: a head count that must divide a width (moved with a partner a relation
            # already holds equal to it, a rotary width that is a head width, it is no divisor)
            if 0 < i == len(moves) - 1 and len(_closure(found, name)) == 1:
                _divided(domain, base, name, start)
        elif f.kind == "irrelevant":
            domain.quiet[name] = move[name]  # moved so in the verification: no cost may follow it
        if f.kind == "free" or name in domain.cost_fields:
            domain.effects[name] = moved
        return True
    if partnered and _partner(domain, base, name, start):
        return True
    return f.kind == "free" and _product_partner(domain, base, name, start)


def _product_partner(domain: Domain, base: Observed, name: str, start: dict) -> bool:
    """A free field that traces only with another moved by its multiplier alone, the two tied by a third: the
    forward pass needs ``name · third = other``, which no build needs (Helium's output projection is ``H × H``
    after heads of ``A · D``; Falcon-H1's Mamba heads of ``d_head`` split ``d_ssm`` into ``n_heads``).  Found as
    the count's product equalities are (see :mod:`.products`): ``name`` and ``other`` ×3 trace, ``third`` and
    ``other`` ×3 too, and ``name`` and ``third`` ×3 with ``other`` ×9, which no pairwise relation admits.  Random
    configurations then solve ``other`` as the product; the pairwise relations among the three, true only of the
    moves tried, are no condition of the costs (``A ⊑ H`` and ``H ⊑ A`` both, from a move of both by 3)."""
    found = domain.found
    sizes = [n for n, g in found.fields.items() if n != name and g.kind == "free" and _size(start[n])]
    for other, third in itertools.permutations(sizes, 2):
        if start[name] * start[third] != start[other] or _traces_without(domain, base, name, other, third, start):
            continue
        moves = ({name: start[name] * 3, other: start[other] * 3}, {third: start[third] * 3, other: start[other] * 3},
                 {name: start[name] * 3, third: start[third] * 3, other: start[other] * 9})
        traced = []
        for move in moves:
            along = tied(found, set(move) - {other}, {name, third, other})
            obs = domain.observe({**start, **{g: start[g] * 3 for g in along}, **move}, BASE_SEQ, BASE_BATCH)
            if obs is None or obs.structure != base.structure:
                break
            traced.append(obs)
        else:
            domain.effects[name] = _changed(base, traced[0]) | _changed(base, traced[2])
            product = (tuple(sorted((name, third))), (other,))
            found.products.append(product)
            domain.products.append(product)
            return True
    return False


def _traces_without(domain: Domain, base: Observed, name: str, other: str, third: str, start: dict) -> bool:
    """Whether ``name`` ×3 traces with the fields tied to it (see :func:`.products.tied`) and ``other`` left: then
    a tied field holds what the forward pass needs, and ``other`` is no side of its product (Falcon-H1's Mamba head
    width × the convolution's kernel is the attention heads by default, but the Mamba width, tied to the head
    width by divisibility, is what moves with it)."""
    along = tied(domain.found, {name}, {name, third, other})
    obs = domain.observe({**start, **{g: start[g] * 3 for g in along | {name}}}, BASE_SEQ, BASE_BATCH)
    return obs is not None and obs.structure == base.structure


def _size(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 1


# -- sampling ---------------------------------------------------------------------------------------------

#: the draws tried for one at the head widths the rules keep (see :mod:`.regular`)
REGULAR_DRAWS = 16


def _draw(domain: Domain, rng: random.Random, wide: bool = False, every: bool = False) -> tuple[dict, int, int]:
    """A random configuration, length and batch; at the head widths ``domain.regular`` keeps, where it has rules
    (the draws they refuse spend no attempt at a trace)."""
    for _ in range(REGULAR_DRAWS if domain.regular else 1):
        drawn = _draw_once(domain, rng, wide, every)
        if regular_widths(domain, drawn[0]):
            break
    return drawn


def _draw_once(domain: Domain, rng: random.Random, wide: bool, every: bool) -> tuple[dict, int, int]:
    found = domain.found
    values = draw(found, rng, wide, lattice=True)
    related = {n for pair in found.relations for n in pair}
    for name, base in domain.cost_fields.items():
        if name in domain.divides:
            values[name] = divisor(base, values[domain.divides[name]], rng, 10 if wide else 8)
        else:
            jittered = max(1, base + rng.randint(-2, 2))
            if name not in related:  # one a relation ties to a field is drawn with it (a rotary width equal to D_r)
                values[name] = jittered
    if wide:  # the verification: the fit's lattice is where its products are polynomials
        off_multiples(domain, values, rng)
    if every:  # the fields no cost was seen to follow, each half of the time as it was moved then
        for name, value in [*found.lifted.items(), *domain.quiet.items()]:
            # a field a relation ties to another stays with it (MLA's key/value heads, equal to the heads)
            if rng.random() < 0.5 and name not in related:
                values[name] = value
    return values, rng.randint(*domain.seq_range), rng.randint(*BATCH_RANGE)


def _allowed(domain: Domain, values: dict, fitting: bool) -> bool:
    found = domain.found
    if too_deep(found, values) or below_minimum(found, values):
        return False
    # a configuration outside the count's relations is counted by another formula, or refused (ERNIE 4.5's last
    # expert layer past the layers): no verification of these costs
    if not fitting and outside_count(domain, values):
        return False
    if any(values.get(n, v) < v for n, v in domain.least.items()):
        return False
    if any(values.get(n, 0) > VERIFY_LAYERS for n in domain.low):
        return False
    if not regular_widths(domain, values):
        return False
    return not fitting or not any(values[n] == v for n, v in found.lifted.items())


def with_layers(domain: Domain) -> set:
    """The fields other than the layer counts that move a factor a layer count moves too (Gemma 4's per-layer
    projection, ``hidden_size_per_layer_input`` wide for each layer): layer traces that keep them at the base and
    width traces that keep the layers low cannot tell ``w · L`` from ``w · L_0 + w_0 · L - w_0 · L_0``."""
    factors = {t for n in domain.low for t in domain.effects.get(n, ()) if t[0] == "factor"}
    return {n for n, targets in domain.effects.items() if n not in domain.low and n not in (S, B) and targets & factors}


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
    layers, seen, mixed = [], domain.seen_layers, with_layers(domain)
    for _ in range(ATTEMPTS * layer if domain.low else 0):
        if len(layers) == layer:
            break
        # every layer count drawn on its own (not as multiples of the base): a pattern of layers shows as such
        floor = layer_floor(domain.found)
        values = {**domain.found.base, **domain.low,
                  **{n: rng.randint(min(floor.get(n, 1), VERIFY_LAYERS), VERIFY_LAYERS) for n in domain.low}}
        if mixed:  # the other fields drawn too, so that the fit tells their product with a layer count from a sum
            values.update({n: v for n, v in _draw(domain, rng)[0].items() if n not in domain.low})
        combination = tuple(sorted((n, values[n]) for n in domain.low))
        if combination not in seen and _allowed(domain, values, True):  # a layer count seen twice tells nothing
            seen.add(combination)
            # a random length too: a count may grow with both (a scan over the positions of every layer)
            obs = domain.observe(values, rng.randint(*domain.seq_range), rng.randint(*BATCH_RANGE))
            if obs is not None and (obs.structure == base.structure
                                    or domain.kinds_appear and obs.structure < base.structure):
                layers.append((values, obs))
    return out + layers
