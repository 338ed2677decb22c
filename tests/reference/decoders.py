"""The transformers reference for GPT-2, LLaMA and T5 models, built on the meta device.

``reference(m)`` writes the transformers config for a symparams model (its
values, switches and head) and builds the matching class; ``untie(module)``
is what ``from_pretrained`` does with a T5 v1.1 / Flan / mT5 checkpoint that
holds its own ``lm_head`` (transformers 5 ties T5's head when it builds from
a config, and keeps the checkpoint's head apart when it loads one;
``tests/families/test_decoders.py`` checks that on a tiny real checkpoint).
"""

from __future__ import annotations

import torch
import transformers

from symparams.families import gpt2, llama, t5

from .hf import build


def values(m) -> dict:
    return {s.name: (int(v) if v.is_Integer else v) for s, v in m.values.items()}


def gpt2_config(m):
    v, sw = values(m), m.switches
    return transformers.GPT2Config(
        vocab_size=v["V"], n_positions=v["P"], n_embd=v["H"], n_layer=v["L"], n_head=v["A"],
        n_inner=int(v["r"] * v["H"]), num_labels=v.get("C", 2), tie_word_embeddings=sw["tie"],
        add_cross_attention=sw["cross_attention"])


def llama_config(m, **override):
    v, sw = values(m), m.switches
    kw = dict(vocab_size=v["V"], hidden_size=v["H"], num_hidden_layers=v["L"], num_attention_heads=v["A"],
              num_key_value_heads=v["G"] if sw["gqa"] else v["A"],
              head_dim=v["D"] if sw["free_head_dim"] else v["H"] // v["A"],
              intermediate_size=v["F"], num_labels=v.get("C", 2), tie_word_embeddings=sw["tie"],
              attention_bias=sw["attention_bias"], mlp_bias=sw["mlp_bias"],
              token_classification_bias=sw["token_classification_bias"])
    kw.update(override)
    return transformers.LlamaConfig(**kw)


def t5_config(m, **override):
    v, sw = values(m), m.switches
    kw = dict(vocab_size=v["V"], d_model=v["H"], d_kv=v["D"], d_ff=v["F"], num_layers=v["L"],
              num_decoder_layers=v["L_d"] if sw["split_layers"] else v["L"], num_heads=v["A"],
              relative_attention_num_buckets=v["B"], feed_forward_proj="gated-gelu" if sw["gated"] else "relu",
              num_labels=v.get("C", 2), tie_word_embeddings=sw["tie"])
    kw.update(override)
    return transformers.T5Config(**kw)


def untie(module):
    """Give ``lm_head`` its own weight, as ``from_pretrained`` does for a checkpoint that holds one."""
    w = module.lm_head.weight
    module.lm_head.weight = torch.nn.Parameter(torch.empty(w.shape, device=w.device))
    return module


def reference(m, config=None):
    """(module, prefix to strip) that transformers builds for ``m``; ``config`` replaces the derived one."""
    fam = m.family.name
    if fam == "gpt2":
        return build(gpt2.CLASSES[m.head], config or gpt2_config(m)), ("transformer." if m.head else None)
    if fam == "llama":
        cls, strip = llama.CLASSES[m.head]
        return build(cls, config or llama_config(m)), strip
    if fam == "t5":
        cls, strip = t5.CLASSES[m.head]
        module = build(cls, config or t5_config(m))
        if m.head == "seq2seq-lm" and not m.switches["tie"]:
            untie(module)
        return module, strip
    raise ValueError(fam)
