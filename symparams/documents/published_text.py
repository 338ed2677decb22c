"""A preset's published sizes as the introduction, the conclusion and the memory table state them, in one
language (the numbers are :mod:`.published_view`'s, the prose the catalog's ``published`` entries)."""

from __future__ import annotations

from fractions import Fraction

from ..analysis.explain import parse_claim
from ..core.formatting import decimal, thousands
from .environment import catalog
from .formulas import math_count
from .head_change import untied_output


def published_text(d, lang: str) -> dict:
    """``{"intro", "conclusion", "memory"}``: the sentences on ``d``'s published sizes ("" without any), not yet
    spaced as Chinese text (the caller does that)."""
    t = catalog(lang)["published"]
    head = catalog(lang)["intro"]["lm_head"]  # "525,336,576 more than the base model"
    return {"intro": " ".join(_intro(f, i, t) for i, f in enumerate(d.published)),
            "conclusion": _conclusion(d, t, head), "memory": _memory(d, t)}


def _fill(text: str, **values) -> str:
    for key, value in values.items():
        text = text.replace(f"[[{key}]]", str(value))
    return text


def _source(f: dict, t: dict) -> str:
    """Where the figure was published, as the catalog names that source in its language."""
    return t["sources"].get(f["source"], f["source"])


def _intro(f: dict, i: int, t: dict) -> str:
    """One figure: its source, the exact count it is, and the accounting that makes them agree."""
    if f["counts"] == "checkpoint":
        main, extra = f["parts"]
        return _fill(t["notes"][f["note"]], claim=f["claim"], source=_source(f, t), main=main, extra=extra)
    lead = "lead_active" if f["counts"] == "active" else "lead_total" if i == 0 else "lead_again"
    # what the LM head adds is the introduction's sentence before this one: "with its causal-lm head" suffices
    text = _fill(t[lead], claim=f["claim"], source=_source(f, t)) + _verdict(f, t)
    if f["cut"] and f["head"] and parse_claim(f["claim"]).explains(f["base"], False):
        text += _fill(t["base_rounds"], head=f["head"], base=thousands(f["base"]), claim=f["claim"])
    if f.get("routed"):
        text += _fill(t["routed"], **{k: thousands(v) for k, v in f["routed"].items()})
    if f["note"] == "experts":
        text += " " + _experts(f, t)
    elif f["note"]:
        text += " " + t["notes"][f["note"]]
    return text


def _verdict(f: dict, t: dict) -> str:
    how = _fill(t["with_head"], head=f["head"]) if f["head"] else ""
    for key in ("without", "adding"):
        if f[key]:
            how += _fill(t[key], terms=t["sep"].join(t["terms"].get(name, name) for name in f[key]))
    how = how.replace("）（", "，")  # two Chinese parentheticals in a row read as one
    key = "equal" if f["equal"] else "cut" if f["cut"] else "rounded" if f["explained"] else "unexplained"
    digits = t["digit" if f["digits"] == 1 else "digits"].replace("[[n]]", str(f["digits"]))
    claim = parse_claim(f["claim"])
    rounded = claim.written(claim.rounded(f["count"], False))  # what a rounding source would have written
    return _fill(t[key], claim=f["claim"], count=thousands(f["count"]), how=how, digits=digits, rounded=rounded)


def _experts(f: dict, t: dict) -> str:
    """Why E experts are not E dense models: the shared parts are held once."""
    v = f["experts"]
    name, product = f["parts"]
    dense = name.rsplit("×", 1)[-1]  # 8×7B: the dense model the name multiplies
    return _fill(t["notes"]["experts"], name=name, product=product, dense=dense, experts=v["experts"],
                 shared=thousands(v["shared"]), single=thousands(v["single"]), copies=thousands(v["copies"]),
                 more=v["experts"] - 1, copies_math=math_count(v["copies"]), shared_math=math_count(v["shared"]),
                 total_math=math_count(f["count"]))


def _conclusion(d, t: dict, head: dict) -> str:
    """The released model's count (where an LM head is added to the one counted) and each figure, briefly."""
    out = []
    totals = [f for f in d.published if f["counts"] == "total"]
    if totals and totals[0]["head"]:
        change = d.with_lm_head - d.total
        said = _fill(head["more"], n=thousands(change)) if change else head["same"]
        if output := untied_output(d.head_change):  # what the base model lacks, named where the figure is
            said += _fill(head["untied_named"], name=output.name)
        # a head that adds nothing leaves the count just given: say so rather than print it again
        key = "conclusion_released" if change else "conclusion_released_same"
        out.append(_fill(t[key], head=totals[0]["head"], model=d.name, count=thousands(d.with_lm_head), change=said))
    for f in d.published:
        if f["counts"] == "active":
            out.append(_fill(t["conclusion_active"], count=thousands(f["count"])))
        if f["counts"] == "checkpoint":
            out.append(_fill(t["conclusion_checkpoint"], claim=f["claim"]))
            continue
        key = "equal" if f["equal"] else "cut" if f["cut"] else "rounded" if f["explained"] else "unexplained"
        digits = t["digit" if f["digits"] == 1 else "digits"].replace("[[n]]", str(f["digits"]))
        out.append(_fill(t["conclusion_" + key], claim=f["claim"], count=thousands(f["count"]), source=_source(f, t),
                         digits=digits))
        if f["note"] in t["conclusion_notes"]:  # the figure's history, said again where the figure is
            out.append(t["conclusion_notes"][f["note"]])
    return " ".join(out)


def _memory(d, t: dict) -> str:
    """Which model the memory table counts, and the released model's weights where they differ."""
    if not d.released_bf16 or not d.published or d.with_lm_head == d.total:  # a tied head holds nothing more
        return ""
    return _fill(t["memory_released"], head=d.lm_head, count=thousands(d.with_lm_head),
                 bytes=thousands(d.released_bf16), gib=decimal(Fraction(d.released_bf16, 2**30)))
