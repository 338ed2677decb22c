"""Mistral, Qwen 2/3, Phi-3, Gemma 1/2/3, OLMo 2 and Cohere against transformers on the meta device.

Every parameter tensor is compared by path (layers folded as ``*``), plus the
total and the trainable count: the presets with every head, the config.json
fixtures (read by transformers' own ``AutoConfig``) with every head, the
config classes' defaults, and random configurations.  Published totals are
their own tests, written out here with their sources.
"""

import os

import pytest
import sympy as sp
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symparams import SymparamsError, model
from symparams.analysis.proof import RHO, WIDTH
from symparams.core.symbols import A, D, F, G, H, L, V
from symparams.families.lookup import from_config
from symparams.families.presets import all_presets
from symparams.families.registry import family
from symparams.families.sliding import WholeSwitch
from tests.reference import FIXTURES
from tests.reference.hf import assert_matches, build, totals
from tests.reference.llama_like import FAMILIES, reference

pytestmark = pytest.mark.crosscheck

FIXTURE_NAMES = ["mistralai/Mistral-7B-v0.1", "Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-7B", "Qwen/Qwen3-0.6B",
                 "Qwen/Qwen3-8B", "microsoft/Phi-3-mini-4k-instruct", "google/gemma-2b", "google/gemma-7b",
                 "google/gemma-2-2b", "google/gemma-2-9b", "google/gemma-2-27b", "google/gemma-3-1b-pt",
                 "allenai/OLMo-2-1124-7B", "allenai/OLMo-2-1124-13B", "CohereForAI/c4ai-command-r-v01",
                 "CohereForAI/c4ai-command-r-plus", "bigcode/starcoder2-3b", "stabilityai/stablelm-2-1_6b"]
ALL_HEADS = ("causal-lm", "sequence-classification", "token-classification", "question-answering")
LABELLED = {"sequence-classification", "token-classification"}  # the heads that read num_labels (C)


def check(m, cfg=None):
    module, strip = reference(m, cfg)
    assert_matches(m, module, strip)


def fixture(name):
    return str(FIXTURES / name / "config.json")


def non_embedding(name):
    """The base model without its token embedding (V·H), as the papers and model cards count it."""
    m = model(name)
    assert m.components["embeddings"] == m.values[V] * m.values[H]
    return m.count - m.components["embeddings"]


# -- presets and fixtures, every head -----------------------------------------

def _variants():
    for p in all_presets().values():
        if p.family in FAMILIES:
            for head in (None, *family(p.family).heads):
                yield p.name, head


@pytest.mark.parametrize("name,head", list(_variants()))
def test_presets_match_transformers_with_every_head(name, head):
    check(model(name, head=head))


@pytest.mark.parametrize("name", FIXTURE_NAMES)
@pytest.mark.parametrize("head", [None, *ALL_HEADS])
def test_fixtures_match_the_model_transformers_reads_from_the_same_config(name, head):
    path = fixture(name)
    if head is not None and head not in from_config(path).family.heads:
        with pytest.raises(SymparamsError, match="unknown head"):
            from_config(path, head=head)
        return
    m = from_config(path, head=head)
    check(m, transformers.AutoConfig.from_pretrained(os.path.dirname(path)))


@pytest.mark.parametrize("name,preset", [
    ("mistralai/Mistral-7B-v0.1", "mistral-7b"), ("Qwen/Qwen2.5-0.5B", "qwen2.5-0.5b"),
    ("Qwen/Qwen2.5-7B", "qwen2.5-7b"), ("Qwen/Qwen3-0.6B", "qwen3-0.6b"), ("Qwen/Qwen3-8B", "qwen3-8b"),
    ("microsoft/Phi-3-mini-4k-instruct", "phi-3-mini"), ("google/gemma-2b", "gemma-2b"),
    ("google/gemma-7b", "gemma-7b"), ("google/gemma-2-2b", "gemma-2-2b"), ("google/gemma-2-9b", "gemma-2-9b"),
    ("google/gemma-2-27b", "gemma-2-27b"), ("google/gemma-3-1b-pt", "gemma-3-1b"),
    ("allenai/OLMo-2-1124-7B", "olmo-2-7b"), ("allenai/OLMo-2-1124-13B", "olmo-2-13b"),
    ("CohereForAI/c4ai-command-r-v01", "command-r"), ("CohereForAI/c4ai-command-r-plus", "command-r-plus"),
    ("bigcode/starcoder2-3b", "starcoder2-3b"), ("stabilityai/stablelm-2-1_6b", "stablelm-2-1.6b"),
])
def test_each_preset_is_its_checkpoints_config(name, preset):
    read, named = from_config(fixture(name)), model(preset)
    assert (read.family, read.values, read.switches) == (named.family, named.values, named.switches)
    assert model(name).name == preset  # the hub id names the preset


