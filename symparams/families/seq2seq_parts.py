"""What BART, mBART, Pegasus, M2M-100 and Marian share: transformers' encoder–decoder module tree.

Their base models (the code of each is copied from BART's) hold a token table
``shared``, then an encoder and a decoder, each with its own
``embed_tokens``, position table and layers; the layers are the original
Transformer's, built by :mod:`.transformer`.  What differs is what a stack
holds besides (:class:`Stacks`): learned or sinusoidal positions (or none
that are parameters), a LayerNorm on the embeddings, a LayerNorm after the
last layer.  The module's name starts with ``_``, so the family discovery
skips it.

What they compute (:mod:`symparams.analysis.flops`): every attention is A
heads of width H/A (the decoder's A_d where it has its own); the decoder's
self-attention is causal and its cross-attention reads the encoder's
positions (as many as the decoder's, by convention); each caches 2·H
elements per token and layer (keys and values), the encoder nothing.  The
LM head and the question-answering head run on every decoder position;
the classification head only on the state at each sequence's last
``<eos>``.

When ``tie_word_embeddings`` is true (the default) transformers ties the
encoder's and the decoder's ``embed_tokens`` (and the LM head) to
``shared``; when it is false every one of them keeps its own table.

Encoder and decoder may differ in layers (``split_layers``: L_d), heads
(``split_heads``: the decoder's A_d) and FFN size (``split_ffn``: the
decoder's r_d·H), as the config keys ``decoder_*`` allow.

>>> from symparams.core.symbols import H, L_d, V
>>> tokens(V, tied=True).count, tokens(V, tied=False).count
(0, H*V)
>>> decoder_layers(dict(split_layers=True, split_heads=False, split_ffn=False)).repeat
L_d
>>> layers = decoder_layers(dict(split_layers=False, split_heads=True, split_ffn=True))
>>> layers.find("self_attn.q_proj").as_written, layers.find("fc1").count
(A_d*(H*(H/A_d) + H/A_d), H**2*r_d + H*r_d)
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from fractions import Fraction
from typing import Callable

import sympy as sp

from ..core.blocks import Block, embedding, group, layer_norm, linear, product_as_written
from ..core.errors import SymparamsError
from ..core.family import FFN_SIZE, HEAD_DIM, Constraint, Switch
from ..core.symbols import A, A_d, C, H, L_d, P, V, r, r_d
from . import transformer

#: the path of the shared token table in every base model
SHARED = "shared"
#: the path of the decoder's token table (what a ``*ForCausalLM`` ties its LM head to)
DECODER_TOKENS = "decoder.embed_tokens"

TIE = Switch("tie", True,
             en="encoder and decoder token tables (and the LM head) are the shared table (tie_word_embeddings)",
             zh="编码器、解码器的词嵌入（以及语言模型头）共用同一张表（tie_word_embeddings）")

SPLIT = Switch("split_layers", False,
               en="the decoder has its own layer count L_d (encoder_layers ≠ decoder_layers)",
               zh="解码器层数 L_d 与编码器不同（encoder_layers ≠ decoder_layers）")

SPLIT_HEADS = Switch("split_heads", False,
                     en="the decoder has its own head count A_d (encoder_attention_heads ≠ decoder_attention_heads)",
                     zh="解码器注意力头数 A_d 与编码器不同（encoder_attention_heads ≠ decoder_attention_heads）")

SPLIT_FFN = Switch("split_ffn", False,
                   en="the decoder has its own FFN ratio r_d (encoder_ffn_dim ≠ decoder_ffn_dim)",
                   zh="解码器前馈网络扩张倍数 r_d 与编码器不同（encoder_ffn_dim ≠ decoder_ffn_dim）")

#: the switches that let the decoder's sizes differ from the encoder's
STACK_SWITCHES = (SPLIT, SPLIT_HEADS, SPLIT_FFN)

CONSTRAINTS = (
    HEAD_DIM,
    FFN_SIZE,
    Constraint(H / A_d, "H={H} is not divisible by A_d={A_d} (the decoder's head dimension H/A_d must be a whole "
                        "number)"),
    Constraint(r_d * H, "r_d·H={value} is not a whole number (the decoder's intermediate size r_d·H must be one)"),
)

#: BartLearnedPositionalEmbedding (and mBART's): ``num_embeddings + 2`` rows
OFFSET = 2


def tokens(vocab, *, tied):
    """A stack's ``embed_tokens``: the shared table (adds nothing) or its own ``vocab × H``."""
    return embedding("embed_tokens", vocab, H, tied_to=SHARED if tied else None, title="token_embedding")


