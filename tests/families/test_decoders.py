"""GPT-2, LLaMA and T5 against transformers on the meta device.

Every parameter tensor is compared by path (layers folded as ``*``), plus the
total and the trainable count: the presets, the shipped config.json fixtures
(read by transformers' own ``AutoConfig``), every head, and random
configurations.  Published totals are their own tests, written out here.
"""

import json
import os

import pytest
import sympy as sp
import torch
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symparams import SymparamsError, model
from symparams.core.symbols import A, B, D, F, G, H, L, L_d, P, V, r
from symparams.families.lookup import from_config
from symparams.families.presets import all_presets
from tests.reference import FIXTURES
from tests.reference.decoders import reference, untie
from tests.reference.hf import assert_matches, build, totals

pytestmark = pytest.mark.crosscheck

DECODER_FIXTURES = ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "t5-small", "t5-base", "google/flan-t5-base",
                    "meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-70b-hf", "meta-llama/Meta-Llama-3-8B"]
FAMILIES = ("gpt2", "llama", "t5")


#: heads that read num_labels (C)
LABELLED = {"gpt2": {"sequence-classification", "token-classification"},
            "llama": {"sequence-classification", "token-classification"},
            "t5": {"sequence-classification", "token-classification", "question-answering"}}


def labelled(family, head, values, labels):
    return {**values, "C": labels} if head in LABELLED[family] else values


def check(m, config=None):
    module, strip = reference(m, config)
    assert_matches(m, module, strip)


def fixture(name):
    return str(FIXTURES / name / "config.json")


# -- presets and fixtures, every head -----------------------------------------

def _variants():
    for p in all_presets().values():
        if p.family in FAMILIES:
            for head in (None, *model(p.name).family.heads):
                yield p.name, head


@pytest.mark.parametrize("name,head", list(_variants()))
def test_presets_match_transformers_with_every_head(name, head):
    check(model(name, head=head))


@pytest.mark.parametrize("name", DECODER_FIXTURES)
@pytest.mark.parametrize("head", [None, "causal-lm", "seq2seq-lm", "sequence-classification",
                                  "token-classification", "question-answering"])
def test_fixtures_match_the_model_transformers_reads_from_the_same_config(name, head):
    path = fixture(name)
    m = from_config(path)
    if head is not None and head not in m.family.heads:
        with pytest.raises(SymparamsError, match="unknown head"):
            from_config(path, head=head)
        return
    m = from_config(path, head=head)
    config = transformers.AutoConfig.from_pretrained(os.path.dirname(path))
    check(m, config)


def test_fixture_values_are_the_published_configurations():
    assert from_config(fixture("meta-llama/Llama-2-70b-hf")).values == {V: 32000, H: 8192, L: 80, A: 64, G: 8, F: 28672}
    m = from_config(fixture("meta-llama/Meta-Llama-3-8B"))
    assert m.values == {V: 128256, H: 4096, L: 32, A: 32, G: 8, F: 14336}
    m = from_config(fixture("google/flan-t5-base"))
    assert m.values == {V: 32128, H: 768, L: 12, A: 12, D: 64, B: 32, F: 2048}
    assert m.switches == {"gated": True, "tie": False, "split_layers": False}
    m = from_config(fixture("gpt2-xl"))
    assert m.values == {V: 50257, P: 1024, H: 1600, L: 48, A: 25, r: 4}


# -- published totals, each its own test --------------------------------------

def test_gpt2_total_is_124_439_808():
    assert model("gpt2").count == 124_439_808
    assert from_config(fixture("gpt2")).count == 124_439_808
    assert from_config(fixture("gpt2"), head="causal-lm").count == 124_439_808  # lm_head tied to wte


@pytest.mark.parametrize("name,total", [("gpt2-medium", 354_823_168), ("gpt2-large", 774_030_080),
                                        ("gpt2-xl", 1_557_611_200)])
def test_gpt2_larger_totals(name, total):
    assert model(name).count == total
    assert from_config(fixture(name), head="causal-lm").count == total


def test_llama_2_7b_causal_lm_total_is_6_738_415_616():
    assert model("llama-2-7b", head="causal-lm").count == 6_738_415_616
    m = from_config(fixture("meta-llama/Llama-2-7b-hf"), head="causal-lm")
    assert m.count == 6_738_415_616
    assert totals(reference(m)[0]) == (6_738_415_616, 6_738_415_616)


def test_llama_3_8b_causal_lm_total_is_8_030_261_248():
    m = from_config(fixture("meta-llama/Meta-Llama-3-8B"), head="causal-lm")
    assert m.count == 8_030_261_248
    assert totals(reference(m)[0])[0] == 8_030_261_248


