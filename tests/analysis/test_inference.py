"""The inference engine against transformers on the meta device, and against symparams' hand-written families.

The reference is transformers itself: for each sampled type the inferred
closed form is evaluated on random configurations this test draws (not the
engine's own verification: other ranges, heads that need not divide the
width, flags at random) and on the type's default config, and compared
with ``parameters()`` of the real model built on the meta device.  Where
symparams has a hand-written family, the two closed forms must be the same
polynomial once the symbols are matched.
"""

import importlib.util
import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
import torch
import transformers

from symparams import model
from symparams.analysis.inference import AUTO_CLASSES, Inferred, Relation, infer, symbols_for
from symparams.analysis.inference.discovery import discover, missed_relations
from symparams.analysis.inference.fitting import Term, basis, fit, solve
from symparams.core.symbols import SYMBOLS

# -- the exact fit (fast) ------------------------------------------------------------------------------------------


def test_gauss_jordan_is_exact_and_says_when_there_is_no_solution():
    third = Fraction(1, 3)
    assert solve([[Fraction(3), Fraction(0)], [Fraction(0), Fraction(6)]], [Fraction(1), Fraction(2)]) == \
        ([third, third], 2)
    assert solve([[Fraction(1), Fraction(1)], [Fraction(2), Fraction(2)]], [Fraction(1), Fraction(3)]) is None


