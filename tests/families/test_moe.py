"""Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V3 and DeepSeek-V2 against transformers on the meta device.

Every parameter tensor is compared by path (layers folded as ``*``), plus the
total and the trainable count; and the *active* count (the parameters one
token uses) against the module itself: every parameter, but of each fused
expert tensor only the slices of ``num_experts_per_tok`` experts
(``tests/reference/moe.py``).  The presets, the shipped config.json fixtures
(read by transformers' own ``AutoConfig``), every head, and random
configurations.  Published totals are their own tests, written out here.
"""

import pytest
import sympy as sp
import transformers
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symparams import SymparamsError, model
from symparams.core.symbols import A, D, D_n, D_r, D_v, F, F_e, F_s, G, H, L, L_f, N_e, N_s, R_kv, R_q, V, k_e
from symparams.families.lookup import from_config
from symparams.families.presets import all_presets
from tests.reference import FIXTURES
from tests.reference.hf import assert_matches, build, totals
from tests.reference.moe import active, reference

pytestmark = pytest.mark.crosscheck

FAMILIES = ("mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v3", "deepseek_v2")
MOE_FIXTURES = ["mistralai/Mixtral-8x7B-v0.1", "Qwen/Qwen1.5-MoE-A2.7B", "Qwen/Qwen3-30B-A3B",
                "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V2-Lite"]
LABELLED = {"sequence-classification", "token-classification"}  # the heads that read num_labels (C)


def check(m, config=None):
    """Per parameter, total, trainable and active count equal transformers' for ``m``."""
    module, strip, config = reference(m, config)
    assert_matches(m, module, strip)
    assert m.active == active(module, config)
    return module


def fixture(name):
    return str(FIXTURES / name / "config.json")


# -- presets and fixtures, every head -----------------------------------------

def _variants():
    for p in all_presets().values():
        if p.family in FAMILIES:
            for head in (None, *model(p.name).family.heads):
                yield p.name, head


def test_every_moe_family_has_a_preset():
    assert {p.family for p in all_presets().values()} >= set(FAMILIES)


@pytest.mark.parametrize("name,head", list(_variants()))
def test_presets_match_transformers_with_every_head(name, head):
    check(model(name, head=head))


@pytest.mark.parametrize("name", MOE_FIXTURES)
@pytest.mark.parametrize("head", [None, "causal-lm", "sequence-classification", "token-classification",
                                  "question-answering"])
def test_fixtures_match_the_model_transformers_reads_from_the_same_config(name, head):
    path = fixture(name)
    if head is not None and head not in from_config(path).family.heads:
        with pytest.raises(SymparamsError, match="unknown head"):
            from_config(path, head=head)
        return
    m = from_config(path, head=head)
    check(m, transformers.AutoConfig.from_pretrained(FIXTURES / name))


def test_fixture_values_are_the_published_configurations():
    m = from_config(fixture("mistralai/Mixtral-8x7B-v0.1"))
    assert m.values == {V: 32000, H: 4096, L: 32, A: 32, G: 8, N_e: 8, k_e: 2, F_e: 14336}
    m = from_config(fixture("Qwen/Qwen1.5-MoE-A2.7B"))
    assert m.values == {V: 151936, H: 2048, L: 24, A: 16, N_e: 60, k_e: 4, F_e: 1408, F_s: 5632}
    assert m.switches["qkv_bias"] and not m.switches["dense_layers"] and not m.switches["gqa"]
    m = from_config(fixture("Qwen/Qwen3-30B-A3B"))
    assert m.values == {V: 151936, H: 2048, L: 48, A: 32, G: 4, D: 128, N_e: 128, k_e: 8, F_e: 768}
    m = from_config(fixture("deepseek-ai/DeepSeek-V3"))
    assert m.values == {V: 129280, H: 7168, L: 61, A: 128, F: 18432, N_e: 256, k_e: 8, F_e: 2048, N_s: 1, L_f: 3,
                        R_q: 1536, R_kv: 512, D_n: 128, D_r: 64, D_v: 128}
    m = from_config(fixture("deepseek-ai/DeepSeek-V2-Lite"))
    assert m.family.name == "deepseek_v2" and m.switches["q_lora"] is False
    assert m.values == {V: 102400, H: 2048, L: 27, A: 16, F: 10944, N_e: 64, k_e: 6, F_e: 1408, N_s: 2, L_f: 1,
                        R_kv: 512, D_n: 128, D_r: 64, D_v: 128}


