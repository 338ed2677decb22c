"""A width the modeling code computes with a float of the config (see :mod:`symparams.analysis.inference.computed`),
on a toy builder: no polynomial in the sizes fits it; with its rule, the shapes are fitted in the width and the
formula holds on fresh builds with the float moved."""

import math
import random

import pytest
import sympy as sp

from symparams.analysis.inference import computed
from symparams.analysis.inference.discovered import Uninferable
from symparams.analysis.inference.discovery import discover
from symparams.analysis.inference.engine import _formula, verify
from symparams.analysis.inference.sampling import draw
from tests.analysis.test_inference_discovery import ToyBuilder

#: the toy's width: hidden_size * ratio, truncated, rounded up to a multiple of multiple_of
RULE = ["*", "multiple_of", ["//", ["+", ["+", ["int", ["*", "hidden_size", "ratio"]], "multiple_of"], -1],
                              "multiple_of"]]


class WidthBuilder(ToyBuilder):
    """An embedding and layers of an up and a down projection, their width computed with a float."""

    model_type = "toy_widths"
    DEFAULTS = {"hidden_size": 64, "multiple_of": 8, "num_layers": 2, "ratio": 2.5}

    def observe(self, values):
        from symparams.analysis.inference.probing import Observation

        self.builds += 1
        config = {**self.DEFAULTS, **values}
        h, m, n, ratio = (config[k] for k in ("hidden_size", "multiple_of", "num_layers", "ratio"))
        if min(h, m, n) < 1:
            return None
        w = m * ((int(h * ratio) + m - 1) // m)
        shapes = {"embed": [(100, h)], "layers.*.up": [(w, h)] * n, "layers.*.down": [(h, w)] * n}
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return Observation(shapes, total, total)


def test_without_its_rule_a_width_computed_with_a_float_fits_no_basis():
    found = discover(WidthBuilder())
    found.computed = {}  # as for a type the table does not name: the float stays at its default
    with pytest.raises(Uninferable, match="no exact formula for the dimension"):
        _formula(WidthBuilder(), found, seed=0)


def test_with_its_rule_the_shapes_are_fitted_in_the_width_and_hold_with_the_float_moved(monkeypatch):
    monkeypatch.setitem(computed.COMPUTED, "toy_widths", {"up_width": RULE})
    builder = WidthBuilder()
    found = discover(builder)
    assert found.computed == {"up_width": RULE}
    total, parts, symbols = _formula(builder, found, seed=0)
    H, L, W = symbols["hidden_size"], symbols["num_layers"], symbols["up_width"]
    assert sp.expand(total - (100 * H + 2 * L * H * W)) == 0
    rng = random.Random(0)
    assert len({draw(found, rng)["ratio"] for _ in range(20)}) > 3  # the float moves, so W is no function of H
    checked = verify(builder, found, total, symbols, 6, seed=0)
    assert checked.configurations == 6 and checked.exact == 6  # fresh builds, ratio drawn around 2.5


# -- a width computed with whole numbers only (ConvBERT's kept heads) ------------------------------------------------

KEPT = ["if", ["//", "num_heads", "ratio"], ["//", "num_heads", "ratio"], 1]
KEPT_RULES = {"kept": KEPT, "kept_width": ["*", KEPT, ["//", ["//", "hidden_size", KEPT], 2]]}


class KeptHeadsBuilder(WidthBuilder):
    """n = max(1, heads // ratio) heads kept, each (hidden // n) // 2 wide, n dividing hidden (ConvBERT's
    attention): at the default 768, 12 and 2 the width is H/2, and stays so on the multiples the draws keep,
    which the embeddings' width, built only equal to H, keeps H on."""

    model_type = "toy_kept_heads"
    DEFAULTS = {"hidden_size": 768, "num_heads": 12, "ratio": 2, "num_layers": 2, "embed_size": 768}

    def observe(self, values):
        from symparams.analysis.inference.probing import Observation

        self.builds += 1
        config = {**self.DEFAULTS, **values}
        h, a, r, layers, e = (config[k] for k in ("hidden_size", "num_heads", "ratio", "num_layers", "embed_size"))
        if min(h, a, r, layers, e) < 1 or h % max(1, a // r) or e != h:
            return None
        n = max(1, a // r)
        width = n * ((h // n) // 2)
        shapes = {"embed": [(100, e)], "layers.*.q": [(width, h)] * layers, "layers.*.norm": [(h,)] * layers,
                  "layers.*.kernel": [(5 * n,)] * layers}
        total = sum(math.prod(s) for found in shapes.values() for s in found)
        return Observation(shapes, total, total)


def test_a_whole_number_rule_is_told_from_one_with_a_float():
    assert computed.whole_number(KEPT_RULES["kept_width"]) and not computed.whole_number(RULE)
    assert computed.ingredients(KEPT_RULES) == {"hidden_size", "num_heads", "ratio"}


def test_the_fit_s_points_are_moved_where_a_whole_number_width_parts_from_half_the_hidden_size(monkeypatch):
    from symparams.analysis.inference.sampling import parted, samples

    monkeypatch.setitem(computed.COMPUTED, "toy_kept_heads", KEPT_RULES)
    builder = KeptHeadsBuilder()
    found = discover(builder)
    fitted = samples(builder, found, random.Random(0), 12)
    assert found.fields["num_heads"].kind == "irrelevant"  # 13 keeps 6 heads as 12 does; 36 does not build
    moved = parted(builder, found, fitted)
    assert {values.get("num_heads", 12) for values, _ in moved} > {12}  # the irrelevant head count moves too
    assert any(obs.shapes["layers.*.q"][0][0] * 2 != values.get("hidden_size", 768) for values, obs in moved)


@pytest.mark.parametrize("hidden,heads,ratio", [(36, 12, 1), (45, 9, 3), (33, 2, 5), (768, 12, 2)])
def test_a_whole_number_width_is_fitted_in_and_the_hidden_size_stays_itself(monkeypatch, hidden, heads, ratio):
    """H/2 and 2·width agree wherever H over the kept heads is even: at 36, 12 heads of ratio 1 (12 wide, not 18)
    either would miscount."""
    monkeypatch.setitem(computed.COMPUTED, "toy_kept_heads", KEPT_RULES)
    builder = KeptHeadsBuilder()
    found = discover(builder)
    total, parts, symbols = _formula(builder, found, seed=0)
    config = {"hidden_size": hidden, "num_heads": heads, "ratio": ratio, "num_layers": 3, "embed_size": hidden}
    values = {symbols[k]: v for k, v in {**config, **computed.widths_at(KEPT_RULES, config)}.items() if k in symbols}
    assert total.xreplace(values) == builder.observe(config).total


def test_a_whole_number_width_is_fitted_in_before_the_fields_it_reads(monkeypatch):
    """At one kept head (a ratio above the heads) the width is floor(H/2), and at two heads of an even quotient
    too: points only there fit the fields as well, and floor(H/2) is wrong at 45, 9 heads of ratio 3 (21, not
    22).  The rule is tried first."""
    from symparams.analysis.inference.engine import _fit_target
    from symparams.analysis.inference.sampling import variables

    monkeypatch.setitem(computed.COMPUTED, "toy_kept_heads", KEPT_RULES)
    builder = KeptHeadsBuilder()
    found = discover(builder)
    configs = [{"hidden_size": h, "embed_size": h, "ratio": r, "num_layers": 2}
               for h in (8, 9, 12, 15, 16, 21, 24, 33, 40) for r in (7, 9)] + \
              [{"hidden_size": h, "embed_size": h, "ratio": 6, "num_layers": 2} for h in (8, 16, 24, 40)]
    observed = [(c, builder.observe(c)) for c in configs]
    points = [variables(found, c, obs) for c, obs in observed]
    widths = [obs.shapes["layers.*.q"][0][0] for _, obs in observed]
    assert widths == [p["hidden_size"] // 2 for p in points]  # the fields alone fit these points too
    fitted = _fit_target(found, ("dim", "layers.*.q", 0), points, widths)
    assert {str(term): c for term, c in fitted.items()} == {"kept_width": 1}
