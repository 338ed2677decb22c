"""``flops --json``'s figures (``Flops.to_dict``): the fields and a published law beside the exact figure,
checked against transformers' GPT-2 and Kaplan et al. (the mutation run found the JSON's keys and the
laws' differences unchecked)."""

import pytest
import sympy as sp

from symparams import model

pytestmark = pytest.mark.crosscheck


def test_flops_json_sets_kaplans_law_beside_the_exact_figure():
    import transformers

    from tests.reference.hf import build, totals

    gpt2 = build("GPT2Model", transformers.GPT2Config())  # its defaults are gpt2's sizes
    non_embedding = totals(gpt2)[0] - gpt2.wte.weight.numel() - gpt2.wpe.weight.numel()
    data = model("gpt2", head="causal-lm").flops(s=1024).to_dict()
    assert (data["model"], data["head"], data["seq"], data["batch"]) == ("gpt2", "causal-lm", 1024, 1)
    law = next(law for law in data["laws"] if law["name"] == "kaplan_forward")
    # Kaplan et al. 2020, Table 1: C_forward = 2N + 2·n_layer·n_ctx·d_attn per token, N without embeddings
    assert law["per_token"] == 2 * non_embedding + 2 * 12 * 1024 * 768
    assert law["difference_per_token"] == law["exact_per_token"] - law["per_token"]
    gpt2_sizes = {sp.Symbol(k): v for k, v in dict(H=768, L=12, r=4, s=1024, V=50257).items()}
    assert sp.sympify(law["difference"]).xreplace(gpt2_sizes) == law["difference_per_token"]


def test_flops_json_fields_are_the_documented_ones_and_hold_what_they_name():
    data = model("gpt2", head="causal-lm").flops(s=1024, b=2, causal=True).to_dict()
    assert set(data) == {"model", "head", "seq", "batch", "causal", "recompute", "elementwise", "traced", "forward",
                         "backward", "training", "forward_per_token", "training_per_token", "by_kind", "formula",
                         "depends_on_heads", "premise", "heads_derivative", "held_fixed", "laws", "laws_refused"}
    assert (data["causal"], data["recompute"], data["elementwise"], data["traced"]) == (True, False, False, False)
    assert data["training_per_token"] * 2 * 1024 == data["training"] == 3 * data["forward"]
    # GPT-2's FLOPs hold A only as A·(H/A): they do not depend on the head count
    assert (data["depends_on_heads"], data["heads_derivative"], data["held_fixed"]) == (False, "0", None)
    gpt2_sizes = {sp.Symbol(k): v for k, v in dict(H=768, L=12, A=12, r=4, s=1024, V=50257, b=2).items()}
    for law in data["laws"]:
        assert sp.sympify(law["formula"]).xreplace(gpt2_sizes) == law["per_token"], law["name"]


def test_flops_json_writes_a_per_token_count_that_is_not_whole_as_a_fraction():
    # BERT-large (L = 24, H = 1024) on 3 tokens, by hand: 12·H² weights a layer on 3 positions, the pooler's H² on
    # one, two 3 × 3 products of width H a layer; the pooler's 2·H² does not divide by 3
    forward = 2 * 3 * 24 * 12 * 1024**2 + 2 * 1024**2 + 24 * 2 * (2 * 3 * 3 * 1024)
    data = model("bert-large").flops(s=3).to_dict()
    assert (data["forward"], data["forward_per_token"]) == (forward, f"{forward}/3")
    assert data["training_per_token"] == forward  # three times the forward, over 3 tokens
