"""StarCoder 2 and StableLM: what is theirs alone.

The checks every llama-like family shares (presets and fixtures with every
head against transformers on the meta device, the config classes' defaults,
one-line config errors, random configurations) run for these two in
``tests/families/test_llama_like.py``.  Here: their presets, their fixtures'
values, published totals written out with their sources, the modules each
family builds, the prover's verdicts and how their config keys are read.
"""

import pytest
import sympy as sp
import transformers

from symparams import model
from symparams.analysis.proof import RHO
from symparams.core.symbols import A, F, G, H, L, V
from symparams.families.lookup import from_config
from symparams.families.presets import all_presets
from symparams.families.registry import family
from tests.reference import FIXTURES
from tests.reference.hf import assert_matches, totals
from tests.reference.llama_like import reference

pytestmark = pytest.mark.crosscheck

OWN = ("starcoder2", "stablelm")


def check(m, cfg=None):
    module, strip = reference(m, cfg)
    assert_matches(m, module, strip)


def fixture(name):
    return str(FIXTURES / name / "config.json")


# -- presets and fixtures -------------------------------------------------------

def test_every_preset_is_listed():
    assert {p.name for p in all_presets().values() if p.family in OWN} == {
        "starcoder2-3b", "starcoder2-7b", "stablelm-2-1.6b", "stablelm-3b-4e1t"}


def test_fixture_values_are_the_published_configurations():
    m = from_config(fixture("bigcode/starcoder2-3b"))
    assert m.values == {V: 49152, H: 3072, L: 30, A: 24, G: 2, F: 12288}
    assert m.switches["tie"] and m.switches["bias"] and m.switches["gqa"]
    m = from_config(fixture("stabilityai/stablelm-2-1_6b"))
    assert m.values == {V: 100352, H: 2048, L: 24, A: 32, F: 5632}
    assert m.switches["qkv_bias"] and not (m.switches["tie"] or m.switches["qk_layernorm"] or m.switches["gqa"])


# -- published totals, each its own test --------------------------------------

@pytest.mark.parametrize("name,billions", [("starcoder2-3b", 3.03), ("starcoder2-7b", 7.17)])
def test_starcoder2_causal_lm_totals_are_the_published_sizes(name, billions):
    # huggingface.co/bigcode/starcoder2-3b and starcoder2-7b: "Model size 3.03B params", "7.17B params"
    # (LM heads tied to the token embedding)
    assert round(model(name, head="causal-lm").count / 1e9, 2) == billions


def test_stablelm_3b_4e1t_causal_lm_total_is_2_795_443_200():
    # huggingface.co/stabilityai/stablelm-3b-4e1t model card, "Model Architecture" table: Parameters 2,795,443,200
    assert model("stablelm-3b-4e1t", head="causal-lm").count == 2_795_443_200


def test_stablelm_2_1_6b_causal_lm_total_is_1_64b():
    # huggingface.co/stabilityai/stablelm-2-1_6b: "Model size 1.64B params" (LM head untied)
    m = from_config(fixture("stabilityai/stablelm-2-1_6b"), head="causal-lm")
    assert round(m.count / 1e9, 2) == 1.64 and m.count == totals(reference(m)[0])[0]


# -- what each family builds -----------------------------------------------------

def test_starcoder2_mlp_has_no_gate_and_use_bias_covers_every_linear_layer():
    values = dict(V=100, H=64, L=1, A=8, G=2, F=96)
    with_bias, without = model("starcoder2", **values), model("starcoder2", bias=False, **values)
    assert {b.name for b in with_bias.tree.find("decoder.layers.mlp").children} == {"c_fc", "c_proj"}
    # q, o: 64 each; k, v: 2 heads of 8; c_fc: 96; c_proj: 64
    assert with_bias.count - without.count == 64 + 16 + 16 + 64 + 96 + 64


def test_stablelm_per_head_norms_and_parallel_residual():
    values = dict(V=100, H=64, L=1, A=8, G=2, F=96)
    plain = model("stablelm", gqa=True, **values)
    normed = model("stablelm", gqa=True, qk_layernorm=True, **values)
    assert normed.count - plain.count == 8 * 8 + 2 * 8  # A and G LayerNorms of H/A scales each
    assert plain.count - model("stablelm", gqa=True, parallel_residual=True, **values).count == 2 * 64
    assert model("stablelm", gqa=True, qkv_bias=True, **values).count - plain.count == 64 + 2 * 16


# -- the head-count prover's verdicts (docs/families.md states them) -----------

@pytest.mark.parametrize("name,ratio", [("starcoder2-3b", sp.Rational(1, 12)), ("starcoder2-7b", sp.Rational(1, 9))])
def test_starcoder2_presets_depend_on_a_until_g_over_a_is_fixed(name, ratio):
    p = model(name).prove()
    assert not p.invariant and sp.expand(p.dependence - (2 * G * H**2 * L / A + 2 * G * H * L / A)) == 0
    assert p.fixed_ratio.invariant and p.fixed_ratio.values[RHO] == ratio


@pytest.mark.parametrize("name", ["stablelm-2-1.6b", "stablelm-3b-4e1t"])
def test_stablelm_presets_are_invariant_in_a(name):
    assert model(name).prove().invariant


def test_stablelm_per_head_norms_keep_multi_head_attention_invariant():
    assert model("stablelm-3b-4e1t", qk_layernorm=True).prove().invariant  # A norms of H/A: H in all


# -- config.json mapping details -------------------------------------------------

def test_starcoder2_reads_head_dim_as_starcoder2_attention_does():
    data = {"model_type": "starcoder2", "vocab_size": 100, "hidden_size": 32, "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 12, "num_hidden_layers": 1, "intermediate_size": 40,
            "use_bias": False, "tie_word_embeddings": False, "pad_token_id": 0}
    for head in (None, *family("starcoder2").heads):
        m = model(data, head=head)
        assert m.switches["free_head_dim"] and not m.switches["bias"]
        check(m, transformers.AutoConfig.for_model(**data))


def test_stablelm_switches_from_config():
    data = {"model_type": "stablelm", "vocab_size": 100, "hidden_size": 32, "num_attention_heads": 4,
            "num_key_value_heads": 1, "num_hidden_layers": 2, "intermediate_size": 40, "use_qkv_bias": True,
            "qk_layernorm": True, "use_parallel_residual": True, "tie_word_embeddings": True,
            "token_classification_bias": False}
    for head in (None, *family("stablelm").heads):
        m = model(data, head=head)
        assert all(m.switches[s] for s in ("gqa", "qkv_bias", "qk_layernorm", "parallel_residual", "tie"))
        check(m, transformers.AutoConfig.for_model(**data))
