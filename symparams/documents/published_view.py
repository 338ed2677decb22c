"""A preset's published sizes reconciled with the exact count: the numbers the introduction and the
conclusion state beside each figure of :mod:`symparams.families.published`.

Every number comes from the tree's one exact evaluation: the released model's total (with its LM head, as
:meth:`~symparams.core.model.Model.as_released` counts it), its active count, and, for a mixture of
experts, the routed experts' share of the tree as a SymPy expression evaluated at the model's values.

>>> from symparams import model
>>> [(f["claim"], f["count"]) for f in published_view(model("mixtral-8x7b"), "mixtral-8x7b")]
[('46.7B', 46702792704), ('12.9B', 12879925248)]
"""

from __future__ import annotations

import sympy as sp

from ..analysis.explain import OPTIONAL as LEFT_OUT, parse_claim
from ..core.algebra import whole
from ..core.model import Model
from ..families.published import Published, figures


def published_view(m: Model, preset: str | None) -> tuple[dict, ...]:
    """Each published figure of ``preset`` with the exact numbers that reconcile it (empty without one)."""
    if preset is None:
        return ()
    released = m.as_released()
    head = released.head if released is not m else None
    return tuple(_view(f, m, released, head) for f in figures(preset))


def _view(f: Published, m: Model, released: Model, head: str | None) -> dict:
    base = {"claim": f.claim, "counts": f.counts, "source": f.source, "note": f.note, "parts": f.parts,
            "head": head}
    if f.counts == "checkpoint":
        return base
    if f.counts == "active":
        return {**base, **_rounding(f.claim, released.active), "base": m.active, "routed": _routing(released)}
    ledger = m.explain(f.claim)  # the released model's ledger
    view = {**base, "count": ledger.count, "base": m.count, "equal": ledger.equal, "explained": ledger.explained,
            "cut": ledger.truncated, "digits": ledger.digits,
            "without": tuple(d for d in ledger.departures if d in LEFT_OUT),
            "adding": tuple(d for d in ledger.departures if d not in LEFT_OUT)}
    if f.note == "experts":
        view["experts"] = experts_shared(released)
    return view


def _rounding(claim: str, count: int) -> dict:
    """Whether ``claim`` is ``count`` rounded to its digits, or cut to them (a paper that truncates)."""
    c = parse_claim(claim)
    rounded = c.explains(count, False)
    cut = not rounded and c.explains(count, False, cut=True)
    return {"count": count, "equal": c.equals(count, False), "explained": rounded or cut, "cut": cut,
            "digits": c.digits, "without": (), "adding": ()}


def _routing(m: Model) -> dict:
    """How many routed experts a token passes through of how many, where every expert layer agrees."""
    pairs = {(whole(block.used, m.values), whole(block.repeat, m.values))
             for _, block, _ in m.tree.walk() if block.used is not None}
    return dict(zip(("used", "experts"), pairs.pop())) if len(pairs) == 1 else {}


def routed_total(tree) -> sp.Expr:
    """The parameters of every routed expert of ``tree``, as an expression in its symbols."""
    return sp.Add(*(copies * block.count for _, block, copies in tree.walk() if block.used is not None))


def experts_shared(m: Model) -> dict:
    """Why a mixture of E experts is not E dense models: the parts every expert shares (attention, embeddings,
    norms, router, head) are held once.  ``single`` is the shared parts with one expert per layer (the dense
    model the name multiplies); E copies of it count the shared parts E − 1 times too many.

    >>> from symparams import model
    >>> v = experts_shared(model("mixtral-8x7b", head="causal-lm"))
    >>> v["experts"], v["shared"], v["single"], v["copies"] - (v["experts"] - 1) * v["shared"]
    (8, 1605636096, 7242780672, 46702792704)
    """
    routed = [block for _, block, _ in m.tree.walk() if block.used is not None]
    experts = {whole(block.repeat, m.values) for block in routed}
    if len(experts) != 1:
        raise ValueError(f"{m.name}: routed blocks of different expert counts {sorted(experts)}")
    n = experts.pop()
    shared = m.count - whole(routed_total(m.tree), m.values)
    single = shared + whole(routed_total(m.tree) / n, m.values)
    return {"experts": n, "used": whole(routed[0].used, m.values), "shared": shared, "single": single,
            "copies": n * single, "extra": (n - 1) * shared}


def released_bf16(m: Model) -> int:
    """The bytes of the released model's weights in bf16 (with its LM head, as a checkpoint holds them)."""
    return m.as_released().memory(dtype="bf16", optimizer="none").weights
