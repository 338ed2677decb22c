"""FLOPs of a forward and a training step, read off the same Block tree as the count.

The conventions are PyTorch's ``torch.utils.flop_counter.FlopCounterMode`` on
the transformers model built with eager attention, so that a tiny real model
checks every term exactly:

* a matrix product ``[m, k] @ [k, n]`` costs ``2·m·n·k`` (a multiply and an
  add; the ``macs`` view halves it);
* a linear layer on ``t`` positions costs ``2·t·in·out``: its bias add, the
  norms, softmax and activations are not counted (as papers do; with
  ``elementwise=True`` they are, each by a stated convention); a table
  lookup (an embedding) costs nothing; a tied output head costs its matmul
  though it adds no parameter;
* attention adds its score matmul ``Q·Kᵀ`` and weighted sum, ``2·b·A·s²·d``
  each (``d`` the key or value width of one head), over the full ``s × s``
  square even under a causal mask; ``causal=True`` counts the causal half
  ``s·(s+1)/2`` instead;
* a mixture-of-experts layer counts only the experts a token is routed to;
* RoPE's frequency table is an outer product ``[w/2, 1] @ [1, s]``, which
  PyTorch computes element-wise: no matmul, not counted;
* the backward pass costs twice the forward matmuls (the gradient of each
  input and of each weight); training is forward plus backward, plus, with
  full activation recomputation, the repeated layers' forward once more (as
  transformers' activation checkpointing and Megatron-LM recompute them: the
  embeddings and the head run once);
* an encoder-decoder model reads ``s`` positions and writes ``s`` positions.

>>> from symparams import model
>>> f = model("bert-base").flops(s=128)
>>> f.forward, f.training
(22348431360, 67045294080)

BERT-base by hand: 12 layers of 12·H² weights on 128 positions, the pooler's
H² on one, and per layer two 128 × 128 products of width H:

>>> f.forward == 2 * 128 * 12 * 12 * 768**2 + 2 * 768**2 + 12 * 2 * (2 * 128 * 128 * 768)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import sympy as sp

from ..core.algebra import closed_form
from ..core.blocks import Block, tree_fact
from ..core.compute import (BATCH, SEQ, Attention, Product, Traced, costed, declares_attention, self_attentions,
                            traced, untraced)
from ..core.display import Reported
from ..core.errors import SymparamsError
from ..core.symbols import A
from ..core.values import parse_whole
from .flops_ranks import FlopsPerRank, parse_flops_layout
from .premise import premised_expr
from .proof import HELD
from .traced import require

#: the leaves whose weights multiply every position they see
MULTIPLIED = ("linear", "tensor")


@dataclass(frozen=True)
class FlopTerm:
    """One component's forward FLOPs, and what its backward pass costs per forward FLOP."""

    path: str
    what: str  # "matmul" (a weight's), "attention" (scores and weighted sum), "product" (any other), "elementwise"
    forward: sp.Expr  # in the model's symbols, s and b
    backward_factor: int  # 2 for a product of two tensors that need gradients, 0 without any
    traced_backward: sp.Expr | None = None  # a traced module's backward FLOPs, as the counter saw them
    recomputed: bool = False  # inside a repeated layer: full activation recomputation runs its forward again

    @property
    def backward(self) -> sp.Expr:
        """The backward FLOPs of the component: traced, or ``backward_factor`` times its forward."""
        return self.traced_backward if self.traced_backward is not None else self.backward_factor * self.forward


def _positions(per_sequence: bool) -> sp.Expr:
    return BATCH if per_sequence else BATCH * SEQ


def _square(attention: Attention, causal: bool) -> sp.Expr:
    """Query-key pairs of one sequence: s², or s·(s+1)/2 under ``causal`` for a causal module."""
    if causal and attention.causal and not attention.cross:
        return SEQ * (SEQ + 1) / 2
    return SEQ**2


def _leaf_weights(block: Block) -> sp.Expr:
    return sp.expand(sp.Mul(*block.shape).doit())


#: per attention score, the softmax's FLOPs: exp, the sum, the division (Hoffmann et al. 2022, appendix F)
SOFTMAX_PER_SCORE = 3
#: the titles of the FFN's output projections: the activation acts on what enters them
FFN_DOWN = ("ffn_down", "expert_down")


