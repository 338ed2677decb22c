"""Discovery of fields tied to others: a width the config reads back otherwise than given (computed, or probed),
products of fields held equal, a list of kinds verified in another order, a list that must add up to a width.
The toy builders of :mod:`tests.analysis.test_inference_discovery` stand for transformers."""

import math

import pytest

from symparams.analysis.inference import Relation
from symparams.analysis.inference.discovery import discover
from tests.analysis.test_inference_discovery import ToyBuilder


class PerLayerWidthBuilder(ToyBuilder):
    """Gemma 4's head width: its full-attention layers override it per layer, so the config reads back no one
    value for it (None), though the sliding layers are built at the width the file gives."""

    DEFAULTS = {"hidden_size": 64, "head_width": 16, "num_layers": 2}

    def read_back(self, values, others=()):
        config = {**self.DEFAULTS, **values}
        return {k: None if k == "head_width" else config[k] for k in [*values, *others]}

    def observe(self, values):
        from symparams.analysis.inference.probing import Observation

        self.builds += 1
        config = {**self.DEFAULTS, **values}
        h, d, n = (config[k] for k in ("hidden_size", "head_width", "num_layers"))
        if min(h, d, n) < 1:
            return None
        shapes = {"embed": [(100, h)], "layers.*.q": [(h, d)] * n}
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return Observation(shapes, total, total)


class ProductBuilder(ToyBuilder):
    """Mamba2's widths: the config class refuses ``hidden_size·expand ≠ num_heads·head_dim``; the in-projection
    is ``hidden_size·expand`` wide, the per-head parameters ``num_heads`` long."""

    DEFAULTS = {"hidden_size": 4096, "expand": 2, "num_heads": 128, "head_dim": 64, "num_layers": 2}

    def observe(self, values):
        from symparams.analysis.inference.probing import Observation

        self.builds += 1
        config = {**self.DEFAULTS, **values}
        h, e, a, d, n = (config[k] for k in ("hidden_size", "expand", "num_heads", "head_dim", "num_layers"))
        if min(h, e, a, d, n) < 1 or h * e != a * d:
            return None
        shapes = {"embed": [(100, h)], "layers.*.in_proj": [(h * e, h)] * n, "layers.*.dt": [(a,)] * n}
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return Observation(shapes, total, total)


def test_a_field_the_config_reads_back_as_no_one_value_is_probed_not_taken_as_computed():
    """Taken as computed (derived), the head width was left out of the reading: a file's width was counted at the
    default's."""
    width = discover(PerLayerWidthBuilder()).fields["head_width"]
    assert width.kind == "free" and ("dim", "layers.*.q", 1) in width.effects


class OverwrittenWidthBuilder(PerLayerWidthBuilder):
    """BailingHybrid's head width: its linear-attention layers take the width the file gives, then the config
    overwrites the field with another (head_dim becomes qk_rope_head_dim), so it reads back otherwise."""

    def read_back(self, values, others=()):
        config = {**self.DEFAULTS, **values}
        return {k: 8 if k == "head_width" else config[k] for k in [*values, *others]}


class ComputedWidthBuilder(OverwrittenWidthBuilder):
    """A width the config computes whatever the file gives: the builds never see the value given."""

    def observe(self, values):
        return super().observe({k: v for k, v in values.items() if k != "head_width"})


def test_a_field_read_back_otherwise_is_computed_only_where_the_value_given_shapes_no_tensor():
    """Taken as computed, BailingHybrid's head_dim was left out of the reading: a file's head_dim of 32 was counted
    at the default's, 124,011,800,032 where transformers builds 122,358,891,712."""
    assert discover(OverwrittenWidthBuilder()).fields["head_width"].kind != "derived"
    assert discover(ComputedWidthBuilder()).fields["head_width"].kind == "derived"


def test_a_product_of_two_fields_held_equal_to_two_others_is_a_relation_and_draws_move_every_field():
    import random

    from symparams.analysis.inference.engine import conditions
    from symparams.analysis.inference.sampling import draw

    builder = ProductBuilder()
    found = discover(builder)
    assert found.products == [(("expand", "hidden_size"), ("head_dim", "num_heads"))]
    assert not found.relations  # the pairwise relations the partner search found are dropped
    rule = Relation("expand*hidden_size", "equals", "head_dim*num_heads")
    assert rule in conditions(builder, found).relations
    rng = random.Random(0)
    drawn = [draw(found, rng) for _ in range(40)]
    assert all(rule.holds(v) for v in drawn)
    # the ratios a pairwise draw kept fixed move: the width is no fixed multiple of the heads, nor the head width
    # of the expansion
    assert len({v["hidden_size"] / v["num_heads"] for v in drawn}) > 5
    assert len({v["head_dim"] / v["expand"] for v in drawn}) > 5
    assert sum(builder.observe(v) is not None for v in drawn) == 40


def test_a_width_a_head_count_divides_is_no_product():
    assert discover(ToyBuilder()).products == []


