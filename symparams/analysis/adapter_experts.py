"""PEFT's LoRA on a mixture of experts under transformers 5: the experts' fused tensors and the router.

transformers 5 holds a mixture's experts as 3-D parameters (``experts.gate_up_proj`` ``[E, 2F, H]``,
``experts.down_proj`` ``[E, H, F]``) and its router as a module of its own (a ``TopKRouter``), neither an
``nn.Linear``.  PEFT keeps the names adapters were trained with under transformers 4
(``peft/utils/transformers_weight_conversion.py``, ``_convert_peft_config_moe``): for a model type that
transformers converts from the v4 layout, a target naming an expert projection or the router becomes a
``target_parameters`` entry, and LoRA wraps that parameter (``lora.ParamWrapper``): ``lora_A`` ``[E·r, in]`` and
``lora_B`` ``[out, E·r]``, E·r·(in + out) a layer; the router's ``[E, H]`` weight r·(E + H).  The two halves of
``gate_up_proj`` (``w1`` and ``w3``, or ``gate_proj`` and ``up_proj``) must be named together, and their adapter
has twice the rank.  A converted name that names linear layers as well (DeepSeek's dense layers and shared
experts, Qwen3-MoE's dense layers, Qwen2-MoE's shared expert) wraps them too, as PEFT 0.22 does (0.21 left them
unwrapped).  ``all-linear`` names the leaf names of every linear layer but the output layer, and all of the
converted names.  PEFT 0.22 converts qwen2_moe's names as well, which transformers' table leaves out.

>>> from symparams import model
>>> a = model("mixtral").lora(8, ["w1", "w3"])
>>> [(m.path, m.kind, m.rank) for m in a.modules]
[('layers.*.mlp.experts.gate_up_proj', 'parameter', 2)]
>>> a.formula
2*L*N_e*R*(2*F_e + H)
"""

from __future__ import annotations

from typing import Sequence

import sympy as sp

from ..core.blocks import Block
from ..core.errors import SymparamsError

#: PEFT's v4 names of the experts' projections and the router → the transformers 5 parameter each now targets
#: (``_MOE_TARGET_MODULE_MAPPING``), and the names fused into one parameter (``_MOE_FUSED_TARGETS``)
PARAMETER_NAMES = {
    "mixtral": {"gate": "gate.weight", "w1": "gate_up_proj", "w3": "gate_up_proj", "w2": "down_proj"},
    "qwen2_moe": {"gate": "gate.weight", "gate_proj": "gate_up_proj", "up_proj": "gate_up_proj",
                  "down_proj": "down_proj"},
}
FUSED = {"mixtral": ("w1", "w3"), "qwen2_moe": ("gate_proj", "up_proj")}

#: model type → the names PEFT converts for it (transformers' ``conversion_mapping._MODEL_TO_CONVERSION_PATTERN``,
#: to which PEFT 0.22 adds mixtral and qwen2_moe), for the types whose counts are checked against PEFT; None: PEFT
#: converts nothing
CONVERTED = {"mixtral": "mixtral", "qwen3_moe": "qwen2_moe", "deepseek_v2": "qwen2_moe",
             "deepseek_v3": "qwen2_moe", "olmoe": "qwen2_moe", "qwen2_moe": "qwen2_moe"}

#: the name of a mixture's router module, beside its ``experts``
ROUTER, EXPERTS = "gate", "experts"


def walk(block: Block, prefix: str = "", copies=(sp.Integer(1), sp.Integer(1)), parent: Block | None = None):
    """``(parent block, parent path, path, block, (copies, copies a token uses))`` for every block, paths in
    transformers' naming."""
    seg = block.name if block.ref is None else block.ref
    path = ".".join(p for p in (prefix, seg) if p)
    copies = (copies[0] * block.repeat, copies[1] * block.copies_used)
    yield parent, prefix, path, block, copies
    for child in block.children:
        yield from walk(child, path, copies, block)


def scheme(types: Sequence[str]) -> tuple[bool, str | None]:
    """``(known, pattern)`` for a model of config types ``types``: whether its mixture is one whose adapters are
    counted here, and the names PEFT converts for it (None: none)."""
    for t in types:
        if t in CONVERTED:
            return True, CONVERTED[t]
    return False, None


