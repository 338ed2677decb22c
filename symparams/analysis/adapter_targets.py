"""The modules a LoRA adapter can wrap, read from the Block tree, and PEFT's way of matching names to them.

Every linear layer (``nn.Linear``, GPT-2's ``Conv1D``) and embedding table of
a model is a leaf of its Block tree, with its ``transformers`` path (layers as
``*``), its shape and how many copies the model holds.  A fused projection
written as parts (GPT-2's ``c_attn`` as Q, K and V, each ``ref=""``) is one
module: the parts share its input and their outputs add up.

PEFT matches a target name against every module's path: the path equals the
name or ends with ``.`` + the name (``check_target_module_exists``), so
BERT's ``dense`` is every ``dense``.  ``all-linear`` is every linear layer
but the output layer (``_maybe_include_all_linear_layers``).

>>> from symparams import model
>>> found = adaptable(model("gpt2").tree)
>>> [(m.path, m.n_in, m.n_out, m.copies) for m in found if m.path.endswith("c_attn")]
[('h.*.attn.c_attn', H, 3*H, L)]
>>> [m.path for m in matched(model("gpt2").tree, ["c_proj"], "gpt2")]
['h.*.attn.c_proj', 'h.*.mlp.c_proj']
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import sympy as sp

from ..core.blocks import Block
from ..core.errors import SymparamsError
from ..core.symbols import V
from .adapter_experts import PARAMETER_NAMES, parameter_modules, routers, scheme, split, walk

#: the block kinds PEFT's LoRA wraps (``nn.Linear`` and ``Conv1D`` as lora.Linear, ``nn.Embedding``)
ADAPTABLE = ("linear", "embedding")

#: what a target that names every linear layer is spelled as, as PEFT spells it
ALL_LINEAR = "all-linear"

#: the model types whose modules of these names PEFT refuses to adapt (``_check_lora_target_modules_mamba``)
MAMBA_TYPES = ("falcon_h1", "mamba", "mamba2", "falcon_mamba", "nemotron_h")
MAMBA_REFUSED = ("out_proj", "conv1d")

#: the model types whose blocks transformers ties across layers (Zamba's shared transformer block): the weights are
#: listed once, as the tree holds them, but every layer's copy is a module PEFT wraps with an adapter of its own
SHARED_BLOCK_TYPES = ("zamba", "zamba2")

#: the names PEFT (on transformers 5) may turn into LoRA on a mixture of experts' 3-D expert tensors or its router
#: (``target_parameters``, peft/utils/transformers_weight_conversion.py): refused on a mixture not checked here
EXPERT_NAMES = ("gate", "gate_proj", "up_proj", "down_proj", "w1", "w2", "w3")


@dataclass(frozen=True)
class Module:
    """One module a LoRA adapter can wrap: its transformers path (layers as ``*``), ``linear`` or ``embedding``,
    its input and output widths (an embedding: rows and width; a ``parameter`` PEFT wraps: its two sizes), how many copies the model holds, the size of
    one copy's bias (0 without), and how many copies one token passes through (fewer under routed experts)."""

    path: str
    kind: str
    n_in: sp.Expr
    n_out: sp.Expr
    copies: sp.Expr
    bias: sp.Expr
    used: sp.Expr
    rank: int = 1  # the adapter's rank in units of r: 2 on a fused gate_up_proj PEFT wraps as a parameter
    experts: sp.Expr = sp.Integer(1)  # the copies one wrapper holds: a fused expert tensor's experts


def _dims(block: Block) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """A linear leaf's (in, out), an embedding's (rows, width), and how many instances its weight holds (an
    inferred tree may keep a module's instances in its parameters' counts, not in a repeat)."""
    n_in, n_out = (sp.expand(sp.sympify(d).doit()) for d in block.shape)
    weight = dict(block.params).get("weight")
    instances = sp.cancel(weight / (n_in * n_out)) if weight is not None else None
    if instances is None or sp.fraction(instances)[1] != 1 or instances.is_number and not instances.is_Integer:
        raise SymparamsError(f"{block.name}: its shape {block.shape} does not hold its weight; refused rather "
                             f"than counted")
    return n_in, n_out, sp.expand(instances)


