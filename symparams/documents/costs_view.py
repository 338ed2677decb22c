"""The compute-and-memory section of a document: FLOPs of one sequence, the bytes a model holds."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..analysis.flops import attention_width, laws
from ..analysis.proof import HELD
from ..core.compute import BATCH, SEQ
from ..core.model import Model
from ..core.symbols import SYMBOLS
from .formulas import latex, latex_numbers
from .kaplan_parts import KaplanParts, kaplan_parts


@dataclass(frozen=True)
class CostsView:
    """The compute-and-memory section: FLOPs of one sequence of ``seq`` tokens, bytes held.

    Every number comes from the model's :meth:`~symparams.core.model.Model.flops`,
    :meth:`~symparams.core.model.Model.memory` and
    :meth:`~symparams.core.model.Model.kv_cache`; ``*_expr`` are the same
    quantities in the symbols (``s`` and ``b`` substituted), for the live page.
    """

    seq: int
    formula: str                 # forward FLOPs in the symbols, s and b (LaTeX)
    formula_numbers: str         # the same with the model's values, s and b = 1 put in, not evaluated
    forward: int
    matmul: int
    attention: int
    product: int
    backward: int
    training: int
    heads_invariant: bool
    heads_derivative: str        # LaTeX
    held: tuple[str, ...]        # what, held fixed, makes the FLOPs independent of A (LaTeX: \frac{G}{A})
    #: the catalog's sentence for it: whether the parameter count, held the same way, is independent of A too
    held_sentence: str
    kaplan: int | Fraction       # 2N + 2·n_layer·s·d_attn per token
    exact_per_token: int | Fraction
    kaplan_difference: str       # exact − Kaplan, LaTeX
    kaplan_width: str            # the law's n_layer·d_attn in the symbols (LaTeX), the queries' and keys' width
    kaplan_width_value: int
    weights_fp32: int
    weights_bf16: int
    training_bytes: int          # bf16 weights and gradients, fp32 Adam state (mixed precision)
    kv_per_token: int            # bf16, 0 without a cache
    cross_kv_per_token: int
    kv_windows: tuple            # (tokens a sliding-window layer keeps, bf16 bytes per token of those layers)
    #: the numbers above as expressions in the model's symbols (s and b substituted), for the live page
    exprs: dict
    #: the formulas above as expressions (the page prints them as MathML)
    formula_expr: sp.Expr
    heads_derivative_expr: sp.Expr
    kaplan_difference_expr: sp.Expr
    #: the difference by where it comes from, where those parts add up to it (see :mod:`.kaplan_parts`)
    kaplan_parts: KaplanParts | None = None


#: each quantity the FLOPs proof may hold fixed, in LaTeX
LATEX_OF_HELD = {h.quantity: h.quantity_latex for h in HELD}

#: the sequence length a document's costs are worked out for when the model has no position table
DOCUMENT_SEQ = 2048


def costs_view(m: Model) -> CostsView:
    """The compute-and-memory section of ``m``'s document (one sequence of P tokens, or 2,048)."""
    seq = int(m.values[SYMBOLS["P"].symbol]) if SYMBOLS["P"].symbol in m.values else DOCUMENT_SEQ
    f = m.flops(seq)
    kinds = f.by_kind
    held = f.held
    kaplan = next(law for law in f.laws if law["name"] == "kaplan_forward")
    kaplan_law = next(law for law in laws(m.tree) if law.name == "kaplan_forward")
    training_bytes = m.memory(dtype="bf16", optimizer="adam")
    cache = m.kv_cache(dtype="bf16")
    width = attention_width(m.tree)  # the law's n_layer·d_attn
    at = {SEQ: sp.Integer(seq), BATCH: sp.Integer(1)}
    kind = {what: sp.Add(*(t.forward for t in f.terms if t.what == what)) for what in ("matmul", "attention", "product")}
    forward = sp.Add(*kind.values())
    backward = sp.Add(*(t.backward for t in f.terms))
    parts = training_bytes.formulas
    exprs = {**kind, "forward": forward, "backward": backward, "training": forward + backward,
             "kaplan": kaplan_law.formula, "exact_per_token": kaplan_law.exact,
             "weights_fp32": 2 * parts["weights"], "weights_bf16": parts["weights"],
             "training_memory": parts["weights"] + parts["gradients"] + parts["optimizer"],
             "kv_per_token": cache.formulas["per_token"], "cross_kv_per_token": cache.formulas["cross_per_token"]}
    return CostsView(
        seq=seq, formula=latex(f.formula), formula_numbers=latex_numbers(f.formula, {**m.values, **at}),
        forward=f.forward, matmul=kinds["matmul"], attention=kinds["attention"],
        product=kinds["product"], backward=f.backward, training=f.training,
        heads_invariant=f.heads_derivative == 0, heads_derivative=latex(f.heads_derivative),
        held=tuple(LATEX_OF_HELD[q] for q in held[0]) if held is not None and held[1] == 0 else (),
        held_sentence=_held_sentence(m, held),
        kaplan=_number(kaplan["law_value"]), exact_per_token=_number(kaplan["exact_value"]),
        kaplan_difference=latex(kaplan_law.difference),
        kaplan_width=latex(sp.factor(width)), kaplan_width_value=int(width.xreplace(m.values)),
        weights_fp32=m.memory(dtype="fp32", optimizer="none").weights, weights_bf16=training_bytes.weights,
        training_bytes=training_bytes.weights + training_bytes.gradients + training_bytes.optimizer,
        kv_per_token=cache.per_token, cross_kv_per_token=cache.cross_per_token, kv_windows=cache.windows,
        exprs={key: sp.expand(sp.sympify(e).xreplace(at)) for key, e in exprs.items()},
        formula_expr=f.formula, heads_derivative_expr=f.heads_derivative, kaplan_difference_expr=kaplan_law.difference,
        kaplan_parts=kaplan_parts(m, seq))



def _held_sentence(m: Model, held) -> str:
    """The sentence of the catalog that says what holding G/A or A·D fixed does to the FLOPs beside what it does
    to the count: the count may still depend on A (T5's relative attention bias has a table per head)."""
    count = m.prove().fixed_ratio
    if held is None or count is None or {h.quantity for h in count.held} != set(held[0]):
        return "heads_held"
    return "heads_held_like_count" if count.invariant else "heads_held_unlike_count"


def _number(value) -> int | Fraction:
    """A JSON-ready exact number (an int, or ``"p/q"``) as an int or a Fraction."""
    return Fraction(value) if isinstance(value, str) else value

