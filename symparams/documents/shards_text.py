"""The shards section's data as a template sees it, in one language (the prose is the catalog's)."""

from __future__ import annotations

from fractions import Fraction

from ..core.formatting import percent, thousands
from .environment import catalog


def shards_text(v, model: str, lang: str) -> dict:
    """``v`` (a :class:`~.shards_view.ShardView`) as plain data: the terms' rows, the formulas, the bytes as
    text and the sentence on how the model's layers differ from a GPT layer ("" where they do not)."""
    t = catalog(lang)["shards"]
    rows = [{"title": t["terms"][term["key"]], "block": t["blocks"][term["block"]], "bytes": term["bytes"],
             "tensor": t["split"] if term["split"] == "tensor" else t["whole"], "sequence": t["split"]}
            for term in v.terms]
    listed = [t["departures"][key] for key in v.departures or ()]
    listing = t["and"].join(filter(None, (t["list_sep"].join(listed[:-1]), listed[-1]))) if listed else ""
    # the list is mini-markup (math) itself: put in before the sentence is rendered, not escaped as a value
    coverage = t["unread"] if v.departures is None else t["departs"].replace("[[list]]", listing) if listed \
        else t["fits"]
    numbers = {key: thousands(n) for key, n in v.activations.items()}
    share = percent(Fraction(v.whole, v.activations["tensor"])) if v.tensor else ""
    return {"seq": thousands(v.seq), "seq_arg": str(v.seq), "layers": thousands(v.layers), "rows": rows,
            "layer": v.layer, "layer_tensor": v.layer_tensor, "layer_sequence": v.layer_sequence,
            "model_tensor": v.model_tensor, "coverage": coverage, "tensor": str(v.tensor or ""),
            "refusal": v.refusal, "bytes": numbers, "whole": thousands(v.whole), "share": share,
            "model": model}
