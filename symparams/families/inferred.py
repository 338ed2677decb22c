"""Models of the ``model_type`` values no hand-written family reads: their formulas inferred from meta-device builds.

``data/inferred.json`` (written by ``scripts/infer_formulas.py``) holds, for
each text model type of one transformers version and each of its classes
(``base``, ``causal-lm``, ...), every normalised parameter name
(``model.layers.*.mlp.up_proj.weight``) with its instance count and its
dimensions as formulas in the config's fields, the fields' defaults, the
conditions the formulas hold under and how they were verified.  It is read
only when a config.json's ``model_type`` has no family, and no text in it is
ever evaluated: formulas are plain data (see :func:`formula`).

The tree groups the parameters by their module path; a repeated module
(``layers.*``) repeats as many times as its parameters' common count says.
Fields that mean a symparams symbol (``hidden_size`` is H) stay symbols, with
the config's values; the type's own fields (and any field at 0) are put in as
numbers, and the boolean fields that change shapes are switches.

>>> entry = {"symbols": {"n_embd": "H", "n_layer": "L"}, "parameters": [
...     ["h.*.ln.weight", "L", ["H"]], ["wte.weight", 1, [7, "H"]]]}
>>> tree = build_tree("toy", entry, {}, {})
>>> tree.total, tree.find("h").repeat
(H*L + 7*H, L)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Mapping

import sympy as sp

from ..core.blocks import Block, group
from ..core.errors import SymparamsError
from ..core.family import Constraint, Family, Switch
from ..core.symbols import SYMBOLS

DATA = os.path.join(os.path.dirname(__file__), "data", "inferred.json")
#: symparams' head names for transformers' classes, as the data file names them
HEADS = ("causal-lm", "masked-lm", "seq2seq-lm")


@lru_cache(maxsize=1)
def _lines() -> tuple[dict, list[str]]:
    """The data file's header and its lines, one class each (``scripts/infer_formulas.py`` writes it so)."""
    with open(DATA, encoding="utf-8") as fh:
        text = fh.read()
    head, _, body = text.partition("\n")
    return json.loads(head + "]}"), body.splitlines()


@lru_cache(maxsize=None)
def entries(model_type: str) -> dict[str, dict] | None:
    """The classes inferred for ``model_type`` (class → entry), or None if the data does not list it.  Only its
    own lines are parsed: a cold command reads one type, not the megabyte of all of them."""
    needle = f'"model_type":{json.dumps(model_type)},'
    found = [json.loads(line.rstrip(",")) for line in _lines()[1] if needle in line]
    return {entry["class"]: entry for entry in found if entry["model_type"] == model_type} or None


def data() -> dict:
    """The data file's header: the transformers version, the keys of any config that change no shape."""
    head = _lines()[0]
    return {"version": head["transformers_version"], "ignored": frozenset(head.get("ignored_keys", ()))}


# -- formulas as data ----------------------------------------------------------

def _symbol(name: str | int, symbols: Mapping[str, sp.Expr]) -> sp.Expr:
    if isinstance(name, int) and not isinstance(name, bool):
        return sp.Integer(name)  # a fixed layer period, a denominator
    if name not in symbols:
        raise SymparamsError(f"the inferred data names {name!r}, which is no field of its type")
    return symbols[name]


