"""The cost discovery's partners: a field the forward pass needs moved with another that no shape ties to it.

A toy domain stands in for transformers: its "trace" runs only where the
toy's own rule says the forward pass would (multi-head latent attention
repeats its keys ``heads // kv_heads`` times, so only ``kv_heads <= heads <
2 * kv_heads`` runs), and its one target is the query projection's width.
"""

from __future__ import annotations

import random

import pytest

from symparams.analysis.inference import costs, products
from symparams.analysis.inference.discovered import Discovery, Field
from symparams.analysis.inference.observing import Observed
from symparams.analysis.inference.tracing import Untraceable

KEY = ("layers.*.self_attn.q_b_proj", 0, "mm")


class ToyDomain(costs.Domain):
    """A domain whose trace is ``runs(values)``: the target ``heads * width`` where it runs, else None."""

    def __init__(self, found: Discovery, runs):
        super().__init__(builder=None, found=found)
        self.runs = runs
        self.start = {n: f.base for n, f in found.fields.items()}

    def observe(self, values: dict, seq: int, batch: int, **_) -> Observed | None:
        if not self.runs(values):
            return None
        return Observed(seq, batch, targets={("count", KEY): 1,
                                             ("factor", KEY, 2): values["heads"] * values["width"]})


def _found(related: bool = False) -> Discovery:
    fields = {"heads": Field("heads", 4, "free", "scale"), "width": Field("width", 16, "free", "scale"),
              "kv_heads": Field("kv_heads", 4, "irrelevant", "jitter")}
    relations = {("heads", "width")} if related else set()
    return Discovery(base={}, observation=None, fields=fields, flags={}, relations=relations)


def _repeats_once(values: dict) -> bool:
    return values["heads"] // values["kv_heads"] == 1


def _discover(found: Discovery, runs) -> ToyDomain:
    domain = ToyDomain(found, runs)
    base = domain.observe(domain.start, costs.BASE_SEQ, costs.BASE_BATCH)
    for name in ("heads", "width", "kv_heads"):
        costs.moved_or_held(domain, base, name, domain.start)
    return domain


def test_heads_whose_move_by_one_runs_by_a_floor_are_moved_with_the_key_value_heads():
    """5 heads over 4 key/value heads repeat the keys once (5 // 4): the move by one runs, ×3 does not.  Without
    the partner the fit's draws (multiples of 4 heads, 4 key/value heads) would trace only at 4 heads."""
    found = _found()
    domain = _discover(found, _repeats_once)
    assert {("heads", "kv_heads"), ("kv_heads", "heads")} <= found.relations
    assert domain.effects["heads"] == {("factor", KEY, 2)}


def test_a_partner_is_moved_with_the_fields_a_relation_moves_with_the_field():
    """Heads must divide the width as well: neither heads ×3 with the key/value heads alone nor any move of the
    heads alone runs; with the width moved too it does."""
    found = _found(related=True)
    _discover(found, lambda v: _repeats_once(v) and v["width"] % v["heads"] == 0)
    assert {("heads", "kv_heads"), ("kv_heads", "heads")} <= found.relations


def test_a_field_no_partner_lets_move_is_held_at_its_base_by_the_costs():
    """Only 4 heads run: the costs hold them (the reader refuses a config with more), and the fit's draws keep
    them there, as they keep any field that is not free."""
    found = _found()
    domain = _discover(found, lambda v: v["heads"] == 4)
    assert domain.held == {"heads": 4} and "heads" not in found.free and "width" in found.free


def test_a_field_traced_away_from_its_base_is_refused_where_no_move_runs():
    """A field the discovery lowered (a layer count traced at its fewest) has no value of its own to hold."""
    found = _found()
    domain = ToyDomain(found, lambda v: v["heads"] == 2)
    domain.start["heads"] = domain.low["heads"] = 2
    base = domain.observe(domain.start, costs.BASE_SEQ, costs.BASE_BATCH)
    with pytest.raises(Untraceable, match="no move of heads traces"):
        costs.moved_or_held(domain, base, "heads", domain.start)


