"""The exact fit of the inference engine (no transformers): whole-number solutions, the smallest basis, floors of
widths, periods and offsets of layers, and how each term is stored and read back."""

import random
from fractions import Fraction

import sympy as sp

from symparams.analysis.inference.fitting import LEVELS, Term, basis, expression, fit, solve


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


def _offset_points(shortest_period: int, keep=lambda point: True) -> list[dict]:
    """45 Jamba-like points: ``l`` layers, a layer of a kind at every i with i % ``p`` == ``o``; those ``keep``
    takes."""
    rng = random.Random(1)
    points = []
    while len(points) < 45:
        period = rng.randint(shortest_period, 8)
        offset = rng.randint(0, period - 1)
        point = {"l": rng.randint(offset + 1, 30), "p": period, "o": offset}
        if keep(point):
            points.append(point)
    return points


def test_layers_at_an_offset_in_every_period_of_the_config_are_fitted():
    # Jamba: an attention layer at every i with i % period == offset, both fields; an offset of 0 divides nothing
    points = _offset_points(shortest_period=1)
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


def test_layers_at_an_offset_are_refused_where_no_point_shows_where_the_pattern_starts():
    # Jamba's causal LM: its biases fitted on the half of the points with the flag on, none of which had L - offset
    # a multiple of the period, where floor((L - o)/p) and floor((L - o - 1)/p) part; the solver kept the first and
    # counted a config with L = 4, offset 4, period 5 one recurrent layer short
    points = _offset_points(shortest_period=2, keep=lambda p: (p["l"] - p["o"]) % p["p"])
    recurrent = [sum(1 for i in range(p["l"]) if i % p["p"] != p["o"]) for p in points]
    found = fit(points, recurrent, ["l", "p", "o"], layers=frozenset({"l"}))
    assert found is None or all(t.less is None for t in found)
    meeting = {"l": 9, "p": 5, "o": 4}  # where the two part: one more point pins the start down
    points.append(meeting)
    recurrent.append(sum(1 for i in range(9) if i % 5 != 4))
    found = fit(points, recurrent, ["l", "p", "o"], layers=frozenset({"l"}))
    assert {str(t): c for t, c in found.items()} == {"1": -1, "l": 1, "floor((l - o - 1)/p)": -1}


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