def adaptable(tree: Block) -> list[Module]:
    """The modules of ``tree`` a LoRA adapter can wrap, in the tree's order; a fused projection's parts
    (``ref=""``) make one module at their parent's path, their outputs added.  Two stacks of layers may hold
    modules of one path (DeepSeek's dense and mixture-of-experts layers): each is a module of its own."""
    found: dict[tuple, Module] = {}
    for parent, prefix, path, block, (copies, used) in walk(tree):
        if not block.is_leaf or block.kind not in ADAPTABLE or len(block.shape) != 2:
            continue
        part = block.ref == ""  # a part of its parent's fused module
        n_in, n_out, instances = _dims(block)
        bias = sp.cancel(sp.sympify(dict(block.params).get("bias", 0)) / instances)
        module = Module(prefix if part else path, block.kind, n_in, n_out, sp.expand(copies * instances), bias,
                        sp.expand(used * instances))
        key = (prefix, id(parent)) if part else (path, id(block))
        found[key] = module if key not in found else _fused(found[key], module)
    return list(found.values())


def _fused(first: Module, part: Module) -> Module:
    """A fused module with one more part: the same input, the outputs (and biases) added."""
    if sp.expand(first.n_in - part.n_in) != 0 or sp.expand(first.copies - part.copies) != 0:
        raise SymparamsError(f"{first.path}: its parts take different inputs; refused rather than counted")
    return replace(first, n_out=sp.expand(first.n_out + part.n_out), bias=sp.expand(first.bias + part.bias))


def paths(tree: Block) -> dict[str, str]:
    """Every module path of ``tree`` (transformers' naming, layers as ``*``) → what it is (``norm``, ``group``,
    ...): what a target may name.  A bare parameter (a mixture's fused ``experts.down_proj``) is no module."""
    return {path: block.kind for _, _, path, block, _ in walk(tree)
            if path and not (block.is_leaf and block.params and all(p == "" for p, _ in block.params))}


def unknown_matrices(tree: Block) -> list[str]:
    """The paths of modules holding a 2-D ``weight`` that the tree does not know as a linear layer or an
    embedding: a ``Conv1D`` of an inferred type (whose data records ``nn.Linear`` only), a router, a custom
    layer.  PEFT's ``all-linear`` takes a Conv1D and leaves the others: which is which is not known here."""
    return [path for _, _, path, block, _ in walk(tree)
            if block.is_leaf and block.kind not in ADAPTABLE and "weight" in dict(block.params)
            and len(block.shape) == 2]


def output_layer(modules: Sequence[Module]) -> str | None:
    """The path of the module PEFT's ``all-linear`` leaves out, transformers' ``get_output_embeddings()``: the
    linear layer outside the layer stack that maps onto the vocabulary (V, or the first embedding table's rows:
    a table tied to the output layer may be listed only there)."""
    tables = [m.n_in for m in modules if m.kind == "embedding"][:1]
    return next((m.path for m in modules if m.kind == "linear" and m.copies == 1 and m.used == 1
                 and any(sp.expand(m.n_out - rows) == 0 for rows in (V, *tables))), None)


def matched(tree: Block, targets: Sequence[str] | str, name: str, types: Sequence[str] = ()) -> list[Module]:
    """The modules of ``tree`` that ``targets`` name, as PEFT matches them: a module whose path is a target or
    ends with ``.target``; ``all-linear`` every linear layer but the output layer.  On a mixture of experts, the
    expert and router names PEFT moves onto transformers 5's parameters wrap those (see
    :mod:`~symparams.analysis.adapter_experts`).  A target that names no module, or a module LoRA cannot wrap, is
    refused (``name`` begins the message); so is a module PEFT refuses in a model of one of ``types`` (the model's
    config types)."""
    shared = set(types) & set(SHARED_BLOCK_TYPES)
    if shared:
        raise SymparamsError(f"{name}: {shared.pop()} ties one block's weights across layers, each copy a module PEFT "
                             f"wraps apart, while the count lists them once: its adapter is not counted")
    known = paths(tree)
    # experts a token is routed among, or held under an ``experts`` module (which PEFT's conversion of v4 names
    # reaches whether or not the tree knows the top-k)
    routed = tree.routed or any("experts" in path.split(".") for path in known)
    counted, pattern = scheme(types) if routed else (False, None)
    if routed and not counted:
        return _refuse_unknown_mixture(tree, targets, name)
    gates = routers(tree)  # transformers 5's TopKRouter: no nn.Linear, never a module LoRA wraps
    modules = [m for m in adaptable(tree) if m.path not in gates]
    if isinstance(targets, str) and targets.lower() == ALL_LINEAR:
        unknown = [path for path in unknown_matrices(tree) if path not in gates]
        if unknown:
            raise SymparamsError(f"{name}: all-linear: {unknown[0]} holds a 2-D weight that is neither a "
                                 f"linear layer nor an embedding as far as symparams knows (a Conv1D?); name "
                                 f"the modules instead")
        linear = _all_linear(modules)
        if pattern is None:
            return _refuse_mamba(linear, name, types)
        # PEFT resolves all-linear to the linear layers' leaf names and every name it converts
        targets = sorted({m.path.rsplit(".", 1)[-1] for m in linear} | set(PARAMETER_NAMES[pattern]))
        names, parameters = split(targets, pattern, name, tree, frozenset(gates))
        chosen = _named(modules, known, names, name, gates)
    else:
        targets = [targets] if isinstance(targets, str) else targets
        for target in targets:
            _check_target(target, name)
        names, parameters = split(targets, pattern, name, tree, frozenset(gates))
        chosen = _named(modules, known, names, name, gates)
    return _refuse_mamba(chosen, name, types) + parameter_modules(tree, parameters, name, Module)