def test_a_scaled_field_whose_own_multiples_run_takes_no_partner():
    found = _found()
    domain = _discover(found, lambda v: v["kv_heads"] <= v["heads"])  # grouped-query attention: any more heads
    assert found.relations == set()
    assert domain.effects["heads"] == {("factor", KEY, 2)}


# -- a product of two fields equal to a third ----------------------------------------------------------------

WIDTH_KEY = ("layers.*.self_attn.o_proj", 0, "mm")


class ProductDomain(costs.Domain):
    """A toy of Helium's attention: it runs only where the heads times the head width are the hidden width (its
    output projection is hidden × hidden) and the key/value heads equal the heads (ESMC's config refuses others,
    when ``equal_kv``); its targets the query projection's width and the output projection's input."""

    def __init__(self, found: Discovery, equal_kv: bool = False):
        super().__init__(builder=None, found=found)
        self.equal_kv = equal_kv
        self.start = {n: f.base for n, f in found.fields.items()}

    def observe(self, values: dict, seq: int, batch: int, **_) -> Observed | None:
        if values["heads"] * values["head_dim"] != values["hidden"] or \
                self.equal_kv and values["kv_heads"] != values["heads"]:
            return None
        return Observed(seq, batch, targets={("count", KEY): 1, ("factor", KEY, 2): values["heads"] * values["head_dim"],
                                             ("count", WIDTH_KEY): 1, ("factor", WIDTH_KEY, 1): values["hidden"]})


def _product_found(equal_kv: bool = False) -> Discovery:
    fields = {"hidden": Field("hidden", 32, "free", "scale"), "heads": Field("heads", 4, "free", "scale"),
              "kv_heads": Field("kv_heads", 4, "free", "scale"), "head_dim": Field("head_dim", 8, "free", "scale")}
    # ESMC's count found the key/value heads moving with the heads (its config holds them equal)
    relations = {("kv_heads", "heads"), ("heads", "kv_heads")} if equal_kv else set()
    return Discovery(base={}, observation=None, fields=fields, flags={}, relations=relations)


def _discover_product(found: Discovery, equal_kv: bool = False) -> ProductDomain:
    domain = ProductDomain(found, equal_kv)
    base = domain.observe(domain.start, costs.BASE_SEQ, costs.BASE_BATCH)
    for name in found.fields:
        if not costs._moved(domain, base, name, domain.start):
            raise Untraceable(f"no move of {name} traces with the base structure")
    return domain


def test_a_head_width_that_runs_only_with_the_width_it_multiplies_into_is_a_product():
    """The head width moves with neither the width's closure (the heads, found moving with it) nor alone: only
    ``heads · head_dim = hidden`` lets it, a product the draws then solve.  Without it the fit's draws keep the
    head width at its base (refused: no move of head_dim)."""
    found = _product_found()
    domain = _discover_product(found)
    assert domain.products == [(("head_dim", "heads"), ("hidden",))] and found.products == domain.products
    assert ("factor", KEY, 2) in domain.effects["head_dim"]
    # the pairs the product makes moot (hidden ⊑ heads and back, from a move of both by 3) are no condition
    assert products.beside_product(domain, ("head_dim", "heads"), "hidden") == set()


def test_a_product_moves_the_fields_a_relation_holds_equal_to_its_factors():
    """ESMC's key/value heads must equal its heads: the heads ×3 of the product's moves take them along."""
    found = _product_found(equal_kv=True)
    domain = _discover_product(found, equal_kv=True)
    assert domain.products == [(("head_dim", "heads"), ("hidden",))]


