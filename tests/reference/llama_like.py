"""The transformers reference for the llama-like families (Mistral, Qwen 2/3, Phi-3, Gemma 1/2/3, OLMo 2, Cohere,
StarCoder 2, StableLM).

``reference(m)`` writes the transformers config for a symparams model (its
values, switches and head) and builds the class of that head on the meta
device.  The families read the same config keys, so one writer serves all:
only the config class and the table of heads differ.
"""

from __future__ import annotations

import transformers

from symparams.families import cohere, gemma, mistral, olmo2, phi3, qwen2, qwen3, stablelm, starcoder2

from .decoders import values
from .hf import build

#: family → (transformers config class, heads table: head → (class, base-model prefix))
FAMILIES = {
    "mistral": ("MistralConfig", mistral.CLASSES),
    "qwen2": ("Qwen2Config", qwen2.CLASSES),
    "qwen3": ("Qwen3Config", qwen3.CLASSES),
    "phi3": ("Phi3Config", phi3.CLASSES),
    "gemma": ("GemmaConfig", gemma.CLASSES),
    "gemma2": ("Gemma2Config", gemma.CLASSES_2),
    "gemma3_text": ("Gemma3TextConfig", gemma.CLASSES_3),
    "olmo2": ("Olmo2Config", olmo2.CLASSES),
    "cohere": ("CohereConfig", cohere.CLASSES),
    "starcoder2": ("Starcoder2Config", starcoder2.CLASSES),
    "stablelm": ("StableLmConfig", stablelm.CLASSES),
}

#: switches → the config keys that say them, where the family has the switch
OPTIONAL = {"attention_bias": "attention_bias", "token_classification_bias": "token_classification_bias",
            "qk_norm": "use_qk_norm", "bias": "use_bias", "qkv_bias": "use_qkv_bias", "qk_layernorm": "qk_layernorm",
            "parallel_residual": "use_parallel_residual"}


def config(m, **override):
    """The transformers config of ``m``; keys its config class does not declare (``head_dim`` for Qwen 2,
    Phi-3 and StarCoder 2, ``token_classification_bias``) become attributes, which the modules read with
    ``getattr``.  StableLM has no ``head_dim``: its heads are always H/A wide."""
    v, sw = values(m), m.switches
    kw = dict(vocab_size=v["V"], hidden_size=v["H"], num_hidden_layers=v["L"], num_attention_heads=v["A"],
              num_key_value_heads=v["G"] if sw["gqa"] else v["A"], intermediate_size=v["F"], num_labels=v.get("C", 2), tie_word_embeddings=sw["tie"],
              pad_token_id=None, bos_token_id=None, eos_token_id=None)  # the class defaults may not fit V
    if "free_head_dim" in sw:
        kw["head_dim"] = v["D"] if sw["free_head_dim"] else v["H"] // v["A"]
    kw.update({key: sw[name] for name, key in OPTIONAL.items() if name in sw})
    kw.update(override)
    return getattr(transformers, FAMILIES[m.family.name][0])(**kw)


def reference(m, cfg=None):
    """(module, prefix to strip) that transformers builds for ``m``; ``cfg`` replaces the derived config."""
    cls, strip = FAMILIES[m.family.name][1][m.head]
    return build(cls, cfg or config(m)), strip
