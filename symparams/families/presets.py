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
           en="BERT-base (uncased), Devlin et al. 2018", zh="BERT-base（uncased），Devlin 等人，2018",
           reference="BertModel"),
    Preset("bert-large", "bert", {**_BERT, "H": 1024, "L": 24, "A": 16},
           en="BERT-large (uncased)", zh="BERT-large（uncased）", reference="BertModel"),
    Preset("bert-base-chinese", "bert", {**_BERT, "V": 21128, "H": 768, "L": 12, "A": 12},
           en="BERT-base, Chinese vocabulary", zh="中文 BERT-base", reference="BertModel"),
    Preset("transformer-base", "transformer", {**_TRANSFORMER, "H": 512, "A": 8},
           en="Transformer base (Vaswani et al. 2017), shared 37k BPE vocabulary",
           zh="Transformer base（Vaswani 等人，2017），共享 37k BPE 词表", reference="MarianModel"),
    Preset("transformer-big", "transformer", {**_TRANSFORMER, "H": 1024, "A": 16},
           en="Transformer big (Vaswani et al. 2017)", zh="Transformer big（Vaswani 等人，2017）",
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
    """The preset called ``name``, or None.

    The core presets, then the modules whose name begins the preset's
    (``llama-3-8b``: ``llama``), so that a command imports one family module
    where it can; only then every module.
    """
    for p in _CORE:
        if p.name == name:
            return p
    if _ALL is None and isinstance(name, str):
        for module in _likely_modules(name):
            for p in getattr(module, "PRESETS", ()):
                if p.name == name:
                    return p
    return all_presets().get(name)


def _likely_modules(name: str):
    squeezed = _squeeze(name)
    return [registry.module(m) for m in registry.MODULES if squeezed.startswith(_squeeze(m))]


def _squeeze(text: str) -> str:
    return text.lower().replace("-", "").replace("_", "").replace(".", "")


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
    "FacebookAI/xlm-roberta-base": "xlm-roberta-base",
    "FacebookAI/xlm-roberta-large": "xlm-roberta-large",
    "facebook/mbart-large-cc25": "mbart-large-cc25",
    "facebook/mbart-large-50": "mbart-large-50",
    "google/pegasus-large": "pegasus-large",
    "facebook/m2m100_418M": "m2m100-418m",
    "facebook/nllb-200-distilled-600M": "nllb-200-distilled-600m",
    "microsoft/deberta-v3-base": "deberta-v3-base",
    "microsoft/deberta-v3-large": "deberta-v3-large",
    "microsoft/mpnet-base": "mpnet-base",
    "answerdotai/ModernBERT-base": "modernbert-base",
    "mistralai/Mistral-7B-v0.1": "mistral-7b",
    "Qwen/Qwen2.5-0.5B": "qwen2.5-0.5b",
    "Qwen/Qwen2.5-7B": "qwen2.5-7b",
    "Qwen/Qwen3-0.6B": "qwen3-0.6b",
    "Qwen/Qwen3-8B": "qwen3-8b",
    "microsoft/Phi-3-mini-4k-instruct": "phi-3-mini",
    "google/gemma-2b": "gemma-2b",
    "google/gemma-7b": "gemma-7b",
    "google/gemma-2-2b": "gemma-2-2b",
    "google/gemma-2-9b": "gemma-2-9b",
    "google/gemma-2-27b": "gemma-2-27b",
    "google/gemma-3-1b-pt": "gemma-3-1b",
    "allenai/OLMo-2-1124-7B": "olmo-2-7b",
    "allenai/OLMo-2-1124-13B": "olmo-2-13b",
    "CohereForAI/c4ai-command-r-v01": "command-r",
    "CohereForAI/c4ai-command-r-plus": "command-r-plus",
    "bigcode/starcoder2-3b": "starcoder2-3b",
    "bigcode/starcoder2-7b": "starcoder2-7b",
    "stabilityai/stablelm-2-1_6b": "stablelm-2-1.6b",
    "stabilityai/stablelm-3b-4e1t": "stablelm-3b-4e1t",
    "EleutherAI/pythia-160m": "pythia-160m",
    "EleutherAI/pythia-1b": "pythia-1b",
    "EleutherAI/gpt-neox-20b": "gpt-neox-20b",
    "EleutherAI/gpt-j-6b": "gpt-j-6b",
    "facebook/opt-125m": "opt-125m",
    "facebook/opt-350m": "opt-350m",
    "facebook/opt-1.3b": "opt-1.3b",
    "bigscience/bloom-560m": "bloom-560m",
    "bigscience/bloom-7b1": "bloom-7b1",
    "tiiuae/falcon-7b": "falcon-7b",
    "tiiuae/falcon-40b": "falcon-40b",
    "microsoft/phi-1_5": "phi-1_5",
    "microsoft/phi-2": "phi-2",
    "mistralai/Mixtral-8x7B-v0.1": "mixtral-8x7b",
    "Qwen/Qwen1.5-MoE-A2.7B": "qwen1.5-moe-a2.7b",
    "Qwen/Qwen3-30B-A3B": "qwen3-30b-a3b",
    "deepseek-ai/DeepSeek-V3": "deepseek-v3",
    "deepseek-ai/DeepSeek-V2-Lite": "deepseek-v2-lite",
}


def aliases() -> dict[str, str]:
    """Every other name of a preset, lower-cased: its own name in any case, hub ids with and without the owner."""
    out = {name.lower(): name for name in all_presets()}
    for hub_id, name in HUB_IDS.items():
        out.setdefault(hub_id.lower(), name)
        out.setdefault(hub_id.rsplit("/", 1)[-1].lower(), name)
    return out
