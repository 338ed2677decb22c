"""A config the inferred formulas do not cover, counted by one real meta-device build.

The inferred data refuses a config outside a formula's conditions (a held value
changed, a relation broken, a size key it never saw) rather than count it
wrong.  With torch and transformers installed, that config can still be
counted exactly: transformers builds it on the meta device (no weights, no
network) and the parameters it holds become a tree grouped by module path, as
an inferred tree is, every size a number.  The result says how it was counted.
"""

from __future__ import annotations

import importlib.util
from typing import Any, Mapping

from ...core.errors import SymparamsError
from ...core.family import Family
from ...core.model import Model
from ...families.config import flattened, model_name
from ...families.inferred_tree import TOP_K_FIELDS, list_of, tree_of_build
from .meta import meta_device
from .order import kinds_of
from .probing import Builder, config_class_of, config_for_class, libraries, observation_of, quiet

#: the most modules a counted key may ask a build for (layers, experts): a meta build makes every one of them
MAX_COPIES = 4096


def can_build() -> bool:
    """Whether torch and transformers are installed (checked without importing them)."""
    return all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers"))


def built_model(config: Mapping[str, Any], head: str | None, source: str, reason: str) -> Model:
    """The model of ``config`` as transformers builds it on the meta device; ``reason``: why the inferred formula
    did not count it (said in the note)."""
    values = flattened(config)
    for key, value in values.items():
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_COPIES \
                and any(word in key for word in ("layer", "expert")):
            raise SymparamsError(f"{reason}; a meta-device build of {key} = {value} copies is too large to make "
                                 f"(at most {MAX_COPIES})")
    _, transformers = libraries()
    model_type = config.get("model_type")
    builder = Builder(model_type, "base" if head in (None, "", "none", "base") else head)
    try:
        with quiet():
            hf_config = config_class_of(model_type).from_dict(dict(config))
            with meta_device():
                module = builder.model_class._from_config(config_for_class(builder.model_class, hf_config))
    except Exception as exc:  # whatever transformers raises for this config: one line, as any refusal
        raise SymparamsError(f"{reason}; transformers cannot build it either ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0][:120] if str(exc) else ''})") from None
    observed = observation_of(module)
    if observed.uneven():
        raise SymparamsError(f"{reason}; its meta-device build has layers of different shapes under one name")
    top_k = next((values[k] for k in TOP_K_FIELDS if isinstance(values.get(k), int)), None)
    tree = tree_of_build(model_type, observed.shapes, observed.frozen, top_k, kinds_of(module, observed.shapes),
                         _list_lengths(module, observed.shapes))
    family = Family(model_type, {"en": f"{model_type}, built", "zh": f"{model_type}（构建）"},
                    lambda switches, head_: tree, inferred=True)
    note = (f"counted by one meta-device build of transformers {transformers.__version__}: {reason.split(': ', 1)[-1]}")
    return Model(family, {}, {}, None, model_name(source), notes=(note,))


def _list_lengths(module, shapes) -> dict[str, int]:
    """How many elements each outermost list of layers of ``module`` holds, by the path its normalised
    parameter names give it (``model.layers`` of ``model.layers.*.mlp.weight``)."""
    from torch import nn

    out = {}
    for stack in {list_of(name) for name in shapes} - {None, ""}:
        try:
            found = module.get_submodule(stack)
        except AttributeError:
            continue
        if isinstance(found, (nn.ModuleList, nn.ParameterList)):
            out[stack] = len(found)
    return out