def learned_positions():
    """BART's and mBART's learned table: P + 2 rows (position ids are offset by 2)."""
    return embedding("embed_positions", P + OFFSET, H, title="learned_positions")


def sinusoidal_positions():
    """Marian's and Pegasus's fixed sinusoidal table: P·H, registered as a frozen parameter."""
    return embedding("embed_positions", P, H, trainable=False, title="sinusoidal_positions")


def encoder_layers():
    """L encoder layers (self-attention, FFN r·H, two LayerNorms), as in the Transformer."""
    return transformer.encoder_layer(product_as_written(r, H), True, True)


def decoder_layers(switches):
    """Decoder layers (masked self-attention, cross-attention, FFN, three LayerNorms).

    L of them with A heads and FFN r·H, or the decoder's own L_d, A_d, r_d
    where the switches say so.
    """
    ffn = product_as_written(r_d if switches["split_ffn"] else r, H)
    layer = transformer.decoder_layer(ffn, True, True)
    if switches["split_heads"]:
        layer = _with_symbol(layer, A, A_d)
    return replace(layer, repeat=L_d) if switches["split_layers"] else layer


def _with_symbol(block: Block, old: sp.Symbol, new: sp.Symbol) -> Block:
    """``block`` with ``old`` replaced by ``new`` everywhere: the Transformer's decoder layer with A_d heads.

    ``xreplace`` keeps the per-head form as written (``A_d·(H·(H/A_d) + H/A_d)``); the attention it
    computes (A_d heads of width H/A_d) follows.
    """
    swap = {old: new}
    return replace(block, params=tuple((name, size.xreplace(swap)) for name, size in block.params),
                   children=tuple(_with_symbol(c, old, new) for c in block.children),
                   written=None if block.written is None else block.written.xreplace(swap),
                   shape=tuple(sp.sympify(s).xreplace(swap) for s in block.shape),
                   computes=tuple(_computed_with(item, swap) for item in block.computes))


def _computed_with(item, swap):
    """An :class:`~symparams.core.compute.Attention` or ``Product`` with its expressions' symbols swapped."""
    return replace(item, **{f.name: sp.sympify(getattr(item, f.name)).xreplace(swap) for f in fields(item)
                            if isinstance(getattr(item, f.name), sp.Basic)})


#: the decoder layer's cross-attention sub-layer (attention and its LayerNorm)
CROSS_ATTENTION = ("encoder_attn", "encoder_attn_layer_norm")


def without_cross_attention(layers: Block) -> Block:
    """The decoder layers of a ``*ForCausalLM``: the cross-attention's weights are built, but with no
    encoder states passed the decoder layer skips it, so it never runs (``calls = 0``): no FLOPs, no cache."""
    return replace(layers, children=tuple(replace(c, calls=sp.Integer(0)) if c.name in CROSS_ATTENTION else c
                                          for c in layers.children))


def stack(name, *parts):
    """``encoder`` / ``decoder``: token table, positions, (embedding LayerNorm,) layers, (final LayerNorm)."""
    return group(name, parts, title=name)


def lm_head(vocab, *, tied_to):
    """``lm_head = Linear(H, vocab, bias=False)``; ``final_logits_bias`` is a buffer, not a parameter."""
    return linear("lm_head", H, vocab, bias=False, tied_to=tied_to, title="output_projection")


def embedding_norm():
    return layer_norm("layernorm_embedding", H, title="embedding_layer_norm")


def final_norm():
    return layer_norm("layer_norm", H, title="final_norm")


@dataclass(frozen=True)
class Stacks:
    """What one family's encoder and decoder hold besides the token table and the layers."""

    positions: Callable[[], Block] | None  # a fresh block per stack; None: positions that are buffers (M2M-100)
    embedding_norm: bool = False           # ``layernorm_embedding`` (BART, mBART)
    final_norm: bool = False               # ``layer_norm`` after the last layer (mBART, Pegasus, M2M-100)

    def encoder(self, embed_tokens):
        return self._stack("encoder", embed_tokens, encoder_layers())

    def decoder(self, embed_tokens, switches, *, cross=True):
        """The decoder; ``cross=False``: a ``*ForCausalLM``'s, whose cross-attention never runs."""
        layers = decoder_layers(switches)
        return self._stack("decoder", embed_tokens, layers if cross else without_cross_attention(layers))

    def _stack(self, name, embed_tokens, layers):
        return stack(name, embed_tokens, self.positions() if self.positions else None,
                     embedding_norm() if self.embedding_norm else None,
                     layers, final_norm() if self.final_norm else None)