def flop_terms(tree: Block, causal: bool = False, elementwise: bool = False) -> tuple[FlopTerm, ...]:
    """Every component's forward FLOPs (symbolic), in the tree's order; ``elementwise`` adds the softmax,
    norm and activation terms (see :func:`_elementwise`)."""
    terms = _terms_causal(tree) if causal else _terms_full(tree)
    return terms + _elementwise(tree, causal) if elementwise else terms


def _layers(tree: Block) -> tuple[str, ...]:
    """The paths of the repeated layers: the outermost blocks that repeat or run more than once.  Full
    activation recomputation (Megatron's, transformers' ``activation_checkpointing_enable``) runs their
    forward pass again in the backward pass; the embeddings and the head run once."""
    found: list[str] = []
    for path, block, _, _ in tree.runs():
        if (block.repeat != 1 or block.calls != 1) and not _inside(path, found):
            found.append(path)
    return tuple(found)


def _inside(path: str, layers) -> bool:
    return any(path == layer or path.startswith(layer + ".") for layer in layers)


def _terms(tree: Block, causal: bool) -> tuple[FlopTerm, ...]:
    if traced(tree):  # inferred data: the counter's own products, never worked out again from the weights
        layers = _layers(costed(tree))
        return tuple(FlopTerm(path, item.what, item.forward, 0, item.backward, _inside(path, layers))
                     for path, block, _ in costed(tree).walk() for item in block.computes
                     if isinstance(item, Traced))
    terms, layers = [], _layers(tree)
    for path, block, runs, per_sequence in tree.runs():
        again = _inside(path, layers)
        if block.is_leaf and block.kind in MULTIPLIED:
            terms.append(FlopTerm(path, "matmul", sp.expand(2 * runs * _positions(per_sequence)
                                                            * _leaf_weights(block)), 2, recomputed=again))
        for item in block.computes:
            if isinstance(item, Attention):
                pairs = BATCH * item.heads * _square(item, causal)
                forward = 2 * runs * pairs * (item.key_width + item.value_width)
                terms.append(FlopTerm(path, "attention", sp.expand(forward), 2, recomputed=again))
            elif isinstance(item, Product):
                terms.append(FlopTerm(path, "product", sp.expand(runs * item.forward), item.backward,
                                      recomputed=again))
    return tuple(terms)


@tree_fact
def _terms_full(tree: Block) -> tuple[FlopTerm, ...]:
    return _terms(tree, False)


@tree_fact
def _terms_causal(tree: Block) -> tuple[FlopTerm, ...]:
    return _terms(tree, True)


def _elementwise(tree: Block, causal: bool) -> tuple[FlopTerm, ...]:
    """What papers leave out and PyTorch's counter does not see, off by default, each a stated convention:

    * softmax: 3 FLOPs per attention score (exp, sum, divide), as Hoffmann et al. (2022) count it;
    * a norm over d features: 2 per feature for its statistic and the normalisation, plus 1 per parameter
      of each feature (scale; shift): a LayerNorm 4·d, an RMSNorm 3·d per position;
    * the activation: 1 FLOP per element entering each FFN output projection (``ffn_down``,
      ``expert_down``: the activation's output, or a gated MLP's product of gate and up).

    Their backward pass is counted, like the products', as twice the forward.
    """
    terms, layers = [], _layers(tree)
    for path, block, runs, per_sequence in tree.runs():
        where, again = runs * _positions(per_sequence), _inside(path, layers)
        if block.is_leaf and block.kind == "norm":
            width = block.shape[0] if len(block.shape) == 1 else sp.Mul(*block.shape)
            per_feature = 2 + len(block.params)
            terms.append(FlopTerm(path, "elementwise", sp.expand(where * per_feature * width.doit()), 2,
                                  recomputed=again))
        elif block.is_leaf and block.title in FFN_DOWN and block.kind in MULTIPLIED:
            entering = block.shape[0]  # written (in, out), a linear layer's and an expert's slice alike
            terms.append(FlopTerm(path, "elementwise", sp.expand(where * sp.sympify(entering).doit()), 2,
                                  recomputed=again))
        for item in block.computes:
            if isinstance(item, Attention):
                scores = runs * BATCH * item.heads * _square(item, causal)
                terms.append(FlopTerm(path, "elementwise", sp.expand(SOFTMAX_PER_SCORE * scores), 2,
                                      recomputed=again))
    return tuple(terms)


