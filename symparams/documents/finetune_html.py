"""The fine-tuning section as the live page shows it: the documents' sentences and table, as HTML.

Its figures are worked out once, at the model's values (LoRA's and QLoRA's bytes hold ceilings the page's
script does not compute), so the page says they do not follow the values above, as it says of the articles.
"""

from __future__ import annotations

from .environment import catalog
from .finetune_text import finetune_text
from .markup import prose_html
from .mathml import MATHML_NS, mathml, mathml_inner


def finetune_page(d, lang: str) -> dict:
    """The section of ``d`` (a :class:`~.derivation.Derivation` with a fine-tuning view) in ``lang``."""
    t = catalog(lang)
    w = t["finetune"]
    f = finetune_text(d.finetune, d.name, d.target, lang)
    if f["refused"]:
        return {"refused": prose_html(w["refused"], model=d.name, reason=f["reason"], rank=f["rank"])}
    lead = prose_html(f["lead"], model=d.name, rank=f["rank"]) + (t["sp"] + prose_html(f["moe_note"]) if f["moe"] else "")
    nf4 = ""
    if f["qlora"]:
        nf4 = t["sp"] + prose_html(f["nf4"]) + (t["sp"] + prose_html(w["kept_experts"]) if f["moe"] else "")
        closing = ((prose_html(w["saving"], qlora_gib=f["qlora_gib"], lora_gib=f["lora_gib"], saved=f["saved"])
                    + t["sp"] if f["fewer"] else "")
                   + prose_html(w["serving"], lora_serving=f["lora_serving"], qlora_serving=f["qlora_serving"]))
    else:
        closing = t["sp"].join((prose_html(w["no_qlora"], model=d.name, reason=f["qlora_refusal"]),
                                prose_html(w["lora_gib"], lora_gib=f["lora_gib"]),
                                prose_html(w["serving_lora"], lora_serving=f["lora_serving"])))
    cli = prose_html(w["cli" if d.target else "cli_config"], target=d.target, head_option=f["head_option"],
                     rank=f["rank"], targets=f["targets"])
    return {
        "refused": "", "lead": lead, "static": prose_html(w["static"]),
        "adapter": prose_html(f["adapter_text"], wrapped=f["wrapped"]),
        "formula": _display("<msub><mi>P</mi><mtext>LoRA</mtext></msub><mo>=</mo>"
                            + mathml_inner(d.finetune.formula_expr)),
        "count": prose_html(w["count"], rank=f["rank"], adapter=f["adapter"], share=f["share"], total=f["total"],
                            base=f["base"]),
        "memory_lead": prose_html(w["memory_lead"]), "part": prose_html(w["part"]),
        "columns": [prose_html(w[c]) for c in f["columns"]],
        "rows": [{"title": prose_html(w[row["key"]]), "bytes": row["bytes"]} for row in f["rows"]],
        "conventions": prose_html(w["conventions"]) + nf4, "closing": closing + t["sp"] + cli,
    }


def _display(inner: str) -> str:
    """A display formula as the page writes its others (MathML's namespace is HTML's own there)."""
    return mathml(inner, display=True).replace(f' xmlns="{MATHML_NS}"', "")