def test_a_field_below_the_product_is_below_the_factor_its_draws_kept_equal_to_it():
    """Key/value heads found moving with the width (and so with the heads, its closure then) divide the heads:
    the draws kept the width's multiplier the heads', and the width is now their product with the head width."""
    found = _product_found()
    domain = _discover_product(found)
    domain.relations = {("kv_heads", "hidden"), ("hidden", "heads"), ("heads", "hidden")}
    assert products.beside_product(domain, ("head_dim", "heads"), "hidden") == {("kv_heads", "heads")}


def test_draws_solve_a_product_of_two_fields_for_the_third():
    import random

    from symparams.analysis.inference.products import solve_products

    values = {"heads": 12, "head_dim": 24, "hidden": 32}
    solve_products([(("head_dim", "heads"), ("hidden",))], values, random.Random(0))
    assert values == {"heads": 12, "head_dim": 24, "hidden": 288}


class RotaryDomain(costs.Domain):
    """A domain whose trace runs only where the rotary embedding's width (``head_dim``, which no shape follows)
    equals the rotated part of each head (``rope``), as DeepSeek-V3's does: its one target the score product's
    width, ``nope + rope``."""

    def __init__(self, found: Discovery):
        super().__init__(builder=None, found=found)
        self.start = {n: f.base for n, f in found.fields.items()}

    def observe(self, values: dict, seq: int, batch: int, **_) -> Observed | None:
        if values["head_dim"] != values["rope"]:
            return None
        width = values["nope"] + values["rope"]
        return Observed(seq, batch, targets={("count", KEY): 1, ("factor", KEY, 2): width},
                        forward={"": 2 * width})


def _rotary() -> RotaryDomain:
    fields = {"nope": Field("nope", 8, "free", "scale"), "rope": Field("rope", 4, "free", "scale"),
              "head_dim": Field("head_dim", 4, "irrelevant", "jitter"),
              "kv_heads": Field("kv_heads", 4, "irrelevant", "jitter")}
    domain = RotaryDomain(Discovery(base={}, observation=None, fields=fields, flags={}, relations=set()))
    base = domain.observe(domain.start, costs.BASE_SEQ, costs.BASE_BATCH)
    for name in fields:
        assert costs._moved(domain, base, name, domain.start)
    return domain


def test_a_cost_field_equal_to_its_partner_is_drawn_equal_to_it_not_among_its_divisors():
    """DeepSeek-V3's rotary embedding reads head_dim, which must equal qk_rope_head_dim: only their ×3 move together
    traces.  Taken for a head count dividing its partner, head_dim was drawn among rope's divisors (most draws
    did not run, and the verification found one configuration in eight); it is drawn equal to rope."""
    domain = _rotary()
    assert {("rope", "head_dim"), ("head_dim", "rope")} <= domain.found.relations
    assert "head_dim" in domain.cost_fields and domain.divides == {}
    rng = random.Random(0)
    for every in (False, True):  # the fit's draws and the verification's
        draws = [costs._draw(domain, rng, wide=every, every=every)[0] for _ in range(40)]
        assert all(d["head_dim"] == d["rope"] for d in draws)
        assert len({d["rope"] for d in draws}) > 1


def test_the_verification_moves_no_quiet_field_a_relation_ties():
    """MLA's key/value heads change no cost but must equal the heads: moved alone, as a quiet field is in the
    verification, no configuration would trace."""
    domain = _rotary()
    domain.quiet["head_dim"] = 5  # as if its move by one had traced and changed nothing
    rng = random.Random(1)
    assert all(d["head_dim"] == d["rope"] for d, _, _ in (costs._draw(domain, rng, True, True) for _ in range(40)))