class Flops(Reported):
    """The FLOPs of ``model`` on ``batch`` sequences of ``seq`` positions (see the module's conventions).

    ``forward``, ``backward`` and ``training`` are exact integers;
    ``formula`` is the forward count as a simplified SymPy expression in the
    model's symbols and ``s``, ``b``; ``terms`` lists each component's share.
    """

    def __repr__(self) -> str:
        return (f"<Flops {self.model.name}: forward {self.forward:,}, training {self.training:,} "
                f"(seq={self.seq}, batch={self.batch})>")

    def __init__(self, model, seq, batch=1, causal: bool = False, recompute: bool = False,
                 elementwise: bool = False, **layout):
        require(model, what="the FLOPs are")
        if not (declares_attention(model.tree) or traced(model.tree)):
            raise SymparamsError(f"{model.name}: the {model.family.name} family does not declare its attention "
                                 f"modules, so the FLOPs of attention are not known")
        if traced(model.tree) and (causal or elementwise):
            raise SymparamsError(f"{model.name}: its FLOPs are traced with PyTorch's counter, which counts the full "
                                 f"s × s square and no element-wise FLOPs: --causal and --elementwise are not "
                                 f"inferred")
        self.model = model
        self.seq = parse_whole("the sequence length s", seq)
        self.batch = parse_whole("the batch size b", batch)
        self.causal = bool(causal)
        self.recompute = bool(recompute)
        self.elementwise = bool(elementwise)
        self.traced = traced(model.tree)  # inferred data: PyTorch's counter's own products
        self.terms = flop_terms(model.tree, self.causal, self.elementwise)
        self.layout = parse_flops_layout(layout)

    @cached_property
    def per_rank(self):
        """The most loaded rank of the parallel layout (:class:`~.flops_ranks.FlopsPerRank`), or None without
        one."""
        return FlopsPerRank(self, self.layout) if self.layout.splits else None

    @cached_property
    def _values(self) -> dict:
        self.model._require_values("FLOPs")
        return {**self.model.values, SEQ: sp.Integer(self.seq), BATCH: sp.Integer(self.batch)}

    def _exact(self, expr: sp.Expr) -> int:
        value = sp.expand(expr.xreplace(self._values))
        if not value.is_Integer:
            raise SymparamsError(f"{self.model.name}: the FLOPs come to {value}, not a whole number")
        return int(value)

    @cached_property
    def by_term(self) -> list[tuple[FlopTerm, int]]:
        """Each term with its exact forward FLOPs."""
        return [(t, self._exact(t.forward)) for t in self.terms]

    @cached_property
    def forward(self) -> int:
        """FLOPs of one forward pass over the batch."""
        return sum(n for _, n in self.by_term)

    @cached_property
    def backward(self) -> int:
        """FLOPs of the backward pass (gradients of every input and weight)."""
        return sum(self._exact(t.backward) for t in self.terms)

    @cached_property
    def recomputed(self) -> int:
        """FLOPs full activation recomputation adds: the repeated layers' forward pass once more (0 without it)."""
        return sum(n for t, n in self.by_term if t.recomputed) if self.recompute else 0

    @cached_property
    def training(self) -> int:
        """Forward + backward (+ the layers' forward again with full activation recomputation)."""
        return self.forward + self.backward + self.recomputed

    @property
    def tokens(self) -> int:
        return self.seq * self.batch

    @property
    def forward_per_token(self) -> Fraction:
        return Fraction(self.forward, self.tokens)

    @property
    def training_per_token(self) -> Fraction:
        return Fraction(self.training, self.tokens)

    @cached_property
    def formula(self) -> sp.Expr:
        """The forward FLOPs in the model's symbols and ``s``, ``b`` (values not substituted)."""
        return forward_formula(self.model.tree, self.causal, self.elementwise)

    @cached_property
    def by_kind(self) -> dict[str, int]:
        """Forward FLOPs of the weight matmuls, the attention matmuls, any other products (and, when asked
        for, the element-wise terms)."""
        out = {"matmul": 0, "attention": 0, "product": 0, **({"elementwise": 0} if self.elementwise else {})}
        for t, n in self.by_term:
            out[t.what] += n
        return out

    @cached_property
    def laws(self) -> list[dict[str, Any]]:
        """Each published law per token at this model's values and ``s``, beside the exact count."""
        if "attention" in untraced(self.model.tree):  # a product growing with s² in no attention module found
            return []
        values = {**self.model.values, SEQ: sp.Integer(self.seq), BATCH: sp.Integer(self.batch)}
        out = []
        for law in laws(self.model.tree):
            out.append({"name": law.name, "formula": law.formula, "difference": law.difference,
                        "law_value": _exact_number(law.formula, values),
                        "exact_value": _exact_number(law.exact, values),
                        "difference_value": _exact_number(law.difference, values)})
        return out + [_sourced(law, values) for law in published_laws(self.model.tree) if hasattr(law, "parts")]

    @cached_property
    def laws_refused(self) -> list[dict[str, str]]:
        """The published laws not set beside this model, each with the reason."""
        if "attention" in untraced(self.model.tree):
            return []
        return [{"name": law.name, "reason": law.reason} for law in published_laws(self.model.tree)
                if not hasattr(law, "parts")]

    def utilisation(self, step_time, peak, gpus=1):
        """MFU, HFU and each training law's utilisation of this step done in ``step_time`` seconds on ``gpus``
        GPUs of ``peak`` FLOP/s (see :mod:`.utilisation`)."""
        from .utilisation import utilisation

        return utilisation(self, step_time, peak, gpus)

    @cached_property
    def _premised(self) -> tuple[sp.Expr, tuple[str, ...]]:
        """The forward FLOPs as the head-count proof reads them: an inferred model's under the premise (every
        whole-number division by A exact, the sizes following A moving with it; see :mod:`.premise`)."""
        return premised_expr(self.model, self.formula)

    @property
    def premise(self) -> tuple[str, ...]:
        """What the head-count proof assumes of an inferred model (``A divides H``, ``G = A``); () for others."""
        return self._premised[1]

    @cached_property
    def heads_derivative(self) -> sp.Expr:
        """∂F/∂A of the forward FLOPs (0: they do not depend on the head count), under :attr:`premise`."""
        return sp.factor_terms(sp.diff(self._premised[0], A))

    @cached_property
    def held(self) -> tuple[tuple[str, ...], sp.Expr] | None:
        """Where the FLOPs depend on A through G or D: the quantities held fixed (``G/A``, ``A*D``, as the
        parameter proof holds them) and ∂F/∂A once they are; None when nothing is held."""
        formula = self._premised[0]
        held = [h for h in HELD if h.symbol in formula.free_symbols]
        if self.heads_derivative == 0 or not held:
            return None
        formula = formula.xreplace({h.symbol: h.substitution for h in held})
        return tuple(h.quantity for h in held), sp.factor_terms(sp.diff(formula, A))

    def by_component(self, depth: int = 2) -> list[tuple[int, str, Block, int]]:
        """``(level, path, block, forward FLOPs)`` for the tree's components down to ``depth`` levels (with the
        blocks the costs add: an inferred type's weightless module that runs products, its tied LM head)."""
        rows = []
        root = self.model.tree.name
        for path, block, _ in costed(self.model.tree).walk():
            level = path.count(".")
            if 1 <= level <= depth:
                flops = sum(n for t, n in self.by_term if t.path == path or t.path.startswith(path + "."))
                rows.append((level, path[len(root) + 1:], block, flops))
        return rows

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model.name, "head": self.model.head, "seq": self.seq, "batch": self.batch,
                "causal": self.causal, "recompute": self.recompute, "elementwise": self.elementwise, "traced": self.traced,
                "forward": self.forward, "backward": self.backward, "training": self.training,
                "forward_per_token": _json_fraction(self.forward_per_token),
                "training_per_token": _json_fraction(self.training_per_token),
                "by_kind": self.by_kind,
                "formula": str(self.formula),
                "depends_on_heads": self.heads_derivative != 0, "premise": list(self.premise),
                "heads_derivative": str(self.heads_derivative),
                "held_fixed": None if self.held is None else {"quantities": list(self.held[0]),
                                                               "heads_derivative": str(self.held[1])},
                "laws": [_json_law(law) for law in self.laws], "laws_refused": self.laws_refused,
                **({"per_rank": self.per_rank.to_dict()} if self.per_rank is not None else {})}


