"""The costs' discovery and draws against a toy domain (no transformers): a head count only the costs follow is drawn
among the divisors of the width it splits, and the layer counts stay at or above the floor the count holds from."""

from __future__ import annotations

import random

from symparams.analysis.inference import cost_fitting, costs
from symparams.analysis.inference.costs import Domain, _divided, fit_samples, lowest_layers
from symparams.analysis.inference.discovered import Discovery, Field
from symparams.analysis.inference.observing import Observed
from symparams.analysis.inference.sampling import divisor

KEY = ("layers.*.attention", 0, "bmm")


def _discovery(**lowest) -> Discovery:
    """A width and a vocabulary (free, scaled), a head count no parameter follows (irrelevant) and a layer count."""
    fields = {"vocab_size": Field("vocab_size", 100, "free", "scale", {("dim", "embed", 0)}),
              "hidden_size": Field("hidden_size", 64, "free", "scale", {("dim", "embed", 1)}),
              "num_heads": Field("num_heads", 4, "irrelevant"),
              "num_layers": Field("num_layers", 4, "free", "scale", {("count", "layers")})}
    base = {n: f.base for n, f in fields.items()}
    return Discovery(base, None, fields, {}, lowest=dict(lowest))


def _domain(found: Discovery, traces) -> Domain:
    """A domain whose traces are ``traces(values, seq, batch)``: the attention's batch of heads, or None."""
    domain = Domain(builder=None, found=found)

    def observe(values, seq, batch, **_):
        domain.traces += 1
        return traces({**found.base, **values}, seq, batch)

    domain.observe = observe
    return domain


def _attention(values, seq, batch):
    """The score matmul's batch of heads; it does not run where the heads do not divide the width."""
    if values["hidden_size"] % values["num_heads"]:
        return None
    return Observed(seq, batch, {("count", KEY): values["num_layers"], ("factor", KEY, 0): batch * values["num_heads"]})


def test_a_head_count_only_the_costs_follow_divides_the_width_it_splits_not_the_first_field_tried():
    found = _discovery()
    domain = _domain(found, _attention)
    base = domain.observe(found.base, 7, 2)
    _divided(domain, base, "num_heads", found.base)
    # vocab_size is tried first: moved with the heads by 7 it does not trace, the width does
    assert domain.divides == {"num_heads": "hidden_size"}
    assert ("num_heads", "hidden_size") in domain.relations and ("num_heads", "hidden_size") in found.relations


def test_a_field_that_traces_at_other_multiples_alone_is_tied_to_nothing():
    found = _discovery()

    def even_heads(values, seq, batch):  # refuses odd head counts, whatever the width
        return None if values["num_heads"] % 2 else Observed(seq, batch, {("count", KEY): 1})

    domain = _domain(found, even_heads)
    _divided(domain, domain.observe(found.base, 7, 2), "num_heads", found.base)
    assert domain.divides == {} and domain.relations == set()


def test_a_drawn_head_count_is_a_multiple_of_its_base_dividing_the_width():
    rng = random.Random(0)
    drawn = {divisor(4, 64 * 6, rng, 8) for _ in range(200)}
    assert drawn == {4, 8, 12, 16, 24, 32}  # 4·d for d ≤ 8 dividing 384: 20 and 28 do not
    assert divisor(5, 64, rng, 8) == 5  # none divides: the base


def test_random_configurations_draw_the_head_count_among_the_widths_divisors():
    found = _discovery()
    domain = _domain(found, _attention)
    domain.cost_fields["num_heads"] = 4
    domain.divides["num_heads"] = "hidden_size"
    rng = random.Random(1)
    draws = [costs._draw(domain, rng)[0] for _ in range(50)]
    assert all(v["hidden_size"] % v["num_heads"] == 0 and v["num_heads"] % 4 == 0 for v in draws)
    assert len({v["num_heads"] for v in draws}) > 2  # the heads move: the fit sees b·A, not b·4


