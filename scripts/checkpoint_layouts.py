"""Write how released checkpoints store a mixture's experts, from the installed transformers' conversion mapping.

    python scripts/checkpoint_layouts.py           # rewrite symparams/families/data/checkpoint_layouts.json
    python scripts/checkpoint_layouts.py --check   # exit status 1 if the file is not what this transformers gives

transformers 5 fuses the routed experts at load (``transformers/conversion_mapping.py``,
``get_checkpoint_conversion_mapping``): a checkpoint's per-expert tensors
(``mlp.experts.3.gate_proj.weight``) are stacked along a new first dimension (``MergeModulelist(dim=0)``) and, for
``gate_up_proj``, the two projections concatenated along the output dimension (``Concatenate(dim=1)``); a
``WeightRenaming`` renames a module (Mixtral's ``block_sparse_moe`` is ``mlp``).  For every model type whose
mapping reaches ``experts``, this records the renamings and those converters, source patterns in order; a type whose mapping holds
another operation, or a renaming that is not a plain name, is recorded with the reason the audit refuses it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "symparams" / "families" / "data" / "checkpoint_layouts.json"


def layout(conversions) -> dict:
    """One type's renamings and expert converters, or ``{"refused": why}``."""
    from transformers.core_model_loading import Concatenate, MergeModulelist, WeightConverter, WeightRenaming

    out = {"rename": [], "experts": []}
    for c in conversions:
        sources, targets = list(c.source_patterns), list(c.target_patterns)
        if isinstance(c, WeightRenaming):
            if len(sources) != 1 or len(targets) != 1 or not all(re.fullmatch(r"[\w.]+", p) for p in sources + targets):
                return {"refused": f"a renaming that is not a plain name: {sources} -> {targets}"}
            out["rename"].append([sources[0], targets[0]])
            continue
        ops = [(type(op), getattr(op, "dim", None)) for op in c.operations]
        plain = ops == [(MergeModulelist, 0)] and len(sources) == 1
        halves = ops == [(MergeModulelist, 0), (Concatenate, 1)] and len(sources) > 1
        if not isinstance(c, WeightConverter) or len(targets) != 1 or not (plain or halves):
            return {"refused": f"a conversion other than stacking experts: {sources} -> {targets}"}
        out["experts"].append({"from": sources, "to": targets[0]})
    return out


def layouts() -> dict:
    from transformers.conversion_mapping import _MODEL_TO_CONVERSION_PATTERN, get_checkpoint_conversion_mapping

    types = sorted(set(_MODEL_TO_CONVERSION_PATTERN) | set(_MODEL_TO_CONVERSION_PATTERN.values()))
    found = {}
    for t in types:
        conversions = get_checkpoint_conversion_mapping(t)
        # the types whose checkpoints store experts otherwise than the model holds them
        if conversions and any("experts" in p for c in conversions for p in c.source_patterns):
            found[t] = layout(conversions)
    return found


def text() -> str:
    import transformers

    body = ",\n".join(f"  {json.dumps(t)}: {json.dumps(v, sort_keys=True)}" for t, v in sorted(layouts().items()))
    return f'{{\n  "transformers": {json.dumps(transformers.__version__)},\n{body}\n}}\n'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    new = text()
    if args.check:
        return 0 if DATA.read_text(encoding="utf-8") == new else 1
    DATA.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
