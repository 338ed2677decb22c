"""The architecture families: one module each, listed in :data:`MODULES`.

A family module defines ``FAMILY`` (a :class:`~symparams.core.family.Family`)
or ``FAMILIES`` (several), and may define ``PRESETS``.  Modules are imported
lazily: :func:`find` tries the module of the same name first, so
``symparams count bert-base`` imports only ``bert``; the full registry is
built on first use.

To add a family: write its module here and add its name to :data:`MODULES`.
"""

from __future__ import annotations

import importlib

from ..core.errors import SymparamsError
from ..core.family import Family

#: the family modules, in the order ``symparams list`` shows them: the articles' two, then by name
MODULES = ("bert", "transformer", "albert", "bart", "bloom", "cohere", "deberta_v2", "deepseek_v3", "distilbert",
           "electra", "falcon", "gemma", "gpt2", "gpt_neox", "gptj", "llama", "m2m_100", "marian", "mbart",
           "mistral", "mixtral", "modernbert", "mpnet", "olmo2", "opt", "pegasus", "phi", "phi3", "qwen2",
           "qwen2_moe", "qwen3", "qwen3_moe", "roberta", "stablelm", "starcoder2", "t5")

#: config.json ``model_type`` values read by a module of another name (the rest: the module of the same name),
#: so that ``count --config`` imports one module, not all of them
CONFIG_MODULES = {"mt5": "t5", "xlm-roberta": "roberta", "deberta-v2": "deberta_v2", "deepseek_v2": "deepseek_v3",
                  "gemma2": "gemma", "gemma3_text": "gemma"}

_ALL: dict[str, Family] | None = None


def _families_in(module) -> list[Family]:
    return [f for f in (getattr(module, "FAMILY", None), *getattr(module, "FAMILIES", ())) if f is not None]


def module(name: str):
    """The family module called ``name``, or None."""
    return importlib.import_module(f"{__package__}.{name}") if name in MODULES else None


def all_families() -> dict[str, Family]:
    """Every family, importing every module once."""
    global _ALL
    if _ALL is None:
        _ALL = {fam.name: fam for name in MODULES for fam in _families_in(module(name))}
    return _ALL


def find(name: str) -> Family | None:
    """The family called ``name``, or None."""
    own = module(name) if _ALL is None and isinstance(name, str) else None
    for fam in _families_in(own) if own is not None else ():
        if fam.name == name:
            return fam
    return all_families().get(name)


def family(name: str) -> Family:
    """The family called ``name``."""
    fam = find(name)
    if fam is None:
        raise SymparamsError(f"unknown family {name!r} (families: {', '.join(all_families())})")
    return fam


def for_config_type(model_type: str) -> Family | None:
    """The family that reads config.json files of ``model_type`` (its own module first)."""
    own = module(CONFIG_MODULES.get(model_type, model_type)) if isinstance(model_type, str) else None
    for fam in _families_in(own) if own is not None else ():
        if fam.from_config is not None and model_type in fam.config_types:
            return fam
    for fam in all_families().values():  # only now import every module
        if fam.from_config is not None and model_type in fam.config_types:
            return fam
    return None