def _named(modules: Sequence[Module], known: dict[str, str], targets: Sequence[str], name: str,
           gates: set[str]) -> list[Module]:
    """The modules whose path is a target or ends with ``.target``; a target that names no module or a module LoRA
    cannot wrap is refused."""
    chosen: set[str] = set()
    by_path = {m.path for m in modules}
    for target in targets:
        hits = [path for path in known if path == target or path.endswith("." + target)]
        if not hits:
            raise SymparamsError(f"{name}: the target {target!r} names no module (a module's name, as "
                                 f"transformers names it: e.g. {_examples(modules)})")
        wrong = [path for path in hits if path not in by_path]
        if wrong:
            what = "a router, which transformers 5 makes no nn.Linear and PEFT refuses" if wrong[0] in gates \
                else f"{known[wrong[0]]}, which symparams does not know as a module LoRA wraps (nn.Linear, " \
                     f"Conv1D, nn.Embedding)"
            raise SymparamsError(f"{name}: the target {target!r} names {wrong[0]} ({what})")
        chosen.update(hits)
    return [m for m in modules if m.path in chosen]


def _refuse_unknown_mixture(tree: Block, targets, name: str) -> list[Module]:
    """A mixture of experts whose adapters are not checked against PEFT here: its attention's modules only."""
    modules = adaptable(tree)
    if isinstance(targets, str) and targets.lower() == ALL_LINEAR:
        raise SymparamsError(f"{name}: all-linear on this mixture of experts: PEFT (transformers 5) adds LoRA to "
                             f"the experts' 3-D tensors and the router, which symparams counts for mixtral, "
                             f"qwen2_moe, qwen3_moe, deepseek_v2/v3 and olmoe only; name the attention's modules "
                             f"instead")
    targets = [targets] if isinstance(targets, str) else targets
    for target in targets:
        _check_target(target, name)
        if target.split(".")[-1] in EXPERT_NAMES:
            raise SymparamsError(f"{name}: the target {target!r} on this mixture of experts: PEFT (transformers 5) "
                                 f"may turn it into LoRA on the experts' 3-D tensors or the router, which symparams "
                                 f"counts for mixtral, qwen2_moe, qwen3_moe, deepseek_v2/v3 and olmoe only; name the "
                                 f"attention's modules instead")
    return _named(modules, paths(tree), targets, name, set())


def _refuse_mamba(modules: list[Module], name: str, types: Sequence[str]) -> list[Module]:
    """``modules``, unless the model is a Mamba type and one of them is a module PEFT refuses there."""
    if set(types) & set(MAMBA_TYPES):
        for m in modules:
            if m.path.rsplit(".", 1)[-1] in MAMBA_REFUSED:
                raise SymparamsError(f"{name}: {m.path}: PEFT refuses LoRA on {', '.join(MAMBA_REFUSED)} of a "
                                     f"Mamba-based model")
    return modules


def _all_linear(modules: Sequence[Module]) -> list[Module]:
    out = output_layer(modules)
    return [m for m in modules if m.kind == "linear" and m.path != out]


def _check_target(target, name: str) -> None:
    if not isinstance(target, str) or not target.strip() or any(not part for part in target.split(".")):
        raise SymparamsError(f"{name}: a LoRA target is a module's name such as q_proj, not {target!r}")
    if any(part.isdigit() or part == "*" for part in target.split(".")):
        raise SymparamsError(f"{name}: the target {target!r} names one layer; symparams adapts every layer's "
                             f"modules alike: name the module (q_proj, self_attn.q_proj)")


def _examples(modules: Sequence[Module]) -> str:
    names = list(dict.fromkeys(m.path.rsplit(".", 1)[-1] for m in modules))
    return ", ".join(names[:6]) if names else "none: this model has no linear layer"