def test_fixture_values_are_the_published_configurations():
    m = from_config(fixture("Qwen/Qwen3-0.6B"))
    assert m.values == {V: 151936, H: 1024, L: 28, A: 16, G: 8, D: 128, F: 3072}
    assert m.switches["tie"] and m.switches["free_head_dim"] and not m.switches["attention_bias"]
    m = from_config(fixture("google/gemma-7b"))
    assert m.values == {V: 256000, H: 3072, L: 28, A: 16, D: 256, F: 24576}
    assert not m.switches["gqa"] and m.switches["tie"]
    assert from_config(fixture("google/gemma-2b")).values == {V: 256000, H: 2048, L: 18, A: 8, G: 1, F: 16384}
    assert from_config(fixture("google/gemma-3-1b-pt")).family.name == "gemma3_text"


# -- published totals, each its own test --------------------------------------

def test_mistral_7b_causal_lm_total_is_7_241_732_096():
    # huggingface.co/mistralai/Mistral-7B-v0.1: safetensors parameter count 7,241,732,096
    assert model("mistral-7b", head="causal-lm").count == 7_241_732_096
    m = from_config(fixture("mistralai/Mistral-7B-v0.1"), head="causal-lm")
    assert m.count == totals(reference(m)[0])[0] == 7_241_732_096


def test_qwen2_5_0_5b_total_is_494_032_768():
    # huggingface.co/Qwen/Qwen2.5-0.5B: safetensors parameter count 494,032,768 (LM head tied);
    # model card: "Number of Parameters: 0.49B; Number of Paramaters (Non-Embedding): 0.36B"
    for head in (None, "causal-lm"):
        assert model("qwen2.5-0.5b", head=head).count == 494_032_768
    assert round(non_embedding("qwen2.5-0.5b") / 1e9, 2) == 0.36


def test_qwen2_5_7b_causal_lm_total_is_7_615_616_512():
    # huggingface.co/Qwen/Qwen2.5-7B model.safetensors.index.json: total_size 15,231,233,024 bytes in bfloat16
    # (2 bytes a parameter); model card: "Number of Parameters: 7.61B; (Non-Embedding): 6.53B"
    m = from_config(fixture("Qwen/Qwen2.5-7B"), head="causal-lm")
    assert 2 * m.count == 15_231_233_024
    assert abs(m.count / 1e9 - 7.61) < 0.01 and round(non_embedding("qwen2.5-7b") / 1e9, 2) == 6.53


def test_qwen3_0_6b_total_is_0_6b_with_0_44b_outside_the_embedding():
    # huggingface.co/Qwen/Qwen3-0.6B model card: "Number of Parameters: 0.6B; (Non-Embedding): 0.44B" (tied)
    assert round(model("qwen3-0.6b", head="causal-lm").count / 1e9, 1) == 0.6
    assert round(non_embedding("qwen3-0.6b") / 1e9, 2) == 0.44


def test_qwen3_8b_total_is_8_2b_with_6_95b_outside_the_embedding():
    # huggingface.co/Qwen/Qwen3-8B model card: "Number of Parameters: 8.2B; (Non-Embedding): 6.95B"
    assert round(model("qwen3-8b", head="causal-lm").count / 1e9, 1) == 8.2
    assert round(non_embedding("qwen3-8b") / 1e9, 2) == 6.95


