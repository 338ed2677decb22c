"""The transformers reference for GPT-NeoX, GPT-J, OPT, BLOOM, Falcon and Phi models, on the meta device.

``config(m)`` writes the transformers config of a symparams model (its
values, switches and ``num_labels``); ``reference(m)`` builds the class of
its head and says which base-model prefix to strip.
"""

from __future__ import annotations

import transformers

from symparams.families import bloom, falcon, gpt_neox, gptj, opt, phi

from .decoders import values
from .hf import build

MODULES = {"gpt_neox": gpt_neox, "gptj": gptj, "opt": opt, "bloom": bloom, "falcon": falcon, "phi": phi}


def inner(v):
    """The MLP's intermediate size r·H."""
    return int(v["r"] * v["H"])


def gpt_neox_config(v, sw):
    return transformers.GPTNeoXConfig(
        vocab_size=v["V"], hidden_size=v["H"], num_hidden_layers=v["L"], num_attention_heads=v["A"],
        intermediate_size=inner(v), tie_word_embeddings=sw["tie"], attention_bias=sw["attention_bias"])


def gptj_config(v, sw):
    return transformers.GPTJConfig(vocab_size=v["V"], n_embd=v["H"], n_layer=v["L"], n_head=v["A"], n_inner=inner(v),
                                   rotary_dim=min(64, v["H"] // v["A"]), tie_word_embeddings=sw["tie"])


def opt_config(v, sw):
    return transformers.OPTConfig(
        vocab_size=v["V"], max_position_embeddings=v["P"], hidden_size=v["H"], num_hidden_layers=v["L"],
        num_attention_heads=v["A"], ffn_dim=inner(v), word_embed_proj_dim=v["E"] if sw["project"] else v["H"],
        do_layer_norm_before=sw["final_norm"], enable_bias=sw["bias"], tie_word_embeddings=sw["tie"])


def bloom_config(v, sw):
    return transformers.BloomConfig(vocab_size=v["V"], hidden_size=v["H"], n_layer=v["L"], n_head=v["A"],
                                    tie_word_embeddings=sw["tie"])


def falcon_config(v, sw):
    return transformers.FalconConfig(
        vocab_size=v["V"], hidden_size=v["H"], num_hidden_layers=v["L"], num_attention_heads=v["A"],
        num_kv_heads=v.get("G"), new_decoder_architecture=sw["new_decoder_architecture"],
        multi_query=sw["multi_query"], parallel_attn=sw["parallel_attn"], bias=sw["bias"],
        num_ln_in_parallel_attn=int(sw["num_ln_in_parallel_attn"]), ffn_hidden_size=inner(v),
        tie_word_embeddings=sw["tie"])


def phi_config(v, sw):
    return transformers.PhiConfig(
        vocab_size=v["V"], hidden_size=v["H"], num_hidden_layers=v["L"], num_attention_heads=v["A"],
        num_key_value_heads=v["G"] if sw["gqa"] else v["A"], intermediate_size=inner(v),
        qk_layernorm=sw["qk_layernorm"], tie_word_embeddings=sw["tie"])


CONFIGS = {"gpt_neox": gpt_neox_config, "gptj": gptj_config, "opt": opt_config, "bloom": bloom_config,
           "falcon": falcon_config, "phi": phi_config}


def config(m):
    """The transformers config of ``m`` (every value given)."""
    v = values(m)
    cfg = CONFIGS[m.family.name](v, m.switches)
    cfg.num_labels = v.get("C", 2)
    return cfg


def reference(m, cfg=None):
    """(module, prefix to strip) that transformers builds for ``m``; ``cfg`` replaces the derived config."""
    cls, strip = MODULES[m.family.name].CLASSES[m.head]
    return build(cls, cfg or config(m)), strip