class MambaDomain(costs.Domain):
    """Mamba-2's mixer as a toy: it runs where ``expand · hidden = head_dim · heads`` (the count's product
    equality) and the groups divide the heads; its one target the scan's width ``head_dim · heads``."""

    def __init__(self):
        fields = {"expand": Field("expand", 2, "free", "scale"), "hidden": Field("hidden", 64, "free", "scale"),
                  "head_dim": Field("head_dim", 4, "free", "scale"), "heads": Field("heads", 32, "free", "scale"),
                  "groups": Field("groups", 8, "free", "scale")}
        found = Discovery(base={}, observation=None, fields=fields, flags={}, relations=set())
        found.products = [(("expand", "hidden"), ("head_dim", "heads"))]
        super().__init__(builder=None, found=found)
        self.start = {n: f.base for n, f in fields.items()}

    def observe(self, values: dict, seq: int, batch: int, **_) -> Observed | None:
        if values["expand"] * values["hidden"] != values["head_dim"] * values["heads"] \
                or values["heads"] % values["groups"]:
            return None
        width = values["head_dim"] * values["heads"]
        return Observed(seq, batch, targets={("count", KEY): 1, ("factor", KEY, 2): width,
                                             ("factor", KEY, 1): values["groups"]})


def test_a_move_keeps_the_counts_product_equalities():
    """The heads ×3 take the first field of the other side along (expand), so ``expand · H = D · A`` still holds;
    a move that holds it already is left as it is."""
    found = MambaDomain().found
    start = {"expand": 2, "hidden": 64, "head_dim": 4, "heads": 32}
    assert products.balanced(found, {"heads": 96}, start) == {"heads": 96, "expand": 6}
    assert products.balanced(found, {"heads": 96, "hidden": 192}, start) == {"heads": 96, "hidden": 192}


def test_the_groups_find_the_heads_they_divide_across_a_product_and_the_products_fields_no_relation():
    """Mamba-2's groups must divide its heads: ×3 they trace only with the heads ×3, which trace only with a field
    of the other side of ``expand · H = D · A`` ×3 too.  The product's fields, each traced with another of them,
    are tied by the product alone: a pairwise relation among them (``H < A`` from heads and width moved together)
    would refuse the default config."""
    domain = MambaDomain()
    base = domain.observe(domain.start, costs.BASE_SEQ, costs.BASE_BATCH)
    for name in domain.found.fields:
        assert costs._moved(domain, base, name, domain.start), name
    assert domain.relations == {("groups", "heads")} and domain.products == []
    assert ("factor", KEY, 2) in domain.effects["heads"] and ("factor", KEY, 1) in domain.effects["groups"]


class TiedDomain(costs.Domain):
    """Falcon-H1's Mamba heads as a toy: ``heads · head_dim = width`` (the count knew only that the head width
    divides the width), the convolution's kernel × the head width equal to the attention heads by default."""

    def __init__(self):
        fields = {"attn_heads": Field("attn_heads", 32, "free", "scale"), "kernel": Field("kernel", 4, "free", "scale"),
                  "width": Field("width", 1024, "free", "scale"), "heads": Field("heads", 128, "free", "scale"),
                  "head_dim": Field("head_dim", 8, "free", "scale")}
        found = Discovery(base={}, observation=None, fields=fields, flags={}, relations={("head_dim", "width")})
        super().__init__(builder=None, found=found)
        self.start = {n: f.base for n, f in fields.items()}

    def observe(self, values: dict, seq: int, batch: int, **_) -> Observed | None:
        if values["heads"] * values["head_dim"] != values["width"]:
            return None
        return Observed(seq, batch, targets={("count", KEY): 1, ("factor", KEY, 2): values["width"]})


def test_a_product_the_tied_fields_hold_already_is_not_the_forward_passes():
    """``kernel · head_dim = attn_heads`` holds at the defaults and its moves trace, but only because the width,
    tied to the head width, moves with it: the product found is ``head_dim · heads = width``."""
    domain = TiedDomain()
    base = domain.observe(domain.start, costs.BASE_SEQ, costs.BASE_BATCH)
    assert costs._product_partner(domain, base, "head_dim", domain.start)
    assert domain.products == [(("head_dim", "heads"), ("width",))]
