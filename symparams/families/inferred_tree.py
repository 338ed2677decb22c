"""The Block tree of an inferred class: its parameters grouped by module path, repeated modules as repeats.

A repeated module (``layers.*``) repeats as many times as its parameters'
common count says.  Fields that mean a symparams symbol (``hidden_size`` is H)
stay symbols, with the config's values; the type's own fields (and any field
at 0) are put in as numbers, and the boolean fields that change shapes are
switches.

>>> entry = {"symbols": {"n_embd": "H", "n_layer": "L"}, "parameters": [
...     ["h.*.ln.weight", "L", ["H"]], ["wte.weight", 1, [7, "H"]]]}
>>> tree = build_tree("toy", entry, {}, {})
>>> tree.total, tree.find("h").repeat
(H*L + 7*H, L)
"""

from __future__ import annotations

from typing import Mapping

import sympy as sp

from ..core.blocks import Block, group
from ..core.compute import Deferred
from .inferred_costs import cost_scope, with_costs
from .inferred_data import OutsideConditions, formula, symbol_of

def build_tree(model_type: str, entry: dict, numbers: Mapping[str, int], flags: Mapping[str, bool],
               costs_refused: str | None = None) -> Block:
    """The Block tree of one inferred class: symbols for the standard fields, ``numbers`` (symbol name → value)
    and ``flags`` (field → value) put in, with the costs the data holds (:mod:`.inferred_costs`; none, and
    ``costs_refused`` the reason, for a config outside their conditions)."""
    scope = _scope(entry, numbers, flags)
    leaves = []
    for path, count, shape, *marks in entry["parameters"]:
        n = sp.expand(formula(count, scope))
        dims = tuple(sp.expand(formula(d, scope)) for d in shape)
        _refuse_negative(model_type, path, n, dims)
        if n != 0:
            leaves.append((path.split("."), n, dims, "frozen" in marks))
    root = _module(model_type, leaves, top_k=numbers.get(TOP_K_SYMBOL))
    tree = Block(root.name, params=root.params, children=root.children, ref="", kind=root.kind)
    # the costs go on when a figure asks for them: the SymPy work they take, a cold count never needs
    attach = (lambda _: with_costs(tree, entry, cost_scope(entry, scope, numbers), costs_refused))
    return Block(tree.name, params=tree.params, children=tree.children, ref="", kind=tree.kind,
                 computes=(Deferred(attach),))


def _scope(entry: dict, numbers: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, sp.Expr]:
    """Each symbol name of ``entry``: its value where ``numbers`` has one, else its symbol; flags as 0/1."""
    scope: dict[str, sp.Expr] = {}
    for field_name, name in entry["symbols"].items():
        scope[name] = sp.Integer(numbers[name]) if name in numbers else symbol_of(field_name, name)
    for field_name, name in entry.get("flags", {}).items():
        scope[name] = sp.Integer(int(flags.get(field_name, False)))
    return scope


def _refuse_negative(where: str, path: str, count: sp.Expr, dims: tuple) -> None:
    """A negative count or dimension means values outside every configuration the formula was fitted and
    verified on (more dense layers than layers, say): refused rather than summed; ``where`` begins the line."""
    for what, value in [("instances", count), *(("dimension", d) for d in dims)]:
        if value.is_number and value < 0:
            raise OutsideConditions(f"{where}: these values give {path} {value} {what}; the inferred formula "
                                    f"holds only where every count and dimension is at least 0")


def tree_of_build(model_type: str, shapes: Mapping[str, list], frozen=frozenset(), top_k: int | None = None) -> Block:
    """The Block tree of one real build: each normalised parameter name's shapes (one per instance), grouped by
    module path as an inferred tree is, every size a number."""
    leaves = [(path.split("."), sp.Integer(len(found)), tuple(sp.Integer(d) for d in found[0]), path in frozen)
              for path, found in shapes.items()]
    root = _module(model_type, leaves, top_k=top_k)
    return Block(root.name, params=root.params, children=root.children, ref="", kind=root.kind)


#: the config fields that say how many routed experts a token uses (no shape follows them, so the fit never saw
#: them); the active count needs one
TOP_K_FIELDS = ("num_experts_per_tok", "num_experts_per_token", "moe_topk", "moe_top_k", "router_top_k")
#: the key of the top-k in a reading's numbers
TOP_K_SYMBOL = "k_e"


def _routed(name: str) -> bool:
    """Whether a module holds routed experts (a shared expert every token passes through does not)."""
    return name.endswith("experts") and "shared" not in name


def _experts(name: str, own_leaves: list, ref: str | None, top_k: int) -> Block | None:
    """A module of routed experts stored as fused tensors (``gate_up_proj`` ``[N_e, 2F, H]``): one group
    repeated N_e times of which a token uses ``top_k``; None when its tensors do not share a first dimension."""
    firsts = {shape[0] for _, _, shape, _ in own_leaves if len(shape) >= 2}
    if len(firsts) != 1 or any(len(shape) < 2 for _, _, shape, _ in own_leaves):
        return None
    experts = firsts.pop()
    if experts.is_Integer and experts < top_k:
        return None
    own = tuple(Block(parts[0], params=(("", sp.expand(n * sp.Mul(*shape[1:]))),), shape=shape[1:], ref=parts[0],
                      kind="tensor", trainable=not frozen) for parts, n, shape, frozen in own_leaves)
    return group(name, own, repeat=experts, used=top_k, ref=ref)