def test_llama_2_70b_causal_lm_total_is_68_976_648_192():
    # 2·32000·8192 + 80·(8192² + 2·8192·1024 + 8192² + 3·8192·28672 + 2·8192) + 8192
    m = from_config(fixture("meta-llama/Llama-2-70b-hf"), head="causal-lm")
    assert m.count == 2 * 32000 * 8192 + 80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192) + 8192 \
        == 68_976_648_192
    assert totals(reference(m)[0])[0] == 68_976_648_192


def test_llama_2_13b_causal_lm_total_is_13_015_864_320():
    # meta-llama/Llama-2-13b-hf's config.json: V 32000, H 5120, 40 layers of 40 heads, intermediate 13824, untied
    # 2·32000·5120 + 40·(4·5120² + 3·5120·13824 + 2·5120) + 5120
    m = model("llama-2-13b", head="causal-lm")
    assert m.count == 2 * 32000 * 5120 + 40 * (4 * 5120**2 + 3 * 5120 * 13824 + 2 * 5120) + 5120 == 13_015_864_320
    assert_matches(m, build("LlamaForCausalLM", transformers.LlamaConfig(
        vocab_size=32000, hidden_size=5120, intermediate_size=13824, num_hidden_layers=40, num_attention_heads=40,
        num_key_value_heads=40, tie_word_embeddings=False)), strip="model.")


def test_t5_base_total_is_222_903_552_with_and_without_the_lm_head():
    assert model("t5-base").count == 222_903_552                          # T5Model
    assert model("t5-base", head="seq2seq-lm").count == 222_903_552       # T5ForConditionalGeneration, tied
    for head in (None, "seq2seq-lm"):
        m = from_config(fixture("t5-base"), head=head)
        assert m.count == 222_903_552
        assert totals(reference(m)[0])[0] == 222_903_552


@pytest.mark.parametrize("name,total", [("t5-small", 60_506_624), ("t5-large", 737_668_096),
                                        ("flan-t5-small", 76_961_152), ("flan-t5-base", 247_577_856),
                                        ("mt5-small", 300_176_768)])
def test_t5_family_conditional_generation_totals(name, total):
    assert model(name, head="seq2seq-lm").count == total


def test_flan_t5_base_untied_lm_head_adds_v_times_h():
    m = from_config(fixture("google/flan-t5-base"), head="seq2seq-lm")
    assert m.count == 247_577_856 == 222_903_552 + 32128 * 768
    assert from_config(fixture("google/flan-t5-base")).count == 222_903_552


# -- T5's untied head: what from_pretrained really does ----------------------

def test_transformers_keeps_a_t5_checkpoints_own_lm_head_apart(tmp_path):
    """transformers 5 ties T5's lm_head when it builds from a config, even with tie_word_embeddings false;
    loading a checkpoint that holds its own lm_head (as T5 v1.1 / Flan-T5 / mT5 do) keeps it apart.
    symparams counts the loaded model; this builds and loads a tiny real one."""
    cfg = transformers.T5Config(vocab_size=50, d_model=8, d_kv=4, d_ff=12, num_layers=1, num_heads=2,
                                feed_forward_proj="gated-gelu", tie_word_embeddings=False)
    built = transformers.T5ForConditionalGeneration(cfg)
    assert built.lm_head.weight is built.shared.weight  # tied at construction
    tied_total = totals(built)[0]
    built.lm_head.weight = torch.nn.Parameter(torch.randn(50, 8))
    built.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    assert saved["tie_word_embeddings"] is True and saved["scale_decoder_outputs"] is False
    loaded = transformers.T5ForConditionalGeneration.from_pretrained(tmp_path)
    assert loaded.lm_head.weight is not loaded.shared.weight
    # symparams reads the config transformers 5 saved (scale_decoder_outputs false: untied) ...
    m = from_config(str(tmp_path / "config.json"), head="seq2seq-lm")
    assert m.switches["tie"] is False
    assert m.count == totals(loaded)[0] == tied_total + 50 * 8
    assert_matches(m, loaded)
    # ... and the same config as transformers 4 saved it (tie_word_embeddings false)
    saved.pop("scale_decoder_outputs")
    saved["tie_word_embeddings"] = False
    assert model(saved, head="seq2seq-lm").count == m.count


