"""GPT-J (EleutherAI, Wang and Komatsuzaki 2021), as transformers' ``GPTJModel`` builds it.

Token table ``wte`` (V·H); L blocks ``h.*`` with ONE LayerNorm ``ln_1`` each
(attention and MLP read the same normalised input, in parallel); attention
``q_proj``, ``k_proj``, ``v_proj`` written per head, ``A·(H·(H/A))``, and
``out_proj`` H·H — no biases; the MLP ``fc_in`` H·rH + rH and ``fc_out``
rH·H + H, with biases; the final ``ln_f``.  Rotary positions
(``rotary_dim``) hold no parameters.  The causal-LM head ``lm_head`` H·V has
a bias V, and is untied by default.

>>> from symparams import model
>>> model("gpt-j-6b", head="causal-lm").count
6050882784
>>> model("gptj").tree.find("decoder.h.attn.q_proj").as_written
A*(H*(H/A))
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ..core.blocks import embedding, group, layer_norm, linear, product_as_written
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Preset
from ..core.symbols import A, C, H, L, V, r
from .classic_parts import causal_attention, decoder_model, heads_of, mlp, qkv_parts, task_head, tie_switch

#: heads, with the transformers class that builds each and its base-model prefix
CLASSES = {
    None: ("GPTJModel", None),
    "causal-lm": ("GPTJForCausalLM", "transformer."),
    "sequence-classification": ("GPTJForSequenceClassification", "transformer."),
    "question-answering": ("GPTJForQuestionAnswering", "transformer."),
}

TOKENS = "embeddings.wte"


def block():
    return group("h", [
        layer_norm("ln_1", H),
        group("attn", [*qkv_parts(("q_proj", "k_proj", "v_proj"), A, bias=False),
                       linear("out_proj", H, H, bias=False, title="attention_output")], title="masked_attention",
              computes=(causal_attention(),)),
        mlp(product_as_written(r, H), ("fc_in", "fc_out")),
    ], repeat=L, ref="h.*", title="decoder_layer")


def build(switches, head):
    task = task_head(head, tied_to=TOKENS if switches["tie"] else None, lm_bias=True)
    return decoder_model("gptj", [embedding("wte", V, H, title="token_embedding")], block(),
                         [layer_norm("ln_f", H, title="final_norm")], task)


def from_config(cfg):
    """Values from a ``GPTJConfig`` (defaults: GPT-J-6B, as transformers 5 has them).

    ``n_inner`` missing or ``null`` is 4H.  ``n_embd``, ``n_head``,
    ``n_layer`` may be spelled as the aliases transformers maps
    (``hidden_size``, ``num_attention_heads``, ``num_hidden_layers``).
    """
    hidden = cfg.int("hidden_size", "n_embd", default=4096)
    values = dict(V=cfg.int("vocab_size", default=50400), H=hidden,
                  L=cfg.int("num_hidden_layers", "n_layer", default=28),
                  A=cfg.int("num_attention_heads", "n_head", default=16),
                  r=Fraction(cfg.int("n_inner", default=4 * hidden), hidden), C=cfg.labels())
    return values, dict(tie=cfg.bool("tie_word_embeddings", default=False))


FAMILY = Family(
    name="gptj",
    title={"en": "GPT-J", "zh": "GPT-J"},
    build=build,
    switches=(tie_switch(False),),
    heads=heads_of(CLASSES),
    constraints=(HEAD_DIM, FFN_SIZE),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "decoder"),
    config_types=("gptj",),
    from_config=from_config,
)

PRESETS = (
    Preset("gpt-j-6b", "gptj", dict(V=50400, H=4096, L=28, A=16, r=4),
           en="GPT-J-6B (EleutherAI, Wang and Komatsuzaki 2021)", zh="GPT-J-6B（EleutherAI，Wang 与 Komatsuzaki 2021）",
           reference="GPTJModel"),
)