def formula(encoded, symbols: Mapping[str, sp.Expr]) -> sp.Expr:
    """A formula as the generator writes it, in ``symbols`` (symbol name → symbol or number).

    A whole number, a symbol's name, or terms ``[coefficient "p/q", [[name, exponent], ...],
    [[numerator, denominator, exponent], ...]]`` (the last: powers of ``floor(numerator/denominator)``, the
    denominator a name or a whole number).

    >>> from symparams.core.symbols import H, A
    >>> formula([["3", [["H", 1]], []], ["1/2", [], [["H", "A", 1]]]], {"H": H, "A": A})
    3*H + floor(H/A)/2
    """
    if isinstance(encoded, bool):
        raise SymparamsError(f"the inferred data holds {encoded!r} where a formula belongs")
    if isinstance(encoded, int):
        return sp.Integer(encoded)
    if isinstance(encoded, str):
        return _symbol(encoded, symbols)
    if all(isinstance(v, sp.Integer) for v in symbols.values()):
        # every field a number (reading a config.json): plain exact arithmetic spares a cold command SymPy's time
        value = _value(encoded, {name: int(v) for name, v in symbols.items()})
        if value is not None:
            return sp.Rational(value.numerator, value.denominator)
    return sp.Add(*(_term(term, symbols) for term in encoded))


def _term(term, symbols) -> sp.Expr:
    coefficient, powers, floors = term
    num, _, den = coefficient.partition("/")
    out = sp.Rational(int(num), int(den or 1))
    for name, exponent in powers:
        out *= _symbol(name, symbols) ** int(exponent)
    for top, bottom, exponent, *marks in floors:
        divided = CeilDiv if "ceil" in marks else FloorDiv
        out *= divided(_numerator(top, symbols), _symbol(bottom, symbols)) ** int(exponent)
    return out


def _value(encoded, numbers: Mapping[str, int]) -> Fraction | None:
    """The terms' sum at whole numbers, or None where SymPy must answer (a division by zero, a floor of a
    division by a number below 1, which it leaves unevaluated)."""
    total = Fraction(0)
    for coefficient, powers, floors in encoded:
        num, _, den = coefficient.partition("/")
        out = Fraction(int(num), int(den or 1))
        try:
            for name, exponent in powers:
                out *= Fraction(int(_symbol(name, numbers))) ** int(exponent)
            for top, bottom, exponent, *marks in floors:
                a, b = int(_numerator(top, numbers)), int(_symbol(bottom, numbers))
                if b < 1:
                    return None
                out *= Fraction((CeilDiv if "ceil" in marks else FloorDiv).divide(a, b)) ** int(exponent)
        except ZeroDivisionError:
            return None
        total += out
    return total


def _numerator(top, symbols) -> sp.Expr:
    """A floor's numerator: a name, or ``[name, name]``, the one less the other (layers not reusing others'
    keys and values, ``L - S``)."""
    if isinstance(top, list) and len(top) == 2:
        return _symbol(top[0], symbols) - _symbol(top[1], symbols)
    return _symbol(top, symbols)


class _WholeDivision(sp.Function):
    """``a/b`` of two positive whole numbers, rounded as a subclass says, worked out only at whole numbers:
    SymPy's own ``floor`` of symbols asks its relational machinery, whose first use imports combinatorics, a
    tenth of a second of a cold command."""

    nargs = 2
    is_integer = True
    is_nonnegative = True
    word, brackets = "", ("", "")

    @staticmethod
    def divide(a: int, b: int) -> int:
        raise NotImplementedError

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer and b > 0:
            return sp.Integer(cls.divide(int(a), int(b)))
        return None

    def _sympystr(self, printer) -> str:
        a, b = self.args
        top = f"({printer._print(a)})" if a.is_Add else printer._print(a)
        return f"{self.word}({top}/{printer._print(b)})"

    def _latex(self, printer) -> str:
        a, b = self.args
        left, right = self.brackets
        return rf"\left{left}{{\frac{{{printer._print(a)}}}{{{printer._print(b)}}}}}\right{right}"


class FloorDiv(_WholeDivision):
    """``floor(a/b)``: a head width ``hidden_size // num_attention_heads``.

    >>> from symparams.core.symbols import H, A
    >>> FloorDiv(H, A), FloorDiv(H, A).subs({H: 2048, A: 12})
    (floor(H/A), 170)
    """

    word, brackets = "floor", (r"\lfloor", r"\rfloor")

    @staticmethod
    def divide(a: int, b: int) -> int:
        return a // b


