"""A rule of thumb for the families ``12·L·H² + (V+P+S)·H`` does not describe, with its exact error.

Each rule keeps only the weight matrices of the layers and the embedding tables, as the 12·L·H² rule does,
written for its family:

- the encoder–decoder Transformer (and BART, Marian, mBART, Pegasus, M2M-100, built the same way):
  ``12·L·H²`` per encoder stack, ``16·L·H²`` per decoder stack (a second attention over the encoder's
  output), plus the tables;
- a decoder with grouped-query attention and a gated (SwiGLU, GeGLU) feed-forward network (LLaMA, Mistral,
  Qwen, Gemma, Command R, OLMo 2, Phi-3, StableLM):
  ``L·(2·H²·(1 + G/A) + 3·H·F)`` plus ``V·H`` (as much again for an untied output layer);
- a mixture of experts (Mixtral): ``N_e`` experts of ``3·H·F_e`` per layer in all, ``k_e`` of them for the
  parameters one token uses;
- DeepSeek-V2/V3: each layer's latent attention matrices, ``3·H·F`` in the first L_f layers and
  ``(N_e + N_s)·3·H·F_e`` in the others (``k_e + N_s`` experts for the parameters one token uses);
- T5: ``4·H·A·D + 2·H·F`` per encoder layer, ``8·H·A·D + 2·H·F`` per decoder layer (``3·H·F`` gated).

The error is the exact count minus the rule, a SymPy expression in the model's symbols, evaluated exactly.

>>> from symparams import model
>>> rule = family_rule(model("transformer-base-article"))
>>> rule.key, rule.value, rule.error
('encoder_decoder', 60686336, 0)
>>> rule = family_rule(model("llama-3-8b"))
>>> sp.sstr(rule.error), rule.total - rule.value
('H*(2*L + 1)', 266240)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..core.algebra import closed_form, whole
from ..core.blocks import product_as_written as times, sum_as_written as plus
from ..core.symbols import A, D, D_n, D_r, D_v, F, F_e, G, H, L, L_d, L_f, N_e, N_s, R_kv, R_q, V, k_e, r
from .thumb import embedding_tables

#: the decoder families whose layers are grouped-query (or multi-head) attention and a gated feed-forward network
#: of width F
GATED_DECODERS = ("llama", "mistral", "qwen2", "qwen3", "gemma", "cohere", "olmo2", "phi3", "stablelm")
#: the encoder–decoder families built as the article's Transformer (one L for both stacks, FFN ratio r)
ENCODER_DECODERS = ("transformer", "bart", "marian", "mbart", "pegasus", "m2m_100")


@dataclass(frozen=True)
class FamilyRule:
    """The rule ``formula`` (as written), its ``value`` and the exact ``total`` at the model's values, and
    ``error`` = count − rule in the symbols (0 where the rule is exact).  ``key`` names the rule's sentence
    in the documents' catalog; ``active``, for a mixture of experts, is the same for the parameters one
    token uses."""

    key: str
    formula: sp.Expr
    value: int
    total: int
    error: sp.Expr
    active: "FamilyRule | None" = None
    #: whether an untied output layer (``V·H``, a causal-lm head) is among the tables the rule keeps
    output_layer: bool = False

    @property
    def share(self) -> Fraction:
        """The error as a share of the exact count."""
        return Fraction(self.total - self.value, self.total)


def family_rule(m) -> FamilyRule | None:
    """The rule of thumb of ``m``'s family with its error, or None where no rule is written for it."""
    if m.free:
        return None
    found = _formula(m, m.closed_form)
    if found is None:
        return None
    key, formula, fixed = found
    active = None
    if key in ("experts", "latent", "latent_plain"):  # a token uses k_e of the N_e experts of each layer
        used = _formula(m, m.closed_form, experts=k_e)[1]
        active = _rule(m, key, used, closed_form(m.tree.active_total), m.active, fixed)
    return _rule(m, key, formula, m.closed_form, m.count, fixed, active, output_layer=bool(_output_layers(m.tree)))


def _rule(m, key, formula, exact, total, fixed, active=None, output_layer=False) -> FamilyRule:
    """The rule with its error; ``fixed``: the symbols the rule's numbers fix (r = 4 in 12·L·H²), put in."""
    error = rule_error(exact, formula, fixed)
    rule = FamilyRule(key, formula, whole(formula.doit(), m.values), total, error, active, output_layer)
    assert whole(error, m.values) == total - rule.value, f"{m.name}: the rule's error does not add up"
    return rule


