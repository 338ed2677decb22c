"""The costs the inferred data holds for a class, put on its Block tree as the items the analysis reads.

``scripts/infer_formulas.py`` traces every exactly inferred class forward and
backward on the meta device and keeps, under its entry's ``"costs"``, each
product the counter counts (its module, how many times it runs, its factors,
its backward FLOPs, whether it is a weight's matmul, attention or another
product), each tensor of its cache (how many layers hold it, its shape, a
sliding window), its attention modules (query heads and widths) and why
anything is unknown.  Here they become :class:`~symparams.core.compute.
Traced` items on the blocks of the modules that run them (every run
together), :class:`~symparams.core.compute.Cached` items for the cache and
:class:`~symparams.core.compute.Attention` declarations for the activations
and the published laws, or :class:`~symparams.core.compute.Untraced` with
the reason: no cost is ever guessed.

>>> from symparams.core.compute import Traced, costed
>>> entry = {"symbols": {"n_embd": "H", "n_layer": "L"}, "parameters": [
...     ["h.*.mlp.weight", "L", ["H", "H"]], ["wte.weight", 1, [7, "H"]]],
...     "costs": {"exact": True, "symbols": {}, "products": [["h.*.mlp", 0, "mm", "L",
...     [[["1", [["b", 1], ["s", 1]], []]], "H", "H"], [["4", [["H", 2], ["L", 1], ["b", 1], ["s", 1]], []]],
...     "matmul"]], "cache": None, "attention": [], "activations": "no attention"}}
>>> from symparams.families.inferred_tree import build_tree
>>> tree = costed(build_tree("toy", entry, {}, {}))  # put on when first asked for
>>> [item.forward for item in tree.find("h.mlp").computes if isinstance(item, Traced)]
[2*H**2*L*b*s]
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace
from typing import Any, Mapping

import sympy as sp

from ..core.blocks import Block
from ..core.compute import BATCH, SEQ, Attention, Cached, Traced, Untraced
from .inferred_conditions import parse_relation
from .inferred_data import formula, parameter_names, symbol_of

#: what the products of one module are, in the order the data names them
KINDS = ("matmul", "attention", "product")
#: why the activations of a class whose count has no H are not known
NO_HIDDEN_SIZE = "the hidden size H is not in the count's formula (another size stands for it), and the activations " \
                 "formula (Korthikanti et al.) reads H"
#: a layer's place in a period of its list, as the generator keys layers that run apart (``blocks.*@1``)
_PLACE = re.compile(r"@\d+")
#: a kind of layers in a module's path, as the generator keys the layers of a hybrid stack (``layers.*2.mlp``)
LAYER_KIND = re.compile(r"\*\d+")


def cost_scope(entry: dict, scope: Mapping[str, sp.Expr], numbers: Mapping[str, int],
               used: frozenset | set = frozenset()) -> dict:
    """``scope`` (the parameters' symbols) with the fields only the costs follow, ``s`` and ``b``; a field the
    formula's conditions hold equal to another, where the count (in the symbols ``used``) is not written in it,
    stands for that other (see :func:`_equal_stand_ins`)."""
    out = _equal_stand_ins(entry, dict(scope), used)
    for field, name in (entry.get("costs") or {}).get("symbols", {}).items():
        out[name] = sp.Integer(numbers[name]) if name in numbers else symbol_of(field, name)
    out["s"], out["b"] = SEQ, BATCH
    return out


def _equal_stand_ins(entry: dict, scope: dict, used) -> dict:
    """``scope`` with each field of an equality the conditions require (``embedding_size = hidden_size``) that the
    count is not written in replaced by the one it is: the costs are fitted where the two never differ and may
    name either (ConvBERT's masked-lm costs name H, its count with tied embeddings only E), and a config is read
    only where they are equal, so the model gives a value to the one its count holds.

    >>> H, E = sp.symbols("H E", positive=True, integer=True)
    >>> entry = {"symbols": {"hidden_size": "H", "embedding_size": "E"},
    ...          "conditions": {"relations": ["embedding_size = hidden_size"]}}
    >>> _equal_stand_ins(entry, {"H": H, "E": E}, {E})
    {'H': E, 'E': E}
    """
    symbols = entry["symbols"]
    for text in (entry.get("conditions") or {}).get("relations", ()):
        left, kind, right = parse_relation(text)
        if kind != "equals" or left not in symbols or right not in symbols:
            continue
        a, b = symbols[left], symbols[right]
        for absent, present in ((a, b), (b, a)):
            if scope[absent].is_Symbol and scope[absent] not in used and not (scope[present].is_Symbol
                                                                              and scope[present] not in used):
                scope[absent] = scope[present]
    return scope


def with_costs(tree: Block, entry: dict, scope: Mapping[str, sp.Expr], refused: str | None = None) -> Block:
    """``tree`` with the items of ``entry``'s costs on its blocks; a root :class:`Untraced` when the data holds
    none (``refused``: the config is outside the conditions the costs hold under)."""
    costs = entry.get("costs") or {}
    if refused or not costs.get("exact"):
        why = f"the config is outside the inferred costs' conditions: {refused}" if refused else \
            f"the inferred data holds no costs for this class ({costs.get('reason', 'they were not run')})"
        return replace(tree, computes=tree.computes + (Untraced("costs", why),))
    tree = _with_weightless(tree, costs)
    paths = {path: block for path, block in tree.reference_paths()}
    items: dict[str, list] = defaultdict(list)
    _products(costs, scope, paths, items)
    items[""] += _cache(costs, scope)
    _attention(tree, entry, scope, paths, items)
    return _attached(tree, "", dict(items))


def _with_weightless(tree: Block, costs: dict) -> Block:
    """``tree`` with a block of no parameters for each top-level module that runs products but holds no
    parameter of its own in the count: an LM head tied to the token embeddings where the formula holds the tie
    fixed (Falcon, T5), so that its FLOPs have a row of their own, as a hand-written family's tied head has."""
    paths = {path: block for path, block in tree.reference_paths()}
    firsts = {path.partition(".")[0] for path in paths}
    tops = dict.fromkeys(module.partition(".")[0] for module in sorted({m for m, *_ in costs["products"]})
                         if module and _owner(module, paths) == "" and module.partition(".")[0] not in firsts)
    if not tops:
        return tree
    return replace(tree, children=tree.children + tuple(Block(name, kind="tensor") for name in tops))


def _owner(module: str, paths: Mapping[str, Block]) -> str:
    """The path of the block holding ``module``: the module's own, or its nearest ancestor's (a rotary table
    holds no parameter, so no block); a layer keyed by its place in a period (``*@1``: Funnel's blocks, each at
    its own pooled length) is in its list's block, a layer of a kind (``*1``) in its stack's where the count
    has one block for every kind (Nemotron-H's mixers: a Mamba, an attention, an MLP, experts)."""
    module = _PLACE.sub("", module)
    # a stack traced as layers of several kinds (``layers.*1``) that the count writes as one (``layers.*``)
    while module not in paths and LAYER_KIND.sub("*", module) not in paths:
        module = module.rpartition(".")[0] if "." in module else ""
    return module if module in paths else LAYER_KIND.sub("*", module)


def _products(costs: dict, scope, paths, items) -> None:
    sums: dict[tuple[str, str], list] = defaultdict(lambda: [sp.Integer(0), sp.Integer(0)])
    for module, _, _, count, factors, backward, what in costs["products"]:
        total = sums[_owner(module, paths), what]
        total[0] += 2 * formula(count, scope) * sp.Mul(*(formula(f, scope) for f in factors))
        total[1] += formula(backward, scope)
    for module, backward in costs.get("extra_backward", ()):
        sums[_owner(module, paths), "product"][1] += formula(backward, scope)
    for (path, what), (forward, backward) in sorted(sums.items(), key=lambda kv: (kv[0][0], KINDS.index(kv[0][1]))):
        items[path].append(Traced(sp.expand(forward), sp.expand(backward), what))


def _cache(costs: dict, scope) -> list:
    """One :class:`Cached` per kind of cache layer (its part, class and window), or why the cache is unknown."""
    if costs.get("cache_refused"):
        return [Untraced("cache", f"{costs['cache_refused']} at the sizes traced, so the cache was not traced")]
    if costs["cache"] is None:
        return []
    kinds: dict[tuple, sp.Expr] = defaultdict(lambda: sp.Integer(0))
    windows = {}
    for part, kind, _, layers, shape, window in costs["cache"]:
        key = (part, kind, str(window))
        kinds[key] += formula(layers, scope) * sp.Mul(*(formula(d, scope) for d in shape))
        windows[key] = None if window is None else formula(window, scope) - 1
    out = []
    for key, elements in sorted(kinds.items()):
        per_sequence = sp.expand(elements / BATCH)
        rate, state = sp.expand(sp.diff(per_sequence, SEQ)), sp.expand(per_sequence.subs(SEQ, 0))
        if sp.expand(per_sequence - rate * SEQ - state) != 0 or (rate.free_symbols | state.free_symbols) & {SEQ, BATCH}:
            return [Untraced("cache", f"the {key[1]} cache does not grow by a fixed number of elements per token")]
        out.append(Cached(rate, windows[key], key[0] == "cross", state))
    return out


def _attention(tree: Block, entry: dict, scope, paths, items) -> None:
    """The attention modules, each declared on its block when the block runs as often as the module; else the
    activations are unknown, and so is the published laws' attention width when a product growing with s² is in
    none of them."""
    costs = entry["costs"]
    runs = {path: n for (_, _, n, _), (path, _) in zip(tree.runs(), tree.reference_paths())}  # one order
    why = costs.get("activations")
    # H in the parameters' names but in no count of this config (an untied head's width, tied here) has no value
    if why is None and ("H" not in parameter_names(entry) or symbol_of("hidden_size", "H") not in tree.symbols):
        why = NO_HIDDEN_SIZE
    for module, count, heads, key_width, value_width, cross in costs["attention"]:
        path = _owner(module, paths)
        if path != module or sp.expand(runs[path] - formula(count, scope)) != 0:
            why = why or f"the attention module {module} runs other than as its block repeats"
            continue
        items[path].append(Attention(formula(heads, scope), formula(key_width, scope), formula(value_width, scope),
                                     cross=cross))
    if costs.get("attention_incomplete"):
        items[""].append(Untraced("attention", costs["attention_incomplete"]))
    if why:
        items[""].append(Untraced("activations", why))


def _attached(block: Block, prefix: str, items: dict[str, list[Any]]) -> Block:
    """``block`` with each path's items on the outermost block at that path, once: a block that adds no name to
    its path (Gemma 4's layers grouped by kind under the model) shares its parent's, and the parent takes them
    (the cache's layers attached to both were held twice)."""
    seg = block.name if block.ref is None else block.ref
    path = ".".join(p for p in (prefix, seg) if p)
    own = tuple(items.pop(path, ()))
    children = tuple(_attached(c, path, items) for c in block.children)
    if not own and children == block.children:
        return block
    return replace(block, children=children, computes=block.computes + own)