def published_laws(tree: Block) -> tuple:
    """The codebases' and papers' laws at ``tree`` (:mod:`.laws`), their exact side split from its FLOP terms,
    or why each is not set beside it."""
    from . import laws

    return laws.published_laws(tree, flop_terms(tree))


def _sourced(law, values: dict) -> dict[str, Any]:
    """A published source's law (:class:`.laws.SourcedLaw`) per token at ``values``, as :attr:`Flops.laws` lists
    it: the Kaplan laws' fields, its source, what it is compared with, its parts and its assumptions."""
    from .laws import departures

    def number(expr):
        return _exact_number(expr, values)

    return {"name": law.name, "formula": law.formula, "difference": law.difference,
            "law_value": number(law.formula), "exact_value": number(law.exact),
            "difference_value": number(law.difference), "source": law.source, "compares": law.compares,
            "assumes": departures(law, values),
            "terms": [{"part": part, "exact": exact, "law": formula, "difference": difference,
                       "difference_value": number(difference)} for part, exact, formula, difference in law.terms()]}


def _json_law(law: dict) -> dict[str, Any]:
    out = {"name": law["name"], "formula": str(law["formula"]), "per_token": law["law_value"],
           "exact_per_token": law["exact_value"], "difference": str(law["difference"]),
           "difference_per_token": law["difference_value"]}
    if "source" in law:  # a published codebase's or paper's law: its source, and the difference by part
        out.update(source=law["source"], compares=law["compares"], assumes=law["assumes"],
                   terms=[{"part": t["part"], "exact": str(t["exact"]), "law": str(t["law"]),
                           "difference": str(t["difference"]), "difference_per_token": t["difference_value"]}
                          for t in law["terms"]])
    return out