def test_a_product_of_two_widths_split_into_groups_is_fitted_stored_and_read_back():
    # DeepSeek-V4's grouped output projection: each of g groups takes heads × head width // g inputs; a plain
    # a·d/g is off by a fraction, and a·floor(d/g) by up to a - 1, wherever g does not divide d
    rng = random.Random(5)
    points = [{"a": rng.randint(1, 40), "d": rng.randint(1, 64), "g": rng.randint(1, 12)} for _ in range(40)]
    found = fit(points, [p["a"] * p["d"] // p["g"] for p in points], ["a", "d", "g"])
    assert {str(t): c for t, c in found.items()} == {"floor(a*d/g)": 1}
    from symparams.analysis.inference.result import decode, encode
    from symparams.families.inferred import formula

    names = {n: sp.Symbol(n, integer=True, positive=True) for n in ("A", "D", "o_groups")}
    expr = 2 * sp.floor(names["A"] * names["D"] / names["o_groups"])
    data = encode(expr)
    assert data == [["2", [], [[[["A", "D"]], "o_groups", 1]]]] and decode(data, names) == expr
    assert formula(data, {"A": 64, "D": 512, "o_groups": 3}) == 2 * (64 * 512 // 3)  # 21844, not 21845⅓


def test_layers_at_a_fixed_place_in_every_d_of_the_config_are_fitted_stored_and_read_back():
    # Switch Transformers: a sparse layer where i % sparse_step == 1: layers 1, 5, 9 of 10 at a step of 4 are 3,
    # where ceil(10/4) (place 0) and floor(10/4) say 3 and 2 but 9 layers have 3 and 10 at a step of 3 have 3 too
    rng = random.Random(7)
    points = [{"l": rng.randint(1, 40), "s": rng.randint(2, 12)} for _ in range(40)]
    sparse = [sum(1 for i in range(p["l"]) if i % p["s"] == 1) for p in points]
    found = fit(points, sparse, ["l", "s"], layers=frozenset({"l"}))
    assert {str(t): c for t, c in found.items()} == {"1": 1, "floor((l - 2)/s)": 1}
    fresh = [(l, s) for l in range(1, 30) for s in range(2, 9)]
    assert all(sum(c * t.value({"l": l, "s": s}) for t, c in found.items())
               == sum(1 for i in range(l) if i % s == 1) for l, s in fresh)
    from symparams.analysis.inference.result import decode, encode
    from symparams.families.inferred import formula

    names = {n: sp.Symbol(n, integer=True, positive=True) for n in ("L", "s")}
    expr = sp.floor((names["L"] - 2) / names["s"]) + 1
    data = encode(expr)
    assert [["L", -2], "s", 1] in data[-1][2] and decode(data, names) == expr
    assert formula(data, {"L": 12, "s": 4}) == 3 and formula(data, {"L": 1, "s": 2}) == 0


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


def last_resort(points, values, names, layers):
    """A fit with the levels only the engine's last resort tries (see BOUNDED)."""
    from symparams.analysis.inference.fitting import BOUNDED, LEVELS

    return fit(points, values, names, layers=layers, max_level=len(LEVELS) - 1, min_level=BOUNDED)


def test_a_range_of_layers_up_to_and_including_a_last_one_is_fitted_stored_and_read_back():
    # ERNIE 4.5: experts where (i + 1) % k == 0 from layer s to layer e: floor((e + 1)/k) - floor(s/k); floor(e/k)
    # in its place is one short wherever k divides e + 1
    rng = random.Random(7)
    points = []
    while len(points) < 40:
        s, k = rng.randint(1, 4), rng.randint(1, 4)
        points.append({"s": s, "e": rng.randint(s, 16), "k": k})
    experts = [sum(1 for i in range(p["s"], p["e"] + 1) if (i + 1) % p["k"] == 0) for p in points]
    layers = frozenset({"s", "e", "k"})
    assert fit(points, experts, ["s", "e", "k"], layers=layers) is None  # no earlier level: none changes
    found = last_resort(points, experts, ["s", "e", "k"], layers)
    assert {str(t): c for t, c in found.items()} == {"floor((e + 1)/k)": 1, "floor(s/k)": -1}
    from symparams.analysis.inference.result import decode, encode
    from symparams.families.inferred import formula

    names = {n: sp.Symbol(n, integer=True, positive=True) for n in ("e", "s", "k")}
    expr = sp.floor((names["e"] + 1) / names["k"]) - sp.floor(names["s"] / names["k"])
    data = encode(expr)
    assert decode(data, names) == expr
    assert formula(data, {"e": 5, "s": 2, "k": 3}) == 2  # layers 2 and 5


def test_layers_a_fixed_list_keeps_dense_among_one_in_every_d_are_fitted_stored_and_read_back():
    # Flint: layers 0 and 1 dense, experts where (i + 1) % d == 0 elsewhere: the dense layers number
    # L - floor(L/d) + floor(2/d), 2 more than L - floor(L/d) at d = 1
    rng = random.Random(8)
    points = [{"l": rng.randint(2, 30), "d": rng.randint(1, 6)} for _ in range(40)]
    dense = [sum(1 for i in range(p["l"]) if i < 2 or (i + 1) % p["d"]) for p in points]
    layers = frozenset({"l", "d"})
    assert fit(points, dense, ["l", "d"], layers=layers) is None
    found = last_resort(points, dense, ["l", "d"], layers)
    assert {str(t): c for t, c in found.items()} == {"l": 1, "floor(l/d)": -1, "floor(2/d)": 1}
    from symparams.analysis.inference.result import decode, encode
    from symparams.families.inferred import formula

    names = {n: sp.Symbol(n, integer=True, positive=True) for n in ("l", "d")}
    expr = names["l"] - sp.floor(names["l"] / names["d"]) + sp.floor(2 / names["d"])
    data = encode(expr)
    assert decode(data, names) == expr
    assert formula(data, {"l": 7, "d": 1}) == 2 and formula(data, {"l": 7, "d": 2}) == 5  # 0, 1, 2, 4, 6


def test_a_width_two_of_many_fields_give_with_a_floor_is_fitted_in_that_pair():
    """SeamlessM4T's speech encoder: its head width is floor(hidden/speech_heads), but the probes of three other
    head counts moved the width along, so all five are its fields, and a floor basis in five is larger than
    the points; the width is found in the one pair that gives it."""
    from symparams.analysis.inference.discovered import Discovery, Field
    from symparams.analysis.inference.engine import _fit_target

    target = ("dim", "speech.pos_bias_u", 1)
    names = ["hidden", "heads_a", "heads_b", "heads_c", "speech_heads"]
    found = Discovery({}, None, {n: Field(n, 1, kind="free", step="scale", effects={target}) for n in names}, {})
    rng = random.Random(0)
    points = []
    for _ in range(40):
        heads = {n: 16 * rng.randint(1, 8) for n in names[1:4]}
        points.append({"hidden": 1024 * rng.randint(1, 8) * 3, **heads, "speech_heads": rng.randint(5, 130)})
    widths = [p["hidden"] // p["speech_heads"] for p in points]
    assert {str(t): c for t, c in _fit_target(found, target, points, widths).items()} == {
        "floor(hidden/speech_heads)": 1}


def test_one_layer_in_every_fixed_period_of_two_kinds_of_layers_together_is_a_last_level():
    # Beam: a full-attention layer where (i + 1) % 6 == 0 and the last one, its layers dense or sparse
    points = [{"d": d, "m": m} for d in range(1, 9) for m in range(1, 9, 3)]
    values = [-(-(p["d"] + p["m"]) // 6) for p in points]
    assert fit(points, values, ["d", "m"], layers=frozenset({"d", "m"})) is None  # not among the usual levels
    found = fit(points, values, ["d", "m"], max_level=len(LEVELS) - 1, layers=frozenset({"d", "m"}))
    assert found == {Term(floor=("d", 6), more="m", ceiling=True): 1}
    d, m = sp.symbols("d m")
    assert expression(found, {"d": d, "m": m}).subs({d: 40, m: 27}) == 12  # ceil(67/6), far past the points