def test_phi_3_mini_causal_lm_total_is_3_821_079_552():
    # huggingface.co/microsoft/Phi-3-mini-4k-instruct: safetensors parameter count 3,821,079,552
    m = from_config(fixture("microsoft/Phi-3-mini-4k-instruct"), head="causal-lm")
    assert m.count == model("phi-3-mini", head="causal-lm").count == 3_821_079_552
    assert totals(reference(m)[0])[0] == 3_821_079_552


@pytest.mark.parametrize("name,published", [("gemma-2b", 1_981_884_416), ("gemma-7b", 7_751_248_896)])
def test_gemma_non_embedding_counts_are_the_papers(name, published):
    # Gemma Team 2024, "Gemma: Open Models Based on Gemini Research and Technology", Table 2
    # (non-embedding parameters; its embedding counts use 256,128 rows, the checkpoints hold 256,000)
    assert non_embedding(name) == published


@pytest.mark.parametrize("name,published", [("gemma-2-2b", 2_024_517_888), ("gemma-2-9b", 8_324_201_984),
                                            ("gemma-2-27b", 26_047_480_320)])
def test_gemma_2_non_embedding_counts_are_the_papers(name, published):
    # Gemma Team 2024, "Gemma 2: Improving Open Language Models at a Practical Size", Table 2
    assert non_embedding(name) == published


def test_gemma_3_1b_holds_302m_embedding_and_698m_other_parameters():
    # Gemma Team 2025, "Gemma 3 Technical Report", Table 1: 1B — embedding 302M, non-embedding 698M
    m = model("gemma-3-1b")
    assert round(m.components["embeddings"] / 1e6) == 302
    assert round(non_embedding("gemma-3-1b") / 1e6) == 698


@pytest.mark.parametrize("name,billions", [("olmo-2-7b", 7.3), ("olmo-2-13b", 13.7)])
def test_olmo_2_causal_lm_totals_are_the_published_sizes(name, billions):
    # huggingface.co/allenai/OLMo-2-1124-7B and -13B: "Model size 7.3B params", "13.7B params"
    assert round(model(name, head="causal-lm").count / 1e9, 1) == billions


@pytest.mark.parametrize("name,billions", [("command-r", 35), ("command-r-plus", 104)])
def test_command_r_totals_are_the_published_sizes(name, billions):
    # huggingface.co/CohereForAI/c4ai-command-r-v01: "a 35 billion parameter ... generative model";
    # c4ai-command-r-plus: "a 104B billion parameter model" (LM heads tied)
    assert round(model(name, head="causal-lm").count / 1e9) == billions


# -- what each family builds -----------------------------------------------------

def test_qwen2_has_biases_on_q_k_v_only():
    tree = model("qwen2").tree
    for name in ("q_proj", "k_proj", "v_proj"):
        assert "bias" in dict(tree.find(f"decoder.layers.self_attn.{name}").params)
    assert "bias" not in dict(tree.find("decoder.layers.self_attn.o_proj").params)


def test_phi3_fused_projections_count_what_separate_ones_would():
    fused = model("phi-3-mini").subs(L=1)
    separate = model("llama", V=32064, H=3072, L=1, A=32, F=8192, gqa=False)
    assert fused.count == separate.count


def test_olmo2_and_cohere_norms_have_a_weight_for_every_feature_of_every_head():
    values = dict(V=100, H=64, L=1, A=8, G=2, F=96)
    olmo, cohere = model("olmo2", **values), model("cohere", qk_norm=True, **values)
    for m in (olmo, cohere):
        assert m.evaluate(m.tree.find("decoder.layers.self_attn.q_norm").count) == 64      # A·(H/A)
        assert m.evaluate(m.tree.find("decoder.layers.self_attn.k_norm").count) == 2 * 8  # G·(H/A)
    assert cohere.count - model("cohere", qk_norm=False, **values).count == 64 + 16


def test_gemma2_and_gemma3_add_norms_to_every_layer():
    per_layer = {name: model(name, V=100, H=64, L=1, A=4, G=2, D=32, F=96).count for name in
                 ("gemma", "gemma2", "gemma3_text")}
    assert per_layer["gemma2"] - per_layer["gemma"] == 2 * 64  # pre- and post-feed-forward RMSNorm
    assert per_layer["gemma3_text"] - per_layer["gemma2"] == 2 * 32  # q_norm, k_norm: one head's width