class CeilDiv(_WholeDivision):
    """``ceiling(a/b)``: the layers ``0, f, 2f, …`` of ``L`` number ``ceiling(L/f)``.

    >>> from symparams.core.symbols import L
    >>> CeilDiv(L, 3), CeilDiv(L, 3).subs({L: 7})
    (ceiling(L/3), 3)
    """

    word, brackets = "ceiling", (r"\lceil", r"\rceil")

    @staticmethod
    def divide(a: int, b: int) -> int:
        return -(-a // b)


def symbol_of(field: str, name: str) -> sp.Symbol:
    """The symbol the generator wrote for ``field``: symparams' own (``H``), else a positive whole number named
    as written (``rotary_dim``)."""
    if name in SYMBOLS:
        return SYMBOLS[name].symbol
    return sp.Symbol(name, integer=True, positive=True)


class OutsideConditions(SymparamsError):
    """A config the inferred formulas do not cover (outside a formula's conditions, or of a class not inferred):
    refused, unless one real meta-device build can count it (``symparams count`` does when torch is installed)."""


# -- the tree --------------------------------------------------------------------

def build_tree(model_type: str, entry: dict, numbers: Mapping[str, int], flags: Mapping[str, bool]) -> Block:
    """The Block tree of one inferred class: symbols for the standard fields, ``numbers`` (symbol name → value)
    and ``flags`` (field → value) put in."""
    scope = _scope(entry, numbers, flags)
    leaves = []
    for path, count, shape, *marks in entry["parameters"]:
        n = sp.expand(formula(count, scope))
        dims = tuple(sp.expand(formula(d, scope)) for d in shape)
        _refuse_negative(model_type, path, n, dims)
        if n != 0:
            leaves.append((path.split("."), n, dims, "frozen" in marks))
    root = _module(model_type, leaves, top_k=numbers.get(TOP_K_SYMBOL))
    return Block(root.name, params=root.params, children=root.children, ref="", kind=root.kind)


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


# -- a config.json of an inferred type -----------------------------------------------

@dataclass(frozen=True)
class Reading:
    """What a config.json says to an inferred type's formula: symbols' values, numbers put in, flags."""

    values: dict  # standard symbol name → value (≥ 1)
    numbers: dict  # symbol name → value, put into the tree (the type's own fields, and fields at 0)
    flags: dict  # flag field → value


def covers(model_type: str) -> bool:
    """Whether the data lists ``model_type`` (inferred or not: a type not inferred is refused with its reason)."""
    return isinstance(model_type, str) and entries(model_type) is not None


def version() -> str:
    """The transformers version the data was inferred from, as ``X.Y``."""
    return ".".join(data()["version"].split(".")[:2])


def class_of(model_type: str, head: str | None, source: str) -> str:
    """The data's class for ``head`` (None: the base model); one line when the type has no such class."""
    cls = "base" if head in (None, "", "none", "base") else head
    known = entries(model_type)
    if cls not in known:
        has = ", ".join(c for c in known) or "none"
        raise SymparamsError(f"{source}: model_type {model_type!r} has no {cls} class in the inferred data "
                             f"(it has: {has}; choose one with --head)")
    entry = known[cls]
    if not entry["exact"]:
        raise OutsideConditions(f"{source}: model_type {model_type!r} ({cls}) has no hand-written family and was "
                                f"not inferred: {entry['reason']}")
    return cls


def read_config(entry: dict, reader, source: str) -> Reading:
    """The fields' values from a config.json (its defaults for missing keys), refused outside the conditions."""
    from .config import REQUIRED

    defaults = entry.get("defaults", {})
    conditions = entry.get("conditions", {})
    follows = entry.get("follows", {})
    reader = _unaliased(reader, entry.get("aliases", {}), source)
    _refuse_unknown_sizes(entry, reader.data, source)
    # a size is at least 1, unless the type's default is 0 (no dense layers, no shared experts)
    ints = {f: reader.int(f, default=defaults.get(f, REQUIRED), minimum=0 if defaults.get(f) == 0 else 1)
            for f in entry["symbols"] if reader.has(f) or f not in follows}
    for f, value in ints.items():
        if value is None:  # the type's default is null: the fit was seeded with a number
            raise OutsideConditions(f"{source}: key {f} is missing or null, and the inferred formula needs a number")
    _refuse_flags_text_may_set(entry, reader, source)
    flags = {f: reader.bool(f, default=defaults.get(f, REQUIRED)) for f in entry.get("flags", {})}
    known = _check_conditions(conditions, {**ints, **flags}, defaults, follows, reader, source)
    for f in entry["symbols"]:
        if f not in ints:
            ints[f] = known[f] = _followed(f, follows[f], known, source)
    _check_relations(conditions, known, source)
    values, numbers = {}, {}
    for field_name, name in entry["symbols"].items():
        if name in SYMBOLS and ints[field_name] >= 1:
            values[name] = ints[field_name]
        else:
            numbers[name] = ints[field_name]
    top_k = _top_k(entry, reader)
    if top_k is not None and TOP_K_SYMBOL not in numbers:
        numbers[TOP_K_SYMBOL] = top_k
    _refuse_negative_counts(entry, {**numbers, **values}, flags, source)
    return Reading(values, numbers, flags)


def _refuse_negative_counts(entry: dict, numbers: Mapping[str, int], flags: Mapping[str, bool], source: str) -> None:
    """Values outside every configuration the fit saw can give a stack a negative count (more dense layers
    before the experts than layers): refused here, so that one real build can count the file instead."""
    scope = None
    for path, count, shape, *_ in entry["parameters"]:
        if any(_may_be_negative(encoded) for encoded in (count, *shape)):
            scope = scope or _scope(entry, numbers, flags)
            _refuse_negative(f"{source}: outside the inferred formula's conditions", path, formula(count, scope),
                             tuple(formula(d, scope) for d in shape))


def _may_be_negative(encoded) -> bool:
    """Whether a formula has a term with a negative coefficient (a difference: layers less dense layers)."""
    return isinstance(encoded, list) and any(term[0].startswith("-") for term in encoded)


def _top_k(entry: dict, reader) -> int | None:
    """How many routed experts a token uses, from the config (else the type's default); None when neither says."""
    defaults = entry.get("defaults", {})
    for prefix in ("", "text_config."):
        for name in TOP_K_FIELDS:
            key = prefix + name
            if reader.has(key) or isinstance(defaults.get(key), int):
                return reader.int(key, default=defaults.get(key))
    return None


def _unaliased(reader, aliases: dict, source: str):
    """The config read with each field under its own name (``num_experts`` is ``num_local_experts``), a
    sub-config's fields as dotted keys (``text_config.hidden_size``)."""
    from .config import flattened

    renamed = {aliases.get(k, k): v for k, v in flattened(reader.data).items()}
    return type(reader)(renamed, reader.source, reader.head)


#: words of a whole-number key that names a size (a key the formula was not fitted over that names one is refused)
SIZE_WORDS = ("dim", "size", "head", "layer", "expert", "rank", "bucket", "group", "width", "embed", "kv", "vocab")
#: words of keys that name no size though they hold one of those words (dropout rates, rope bases, generation
#: settings, expert-parallel degrees)
NOT_SIZES = ("drop", "rope", "ngram", "ep_size")


def _refuse_unknown_sizes(entry: dict, config: Mapping[str, Any], source: str) -> None:
    """One line for a whole-number key that names a size and that the formula was not fitted over: the modeling
    code may read it (a head width read with ``getattr``, absent from the default config) and change shapes.
    Other keys (rope bases, context lengths, generation settings) are taken to change none."""
    conditions = entry.get("conditions", {})
    known = {*entry["symbols"], *entry.get("flags", {}), *conditions.get("fixed", {}), *entry.get("follows", {}),
             *(k for part in ("irrelevant", "derived", "unset") for k in conditions.get(part, ()))}
    for key, value in config.items():
        name = key.rpartition(".")[2]  # a sub-config's field is judged by its own name
        if isinstance(value, int) and not isinstance(value, bool) and key not in known and "token_id" not in key \
                and name not in data()["ignored"] and not name.startswith("_") and any(w in key for w in SIZE_WORDS) \
                and not any(w in key for w in NOT_SIZES):
            raise OutsideConditions(f"{source}: key {key} is outside the inferred formula's fields (it may change "
                                    f"shapes the formula does not follow)")


def _refuse_flags_text_may_set(entry: dict, reader, source: str) -> None:
    """One line for a flag the config.json leaves out while a text key differs from the default config's: the
    config class may compute the flag from it (T5's ``is_gated_act`` from ``feed_forward_proj``)."""
    texts = entry.get("texts", {})
    held = [k for k, v in entry.get("conditions", {}).get("fixed", {}).items() if isinstance(v, bool)]
    missing = [f for f in [*entry.get("flags", {}), *held] if not reader.has(f)]
    changed = [k for k, v in texts.items() if reader.has(k) and reader.data[k] != v]
    if missing and changed:
        raise SymparamsError(f"{source}: key {missing[0]} is missing and key {changed[0]} is not the default "
                             f"{_json(texts[changed[0]])}; transformers may compute the one from the other: give "
                             f"{missing[0]}")


def _followed(name: str, rule, known: dict, source: str) -> int:
    """A field the config.json leaves out and transformers computes from others (``num_decoder_layers`` is
    ``num_layers``): its value by the rule the data holds."""
    if rule is None:
        raise SymparamsError(f"{source}: key {name} is missing; transformers computes it from other keys in a way "
                             f"the inferred data does not hold: give it")
    value = formula(rule, {k: sp.Integer(v) for k, v in known.items() if not isinstance(v, bool)})
    if not (value.is_Integer and value >= 0):
        raise SymparamsError(f"{source}: key {name} is missing, and the value transformers would give it is not a "
                             f"whole number here ({value})")
    return int(value)


def _check_conditions(conditions: dict, known: dict, defaults: dict, follows: dict, reader, source: str) -> dict:
    """One line naming the first held value the config changes or field it sets that the formula needs unset;
    else the values known, held ones included."""
    where = f"{source}: outside the inferred formula's conditions:"
    for key, held in sorted(conditions.get("fixed", {}).items()):
        if isinstance(held, bool):
            value = reader.bool(key, default=defaults.get(key, held))
        elif not reader.has(key) and key in follows:
            value = _followed(key, follows[key], known, source)
        else:
            value = reader.int(key, default=defaults.get(key, held), minimum=0)
        if value != held:
            sole = " (the only value transformers accepts)" if key in conditions.get("sole", ()) else ""
            raise OutsideConditions(f"{where} {key} is {_json(value)}, the formula holds only for "
                                    f"{key} = {_json(held)}{sole}")
        known[key] = value
    for key, lowest in sorted(conditions.get("minimum", {}).items()):
        if key in known and known[key] < lowest:
            raise OutsideConditions(f"{where} {key} is {known[key]}, the formula holds only for {key} ≥ {lowest}")
    for key in conditions.get("unset", ()):
        if reader.has(key):
            raise OutsideConditions(f"{where} {key} is set, the formula holds only with {key} unset (null)")
    return known


def _check_relations(conditions: dict, known: dict, source: str) -> None:
    """One line naming the first relation between fields the config breaks."""
    where = f"{source}: outside the inferred formula's conditions:"
    for text in conditions.get("relations", ()):
        left, kind, right = _relation(text)
        if left in known and right in known and not _holds(kind, known[left], known[right]):
            raise OutsideConditions(f"{where} {left} = {known[left]}, {right} = {known[right]}; the formula "
                                    f"needs {text}")


def _json(value) -> str:
    return json.dumps(value)


_RELATIONS = {" divides ": "divides", " = ": "equals", " < ": "below"}


def _relation(text: str) -> tuple[str, str, str]:
    for word, kind in _RELATIONS.items():
        left, found, right = text.partition(word)
        if found:
            return left, kind, right
    raise SymparamsError(f"the inferred data holds a relation it cannot read: {text[:60]!r}")


def _holds(kind: str, a: int, b: int) -> bool:
    if kind == "divides":
        return a > 0 and b % a == 0
    return a == b if kind == "equals" else a < b


def _constraints(entry: dict, reading: Reading) -> tuple[Constraint, ...]:
    """The relations between standard symbols, checked again when a value is changed (``--set``)."""
    scope = {name: (sp.Integer(reading.numbers[name]) if name in reading.numbers else symbol_of(f, name))
             for f, name in entry["symbols"].items()}
    out = []
    for text in entry.get("conditions", {}).get("relations", ()):
        left, kind, right = _relation(text)
        if left not in entry["symbols"] or right not in entry["symbols"]:
            continue
        a, b = scope[entry["symbols"][left]], scope[entry["symbols"][right]]
        expr = {"divides": b / a, "below": b - a, "equals": 1 / (1 + (a - b) ** 2)}[kind]
        if expr.free_symbols:
            out.append(Constraint(expr, f"the inferred formula needs {text} ({left} is {a}, {right} is {b})"
                                  .replace("{", "(").replace("}", ")")))
    return tuple(out)


def _at_least_zero(entry: dict, numbers: Mapping[str, int]) -> tuple[Constraint, ...]:
    """A count or dimension that a difference of fields gives (layers less dense layers) stays at least 0 when
    a value is changed (``--set``); flags are taken on, where a count has all its terms."""
    scope = None
    out = []
    for path, count, shape, *_ in entry["parameters"]:
        for what, encoded in [("instances", count), *(("dimension", d) for d in shape)]:
            if not _may_be_negative(encoded):
                continue
            scope = scope or _scope(entry, numbers, {name: True for name in entry.get("flags", {})})
            expr = formula(encoded, scope)
            if expr.free_symbols:
                out.append(Constraint(expr + 1, f"these values give {path} fewer than 0 {what}; the inferred formula "
                                                "holds only where every count and dimension is at least 0"))
    return tuple(out)


def branch_of(entry: dict, reader) -> tuple:
    """Which of an entry's formulas a config.json is counted by: a branch whose field the config has at the
    branch's lowest value or above (Gemma 4 with layers reusing others' keys and values), else the entry's own;
    the branch's key (its lowest values), ``()`` for the entry's own."""
    defaults = entry.get("defaults", {})
    for branch in entry.get("branches", ()):
        minimum = branch["conditions"]["minimum"]
        if all(reader.int(k, default=defaults.get(k, v), minimum=0) >= v for k, v in minimum.items()):
            return tuple(sorted(minimum.items()))
    return ()


def in_branch(entry: dict, key: tuple) -> dict:
    """The entry's branch of ``key`` (:func:`branch_of`), or the entry itself (whose conditions then say where it
    holds)."""
    for branch in entry.get("branches", ()) if key else ():
        if tuple(sorted(branch["conditions"]["minimum"].items())) == key:
            return branch
    return entry


@lru_cache(maxsize=64)
def family(model_type: str, cls: str, numbers: tuple, flag_defaults: tuple, heads: tuple,
           branch: tuple = ()) -> Family:
    """The family of ``model_type`` with its own fields at ``numbers``; ``heads``: the LM classes (exact, and
    whose conditions the config meets); ``branch``: which of their formulas (:func:`branch_of`)."""
    known = entries(model_type)
    switches = tuple(Switch(name, value, en=f"config field {name}") for name, value in flag_defaults)
    put_in = dict(numbers)

    def build(switch_values, head):
        entry = in_branch(known[class_of(model_type, head, model_type)], branch)
        for key, held in entry.get("conditions", {}).get("fixed", {}).items():
            if key in switch_values and switch_values[key] != held:
                raise SymparamsError(f"{model_type}: the inferred formula holds only for {key} = {_json(held)}")
        return build_tree(model_type, entry, put_in, switch_values)

    entry = in_branch(known[cls], branch)
    constraints = _constraints(entry, Reading({}, put_in, {})) + _at_least_zero(entry, put_in)
    return Family(model_type, {"en": f"{model_type}, inferred", "zh": f"{model_type}（推断）"}, build,
                  switches=switches, heads=heads, constraints=constraints, inferred=True)


def settings(config: Mapping[str, Any], head: str | None, overrides: Mapping[str, Any] | None, source: str):
    """The :class:`~symparams.families.config.Settings` of a config.json whose type only the data covers."""
    from .config import ConfigReader, Settings, model_name

    model_type = config["model_type"]
    cls = class_of(model_type, head, source)
    branch = _branch_read(entries(model_type)[cls], ConfigReader(config, source, head), source)
    entry = in_branch(entries(model_type)[cls], branch)
    reading = read_config(entry, ConfigReader(config, source, head), source)
    flag_defaults = _flag_defaults(model_type, reading.flags, config)
    heads = _heads_met(model_type, ConfigReader(config, source, head), source, branch)
    fam = family(model_type, cls, tuple(sorted(reading.numbers.items())), flag_defaults, heads, branch)
    given_values, given_switches = fam.split(overrides or {}, model_type)
    verified = entry["verification"]["exact"]
    note = f"inferred from transformers {version()} meta-device builds, verified on {verified} configurations"
    return Settings(fam, {**reading.values, **given_values}, {**dict(flag_defaults), **given_switches},
                    fam.check_head(head), model_name(source), frozenset(reading.values) - set(overrides or {}),
                    (note,))


def _branch_read(entry: dict, reader, source: str) -> tuple:
    """:func:`branch_of` for a config read with the entry's aliases."""
    return branch_of(entry, _unaliased(reader, entry.get("aliases", {}), source))


def _heads_met(model_type: str, reader, source: str, branch: tuple = ()) -> tuple[str, ...]:
    """The LM classes inferred exactly whose conditions the config meets, in the formula's ``branch`` (the others
    are no head of its model: ``--head`` names the condition)."""
    met = []
    for cls in HEADS:
        entry = entries(model_type).get(cls)
        if entry is None or not entry["exact"]:
            continue
        try:
            read_config(in_branch(entry, branch), reader, source)
        except SymparamsError:
            continue
        met.append(cls)
    return tuple(met)


def _flag_defaults(model_type: str, flags: dict, config: Mapping[str, Any]) -> tuple:
    """Every class's flags at the config's values (else their defaults), so another head reads them too."""
    from .config import flattened

    out, config = dict(flags), flattened(config)
    for entry in entries(model_type).values():
        for name in entry.get("flags", {}):
            if name not in out and name in entry.get("defaults", {}):
                value = config.get(name)
                out[name] = value if isinstance(value, bool) else entry["defaults"][name]
    return tuple(sorted(out.items()))


def model(config: Mapping[str, Any], head: str | None = None, source: str = "config"):
    """The model of a config dict from the inferred formulas, whether or not a family reads its type (the
    cross-checks compare the two)."""
    from ..core.model import Model

    if not covers(config.get("model_type")):
        raise SymparamsError(f"{source}: model_type {config.get('model_type')!r} is not in the inferred data")
    s = settings(config, head, None, source)
    return Model(s.family, s.values, s.switches, s.head, s.name, optional=s.optional, notes=s.notes)
