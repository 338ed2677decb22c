"""LoRA on a mixture of experts against PEFT on transformers 5: the router and the fused 3-D expert tensors PEFT
wraps as parameters (``lora.ParamWrapper``), its ``get_nb_trainable_parameters()`` on the meta-device model the
oracle, at two ranks."""

import pytest
import sympy as sp
import torch
import transformers

from symparams import SymparamsError, model
from symparams.analysis import adapter_experts
from symparams.core.symbols import SYMBOLS
from symparams.families.lookup import from_config
from tests.reference import FIXTURES
from tests.reference.hf import lora_wrapped

pytestmark = pytest.mark.crosscheck

SMALL = {
    "mixtral": dict(model_type="mixtral", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=2, vocab_size=50, num_local_experts=4),
    # qwen2_moe: a shared expert and its gate beside the routed experts
    "qwen2_moe": dict(model_type="qwen2_moe", hidden_size=32, moe_intermediate_size=24,
                      shared_expert_intermediate_size=40, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, vocab_size=50, num_experts=4, num_experts_per_tok=2),
    # qwen3_moe with its first layer a dense MLP, whose gate_proj PEFT 0.22 wraps beside the experts it converts
    "qwen3_moe": dict(model_type="qwen3_moe", hidden_size=32, intermediate_size=56, moe_intermediate_size=24,
                      num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2, head_dim=8, vocab_size=50,
                      num_experts=4, num_experts_per_tok=2, mlp_only_layers=[0]),
    "deepseek_v3": dict(model_type="deepseek_v3", hidden_size=32, intermediate_size=48, moe_intermediate_size=24,
                        num_hidden_layers=3, first_k_dense_replace=1, num_attention_heads=4, num_key_value_heads=4,
                        vocab_size=50, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, n_group=2,
                        topk_group=1, q_lora_rank=16, kv_lora_rank=8, qk_rope_head_dim=4, qk_nope_head_dim=8,
                        v_head_dim=8),
    "deepseek_v2": dict(model_type="deepseek_v2", hidden_size=32, intermediate_size=48, moe_intermediate_size=24,
                        num_hidden_layers=3, first_k_dense_replace=1, num_attention_heads=4, num_key_value_heads=4,
                        vocab_size=50, n_routed_experts=4, n_shared_experts=2, num_experts_per_tok=2,
                        q_lora_rank=None, kv_lora_rank=8, qk_rope_head_dim=4, qk_nope_head_dim=8, v_head_dim=8),
    # an inferred type (no hand-written family)
    "olmoe": dict(model_type="olmoe", hidden_size=32, intermediate_size=24, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=50, num_experts=4, num_experts_per_tok=2),
}

QWEN_NAMES = [["gate"], ["gate_proj", "up_proj"], ["down_proj"], ["gate", "o_proj", "down_proj"]]
TARGETS = {
    "mixtral": ["all-linear", ["gate"], ["w1", "w3"], ["w2"], ["w1", "w2", "w3", "gate", "q_proj"]],
    # converted since PEFT 0.22: gate_proj the shared expert's and the experts' fused gate_up_proj, gate the router
    "qwen2_moe": ["all-linear", ["gate"], ["gate_proj", "up_proj"], ["down_proj", "shared_expert_gate"]],
    "qwen3_moe": ["all-linear", *QWEN_NAMES],
    "deepseek_v3": ["all-linear", *QWEN_NAMES, ["q_b_proj", "kv_b_proj"]],
    "deepseek_v2": ["all-linear", *QWEN_NAMES],
    "olmoe": ["all-linear", *QWEN_NAMES],
}
CASES = [(kind, targets, r) for kind, names in TARGETS.items() for targets in names for r in (4, 7)]


def built(config: dict, head=None):
    config = transformers.AutoConfig.for_model(**config)
    with torch.device("meta"):
        return (transformers.AutoModelForCausalLM if head else transformers.AutoModel).from_config(config)


def peft_counts(module, r, targets, **options) -> tuple[int, int]:
    return lora_wrapped(module, r=r, target_modules=targets, **options).get_nb_trainable_parameters()


