"""Mistral: LLaMA's modules without biases, and grouped-query attention.

``MistralModel`` builds exactly what ``LlamaModel`` builds (``embed_tokens``,
L layers of RMSNorm → attention → RMSNorm → SwiGLU MLP, the final ``norm``);
no projection ever has a bias (transformers fixes ``bias=False``).  Sliding-
window attention only masks scores: it holds no parameters.  It bounds the
cache: with ``sliding_window`` set (4096 by default; Mistral 7B v0.2 and
later set it null) every layer keeps only its last ``sliding_window − 1``
tokens.

>>> from symparams import model
>>> model("mistral-7b", head="causal-lm").count
7241732096
>>> model("mistral").tree.find("decoder.layers.self_attn.k_proj").count
G*H**2/A
"""

from __future__ import annotations

from ..core.family import Preset
from . import llama, sliding

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("MistralModel", None),
    "causal-lm": ("MistralForCausalLM", "model."),
    "sequence-classification": ("MistralForSequenceClassification", "model."),
    "token-classification": ("MistralForTokenClassification", "model."),
    "question-answering": ("MistralForQuestionAnswering", "model."),
}


def build(switches, head):
    layer = llama.decoder_layer(switches, llama.attention(switches, qkv_bias=False, rule=sliding.EVERY),
                                llama.mlp(False))
    return llama.decoder_model("mistral", layer, switches, head)


def from_config(cfg):
    """Values from a ``MistralConfig`` (defaults: Mistral-7B, 8 key/value heads); see :func:`llama.read_config`."""
    return llama.read_config(cfg, "MistralConfig", vocab=32000, hidden=4096, layers=32, heads=32, kv=8,
                             intermediate=14336, windows=sliding.every_layer("mistral", default=4096))


FAMILY = llama.llama_like("mistral", "Mistral", build,
                          (llama.GQA, llama.FREE_HEAD_DIM, llama.TIE, sliding.window_switch(4096),
                           llama.TOKEN_CLASSIFICATION_BIAS),
                          CLASSES, from_config)

PRESETS = (
    Preset("mistral-7b", "mistral", dict(V=32000, H=4096, L=32, A=32, G=8, F=14336),
           en="Mistral 7B v0.1 (grouped-query attention, 8 key/value heads)",
           zh="Mistral 7B v0.1（分组查询注意力，8 个键值头）", reference="MistralModel"),
)
