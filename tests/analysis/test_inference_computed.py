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