def test_the_layer_counts_are_lowered_no_further_than_the_count_holds():
    found = _discovery()
    domain = _domain(found, _attention)
    base = domain.observe(found.base, 7, 2)
    assert lowest_layers(domain, base) == {"num_layers": 1}
    floored = _discovery(num_layers=4)  # Falcon: the count holds from 4 layers up
    domain = _domain(floored, _attention)
    assert lowest_layers(domain, base) == {"num_layers": 4}


def test_the_traces_with_random_layer_counts_are_drawn_from_the_floor(monkeypatch):
    found = _discovery(num_layers=4)
    domain = _domain(found, _attention)
    base = domain.observe(found.base, 7, 2)
    domain.low = lowest_layers(domain, base)
    proposed = []
    allowed = costs._allowed
    monkeypatch.setattr(costs, "_allowed", lambda d, values, fitting: proposed.append(values["num_layers"])
                        or allowed(d, values, fitting))
    traced = fit_samples(domain, base, random.Random(0), width=0, layer=8)
    # no draw is spent on a count below 4, which every trace there would refuse
    assert len(traced) == 8 and min(proposed) >= 4


def test_a_flag_whose_effect_the_base_hides_is_fitted_with_the_field_it_chooses():
    """Marian's output layer: tied, it has the decoder's vocabulary, untied the shared one; the two are equal at the
    base, so the base's moves show only the decoder's vocabulary moving the output width."""
    fields = {"vocab_size": Field("vocab_size", 100, "free", "scale", {("dim", "embed", 0)}),
              "decoder_vocab_size": Field("decoder_vocab_size", 100, "free", "scale", {("dim", "head", 0)}),
              "d_model": Field("d_model", 16, "free", "scale", {("dim", "embed", 1)})}
    flags = {"tie_word_embeddings": Field("tie_word_embeddings", True, "free")}
    found = Discovery({n: f.base for n, f in fields.items()}, None, fields, flags)
    domain = _domain(found, _attention)
    target = ("factor", ("lm_head", 0, "mm"), 2)
    domain.effects = {"decoder_vocab_size": {target}, "vocab_size": set(), "d_model": set(),
                      "tie_word_embeddings": set(), costs.S: set(), costs.B: set()}
    rng = random.Random(3)
    points = [{"vocab_size": 100 * rng.randint(1, 8), "decoder_vocab_size": 100 * rng.randint(1, 8),
               "d_model": 16 * rng.randint(1, 8), "tie_word_embeddings": rng.randint(0, 1), costs.S: 7, costs.B: 2}
              for _ in range(24)]
    widths = [p["decoder_vocab_size"] if p["tie_word_embeddings"] else p["vocab_size"] for p in points]
    found_terms = cost_fitting._fit_target(domain, target, points, widths)
    fresh = {"vocab_size": 300, "decoder_vocab_size": 700, "d_model": 16, costs.S: 7, costs.B: 2}
    at = {tie: sum(c * t.value({**fresh, "tie_word_embeddings": tie}) for t, c in found_terms.items()) for tie in (0, 1)}
    assert at == {0: 300, 1: 700}  # untied: the shared vocabulary; tied: the decoder's


def test_a_field_the_default_leaves_unset_is_set_where_the_forward_pass_needs_it():
    """DeepSeek-V2's default leaves its top-k unset (None), which no shape follows: its router fails without it.
    The base takes the parameter discovery's first try that traces (16 is more experts than the 8 here) and the
    costs follow it as a field of their own."""
    found = _discovery()
    found.quiet = {"top_k", "n_group"}

    def routed(values, seq, batch):
        k = values.get("top_k")
        return None if k is None or k > 8 else Observed(seq, batch, {("count", KEY): k})

    domain = _domain(found, routed)
    base = costs._with_unset_set(domain)
    assert base.targets == {("count", KEY): 8}
    assert found.base["top_k"] == 8 and "n_group" not in found.base  # the other unset field stays unset
    assert (found.fields["top_k"].kind, found.fields["top_k"].base) == ("irrelevant", 8)


def test_no_unset_field_making_the_base_trace_leaves_it_untraced():
    found = _discovery()
    found.quiet = {"top_k"}
    domain = _domain(found, lambda values, seq, batch: None)
    assert costs._with_unset_set(domain) is None and "top_k" not in found.fields
