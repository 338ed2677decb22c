"""The laws' section as a template sees it, in one language: each law's rows and the words for each difference."""

from __future__ import annotations

from fractions import Fraction

from ..core.formatting import thousands
from .environment import catalog


def number_text(value: int | Fraction) -> str:
    """A whole number with thousands separators, or an exact ratio ``p/q``.

    >>> number_text(-1234567), number_text(Fraction(7, 2))
    ('-1,234,567', '7/2')
    """
    if isinstance(value, Fraction) and value.denominator != 1:
        return f"{thousands(value.numerator)}/{value.denominator}"
    return thousands(int(value))


def laws_text(v, model: str, lang: str, target: str | None = None) -> dict:
    """``v`` (a :class:`~.laws_view.LawsView`) as plain data in ``lang``: per law its name, source, what it is
    compared with, formulas, values and a row per differing part with the catalog's words for it."""
    t = catalog(lang)["laws"]
    laws = [{"title": t["names"][law.name], "source": t["sources"].get(law.source, law.source), "compares": t["compares"][law.compares],
             "formula": law.formula, "exact": law.exact, "difference": law.difference,
             "law_value": number_text(law.law_value), "exact_value": number_text(law.exact_value),
             "difference_value": number_text(law.difference_value), "same": not law.terms,
             "rows": [{"part": t["parts"][term.part], "exact": term.exact, "law": term.law,
                       "difference": term.difference, "value": number_text(term.value),
                       "why": t["why"].get(f"{law.name}/{term.part}", t["why_other"])} for term in law.terms]}
            for law in v.laws]
    refused = [{"title": t["names"][name], "reason": t["reasons"].get(reason, reason)} for name, reason in v.refused]
    # every law refused for one reason (an encoder, no LM head): that reason once, not a list
    reasons = {r["reason"] for r in refused}
    alone = reasons.pop() if not laws and len(reasons) == 1 else ""
    # the command that prints them: with the LM head the laws were set beside
    command = None if not target else target + (" --head causal-lm" if v.head_added else "")
    return {"seq": thousands(v.seq), "seq_arg": str(v.seq), "head_added": v.head_added, "laws": laws,
            "refused": [] if alone else refused, "alone": alone, "model": model, "target": command}
