"""The fine-tuning section's data as a template sees it, in one language (the prose is the catalog's)."""

from __future__ import annotations

from fractions import Fraction

from ..core.formatting import decimal, percent, thousands
from .environment import catalog
from .finetune_view import PARTS


def finetune_text(v, model: str, target: str, lang: str) -> dict:
    """``v`` (a :class:`~.finetune_view.FinetuneView`) as plain data: the sentences that carry markup of their own
    (module names, the head) put together here, the numbers as text, the memory table's rows."""
    words = catalog(lang)
    t = words["finetune"]
    # the sentences whose parts are mini-markup themselves (code spans) are put together before they are rendered;
    # the model's name stays a value ([[model]]), escaped as one
    released = t["released_head"].replace("[[head]]", v.head) if v.head else t["released"]
    out = {"refused": bool(v.refusal), "reason": v.refusal, "model": model, "rank": str(v.rank)}
    if v.refusal:
        return out
    names = words["list_sep"].join(f"`{name}`" for name in dict.fromkeys(path.rsplit(".", 1)[-1] for path in v.modules))
    where = (t["all_linear"] if v.output else t["all_linear_none"]) if v.targets is None else t["attention"].replace("[[names]]", names)
    if v.moe == "parameters":
        where = t["all_linear_moe"]
    kept = t["kept_output"] if v.output else t["kept"]
    columns = [("lora", v.lora)] + ([("qlora", v.qlora)] if v.qlora else [])
    rows = [{"key": part, "bytes": [thousands(figures[part]) for _, figures in columns]} for part in (*PARTS, "total")]
    out.update(
        lead=t["lead"].replace("[[where]]", where).replace("[[released]]", released), moe=bool(v.moe),
        moe_note=t[f"moe_{v.moe}"] if v.moe else "",
        adapter_text=t["adapter_moe" if v.moe == "parameters" else "adapter"].replace("[[names]]", names), nf4=t["nf4"].replace("[[kept]]", kept),
        formula=v.formula, wrapped=thousands(v.wrapped), adapter=thousands(v.adapter),
        base=thousands(v.base), total=thousands(v.total), share=percent(v.share),
        columns=[key for key, _ in columns], rows=rows, qlora=v.qlora is not None, qlora_refusal=v.qlora_refusal,
        lora_gib=_gib(v.lora["total"]), lora_serving=thousands(v.lora["serving"]),
        targets=",".join(v.targets) if v.targets is not None else "all-linear",
        head_option=f" --head {v.head}" if v.head else "", target=target)
    if v.qlora:
        out.update(qlora_gib=_gib(v.qlora["total"]), saved=thousands(v.lora["total"] - v.qlora["total"]),
                   qlora_serving=thousands(v.qlora["serving"]),
                   fewer=v.qlora["total"] < v.lora["total"])
    return out


def _gib(n: int) -> str:
    return decimal(Fraction(n, 2**30))
