"""What BART and Marian share: transformers' encoder–decoder module tree.

``BartModel`` and ``MarianModel`` (Marian's code is copied from BART's) hold a
token table ``shared``, then an encoder and a decoder, each with its own
``embed_tokens``, ``embed_positions`` and layers; the layers are the original
Transformer's, built by :mod:`.transformer`.  The module's name starts with
``_``, so the family discovery skips it.

When ``tie_word_embeddings`` is true (the default) transformers ties the
encoder's and the decoder's ``embed_tokens`` (and the LM head) to
``shared``; when it is false every one of them keeps its own table.

>>> from symparams.core.symbols import H, L_d, V
>>> tokens(V, tied=True).count, tokens(V, tied=False).count
(0, H*V)
>>> decoder_layers({"split_layers": True}).repeat
L_d
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from ..core.blocks import embedding, group, layer_norm, linear, product_as_written
from ..core.errors import SymparamsError
from ..core.family import Switch
from ..core.symbols import H, L_d, r
from . import transformer

#: the path of the shared token table in both base models
SHARED = "shared"

TIE = Switch("tie", True,
             en="encoder and decoder token tables (and the LM head) are the shared table (tie_word_embeddings)",
             zh="编码器、解码器的词嵌入（以及语言模型头）共用同一张表（tie_word_embeddings）")

SPLIT = Switch("split_layers", False,
               en="the decoder has its own layer count L_d (encoder_layers ≠ decoder_layers)",
               zh="解码器层数 L_d 与编码器不同（encoder_layers ≠ decoder_layers）")


def tokens(vocab, *, tied):
    """A stack's ``embed_tokens``: the shared table (adds nothing) or its own ``vocab × H``."""
    return embedding("embed_tokens", vocab, H, tied_to=SHARED if tied else None, title="token_embedding")


def encoder_layers():
    """L encoder layers (self-attention, FFN r·H, two LayerNorms), as in the Transformer."""
    return transformer.encoder_layer(product_as_written(r, H), True, True)


def decoder_layers(switches):
    """Decoder layers (masked self-attention, cross-attention, FFN, three LayerNorms): L, or L_d when split."""
    layer = transformer.decoder_layer(product_as_written(r, H), True, True)
    return replace(layer, repeat=L_d) if switches["split_layers"] else layer


def stack(name, *parts):
    """``encoder`` / ``decoder``: token table, positions, (embedding LayerNorm,) layers."""
    return group(name, parts, title=name)


def lm_head(vocab, *, tied_to):
    """``lm_head = Linear(H, vocab, bias=False)``; ``final_logits_bias`` is a buffer, not a parameter."""
    return linear("lm_head", H, vocab, bias=False, tied_to=tied_to, title="output_projection")


def embedding_norm():
    return layer_norm("layernorm_embedding", H, title="embedding_layer_norm")


def stacks_from_config(cfg, family, *, d_model, layers, heads, ffn, positions):
    """Values and switches both families read alike (keys of BartConfig / MarianConfig).

    The keyword arguments are the defaults of the family's transformers
    config class.  transformers maps ``hidden_size``, ``num_hidden_layers``
    and ``num_attention_heads`` onto the encoder's keys, and the alias wins
    when both are present; so it does here.  Encoder and decoder must agree
    on heads and FFN size (one A, one r): a config where they differ is an
    error naming the keys, never a wrong number.  Layer counts may differ
    (``split_layers``, with L_d).
    """

    hidden = cfg.int("hidden_size", "d_model", default=d_model)
    enc_layers = cfg.int("num_hidden_layers", "encoder_layers", default=layers)
    dec_layers = cfg.int("decoder_layers", default=layers)
    heads = _same(cfg, family, ("num_attention_heads", "encoder_attention_heads"), "decoder_attention_heads", heads)
    ffn = _same(cfg, family, ("encoder_ffn_dim",), "decoder_ffn_dim", ffn)
    values = dict(P=cfg.int("max_position_embeddings", default=positions), H=hidden,
                  L=enc_layers, A=heads, r=Fraction(ffn, hidden))
    switches = {"split_layers": enc_layers != dec_layers}
    if switches["split_layers"]:
        values["L_d"] = dec_layers
    return values, switches


def _same(cfg, family, enc_keys, dec_key, default):
    """One value read from the encoder's and the decoder's key, which must agree."""
    enc = cfg.int(*enc_keys, default=default)
    dec = cfg.int(dec_key, default=default)
    if enc != dec:
        enc_key = next((k for k in enc_keys if cfg.has(k)), enc_keys[-1])
        raise SymparamsError(
            f"{cfg.source}: keys {enc_key}={enc} and {dec_key}={dec} differ; symparams counts {family} "
            f"with the same value in the encoder and the decoder")
    return enc


def check_padding(cfg, default, *vocabularies):
    """transformers builds ``nn.Embedding(vocab, H, padding_idx=pad_token_id)``: the index must fit.

    ``pad_token_id: null`` means no padding index; a missing key takes the
    config class's ``default``.
    """
    pad = cfg.int("pad_token_id", minimum=-(2**63)) if cfg.has("pad_token_id") else (
        None if "pad_token_id" in cfg.data else default)
    if pad is None:
        return
    for key, size in vocabularies:
        if not -size <= pad < size:
            raise SymparamsError(
                f"{cfg.source}: key pad_token_id={pad} is outside {key}={size}; "
                "transformers cannot build that embedding")