def _module(name: str, leaves: list, ref: str | None = None, top_k: int | None = None) -> Block:
    """The module ``name`` holding ``leaves`` (path parts below it, count, shape, frozen); ``*`` parts repeat.
    With ``top_k``, routed experts are copies of which a token uses ``top_k``."""
    own_leaves = [leaf for leaf in leaves if len(leaf[0]) == 1]
    if top_k is not None and _routed(name) and len(own_leaves) == len(leaves):
        fused = _experts(name, own_leaves, ref, top_k)
        if fused is not None:
            return fused
    params = tuple((parts[0], n * sp.Mul(*shape)) for parts, n, shape, _ in own_leaves)
    shapes = [shape for _, _, shape, _ in own_leaves]
    below: dict[str, list] = {}
    for parts, n, shape, frozen in leaves:
        if len(parts) > 1:
            below.setdefault(parts[0], []).append((parts[1:], n, shape, frozen))
    children = tuple(_child(part, inner, top_k) for part, inner in below.items())
    if not children and not any(frozen for *_, frozen in own_leaves):
        return Block(name, params=tuple((p, sp.expand(s)) for p, s in params), shape=shapes[0] if shapes else (),
                     ref=ref, kind=_kind(name, shapes))
    # a frozen parameter (a fixed sinusoidal table) is a block of its own: it counts, it does not train
    own = tuple(Block(p, params=(("", sp.expand(s)),), shape=shape, ref=p, kind="tensor", trainable=not leaf[3])
                for (p, s), shape, leaf in zip(params, shapes, own_leaves))
    return group(name, own + children, ref=ref)


def _child(part: str, leaves: list, top_k: int | None = None) -> Block:
    """A sub-module; ``layers`` followed by ``*`` is a repeated module whose copies are the common count (a
    stack of several kinds, ``*1``, ``*2``, …, is one repeated module per kind)."""
    labels = sorted({leaf[0][0] for leaf in leaves if leaf[0][0].startswith("*")})
    if not labels:
        return _module(part, leaves, top_k=top_k)
    kinds = tuple(_repeated(part if len(labels) == 1 else f"{part}.{label}", part, label, leaves, top_k)
                  for label in labels)
    rest = [leaf for leaf in leaves if not leaf[0][0].startswith("*")]
    if not rest and len(kinds) == 1:
        return kinds[0]
    return group(part, ((_module(part, rest, ref=part, top_k=top_k),) if rest else ()) + kinds, ref="")


def _repeated(name: str, part: str, label: str, leaves: list, top_k: int | None = None) -> Block:
    """The copies of one kind of a ModuleList's elements (``label`` is ``*`` or ``*k``)."""
    repeated = [(parts[1:], n, shape, frozen) for parts, n, shape, frozen in leaves if parts[0] == label]
    times = _common_count([n for _, n, _, _ in repeated])
    inner = [(parts, sp.Integer(1) if n == times else sp.cancel(n / times), shape, frozen)
             for parts, n, shape, frozen in repeated]
    copies = _module(name, inner, ref=f"{part}.{label}", top_k=top_k)
    repeat = sp.expand(times * copies.repeat)
    if top_k is not None and _routed(part) and not (repeat.is_Integer and repeat < top_k):
        return Block(copies.name, params=copies.params, children=copies.children, repeat=repeat, shape=copies.shape,
                     ref=copies.ref, kind=copies.kind, trainable=copies.trainable, used=sp.Integer(top_k))
    return _with_repeat(copies, repeat)


def _with_repeat(block: Block, repeat: sp.Expr) -> Block:
    return Block(block.name, params=block.params, children=block.children, repeat=sp.expand(repeat),
                 shape=block.shape, ref=block.ref, kind=block.kind, trainable=block.trainable)


def _common_count(counts: list) -> sp.Expr:
    """The largest count every one of ``counts`` is a whole multiple of (as polynomials): a module's copies."""
    common = counts[0]
    if all(n == common for n in counts):  # the usual layer stack: every parameter repeats L times
        return common if common.is_number is False or (common.is_Integer and common > 0) else sp.Integer(1)
    try:
        for n in counts[1:]:
            common = sp.gcd(common, n)
    except (sp.PolynomialError, sp.GeneratorsNeeded, ValueError):
        return sp.Integer(1)
    common = sp.factor_terms(common)
    whole = all(sp.fraction(sp.cancel(n / common))[1] == 1 for n in counts)
    return common if whole and not common.is_number or (common.is_Integer and common > 0 and whole) \
        else sp.Integer(1)


def _kind(name: str, shapes: list) -> str:
    """What PyTorch module a leaf most likely is (FLOPs follow from it): a guess from its name and shapes."""
    if any(word in name for word in ("embed", "wte", "wpe", "shared")):
        return "embedding"
    if shapes and all(len(s) == 1 for s in shapes):
        return "norm"
    return "linear" if shapes and len(shapes[0]) == 2 else "tensor"
