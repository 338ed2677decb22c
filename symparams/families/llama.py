"""LLaMA: RMSNorm, SwiGLU, rotary positions, grouped-query attention.

Token embedding ``embed_tokens`` (V·H); L decoder layers ``layers.*``
(RMSNorm → attention → RMSNorm → SwiGLU MLP); the final RMSNorm ``norm``.
RMSNorm has a scale only; rotary positions have no parameters; no linear
layer has a bias unless ``attention_bias`` / ``mlp_bias`` say so.

Attention has A query heads and G key/value heads (``gqa=true``), each of
width D = H/A, so Q is ``A·(H·(H/A))`` = H² and K, V are each ``G·(H·(H/A))``
= G·H²/A: the count depends on A unless G/A is held fixed.  With
``gqa=false`` K and V have A heads (plain multi-head attention, as in
Llama-2-7B).  ``free_head_dim=true`` sets the head width to its own symbol D
(a config ``head_dim`` other than hidden/heads).  The SwiGLU MLP has three
matrices (gate, up: H → F; down: F → H) with its own intermediate size F.

>>> from symparams import model
>>> model("llama-2-7b", head="causal-lm").count
6738415616
>>> model("llama").tree.find("decoder.layers.self_attn.k_proj").count
G*H**2/A
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import embedding, group, linear, per_head_linear, product_as_written, rms_norm
from ..core.compute import Attention
from ..core.errors import SymparamsError
from ..core.family import HEAD_DIM, Constraint, Family, Preset, Switch
from ..core.symbols import A, C, D, F, G, H, L, V
from . import sliding

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("LlamaModel", None),
    "causal-lm": ("LlamaForCausalLM", "model."),
    "sequence-classification": ("LlamaForSequenceClassification", "model."),
    "token-classification": ("LlamaForTokenClassification", "model."),
    "question-answering": ("LlamaForQuestionAnswering", "transformer."),
}

#: grouped-query attention: each key/value head serves A/G query heads
KV_GROUPS = Constraint(
    A / G, "A={A} is not divisible by G={G} (each key/value head serves A/G query heads)",
    (r"G \mid A", "G divides A: each key/value head serves A/G query heads",
     "G 整除 A：每个键值头服务 A/G 个查询头"))


def head_width(switches):
    """One head's width: its own D (``free_head_dim``), else H/A."""
    return D if switches["free_head_dim"] else H / A


def attention(switches, qkv_bias=None, o_bias=None, head_norms=False, rule=None, runs=L):
    """``self_attn``: Q, K and V written per head, the output ``o_proj``.

    Biases follow the ``attention_bias`` switch unless the family fixes them
    (Qwen 2: ``qkv_bias=True, o_bias=False``; Mistral: none); ``head_norms``
    adds ``q_norm`` and ``k_norm``, an RMSNorm over one head's width shared
    by every head (Qwen 3, Gemma 3).  ``rule`` (a :class:`sliding.Rule`):
    which of the module's ``runs`` layers slide, with the ``sliding_window``
    switch; None: the family's layers never slide.
    """
    qkv_bias = switches["attention_bias"] if qkv_bias is None else qkv_bias
    o_bias = qkv_bias if o_bias is None else o_bias
    width = head_width(switches)
    kv = G if switches["gqa"] else A
    norms = (rms_norm("q_norm", width, title="query_norm"), rms_norm("k_norm", width, title="key_norm")) \
        if head_norms else ()
    return group("self_attn", [
        per_head_linear("q_proj", H, A, width, bias=qkv_bias, title="query"),
        per_head_linear("k_proj", H, kv, width, bias=qkv_bias, title="key"),
        per_head_linear("v_proj", H, kv, width, bias=qkv_bias, title="value"),
        linear("o_proj", product_as_written(A, D) if switches["free_head_dim"] else H, H, bias=o_bias,
               title="attention_output"),
        *norms,
    ], title="grouped_query_attention" if switches["gqa"] else "masked_attention",
        # eager attention repeats K and V to the A query heads, then multiplies Q·Kᵀ and softmax·V over the full
        # s × s square (the causal mask, a sliding window, Gemma 2's logit soft-capping and the q/k norms are
        # element-wise); the cache keeps K and V of the kv heads only, on a sliding layer the last window − 1 tokens
        computes=(Attention(A, width, width, cache=2 * kv * width, causal=True,
                            **_windows(switches, rule, runs)),))


def _windows(switches, rule, runs) -> dict:
    if rule is None:
        return {}
    window, windowed = sliding.declared(switches, rule, runs)
    return {"window": window, "windowed": windowed}