@pytest.mark.parametrize("hub_id,preset", [("mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b"),
                                           ("Qwen/Qwen1.5-MoE-A2.7B", "qwen1.5-moe-a2.7b"),
                                           ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
                                           ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
                                           ("deepseek-ai/DeepSeek-V2-Lite", "deepseek-v2-lite")])
def test_each_preset_is_its_checkpoints_config(hub_id, preset):
    p, c = model(preset, head="causal-lm"), from_config(fixture(hub_id), head="causal-lm")
    assert (p.values, p.switches) == (c.values, c.switches)
    assert model(hub_id).name == preset  # the hub id is an alias


# -- published totals, each its own test --------------------------------------

def test_mixtral_8x7b_is_46_702_792_704_with_12_879_925_248_active():
    # Mixtral of Experts (Jiang et al. 2024) and the model card: 46.7B parameters, 12.9B active per token; the
    # exact MixtralForCausalLM count of the released checkpoint is 46,702,792,704, and 12,879,925,248 of them
    # are used by a token (2 of 8 experts): 32000·4096 (embedding) + 32000·4096 (LM head) + 4096 (norm) +
    # 32·(4096² + 2·4096·1024 + 4096² + 8·4096 + 2·4096 + k·3·4096·14336) with k = 8, resp. k = 2
    per_layer = 2 * 4096**2 + 2 * 4096 * 1024 + 8 * 4096 + 2 * 4096
    by_hand = tuple(2 * 32000 * 4096 + 4096 + 32 * (per_layer + k * 3 * 4096 * 14336) for k in (8, 2))
    m = from_config(fixture("mistralai/Mixtral-8x7B-v0.1"), head="causal-lm")
    assert (m.count, m.active) == by_hand == (46_702_792_704, 12_879_925_248)
    module = check(m)
    assert totals(module)[0] == 46_702_792_704


def agrees(count, published, unit):
    """A published figure is the exact count to the precision it is given: within one unit of its last digit
    (papers and model cards round, or cut off)."""
    return abs(count - published) < unit


def test_qwen1_5_moe_a2_7b_is_14_3b_with_2_7b_active():
    # Qwen blog "Qwen1.5-MoE: Matching 7B Model Performance with 1/3 Activated Parameters" (2024) and the model
    # card: 14.3B parameters in total, 2.7B activated
    m = model("qwen1.5-moe-a2.7b", head="causal-lm")
    assert agrees(m.count, 14.3e9, 1e8) and agrees(m.active, 2.7e9, 1e8)


def test_qwen3_30b_a3b_is_30_5b_with_3_3b_active():
    # the Qwen3-30B-A3B model card: 30.5B parameters in total, 3.3B activated, 29.9B without the embeddings
    # (the token embedding and the untied LM head, 151936·2048 each)
    m = model("qwen3-30b-a3b", head="causal-lm")
    assert agrees(m.count, 30.5e9, 1e8) and agrees(m.active, 3.3e9, 1e8)
    assert agrees(m.count - 2 * 151936 * 2048, 29.9e9, 1e8)


def test_deepseek_v3_is_671b_with_37b_activated():
    # DeepSeek-V3 Technical Report (2024): 671B total parameters, 37B activated for each token (the 14B of the
    # multi-token-prediction module come on top in the released 685B checkpoint; transformers does not build it)
    m = model("deepseek-v3", head="causal-lm")
    assert agrees(m.count, 671e9, 1e9) and agrees(m.active, 37e9, 1e9)
    module = check(m)
    assert totals(module)[0] == m.count


