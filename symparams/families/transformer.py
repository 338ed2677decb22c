"""The original Transformer (Attention Is All You Need), encoder–decoder.

Follows ``transformer-parameter-count.zh.txt``: input (shared token
embedding, positions), encoder layers, decoder layers, output projection
(tied to the embedding by default, as in the paper).  Module names follow
``transformers``' Marian models, the HF implementation of this architecture:
with the defaults (sinusoidal positions registered per stack, biases,
LayerNorm, tying) the count equals ``MarianModel``'s.

Switches ``bias=false`` and ``layernorm=false`` with ``positions=learned``
reproduce the article's weights-only accounting.

What it computes (:mod:`symparams.analysis.flops`): A heads of width H/A
in every attention; the decoder's self-attention is causal and caches
2·H elements per token and layer, its cross-attention reads the encoder's
positions and caches 2·H per encoder token and layer; the output
projection, tied or not, multiplies every decoder position — as
``MarianMTModel`` (the model with this head) counts.  Biases, norms and
position tables are no matmuls: the switches change no FLOPs.

>>> from symparams.families.transformer import FAMILY
>>> sw = FAMILY.resolve({}, None)
>>> sw["positions"], sw["tie"], sw["bias"], sw["layernorm"]
('sinusoidal', True, True, True)
"""

from __future__ import annotations

from ..core.blocks import embedding, group, layer_norm, linear, per_head_linear, product_as_written
from ..core.compute import Attention
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Switch
from ..core.symbols import A, H, L, P, V, r


def attention(name, bias, title, *, cached=False, causal=False, cross=False):
    """Multi-head attention: A heads of width H/A (eager: ``Q·Kᵀ`` and ``softmax(·)·V`` per head).

    ``cached``: a decoder's module, whose keys and values (A·H/A each) stay in the cache for every token of
    context — the decoder's own tokens (``causal``) or the encoder's (``cross``); the encoder caches nothing.
    """
    return group(name, [
        *(per_head_linear(n, H, A, H / A, bias=bias) for n in ("q_proj", "k_proj", "v_proj")),
        linear("out_proj", H, H, bias=bias, title="attention_output"),
    ], title=title, computes=(Attention(A, H / A, H / A, cache=2 * A * (H / A) if cached else 0,
                                        causal=causal, cross=cross),))


def norm(name, on):
    return layer_norm(name, H) if on else None


def ffn(inter, bias):
    return [linear("fc1", H, inter, bias=bias, title="ffn_up"),
            linear("fc2", inter, H, bias=bias, title="ffn_down")]


def encoder_layer(inter, bias, ln, add_norm=False):
    """``add_norm``: each norm follows its sub-layer and the residual connection (post-norm, as in the
    paper), so the documents call it Add & Norm."""
    return group("layers", [
        attention("self_attn", bias, "multi_head_attention"),
        norm("self_attn_layer_norm", ln),
        *ffn(inter, bias),
        norm("final_layer_norm", ln),
    ], repeat=L, ref="layers.*", title="encoder_layer", steps=_steps(add_norm, [
        ("attention_sublayer", ("self_attn",)), ("self_attn_layer_norm",),
        ("ffn_sublayer", ("fc1", "fc2")), ("final_layer_norm",)]))


def decoder_layer(inter, bias, ln, add_norm=False):
    return group("layers", [
        attention("self_attn", bias, "masked_attention", cached=True, causal=True),
        norm("self_attn_layer_norm", ln),
        attention("encoder_attn", bias, "cross_attention", cached=True, cross=True),
        norm("encoder_attn_layer_norm", ln),
        *ffn(inter, bias),
        norm("final_layer_norm", ln),
    ], repeat=L, ref="layers.*", title="cross_decoder_layer", steps=_steps(add_norm, [
        ("masked_attention", ("self_attn",)), ("self_attn_layer_norm",),
        ("cross_attention", ("encoder_attn",)), ("encoder_attn_layer_norm",),
        ("ffn_sublayer", ("fc1", "fc2")), ("final_layer_norm",)]))


def _steps(add_norm, steps):
    """A layer's steps, the paper's: its two feed-forward layers counted together, each norm an Add & Norm
    where it follows its sub-layer (a pre-norm model's norm is just a LayerNorm)."""
    norm_key = "add_norm" if add_norm else "layer_norm"
    return tuple(step if len(step) == 2 else (norm_key, step) for step in steps)


def positions(kind):
    if kind == "sinusoidal":  # fixed tables, registered (frozen) once per stack as in Marian
        return [embedding("encoder_positions", P, H, trainable=False, ref="encoder.embed_positions",
                          title="sinusoidal_positions"),
                embedding("decoder_positions", P, H, trainable=False, ref="decoder.embed_positions",
                          title="sinusoidal_positions")]
    if kind == "learned":  # one learned table, as the article counts it
        return [embedding("positions", P, H, ref="embed_positions", title="learned_positions")]
    return []


def build(switches, head):
    inter = product_as_written(r, H)
    bias, ln = switches["bias"], switches["layernorm"]
    return group("transformer", ref="", children=[
        group("embeddings", [embedding("shared", V, H, title="token_embedding"),
                             *positions(switches["positions"])], ref="", title="input"),
        group("encoder", [encoder_layer(inter, bias, ln, add_norm=True)]),
        group("decoder", [decoder_layer(inter, bias, ln, add_norm=True)]),
        group("output", [linear("lm_head", H, V, bias=False, title="output_projection",
                                tied_to="embeddings.shared" if switches["tie"] else None)],
              ref="", title="output_layer"),
    ])


FAMILY = Family(
    name="transformer",
    title={"en": "Transformer (encoder–decoder)", "zh": "Transformer（编码器–解码器）"},
    build=build,
    switches=(
        Switch("positions", "sinusoidal", ("sinusoidal", "learned", "none"),
               en="position encoding", zh="位置编码"),
        Switch("tie", True, en="output projection tied to the embedding", zh="输出层与词嵌入共享权重"),
        Switch("bias", True, en="biases in linear layers", zh="线性层带偏置"),
        Switch("layernorm", True, en="LayerNorm after each sub-layer", zh="每个子层后的 LayerNorm"),
    ),
    constraints=(
        HEAD_DIM,
        FFN_SIZE,
    ),
    components=("embeddings", "encoder", "decoder", "output"),
)
