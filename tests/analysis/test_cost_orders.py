"""The kind of a relation the cost discovery finds between two fields: an order or divisibility.

A toy domain stands in for transformers: a stack of ``layers`` whose first
``dense`` layers have a dense MLP and the others experts (DeepSeek-V2's
``first_k_dense_replace``), at a base of one dense layer of two.  Its forward
pass runs only with a layer of each kind, so ``dense`` ×3 needs ``layers``
moved too; whether it also needs ``dense`` to divide ``layers`` is the toy's
rule.  At the base (1 of 2) both kinds hold: only a trace where they differ
tells them apart.
"""

from __future__ import annotations

import random

from symparams.analysis.inference import cost_engine, costs
from symparams.analysis.inference.cost_orders import off_multiples
from symparams.analysis.inference.discovered import Discovery, Field
from symparams.analysis.inference.observing import Observed

DENSE, SPARSE = ("layers.*.mlp.up_proj", 0, "mm"), ("layers.*.mlp.experts", 0, "mm")


class LayersDomain(costs.Domain):
    """A domain whose trace runs where ``runs(dense, layers)``: the dense and the expert layers' counts its
    targets."""

    def __init__(self, runs, layers: int = 2):
        fields = {"dense": Field("dense", 1, "free", "scale"), "layers": Field("layers", layers, "free", "scale")}
        super().__init__(builder=None, found=Discovery(base={}, observation=None, fields=fields, flags={},
                                                       relations=set()))
        self.runs = runs
        self.start = {n: f.base for n, f in fields.items()}

    def observe(self, values: dict, seq: int, batch: int, **_) -> Observed | None:
        dense, layers = values["dense"], values["layers"]
        if not self.runs(dense, layers):
            return None
        return Observed(seq, batch, targets={("count", DENSE): dense, ("count", SPARSE): layers - dense})


def _discovered(runs, layers: int = 2) -> LayersDomain:
    domain = LayersDomain(runs, layers)
    base = domain.observe(domain.start, costs.BASE_SEQ, costs.BASE_BATCH)
    for name in ("dense", "layers"):
        assert costs._moved(domain, base, name, domain.start)
    return domain


def _below(dense: int, layers: int) -> bool:
    return 0 < dense < layers


def _dividing(dense: int, layers: int) -> bool:
    return 0 < dense < layers and layers % dense == 0


def test_a_relation_at_a_base_of_one_that_traces_off_the_multiples_is_an_order():
    """Three dense layers of seven run: the relation is ``dense < layers``, not ``dense divides layers`` (which
    the base, 1 of 2, satisfies too, and which refused DeepSeek-V2's default of 0 dense layers of 32)."""
    domain = _discovered(_below)
    assert ("dense", "layers") in domain.relations and domain.orders == {("dense", "layers")}
    assert cost_engine._relations(domain) == ("dense < layers",)


def test_an_order_found_where_both_fields_are_equal_is_tested_one_up():
    """Qwen2-MoE's sparse step of 1 in 1 layer: moved ×3 together (3 of 3) both kinds hold; a step of 3 in 4 layers
    runs, so the relation is an order."""
    domain = _discovered(lambda step, layers: 0 < step <= layers, layers=1)
    assert domain.orders == {("dense", "layers")}


def test_a_relation_that_traces_only_at_multiples_stays_divisibility():
    domain = _discovered(_dividing)
    assert ("dense", "layers") in domain.relations and domain.orders == set()
    assert cost_engine._relations(domain) == ("dense divides layers",)


def test_the_greater_field_of_an_order_is_drawn_off_the_multiples_and_above_the_lesser():
    """The lattice keeps ``layers`` a multiple of ``dense``: the verification would never see 3 dense layers of 7.
    Half the draws leave the multiples, every one stays above the lesser field."""
    domain = _discovered(_below)
    rng, drawn = random.Random(0), []
    for _ in range(40):
        values = {"dense": 3, "layers": 12}
        off_multiples(domain, values, rng)
        drawn.append(values["layers"])
    assert all(3 < v <= 12 for v in drawn)
    assert any(v % 3 for v in drawn) and 12 in drawn


def test_a_field_another_relation_needs_on_the_multiples_is_not_moved_off_them():
    domain = _discovered(_below)
    domain.found.relations.add(("heads", "layers"))  # as a head count dividing a width would
    rng = random.Random(0)
    for _ in range(20):
        values = {"dense": 3, "layers": 12}
        off_multiples(domain, values, rng)
        assert values["layers"] == 12


