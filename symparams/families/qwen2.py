"""Qwen 2 (and Qwen 2.5): LLaMA's modules with biases on the query, key and value projections.

``Qwen2Model``: ``embed_tokens``, L layers of RMSNorm → attention → RMSNorm →
SwiGLU MLP, the final ``norm``.  transformers fixes the biases: ``q_proj``,
``k_proj`` and ``v_proj`` have one (written per head, ``A·(H·(H/A) + H/A)``),
``o_proj`` and the MLP none.  The small checkpoints tie the LM head to the
token embedding; sliding-window attention holds no parameters.  With
``use_sliding_window`` (off in every Qwen 2.5 checkpoint) the layers from
``max_window_layers`` on keep only their last ``sliding_window − 1`` tokens.

>>> from symparams import model
>>> model("qwen2.5-0.5b").count
494032768
>>> model("qwen2").tree.find("decoder.layers.self_attn.k_proj").as_written
G*(H*(H/A) + H/A)
"""

from __future__ import annotations

from ..core.family import Preset
from . import llama, sliding

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("Qwen2Model", None),
    "causal-lm": ("Qwen2ForCausalLM", "model."),
    "sequence-classification": ("Qwen2ForSequenceClassification", "model."),
    "token-classification": ("Qwen2ForTokenClassification", "model."),
    "question-answering": ("Qwen2ForQuestionAnswering", "transformer."),
}


def build(switches, head):
    layer = llama.decoder_layer(switches, llama.attention(switches, qkv_bias=True, o_bias=False,
                                                          rule=sliding.FROM_LAYER), llama.mlp(False))
    return llama.decoder_model("qwen2", layer, switches, head)


def from_config(cfg):
    """Values from a ``Qwen2Config`` (its defaults: 32 heads and 32 key/value heads); see
    :func:`llama.read_config`.  ``head_dim`` is read too: ``Qwen2Attention`` takes it when the config has it."""
    return llama.read_config(cfg, "Qwen2Config", vocab=151936, hidden=4096, layers=32, heads=32, kv=32,
                             intermediate=22016, windows=sliding.qwen("qwen2", sliding.FROM_LAYER))


FAMILY = llama.llama_like("qwen2", "Qwen2", build,
                          (llama.GQA, llama.FREE_HEAD_DIM, llama.TIE, sliding.window_switch(None),
                           sliding.rule_switch(sliding.FROM_LAYER, 28), llama.TOKEN_CLASSIFICATION_BIAS),
                          CLASSES, from_config)

PRESETS = (
    Preset("qwen2.5-0.5b", "qwen2", dict(V=151936, H=896, L=24, A=14, G=2, F=4864),
           {"tie": True, "max_window_layers": 24},
           en="Qwen2.5 0.5B (2 key/value heads, LM head tied)", zh="Qwen2.5 0.5B（2 个键值头，语言模型头共享词嵌入）",
           reference="Qwen2Model"),
    Preset("qwen2.5-7b", "qwen2", dict(V=152064, H=3584, L=28, A=28, G=4, F=18944),
           en="Qwen2.5 7B (4 key/value heads)", zh="Qwen2.5 7B（4 个键值头）", reference="Qwen2Model"),
)
