"""Named variants: a family, values for its symbols, and switches.

The core presets live here; a family module may add its own as a
``PRESETS`` sequence of :class:`~symparams.core.family.Preset`.

>>> find("bert-base").values["H"]
768
"""

from __future__ import annotations

from ..core.family import Preset
from . import registry

_BERT = dict(V=30522, P=512, S=2, r=4)
_TRANSFORMER = dict(V=37000, P=512, L=6, r=4)

_CORE = (
    Preset("bert-base", "bert", {**_BERT, "H": 768, "L": 12, "A": 12},
           en="BERT-base (uncased), Devlin et al. 2018", zh="BERT-base（uncased），Devlin 等 2018",
           reference="BertModel"),
    Preset("bert-large", "bert", {**_BERT, "H": 1024, "L": 24, "A": 16},
           en="BERT-large (uncased)", zh="BERT-large（uncased）", reference="BertModel"),
    Preset("bert-base-chinese", "bert", {**_BERT, "V": 21128, "H": 768, "L": 12, "A": 12},
           en="BERT-base, Chinese vocabulary", zh="中文 BERT-base", reference="BertModel"),
    Preset("transformer-base", "transformer", {**_TRANSFORMER, "H": 512, "A": 8},
           en="Transformer base (Vaswani et al. 2017), shared 37k BPE vocabulary",
           zh="Transformer base（Vaswani 等 2017），共享 37k BPE 词表", reference="MarianModel"),
    Preset("transformer-big", "transformer", {**_TRANSFORMER, "H": 1024, "A": 16},
           en="Transformer big (Vaswani et al. 2017)", zh="Transformer big（Vaswani 等 2017）",
           reference="MarianModel"),
    Preset("transformer-base-article", "transformer", {**_TRANSFORMER, "V": 32000, "H": 512, "A": 8},
           {"positions": "learned", "bias": False, "layernorm": False},
           en="Transformer base in the article's weights-only accounting (V=32000, learned positions, "
              "no biases, no LayerNorm)",
           zh="文章口径的 Transformer base（V=32000，可学习位置编码，只计权重，不计偏置与 LayerNorm）"),
)


_ALL: dict[str, Preset] | None = None


def all_presets() -> dict[str, Preset]:
    """The core presets, then every family module's ``PRESETS`` sequence."""
    global _ALL
    if _ALL is None:
        found = {p.name: p for p in _CORE}
        for name in sorted(registry.MODULES):
            for p in getattr(registry.module(name), "PRESETS", ()):
                found[p.name] = p
        _ALL = found
    return _ALL


def find(name: str) -> Preset | None:
    """The preset called ``name`` (core presets without importing every family), or None."""
    for p in _CORE:
        if p.name == name:
            return p
    return all_presets().get(name)


#: the checkpoints on the Hugging Face hub each preset counts (its base model), by hub id; the part after
#: the slash names it too (``bert-base-uncased``)
HUB_IDS = {
    "google-bert/bert-base-uncased": "bert-base",
    "google-bert/bert-large-uncased": "bert-large",
    "google-bert/bert-base-chinese": "bert-base-chinese",
    "FacebookAI/roberta-base": "roberta-base",
    "FacebookAI/roberta-large": "roberta-large",
    "distilbert/distilroberta-base": "distilroberta-base",
    "distilbert/distilbert-base-uncased": "distilbert-base",
    "google/electra-small-discriminator": "electra-small",
    "google/electra-base-discriminator": "electra-base",
    "google/electra-large-discriminator": "electra-large",
    "albert/albert-base-v2": "albert-base-v2",
    "albert/albert-large-v2": "albert-large-v2",
    "albert/albert-xxlarge-v2": "albert-xxlarge-v2",
    "openai-community/gpt2": "gpt2",
    "openai-community/gpt2-medium": "gpt2-medium",
    "openai-community/gpt2-large": "gpt2-large",
    "openai-community/gpt2-xl": "gpt2-xl",
    "distilbert/distilgpt2": "distilgpt2",
    "meta-llama/Llama-2-7b-hf": "llama-2-7b",
    "meta-llama/Llama-2-13b-hf": "llama-2-13b",
    "meta-llama/Llama-2-70b-hf": "llama-2-70b",
    "meta-llama/Meta-Llama-3-8B": "llama-3-8b",
    "meta-llama/Meta-Llama-3-70B": "llama-3-70b",
    "google-t5/t5-small": "t5-small",
    "google-t5/t5-base": "t5-base",
    "google-t5/t5-large": "t5-large",
    "google/flan-t5-small": "flan-t5-small",
    "google/flan-t5-base": "flan-t5-base",
    "google/mt5-small": "mt5-small",
    "facebook/bart-base": "bart-base",
    "facebook/bart-large": "bart-large",
    "sshleifer/distilbart-cnn-12-6": "distilbart-12-6",
    "Helsinki-NLP/opus-mt-en-de": "opus-mt-en-de",
}


def aliases() -> dict[str, str]:
    """Every other name of a preset, lower-cased: its own name in any case, hub ids with and without the owner."""
    out = {name.lower(): name for name in all_presets()}
    for hub_id, name in HUB_IDS.items():
        out.setdefault(hub_id.lower(), name)
        out.setdefault(hub_id.rsplit("/", 1)[-1].lower(), name)
    return out
