"""Layers of several kinds in the cost fit (no transformers): the base raised until every kind shows, a kind a trace
lacks counted 0, a pattern of layers fitted in the layer counts alone, and the configurations the reader refuses
left out of the verification."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import sympy as sp

from symparams.analysis.inference import cost_fitting, cost_layers, costs
from symparams.analysis.inference.cost_engine import _differences, _kinds_together, _negative
from symparams.analysis.inference.discovered import Field
from symparams.analysis.inference.fitting import expression
from symparams.analysis.inference.observing import Observed
from symparams.analysis.inference.result import Relation
from symparams.analysis.inference.tracing import Untraceable

SLIDING, FULL = ("self", "DynamicSlidingWindowLayer", "keys"), ("self", "DynamicLayer", "keys")


def _field(name: str, base: int) -> Field:
    return Field(name, base, kind="free", step="scale", effects={("count", name)})


def _cache(layers: int, period: int = 6) -> Observed:
    """A trace of Gemma 3's cache: a full-attention layer where (i + 1) % period == 0, the others sliding."""
    full = layers // period
    targets = {("layers", SLIDING): layers - full, ("dim", SLIDING, 0): 2}
    if full:
        targets.update({("layers", FULL): full, ("dim", FULL, 0): 2})
    return Observed(7, 2, targets)


def _domain(base_layers: int, dense: int = 1) -> SimpleNamespace:
    found = SimpleNamespace(fields={"num_hidden_layers": _field("num_hidden_layers", base_layers),
                                    "num_dense_layers": _field("num_dense_layers", dense)},
                            base={"num_hidden_layers": base_layers, "num_dense_layers": dense})
    seen = []

    def observe(values, seq, batch, backward=False):
        seen.append(dict(values))
        assert values["num_dense_layers"] == dense  # the dense layers first stay below the layers
        return _cache(values["num_hidden_layers"])

    return SimpleNamespace(found=found, observe=observe, kinds_appear=False, seen=seen)


def test_the_base_is_raised_to_the_fewest_layers_that_hold_every_kind():
    domain = _domain(2)
    base = costs._with_every_kind(domain, _cache(2))
    assert domain.found.base["num_hidden_layers"] == 6  # not 5 (no full layer yet), nor 12
    assert base.structure == {SLIDING, FULL} and domain.kinds_appear


def test_a_base_that_holds_every_kind_already_stays():
    domain = _domain(7)
    base = _cache(7)
    assert costs._with_every_kind(domain, base) is base
    assert domain.found.base["num_hidden_layers"] == 7 and not domain.kinds_appear


def test_a_trace_without_layers_of_a_kind_holds_none_and_tells_nothing_of_their_widths():
    few = _cache(3)
    assert cost_fitting._target_value(("layers", FULL), few) == 0
    assert cost_fitting._target_value(("count", ("model.layers.*.self_attn", 0, "bmm")), few) == 0
    assert cost_fitting._target_value(("dim", FULL, 0), few) is None
    assert cost_fitting._target_value(("layers", SLIDING), few) == 3


def _fit_domain(layers: set) -> SimpleNamespace:
    found = SimpleNamespace(computed={}, relations=set())
    return SimpleNamespace(names=sorted(layers), effects={}, binary=frozenset(), layer_counts=lambda: frozenset(layers),
                           found=found, widths=set(), parameters=(), held={})