def test_orders_whose_formulas_fail_off_the_multiples_fall_back_to_divisibility_one_at_a_time(monkeypatch):
    """Qwen3-MoE's heads below the width trace at any width (a head width ``H // A``), but the fit, drawn on the
    multiples, wrote ``H/A``: not whole off them.  That order is taken for divisibility again; the sparse step's,
    whose formulas hold, stays an order."""
    from symparams.analysis.inference.cost_result import CostVerification
    from symparams.analysis.inference.tracing import Untraceable

    def verify(domain, *args):
        if ("heads", "hidden") in domain.orders:
            raise Untraceable("a cost formula is not a whole number at a verification point (17589/2)")
        return CostVerification(8, 8, 0, 0, (), 8)

    monkeypatch.setattr(cost_engine, "verify_costs", verify)
    domain = _discovered(_below)
    domain.orders = {("heads", "hidden"), ("step", "layers")}
    assert cost_engine._verified(domain).passed
    assert domain.orders == {("step", "layers")}


def test_a_failure_with_no_order_to_drop_is_the_verification_s_own(monkeypatch):
    from symparams.analysis.inference.cost_result import CostVerification

    monkeypatch.setattr(cost_engine, "verify_costs", lambda domain, *args: CostVerification(8, 5, 0, 0, (), 8))
    domain = _discovered(_below)
    domain.orders = {("dense", "layers")}
    assert not cost_engine._verified(domain).passed and domain.orders == set()


# -- a factor that is a width times a layer count ----------------------------------------------------------------

PROJECTION = ("model.per_layer_model_projection", 0, "mm")


class PerLayerDomain(costs.Domain):
    """Gemma 4's per-layer projection: one product ``H → layers · width`` (the width each layer is given)."""

    def __init__(self):
        fields = {"width": Field("width", 4, "free", "scale"), "num_layers": Field("num_layers", 2, "free", "scale")}
        found = Discovery(base={"width": 4, "num_layers": 2}, observation=None, fields=fields, flags={},
                          relations=set())
        super().__init__(builder=None, found=found)
        self.start = {n: f.base for n, f in fields.items()}
        self.low = {"num_layers": 2}

    def observe(self, values: dict, seq: int, batch: int, **_) -> Observed | None:
        return Observed(seq, batch, targets={("count", PROJECTION): 1,
                                             ("factor", PROJECTION, 2): values["width"] * values["num_layers"]})


def test_a_width_that_moves_a_factor_with_a_layer_count_is_drawn_in_the_layer_traces():
    """Drawn only at its base there, ``width · L`` and ``4 · L + 2 · width - 8`` agree on every trace: the fit took
    the second (Gemma 4 counted 7.5 layers' projections for 11)."""
    domain = PerLayerDomain()
    domain.effects = {"width": {("factor", PROJECTION, 2)}, "num_layers": {("factor", PROJECTION, 2)}}
    assert costs.with_layers(domain) == {"width"}
    base = domain.observe(domain.start, costs.BASE_SEQ, costs.BASE_BATCH)
    traced = costs.fit_samples(domain, base, random.Random(0), width=0, layer=6)
    assert len(traced) == 6 and len({values["width"] for values, _ in traced}) > 1


def test_a_width_that_moves_no_factor_of_a_layer_count_stays_at_its_base_in_the_layer_traces():
    domain = PerLayerDomain()
    domain.effects = {"width": {("factor", PROJECTION, 1)}, "num_layers": {("count", PROJECTION)}}
    assert costs.with_layers(domain) == set()
    base = domain.observe(domain.start, costs.BASE_SEQ, costs.BASE_BATCH)
    traced = costs.fit_samples(domain, base, random.Random(0), width=0, layer=6)
    assert len(traced) == 6 and {values["width"] for values, _ in traced} == {4}


class MambaDomain(costs.Domain):
    """Bamba's Mamba heads: its forward pass runs only with 32 channels of the hidden width to a head (its heads
    of 64 channels are twice the width), so the width moves only with the heads."""

    def __init__(self):
        fields = {"hidden": Field("hidden", 4096, "free", "scale"), "heads": Field("heads", 128, "free", "scale")}
        super().__init__(builder=None, found=Discovery(base={}, observation=None, fields=fields, flags={},
                                                       relations=set()))
        self.start = {n: f.base for n, f in fields.items()}

    def observe(self, values: dict, seq: int, batch: int, **_) -> Observed | None:
        if values["hidden"] != 32 * values["heads"]:
            return None
        return Observed(seq, batch, targets={("count", DENSE): 1, ("factor", DENSE, 1): values["hidden"],
                                             ("factor", DENSE, 2): values["heads"]})


def test_a_relation_whose_bases_hold_no_order_is_written_as_the_proportion_the_draws_kept():
    """The width moves only with the heads, at a base of 4,096 over 128: not ``hidden < heads``, which Bamba's own
    default breaks (and so every config was refused), but the width divides 32 heads, as the draws kept it."""
    domain = MambaDomain()
    base = domain.observe(domain.start, costs.BASE_SEQ, costs.BASE_BATCH)
    assert costs._moved(domain, base, "hidden", domain.start)
    assert ("hidden", "heads") in domain.relations
    assert "hidden divides 32*heads" in cost_engine._relations(domain)
    assert "hidden < heads" not in cost_engine._relations(domain)
