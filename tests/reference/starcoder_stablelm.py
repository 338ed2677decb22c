"""The transformers reference for StarCoder 2 and StableLM.

``reference(m)`` writes the transformers config for a symparams model (its
values, switches and head) and builds the class of that head on the meta
device.  Both read the llama-like keys; each switch is written as the key
that says it in that family's config.json.
"""

from __future__ import annotations

import transformers

from symparams.families import stablelm, starcoder2

from .decoders import values
from .hf import build

#: family → (transformers config class, heads table: head → (class, base-model prefix))
FAMILIES = {
    "starcoder2": ("Starcoder2Config", starcoder2.CLASSES),
    "stablelm": ("StableLmConfig", stablelm.CLASSES),
}

#: family → {switch: the config key that says it}
KEYS = {
    "starcoder2": {"bias": "use_bias", "tie": "tie_word_embeddings",
                   "token_classification_bias": "token_classification_bias"},
    "stablelm": {"qkv_bias": "use_qkv_bias", "qk_layernorm": "qk_layernorm",
                 "parallel_residual": "use_parallel_residual", "tie": "tie_word_embeddings",
                 "token_classification_bias": "token_classification_bias"},
}


def config(m):
    """The transformers config of ``m``; ``head_dim`` (StarCoder 2 only: StableLM's heads are always H/A wide)
    and ``token_classification_bias`` are not declared by the config classes: they become attributes, which the
    modules read with ``getattr``."""
    v, sw, name = values(m), m.switches, m.family.name
    kw = dict(vocab_size=v["V"], hidden_size=v["H"], num_hidden_layers=v["L"], num_attention_heads=v["A"],
              num_key_value_heads=v["G"] if sw["gqa"] else v["A"], intermediate_size=v["F"],
              num_labels=v.get("C", 2), pad_token_id=None, bos_token_id=None, eos_token_id=None)
    if "free_head_dim" in sw:
        kw["head_dim"] = v["D"] if sw["free_head_dim"] else v["H"] // v["A"]
    kw.update({key: sw[switch] for switch, key in KEYS[name].items()})
    return getattr(transformers, FAMILIES[name][0])(**kw)


def reference(m, cfg=None):
    """(module, prefix to strip) that transformers builds for ``m``; ``cfg`` replaces the derived config."""
    cls, strip = FAMILIES[m.family.name][1][m.head]
    return build(cls, cfg or config(m)), strip