def rule_error(exact: sp.Expr, formula: sp.Expr, fixed: dict) -> sp.Expr:
    """count − rule in the symbols, with the symbols the rule's numbers fix (``fixed``) put in.

    >>> from symparams import model
    >>> from symparams.analysis.thumb import rule_of_thumb
    >>> m = model("bert-base")
    >>> rule_error(m.closed_form, rule_of_thumb(m).formula, {r: 4})  # the pooler, biases and LayerNorms
    H**2 + H*(13*L + 3)
    """
    error = sp.expand(exact.xreplace(fixed) - formula.doit())
    if L_f not in error.free_symbols:
        return closed_form(error)
    # the routers of the L − L_f expert layers: N_e·H·(L − L_f), not a bare −L_f·N_e·H
    parts = sp.collect(error, N_e, evaluate=False)
    routers = parts.pop(N_e, sp.Integer(0))
    return N_e * sp.factor(routers) + closed_form(sp.Add(*(k * v for k, v in parts.items())))


def _formula(m, exact, experts=N_e) -> tuple[str, sp.Expr, dict] | None:
    """(key, rule as written, the symbols its numbers fix) for ``m``'s family, or None; ``experts``: how many
    experts of a layer it counts."""
    family, symbols = m.family.name, set(m.symbols)
    tables = [*embedding_tables(m.tree), *_output_layers(m.tree)]
    if family in ENCODER_DECODERS and _is(m, exact, H**2 * L, 28):  # r = 4: 12 + 16 per layer pair
        return "encoder_decoder", plus(times(12, L, H**2), times(16, L, H**2), *tables), \
            {r: m.values[r]} if r in m.values else {}
    if family in GATED_DECODERS and D not in symbols:
        layer = plus(_attention(symbols), times(3, H, F))
        return "gated" if G in symbols else "gated_mha", plus(times(L, layer), *tables), {}
    if family == "mixtral" and D not in symbols:
        layer = plus(_attention(symbols), times(experts, 3, H, F_e))
        return "experts", plus(times(L, layer), *tables), {}
    if family in ("deepseek_v3", "deepseek_v2") and m.switches.get("dense_layers"):
        moe = times(3, plus(L, -L_f), plus(experts, N_s), H, F_e)
        compressed = bool(m.switches.get("q_lora"))  # queries through a rank R_q, or projected straight
        attention = times(L, _latent(compressed))
        return "latent" if compressed else "latent_plain", plus(attention, times(3, L_f, H, F), moe, *tables), {}
    if family == "t5" and any(block.name == "decoder" for block in m.tree.children):  # not encoder-only
        gated = bool(m.switches.get("gated"))
        ffn = times(3 if gated else 2, H, F)
        decoder = L_d if L_d in symbols else L
        encoder, decoder = times(L, plus(times(4, H, A, D), ffn)), times(decoder, plus(times(8, H, A, D), ffn))
        return "t5_gated" if gated else "t5", plus(encoder, decoder, *tables), {}
    return None


def _output_layers(tree) -> list[sp.Expr]:
    """An untied output layer from H to V (a causal-lm head): ``V·H``, as much as the token embedding."""
    return [times(V, H) for _, block, copies in tree.walk()
            if block.is_leaf and block.kind == "linear" and block.tied_to is None and copies == 1
            and set(block.shape) == {H, V}]


def _latent(compressed_queries: bool) -> sp.Expr:
    """Multi-head latent attention's matrices: queries through R_q (or straight) to A heads of D_n + D_r, keys
    and values through R_kv (beside a shared rotary key of D_r) to A heads of D_n + D_v, the output A·D_v × H."""
    queries = plus(times(H, R_q), times(R_q, A, plus(D_n, D_r))) if compressed_queries \
        else times(H, A, plus(D_n, D_r))
    return plus(queries, times(H, plus(R_kv, D_r)), times(R_kv, A, plus(D_n, D_v)), times(A, D_v, H))


def _attention(symbols) -> sp.Expr:
    """The attention projections of one layer: q and o of H×H, k and v of H×(H·G/A)."""
    if G not in symbols:
        return times(4, H**2)
    return times(2, H**2, plus(1, G / A))


def _is(m, exact, monomial, coefficient) -> bool:
    """Whether ``exact``, at the model's values but for H and L, has ``coefficient``·``monomial``."""
    others = {s: v for s, v in m.values.items() if s not in (H, L)}
    n = sp.expand(exact.xreplace(others))
    return n.is_polynomial(H, L) and sp.Poly(n, H, L).coeff_monomial(monomial) == coefficient