@pytest.mark.parametrize("kind, targets, r", CASES, ids=str)
def test_lora_on_a_mixture_matches_peft(kind, targets, r):
    adapter = model(SMALL[kind]).lora(r, targets)
    assert (adapter.trainable, adapter.total) == peft_counts(built(SMALL[kind]), r, targets)


@pytest.mark.parametrize("folder", ["mistralai/Mixtral-8x7B-v0.1", "Qwen/Qwen1.5-MoE-A2.7B", "Qwen/Qwen3-30B-A3B",
                                    "deepseek-ai/DeepSeek-V2-Lite"])
def test_all_linear_on_a_released_mixture_matches_peft(folder):
    """The released configs with their LM head, which all-linear leaves out."""
    adapter = from_config(str(FIXTURES / folder / "config.json"), head="causal-lm").lora(16, "all-linear")
    config = transformers.AutoConfig.from_pretrained(FIXTURES / folder)
    with torch.device("meta"):
        module = transformers.AutoModelForCausalLM.from_config(config)
    assert (adapter.trainable, adapter.total) == peft_counts(module, 16, "all-linear")


def test_mixtral_expert_adapter_formula_is_the_count_by_hand():
    """Per layer: the router r·(H + E); w1 and w3 fused into gate_up_proj [E, 2F, H] at rank 2r, E·2r·(H + 2F);
    w2 as down_proj [E, H, F], E·r·(H + F)."""
    H, L, R, E, F = (SYMBOLS[k].symbol for k in ("H", "L", "R", "N_e", "F_e"))
    formula = model("mixtral").lora(8, ["gate", "w1", "w3", "w2"]).formula
    assert sp.expand(formula - L * (R * (H + E) + E * 2 * R * (H + 2 * F) + E * R * (H + F))) == 0


def test_expert_adapter_active_count_takes_the_experts_a_token_is_routed_to():
    """Of the fused tensors' adapter a token uses its k experts' slices: k·r·(H + F) a layer for down_proj."""
    m = model(SMALL["mixtral"])
    adapter = m.lora(4, ["w2"])
    assert adapter.active - m.active == 2 * 2 * 4 * (32 + 48)  # L = 2 layers, top-2 of the experts


@pytest.mark.parametrize("kind, targets, options", [
    ("mixtral", ["w1"], {}),                     # half of a fused pair
    ("qwen3_moe", ["up_proj", "down_proj"], {}),
    ("mixtral", ["gate"], {"use_dora": True}),   # DoRA on a parameter
], ids=str)
def test_lora_on_a_mixture_refuses_what_peft_refuses(kind, targets, options):
    with pytest.raises(ValueError):
        peft_counts(built(SMALL[kind]), 4, targets, **options)
    with pytest.raises(SymparamsError):
        model(SMALL[kind]).lora(4, targets, dora=options.get("use_dora", False))


def test_lora_refuses_all_linear_on_a_mixture_not_checked_against_peft():
    """PhiMoE's experts: PEFT's conversion table does not hold the type, and no count here is checked for it."""
    config = {"model_type": "phimoe", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 50, "num_local_experts": 4}
    assert model(config).routed
    with pytest.raises(SymparamsError, match="mixture of experts"):
        model(config).lora(4, "all-linear")


def test_conversion_table_is_peft_and_transformers_own():
    """The names and the types PEFT converts, as the installed peft and transformers hold them."""
    from peft.utils import transformers_weight_conversion as peft_conversion

    assert adapter_experts.PARAMETER_NAMES == peft_conversion._MOE_TARGET_MODULE_MAPPING
    assert {k: tuple(v["gate_up_proj"]) for k, v in peft_conversion._MOE_FUSED_TARGETS.items()} == \
        adapter_experts.FUSED
    patterns = peft_conversion._MODEL_TO_CONVERSION_PATTERN
    assert {t: patterns.get(t) for t in adapter_experts.CONVERTED} == adapter_experts.CONVERTED