def test_a_product_relation_is_read_and_refused_in_one_line():
    from symparams.families.inferred_conditions import _check_relations, side_value
    from symparams.families.inferred_data import OutsideConditions

    rule = Relation("expand*hidden_size", "equals", "head_dim*num_heads")
    assert rule.holds({"expand": 3, "hidden_size": 64, "head_dim": 48, "num_heads": 4})
    assert not rule.holds({"expand": 2, "hidden_size": 64, "head_dim": 48, "num_heads": 4})
    assert side_value("expand*hidden_size", {"expand": 3}) is None
    conditions = {"relations": [str(rule)]}
    _check_relations(conditions, {"expand": 3, "hidden_size": 64, "head_dim": 48, "num_heads": 4}, "c.json")
    with pytest.raises(OutsideConditions, match=r"expand\*hidden_size = 128, head_dim\*num_heads = 192") as refused:
        _check_relations(conditions, {"expand": 2, "hidden_size": 64, "head_dim": 48, "num_heads": 4}, "c.json")
    assert "\n" not in str(refused.value)


def test_a_formula_in_kind_counts_is_verified_with_the_list_in_another_order():
    """The last ``shared`` layers lack their keys (Gemma 4's layers reusing others' keys and values): the fit's
    lists, written kind by kind, end in full layers, where a key is 10 wide; in another order the last layers hold
    a sliding one too, and the count differs from a formula that took the tail for full layers."""
    from types import SimpleNamespace

    from symparams.analysis.inference.engine import _in_another_order, kinds_of_lists
    from symparams.analysis.inference.probing import Observation, with_kinds

    kinds = {"layer_types": ("num_layers", ("sliding", "full"), ["sliding", "full"])}

    class SharedTailBuilder:
        def observe(self, values):
            config = with_kinds(values, kinds)
            keyed = config["layer_types"][:len(config["layer_types"]) - config["shared"]]
            total = sum(10 if kind == "full" else 1 for kind in keyed)
            return Observation({"layers.*.k": [(1,)] * len(keyed)}, total, total,
                               values={"layer_types": config["layer_types"], "shared": config["shared"]})

    found = SimpleNamespace(kinds=kinds, free=["layer_types#sliding", "layer_types#full", "shared"])
    builder = SharedTailBuilder()
    for shared, differs in ((0, False), (2, True)):
        values = {"layer_types#sliding": 3, "layer_types#full": 3, "shared": shared}
        sample = (values, builder.observe(values))
        [(other, obs)] = _in_another_order(builder, found, sample)
        assert other["layer_types"] == ["full", "full", "sliding", "sliding", "sliding", "full"]
        assert kinds_of_lists(other, found.free) == {"layer_types#sliding": 3, "layer_types#full": 3}
        # the formula the sorted lists fit, 3 sliding keys and 10 for each full one not among the last
        assert (obs.total != 3 + 10 * (3 - shared)) == differs and sample[1].total == 3 + 10 * (3 - shared)
    one_kind = {"layer_types#sliding": 0, "layer_types#full": 3, "shared": 1}
    assert _in_another_order(builder, found, (one_kind, builder.observe(one_kind))) == []  # no other order


class AxialWidthsBuilder(ToyBuilder):
    """Reformer's axial position tables: two widths in a list the width must equal the sum of (the model refuses
    any other), a table of 4 rows at the first and one of 8 rows at the second."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "hidden_size": 96, "widths": [32, 64]}
    checked = True  # whether the model refuses widths that do not add up to the hidden size

    def __init__(self):
        super().__init__()
        self.built = {}

    def observe(self, values):
        from symparams.analysis.inference.probing import with_sums

        values = with_sums(values, self.sums)
        config = {**self.DEFAULTS, **values}
        if self.checked and sum(config["widths"]) != config["hidden_size"]:
            return None
        found = super().observe({k: v for k, v in values.items() if k != "widths"})
        if found is not None:
            w0, w1 = config["widths"]
            found.shapes.update({"pos.first": [(4, w0)], "pos.second": [(8, w1)]})
            found.total += 4 * w0 + 8 * w1
        return found


def test_a_width_a_list_must_add_up_to_moves_with_the_list_s_last_entry():
    from symparams.analysis.inference.engine import conditions

    builder = AxialWidthsBuilder()
    found = discover(builder)
    assert builder.sums == {"hidden_size": ("widths", [32, 64])}
    assert found.fields["hidden_size"].free and found.sums == builder.sums
    tripled = builder.observe({"hidden_size": 288})
    assert tripled.shapes["pos.first"] == [(4, 32)] and tripled.shapes["pos.second"] == [(8, 256)]
    assert conditions(builder, found).sums == {"widths": "hidden_size"}


def test_a_width_that_moves_without_its_list_is_not_tied_to_it():
    builder = AxialWidthsBuilder()
    builder.checked = False  # widths that add up to the hidden size only by chance
    found = discover(builder)
    assert builder.sums == {} and found.fields["hidden_size"].free
    assert builder.observe({"hidden_size": 288}).shapes["pos.second"] == [(8, 64)]
