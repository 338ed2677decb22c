"""The laws' section on the live page: the same data as :mod:`.laws_text`, its prose as HTML and its formulas as
MathML.  Its figures are the document's values; the page says they do not follow the controls."""

from __future__ import annotations

import sympy as sp

from .environment import catalog
from .laws_text import laws_text
from .markup import prose_html
from .mathml import mathml, mathml_inner

_LHS = {"law": "<msub><mi>F</mi><mtext>law</mtext></msub>",
        "difference": "<msub><mi>F</mi><mtext>exact</mtext></msub><mo>−</mo><msub><mi>F</mi><mtext>law</mtext></msub>"}


def _math(expr: sp.Expr, lhs: str = "", display: bool = False) -> str:
    inner = (lhs + "<mo>=</mo>" if lhs else "") + mathml_inner(expr)
    return mathml(inner, display=display).replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "")


def laws_page(v, model: str, lang: str, target: str | None) -> dict:
    """``v`` (a :class:`~.laws_view.LawsView`) for the page template, in ``lang``."""
    t, data = catalog(lang)["laws"], laws_text(v, model, lang, target)
    laws = []
    for law, shown in zip(v.laws, data["laws"]):
        rows = [{"part": prose_html(row["part"]), "difference": _math(term.difference_expr), "value": row["value"],
                 "why": prose_html(row["why"])} for term, row in zip(law.terms, shown["rows"])]
        laws.append({"title": prose_html(shown["title"]),
                     "source": prose_html(t["source"], source=shown["source"], compares=shown["compares"]),
                     "formula": _math(law.formula_expr, _LHS["law"], display=True),
                     "difference": _math(law.difference_expr, _LHS["difference"], display=True),
                     "values": prose_html(t["values"], law=shown["law_value"], exact=shown["exact_value"],
                                          difference=shown["difference_value"]),
                     "same": shown["same"], "rows": rows})
    lead = prose_html(t["lead"])
    if laws:  # the sentences on how each law below is set beside the count
        lead += catalog(lang)["sp"] + prose_html(t["lead_laws"], seq=data["seq"])
    if v.head_added:
        lead += catalog(lang)["sp"] + prose_html(t["head_added"], model=model)
    refused_lead = prose_html(t["refused_lead"], model=model) if data["refused"] else ""
    alone = prose_html(t["none_applied"], model=model, reason=data["alone"]) if data["alone"] else ""
    return {"lead": lead, "laws": laws, "refused_lead": refused_lead, "alone": alone,
            "refused": [prose_html(r["title"]) + catalog(lang)["colon"] + prose_html(t["refused"], reason=r["reason"])
                        for r in data["refused"]],
            "cli": prose_html(t[("cli" if target else "cli_config") + ("" if laws else "_none")], target=data["target"],
                              seq=data["seq_arg"])}
