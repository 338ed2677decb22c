"""Values a model type's default config leaves unset but its modeling code needs, so that it builds at all.

Some config classes default a size to None (Ministral's ``head_dim``, ESM's
``vocab_size``) and their modeling code fails on it.  The engine starts such a
type from these values instead: each is a published checkpoint's value, so the
base configuration is a real one, or a setting that changes no shape (the RoPE
settings of each layer type) where the default leaves it out.  The seeded fields are then probed, fitted
and verified like any other: a seed chooses where the search starts, never the
formula.
"""

from __future__ import annotations

#: Qwen4-Exp's QSA indexer (see below)
QSA = {"indexer_n_heads": 16, "indexer_kv_heads": 1, "indexer_head_dim": 256, "indexer_budget": 2048,
       "indexer_compress_ratio": 4}

#: model_type → config values the default leaves unset, with the checkpoint whose config.json gives them
SEEDS: dict[str, dict] = {
    # the layer types' RoPE settings (any: no shape reads them); the default config names the types but not these
    "cohere_compass_text": {"rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 10000.0}}},
    "dbrx": {"attn_config": {"clip_qkv": 8, "kv_n_heads": 8, "rope_theta": 500000}},  # databricks/dbrx-base
    "dots1": {"n_routed_experts": 128, "n_shared_experts": 2, "num_experts_per_tok": 6},  # rednote-hilab/dots.llm1.base
    "emu3": {"vocabulary_map": {}},  # token names for the image tokenizer's codes (any: no shape reads them)
    "esm": {"vocab_size": 33, "pad_token_id": 1, "mask_token_id": 32,  # facebook/esm2_t6_8M_UR50D
            "emb_layer_norm_before": False},
    # the QSA indexer every indexed-attention layer builds, though the config leaves its sizes unset: values the
    # config's own validation accepts (one key head, a budget its compress ratio divides, a head as wide as the
    # attention's rotary part); each is then probed as a field of the formula
    "qwen4_exp": {"text_config": QSA},
    "qwen4_exp_text": QSA,
    # which layers convolve and which attend: the kinds transformers' own tests of the class use, alternating over
    # the default's 32 layers (the kinds' counts become fields of their own, so their order is no part of the formula)
    "lfm2": {"layer_types": ["full_attention", "conv"] * 16},
    "lfm2_moe": {"layer_types": ["full_attention", "conv"] * 16},
    # the assistant's config class accepts no per-layer inputs (its validator wants both sizes 0), which its text
    # config, Gemma 4's, has by default: the default config does not validate without these
    "gemma4_assistant": {"text_config": {"hidden_size_per_layer_input": 0, "vocab_size_per_layer_input": 0}},
    "hunyuan_v1_dense": {"head_dim": 128},  # tencent/Hunyuan-7B-Instruct
    "hunyuan_v1_moe": {"head_dim": 128},  # tencent/Hunyuan-A13B-Instruct
    "ministral": {"head_dim": 128},  # mistralai/Ministral-8B-Instruct-2410
    "nemotron": {"num_key_value_heads": 8},  # nvidia/Minitron-8B-Base
}


#: (model_type, class) → config values a class requires that its type's default does not have
CLASS_SEEDS: dict[tuple[str, str], dict] = {
    ("reformer", "causal-lm"): {"is_decoder": True},  # ReformerModelWithLMHead asserts it
}


def seeded(model_type: str, values: dict, cls: str | None = None) -> dict:
    """``values`` over the type's (and the class's) seeds (a value given wins)."""
    return {**SEEDS.get(model_type, {}), **CLASS_SEEDS.get((model_type, cls), {}), **values}