def test_deepseek_v2_is_236b_with_21b_activated():
    # DeepSeek-V2 paper (2024): 236B total parameters, 21B activated for each token (config of
    # deepseek-ai/DeepSeek-V2: 60 layers, the first dense, 160 routed experts of 1536, 6 per token, 2 shared)
    m = model("deepseek_v2", head="causal-lm", V=102400, H=5120, L=60, L_f=1, A=128, F=12288, F_e=1536, N_e=160,
              k_e=6, N_s=2, R_q=1536, R_kv=512, D_n=128, D_r=64, D_v=128)
    assert agrees(m.count, 236e9, 1e9) and agrees(m.active, 21e9, 1e9)


def test_deepseek_v2_lite_is_15_7b_with_2_4b_activated():
    # DeepSeek-V2 paper (2024), appendix on DeepSeek-V2-Lite: 15.7B total parameters, 2.4B activated per token.
    # The 2.4B leaves one 102400·2048 table out (the embedding lookup computes nothing): with it a token uses 2.66B
    m = model("deepseek-v2-lite", head="causal-lm")
    assert agrees(m.count, 15.7e9, 1e8)
    assert agrees(m.active - 102400 * 2048, 2.4e9, 1e8) and not agrees(m.active, 2.4e9, 1e8)


# -- config.json reading -------------------------------------------------------

@pytest.mark.parametrize("data", [
    {"model_type": "qwen2_moe", "num_hidden_layers": 4, "decoder_sparse_step": 2, "mlp_only_layers": [1, 2, 9]},
    {"model_type": "qwen3_moe", "num_hidden_layers": 6, "decoder_sparse_step": 3},
    {"model_type": "qwen3_moe", "num_hidden_layers": 3, "mlp_only_layers": [0, 2]},
    {"model_type": "deepseek_v3", "num_hidden_layers": 4, "first_k_dense_replace": 0},
])
def test_dense_layers_are_the_ones_transformers_builds(data):
    small = dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2, vocab_size=100, intermediate_size=24,
                 moe_intermediate_size=8, num_experts=5, n_routed_experts=5, num_experts_per_tok=2,
                 q_lora_rank=16, kv_lora_rank=16, qk_nope_head_dim=4, qk_rope_head_dim=4, v_head_dim=4,
                 shared_expert_intermediate_size=12, n_group=1, topk_group=1)
    data = {**small, **data}
    m = model(data)
    module = check(m, transformers.AutoConfig.for_model(**data))
    dense = sum(1 for layer in module.layers if not hasattr(layer.mlp, "experts"))
    assert m.values.get(L_f, 0) == dense and m.switches["dense_layers"] == (dense > 0)


def test_qwen_dense_layers_follow_mlp_only_layers_and_decoder_sparse_step():
    m = model({"model_type": "qwen2_moe", "num_hidden_layers": 4, "decoder_sparse_step": 2,
               "mlp_only_layers": [1, 2, 9]})
    assert m.values[L_f] == 3 and m.switches["dense_layers"]  # layers 0 (off the step), 1 and 2 (listed)
    m = model({"model_type": "qwen3_moe", "num_hidden_layers": 6, "decoder_sparse_step": 3})
    assert m.values[L_f] == 4  # only layers 2 and 5 have experts
    assert not model({"model_type": "qwen3_moe"}).switches["dense_layers"]


def test_deepseek_v3_router_correction_bias_is_a_buffer_not_a_parameter():
    m = model("deepseek-v3")
    module, _, _ = reference(m)
    assert any(n.endswith("mlp.gate.e_score_correction_bias") for n, _ in module.named_buffers())
    assert not any("e_score_correction_bias" in n for n, _ in module.named_parameters())
    assert m.tree.find("decoder.layers.mlp.gate").count == N_e * H


def test_deepseek_without_query_compression_has_one_q_proj():
    m = from_config(fixture("deepseek-ai/DeepSeek-V2-Lite"))
    attn = m.tree.find("decoder.layers.self_attn")
    assert [c.name for c in attn.children][:1] == ["q_proj"] and R_q not in m.tree.symbols
    assert attn.find("q_proj").count == sp.expand(A * H * (D_n + D_r))


