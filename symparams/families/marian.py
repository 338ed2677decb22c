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
- the decoder's own layer count, head count and FFN ratio (``split_layers``,
  ``split_heads``, ``split_ffn``: L_d, A_d, r_d).

Heads: ``seq2seq-lm`` (``MarianMTModel``: ``lm_head``, H·V when shared,
H·V_d otherwise, tied unless ``tie=false``; ``final_logits_bias`` is a
buffer) and ``causal-lm`` (``MarianForCausalLM``: the decoder alone, with a
table of ``decoder_vocab_size`` rows — V while the model shares one
vocabulary, else V_d; its ``lm_head`` is that table (scoring its rows)
unless ``tie=false``, when it is its own H·V).  Its layers keep their
cross-attention's weights, which never run: no FLOPs, no cache.

>>> from symparams import model
>>> m = model("opus-mt-en-de")
>>> m.count, m.trainable
(74410496, 73886208)
>>> model("marian", share=False).block("decoder.embed_tokens").as_written
H*V_d
>>> model("marian", head="causal-lm").block("head.lm_head").tied_to
'decoder.embed_tokens'
"""

from __future__ import annotations

from ..core.blocks import embedding, group
from ..core.errors import SymparamsError
from ..core.family import Family, Preset, Switch
from ..core.symbols import H, V, V_d
from .seq2seq_parts import (
    CONSTRAINTS,
    DECODER_TOKENS,
    SHARED,
    STACK_SWITCHES,
    TIE,
    Stacks,
    check_padding,
    lm_head,
    sinusoidal_positions,
    stacks_from_config,
    tokens,
    with_task,
)

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("MarianModel", None),
    "seq2seq-lm": ("MarianMTModel", "model."),
    "causal-lm": ("MarianForCausalLM", "model."),
}

SHARE = Switch("share", True,
               en="encoder and decoder use one token table, shared (share_encoder_decoder_embeddings)",
               zh="编码器与解码器共用一张词嵌入表 shared（share_encoder_decoder_embeddings）")

STACKS = Stacks(sinusoidal_positions)


def decoder_vocabulary(switches):
    """The decoder's rows: V when it is the shared table; else its own vocabulary V_d."""
    return V if switches["share"] and switches["tie"] else V_d


def decoder_only(switches):
    """``MarianForCausalLM``: the decoder with a table of its own (``decoder_vocab_size`` rows: V_d, or V
    while the model shares one vocabulary); the LM head is tied to it, or its own H·V.

    (Tied, transformers gives the head the decoder's table, whatever its rows: it then scores the decoder's
    vocabulary, V_d rows, and multiplies H·V_d per position.)
    """
    rows = decoder_vocabulary(switches)
    table = embedding("embed_tokens", rows, H, title="token_embedding")
    return [STACKS.decoder(table, switches, cross=False),
            with_task(lm_head(rows if switches["tie"] else V, tied_to=DECODER_TOKENS if switches["tie"] else None))]


def build(switches, head):
    if head == "causal-lm":
        return group("marian", decoder_only(switches), ref="")
    share, tie = switches["share"], switches["tie"]
    decoder_vocab = decoder_vocabulary(switches)  # tied to shared: the V×H table, whatever decoder_vocab_size says
    tree = [
        embedding("shared", V, H, title="token_embedding") if share else None,
        STACKS.encoder(tokens(V, tied=share and tie)),
        STACKS.decoder(tokens(decoder_vocab, tied=share and tie), switches),
    ]
    if head == "seq2seq-lm":
        source = SHARED if share else DECODER_TOKENS
        tree.append(with_task(lm_head(V if share else V_d, tied_to=source if tie else None)))
    return group("marian", tree, ref="")


def from_config(cfg):
    """Values from a ``MarianConfig`` (missing keys: its defaults)."""
    values, switches = stacks_from_config(cfg, d_model=1024, layers=12, heads=16, ffn=4096, positions=1024)
    values["V"] = vocab = cfg.int("vocab_size", default=58101)
    # MarianConfig: decoder_vocab_size = decoder_vocab_size or vocab_size
    values["V_d"] = decoder_vocab = cfg.int("decoder_vocab_size", default=None, minimum=0) or vocab
    check_padding(cfg, 58100, ("vocab_size", vocab), ("decoder_vocab_size", decoder_vocab))
    switches.update(share=cfg.bool("share_encoder_decoder_embeddings", default=True),
                    tie=cfg.bool("tie_word_embeddings", default=True))
    if cfg.head == "causal-lm" and decoder_vocabulary(switches) == V and decoder_vocab != vocab:
        raise SymparamsError(f"{cfg.source}: key decoder_vocab_size={decoder_vocab} differs from vocab_size={vocab} "
                             "in a model that shares one vocabulary; symparams' marian family counts the shared "
                             "vocabulary V in MarianForCausalLM's decoder")
    return values, switches


FAMILY = Family(
    name="marian",
    title={"en": "Marian (encoder–decoder, sinusoidal positions)", "zh": "Marian（编码器–解码器，正弦位置编码）"},
    build=build,
    switches=(SHARE, TIE, *STACK_SWITCHES),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=CONSTRAINTS,
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
