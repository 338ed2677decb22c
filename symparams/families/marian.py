"""Marian (the OPUS-MT translation models), as transformers' ``MarianModel`` builds it.

The original Transformer with sinusoidal positions: a fixed P·H table per
stack, registered as a frozen parameter (counted in the total, not in the
trainable count).  No LayerNorm on the embeddings.  What the
:mod:`.transformer` family cannot say, and this one models as transformers
5 does:

- ``share_encoder_decoder_embeddings`` (switch ``share``): one table
  ``shared`` (V·H) that the encoder, the decoder and the LM head use; when
  false there is no ``shared``, the encoder has V·H and the decoder its own
  vocabulary, V_d·H (``decoder_vocab_size``);
- ``tie_word_embeddings`` (switch ``tie``): when false, transformers ties
  nothing, not even the encoder's and decoder's tables to ``shared`` — a
  shared model then holds three tables (V·H, V·H, V_d·H), and the LM head a
  fourth;
- encoder and decoder layer counts may differ (``split_layers``, L_d).

Head: ``seq2seq-lm`` (``MarianMTModel``: ``lm_head``, H·V when shared,
H·V_d otherwise, tied unless ``tie=false``; ``final_logits_bias`` is a
buffer).

>>> from symparams import model
>>> m = model("opus-mt-en-de")
>>> m.count, m.trainable
(74410496, 73886208)
>>> model("marian", share=False).block("decoder.embed_tokens").as_written
H*V_d
"""

from __future__ import annotations

from ..core.blocks import embedding, group
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Preset, Switch
from ..core.symbols import H, P, V, V_d
from .seq2seq_parts import (
    SHARED,
    SPLIT,
    TIE,
    check_padding,
    decoder_layers,
    encoder_layers,
    lm_head,
    stack,
    stacks_from_config,
    tokens,
)

SHARE = Switch("share", True,
               en="encoder and decoder use one token table, shared (share_encoder_decoder_embeddings)",
               zh="编码器与解码器共用一张词嵌入表 shared（share_encoder_decoder_embeddings）")

HEADS = ("seq2seq-lm",)


def positions():
    """The fixed sinusoidal table of one stack: P·H, registered, not trained."""
    return embedding("embed_positions", P, H, trainable=False, title="sinusoidal_positions")


def build(switches, head):
    share, tie = switches["share"], switches["tie"]
    decoder_vocab = V if share and tie else V_d  # tied to shared: the V×H table, whatever decoder_vocab_size says
    tree = [
        embedding("shared", V, H, title="token_embedding") if share else None,
        stack("encoder", tokens(V, tied=share and tie), positions(), encoder_layers()),
        stack("decoder", tokens(decoder_vocab, tied=share and tie), positions(), decoder_layers(switches)),
    ]
    if head == "seq2seq-lm":
        source = SHARED if share else "decoder.embed_tokens"
        tree.append(group("head", [lm_head(V if share else V_d, tied_to=source if tie else None)],
                          ref="", title="task_head"))
    return group("marian", tree, ref="")


def from_config(cfg):
    """Values from a ``MarianConfig`` (missing keys: its defaults)."""
    values, switches = stacks_from_config(cfg, "marian", d_model=1024, layers=12, heads=16, ffn=4096,
                                          positions=1024)
    values["V"] = vocab = cfg.int("vocab_size", default=58101)
    # MarianConfig: decoder_vocab_size = decoder_vocab_size or vocab_size
    values["V_d"] = decoder_vocab = cfg.int("decoder_vocab_size", default=None, minimum=0) or vocab
    check_padding(cfg, 58100, ("vocab_size", vocab), ("decoder_vocab_size", decoder_vocab))
    return values, {"share": cfg.bool("share_encoder_decoder_embeddings", default=True),
                    "tie": cfg.bool("tie_word_embeddings", default=True), **switches}


FAMILY = Family(
    name="marian",
    title={"en": "Marian (encoder–decoder, sinusoidal positions)", "zh": "Marian（编码器–解码器，正弦位置编码）"},
    build=build,
    switches=(SHARE, TIE, SPLIT),
    heads=HEADS,
    constraints=(HEAD_DIM, FFN_SIZE),
    components=("shared", "encoder", "decoder"),
    config_types=("marian",),
    from_config=from_config,
)

PRESETS = (
    Preset("opus-mt-en-de", "marian", {"V": 58101, "P": 512, "H": 512, "L": 6, "A": 8, "r": 4},
           en="OPUS-MT English→German (Helsinki-NLP/opus-mt-en-de): Transformer base sizes, 58,101 tokens",
           zh="OPUS-MT 英→德（Helsinki-NLP/opus-mt-en-de）：Transformer base 尺寸，58,101 个词元",
           reference="MarianModel"),
)
