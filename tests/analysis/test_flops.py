"""FLOPs from the Block tree: the conventions, the laws, the head count, solve and sweep over FLOPs.

Every expected value is written by hand from the architecture (the families' cross-checks against
PyTorch's FlopCounterMode are in test_flops_*.py).
"""

from fractions import Fraction

import pytest
import sympy as sp

from symparams import SymparamsError, model, solve, sweep
from symparams.analysis.flops import laws
from symparams.core.compute import BATCH, SEQ
from symparams.core.symbols import SYMBOLS

H, L, V, A, G, F = (SYMBOLS[n].symbol for n in "H L V A G F".split())


def bert_base_forward(s, b=1):
    """BERT-base by hand: 12 layers of 12·H² weights on b·s positions, the pooler's H² on b, and per layer the
    scores and the weighted sum, 2·b·s²·H each."""
    return 2 * b * s * 12 * 12 * 768**2 + 2 * b * 768**2 + 12 * 2 * (2 * b * s * s * 768)


def test_bert_base_forward_and_training_by_hand():
    f = model("bert-base").flops(s=128, b=4)
    assert f.forward == bert_base_forward(128, 4)
    assert f.backward == 2 * f.forward
    assert f.training == 3 * f.forward
    assert f.tokens == 512 and f.forward_per_token == Fraction(bert_base_forward(128, 4), 512)


def test_recomputation_runs_each_layers_forward_pass_twice_and_the_pooler_once():
    f = model("bert-base").flops(s=64, recompute=True)
    pooler = 2 * 768 * 768  # one position, outside the layers activation checkpointing recomputes
    assert f.training == 4 * bert_base_forward(64) - pooler


def test_the_causal_half_counts_s_times_s_plus_1_over_2_pairs_in_a_decoder_only():
    full, half = (model("llama-2-7b").flops(s=100, causal=c) for c in (False, True))
    per_pair = 32 * 2 * 2 * 4096  # L layers, scores and weighted sum, 2·A·(H/A) each
    assert full.forward - half.forward == per_pair * (100 * 100 - 100 * 101 // 2)
    assert model("bert-base").flops(s=100, causal=True).forward == bert_base_forward(100)  # an encoder: no mask


def test_llama_forward_formula_and_the_tied_head():
    f = model("llama-3-8b", head="causal-lm").flops(s=2048)
    s = SEQ
    hand = BATCH * s * (L * (2 * H * H * 2 + 2 * 2 * H * (G * H / A) + 2 * 3 * H * F + 4 * s * H) + 2 * H * V)
    assert sp.expand(f.formula - hand) == 0
    tied = model("llama-3-8b", head="causal-lm", tie=True).flops(s=2048)
    assert tied.forward == f.forward  # a tied head adds no parameter, but still multiplies
    assert model("llama-3-8b", head="causal-lm", tie=True).count == model("llama-3-8b").count


def test_mixture_of_experts_counts_the_routed_experts_only():
    one, two = (model("mixtral-8x7b", k_e=k).flops(s=16).forward for k in (1, 2))
    assert two - one == 16 * 32 * 2 * 3 * 4096 * 14336  # one more expert per token: 3·H·F_e per layer


def test_elementwise_terms_by_hand():
    plain, more = (model("llama-3-8b").flops(s=2048, elementwise=e) for e in (False, True))
    s, hidden, layers, inter, heads = 2048, 4096, 32, 14336, 32
    norms = s * (2 * layers + 1) * 3 * hidden  # RMSNorm: 2 + 1 scale per feature
    activations = s * layers * inter
    softmax = layers * 3 * heads * s * s
    assert more.forward - plain.forward == norms + activations + softmax
    assert more.by_kind["elementwise"] == norms + activations + softmax


def test_laws_differences_are_what_the_laws_leave_out():
    kaplan, kaplan_training, palm = laws(model("llama-3-8b", head="causal-lm").tree)
    # Kaplan counts one of attention's two s × s products, and N holds the norms (2 per layer and the final one)
    assert sp.expand(kaplan.difference - 2 * H * (L * SEQ - 2 * L - 1)) == 0
    assert sp.expand(palm.difference + 6 * H * (2 * L + 1)) == 0
    assert sp.expand(kaplan_training.difference - 3 * kaplan.difference - 6 * 2 * H * L * SEQ / 2) == 0


def test_kaplans_n_is_what_a_token_uses_in_a_mixture_of_experts():
    f = model("mixtral-8x7b", head="causal-lm").flops(s=1)
    kaplan = next(law for law in f.laws if law["name"] == "kaplan_forward")
    active_non_embedding = model("mixtral-8x7b", head="causal-lm").active - 32000 * 4096
    assert kaplan["law_value"] == 2 * active_non_embedding + 2 * 32 * 1 * 4096


def test_the_head_count_verdicts():
    assert model("bert-base").flops(s=8).heads_derivative == 0
    gqa = model("llama-2-70b").flops(s=8)
    assert gqa.heads_derivative != 0 and gqa.held == (("G/A",), 0)
    t5 = model("t5-small").flops(s=8)
    assert t5.held[0] == ("A*D",) and t5.held[1] == 0


def test_to_dict_has_the_documented_keys_and_no_floats():
    data = model("llama-3-8b").flops(s=2048).to_dict()
    assert {"forward", "backward", "training", "forward_per_token", "by_kind", "formula", "laws"} <= set(data)
    assert data["forward"] == model("llama-3-8b").flops(s=2048).forward

    def floats(x):
        if isinstance(x, dict):
            return any(floats(v) for v in x.values())
        if isinstance(x, list):
            return any(floats(v) for v in x)
        return isinstance(x, float)

    assert not floats(data)


@pytest.mark.parametrize("s,b", [(0, 1), ("abc", 1), (8, 0), (8, -1), (1.5, 1), (True, 1)])
def test_bad_sizes_are_refused(s, b):
    with pytest.raises(SymparamsError):
        model("bert-base").flops(s, b)


def test_sweep_of_flops_equals_the_exact_count_at_every_point():
    rows = list(sweep(model("bert-base"), of="flops", s="64,128", batch=2))
    assert rows == [(64, bert_base_forward(64, 2)), (128, bert_base_forward(128, 2))]
    training = list(sweep(model("bert-base"), of="training_flops", seq=128, L="12"))
    assert training == [(12, 3 * bert_base_forward(128))]


def test_solve_for_the_sequence_length_nearest_a_flops_target():
    target = bert_base_forward(300)
    s = solve(model("bert-base"), target, "s", of="flops")
    assert (s.value, s.count, s.of) == (300, target, "flops")
    assert s.below == (299, bert_base_forward(299)) and s.above == (301, bert_base_forward(301))


def test_s_and_b_are_refused_for_the_parameter_count():
    with pytest.raises(SymparamsError, match="FLOPs"):
        solve(model("bert-base"), 10**9, "s")
    with pytest.raises(SymparamsError, match="FLOPs"):
        sweep(model("bert-base"), s="1,2")