def test_mt5_config_reads_as_the_t5_family_with_mt5_defaults():
    m = model({"model_type": "mt5", "tie_word_embeddings": False}, head="seq2seq-lm")
    assert m.family.name == "t5" and m.count == 300_176_768
    config = transformers.MT5Config()
    module = untie(build("MT5ForConditionalGeneration", config))
    assert_matches(m, module)
    base = model({"model_type": "mt5"})
    assert_matches(base, build("MT5Model", config))


# -- config.json mapping details -------------------------------------------------

def test_missing_keys_take_the_transformers_config_class_defaults():
    for model_type, cls, head_cls in (("gpt2", "GPT2Config", "GPT2Model"), ("llama", "LlamaConfig", "LlamaModel"),
                                      ("t5", "T5Config", "T5Model")):
        m = model({"model_type": model_type})
        assert_matches(m, build(head_cls, getattr(transformers, cls)()))


def test_gpt2_n_inner_null_is_four_h_and_a_given_n_inner_is_exact():
    assert model({"model_type": "gpt2", "n_inner": None}).values[r] == 4
    m = model({"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 1, "n_inner": 100})
    assert m.values[r] == sp.Rational(100, 64)
    check(m, transformers.GPT2Config(n_embd=64, n_head=4, n_layer=1, n_inner=100))


def test_gpt2_aliases_are_read_as_gpt2_keys_and_two_values_are_refused():
    data = {"model_type": "gpt2", "hidden_size": 96, "num_attention_heads": 8, "n_layer": 1}
    m = model(data)
    assert (m.values[H], m.values[A]) == (96, 8)
    check(m, transformers.GPT2Config.from_dict(data))
    with pytest.raises(SymparamsError, match=r"keys n_embd \(64\) and hidden_size \(96\) name one field of "
                                             r"GPT2Config"):
        model({**data, "n_embd": 64})


def test_gpt2_cross_attention_blocks():
    data = {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, "add_cross_attention": True}
    m = model(data, head="causal-lm")
    check(m, transformers.GPT2Config.from_dict(data))
    assert m.count - model({**data, "add_cross_attention": False}).count == 2 * (4 * (64 * 64 + 64) + 2 * 64)


def test_llama_head_dim_independent_of_h_over_a_is_its_own_symbol():
    data = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 24, "num_hidden_layers": 2, "intermediate_size": 100, "vocab_size": 500}
    m = model(data, head="causal-lm")
    assert m.switches["free_head_dim"] and m.values[D] == 24
    check(m, transformers.LlamaConfig(**{k: v for k, v in data.items() if k != "model_type"}))
    same = model({**data, "head_dim": 16})  # = hidden / heads: D is H/A
    assert not same.switches["free_head_dim"] and D not in same.values


def test_llama_biases_and_tied_head_from_config():
    data = {"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 1,
            "num_hidden_layers": 1, "intermediate_size": 40, "vocab_size": 300, "attention_bias": True,
            "mlp_bias": True, "tie_word_embeddings": True}
    m = model(data, head="causal-lm")
    assert m.switches["tie"] and m.switches["attention_bias"] and m.switches["mlp_bias"]
    check(m, transformers.LlamaConfig(**{k: v for k, v in data.items() if k != "model_type"}))


def test_llama_without_num_key_value_heads_is_multi_head_attention():
    m = model({"model_type": "llama", "num_hidden_layers": 1})
    assert m.switches["gqa"] is False and G not in m.values


@pytest.mark.parametrize("data,key", [
    ({"model_type": "llama", "hidden_size": 100, "num_attention_heads": 8}, "hidden_size"),
    ({"model_type": "llama", "num_attention_heads": 32, "num_key_value_heads": 5}, "num_key_value_heads"),
    ({"model_type": "llama", "num_key_value_heads": "8"}, "num_key_value_heads"),
    ({"model_type": "llama", "hidden_size": 96, "num_attention_heads": 32}, "hidden_size"),    # head width 3
    ({"model_type": "llama", "head_dim": 7}, "head_dim"),
    ({"model_type": "t5", "feed_forward_proj": "gelu-gated"}, "feed_forward_proj"),
    ({"model_type": "t5", "feed_forward_proj": "gated-gelu-new"}, "feed_forward_proj"),
    ({"model_type": "t5", "tie_word_embeddings": "no"}, "tie_word_embeddings"),
    ({"model_type": "gpt2", "n_inner": 0}, "n_inner"),
    ({"model_type": "gpt2", "n_head": 5}, "A=5"),
])
def test_config_errors_are_one_line_naming_the_key(data, key):
    with pytest.raises(SymparamsError) as info:
        model(data)
    assert key in str(info.value) and "\n" not in str(info.value)


def test_t5_is_gated_act_wins_over_feed_forward_proj_as_in_transformers():
    data = {"model_type": "t5", "feed_forward_proj": "relu", "is_gated_act": True, "num_layers": 1}
    m = model(data)
    assert m.switches["gated"]
    check(m, transformers.T5Config.from_dict(data))


@pytest.mark.parametrize("data", [
    {"model_type": "t5", "num_layers": 3, "num_decoder_layers": 1},
    {"model_type": "t5", "num_hidden_layers": 2},  # decoder keeps the class default 6: the alias comes last
])
def test_t5_decoder_layers_as_transformers_reads_them(data):
    m = model(data, head="seq2seq-lm")
    config = transformers.T5Config.from_dict(data)
    assert m.values[L] == config.num_layers
    assert m.values.get(L_d, m.values[L]) == config.num_decoder_layers
    check(m, config)


def test_t5_layers_under_two_names_with_two_values_are_refused():
    data = {"model_type": "t5", "num_layers": 2, "num_hidden_layers": 3}
    config = transformers.T5Config.from_dict(data)
    assert (config.num_layers, config.num_decoder_layers) == (3, 2)  # transformers takes each name for one stack
    with pytest.raises(SymparamsError, match=r"keys num_layers \(2\) and num_hidden_layers \(3\) name one field"):
        model(data, head="seq2seq-lm")


# -- property tests: random configurations, zero mismatches ---------------------

SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(heads=st.integers(1, 8), head_dim=st.integers(1, 16), data=st.data(),
       head=st.sampled_from([None, "causal-lm", "sequence-classification", "token-classification",
                             "question-answering"]))
def test_gpt2_random_configurations_match_transformers(heads, head_dim, data, head):
    hidden = heads * head_dim
    values = dict(V=data.draw(st.integers(2, 5000)), P=data.draw(st.integers(1, 512)), H=hidden,
                  L=data.draw(st.integers(1, 3)), A=heads,
                  r=sp.Rational(data.draw(st.integers(1, 4 * hidden)), hidden))
    switches = dict(tie=data.draw(st.booleans()), cross_attention=data.draw(st.booleans()))
    values = labelled("gpt2", head, values, data.draw(st.integers(1, 9)))
    check(model("gpt2", head=head, **values, **switches))


@SETTINGS
@given(kv=st.integers(1, 4), groups=st.integers(1, 4), head_dim=st.integers(1, 8).map(lambda d: 2 * d), data=st.data(),
       head=st.sampled_from([None, "causal-lm", "sequence-classification", "token-classification",
                             "question-answering"]))
def test_llama_random_configurations_match_transformers(kv, groups, head_dim, data, head):
    heads = kv * groups
    values = dict(V=data.draw(st.integers(2, 5000)), H=heads * head_dim, L=data.draw(st.integers(1, 3)),
                  A=heads, F=data.draw(st.integers(1, 128)))
    switches = dict(gqa=data.draw(st.booleans()), free_head_dim=data.draw(st.booleans()),
                    tie=data.draw(st.booleans()), attention_bias=data.draw(st.booleans()),
                    mlp_bias=data.draw(st.booleans()), token_classification_bias=data.draw(st.booleans()))
    if switches["gqa"]:
        values["G"] = kv
    if switches["free_head_dim"]:
        values["D"] = 2 * data.draw(st.integers(1, 12))  # rotary embeddings need an even head width
    values = labelled("llama", head, values, data.draw(st.integers(1, 9)))
    check(model("llama", head=head, **values, **switches))


@SETTINGS
@given(data=st.data(), head=st.sampled_from([None, "seq2seq-lm", "sequence-classification",
                                             "token-classification", "question-answering"]))
def test_t5_random_configurations_match_transformers(data, head):
    values = dict(V=data.draw(st.integers(2, 5000)), H=data.draw(st.integers(1, 96)), L=data.draw(st.integers(1, 3)),
                  A=data.draw(st.integers(1, 8)), D=data.draw(st.integers(1, 24)), F=data.draw(st.integers(1, 128)),
                  B=data.draw(st.integers(1, 48)))
    switches = dict(gated=data.draw(st.booleans()), tie=data.draw(st.booleans()),
                    split_layers=head != "token-classification" and data.draw(st.booleans()))  # no decoder there
    if switches["split_layers"]:
        values["L_d"] = data.draw(st.integers(1, 3))
    values = labelled("t5", head, values, data.draw(st.integers(1, 9)))
    check(model("t5", head=head, **values, **switches))
