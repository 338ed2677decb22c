"""The head-count invariance proof, and that the prover can say no."""

from fractions import Fraction

import pytest
import sympy as sp

from symparams import model
from symparams.analysis.proof import prove
from symparams.core.blocks import embedding, group, per_head_linear
from symparams.core.family import Constraint, Family
from symparams.core.formatting import percent
from symparams.core.model import Model
from symparams.core.symbols import A, B, D, G, H, L, V


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


# -- the proof a student follows: the terms holding A, N(A) collected, the rule of thumb ----------------------

def test_bert_terms_holding_a_are_exactly_query_key_value():
    p = model("bert").prove()
    (term,) = p.terms
    assert term.paths == ("encoder.layer.*.attention.self.query", "encoder.layer.*.attention.self.key",
                          "encoder.layer.*.attention.self.value")
    assert term.copies == 3 * L and term.collapsed == H**2 + H and term.cancels
    heads, one = term.split  # one head: an H × H/A weight and H/A biases; A of them side by side
    assert heads == A and sp.expand(one.doit()) == H**2 / A + H / A
    assert A not in p.rest.free_symbols  # no other term contains A
    assert sp.expand(p.rest + term.total) == sp.expand(p.closed_form)


def test_collected_total_equals_the_as_written_one_with_q_k_v_written_once():
    m = model("bert")
    p = m.prove()
    assert sp.expand(p.collected.doit()) == sp.expand(p.written) == sp.expand(m.closed_form)
    (term,) = p.terms
    occurrences = lambda expr: sum(1 for e in sp.preorder_traversal(expr) if e == term.written)  # noqa: E731
    assert occurrences(m.tree.total_as_written) == 3 and occurrences(p.collected) == 1
    assert sp.Mul(3, term.written, evaluate=False) in set(sp.preorder_traversal(p.collected))


def test_grouped_query_attention_keeps_a_in_the_key_and_value_terms():
    p = model("llama-2-70b").prove()
    query, key_value = p.terms
    assert query.copies == L and query.collapsed == H**2 and query.cancels
    assert key_value.copies == 2 * L and key_value.collapsed == G * H**2 / A and not key_value.cancels
    assert key_value.split[0] == G and [t.titles for t in p.terms] == [("query",), ("key", "value")]


def test_t5_with_a_times_d_fixed_keeps_only_the_relative_bias_tables():
    p = model("t5-small").prove()
    ((bias, held),) = p.fixed_ratio.remaining
    assert bias.copies == 2 and held == A * B  # one B × A table per stack
    assert bias.paths == ("encoder.block.0.layer.0.SelfAttention.relative_attention_bias",
                          "decoder.block.0.layer.0.SelfAttention.relative_attention_bias")


def test_rule_of_thumb_for_bert_base_is_108770304_or_99_35_percent():
    # BERT-base as published: V = 30522, P = 512, S = 2, H = 768, L = 12, intermediate 3072 (Devlin et al.)
    V_, P_, S_, H_, L_ = 30522, 512, 2, 768, 12
    thumb = 12 * L_ * H_**2 + (V_ + P_ + S_) * H_
    exact = ((V_ + P_ + S_) * H_ + 2 * H_                                     # embeddings and their LayerNorm
             + L_ * (4 * (H_ * H_ + H_) + 2 * 2 * H_ + 2 * H_ * 4 * H_ + 4 * H_ + H_)  # attention, norms, FFN
             + H_ * H_ + H_)                                                   # pooler
    assert (thumb, exact) == (108_770_304, 109_482_240)
    r = model("bert-base").prove().rule_of_thumb
    assert (r.value, r.total) == (thumb, exact) and r.share == sp.Rational(thumb, exact)
    assert percent(Fraction(thumb, exact)) == percent(r.share) == "99.35%"
    assert sp.sstr(r.formula, order="none") == "12*L*H**2 + (V + P + S)*H"


def test_rule_of_thumb_takes_the_model_s_own_tables():
    # GPT-2 small: V = 50257, P = 1024, H = 768, L = 12 (no segment table; the LM head is tied)
    r = model("gpt2").prove().rule_of_thumb
    assert r.value == 12 * 12 * 768**2 + (50257 + 1024) * 768
    assert sp.sstr(r.formula, order="none") == "12*L*H**2 + (V + P)*H"


@pytest.mark.parametrize("name", ["llama-2-7b", "t5-small", "distilbart-12-6", "albert-base-v2", "transformer-base"])
def test_rule_of_thumb_is_not_claimed_where_layers_are_not_12_h_squared(name):
    # a gated FFN of width F; heads of width D; a second stack of L_d decoder layers; one shared layer;
    # decoder layers with cross-attention (16·H²)
    assert model(name).prove().rule_of_thumb is None


def test_rule_of_thumb_needs_every_value():
    assert model("bert").prove().rule_of_thumb is None