def test_missing_keys_take_the_transformers_config_class_defaults():
    for model_type, cls in (("mixtral", "MixtralModel"), ("qwen2_moe", "Qwen2MoeModel"),
                            ("qwen3_moe", "Qwen3MoeModel"), ("deepseek_v3", "DeepseekV3Model")):
        m = model({"model_type": model_type})
        config = transformers.AutoConfig.for_model(model_type)
        assert_matches(m, build(cls, config))


@pytest.mark.parametrize("data,key", [
    ({"model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 5}, "num_experts_per_tok"),
    ({"model_type": "qwen2_moe", "num_experts": 0}, "num_experts"),
    ({"model_type": "qwen3_moe", "num_hidden_layers": 2, "mlp_only_layers": [0, 1]}, "mlp_only_layers"),
    ({"model_type": "qwen3_moe", "mlp_only_layers": "all"}, "mlp_only_layers"),
    ({"model_type": "deepseek_v3", "num_hidden_layers": 3}, "first_k_dense_replace"),
    ({"model_type": "deepseek_v3", "n_shared_experts": 0}, "n_shared_experts"),
    ({"model_type": "deepseek_v2"}, "num_experts_per_tok"),  # DeepseekV2Config has no default top-k
    ({"model_type": "deepseek_v2", "num_experts_per_tok": 6, "hidden_size": 100, "num_attention_heads": 8},
     "hidden_size"),
    ({"model_type": "mixtral", "hidden_size": 100, "num_attention_heads": 8}, "hidden_size"),
    ({"model_type": "deepseek_v3", "qk_rope_head_dim": 63}, "qk_rope_head_dim"),  # transformers refuses it too
])
def test_config_errors_are_one_line_naming_the_key(data, key):
    with pytest.raises(SymparamsError, match=key) as err:
        model(data)
    assert "\n" not in str(err.value)


def test_a_top_k_above_the_expert_count_is_refused_for_set_values_too():
    with pytest.raises(SymparamsError, match="k_e=9 is more than N_e=8"):
        model("mixtral-8x7b", k_e=9)
    with pytest.raises(SymparamsError, match="no mixture-of-experts layer"):
        model("deepseek-v3", L_f=61)


# -- what the counts depend on ----------------------------------------------------

def test_the_total_grows_with_the_experts_and_the_active_count_with_top_k():
    m = model("mixtral")
    total, act = m.closed_form, model("mixtral").active_total
    assert sp.diff(total, k_e) == 0 and sp.expand(sp.diff(total, N_e)) == sp.expand(L * H * (3 * F_e + 1))
    assert sp.expand(sp.diff(act, k_e)) == sp.expand(3 * L * H * F_e)
    assert sp.diff(act, N_e) == L * H  # only the router's rows: a token scores every expert


def test_mla_count_grows_linearly_with_the_heads():
    m = model("deepseek_v3")
    derivative = sp.expand(sp.diff(m.closed_form, A))
    per_layer = (R_q + R_kv) * D_n + R_q * D_r + R_kv * D_v + D_v * H
    assert derivative == sp.expand(L * per_layer)
    p = model("deepseek-v3").prove()
    assert not p.invariant and p.counterexample is not None


# -- random configurations ---------------------------------------------------------

SETTINGS = settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
HEADS = st.sampled_from([None, "causal-lm", "sequence-classification", "token-classification", "question-answering"])


def _experts(data, values):
    values["N_e"] = data.draw(st.integers(1, 6))
    values["k_e"] = data.draw(st.integers(1, values["N_e"]))
    values["F_e"] = data.draw(st.integers(1, 24))


def _labels(data, head, values):
    if head in LABELLED:
        values["C"] = data.draw(st.integers(1, 9))


def _gqa(data, switches, heads, kv):
    """Llama's attention values: A heads, G key/value heads or none, a head width of its own or H/A."""
    head_dim = 2 * data.draw(st.integers(1, 3))  # rotary embeddings: transformers refuses an odd head width
    values = dict(V=data.draw(st.integers(2, 400)), H=heads * head_dim, L=data.draw(st.integers(1, 3)), A=heads)
    switches.update(gqa=data.draw(st.booleans()), free_head_dim=data.draw(st.booleans()),
                    tie=data.draw(st.booleans()), token_classification_bias=data.draw(st.booleans()))
    if switches["gqa"]:
        values["G"] = kv
    if switches["free_head_dim"]:
        values["D"] = 2 * data.draw(st.integers(1, 4))
    return values


def _dense(data, switches, values):
    switches["dense_layers"] = values["L"] > 1 and data.draw(st.booleans())
    if switches["dense_layers"]:
        values["L_f"] = data.draw(st.integers(1, values["L"] - 1))
        values["F"] = data.draw(st.integers(1, 24))


@SETTINGS
@given(kv=st.integers(1, 3), groups=st.integers(1, 3), data=st.data(), head=HEADS)
def test_mixtral_random_configurations_match_transformers(kv, groups, data, head):
    switches = {}
    values = _gqa(data, switches, kv * groups, kv)
    _experts(data, values)
    _labels(data, head, values)
    check(model("mixtral", head=head, **values, **switches))


@SETTINGS
@given(kv=st.integers(1, 3), groups=st.integers(1, 3), data=st.data(), head=HEADS)
def test_qwen2_moe_random_configurations_match_transformers(kv, groups, data, head):
    switches = {"qkv_bias": data.draw(st.booleans())}
    values = _gqa(data, switches, kv * groups, kv)
    _experts(data, values)
    values["F_s"] = data.draw(st.integers(1, 24))
    _dense(data, switches, values)
    _labels(data, head, values)
    check(model("qwen2_moe", head=head, **values, **switches))


@SETTINGS
@given(kv=st.integers(1, 3), groups=st.integers(1, 3), data=st.data(), head=HEADS)
def test_qwen3_moe_random_configurations_match_transformers(kv, groups, data, head):
    switches = {"attention_bias": data.draw(st.booleans())}
    values = _gqa(data, switches, kv * groups, kv)
    _experts(data, values)
    _dense(data, switches, values)
    _labels(data, head, values)
    check(model("qwen3_moe", head=head, **values, **switches))


def _mla(data, family, heads):
    switches = dict(q_lora=data.draw(st.booleans()), attention_bias=data.draw(st.booleans()),
                    tie=data.draw(st.booleans()))
    width = data.draw(st.integers(1, 6))
    values = dict(V=data.draw(st.integers(2, 400)), H=heads * width if family == "deepseek_v2" else
                  data.draw(st.integers(1, 24)), L=data.draw(st.integers(1, 3)), A=heads,
                  N_s=data.draw(st.integers(1, 2)), R_kv=data.draw(st.integers(1, 12)),
                  D_n=data.draw(st.integers(1, 6)), D_r=2 * data.draw(st.integers(1, 3)),  # rotary: even
                  D_v=data.draw(st.integers(1, 6)))
    if switches["q_lora"]:
        values["R_q"] = data.draw(st.integers(1, 12))
    _experts(data, values)
    _dense(data, switches, values)
    return values, switches


@SETTINGS
@given(heads=st.integers(1, 4), data=st.data(), head=st.sampled_from([None, "causal-lm", "sequence-classification",
                                                                     "token-classification"]))
def test_deepseek_v3_random_configurations_match_transformers(heads, data, head):
    values, switches = _mla(data, "deepseek_v3", heads)
    switches["token_classification_bias"] = data.draw(st.booleans())
    _labels(data, head, values)
    check(model("deepseek_v3", head=head, **values, **switches))


@SETTINGS
@given(heads=st.integers(1, 4), data=st.data(), head=st.sampled_from([None, "causal-lm", "sequence-classification"]))
def test_deepseek_v2_random_configurations_match_transformers(heads, data, head):
    values, switches = _mla(data, "deepseek_v2", heads)
    switches["mlp_bias"] = data.draw(st.booleans())
    _labels(data, head, values)
    check(model("deepseek_v2", head=head, **values, **switches))