def task_head(head, tie):
    """The task heads of ``BartFor*`` (and the classes copied from it), path names as there."""
    if head == "seq2seq-lm":
        return lm_head(V, tied_to=SHARED if tie else None)
    if head == "sequence-classification":  # on the decoder's state at the last <eos> of each sequence
        return group("classification_head", [linear("dense", H, H, title="classifier_dense"),
                                             linear("out_proj", H, C, title="classifier")],
                     title="classification_head", per_sequence=True)
    if head == "question-answering":  # BartForQuestionAnswering sets num_labels = 2
        return linear("qa_outputs", H, 2, title="qa_outputs")
    return None


def with_task(task):
    """The task head's group (None without a head)."""
    return group("head", [task], ref="", title="task_head") if task is not None else None


def build(name, stacks: Stacks, switches, head):
    """The model transformers builds for ``head`` with one shared vocabulary V.

    The base model (``shared``, encoder, decoder) and the task head; under
    ``causal-lm`` (``*ForCausalLM``) the decoder alone, with its own token
    table and an LM head tied to it (its layers keep their cross-attention's
    weights, which never run).
    """
    tie = switches["tie"]
    if head == "causal-lm":
        parts = [stacks.decoder(tokens(V, tied=False), switches, cross=False),
                 with_task(lm_head(V, tied_to=DECODER_TOKENS if tie else None))]
    else:
        parts = [embedding("shared", V, H, title="token_embedding"), stacks.encoder(tokens(V, tied=tie)),
                 stacks.decoder(tokens(V, tied=tie), switches), with_task(task_head(head, tie))]
    return group(name, parts, ref="")


def stacks_from_config(cfg, *, d_model, layers, heads, ffn, positions=None):
    """Values and switches every family reads alike (keys of BartConfig and the configs copied from it).

    The keyword arguments are the defaults of the family's transformers
    config class (``positions=None``: P is not read).  transformers maps
    ``hidden_size``, ``num_hidden_layers`` and ``num_attention_heads`` onto
    the encoder's keys; the reader finds either name.  A decoder key missing takes the class's default, not the
    encoder's value.  Where the decoder's layers, heads or FFN size differ
    from the encoder's, the decoder gets its own symbol (L_d, A_d, r_d).
    """
    hidden = cfg.int("hidden_size", "d_model", default=d_model)
    enc_layers = cfg.int("num_hidden_layers", "encoder_layers", default=layers)
    dec_layers = cfg.int("decoder_layers", default=layers)
    enc_heads = cfg.int("num_attention_heads", "encoder_attention_heads", default=heads)
    dec_heads = cfg.int("decoder_attention_heads", default=heads)
    enc_ffn = cfg.int("encoder_ffn_dim", default=ffn)
    dec_ffn = cfg.int("decoder_ffn_dim", default=ffn)
    values = dict(H=hidden, L=enc_layers, A=enc_heads, r=Fraction(enc_ffn, hidden))
    if positions is not None:
        values["P"] = cfg.int("max_position_embeddings", default=positions)
    switches = {"split_layers": enc_layers != dec_layers, "split_heads": enc_heads != dec_heads,
                "split_ffn": enc_ffn != dec_ffn}
    for switch, symbol, value in (("split_layers", "L_d", dec_layers), ("split_heads", "A_d", dec_heads),
                                  ("split_ffn", "r_d", Fraction(dec_ffn, hidden))):
        if switches[switch]:
            values[symbol] = value
    return values, switches


def check_padding(cfg, default, *tables):
    """transformers builds ``nn.Embedding(rows, H, padding_idx=pad_token_id)``: the index must fit.

    ``tables`` are ``(what, rows)`` pairs; ``pad_token_id: null`` means no
    padding index; a missing key takes the config class's ``default``.
    """
    pad = cfg.int("pad_token_id", minimum=-(2**63)) if cfg.has("pad_token_id") else (
        None if cfg.null("pad_token_id") else default)
    if pad is None:
        return
    for what, rows in tables:
        if not -rows <= pad < rows:
            raise SymparamsError(
                f"{cfg.source}: key pad_token_id={pad} is outside {what}={rows}; "
                "transformers cannot build that embedding")