def mlp(bias, title="swiglu"):
    """The gated MLP: gate and up (H → F), down (F → H); ``title`` names its activation (SwiGLU, GeGLU)."""
    return group("mlp", [
        linear("gate_proj", H, F, bias=bias, title="ffn_gate"),
        linear("up_proj", H, F, bias=bias, title="ffn_up"),
        linear("down_proj", F, H, bias=bias, title="ffn_down"),
    ], title=title)


def layer_stack(parts):
    """The L decoder layers ``layers.*``, each holding ``parts``."""
    return group("layers", parts, repeat=L, ref="layers.*", title="decoder_layer")


def decoder_layer(switches, attn=None, ffn=None):
    """RMSNorm → attention → RMSNorm → MLP; ``attn`` and ``ffn`` default to LLaMA's from the switches."""
    return layer_stack([
        rms_norm("input_layernorm", H),
        attn if attn is not None else attention(switches),
        rms_norm("post_attention_layernorm", H),
        ffn if ffn is not None else mlp(switches["mlp_bias"]),
    ])


def head_block(head, switches):
    if head == "causal-lm":
        return linear("lm_head", H, V, bias=False, title="output_projection",
                      tied_to="embeddings.embed_tokens" if switches["tie"] else None)
    if head == "sequence-classification":
        return linear("score", H, C, bias=False, title="classifier")
    if head == "token-classification":
        return linear("score", H, C, bias=switches["token_classification_bias"], title="classifier")
    if head == "question-answering":
        return linear("qa_outputs", H, 2, title="qa_outputs")
    return None


def decoder_model(name, layer, switches, head, final_norm=None):
    """``embed_tokens``, the layer stack ``layer``, the final ``norm`` and the task head: a llama-like model.
    ``final_norm`` replaces the final RMSNorm (StarCoder 2, StableLM: a LayerNorm with a shift)."""
    task = head_block(head, switches)
    final_norm = final_norm if final_norm is not None else rms_norm("norm", H, title="final_norm")
    return group(name, [
        group("embeddings", [embedding("embed_tokens", V, H, title="token_embedding")], ref="",
              title="rotary_input"),  # positions are rotations inside attention: no table here
        group("decoder", [layer, final_norm], ref="", title="decoder"),
        group("head", [task], ref="", title="task_head") if task is not None else None,
    ], ref="")


def build(switches, head):
    return decoder_model("llama", decoder_layer(switches), switches, head)


