"""OPT (Zhang et al. 2022), as transformers' ``OPTModel`` builds it.

Everything lives under ``decoder``: the token table ``embed_tokens`` (V·E,
E = ``word_embed_proj_dim``, H unless ``project``), learned positions
``embed_positions`` of (P + 2)·H — OPT offsets position ids by 2, as BART
does, so the table has two rows more than ``max_position_embeddings`` — and
L layers ``layers.*``: ``self_attn`` (``q_proj``, ``k_proj``, ``v_proj``
written per head, ``A·(H·(H/A) + H/A)``, and ``out_proj`` H·H + H),
``self_attn_layer_norm``, ``fc1`` H·rH + rH, ``fc2`` rH·H + H,
``final_layer_norm``.  With ``project`` (E ≠ H, opt-350m) the embeddings are
mapped up by ``project_in`` (E·H) and the last layer's output back down by
``project_out`` (H·E), neither with a bias.  The decoder's own
``final_layer_norm`` exists only with pre-LayerNorm layers
(``do_layer_norm_before``; opt-350m has post-LayerNorm layers and none).

>>> from symparams import model
>>> model("opt-1.3b").count
1315758080
>>> model("opt-350m").tree.find("embeddings.project_in").count
E*H
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..core.blocks import embedding, group, layer_norm, linear, product_as_written
from ..core.family import FFN_SIZE, HEAD_DIM, Constraint, Family, Preset, Switch
from ..core.symbols import A, C, E, H, L, V, r
from .classic_parts import causal_attention, decoder_model, heads_of, mlp, qkv_parts, task_head, tie_switch
from .seq2seq_parts import learned_positions

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("OPTModel", None),
    "causal-lm": ("OPTForCausalLM", "model."),
    "sequence-classification": ("OPTForSequenceClassification", "model."),
    "question-answering": ("OPTForQuestionAnswering", "model."),
}

TOKENS = "embeddings.embed_tokens"

#: transformers builds project_in / project_out only when word_embed_proj_dim ≠ hidden_size
PROJECTION = Constraint(
    sp.Piecewise((sp.Integer(1), sp.Ne(E, H)), (sp.Integer(0), True)),
    "E={E} equals H={H}: transformers builds no project_in / project_out then (use project=false)",
    (r"E \neq H", "E differs from H: only then are there projections E→H and H→E",
     "E 不等于 H：只有这时才有 E→H 与 H→E 的投影层"))


def layer(bias):
    return group("layers", [
        group("self_attn", [*qkv_parts(("q_proj", "k_proj", "v_proj"), A, bias=bias),
                            linear("out_proj", H, H, bias=bias, title="attention_output")], title="masked_attention",
              computes=(causal_attention(),)),
        layer_norm("self_attn_layer_norm", H),
        mlp(product_as_written(r, H), ("fc1", "fc2"), bias=bias, ref=""),  # fc1, fc2 sit in the layer itself
        layer_norm("final_layer_norm", H),
    ], repeat=L, ref="layers.*", title="decoder_layer")


def build(switches, head):
    project = switches["project"]
    width = E if project else H
    inputs = [embedding("embed_tokens", V, width, title="token_embedding"), learned_positions(),
              linear("project_in", E, H, bias=False, title="embedding_projection") if project else None]
    outputs = [layer_norm("final_layer_norm", H, title="final_norm") if switches["final_norm"] else None,
               linear("project_out", H, E, bias=False, title="embedding_projection_out") if project else None]
    task = task_head(head, tied_to=TOKENS if switches["tie"] else None, n_in=width)
    return decoder_model("opt", inputs, layer(switches["bias"]), outputs, task, ref="decoder")


def from_config(cfg):
    """Values from an ``OPTConfig`` (defaults: opt-125m, as transformers 5 has them).

    ``word_embed_proj_dim`` missing, null or equal to ``hidden_size``: no
    projection, no E.  ``final_norm`` is ``do_layer_norm_before`` and not
    ``_remove_final_layer_norm``.  ``layer_norm_elementwise_affine: false``
    (LayerNorms without parameters) is refused.
    """
    cfg.refuse("layer_norm_elementwise_affine", False, default=True, family="opt",
               what="LayerNorms without a scale and a shift")
    hidden = cfg.int("hidden_size", default=768)
    embed = cfg.int("word_embed_proj_dim", default=hidden)
    values = dict(V=cfg.int("vocab_size", default=50272), P=cfg.int("max_position_embeddings", default=2048),
                  H=hidden, L=cfg.int("num_hidden_layers", default=12), A=cfg.int("num_attention_heads", default=12),
                  r=Fraction(cfg.int("ffn_dim", default=3072), hidden), C=cfg.labels())
    if embed != hidden:
        values["E"] = embed
    final_norm = (cfg.bool("do_layer_norm_before", default=True)
                  and not cfg.bool("_remove_final_layer_norm", default=False))
    switches = dict(project=embed != hidden, final_norm=final_norm, bias=cfg.bool("enable_bias", default=True),
                    tie=cfg.bool("tie_word_embeddings", default=True))
    return values, switches


FAMILY = Family(
    name="opt",
    title={"en": "OPT", "zh": "OPT"},
    build=build,
    switches=(
        Switch("project", False, en="token table E wide, mapped to H by project_in and back by project_out "
                                    "(word_embed_proj_dim ≠ hidden_size)",
               zh="词嵌入宽 E，由 project_in 映射到 H，再由 project_out 映射回 E（word_embed_proj_dim ≠ hidden_size）"),
        Switch("final_norm", True, en="the decoder ends with final_layer_norm (do_layer_norm_before)",
               zh="解码器末尾有 final_layer_norm（do_layer_norm_before）"),
        Switch("bias", True, en="biases in the attention projections, fc1 and fc2 (enable_bias)",
               zh="注意力投影、fc1 与 fc2 带偏置（enable_bias）"),
        tie_switch(True),
    ),
    heads=heads_of(CLASSES),
    constraints=(HEAD_DIM, FFN_SIZE, PROJECTION),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("opt",),
    from_config=from_config,
)

_OPT = dict(V=50272, P=2048, r=4)

PRESETS = (
    Preset("opt-125m", "opt", {**_OPT, "H": 768, "L": 12, "A": 12},
           en="OPT-125M (Zhang et al. 2022)", zh="OPT-125M（Zhang 等人，2022）", reference="OPTModel"),
    Preset("opt-350m", "opt", {**_OPT, "H": 1024, "L": 24, "A": 16, "E": 512}, {"project": True, "final_norm": False},
           en="OPT-350M: 512-wide embeddings projected to H, post-LayerNorm layers",
           zh="OPT-350M：512 维词嵌入投影到 H，层后归一化", reference="OPTModel"),
    Preset("opt-1.3b", "opt", {**_OPT, "H": 2048, "L": 24, "A": 32},
           en="OPT-1.3B (Zhang et al. 2022)", zh="OPT-1.3B（Zhang 等人，2022）", reference="OPTModel"),
)
