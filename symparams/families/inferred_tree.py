"""The Block tree of an inferred class: its parameters grouped by module path, repeated modules as repeats.

Modules come in the order transformers registers them (the order the model
computes them), as the entry's ``order`` records it, and a linear layer's
weight, which PyTorch stores ``[out, in]``, takes the shape the documents
write, ``[in, out]``; no other tensor is turned round (the entry's
``modules`` say which are linear layers and embedding tables).
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

import re
from typing import Mapping, NamedTuple

import sympy as sp

from ..core.blocks import Block, Deferred, group, product_as_written, sum_as_written
from ..core.errors import SymparamsError
from .inferred_data import OutsideConditions, formula, symbol_of

def build_tree(model_type: str, entry: dict, numbers: Mapping[str, int], flags: Mapping[str, bool],
               costs_refused: str | None = None) -> Block:
    """The Block tree of one inferred class: symbols for the standard fields, ``numbers`` (symbol name → value)
    and ``flags`` (field → value) put in; modules in registration order; with the costs the data holds
    (:mod:`.inferred_costs`; none, and ``costs_refused`` the reason, for a config outside their conditions).

    >>> from symparams.families.inferred_data import entries
    >>> tree = build_tree("olmo", entries("olmo")["base"], {}, {"attention_bias": False})
    >>> [c.name for c in tree.find("layers").children], tree.find("layers.self_attn.k_proj").shape
    (['self_attn', 'mlp'], (H, G*floor(H/A)))
    """
    scope = _scope(entry, numbers, flags)
    kinds = module_kinds(entry)
    found = {}
    for i in registration_order(entry):
        path, count, shape, *_ = entry["parameters"][i]
        found[i] = (path, sp.expand(formula(count, scope)), tuple(sp.expand(formula(d, scope)) for d in shape))
        _refuse_negative(model_type, *found[i])
    tied = _tied(entry, scope, found, kinds)
    general = _scope(entry, {}, flags) if numbers and _mixed_stack(entry) else None
    leaves = []
    for i, (path, n, dims) in found.items():
        if n != 0 or i in tied:
            known = kinds.get(i, "") if "modules" in entry else None
            untied, target = tied.get(i, (n, None))
            structural = None if general is None or target else sp.expand(formula(entry["parameters"][i][1], general))
            leaves.append(Leaf(path.split("."), untied, dims, "frozen" in entry["parameters"][i][3:], known, target,
                               structural))
    root = _module(model_type, leaves, top_k=numbers.get(TOP_K_SYMBOL))
    tree = Block(root.name, params=root.params, children=root.children, ref="", kind=root.kind)
    _check_total(model_type, tree, [leaf for leaf in leaves if leaf.tied_to is None])

    def attach(_):  # the costs go on when a figure asks for them: SymPy work a cold count never needs
        from .inferred_costs import cost_scope, with_costs  # not imported by a count, which never needs them

        return with_costs(tree, entry, cost_scope(entry, scope, numbers, set(tree.symbols)), costs_refused)

    return Block(tree.name, params=tree.params, children=tree.children, ref="", kind=tree.kind,
                 computes=(Deferred(attach),))


def _mixed_stack(entry: dict) -> bool:
    """Whether the parameters of some list of layers (``layers.*``) are counted by different formulas: layers
    of several kinds the fit keeps in one list (dense and mixture-of-experts layers, attention and linear
    attention), which the tree groups by what the counts have in common with every size a symbol (the
    config's numbers may be equal, or share a factor, by chance)."""
    counts: dict[str, set] = {}
    for path, count, *_ in entry["parameters"]:
        if (element := _ELEMENT.search(path)) is not None:  # each kind of a list's layers (``*1``) apart
            counts.setdefault(path[:element.end()], set()).add(repr(count))
    return any(len(seen) > 1 for seen in counts.values())


#: the first element index of a normalised parameter name (``layers.*.mlp``, ``layers.*2.mlp``)
_ELEMENT = re.compile(r"(?:^|\.)\*\d*(?=\.)")


def list_of(path: str) -> str | None:
    """The path of the outermost list of layers a normalised parameter name lies in (``model.layers`` of
    ``model.layers.*.mlp.weight``), or None."""
    found = _ELEMENT.search(path)
    return path[:found.start()] if found else None


#: the config field whose truth ties an output layer to the token embeddings (a sub-config's too)
TIE_FIELD = "tie_word_embeddings"


def _tied(entry: dict, scope: Mapping[str, sp.Expr], found: dict, kinds: Mapping[int, str]) -> dict[int, tuple]:
    """Parameter index → (its instances untied, the module it is tied to) for each parameter the config's tied
    word embeddings take away (an LM head's weight): a block of no parameters of its own, as a hand-written
    family shows it, on which the head's traced FLOPs land.  Its tensor is the one parameter of its shape and
    name (``weight``) the model keeps, an embedding table where several are; where none is certain, or the
    builds did not show the tied module a linear layer or an embedding, it is left out (the counts are the
    same either way)."""
    ties = {name: sp.Integer(0) for field, name in entry.get("flags", {}).items()
            if field.rpartition(".")[2] == TIE_FIELD and scope[name] == 1}
    if not ties:
        return {}
    untied_scope = {**scope, **ties}
    out = {}
    for i, (path, n, dims) in found.items():
        untied = sp.expand(formula(entry["parameters"][i][1], untied_scope)) if n == 0 else sp.Integer(0)
        if untied == 0 or kinds.get(i) not in ("linear", "embedding"):  # a module of no known kind stays out
            continue
        name = path.rpartition(".")[2]
        kept = [j for j, (other, m, other_dims) in found.items()
                if m != 0 and other_dims == dims and other.rpartition(".")[2] == name]
        tables = [j for j in kept if kinds.get(j) == "embedding"]
        target = kept if len(kept) == 1 else tables if len(tables) == 1 else None
        if target:
            out[i] = (untied, found[target[0]][0].rpartition(".")[0])
    return out


def _check_total(model_type: str, tree: Block, leaves: list) -> None:
    """The tree must hold every parameter the entry lists, each once: a grouping that lost or doubled one would
    print a number the formula never gave, so it is refused instead."""
    listed = sp.expand(sp.Add(*(leaf.count * sp.Mul(*leaf.shape) for leaf in leaves)))
    if sp.expand(tree.total - listed) != 0:
        raise SymparamsError(f"{model_type}: the module tree of the inferred formula holds {tree.total} parameters "
                             f"where its parameters sum to {listed}; refused rather than printed")


def registration_order(entry: dict) -> list[int]:
    """The indices of the entry's parameters in the order transformers registers them (an entry written before
    the order was recorded: as listed, by name); a parameter the order leaves out comes last, never dropped."""
    order = list(entry.get("order") or ())
    return order + [i for i in range(len(entry["parameters"])) if i not in set(order)]  # a part no order names kept


def module_kinds(entry: dict) -> dict[int, str]:
    """Parameter index → ``linear`` (an ``nn.Linear``'s weight) or ``embedding`` (an ``nn.Embedding``'s table),
    as the entry records them from a build; empty for an entry that records none."""
    return {i: kind for kind, indices in entry.get("modules", {}).items() for i in indices}


def _scope(entry: dict, numbers: Mapping[str, int], flags: Mapping[str, bool]) -> dict[str, sp.Expr]:
    """Each symbol name of ``entry``: its value where ``numbers`` has one (a number, or what a field of the type's
    own follows), else its symbol; flags as 0/1."""
    scope: dict[str, sp.Expr] = {}
    for field_name, name in entry["symbols"].items():
        scope[name] = sp.sympify(numbers[name]) if name in numbers else symbol_of(field_name, name)
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


def tree_of_build(model_type: str, shapes: Mapping[str, list], frozen=frozenset(), top_k: int | None = None,
                  kinds: Mapping[str, str] | None = None, lists: Mapping[str, int] | None = None) -> Block:
    """The Block tree of one real build: each normalised parameter name's shapes (one per instance, in
    registration order), grouped by module path as an inferred tree is, every size a number; ``kinds``: the
    names that are a linear layer's weight or an embedding table; ``lists``: how many elements each list of
    layers holds (``model.layers``: 48), so that parts of layers of several kinds are not grouped by a common
    factor of their numbers."""
    leaves = [Leaf(path.split("."), sp.Integer(len(found)), tuple(sp.Integer(d) for d in found[0]), path in frozen,
                   None if kinds is None else kinds.get(path, ""), general=_in_list(path, len(found), lists or {}))
              for path, found in shapes.items()]
    root = _module(model_type, leaves, top_k=top_k)
    return Block(root.name, params=root.params, children=root.children, ref="", kind=root.kind)


def _in_list(path: str, count: int, lists: Mapping[str, int]) -> sp.Expr | None:
    """A built parameter's count as a formula would write it, for the grouping: a whole number of the ``n``
    elements of its list, in a symbol standing for them (``2·n``: a pair in every layer); another number, a
    symbol for that number in that list, which shares no factor with the list's (12 attention layers of 48 are
    no copies of any)."""
    stack = list_of(path)
    n = lists.get(stack) if stack is not None else None
    if not n:
        return None
    whole, rest = divmod(count, n)
    return whole * sp.Symbol(f"n({stack})") if rest == 0 else sp.Symbol(f"{count}({stack})")


#: the config fields that say how many routed experts a token uses (no shape follows them, so the fit never saw
#: them); the active count needs one
TOP_K_FIELDS = ("num_experts_per_tok", "num_experts_per_token", "moe_topk", "moe_top_k", "router_top_k")
#: the key of the top-k in a reading's numbers
TOP_K_SYMBOL = "k_e"


def routed_experts(name: str) -> bool:
    """Whether a module holds routed experts (a shared expert every token passes through does not)."""
    return name.endswith("experts") and "shared" not in name


class Leaf(NamedTuple):
    """One normalised parameter below a module: its path parts, instances, shape as stored, whether it trains,
    what module it is the weight of (``linear``, ``embedding``; ``""``: the build showed it is neither; None: no
    build was asked), the module whose tensor it is where it is tied to one (it then adds nothing), and its count
    with every size a symbol where the config's numbers are in ``count`` (None: the same, or not needed)."""

    parts: list
    count: sp.Expr
    shape: tuple
    frozen: bool
    kind: str | None = None
    tied_to: str | None = None
    general: sp.Expr | None = None

    def below(self, copies: sp.Expr = sp.Integer(1), structural: sp.Expr = sp.Integer(1)) -> "Leaf":
        """The same parameter one module down, in each of ``copies`` copies of it there (``structural``: that
        number with every size a symbol)."""
        return self._replace(parts=self.parts[1:], **self.per_copy(copies, structural))

    def per_copy(self, copies: sp.Expr, structural: sp.Expr) -> dict:
        """The counts of the parameter in each of ``copies`` copies of its module."""
        return {"count": _divided(self.count, copies), "general": None if self.general is None
                else _divided(self.general, structural)}


def _divided(count: sp.Expr, copies: sp.Expr) -> sp.Expr:
    """``count / copies``, simplified only where it must be (a cold count spends no SymPy time on 1s)."""
    return count if copies == 1 else sp.Integer(1) if count == copies else sp.cancel(count / copies)


def _experts(name: str, own_leaves: list[Leaf], ref: str | None, top_k: int) -> Block | None:
    """A module of routed experts stored as fused tensors (``gate_up_proj`` ``[N_e, 2F, H]``): one group
    repeated N_e times of which a token uses ``top_k``; None when its tensors do not share a first dimension."""
    firsts = {leaf.shape[0] for leaf in own_leaves if len(leaf.shape) >= 2}
    if len(firsts) != 1 or any(len(leaf.shape) < 2 for leaf in own_leaves):
        return None
    experts = firsts.pop()
    if experts.is_Integer and experts < top_k:
        return None
    own = tuple(Block(leaf.parts[0], params=(("", sp.expand(leaf.count * sp.Mul(*leaf.shape[1:]))),),
                      shape=leaf.shape[1:], ref=leaf.parts[0], kind="tensor", trainable=not leaf.frozen)
                for leaf in own_leaves)
    return group(name, own, repeat=experts, used=top_k, ref=ref)


def _module(name: str, leaves: list[Leaf], ref: str | None = None, top_k: int | None = None,
            kinds: bool = False) -> Block:
    """The module ``name`` holding ``leaves``, its parts in the order the leaves come; ``*`` parts repeat.
    With ``top_k``, routed experts are copies of which a token uses ``top_k``.  In a list of layers of several
    ``kinds``, a part every parameter of which comes in the same number is that many copies."""
    own_leaves = [leaf for leaf in leaves if len(leaf.parts) == 1]
    if not all(leaf.tied_to for leaf in own_leaves):  # a tied bias beside the module's own weight adds nothing
        leaves = [leaf for leaf in leaves if len(leaf.parts) > 1 or not leaf.tied_to]
        own_leaves = [leaf for leaf in own_leaves if not leaf.tied_to]
    if top_k is not None and routed_experts(name) and len(own_leaves) == len(leaves):
        fused = _experts(name, own_leaves, ref, top_k)
        if fused is not None:
            return fused
    below: dict[str, list] = {}
    for leaf in leaves:
        if len(leaf.parts) > 1:
            below.setdefault(leaf.parts[0], []).append(leaf.below())
    if not below and not any(leaf.frozen for leaf in own_leaves):
        return Block(name, params=tuple((leaf.parts[0], sp.expand(leaf.count * sp.Mul(*leaf.shape)))
                                        for leaf in own_leaves),
                     written=sum_as_written(*(product_as_written(leaf.count, *_shown(leaf)) for leaf in own_leaves)),
                     shape=_shown_shape(own_leaves), ref=ref, kind=_kind(name, own_leaves),
                     tied_to=_shown_tie(own_leaves))
    # a frozen parameter (a fixed sinusoidal table) is a block of its own: it counts, it does not train
    parts = {leaf.parts[0]: Block(leaf.parts[0], params=(("", sp.expand(leaf.count * sp.Mul(*leaf.shape))),),
                                  shape=leaf.shape, ref=leaf.parts[0], kind="tensor", trainable=not leaf.frozen,
                                  tied_to=leaf.tied_to)
             for leaf in own_leaves}
    parts.update({part: _child(part, inner, top_k, kinds) for part, inner in below.items()})
    return group(name, [parts[p] for p in dict.fromkeys(leaf.parts[0] for leaf in leaves)], ref=ref)


def _shown_shape(own_leaves: list[Leaf]) -> tuple:
    """The shape a document shows for a module: its weight's, else its first parameter's (:func:`_shown`)."""
    if not own_leaves:
        return ()
    return _shown(next((leaf for leaf in own_leaves if leaf.parts[0] == "weight"), own_leaves[0]))


def _shown_tie(own_leaves: list[Leaf]) -> str | None:
    """The module a tied module shows it is tied to: its weight's, else its first parameter's."""
    tied = [leaf for leaf in own_leaves if leaf.tied_to]
    return next((leaf.tied_to for leaf in tied if leaf.parts[0] == "weight"), tied[0].tied_to if tied else None)


def _shown(leaf: Leaf) -> tuple:
    """A parameter's shape as the documents write it, a linear layer's weight ``[in, out]`` (turned round from
    PyTorch's ``[out, in]``), and its count as the product of that shape: an embedding's V·H beside [V, H]."""
    return leaf.shape[::-1] if leaf.kind == "linear" and len(leaf.shape) == 2 else leaf.shape


def _child(part: str, leaves: list[Leaf], top_k: int | None = None, kinds: bool = False) -> Block:
    """A sub-module; ``layers`` followed by ``*`` is a repeated module whose copies are the common count (a
    stack of several kinds, ``*1``, ``*2``, …, is one repeated module per kind, in the order they come)."""
    # an element of a ParameterList (Reformer's axial position tables, ``weights.*1``) is a tensor of its own
    labels = list(dict.fromkeys(leaf.parts[0] for leaf in leaves if _copied(leaf)))
    if not labels:
        return _copies_of_one_kind(part, leaves, top_k) if kinds else _module(part, leaves, top_k=top_k)
    stacks = {label: _repeated(part if len(labels) == 1 else f"{part}.{label}", part, label, leaves, top_k)
              for label in labels}
    rest = [leaf for leaf in leaves if not _copied(leaf)]
    if not rest and len(stacks) == 1:
        return stacks[labels[0]]
    if rest:
        stacks[rest[0].parts[0]] = _module(part, rest, ref=part, top_k=top_k)
    first = dict.fromkeys(leaf.parts[0] if _copied(leaf) else rest[0].parts[0] for leaf in leaves)
    return group(part, [stacks[key] for key in first], ref="")


def _copies_of_one_kind(part: str, leaves: list[Leaf], top_k: int | None) -> Block:
    """A part of a list of layers of several kinds: as many copies as its parameters' one number where they
    have one (the attention of the attention layers); else its parts, each so."""
    numbers = {(leaf.count, leaf.general) for leaf in leaves}
    if len(numbers) == 1:
        count, general = numbers.pop()
        if count != 1:
            inner = _module(part, [leaf._replace(**leaf.per_copy(count, general or count)) for leaf in leaves],
                            top_k=top_k)
            if inner.repeat == 1 and inner.used is None:
                return _with_repeat(inner, count)
    return _module(part, leaves, top_k=top_k, kinds=True)


def _copied(leaf: Leaf) -> bool:
    """Whether a leaf lies in a copy of a repeated module (``layers.*``), not in a list of tensors."""
    return leaf.parts[0].startswith("*") and len(leaf.parts) > 1


def _repeated(name: str, part: str, label: str, leaves: list[Leaf], top_k: int | None = None) -> Block:
    """The copies of one kind of a ModuleList's elements (``label`` is ``*`` or ``*k``)."""
    repeated = [leaf for leaf in leaves if leaf.parts[0] == label]
    times, structural = _copies(repeated)
    inner = [leaf.below(times, structural) for leaf in repeated]
    several = len({(leaf.count, leaf.general) for leaf in repeated}) > 1
    copies = _module(name, inner, ref=f"{part}.{label}", top_k=top_k, kinds=several)
    repeat = sp.expand(times * copies.repeat)
    if top_k is not None and routed_experts(part) and not (repeat.is_Integer and repeat < top_k):
        return Block(copies.name, params=copies.params, children=copies.children, repeat=repeat, shape=copies.shape,
                     ref=copies.ref, kind=copies.kind, trainable=copies.trainable, used=sp.Integer(top_k))
    return _with_repeat(copies, repeat)


def _copies(repeated: list[Leaf]) -> tuple[sp.Expr, sp.Expr]:
    """How many copies of a ModuleList's element hold ``repeated``, and that number with every size a symbol:
    their counts' common factor as the formulas have it.  Numbers in the counts would make one of chance (12
    attention and 36 linear-attention layers are not 12 copies of four layers); where the symbolic common factor
    is no count's, the copies are not known, and each part keeps its own count."""
    if all(leaf.general is None for leaf in repeated):
        times = _common_count([leaf.count for leaf in repeated])
        return times, times
    structural = _common_count([leaf.count if leaf.general is None else leaf.general for leaf in repeated])
    if structural.is_Integer:
        return structural, structural
    value = next((leaf.count for leaf in repeated
                  if leaf.general is not None and sp.expand(leaf.general - structural) == 0), None)
    return (value, structural) if value is not None else (sp.Integer(1), sp.Integer(1))


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


def _kind(name: str, own_leaves: list[Leaf]) -> str:
    """What PyTorch module a leaf is (FLOPs follow from it): a linear layer or an embedding as the build recorded
    it, a norm where every parameter is a vector, else a tensor; where nothing was recorded, a guess from its
    name and shapes."""
    shapes = [leaf.shape for leaf in own_leaves]
    recorded = [leaf.kind for leaf in own_leaves if leaf.kind is not None]
    if recorded:
        known = [kind for kind in recorded if kind]
        return known[0] if known else "norm" if all(len(s) == 1 for s in shapes) else "tensor"
    if any(word in name for word in ("embed", "wte", "wpe", "shared")):
        return "embedding"
    if shapes and all(len(s) == 1 for s in shapes):
        return "norm"
    return "linear" if shapes and len(shapes[0]) == 2 else "tensor"