def routers(tree: Block) -> set[str]:
    """The paths (layers as ``*``) of the routers of ``tree``: a module named ``gate`` beside ``experts``."""
    found = set()
    for _, _, path, block, _ in walk(tree):
        names = {child.name for child in block.children}
        if ROUTER in names and EXPERTS in names:
            found.add(f"{path}.{ROUTER}" if path else ROUTER)
    return found


def split(targets: Sequence[str], pattern: str | None, name: str, tree: Block | None = None,
          gates: frozenset = frozenset()) -> tuple[list[str], dict[str, int]]:
    """``targets`` as PEFT splits them: the module names left, and the parameter names with the rank factor of
    each (2 for the fused halves named together); naming one fused half alone is refused, as PEFT refuses it.
    A converted name that names only linear layers of ``tree`` (DeepSeek's dense and shared ``down_proj``) stays
    a module target, and is a parameter target too where a parameter outside a linear layer has the new name (the
    routed experts' fused ``down_proj``); ``gates``: the routers, no linear layers."""
    if pattern is None:
        return list(targets), {}
    mapping, fused = PARAMETER_NAMES[pattern], FUSED[pattern]
    linear, others, bare = _modules_and_parameters(tree, gates) if tree is not None else (set(), set(), set())
    modules, parameters, halves = [], {}, set()
    for target in targets:
        old = next((old for old in mapping if target == old or target.endswith("." + old)), None)
        if old is None:
            modules.append(target)
            continue
        new = target[::-1].replace(old[::-1], mapping[old][::-1], 1)[::-1]  # the last occurrence, as PEFT renames
        matching = [path for path in linear | others if path == target or path.endswith("." + target)]
        if matching and all(path in linear for path in matching):
            modules.append(target)
            if not any(key == new or key.endswith("." + new) for key in bare):
                continue
        parameters[new] = 1
        if old in fused:
            halves.add(old)
    if halves and len(halves) < len(fused):
        raise SymparamsError(f"{name}: {', '.join(sorted(halves))} without {', '.join(sorted(set(fused) - halves))}: "
                             f"PEFT refuses it, the two are fused into one gate_up_proj")
    if halves:
        parameters[mapping[fused[0]]] = len(fused)
    return modules, parameters


def _modules_and_parameters(tree: Block, gates: frozenset) -> tuple[set, set, set]:
    """The paths of ``tree``'s linear layers, of its other modules, and the keys of the parameters no linear
    layer holds (a fused expert tensor, a router's weight), as PEFT tells them apart on the built model."""
    linear, others, bare = set(), set(), set()
    for _, _, path, block, _ in walk(tree):
        is_linear = block.is_leaf and block.kind == "linear" and path not in gates
        if not (block.is_leaf and block.params and all(p == "" for p, _ in block.params)):  # a bare one: no module
            (linear if is_linear else others).add(path)
        if block.is_leaf and not is_linear:
            bare.update(_keys(path, block))
    return linear, others, bare


def parameter_modules(tree: Block, parameters: dict[str, int], name: str, module_class):
    """The parameters of ``tree`` that PEFT's ``target_parameters`` (``parameters``: name → rank factor) wrap, as
    ``module_class`` rows of kind ``parameter``: a parameter whose key is the name or ends with ``.`` + the name;
    its copies are the layers times the experts (of a fused expert tensor, one wrapper a layer)."""
    found = []
    for target, factor in parameters.items():
        hits = [(parent, path, block, copies) for parent, _, path, block, copies in walk(tree) if block.is_leaf
                for key in _keys(path, block) if key == target or key.endswith("." + target)]
        if not hits:
            raise SymparamsError(f"{name}: PEFT puts the target on the parameter {target}, which this model lacks")
        found += [_row(path, block, copies, factor, module_class, parent.repeat)
                  for parent, path, block, copies in hits]
    return found


def _keys(path: str, block: Block) -> list[str]:
    """The parameter keys of a leaf: its path and each parameter's name (a bare parameter is its path)."""
    return [f"{path}.{p}" if p else path for p in dict(block.params)]


def _row(path: str, block: Block, copies, factor: int, module_class, experts):
    a, b = (sp.expand(sp.sympify(d).doit()) for d in block.shape)
    size = sp.expand(sum(dict(block.params).values()))
    if len(block.shape) != 2 or sp.expand(size - a * b) != 0:
        raise SymparamsError(f"{path}: its shape {block.shape} does not hold its weight; refused rather than counted")
    count, used = copies
    return module_class(path, "parameter", a, b, sp.expand(count), sp.Integer(0), sp.expand(used), factor,
                        sp.sympify(experts))
