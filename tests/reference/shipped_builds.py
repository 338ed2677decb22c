"""The configurations a shipped inferred entry is checked at, and the models transformers builds from them.

Two configurations per entry: the type's default (the bare ``{"model_type": T}``
over the seeds the engine started from, see :mod:`symparams.analysis.inference.seeds`),
and the small odd one the entry's costs were checked on (``costs.check.values``:
the only concrete configuration an entry records; its parameter verification
keeps the number of configurations and their seed, not the values).  A config is
handed as one dict, a config.json, to both transformers and symparams.
"""

from __future__ import annotations

import copy
import json
import re
from functools import lru_cache

import transformers

from symparams.analysis.inference.meta import meta_device
from symparams.analysis.inference.probing import _nested_defaults, retiled
from symparams.analysis.inference.probing import nested as sub_configs
from symparams.analysis.inference.seeds import seeded
from symparams.families import inferred

#: symparams' class names → transformers' auto classes, written out (not the package's table)
AUTO = {"base": "AutoModel", "causal-lm": "AutoModelForCausalLM", "masked-lm": "AutoModelForMaskedLM",
        "seq2seq-lm": "AutoModelForSeq2SeqLM"}

#: classes an auto class cannot build from the type's config, written out: (type, class) → (transformers class,
#: the sub-config it takes).  Funnel's AutoModel names two classes and picks by ``architectures``, which a bare
#: config lacks; MusicGen's decoder classes take the decoder's config, not the composite one.
BY_NAME = {("funnel", "base"): ("FunnelModel", None),
           ("musicgen", "base"): ("MusicgenModel", "decoder"),
           ("musicgen", "causal-lm"): ("MusicgenForCausalLM", "decoder"),
           ("musicgen_melody", "base"): ("MusicgenMelodyModel", "decoder"),
           ("musicgen_melody", "causal-lm"): ("MusicgenMelodyForCausalLM", "decoder")}

#: a per-layer list the config class checks against a layer count, which the odd configuration moves: (list,
#: layer count), the list's default pattern retiled to the count (GPT-Neo's ``attention_types``, run-length)
RETILED = {"gpt_neo": ("attention_types", "num_layers")}

_INDEX = re.compile(r"\.(?:[A-Za-z]+_)?\d+(?=\.|$)")  # ``.3`` of a ModuleList, ``.expert_3`` of NLLB-MoE's experts
_KIND = re.compile(r"\*\d+(?=\.|$)")  # the inferred tree's layers of one kind: ``layers.*2``


@lru_cache(maxsize=1)
def shipped() -> tuple[dict, ...]:
    """Every entry of the shipped data file that is marked exact."""
    with open(inferred.DATA, encoding="utf-8") as fh:
        return tuple(e for e in json.load(fh)["formulas"] if e["exact"])


def head_of(cls: str) -> str | None:
    return None if cls == "base" else cls


def default_config(entry: dict) -> dict:
    return {"model_type": entry["model_type"], **seeded(entry["model_type"], {}, entry["class"])}


def odd_config(entry: dict) -> dict | None:
    """The small configuration the entry's costs were checked on, as a config.json (None: none recorded).  A
    per-layer list recorded as its kinds' counts (``layer_types#conv``) is written as a list of those kinds, and
    the layer count it derives set to the list's length; a sub-config's fields (``text_config.hidden_size``) go
    into the sub-config's default dict as the engine's builds put them (a per-layer list of the default left
    out where a layer count moved, for the config to compute again)."""
    values = ((entry.get("costs") or {}).get("check") or {}).get("values")
    if not values:
        return None
    plain: dict = {}
    for key, value in values.items():
        field, _, kind = key.partition("#")
        if kind:
            plain.setdefault(field, []).extend([kind] * value)
        else:
            plain[key] = value
    for field, kinds in [(k, v) for k, v in plain.items() if isinstance(v, list)]:
        kinds.sort(key=lambda kind: kind == "full_attention")  # Gemma 4 makes the last layer one, whatever is listed
        plain.update({f: len(kinds) for f in entry["conditions"].get("derived", ())
                      if f.endswith("num_hidden_layers") and f.rpartition(".")[0] == field.rpartition(".")[0]})
    model_type = entry["model_type"]
    top = {k: v for k, v in plain.items() if "." not in k}
    dotted = {k: v for k, v in plain.items() if "." in k}
    if dotted:
        top.update(sub_configs(_nested_defaults(model_type), dotted))
    if model_type in RETILED:
        listed, layers = RETILED[model_type]
        top[listed] = retiled(getattr(hf_config({"model_type": model_type}), listed), top[layers])
    return {"model_type": model_type, **seeded(model_type, top, entry["class"])}


def nested(values: dict) -> dict:
    """Dotted keys (``text_config.hidden_size``) as sub-dicts."""
    out: dict = {}
    for key, value in values.items():
        *heads, leaf = key.split(".")
        holder = out
        for head in heads:
            holder = holder.setdefault(head, {})
        holder[leaf] = value
    return out


def merged(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out



def as_built(config: dict, hf) -> dict:
    """``config`` with each per-layer list of kinds as transformers holds it (Gemma 4 makes the last layer a
    full-attention one, whatever the list says): what the build counted."""
    out = dict(config)
    for key, value in config.items():
        if isinstance(value, dict) and isinstance(getattr(hf, key, None), transformers.PretrainedConfig):
            out[key] = as_built(value, getattr(hf, key))
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            out[key] = list(getattr(hf, key))
    return out


def hf_config(config: dict):
    values = copy.deepcopy({k: v for k, v in config.items() if k != "model_type"})
    return transformers.AutoConfig.for_model(config["model_type"], **values)


def build(config: dict, cls: str):
    """The model transformers builds from ``config`` for ``cls``, on the meta device, and its config object."""
    hf = hf_config(config)
    name, sub = BY_NAME.get((config["model_type"], cls), (None, None))
    with meta_device():
        if name is None:
            return getattr(transformers, AUTO[cls]).from_config(hf), hf
        return getattr(transformers, name)._from_config(getattr(hf, sub) if sub else hf), hf


def per_tensor(named: dict[str, tuple[int, bool]]) -> dict[str, tuple[int, bool]]:
    """Path → (elements, trainable), layers folded: an index (``.3``, ``.expert_3``) and a kind of layers (``*2``)
    become ``*``, elements summed; paths of no element dropped (a tree keeps a switched-off bias at 0)."""
    out: dict[str, tuple[int, bool]] = {}
    for path, (n, trainable) in named.items():
        key = _INDEX.sub(".*", _KIND.sub("*", path))
        before, _ = out.get(key, (0, trainable))
        out[key] = (before + n, trainable)
    return {k: v for k, v in out.items() if v[0]}


def transformers_tensors(module) -> dict[str, tuple[int, bool]]:
    """``named_parameters()`` (a tied tensor once, as ``parameters()`` counts it), per :func:`per_tensor`."""
    named: dict[str, tuple[int, bool]] = {}
    for path, p in module.named_parameters():
        key = _INDEX.sub(".*", path)
        before, _ = named.get(key, (0, p.requires_grad))
        named[key] = (before + p.numel(), p.requires_grad)
    return per_tensor(named)