def _exact_number(expr: sp.Expr, values: dict):
    value = sp.expand(expr.xreplace(values))
    return _json_fraction(Fraction(int(value.p), int(value.q)))


def _json_fraction(value: Fraction):
    return value.numerator if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def forward_formula(tree: Block, causal: bool = False, elementwise: bool = False) -> sp.Expr:
    """The forward FLOPs of ``tree``, simplified."""
    return closed_form(sp.Add(*(t.forward for t in flop_terms(tree, causal, elementwise))))


@dataclass(frozen=True)
class Law:
    """A published approximation of the FLOPs per token, set beside the exact count.

    ``formula`` is the law in the model's symbols and ``s``; ``difference``
    the exact count per token minus the law, simplified (what the law leaves
    out or counts differently).
    """

    name: str
    formula: sp.Expr
    exact: sp.Expr
    difference: sp.Expr


def non_embedding(tree: Block) -> sp.Expr:
    """Kaplan et al.'s N: the parameters one token uses (all of a dense model's; a mixture of experts' router,
    shared and top-k experts) but the embedding tables (token, position, segment)."""
    tables = sp.Add(*(copies * block.count for _, block, copies in tree.walk() if block.kind == "embedding"))
    return sp.expand(tree.active_total - tables)


def attention_width(tree: Block) -> sp.Expr:
    """``n_layer·d_attn`` summed over the self-attention modules one position passes: Σ runs·heads·key_width."""
    return sp.expand(sp.Add(*(runs * attention.heads * attention.key_width
                              for runs, attention in self_attentions(tree))))


@tree_fact
def laws(tree: Block) -> tuple[Law, ...]:
    """Kaplan et al. (2020): forward ``2N + 2·n_layer·s·d_attn`` and training ``6N`` per token; PaLM (Chowdhery
    et al. 2022, appendix B): training ``6N + 12·L·H·Q·s`` per token (``H·Q`` the heads' total width), with N
    the non-embedding count a token uses (:func:`non_embedding`), each beside the exact count per token
    (full s × s attention)."""
    per_token = sp.expand(forward_formula(tree) / (BATCH * SEQ))
    n = non_embedding(tree)
    width = attention_width(tree)
    kaplan_forward = 2 * n + 2 * width * SEQ
    palm = 6 * n + 12 * width * SEQ
    return (
        Law("kaplan_forward", kaplan_forward, per_token, _difference(per_token, kaplan_forward)),
        Law("kaplan_training", 6 * n, 3 * per_token, _difference(3 * per_token, 6 * n)),
        Law("palm_training", palm, 3 * per_token, _difference(3 * per_token, palm)),
    )


def _difference(exact: sp.Expr, law: sp.Expr) -> sp.Expr:
    return sp.factor_terms(sp.expand(exact - law))