def read_config(cfg, config_class, *, vocab, hidden, layers, heads, intermediate, kv=None, head_dim=None,
                tie=False, checks_heads=False, extra=None, token_classification=True, windows=None):
    """The values and switches every llama-like config holds, with ``config_class``'s defaults.

    ``kv`` and ``head_dim`` are the class defaults of ``num_key_value_heads``
    and ``head_dim`` (None: as many as the heads, and hidden/heads).  Key/value
    heads equal to the heads are plain multi-head attention (``gqa=false``,
    no G); a head width equal to hidden/heads is H/A (no D).  Refused, with
    the key named: heads that do not divide the hidden size (H/A must be
    whole; ``checks_heads``: the config class refuses it too), key/value
    heads that do not divide the heads, an odd head width (rotary
    embeddings), and ``per_layer_config`` (layers of different sizes).
    ``extra``: the family's own switches, read by the caller, placed as
    the family lists them (before ``token_classification_bias``, which a
    family without a token-classification head leaves out: ``token_classification=False``).
    ``windows(cfg, layers)``: the family's sliding-window switches, read as
    its config class reads them (see :func:`sliding.read`), placed after
    ``extra``; without it, a config that would make transformers' cache
    slide is refused (:func:`sliding.refuse_stray`).
    """
    hidden = cfg.int("hidden_size", default=hidden)
    heads = cfg.int("num_attention_heads", default=heads)
    kv = cfg.int("num_key_value_heads", default=kv or heads)
    if hidden % heads:
        also = f", which {config_class} requires" if checks_heads else " (symparams needs a whole H/A)"
        raise SymparamsError(f"{cfg.source}: key hidden_size ({hidden}) is not divisible by "
                             f"num_attention_heads ({heads}){also}")
    if heads % kv:
        raise SymparamsError(f"{cfg.source}: key num_key_value_heads ({kv}) does not divide "
                             f"num_attention_heads ({heads})")
    head_dim = cfg.int("head_dim", default=head_dim or hidden // heads)
    if head_dim % 2:
        key = "head_dim" if cfg.has("head_dim") else "hidden_size"
        raise SymparamsError(f"{cfg.source}: key {key} gives an odd head width ({head_dim}); rotary "
                             f"embeddings need an even one")
    if cfg.has("per_layer_config"):
        raise SymparamsError(f"{cfg.source}: key per_layer_config (layers of different sizes) is not modelled "
                             f"by symparams")
    layers = cfg.int("num_hidden_layers", default=layers)
    values = dict(V=cfg.int("vocab_size", default=vocab), H=hidden, L=layers,
                  A=heads, F=cfg.int("intermediate_size", default=intermediate), C=cfg.labels())
    if kv != heads:
        values["G"] = kv
    if head_dim * heads != hidden:
        values["D"] = head_dim
    if windows is None:
        sliding.refuse_stray(cfg, config_class, cfg.str("model_type", default=config_class), layers)
    switches = dict(gqa=kv != heads, free_head_dim=head_dim * heads != hidden,
                    tie=cfg.bool("tie_word_embeddings", default=tie), **(extra or {}),
                    **(windows(cfg, layers) if windows is not None else {}))
    if token_classification:
        switches["token_classification_bias"] = cfg.bool("token_classification_bias", default=True)
    return values, switches


def from_config(cfg):
    """Values from a ``LlamaConfig`` (defaults: Llama-7B, as transformers 5 has them); see :func:`read_config`."""
    return read_config(cfg, "LlamaConfig", vocab=32000, hidden=4096, layers=32, heads=32, intermediate=11008,
                       checks_heads=True, extra=dict(attention_bias=cfg.bool("attention_bias", default=False),
                                                     mlp_bias=cfg.bool("mlp_bias", default=False)))


GQA = Switch("gqa", True, en="grouped-query attention, K and V with G heads (false: A heads)",
             zh="分组查询注意力，K、V 有 G 个头（false 时为 A 个）")
FREE_HEAD_DIM = Switch("free_head_dim", False, en="head width D set on its own (false: D = H/A)",
                       zh="每个头的维度 D 单独设定（false 时 D = H/A）")
TIE = Switch("tie", False, en="causal-lm head tied to the token embedding", zh="语言模型头与词嵌入共享权重")
ATTENTION_BIAS = Switch("attention_bias", False, en="biases in q/k/v/o projections", zh="注意力投影带偏置")
TOKEN_CLASSIFICATION_BIAS = Switch("token_classification_bias", True,
                                   en="bias of the token-classification score layer", zh="词元分类层带偏置")


def llama_like(name, title, build, switches, classes, from_config, config_types=None):
    """A family built like LLaMA: its heads are the keys of ``classes``; A | H and G | A as constraints."""
    return Family(
        name=name,
        title={"en": title, "zh": title},
        build=build,
        switches=switches,
        heads=tuple(h for h in classes if h is not None),
        constraints=(HEAD_DIM, KV_GROUPS),
        defaults={C: sp.Integer(2)},
        components=("embeddings", "decoder"),
        config_types=config_types or (name,),
        from_config=from_config,
    )


FAMILY = llama_like(
    "llama", "LLaMA", build,
    (GQA, FREE_HEAD_DIM, TIE, ATTENTION_BIAS,
     Switch("mlp_bias", False, en="biases in gate/up/down projections", zh="前馈网络投影带偏置"),
     TOKEN_CLASSIFICATION_BIAS),
    CLASSES, from_config)

_MHA = {"gqa": False}

PRESETS = (
    Preset("llama-2-7b", "llama", dict(V=32000, H=4096, L=32, A=32, F=11008), _MHA,
           en="Llama 2 7B (multi-head attention)", zh="Llama 2 7B（多头注意力）", reference="LlamaModel"),
    Preset("llama-2-13b", "llama", dict(V=32000, H=5120, L=40, A=40, F=13824), _MHA,
           en="Llama 2 13B (multi-head attention)", zh="Llama 2 13B（多头注意力）", reference="LlamaModel"),
    Preset("llama-2-70b", "llama", dict(V=32000, H=8192, L=80, A=64, G=8, F=28672),
           en="Llama 2 70B (grouped-query attention, 8 key/value heads)",
           zh="Llama 2 70B（分组查询注意力，8 个键值头）", reference="LlamaModel"),
    Preset("llama-3-8b", "llama", dict(V=128256, H=4096, L=32, A=32, G=8, F=14336),
           en="Llama 3 8B (grouped-query attention, 8 key/value heads)",
           zh="Llama 3 8B（分组查询注意力，8 个键值头）", reference="LlamaModel"),
    Preset("llama-3-70b", "llama", dict(V=128256, H=8192, L=80, A=64, G=8, F=28672),
           en="Llama 3 70B (grouped-query attention, 8 key/value heads)",
           zh="Llama 3 70B（分组查询注意力，8 个键值头）", reference="LlamaModel"),
)