def test_fit_finds_the_smallest_exact_basis():
    points = [{"h": h, "l": n} for h in (64, 128, 192, 320) for n in (1, 2, 3, 5)]
    values = [12 * p["h"] ** 2 * p["l"] // p["l"] + 13 * p["h"] for p in points]  # quadratic in h alone
    found = fit(points, values, ["h", "l"])
    assert found == {Term((("h", 2),)): 12, Term((("h", 1),)): 13}


def test_fit_writes_a_width_that_is_not_divisible_with_a_floor():
    points = [{"h": h, "a": a, "g": g} for h in (30, 64, 100) for a in (3, 7, 8) for g in (1, 2, 4, 5)]
    values = [p["g"] * (p["h"] // p["a"]) for p in points]
    found = fit(points, values, ["h", "a", "g"])
    assert found == {Term((("g", 1),), ("h", "a")): 1}


def test_fit_writes_half_a_product_of_two_widths_exactly_where_both_are_odd():
    # ZAYA's value projection: key/value heads × head width // 2; a plain G·D/2 is off by 1/2 at odd G and D
    points = [{"g": g, "d": d} for g in (1, 2, 3, 4, 5) for d in (63, 64, 127, 128, 255, 769)]
    found = fit(points, [p["g"] * p["d"] // 2 for p in points], ["g", "d"])
    assert found is not None
    assert all(sum(c * t.value({"g": g, "d": d}) for t, c in found.items()) == g * d // 2
               for g in (7, 9, 11) for d in (3, 1001, 4097))


def test_fit_writes_the_patches_of_a_square_image_with_a_squared_floor():
    points = [{"i": i, "p": p} for i in (224, 336, 384, 500, 640) for p in (14, 16, 32)]
    values = [(p["i"] // p["p"]) ** 2 + 1 for p in points]  # a ViT's position table: a row per patch, one for CLS
    found = fit(points, values, ["i", "p"])
    assert {str(t): c for t, c in found.items()} == {"floor(i/p)**2": 1, "1": 1}


def test_one_or_two_terms_fit_where_the_basis_outgrows_the_points():
    # a layer count moving in steps of its group size: nine distinct points, too few for the full floor basis
    pairs = [(4, 4), (8, 4), (8, 8), (12, 12), (16, 4), (16, 8), (16, 16), (24, 8), (24, 12)]
    points = [{"l": l, "g": g} for l, g in pairs]
    found = fit(points, [l // g for l, g in pairs], ["l", "g"], max_level=5)
    assert {str(t): c for t, c in found.items()} == {"l/g": 1}
    assert fit(points[:5], [l // g for l, g in pairs[:5]], ["l", "g"], max_level=5) is None  # too few to trust


def test_a_layer_in_every_fixed_number_of_layers_is_fitted_with_that_period():
    # Gemma 4: a full-attention layer in every 6, and the last layer always a full one
    points = [{"l": n} for n in range(1, 17)]
    full = [-(-p["l"] // 6) for p in points]
    assert {str(t): c for t, c in fit(points, full, ["l"]).items()} == {"ceiling(l/6)": 1}
    sliding = [p["l"] - f for p, f in zip(points, full)]
    assert {str(t): c for t, c in fit(points, sliding, ["l"]).items()} == {"l": 1, "ceiling(l/6)": -1}


def test_layers_of_a_kind_among_the_first_of_a_difference_are_fitted_with_an_offset_floor():
    # Gemma 4 with its last S layers reusing other layers' keys and values: full attention in every 6 of L - S
    points = [{"l": l, "s": s} for l in range(7, 31, 2) for s in (1, 2, 3)]
    full = [(p["l"] - p["s"]) // 6 for p in points]
    layers = frozenset({"l", "s"})
    assert {str(t): c for t, c in fit(points, full, ["l", "s"], layers=layers).items()} == {"floor(l/6 - s/6)": 1}
    sliding = [p["l"] - p["s"] - f for p, f in zip(points, full)]
    assert {str(t): c for t, c in fit(points, sliding, ["l", "s"], layers=layers).items()} == {
        "l": 1, "s": -1, "floor(l/6 - s/6)": -1}
    assert fit(points, full, ["l", "s"]) is None  # a difference of widths is no layer pattern


def test_a_floor_of_a_difference_is_stored_and_read_back():
    from symparams.analysis.inference.result import decode, encode
    from symparams.core.symbols import L
    from symparams.families.inferred import formula

    s = sp.Symbol("num_kv_shared_layers", integer=True, positive=True)
    expr = sp.expand(L - s - sp.floor((L - s) / 6))
    data = encode(expr)
    assert ["-1", [], [[["L", "num_kv_shared_layers"], 6, 1]]] in data
    assert decode(data, {"L": L, "num_kv_shared_layers": s}) == expr
    assert formula(data, {"L": 35, "num_kv_shared_layers": 20}) == 15 - 2
    assert str(formula(data, {"L": L, "num_kv_shared_layers": s})).count("floor((L - num_kv_shared_layers)/6)") == 1


def test_a_fixed_period_is_stored_as_a_whole_number_and_read_back():
    from symparams.analysis.inference.result import decode, encode
    from symparams.core.symbols import H, L
    from symparams.families.inferred import formula

    expr = sp.expand(H * sp.ceiling(L / 6) + 2 * H * L)
    data = encode(expr)
    assert data[0] == ["1", [["H", 1]], [["L", 6, 1, "ceil"]]]
    assert decode(data, {"H": H, "L": L}) == expr
    assert formula(data, {"H": 10, "L": 13}) == 10 * 3 + 2 * 10 * 13


def test_layers_at_one_place_in_every_fixed_number_are_fitted_and_stored_with_a_shift():
    # two linear-attention layers in every 5 (at 0 and 2): floor((L + 4)/5) + floor((L + 2)/5) of L
    from symparams.analysis.inference.result import decode, encode
    from symparams.core.symbols import L
    from symparams.families.inferred import formula

    points = [{"l": n} for n in range(1, 23)]
    linear = [(p["l"] + 4) // 5 + (p["l"] + 2) // 5 for p in points]
    found = fit(points, linear, ["l"], layers=frozenset({"l"}))
    assert all(sum(c * t.value(p) for t, c in found.items()) == v for p, v in zip(points, linear))
    expr = sp.expand(3 * sp.floor((L + 2) / 5) - sp.floor((L - 1) / 4))
    data = encode(expr)
    assert ["3", [], [[["L", 2], 5, 1]]] in data and decode(data, {"L": L}) == expr
    assert formula(data, {"L": 13}) == 3 * 3 - 3


def test_layers_at_an_offset_in_every_period_of_the_config_are_fitted():
    # Jamba: an attention layer at every i with i % period == offset, both fields; an offset of 0 divides nothing
    rng = random.Random(1)
    points = []
    while len(points) < 45:
        period = rng.randint(1, 8)
        offset = rng.randint(0, period - 1)
        points.append({"l": rng.randint(offset + 1, 30), "p": period, "o": offset})
    attention = [sum(1 for i in range(p["l"]) if i % p["p"] == p["o"]) for p in points]
    found = fit(points, attention, ["l", "p", "o"], layers=frozenset({"l"}))
    assert {str(t): c for t, c in found.items()} == {"1": 1, "floor((l - o - 1)/p)": 1}
    from symparams.analysis.inference.result import decode, encode
    from symparams.families.inferred import formula

    names = {n: sp.Symbol(n, integer=True, positive=True) for n in ("L", "o", "p")}
    expr = sp.floor((names["L"] - names["o"] - 1) / names["p"]) + 1
    data = encode(expr)
    assert [["L", "o", -1], "p", 1] in data[-1][2] and decode(data, names) == expr
    assert formula(data, {"L": 32, "o": 4, "p": 8}) == 4  # Jamba's defaults: layers 4, 12, 20, 28


def test_one_layer_in_every_d_of_layers_of_two_kinds_together_is_fitted_stored_and_read_back():
    # Qwen3-Next: experts where (i + 1) % decoder_sparse_step == 0, the layers counted by kind (full, linear): 3 and
    # 3 layers, every 2nd sparse, have 3 sparse ones, where floors of each kind apart would say 1 + 1
    rng = random.Random(3)
    points = [{"f": rng.randint(0, 10), "s": rng.randint(1, 30), "d": rng.randint(1, 8)} for _ in range(40)]
    sparse = [sum(1 for i in range(p["f"] + p["s"]) if (i + 1) % p["d"] == 0) for p in points]
    found = fit(points, sparse, ["f", "s", "d"], layers=frozenset({"f", "s"}))
    assert {str(t): c for t, c in found.items()} == {"floor((f + s)/d)": 1}
    from symparams.analysis.inference.result import decode, encode
    from symparams.families.inferred import formula

    names = {n: sp.Symbol(n, integer=True, positive=True) for n in ("F", "S", "d")}
    expr = sp.floor((names["F"] + names["S"]) / names["d"])
    data = encode(expr)
    assert data == [["1", [], [[["F", ["S"]], "d", 1]]]] and decode(data, names) == expr
    assert formula(data, {"F": 3, "S": 3, "d": 2}) == 3


def test_a_count_a_field_divides_is_that_field_times_a_fit_of_the_rest():
    # NLLB-MoE: each of the floor(L/s) sparse layers holds all E experts; 25 points cannot pin down the floor basis
    # in three fields, but can pin down E times the one in two
    from symparams.analysis.inference.engine import _factored

    rng = random.Random(2)
    points = [{"l": rng.randint(1, 16), "s": rng.randint(1, 4), "e": rng.randint(1, 16)} for _ in range(25)]
    experts = [p["e"] * (p["l"] // p["s"]) for p in points]
    layers = frozenset({"l", "s"})
    assert fit(points, experts, ["l", "s", "e"], layers=layers) is None
    found = _factored(points, experts, ["l", "s", "e"], frozenset(), layers)
    assert {str(t): c for t, c in found.items()} == {"e*floor(l/s)": 1}


def test_a_count_0_wherever_a_flag_is_off_is_the_flag_times_a_fit_where_it_is_on():
    # Jamba's recurrent layers' biases: mamba_proj_bias times the layers that are not attention layers; a flag
    # times a floor of a difference is in no basis, and held at its default the count would miss every bias
    from symparams.analysis.inference.engine import _factored

    rng = random.Random(5)
    points = []
    while len(points) < 45:
        period = rng.randint(2, 12)
        points.append({"l": rng.randint(1, 30), "p": period, "o": rng.randint(0, period - 1), "b": rng.randint(0, 1)})
    biases = [p["b"] * sum(1 for i in range(p["l"]) if i % p["p"] != p["o"]) for p in points]
    found = _factored(points, biases, ["l", "p", "o", "b"], frozenset({"b"}), frozenset({"l"}))
    assert {str(t): c for t, c in found.items()} == {"b": -1, "b*l": 1, "b*floor((l - o - 1)/p)": -1}


def test_a_fit_with_too_few_points_is_refused():
    points = [{"x": x} for x in (1, 2, 3)]
    assert fit(points, [x * x for x in (1, 2, 3)], ["x"]) is None  # 3 terms need 3 + 3 points


def test_flags_are_never_squared_nor_divided_by():
    terms = {str(t) for t in basis(["h", "f"], 4, binary=frozenset({"f"}))}
    assert "f**2" not in terms and "h/f" not in terms and "f/h" in terms


def test_layers_of_several_kinds_are_named_by_kind_in_layer_order():
    from symparams.analysis.inference.probing import _layer_kinds, _normalise

    lists = {"layers", "layers.0.experts", "layers.2.experts"}
    names = ["embed.weight", "layers.0.attn.weight", "layers.0.experts.0.w", "layers.0.experts.1.w",
             "layers.1.attn.weight", "layers.1.mlp.weight", "layers.2.attn.weight", "layers.2.experts.0.w",
             "layers.2.experts.1.w"]
    wide = {"layers.1.attn.weight": (8, 4)}  # a global-attention layer, wider than the sliding ones
    named = [(n.split("."), wide.get(n, (4, 4))) for n in names]
    kinds = _layer_kinds(named, lists)
    assert [_normalise(p, lists, kinds) for p, _ in named] == [
        "embed.weight", "layers.*1.attn.weight", "layers.*1.experts.*.w", "layers.*1.experts.*.w",
        "layers.*2.attn.weight", "layers.*2.mlp.weight", "layers.*1.attn.weight", "layers.*1.experts.*.w",
        "layers.*1.experts.*.w"]
    # names that keep one shape: plain *, a name only some layers hold counts fewer instances
    even = [(n.split("."), (4, 4)) for n in names]
    assert {_normalise(p, lists, _layer_kinds(even, lists)) for p, _ in even} == {
        "embed.weight", "layers.*.attn.weight", "layers.*.experts.*.w", "layers.*.mlp.weight"}


def test_a_layer_merely_lacking_names_is_of_the_kind_that_has_them():
    from symparams.analysis.inference.probing import _layer_kinds, _normalise

    # sliding layers (q narrower) and a full one; layer 0 has no residual mix, layer 3 reuses another's keys
    lists = {"layers"}
    shapes = {0: {"q": (4, 4), "k": (4, 4)}, 1: {"q": (4, 4), "k": (4, 4), "mix": (4,)},
              2: {"q": (8, 4), "k": (8, 4), "mix": (4,)}, 3: {"q": (4, 4), "mix": (4,)}}
    named = [(f"layers.{i}.{n}".split("."), shape) for i, found in shapes.items() for n, shape in found.items()]
    kinds = _layer_kinds(named, lists)
    assert sorted({_normalise(p, lists, kinds) for p, _ in named}) == [
        "layers.*1.k", "layers.*1.mix", "layers.*1.q", "layers.*2.k", "layers.*2.mix", "layers.*2.q"]


def test_the_tensors_of_a_parameter_list_in_several_shapes_are_kinds():
    from symparams.analysis.inference.probing import _layer_kinds, _normalise

    lists = {"embeddings.weights"}  # Reformer's axial position tables: [64, 1, 64] and [1, 64, 192]
    named = [("embeddings.weights.0".split("."), (64, 1, 64)), ("embeddings.weights.1".split("."), (1, 64, 192))]
    kinds = _layer_kinds(named, lists)
    assert [_normalise(p, lists, kinds) for p, _ in named] == ["embeddings.weights.*1", "embeddings.weights.*2"]


def test_a_dict_of_numbered_modules_is_a_list():
    from torch import nn

    from symparams.analysis.inference.probing import observation_of

    class Experts(nn.ModuleDict):  # NLLB-MoE's: expert_0, expert_1, … beside a dropout
        def __init__(self, n):
            super().__init__({f"expert_{i}": nn.Linear(4, 8) for i in range(n)})
            self.dropout = nn.Dropout(0.1)

    with torch.device("meta"):
        found = observation_of(nn.ModuleDict({"experts": Experts(3), "norm": nn.LayerNorm(4)}))
    assert {n: len(s) for n, s in found.shapes.items()} == {
        "experts.*.weight": 3, "experts.*.bias": 3, "norm.weight": 1, "norm.bias": 1}


class ToyBuilder:
    """A model without transformers: a width the head count must divide (2304 and 8: ×3 divides it, ×7 does
    not), a token-type table only when its size is above 0, and a stack of layers."""

    DEFAULTS = {"hidden_size": 2304, "num_heads": 8, "type_vocab_size": 0, "num_layers": 2}

    def __init__(self):
        self.errors, self.builds = {}, 0
        self.companions, self.kinds = {}, {}

    def defaults(self):
        return dict(self.DEFAULTS)

    def read_back(self, values, others=()):
        config = {**self.DEFAULTS, **values}
        return {k: config[k] for k in [*values, *others]}

    def refusal(self, values):
        return None  # the config takes any values; the model may not build

    def observe(self, values):
        from symparams.analysis.inference.probing import Observation

        self.builds += 1
        config = {**self.DEFAULTS, **values}
        h, a, t, n = (config[k] for k in ("hidden_size", "num_heads", "type_vocab_size", "num_layers"))
        if h % a or min(h, a, n) < 1 or t < 0:
            self.errors[tuple(values.items())] = "ValueError: the width is not a multiple of the heads"
            return None
        shapes = {"embed": [(100, h)], "layers.*.q": [(h, h)] * n, "layers.*.norm": [(h // a,)] * n}
        if t:
            shapes["token_type"] = [(t, h)]
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return Observation(shapes, total, total)


def test_a_held_field_whose_next_value_only_adds_parameters_is_lifted_to_a_variable():
    found = discover(ToyBuilder())
    assert found.lifted == {"type_vocab_size": 0} and found.fields["type_vocab_size"].free


class GlobalLayerBuilder(ToyBuilder):
    """A global layer in every 6 (of 12 by default), with a table of its own: a base of 4 layers has none."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "num_layers": 12}

    def observe(self, values):
        found = super().observe(values)
        config = {**self.DEFAULTS, **values}
        if found is None or config["num_layers"] < 6:
            return found
        table = [(config["hidden_size"], 2)] * (config["num_layers"] // 6)
        return type(found)({**found.shapes, "layers.*.global": table}, found.total, found.trainable)


def test_a_base_keeps_every_kind_of_layer_the_default_has():
    assert discover(GlobalLayerBuilder()).base["num_layers"] == 6
    assert discover(ToyBuilder()).base.get("num_layers", 2) == 2  # 2 layers by default: not lowered


class ExclusiveTablesBuilder(ToyBuilder):
    """Two tables that each build alone above size 0 but not together (one or the other)."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "segment_vocab_size": 0}

    def observe(self, values):
        config = {**self.DEFAULTS, **values}
        if config["type_vocab_size"] and config["segment_vocab_size"]:
            self.builds += 1
            self.errors[tuple(values.items())] = "ValueError: a token-type table or a segment table, not both"
            return None
        found = super().observe(values)
        if found is None or not config["segment_vocab_size"]:
            return found
        table = (config["segment_vocab_size"], config["hidden_size"])
        return type(found)({**found.shapes, "segment": [table]}, found.total + math.prod(table),
                           found.trainable + math.prod(table))


def test_fields_lifted_together_that_do_not_build_together_are_held_instead():
    found = discover(ExclusiveTablesBuilder())
    assert found.lifted == {}
    assert found.fields["type_vocab_size"].kind == found.fields["segment_vocab_size"].kind == "fixed"


class PeriodicAttentionBuilder(ToyBuilder):
    """Jamba's layers: an attention layer where ``i % attn_layer_period == attn_layer_offset`` (the offset below
    the period, which the config checks), a recurrent one elsewhere; 32 layers, one in every 8 from the fifth, by
    default.  The base keeps 6 layers, and the period is lowered with them (a layer field): one attention layer
    there whatever the period above the offset, or the offset below the period."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "num_layers": 32, "attn_layer_period": 8, "attn_layer_offset": 4}

    def observe(self, values):
        config = {**self.DEFAULTS, **values}
        period, offset = config["attn_layer_period"], config["attn_layer_offset"]
        if not 0 <= offset < period:
            self.builds += 1
            self.errors[tuple(values.items())] = "ValueError: the offset must be smaller than the period"
            return None
        found = super().observe(values)
        if found is None:
            return found
        attention = sum(1 for i in range(config["num_layers"]) if i % period == offset)
        h = config["hidden_size"]
        shapes = {**found.shapes, "layers.*.attn": [(h, 3 * h)] * attention,
                  "layers.*.scan": [(h, 2)] * (config["num_layers"] - attention)}
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return type(found)(shapes, total, total)


def test_a_period_of_layers_the_base_ends_before_is_a_variable_and_its_offset_below_it():
    found = discover(PeriodicAttentionBuilder())
    assert found.base["num_layers"] == 6 and found.base["attn_layer_period"] == 6
    # at the base's 6 layers both change nothing: held there, 18 layers with a period of 6 from 4 would be
    # counted with one attention layer where they have 3
    assert found.fields["attn_layer_period"].free and found.fields["attn_layer_offset"].free
    assert ("layers.*.attn" in {e[1] for e in found.fields["attn_layer_offset"].effects})
    assert ("attn_layer_offset", "attn_layer_period") in found.relations


class OneExpertBuilder(ToyBuilder):
    """Jamba's feed-forward: a router and ``num_experts`` experts, or a plain MLP (no router) for one expert."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "num_experts": 16}

    def observe(self, values):
        found = super().observe(values)
        experts, h = {**self.DEFAULTS, **values}["num_experts"], {**self.DEFAULTS, **values}["hidden_size"]
        if found is None or experts < 1:
            return None
        shapes = {**found.shapes, "mlp.experts.*": [(h, 4 * h)] * experts, "mlp.router": [(experts, h)]} \
            if experts > 1 else {**found.shapes, "mlp.fc": [(h, 4 * h)]}
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return type(found)(shapes, total, total)


def test_a_size_whose_value_1_builds_other_parameters_is_no_lower_than_2():
    found = discover(OneExpertBuilder())
    # counted with the router, one expert would be h more than the plain MLP transformers builds
    assert found.fields["num_experts"].free and found.least == {"num_experts": 2}
    assert "num_heads" not in found.least  # one head builds the same parameters


def test_a_divisibility_the_first_probe_missed_is_found_when_draws_fail():
    builder = ToyBuilder()
    found = discover(builder)
    assert ("num_heads", "hidden_size") not in found.relations  # 24 divides 2304: the ×3 probe built
    assert missed_relations(builder, found)
    assert ("num_heads", "hidden_size") in found.relations


def test_fields_take_the_standard_symbols_once():
    mapped = symbols_for(["hidden_size", "d_model", "num_key_value_heads", "q_lora_rank", "rope_dim"])
    assert mapped["hidden_size"] is SYMBOLS["H"].symbol
    assert str(mapped["d_model"]) == "d_model"  # H is taken: the second field keeps its name
    assert mapped["num_key_value_heads"] is SYMBOLS["G"].symbol and mapped["q_lora_rank"] is SYMBOLS["R_q"].symbol
    assert mapped["rope_dim"].is_integer and mapped["rope_dim"].is_positive
    assert symbols_for(["rope_dim"])["rope_dim"] is mapped["rope_dim"]  # created once


def test_relations_say_where_a_configuration_is_outside_them():
    assert Relation("heads", "divides", "hidden").holds({"heads": 12, "hidden": 768})
    assert not Relation("heads", "divides", "hidden").holds({"heads": 7, "hidden": 768})
    assert Relation("k", "below", "layers").holds({"k": 1, "layers": 2})


class HeadWidthBuilder(ToyBuilder):
    """XLNet's head width: computed from the width and the heads when left out, refused unless it is that."""

    DEFAULTS = {"hidden_size": 1024, "num_heads": 16, "num_layers": 2}

    def read_back(self, values, others=()):
        config = {**self.DEFAULTS, **values}
        config.setdefault("head_width", config["hidden_size"] // config["num_heads"])
        return {k: config[k] for k in [*values, *others]}

    def defaults(self):
        return self.read_back({}, [*self.DEFAULTS, "head_width"])

    def observe(self, values):
        from symparams.analysis.inference.probing import Observation

        self.builds += 1
        config = self.read_back(values, ["head_width", *self.DEFAULTS])
        h, a, d, n = (config[k] for k in ("hidden_size", "num_heads", "head_width", "num_layers"))
        if min(h, a, d, n) < 1 or d * a != h:
            return None
        shapes = {"embed": [(100, h)], "layers.*.q": [(h, a, d)] * n}
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return Observation(shapes, total, total, values=config)


def test_a_pair_moved_only_together_at_unequal_bases_is_written_as_their_bases_divide():
    """Moved alone, the width takes its head width along; the head width moves only with the width.  The old
    engine wrote the reversed pair as ``hidden_size < head_width``, which no config meets, its default least."""
    from symparams.analysis.inference.engine import conditions

    builder = HeadWidthBuilder()
    found = discover(builder)
    where = conditions(builder, found)
    assert Relation("head_width", "divides", "hidden_size") in where.relations
    assert not [r for r in where.relations if r.kind == "below"]
    assert where.violated(builder.defaults()) == []


def test_a_verification_applies_the_formula_s_own_conditions_to_the_default_config(monkeypatch):
    from symparams.analysis.inference import engine

    builder = HeadWidthBuilder()
    found = discover(builder)
    contradictory = (Relation("hidden_size", "below", "head_width"),)
    monkeypatch.setattr(engine, "_relations", lambda found: contradictory)
    h, a, d, n = (sp.Symbol(k) for k in ("h", "a", "d", "n"))
    symbols = {"hidden_size": h, "num_heads": a, "head_width": d, "num_layers": n}
    total = 100 * h + n * h * a * d  # right wherever the model builds
    verified = engine.verify(builder, found, total, {k: v for k, v in symbols.items() if k in found.free}, 4, 0)
    assert verified.outside == ("hidden_size < head_width",) and not verified.passed
    assert engine._failure(verified).startswith("the default config breaks the formula's own conditions")


class InnerWidthBuilder(ToyBuilder):
    """GPT-2's ``n_inner``: unset by default (4·H), a width of its own when set; and an embedding of its own size,
    projected to the width only where the two differ (ELECTRA)."""

    DEFAULTS = {"hidden_size": 64, "num_heads": 4, "embedding_size": 32, "num_layers": 2, "n_inner": None}

    def declares_int(self, name):
        return name == "n_inner"

    def observe(self, values):
        from symparams.analysis.inference.probing import Observation

        self.builds += 1
        config = {**self.DEFAULTS, **values}
        h, a, e, n, inner = (config[k] for k in ("hidden_size", "num_heads", "embedding_size", "num_layers", "n_inner"))
        if h % a or min(h, a, e, n, inner or 1) < 1:
            return None
        shapes = {"embed": [(100, e)], "layers.*.fc": [(h, inner or 4 * h)] * n}
        if e != h:
            shapes["project"] = [(e, h)]
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return Observation(shapes, total, total, values=config)


def test_an_unset_width_and_two_widths_meeting_start_formulas_of_their_own():
    from symparams.analysis.inference.discovery import Branch
    from symparams.analysis.inference.engine import branch_starts, conditions

    builder = InnerWidthBuilder()
    found = discover(builder)
    assert found.optional == {("n_inner",): 16}
    assert [s[:3] for s in found.splits] == [("embedding_size", "equals", "hidden_size")]
    main = conditions(builder, found)
    assert "n_inner" in main.unset and Relation("embedding_size", "differs", "hidden_size") in main.relations
    starts = branch_starts(Inferred("toy", "base", "Toy", "", None, {}, {}, main, None, 0, 0, 0.0), found)
    assert starts == [Branch(given=(("n_inner", 16),)),
                      Branch(split=(("embedding_size", "equals", "hidden_size"),),
                             start=(("embedding_size", 64),))]
    inner = discover(builder, branch=starts[0])
    assert inner.fields["n_inner"].free and "n_inner" in conditions(builder, inner).given
    equal = conditions(builder, discover(builder, branch=starts[1]))
    assert equal.split == ("embedding_size = hidden_size",) and Relation("embedding_size", "equals",
                                                                         "hidden_size") in equal.relations


class AttentionTypesBuilder(ToyBuilder):
    """GPT-Neo: a layer count the config refuses to move unless its run-length list of layer kinds moves too."""

    DEFAULTS = {**ToyBuilder.DEFAULTS, "hidden_size": 64, "num_heads": 4, "num_layers": 24,
                "attention_types": [[["global", "local"], 12]]}

    def refusal(self, values):
        from symparams.analysis.inference.probing import with_companions
        from symparams.families.inferred import expanded

        config = {**self.DEFAULTS, **with_companions(values, self.companions)}
        return None if len(expanded(config["attention_types"])) == config["num_layers"] else "len(attention_layers)"

    def read_back(self, values, others=()):
        return None if self.refusal(values) else super().read_back(values, others)

    def observe(self, values):
        return None if self.refusal(values) else super().observe(values)


def test_a_layer_count_moves_with_its_per_layer_list_retiled():
    builder = AttentionTypesBuilder()
    found = discover(builder)
    assert builder.companions == {"num_layers": ("attention_types", [[["global", "local"], 12]])}
    assert found.fields["num_layers"].free


# -- against transformers (slow) -----------------------------------------------------------------------------------

#: (model_type, class) the engine is checked on; each is inferred once for the module
SAMPLE = [("bert", "base"), ("bert", "masked-lm"), ("bert", "sequence-classification"), ("gpt2", "causal-lm"),
          ("llama", "causal-lm"), ("qwen2", "base"), ("mixtral", "causal-lm"), ("t5", "seq2seq-lm")]
CONFIGS = 6  # random configurations per type, drawn here


@pytest.fixture(scope="module")
def inferred():
    cache = {}

    def get(model_type, cls) -> Inferred:
        if (model_type, cls) not in cache:
            cache[model_type, cls] = infer(model_type, cls, verify_configurations=4, seed=7)
        return cache[model_type, cls]
    return get


def real_count(model_type: str, cls: str, values: dict) -> int | None:
    """``parameters()`` of the model transformers builds on the meta device (None: the config does not build)."""
    try:
        cfg = transformers.AutoConfig.for_model(model_type, **values)
        with torch.device("meta"):
            module = getattr(transformers, AUTO_CLASSES[cls]).from_config(cfg)
    except Exception:  # the config class or the modeling code refuses these values (an odd rotary width, ...)
        return None
    return sum(p.numel() for p in module.parameters())


def random_values(result: Inferred, rng: random.Random) -> dict:
    """Sizes drawn uniformly (not multiples of the defaults), layer counts 1..5, flags at random, then the
    relations made to hold: a divided field becomes a multiple, an equal one a copy, a bound one larger."""
    values = {}
    for name, sym in result.symbols.items():
        values[name] = rng.randint(1, 5) if "layer" in name or sym.name in ("L", "L_d") else rng.randint(1, 48)
    values.update({name: rng.random() < 0.5 for name in result.flags})
    for r in result.conditions.relations:
        if r.kind == "divides":
            values[r.right] = values[r.left] * rng.randint(1, 6)
        elif r.kind == "equals":
            values[r.right] = values[r.left]
        else:
            values[r.right] = max(values[r.right], values[r.left] + rng.randint(1, 3))
    return values


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,cls", SAMPLE)
def test_the_inferred_count_is_the_real_count_of_random_configurations(inferred, model_type, cls):
    result = inferred(model_type, cls)
    assert result.exact, result.reason
    rng = random.Random(f"{model_type}/{cls}")
    compared = 0
    for _ in range(4 * CONFIGS):
        values = random_values(result, rng)
        real = real_count(model_type, cls, values)
        if real is None:
            continue  # transformers refuses the configuration: no count to compare
        assert result.count(values) == real, values
        compared += 1
        if compared == CONFIGS:
            break
    assert compared == CONFIGS


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,cls", SAMPLE)
def test_the_inferred_count_is_the_real_count_of_the_default_config(inferred, model_type, cls):
    result = inferred(model_type, cls)
    cfg = transformers.AutoConfig.for_model(model_type)
    values = {name: getattr(cfg, name) for name in [*result.symbols, *result.flags]}
    assert result.count(values) == real_count(model_type, cls, {})


#: (model_type, a field whose default leaves out parameters its larger values add, the values compared, fixed values)
LIFTED = [
    ("deberta", "type_vocab_size", [0, 1, 3], {"num_hidden_layers": 2}),  # no token-type embedding at 0
    ("qwen2_moe", "decoder_sparse_step", [1, 2, 3], {"num_hidden_layers": 5}),  # experts on every layer at 1
]


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,name,moved,fixed", LIFTED, ids=[m[0] for m in LIFTED])
def test_a_field_whose_default_leaves_parameters_out_is_a_variable(model_type, name, moved, fixed):
    result = infer(model_type, "base", verify_configurations=4, seed=7)
    assert result.exact, result.reason
    assert name in result.symbols and name not in result.conditions.fixed
    for value in moved:  # its default among them: the parameters it adds vanish there
        cfg = transformers.AutoConfig.for_model(model_type, **fixed, **{name: value})
        values = {field: getattr(cfg, field) for field in [*result.symbols, *result.flags]}
        assert result.count(values) == real_count(model_type, "base", {**fixed, name: value}), values


#: (model_type, a field held at its default whose larger values get a formula of their own, values compared)
BRANCHED = [("xlm", "n_langs", [1, 2, 5])]  # no language embedding for one language (Gemma 4's: tests/families)


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,name,moved", BRANCHED, ids=[b[0] for b in BRANCHED])
def test_a_held_field_whose_larger_values_build_gets_a_branch(model_type, name, moved):
    result = infer(model_type, "base", verify_configurations=4, seed=7)
    assert result.exact and result.conditions.fixed[name] == moved[0]
    (branch,) = result.branches
    assert branch.exact and branch.conditions.minimum == {name: moved[0] + 1} and name in branch.symbols
    layers = {"n_layers": 2}
    for value in moved:
        cfg = transformers.AutoConfig.for_model(model_type, **layers, **{name: value})
        formula = branch if value > moved[0] else result
        values = {field: getattr(cfg, field) for field in [*formula.symbols, *formula.flags]}
        assert formula.count(values) == real_count(model_type, "base", {**layers, name: value}), value


def test_a_value_the_config_class_refuses_to_change_is_its_only_one():
    from symparams.analysis.inference.discovery import _refused

    class TopOneBuilder(ToyBuilder):  # ZAYA: "currently supports num_experts_per_tok=1 only"
        DEFAULTS = {**ToyBuilder.DEFAULTS, "num_experts_per_tok": 1, "attention_layers": ["global", "local"]}

        def read_back(self, values, others=()):
            return None if self.refusal(values) else super().read_back(values, others)

        def refusal(self, values):
            if values.get("num_experts_per_tok", 1) != 1:
                return "currently supports `num_experts_per_tok=1` only"
            return "len(attention_layers) must be num_layers" if values.get("num_layers", 2) != 2 else None

        def observe(self, values):
            return None if self.refusal(values) else super().observe(values)

    found = discover(TopOneBuilder())
    assert found.fields["num_experts_per_tok"].sole and not found.fields["num_heads"].sole
    # held too, but refused for another field's sake (GPT-Neo's list of attention layers): a relation
    assert found.fields["num_layers"].kind == "fixed" and not found.fields["num_layers"].sole


def formula_at(result: Inferred, model_type: str, values: dict) -> int:
    """The inferred count at the config transformers makes of ``values`` (its fields as it holds them, a list of
    layer kinds as how many layers of each kind it holds)."""
    cfg = transformers.AutoConfig.for_model(model_type, **values)
    point = {}
    for name in [*result.symbols, *result.flags]:
        listed, mark, kind = name.partition("#")
        point[name] = list(getattr(cfg, listed)).count(kind) if mark else getattr(cfg, name)
    return result.count(point)


@pytest.mark.crosscheck
def test_an_unset_width_is_a_formula_of_its_own_where_a_config_sets_it():
    """GPT-BigCode's ``n_inner`` unset is 4·H; set (SantaCoder: 8192 for a width of 2048), it is a variable of a
    branch.  Both against real builds, a width of 4·H set explicitly among them."""
    result = infer("gpt_bigcode", "causal-lm", verify_configurations=4, seed=7)
    assert result.exact and "n_inner" in result.conditions.unset and "n_inner" not in result.symbols
    (branch,) = [b for b in result.branches if b.conditions.given == ("n_inner",)]
    assert branch.exact and "n_inner" in branch.symbols
    sizes = {"n_embd": 64, "n_head": 4, "n_layer": 2, "n_positions": 32, "vocab_size": 100, "multi_query": True}
    assert formula_at(result, "gpt_bigcode", sizes) == real_count("gpt_bigcode", "causal-lm", sizes)
    for inner in (48, 256, 300):
        values = {**sizes, "n_inner": inner}
        assert formula_at(branch, "gpt_bigcode", values) == real_count("gpt_bigcode", "causal-lm", values), inner


@pytest.mark.crosscheck
def test_a_head_width_the_config_checks_against_the_width_is_no_contradiction():
    """XLNet's ``d_head`` must be ``d_model // n_head``: the shipped formula of old held 16 heads (the only count
    its samples built) and wrote ``d_model < d_head`` beside ``d_head divides d_model``, refusing every config."""
    result = infer("xlnet", "base", verify_configurations=4, seed=7)
    assert result.exact and not [r for r in result.conditions.relations if r.kind == "below"]
    base_cased = {"d_model": 768, "n_head": 12, "d_head": 64, "d_inner": 3072, "n_layer": 2, "vocab_size": 320}
    assert not result.conditions.violated(base_cased)
    assert formula_at(result, "xlnet", base_cased) == real_count("xlnet", "base", base_cased)


@pytest.mark.crosscheck
def test_two_widths_meeting_count_by_the_formula_of_their_side():
    """ELECTRA projects its embeddings to the hidden width only where the two differ (the small model: 128 and
    256; the large: 1024 and 1024)."""
    result = infer("electra", "base", verify_configurations=4, seed=7)
    assert Relation("embedding_size", "differs", "hidden_size") in result.conditions.relations
    (equal,) = [b for b in result.branches if b.conditions.split]
    sizes = {"vocab_size": 100, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 96,
             "max_position_embeddings": 32, "type_vocab_size": 2}
    for formula, widths in [(result, {"embedding_size": 32, "hidden_size": 64}),
                            (equal, {"embedding_size": 64, "hidden_size": 64})]:
        assert not formula.conditions.violated(widths)
        values = {**sizes, **widths}
        assert formula_at(formula, "electra", values) == real_count("electra", "base", values), widths


@pytest.mark.crosscheck
def test_a_list_of_layer_kinds_counts_by_how_many_layers_of_each_kind_it_holds():
    """Reformer's layers are as many as its ``attn_layers`` list, local or LSH attention, in any order."""
    result = infer("reformer", "base", verify_configurations=4, seed=7)
    assert result.exact and {"attn_layers#local", "attn_layers#lsh"} <= set(result.symbols)
    for kinds in (["lsh", "lsh", "local"], ["local", "lsh", "local", "local", "lsh"]):
        values = {"attn_layers": kinds}
        assert formula_at(result, "reformer", values) == real_count("reformer", "base", values), kinds


# -- against the hand-written families (slow) ----------------------------------------------------------------------

S = {name: info.symbol for name, info in SYMBOLS.items()}


def _plain(expr):
    """``floor(H/A)`` as ``H/A``: the families need A | H, where the two are equal."""
    return expr.replace(sp.floor, lambda x: x)


def same(a, b) -> bool:
    return sp.expand(_plain(a) - _plain(b)) == 0


#: (model_type, class, family head, family switches, flags, substitution into the inferred form)
MUTUAL = [
    ("bert", "base", None, {}, {}, {"F": S["r"] * S["H"]}),
    ("bert", "masked-lm", "masked-lm", {}, {"tie_word_embeddings": 1}, {"F": S["r"] * S["H"]}),
    ("bert", "sequence-classification", "sequence-classification", {}, {}, {"F": S["r"] * S["H"]}),
    ("gpt2", "causal-lm", "causal-lm", {"tie": True, "cross_attention": False},
     {"tie_word_embeddings": 1, "add_cross_attention": 0}, {}),
    ("gpt2", "causal-lm", "causal-lm", {"tie": False, "cross_attention": True},
     {"tie_word_embeddings": 0, "add_cross_attention": 1}, {}),
    ("llama", "causal-lm", "causal-lm",
     {"free_head_dim": True, "tie": False, "attention_bias": True, "mlp_bias": False},
     {"tie_word_embeddings": 0, "attention_bias": 1, "mlp_bias": 0}, {}),
    ("llama", "causal-lm", "causal-lm",
     {"free_head_dim": True, "tie": True, "attention_bias": False, "mlp_bias": True},
     {"tie_word_embeddings": 1, "attention_bias": 0, "mlp_bias": 1}, {}),
    ("qwen2", "base", None, {"free_head_dim": False}, {}, {}),
    ("mixtral", "causal-lm", "causal-lm", {"free_head_dim": False, "tie": False}, {"tie_word_embeddings": 0},
     {"F": S["F_e"]}),
    ("t5", "seq2seq-lm", "seq2seq-lm", {"gated": True, "tie": True, "split_layers": True}, {"is_gated_act": 1}, {}),
    ("t5", "seq2seq-lm", "seq2seq-lm", {"gated": False, "tie": True, "split_layers": True}, {"is_gated_act": 0}, {}),
]


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,cls,head,switches,flags,subs", MUTUAL,
                         ids=[f"{m[0]}-{m[1]}-{i}" for i, m in enumerate(MUTUAL)])
def test_the_inferred_form_is_the_families_closed_form(inferred, model_type, cls, head, switches, flags, subs):
    result = inferred(model_type, cls)
    ours = result.total.subs({result.flags[k]: v for k, v in flags.items()}).subs({S[k]: v for k, v in subs.items()})
    family = model(model_type, head=head, **switches).closed_form
    family = family.subs({S["r"]: 4}) if model_type == "gpt2" else family  # GPT-2's n_inner unset is 4H
    assert same(ours, family), sp.expand(_plain(ours) - _plain(family))


# -- the shipped data file is what the generator writes (slow) ---------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "symparams" / "families" / "data" / "inferred.json"
#: two small types (a few seconds a class), their every class regenerated
REGENERATED = ["gpt_neox", "gptj"]


def generator():
    """scripts/infer_formulas.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("infer_formulas", ROOT / "scripts" / "infer_formulas.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type", REGENERATED)
def test_the_shipped_entries_are_what_the_generator_writes_again(model_type):
    gen = generator()
    text = DATA.read_text(encoding="utf-8")
    assert json.loads(text)["transformers_version"] == transformers.__version__
    shipped = [line.rstrip(",") for line in text.splitlines() if f'"model_type":"{model_type}"' in line]
    classes = gen.text_types()[model_type]
    assert len(shipped) == len(classes)
    for cls in classes:
        entry, *_ = gen.run_one(model_type, cls)  # and the seconds of its count and costs
        assert entry["exact"], entry["reason"]
        assert gen.line(entry) in shipped, cls  # byte for byte


def test_a_costs_only_run_keeps_the_count_and_takes_costs_only_from_the_same_count():
    """``--costs-only`` infers a class again for its costs: they replace the stored ones only where the fresh
    count is the stored one (costs fitted over another discovery would name other symbols)."""
    gen = generator()
    stored = next(json.loads(line.rstrip(",")) for line in DATA.read_text(encoding="utf-8").splitlines()
                  if '"model_type":"gptj"' in line)
    fresh = {**json.loads(json.dumps(stored)), "costs": {"exact": True, "planted": 1}}
    assert gen.costs_merged(stored, fresh) == {**stored, "costs": {"exact": True, "planted": 1}}
    fresh["parameters"] = fresh["parameters"][1:]  # the count came out otherwise: the stored entry stays whole
    assert gen.costs_merged(stored, fresh) is stored


@pytest.mark.crosscheck
def test_a_held_field_the_config_computes_when_unset_is_left_out_so_the_layers_move():
    """Dory's recurrent layers default to None, computed as the layers less the input and output ones, and a
    config refuses any other sum: set, it pins every layer count; left out, the layer count is a variable.  The
    fit reads the config as it is saved, where Dory writes each layer as two blocks (twice the layer count)."""
    result = infer("dory", "base", verify_configurations=4, seed=7)
    assert result.exact, result.reason
    assert "num_hidden_layers" in result.symbols and "n_recurrent_layers" in result.conditions.derived
    small = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2,
             "head_dim": 16, "vocab_size": 1000, "n_input_layers": 1, "n_output_layers": 1}
    for layers in (3, 5):
        cfg = transformers.AutoConfig.for_model("dory", **small, num_hidden_layers=layers)
        saved = cfg.to_dict()
        values = {field: saved[field] for field in [*result.symbols, *result.flags]}
        assert result.count(values) == real_count("dory", "base", {**small, "num_hidden_layers": layers}), layers
