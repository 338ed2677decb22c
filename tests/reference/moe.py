"""The transformers reference for the mixture-of-experts families (Mixtral, Qwen2-MoE, Qwen3-MoE, DeepSeek-V3/V2).

``reference(m)`` writes the transformers config for a symparams model (its
values, switches and head) and builds the matching class on the meta device;
``active(module, config)`` counts, from the module alone, the parameters one
token uses: every parameter, except that of each fused expert tensor
(``experts.gate_up_proj``, ``experts.down_proj``, first dimension the
experts) only the slices of ``num_experts_per_tok`` experts.
"""

from __future__ import annotations

import transformers

from symparams.families import deepseek_v3, mixtral, qwen2_moe, qwen3_moe

from .decoders import values
from .hf import build

EXPERT_TENSORS = ("experts.gate_up_proj", "experts.down_proj")


def active(module, config) -> int:
    """Parameters one token uses: the routed experts' fused tensors cut to ``num_experts_per_tok`` experts."""
    top_k = config.num_experts_per_tok
    total = 0
    for name, p in module.named_parameters():
        if name.endswith(EXPERT_TENSORS):
            assert p.shape[0] > 1 or top_k == 1, name
            total += p[:top_k].numel()  # k of the experts, each slice [2F, H] or [H, F]
        else:
            total += p.numel()
    return total


def _gqa(v, sw) -> dict:
    return dict(vocab_size=v["V"], hidden_size=v["H"], num_hidden_layers=v["L"], num_attention_heads=v["A"],
                num_key_value_heads=v["G"] if sw["gqa"] else v["A"],
                head_dim=v["D"] if sw["free_head_dim"] else v["H"] // v["A"],
                num_labels=v.get("C", 2), tie_word_embeddings=sw["tie"],
                token_classification_bias=sw["token_classification_bias"])


def _dense_first(v, sw) -> list[int]:
    """Layer indices with a plain MLP for the Qwen configs: the first L_f (the order does not change a count)."""
    return list(range(v["L_f"])) if sw["dense_layers"] else []


def mixtral_config(m):
    v, sw = values(m), m.switches
    return transformers.MixtralConfig(**_gqa(v, sw), intermediate_size=v["F_e"], num_local_experts=v["N_e"],
                                      num_experts_per_tok=v["k_e"])


def qwen2_moe_config(m):
    v, sw = values(m), m.switches
    return transformers.Qwen2MoeConfig(
        **_gqa(v, sw), intermediate_size=v.get("F", 8), moe_intermediate_size=v["F_e"],
        shared_expert_intermediate_size=v["F_s"], num_experts=v["N_e"], num_experts_per_tok=v["k_e"],
        qkv_bias=sw["qkv_bias"], mlp_only_layers=_dense_first(v, sw))


def qwen3_moe_config(m):
    v, sw = values(m), m.switches
    return transformers.Qwen3MoeConfig(
        **_gqa(v, sw), intermediate_size=v.get("F", 8), moe_intermediate_size=v["F_e"], num_experts=v["N_e"],
        num_experts_per_tok=v["k_e"], attention_bias=sw["attention_bias"], mlp_only_layers=_dense_first(v, sw))


def deepseek_config(m):
    v, sw = values(m), m.switches
    kw = dict(vocab_size=v["V"], hidden_size=v["H"], num_hidden_layers=v["L"], num_attention_heads=v["A"],
              num_key_value_heads=v["A"], intermediate_size=v.get("F", 8), moe_intermediate_size=v["F_e"],
              n_routed_experts=v["N_e"], num_experts_per_tok=v["k_e"], n_shared_experts=v["N_s"],
              first_k_dense_replace=v.get("L_f", 0), q_lora_rank=v["R_q"] if sw["q_lora"] else None,
              kv_lora_rank=v["R_kv"], qk_nope_head_dim=v["D_n"], qk_rope_head_dim=v["D_r"], v_head_dim=v["D_v"],
              attention_bias=sw["attention_bias"], num_labels=v.get("C", 2), tie_word_embeddings=sw["tie"])
    if m.family.name == "deepseek_v2":
        return transformers.DeepseekV2Config(**kw, mlp_bias=sw["mlp_bias"])
    # one group of experts: DeepseekV3TopkRouter needs the experts to split into n_group groups
    return transformers.DeepseekV3Config(**kw, n_group=1, topk_group=1,
                                         token_classification_bias=sw["token_classification_bias"])


CONFIGS = {"mixtral": (mixtral.CLASSES, mixtral_config), "qwen2_moe": (qwen2_moe.CLASSES, qwen2_moe_config),
           "qwen3_moe": (qwen3_moe.CLASSES, qwen3_moe_config),
           "deepseek_v3": (deepseek_v3.CLASSES, deepseek_config),
           "deepseek_v2": (deepseek_v3.CLASSES_V2, deepseek_config)}


def reference(m, config=None):
    """(module, prefix to strip, config) that transformers builds for ``m``; ``config`` replaces the derived one."""
    classes, make = CONFIGS[m.family.name]
    cls, strip = classes[m.head]
    config = config or make(m)
    return build(cls, config), strip, config