def test_a_pattern_of_layers_no_move_showed_is_fitted_in_the_layer_counts_alone():
    # HY-V4's shared indexers: every layer past the first but one in every 4 from the second, L - 1 - ceil((L - 1)/4);
    # no discovery move changed it (effects empty), and the phases of the period 4 are dependent on any points
    points = [{"L": n} for n in range(1, 13)]
    values = [n - 1 - -(-(n - 1) // 4) for n in range(1, 13)]
    found = cost_fitting._fit_target(_fit_domain({"L"}), ("layers", FULL), points, values)
    L = sp.Symbol("L")
    formula = expression(found, {"L": L})
    assert [formula.subs(L, n) for n in range(1, 60)] == [n - 1 - -(-(n - 1) // 4) for n in range(1, 60)]


def test_a_configuration_whose_parameter_counts_go_negative_is_no_verification():
    L, dense = sp.symbols("L dense")
    inferred = SimpleNamespace(parameters=[SimpleNamespace(count=L - dense, shape=(sp.Integer(8),)),
                                           SimpleNamespace(count=dense, shape=(L,))])
    refused = _differences(inferred)
    assert refused == (L - dense,)
    assert _negative(refused[0], {L: sp.Integer(1), dense: sp.Integer(4)})
    assert not _negative(refused[0], {L: sp.Integer(4), dense: sp.Integer(4)})


def test_a_tiny_size_that_does_not_trace_with_one_product_per_key_is_passed_over():
    # EXAONE 4: a head width of 1 takes another path on its rotary layers only, so their copies differ
    from symparams.analysis.inference.real_check import tiny_values
    from symparams.analysis.inference.tracing import Untraceable

    found = SimpleNamespace(free=["head_dim"], relations=set(), fields={"head_dim": _field("head_dim", 64)},
                            products=[], base={"head_dim": 64})

    def observe(values, seq, batch):
        if values["head_dim"] == 3:
            raise Untraceable("the products of layers.*.self_attn differ between its copies")
        return Observed(seq, batch, {("dim", FULL, 0): values["head_dim"]})

    domain = SimpleNamespace(found=found, start={"head_dim": 64}, cost_fields={}, low={}, held={}, observe=observe,
                             products=[], orders=set(), regular=())
    assert tiny_values(domain, Observed(7, 2, {("dim", FULL, 0): 64}))["head_dim"] == 5


def test_a_count_up_to_a_bound_over_traces_with_and_without_a_kind_is_refused_with_its_cause():
    # dots1: the layers from max_window_layers on keep a sliding window, so the full-attention cache layers are
    # min(L, m); traces with fewer layers than m have no sliding layers, and no polynomial is a minimum
    samples = []
    for layers in range(1, 13):
        for bound in (2, 4, 6):
            targets = {("layers", FULL): min(layers, bound), ("dim", FULL, 0): 2}
            if layers > bound:
                targets.update({("layers", SLIDING): layers - bound, ("dim", SLIDING, 0): 2})
            samples.append(({"L": layers, "m": bound}, Observed(7, 2, targets)))
    samples.sort(key=lambda s: -len(s[1].targets))  # the first sample has every kind, as the base does
    domain = _fit_domain({"L", "m"})
    domain.effects = {"L": {("layers", FULL), ("layers", SLIDING)}, "m": {("layers", FULL), ("layers", SLIDING)}}
    domain.point = lambda values, obs: values
    with pytest.raises(Untraceable, match=r"layers of self DynamicLayer keys, in traces with and without layers of "
                                          r"another kind \(a count bounded by L and m, a minimum"):
        cost_fitting.fitted(domain, samples, {"L": sp.Symbol("L"), "m": sp.Symbol("m")})


def test_layers_of_two_kinds_a_trace_names_as_one_are_compared_by_their_sums():
    """Gemma 4's sliding head width drawn equal to the full layers' makes the two kinds one structure: the trace
    names ``layers.*.mlp`` what the formulas split into ``layers.*1.mlp`` and ``layers.*2.mlp``."""
    formulas = ({"layers.*1.mlp": 30, "layers.*2.mlp": 12, "norm": 1}, {"layers.*1.mlp": 60, "layers.*2.mlp": 24}, None)
    traced = ({"layers.*.mlp": 42, "norm": 1}, {"layers.*.mlp": 84}, None)
    assert _kinds_together(formulas) == _kinds_together(traced) == traced
    # the sums must agree: a kind's layers miscounted (one sliding layer too few) still shows
    assert _kinds_together(({"layers.*1.mlp": 27, "layers.*2.mlp": 12, "norm": 1}, {}, None))[0] != traced[0]


MAMBA = ("layers.*.mamba", 2, "bmm")


def _mamba_layers(layers: int, period: int, offset: int) -> int:
    """Jamba's Mamba layers: every layer but those at ``offset`` modulo ``period``."""
    return sum(1 for i in range(layers) if i % period != offset)


def test_runs_in_a_pattern_of_layers_are_the_counts_own_instances_times_runs_per_instance():
    """Jamba's scan runs a product once per position in each Mamba layer, and which layers have a Mamba mixer
    follows two fields (attention every ``period``-th layer from ``offset``), a floor of one field over another that
    no basis of the fit holds; the count's own formula for the mixer's parameters does: the runs are ``s`` times
    it, right at layer counts and periods the traces never had."""
    L, P, O = sp.symbols("L P O", integer=True, positive=True)
    mixers = L - sp.floor((L - O - 1) / P) - 1
    symbols = {"layers": L, "period": P, "offset": O, costs.S: sp.Symbol("s"), costs.B: sp.Symbol("b")}
    found = SimpleNamespace(computed={}, relations=set(), free=["layers", "period", "offset"], fields={}, flags={})
    domain = SimpleNamespace(names=["layers", "period", "offset", costs.S, costs.B], binary=frozenset(), found=found,
                             effects={n: {("count", MAMBA)} for n in ("layers", "period", "offset", costs.S)},
                             layer_counts=lambda: frozenset({"layers"}), widths=set(), start={}, chunk=None,
                             cost_fields={}, held={}, count_relations=(),
                             parameters=[SimpleNamespace(name="layers.*.mamba.in_proj.weight", count=mixers)])
    domain.point = lambda values, obs: {**values, costs.S: obs.seq, costs.B: obs.batch}
    samples = []
    for i in range(24):
        period = 2 + i % 5
        values = {"layers": 1 + (7 * i) % 23 + period, "period": period, "offset": 1 + i % (period - 1)}
        seq = 3 + (5 * i) % 11
        samples.append((values, Observed(seq, 2, {("count", MAMBA): seq * _mamba_layers(**values)})))
    with pytest.raises(Untraceable):
        cost_fitting._fit_target(domain, ("count", MAMBA), [domain.point(v, o) for v, o in samples],
                                 [o.targets[("count", MAMBA)] for _, o in samples], symbols)
    runs = cost_fitting.fitted(domain, samples, symbols)[("count", MAMBA)]
    s = symbols[costs.S]
    assert all(runs.subs({L: n, P: p, O: o, s: 301}) == 301 * _mamba_layers(n, p, o)
               for n in (40, 72, 97) for p in (3, 8, 9) for o in range(1, p))


def test_runs_whose_instances_follow_a_period_take_the_counts_formula_even_where_a_basis_fits_the_traces():
    """Traces that all drew a period of 2 (as low layer counts do) fit a floor of whole period 2 in the basis,
    which counts Jamba's one expert layer of 12 as 2; the count's own formula, over the period, holds at 12."""
    L, P, O = sp.symbols("L P O", integer=True, positive=True)
    experts = sp.floor((L - O - 1) / P) + 1
    key = ("layers.*.feed_forward.experts", 0, "bmm")
    symbols = {"layers": L, "period": P, "offset": O, costs.S: sp.Symbol("s"), costs.B: sp.Symbol("b")}
    found = SimpleNamespace(computed={}, relations=set(), free=["layers", "period", "offset"], fields={}, flags={})
    domain = SimpleNamespace(names=["layers", "period", "offset", costs.S, costs.B], binary=frozenset(), found=found,
                             effects={"layers": {("count", key)}}, layer_counts=lambda: frozenset({"layers"}),
                             widths=set(), start={}, chunk=None, cost_fields={}, held={}, count_relations=(),
                             parameters=[SimpleNamespace(name=f"{key[0]}.down_proj", count=experts)])
    domain.point = lambda values, obs: {**values, costs.S: obs.seq, costs.B: obs.batch}
    samples = [({"layers": n, "period": 2, "offset": 1}, Observed(7, 2, {("count", key): (n - 2) // 2 + 1}))
               for n in range(2, 14)]
    runs = cost_fitting.fitted(domain, samples, symbols)[("count", key)]
    assert runs.subs({L: 12, P: 12, O: 2}) == 1 and runs.subs({L: 32, P: 2, O: 1}) == 16


def test_a_field_the_costs_hold_is_a_number_in_the_counts_instances():
    """Qwen3-Next's count has ⌊L/step⌋ expert layers, ``decoder_sparse_step`` a symbol; the costs hold it at 1 (no
    other value traces with the base structure), so the traces never move it and it is no symbol of theirs: the
    runs are fitted as L instances, a formula in L alone, where the symbol left in would be no number at all."""
    L, T = sp.symbols("L step", integer=True, positive=True)
    key = ("layers.*.mlp.experts", 0, "bmm")
    symbols = {"layers": L, "decoder_sparse_step": T, costs.S: sp.Symbol("s"), costs.B: sp.Symbol("b")}
    found = SimpleNamespace(computed={}, relations=set(), free=["layers"], fields={}, flags={})
    domain = SimpleNamespace(names=["layers", costs.S, costs.B], binary=frozenset(), found=found,
                             effects={"layers": {("count", key)}}, layer_counts=lambda: frozenset({"layers"}),
                             widths=set(), start={"decoder_sparse_step": 1}, chunk=None, cost_fields={},
                             held={"decoder_sparse_step": 1}, count_relations=(),
                             parameters=[SimpleNamespace(name=f"{key[0]}.down_proj", count=sp.floor(L / T))])
    domain.point = lambda values, obs: {**values, costs.S: obs.seq, costs.B: obs.batch}
    samples = [({"layers": n}, Observed(7, 2, {("count", key): 3 * n})) for n in range(2, 14)]
    runs = cost_fitting._per_instance(domain, ("count", key), samples, symbols)
    assert runs == 3 * L


def test_runs_that_a_product_of_two_layer_counts_gives_are_the_counts_instances_not_a_sum():
    """MobileBERT runs ``N − 1`` feed-forward blocks in each of its L layers; the fit's traces move one layer
    count at a time about the lowest, where ``L + N − 2`` fits the runs as well as ``L·(N − 1)`` and is wrong
    at 24 layers of 4 blocks (26 for 72).  The count's own instances, a product, are taken first."""
    L, N = sp.symbols("L N", integer=True, positive=True)
    key = ("layer.*.ffn.*.intermediate.dense", 0, "mm")
    symbols = {"layers": L, "blocks": N, costs.S: sp.Symbol("s"), costs.B: sp.Symbol("b")}
    found = SimpleNamespace(computed={}, relations=set(), free=["layers", "blocks"], fields={}, flags={})
    domain = SimpleNamespace(names=["layers", "blocks", costs.S, costs.B], binary=frozenset(), found=found,
                             effects={"layers": {("count", key)}, "blocks": {("count", key)}},
                             layer_counts=lambda: frozenset({"layers", "blocks"}), widths=set(), start={},
                             chunk=None, cost_fields={}, held={}, count_relations=(),
                             parameters=[SimpleNamespace(name=f"{key[0]}.weight", count=L * (N - 1))])
    domain.point = lambda values, obs: {**values, costs.S: obs.seq, costs.B: obs.batch}
    moves = [{"layers": 1, "blocks": n} for n in range(2, 9)] + [{"layers": n, "blocks": 2} for n in range(1, 9)]
    samples = [(v, Observed(7, 2, {("count", key): v["layers"] * (v["blocks"] - 1)})) for v in moves]
    assert cost_fitting._not_linear(L * (N - 1)) and not cost_fitting._not_linear(3 * L + N)
    runs = cost_fitting.fitted(domain, samples, symbols)[("count", key)]
    assert runs.subs({L: 24, N: 4}) == 72


def test_cache_layers_of_the_kinds_no_parameter_marks_alone_are_the_stacks_other_layers():
    """Kimi Linear keeps a linear-attention state in every layer but the full-attention ones, ``⌈L/4⌉ − 1`` of
    them: its first layer (dense) and the linear layers of experts, two kinds, no one parameter's instances.
    On traces of few layers a period of 5 fitted the count as well as one of 4, wrong at 4 layers; the stack's
    layers less the full-attention kind's instances hold at every L."""
    L = sp.Symbol("L", integer=True, positive=True)
    full = sp.ceiling(L / 4) - 1
    target = ("layers", ("self", "LinearAttentionLayer", "conv_states.0"))
    symbols = {"num_hidden_layers": L, costs.S: sp.Symbol("s"), costs.B: sp.Symbol("b")}
    found = SimpleNamespace(computed={}, relations=set(), free=["num_hidden_layers"], fields={}, flags={})
    parameters = [SimpleNamespace(name="layers.*1.mlp.gate_proj.weight", count=sp.Integer(1)),
                  SimpleNamespace(name="layers.*2.mlp.experts.down_proj", count=L - sp.ceiling(L / 4)),
                  SimpleNamespace(name="layers.*3.self_attn.q_proj.weight", count=full)]
    domain = SimpleNamespace(names=["num_hidden_layers", costs.S, costs.B], binary=frozenset(), found=found,
                             effects={"num_hidden_layers": {target}}, widths=set(), start={}, chunk=None,
                             layer_counts=lambda: frozenset({"num_hidden_layers"}), cost_fields={}, held={},
                             count_relations=(), parameters=parameters)
    domain.point = lambda values, obs: {**values, costs.S: obs.seq, costs.B: obs.batch}
    samples = [({"num_hidden_layers": n}, Observed(7, 2, {target: n - (-(-n // 4) - 1)})) for n in (1, 2, 3, 5, 6, 7)]
    layers = cost_fitting.fitted(domain, samples, symbols)[target]
    assert [layers.subs(L, n) for n in (4, 8, 12, 48)] == [n - n // 4 + 1 for n in (4, 8, 12, 48)]


def test_a_pattern_of_one_layer_count_is_fitted_in_it_alone_before_the_other_layer_counts():
    """Flint keeps full attention on its first two layers, every fourth from the second and the last: its sliding
    cache layers are L − 2 − ⌊(L + 1)/4⌋.  The traces drew L from 4 to 12 and, at L = 4, the sparse step (a layer
    count too) from 1 to 4; with the step's floors beside L's, the basis outgrew the nine layer counts and no fit
    was found.  Fitted in L alone first, it holds at every L."""
    def sliding(n):
        return n - 2 - (n + 1) // 4

    points = [{"L": n, "step": 1} for n in range(4, 13)] + [{"L": 4, "step": k} for k in range(2, 5)]
    domain = _fit_domain({"L", "step"})
    domain.effects = {"L": {("layers", SLIDING)}}
    found = cost_fitting._fit_target(domain, ("layers", SLIDING), points, [sliding(p["L"]) for p in points])
    L = sp.Symbol("L")
    formula = expression(found, {"L": L, "step": sp.Symbol("step")})
    assert [formula.subs(L, n) for n in range(3, 80)] == [sliding(n) for n in range(3, 80)]


def test_a_trace_outside_the_counts_relations_tells_no_instances_and_is_no_verification():
    """ERNIE 4.5's count holds where its last expert layer is below the layer count (past it, another formula);
    a layer trace that drew it higher ran its dense MLP on layers no instance of the count's formula counts, and
    the runs found no fit.  Such a trace tells no instances, and such a configuration verifies nothing: the costs
    hold where the count does."""
    L, E = sp.symbols("L E", integer=True, positive=True)
    key = ("layers.*.mlp.gate_proj", 0, "mm")
    dense = L + 1 - sp.floor(E + 1)  # the dense layers of the count: the first, and those past the last expert one
    symbols = {"layers": L, "end": E, costs.S: sp.Symbol("s"), costs.B: sp.Symbol("b")}
    found = SimpleNamespace(computed={}, relations=set(), free=["layers", "end"], fields={}, flags={},
                            branch=SimpleNamespace(minimum={}), lowest={}, least={}, lifted={}, base={})
    found.minimum = {}
    domain = SimpleNamespace(names=["layers", "end", costs.S, costs.B], binary=frozenset(), found=found,
                             effects={"layers": {("count", key)}, "end": {("count", key)}},
                             layer_counts=lambda: frozenset({"layers", "end"}), widths=set(), start={}, chunk=None,
                             cost_fields={}, held={}, low={}, regular=(), least={},
                             count_relations=(Relation("end", "below", "layers"),),
                             parameters=[SimpleNamespace(name=f"{key[0]}.weight", count=dense)])
    domain.point = lambda values, obs: {**values, costs.S: obs.seq, costs.B: obs.batch}
    inside = [{"layers": n, "end": e} for n in range(2, 13) for e in range(1, n)]
    past = [{"layers": 4, "end": 11}, {"layers": 6, "end": 9}]  # every layer from the second an expert one: 1 dense
    samples = [(v, Observed(7, 2, {("count", key): v["layers"] - v["end"]})) for v in inside[::3]]
    samples += [(v, Observed(7, 2, {("count", key): 1})) for v in past]
    assert cost_fitting._per_instance(domain, ("count", key), samples, symbols) == dense
    assert not costs._allowed(domain, past[0], False)
    assert costs._allowed(domain, inside[0], False)


def test_the_costs_hold_a_layer_count_from_the_fewest_layers_their_traces_kept():
    """Flint's traces with fewer than 4 layers built another structure and were left out: the costs hold from 4,
    and the verification draws no fewer.  A layer count traced down to its own floor holds no bound, nor one the
    parameter discovery lifted (Qwen2-MoE's sparse step)."""
    found = SimpleNamespace(fields={}, branch=SimpleNamespace(minimum={}), lowest={}, least={},
                            lifted={"sparse_step": 1}, base={"num_hidden_layers": 4, "sparse_step": 2})
    found.minimum = {}
    domain = SimpleNamespace(found=found, start=dict(found.base), low={"num_hidden_layers": 4, "sparse_step": 2},
                             regular=(), least={}, held={}, count_relations=())
    samples = [({"num_hidden_layers": n, "sparse_step": 2 + n % 3}, None) for n in (4, 7, 12)]
    domain.least = cost_layers.least_layers(domain, samples)
    # the sparse step, lifted from its default 1 to see dense layers beside the sparse ones, is verified at 1
    assert domain.least == {"num_hidden_layers": 4}
    assert not costs._allowed(domain, {"num_hidden_layers": 1}, False)
    assert costs._allowed(domain, {"num_hidden_layers": 5}, False)
    assert cost_layers.least_layers(domain, samples + [({"num_hidden_layers": 1}, None)]) == {}


def test_a_relation_of_the_count_on_other_fields_leaves_a_trace_to_a_counts_fit():
    """Jamba's count holds where its expert layers' offset divides their period; its attention layers follow other
    fields.  A trace that breaks the expert relation still counts the attention layers' instances, and left out, the
    fewer traces held a wrong count of them (the verification found 1 configuration of 8 exact)."""
    from symparams.analysis.inference.cost_orders import outside_count

    domain = SimpleNamespace(start={"L": 8, "attn_offset": 1, "attn_period": 4, "expert_offset": 1, "expert_period": 2},
                             held={}, count_relations=(
                                 Relation("expert_offset", "divides", "expert_period"),
                                 Relation("attn_offset", "below", "attn_period")))
    broken = {"expert_offset": 2, "expert_period": 3}
    assert outside_count(domain, broken)
    assert not outside_count(domain, broken, {"L", "attn_offset", "attn_period"})
    assert outside_count(domain, {"attn_offset": 5}, {"L", "attn_offset", "attn_period"})