# -- the head-count prover's verdicts (docs/families.md states them) -----------

def test_grouped_query_presets_depend_on_a_until_g_over_a_is_fixed():
    for name, dependence, ratio in (("mistral-7b", 2 * G * H**2 * L / A, sp.Rational(1, 4)),
                                    ("qwen2.5-0.5b", 2 * G * H**2 * L / A + 2 * G * H * L / A, sp.Rational(1, 7)),
                                    ("gemma-2b", 2 * G * H**2 * L / A, sp.Rational(1, 8))):
        p = model(name).prove()
        assert not p.invariant and sp.expand(p.dependence - dependence) == 0
        assert p.fixed_ratio.invariant and p.fixed_ratio.values[RHO] == ratio


@pytest.mark.parametrize("name", ["phi-3-mini", "olmo-2-7b", "command-r"])
def test_multi_head_presets_with_heads_h_over_a_wide_are_invariant_in_a(name):
    assert model(name).prove().invariant


def test_command_r_plus_norms_over_all_heads_cancel_once_g_over_a_is_fixed():
    p = model("command-r-plus").prove()
    assert sp.expand(p.dependence - (2 * G * H**2 * L / A + G * H * L / A)) == 0
    assert p.fixed_ratio.invariant and p.fixed_ratio.values[RHO] == sp.Rational(1, 12)


def test_per_head_norms_keep_qwen3_8b_dependent_on_a_with_g_over_a_fixed():
    p = model("qwen3-8b").prove()
    assert sp.expand(p.dependence - (2 * G * H**2 * L / A + 2 * H * L / A)) == 0
    assert not p.fixed_ratio.invariant and sp.simplify(p.fixed_ratio.derivative + 2 * H * L / A**2) == 0


@pytest.mark.parametrize("name,dependence", [("qwen3-0.6b", 2 * A * D * H * L), ("gemma-7b", 4 * A * D * H * L),
                                             ("gemma-2-2b", 2 * A * D * H * L), ("gemma-3-1b", 2 * A * D * H * L)])
def test_a_head_width_of_its_own_makes_the_count_grow_with_a(name, dependence):
    p = model(name).prove()
    assert not p.invariant and sp.expand(p.dependence - dependence) == 0
    # with A·D = W (and G/A) held, only per-head q_norm/k_norm (D wide each, 2·D per layer) still hold A
    per_head_norms = name in ("qwen3-0.6b", "gemma-3-1b")
    assert p.fixed_ratio.substitutions[D] == WIDTH / A and p.fixed_ratio.invariant != per_head_norms
    if per_head_norms:
        assert sp.expand(p.fixed_ratio.derivative + 2 * WIDTH * L / A**2) == 0
    (a0, n0), (a1, n1) = p.counterexample
    assert n0 != n1 and model(name, A=a1).count == n1


# -- config.json mapping details -------------------------------------------------

@pytest.mark.parametrize("model_type", list(FAMILIES))
def test_missing_keys_take_the_transformers_config_class_defaults(model_type):
    m = model({"model_type": model_type})
    assert m.family is family(model_type)
    config_class, classes = FAMILIES[model_type]
    assert_matches(m, build(classes[None][0], getattr(transformers, config_class)()))


def test_qwen3_without_head_dim_has_heads_128_wide_as_qwen3config():
    data = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=1)
    m = model({"model_type": "qwen3", **data})
    assert m.values[D] == 128 and m.switches["free_head_dim"]
    check(m, transformers.Qwen3Config(**data))


@pytest.mark.parametrize("model_type", ["qwen2", "phi3"])
def test_head_dim_is_read_where_the_config_class_does_not_declare_it(model_type):
    data = {"model_type": model_type, "vocab_size": 100, "hidden_size": 32, "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 12, "num_hidden_layers": 1, "intermediate_size": 40,
            "pad_token_id": 0}
    m = model(data, head="causal-lm")
    assert m.values[D] == 12
    check(m, transformers.AutoConfig.for_model(**data))


