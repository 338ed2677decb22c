"""The head-count invariance proof, and that the prover can say no."""

import pytest
import sympy as sp

from symparams import model
from symparams.analysis.proof import prove
from symparams.core.blocks import embedding, group, per_head_linear
from symparams.core.family import Constraint, Family
from symparams.core.model import Model
from symparams.core.symbols import A, D, H, V


def test_bert_is_invariant_and_derivative_is_zero():
    p = model("bert").prove()
    assert p.invariant and p.derivative == 0 and p.dependence == 0
    assert A in p.written.free_symbols          # the as-written total holds A ...
    assert A not in p.closed_form.free_symbols  # ... and it cancels


def test_per_head_step_shows_a_cancel():
    p = model("bert").prove()
    step = next(s for s in p.steps if s.key == "per_head")
    assert A in step.lhs.free_symbols and step.rhs == H**2 + H
    assert len(step.paths) == 3  # query, key, value


def test_side_condition_is_a_divides_h():
    p = model("bert").prove()
    assert [c.latex for c in p.conditions] == [r"A \mid H"]


def test_bert_base_witness_every_divisor_of_768_gives_109482240():
    p = model("bert-base").prove()
    assert sorted(p.witness) == sp.divisors(768)
    assert set(p.witness.values()) == {109_482_240}
    assert p.counterexample is None


@pytest.mark.parametrize("name", ["transformer-base", "transformer-base-article"])
def test_transformer_is_invariant_with_biases_and_without(name):
    m = model(name)
    p = m.prove()
    assert p.invariant and p.derivative == 0 and p.counterexample is None
    assert sorted(p.witness) == sp.divisors(512)
    assert set(p.witness.values()) == {m.count}


def _fixed_head_dim_family():
    """A toy model whose heads have a fixed width D: the count must depend on A."""
    def build(switches, head):
        return group("toy", [embedding("emb", V, H), per_head_linear("q", H, A, D)], ref="")
    return Family("toy", {"en": "toy", "zh": "toy"}, build,
                  constraints=(Constraint(H / A, "H={H} not divisible by A={A}"),))


def test_prover_finds_dependence_when_head_width_is_fixed():
    m = Model(_fixed_head_dim_family(), dict(V=10, H=64, D=8))
    p = prove(m)
    assert not p.invariant
    assert p.derivative == H * D + D
    assert p.dependence == A * D * H + A * D
    # with every other value known, the witness tries every divisor of H: N = V·H + A·(H·D + D) for each
    assert p.witness == {a: 10 * 64 + a * (64 * 8 + 8) for a in sp.divisors(64)}


def test_prover_gives_a_numeric_counterexample():
    m = Model(_fixed_head_dim_family(), dict(V=10, H=64, D=8, A=8))
    p = prove(m)
    (a1, n1), (a2, n2) = p.counterexample
    assert a1 != a2 and n1 != n2
    assert n1 == 10 * 64 + a1 * (64 * 8 + 8) and n2 == 10 * 64 + a2 * (64 * 8 + 8)
