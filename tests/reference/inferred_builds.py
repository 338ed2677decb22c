"""transformers' own count of a config.json on the meta device, and the shipped inferred entry it is checked
against (the cross-checks of the inferred formulas of one kind of structure each)."""

import copy

import transformers

from symparams.analysis.inference.meta import meta_device
from symparams.families import inferred

#: symparams' class names → transformers' auto classes, independently of the package's own table
AUTO = {"base": "AutoModel", "causal-lm": "AutoModelForCausalLM", "masked-lm": "AutoModelForMaskedLM",
        "seq2seq-lm": "AutoModelForSeq2SeqLM"}


def built(config: dict, cls: str) -> int:
    """The parameters of the model transformers builds from ``config`` (a config.json's dict) for ``cls``; the dict
    is copied, as a config class may rewrite a list it is given in place (Gemma 4's last layer)."""
    values = copy.deepcopy({k: v for k, v in config.items() if k != "model_type"})
    hf = transformers.AutoConfig.for_model(config["model_type"], **values)
    with meta_device():
        model = getattr(transformers, AUTO[cls]).from_config(hf)
    return sum(p.numel() for p in model.parameters())


def entry(model_type: str, cls: str) -> dict:
    """The shipped entry of ``model_type``'s ``cls``, which must be exact."""
    found = (inferred.entries(model_type) or {}).get(cls)
    assert found is not None and found["exact"], f"{model_type} {cls}: not exact in the shipped data"
    return found