def test_attention_bias_and_token_classification_bias_from_config():
    for model_type in ("qwen3", "gemma", "gemma2", "gemma3_text", "olmo2", "cohere"):
        data = {"model_type": model_type, "vocab_size": 100, "hidden_size": 32, "num_attention_heads": 4,
                "num_key_value_heads": 1, "head_dim": 16, "num_hidden_layers": 1, "intermediate_size": 40,
                "attention_bias": True, "token_classification_bias": False, "tie_word_embeddings": False,
                "use_qk_norm": True}
        for head in (None, *family(model_type).heads):
            m = model(data, head=head)
            assert m.switches["attention_bias"] and not m.switches["tie"]
            assert m.switches.get("qk_norm", True)
            check(m, transformers.AutoConfig.for_model(**data))


@pytest.mark.parametrize("data,key", [
    ({"model_type": "mistral", "hidden_size": 100, "num_attention_heads": 8}, "hidden_size"),
    ({"model_type": "qwen2", "num_attention_heads": 32, "num_key_value_heads": 5}, "num_key_value_heads"),
    ({"model_type": "qwen3", "head_dim": 7}, "head_dim"),
    ({"model_type": "qwen3", "num_attention_heads": 4}, "num_key_value_heads"),  # Qwen3Config's default is 32
    ({"model_type": "phi3", "num_attention_heads": 32, "num_key_value_heads": "8"}, "num_key_value_heads"),
    ({"model_type": "gemma2", "hidden_size": 100, "num_attention_heads": 8}, "Gemma2Config"),
    ({"model_type": "gemma3_text", "attention_bias": "no"}, "attention_bias"),
    ({"model_type": "gemma", "per_layer_config": {"0": {"intermediate_size": 8}}}, "per_layer_config"),
    ({"model_type": "cohere", "use_qk_norm": 1}, "use_qk_norm"),
    ({"model_type": "starcoder2", "num_attention_heads": 24, "num_key_value_heads": 5}, "num_key_value_heads"),
    ({"model_type": "starcoder2", "use_bias": "yes"}, "use_bias"),
    ({"model_type": "starcoder2", "head_dim": 7}, "head_dim"),
    ({"model_type": "stablelm", "head_dim": 64}, "head_dim"),  # StableLmAttention ignores it: heads are 80 wide
    ({"model_type": "stablelm", "hidden_size": 100, "num_attention_heads": 8}, "hidden_size"),
    ({"model_type": "stablelm", "qk_layernorm": 1}, "qk_layernorm"),
])
def test_config_errors_are_one_line_naming_the_key(data, key):
    with pytest.raises(SymparamsError) as info:
        model(data)
    assert key in str(info.value) and "\n" not in str(info.value)


# -- property tests: random configurations, zero mismatches ---------------------

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", list(FAMILIES))
@SETTINGS
@given(kv=st.integers(1, 4), groups=st.integers(1, 4), head_dim=st.integers(1, 8).map(lambda d: 2 * d),
       data=st.data())
def test_random_configurations_match_transformers(name, kv, groups, head_dim, data):
    fam = family(name)
    head = data.draw(st.sampled_from((None, *fam.heads)))
    heads = kv * groups
    values = dict(V=data.draw(st.integers(2, 5000)), H=heads * head_dim, L=data.draw(st.integers(1, 3)),
                  A=heads, F=data.draw(st.integers(1, 128)))
    switches = {sw.name: data.draw(st.booleans()) for sw in fam.switches if isinstance(sw.default, bool)}
    # the sliding window bounds the cache only: the count must not move with it
    switches.update({sw.name: data.draw(st.one_of(st.none(), st.integers(1, 9)) if sw.default is None
                                        else st.integers(max(sw.least, 1), 4))
                     for sw in fam.switches if isinstance(sw, WholeSwitch)})
    if switches["gqa"]:
        values["G"] = kv
    if switches.get("free_head_dim"):  # StableLM has none: its heads are H/A wide
        values["D"] = 2 * data.draw(st.integers(1, 12))  # rotary embeddings need an even head width
    if head in LABELLED:
        values["C"] = data.draw(st.integers(1, 9))
    check(model(name, head=head, **values, **switches))

