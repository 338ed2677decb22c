"""The counting rules name the norms the model has: an RMSNorm, or a LayerNorm without shift, not "an RMSNorm (or a
LayerNorm without shift)" in a model with one kind.  Which kind a model's scale-only norms are is what transformers'
modules compute: a LayerNorm subtracts the mean of its input, an RMSNorm does not."""

from __future__ import annotations

import re

import pytest
import torch
import transformers

from tests.reference import ROOT

DOCUMENTS = sorted(p for p in (ROOT / "docs").iterdir() if re.match(r".+\.(en|zh)\.(md|tex)$", p.name))
HEDGE = ("An RMSNorm (or a LayerNorm without shift)", "RMSNorm（或不带平移的 LayerNorm）")
SAYS = {"rms": ("An RMSNorm over $d$ features holds only a scale", "上的 RMSNorm 只有缩放"),
        "layer": ("A LayerNorm without shift over $d$ features holds only a scale", "上的不带平移的 LayerNorm 只有缩放")}
TINY = dict(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
            num_key_value_heads=2)
MODELS = {"command-r": lambda: transformers.CohereModel(transformers.CohereConfig(**TINY)),
          "command-r-plus": lambda: transformers.CohereModel(transformers.CohereConfig(**TINY, use_qk_norm=True)),
          "llama-3-8b": lambda: transformers.LlamaModel(transformers.LlamaConfig(**TINY)),
          "t5-base": lambda: transformers.T5Model(transformers.T5Config(vocab_size=64, d_model=16, d_kv=8, d_ff=32,
                                                                        num_layers=1, num_heads=2)),
          "modernbert-base": lambda: transformers.ModernBertModel(transformers.ModernBertConfig(
              vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
              pad_token_id=0, bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2))}


def _scale_only_norm_kinds(module) -> set[str]:
    """What the scale-only norms of ``module`` compute, run on one input: "layer" if the output's mean is 0."""
    kinds = set()
    for name, norm in module.named_modules():
        weights = dict(norm.named_parameters(recurse=False))
        if name.rsplit(".", 1)[-1].endswith("norm") and set(weights) == {"weight"}:
            x = torch.arange(1.0, 1.0 + weights["weight"].numel()).reshape(weights["weight"].shape)
            with torch.no_grad():
                out = norm(x.unsqueeze(0)).squeeze(0)
            kinds.add("layer" if abs(float(out.mean())) < 1e-4 else "rms")
    return kinds


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_the_rules_name_one_kind_of_scale_only_norm(path):
    text = path.read_text(encoding="utf-8")
    assert not any(hedge in text for hedge in HEDGE)


@pytest.mark.parametrize("preset", MODELS)
def test_the_rules_name_the_norms_transformers_computes(preset):
    torch.manual_seed(0)
    kinds = _scale_only_norm_kinds(MODELS[preset]())
    assert kinds
    for lang, index in (("en", 0), ("zh", 1)):
        text = (ROOT / "docs" / f"{preset}.{lang}.md").read_text(encoding="utf-8")
        assert {kind for kind, said in SAYS.items() if said[index] in text} == kinds
