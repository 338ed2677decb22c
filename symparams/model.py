"""The Model: one family's Block tree plus values for (some of) its symbols.

Everything the package shows (counts, JSON, formulas, documents, proofs)
comes from a :class:`Model`.  It is immutable: :meth:`Model.subs` returns a
new one.

>>> from symparams import model
>>> m = model("bert-base")
>>> m.count
109482240
>>> m.components["embeddings"]
23837184
>>> m.subs(L=24, H=1024, A=16).count
335141888
>>> model("bert").total
H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3)
"""

from __future__ import annotations

import os
from functools import cached_property, lru_cache
from typing import Any, Mapping

import sympy as sp

from .architectures import all_families, family as get_family, find as find_family
from .blocks import Block
from .display import Breakdown, ModelDisplay
from .errors import SymparamsError
from .family import Family, parse_value
from .presets import all_presets, find as find_preset
from .symbols import SYMBOLS, A, H, L, ordered


_TREES: dict[tuple, tuple[Family, Block]] = {}


def _tree(family: Family, switches: Mapping[str, Any], head: str | None) -> Block:
    """The family's Block tree for these switches and head, built once.

    The tree depends on nothing else, so models that differ only in values
    (every preset of a family) share one tree and its cached symbolic sums.
    """
    try:
        key = (id(family), tuple(sorted(switches.items())), head)
        hash(key)
    except TypeError:  # an unhashable switch value: build afresh
        return family.build(switches, head)
    hit = _TREES.get(key)
    if hit is None or hit[0] is not family:
        hit = _TREES[key] = (family, family.build(switches, head))
    return hit[1]


_SYMBOLS: dict[int, tuple[Block, tuple]] = {}


def _symbols_of(tree: Block) -> tuple:
    """The symbols a tree is written in, ordered; once per tree."""
    hit = _SYMBOLS.get(id(tree))
    if hit is None or hit[0] is not tree:
        found = set()
        for _, block, copies in tree.walk():
            found |= copies.free_symbols
            if block.is_leaf:
                found |= block.as_written.free_symbols
                for _, n in block.params:
                    found |= n.free_symbols
        if len(_SYMBOLS) > 256:
            _SYMBOLS.clear()
        hit = _SYMBOLS[id(tree)] = (tree, tuple(ordered(found)))
    return hit[1]


@lru_cache(maxsize=4096)
def closed_form(expr: sp.Expr) -> sp.Expr:
    """The simplified total: expanded, then collected in H² and H.

    Collecting by powers of the hidden size reads like the articles'
    "quadratic part plus linear part".
    """
    expr = sp.expand(expr)
    if not expr.has(H):
        return expr
    collected = sp.collect(expr, H, evaluate=False)
    terms = []
    for power, coeff in collected.items():
        terms.append(power * _coefficient(coeff))
    return sp.Add(*terms)


@lru_cache(maxsize=4096)
def _coefficient(coeff: sp.Expr) -> sp.Expr:
    """A coefficient of the closed form, collected in L: many totals share their coefficients."""
    return sp.factor_terms(sp.collect(coeff, L))


class Model(ModelDisplay):
    """A parameter-count model.

    Parameters
    ----------
    family : Family or str
    values : mapping of symbol name to value
        Values for some or all symbols; the rest stay symbolic.
    switches : mapping of switch name to value
    head : str or None
        A task head (``"masked-lm"``, ...).
    name : str or None
        A display name (preset name, config path).
    optional : set of str
        Keys of ``values`` that may go unused (a preset's, when switches
        drop a symbol); others must be used.
    """

    def __init__(self, family: Family | str, values: Mapping[str, Any] | None = None,
                 switches: Mapping[str, Any] | None = None, head: str | None = None,
                 name: str | None = None, optional: frozenset[str] = frozenset()):
        self.family = get_family(family) if isinstance(family, str) else family
        self.head = self.family.check_head(head)
        self.switches = self.family.resolve(dict(switches or {}), self.head)
        self.name = name or self.family.name
        self.tree: Block = _tree(self.family, self.switches, self.head)
        given = {k: parse_value(k, v) for k, v in (values or {}).items() if v is not None}  # None: leave free
        used = {s.name for s in self.symbols}
        for key in list(given):
            if key not in used and key in optional:
                del given[key]  # a preset's value for a symbol this variant does not use
            elif key not in used:
                raise SymparamsError(
                    f"symbol {key} is not used by {self.name} (its symbols: {' '.join(s.name for s in self.symbols)})")
        self.values: dict[sp.Symbol, sp.Expr] = {
            s: given[s.name] if s.name in given else self.family.defaults[s]
            for s in self.symbols if s.name in given or s in self.family.defaults
        }
        self._check_constraints()

    # -- structure ---------------------------------------------------------
    @cached_property
    def symbols(self) -> list[sp.Symbol]:
        """Symbols the model is written in (A included, though it may cancel)."""
        return list(_symbols_of(self.tree))

    @property
    def free(self) -> list[sp.Symbol]:
        """Symbols still without a value."""
        return [s for s in self.symbols if s not in self.values]

    def _check_constraints(self):
        names = {s.name: v for s, v in self.values.items()}
        for c in self.family.constraints:
            if not c.expr.free_symbols <= set(self.values):
                continue
            value = c.expr.xreplace(self.values)
            if not (value.is_Integer and value > 0):
                raise SymparamsError(c.message.format(value=value, **names))

    # -- counts -------------------------------------------------------------
    def evaluate(self, expr: sp.Expr) -> sp.Expr:
        """``expr`` with this model's values substituted (exact)."""
        return sp.expand(sp.sympify(expr).xreplace(self.values))

    def _number(self, expr: sp.Expr):
        value = self.evaluate(expr)
        return int(value) if value.is_Integer else value

    @cached_property
    def closed_form(self) -> sp.Expr:
        """The simplified total in all the symbols (values not substituted)."""
        return closed_form(self.tree.total)

    @cached_property
    def total(self) -> sp.Expr:
        """The simplified total with the values given substituted."""
        return closed_form(self.evaluate(self.tree.total))

    @cached_property
    def trainable_total(self) -> sp.Expr:
        return closed_form(self.evaluate(self.tree.trainable_total))

    def _require_values(self, what: str):
        if self.free:
            raise SymparamsError(
                f"{self.name}: no value for {', '.join(s.name for s in self.free)}, so the {what} is not a number "
                f"(give them with --set KEY=VALUE, or start from a preset)")

    def _int(self, expr) -> int:
        """``expr`` at this model's values, as an exact integer."""
        value = expr.xreplace(self.values) if isinstance(expr, sp.Basic) else sp.Integer(expr)
        if not value.is_Integer:
            value = sp.expand(value)
        if not value.is_Integer:
            raise ValueError(f"{self.name}: {expr} is {value} at these values, not a whole number")
        return int(value)

    @cached_property
    def _per_copy(self) -> dict[int, tuple[int, int]]:
        """id(block) → (parameters, trainable parameters) of one copy, as exact integers.

        The numbers come from the same tree as :attr:`total`: each parameter's
        size is evaluated at the values and the integers are added up, which
        is cheaper than substituting into the symbolic sums (the test-suite
        checks that both agree for every preset and head).
        """
        self._require_values("count")
        out: dict[int, tuple[int, int]] = {}

        def visit(block: Block) -> tuple[int, int]:
            own = 0 if block.tied_to is not None else sum(self._int(n) for _, n in block.params)
            total = trainable = own
            for child in block.children:
                copies = self._int(child.repeat)
                c, t = visit(child)
                total, trainable = total + copies * c, trainable + copies * t
            if block.tied_to is not None:
                total = trainable = 0
            elif not block.trainable:
                trainable = 0
            out[id(block)] = (total, trainable)
            return total, trainable

        visit(self.tree)
        return out

    @property
    def count(self) -> int:
        """The exact number of parameters (an error names any symbol without a value)."""
        self._require_values("count")
        return self._int(self.tree.repeat) * self._per_copy[id(self.tree)][0]

    @property
    def trainable(self) -> int:
        """The exact number of trainable parameters."""
        self._require_values("trainable count")
        return self._int(self.tree.repeat) * self._per_copy[id(self.tree)][1]

    @cached_property
    def components(self) -> dict[str, Any]:
        """Top-level components: name → count (an integer once all values are given)."""
        out = {name: 0 for name in self.family.components}
        for child in self.tree.children:
            out[child.name] = (self._number(child.total) if self.free else
                               self._int(child.repeat) * self._per_copy[id(child)][0])
        return out

    def block(self, path: str) -> Block:
        """The block at dotted ``path`` (e.g. ``"encoder.layer.attention"``)."""
        try:
            return self.tree.find(path)
        except KeyError:
            raise SymparamsError(f"{self.name} has no component {path!r}") from None

    def reference_counts(self) -> dict[str, tuple[int, bool]]:
        """Parameter path (transformers naming, layers as ``*``) → (count, trainable)."""
        self._require_values("count")
        out: dict[str, tuple[int, bool]] = {}
        for path, size, trainable in self.tree.reference_params():
            # several of our blocks may map to one tensor path (GPT-2's fused c_attn) or to one
            # layer-folded path (T5's layer.0 / layer.1 / layer.2): they add up
            before, _ = out.get(path, (0, trainable))
            out[path] = (before + int(self.evaluate(size)), trainable)
        return out

    def breakdown(self) -> Breakdown:
        """Rows ``(component, count, share)`` for the top-level components.

        The share is an exact ``Rational`` of the total (``None`` while the
        count is symbolic).  The rows come as a :class:`~symparams.display.Breakdown`,
        a tuple that notebooks show as a table.
        """
        total = None if self.free else self.count
        rows = []
        for name, value in self.components.items():
            share = sp.Rational(value, total) if total else None
            rows.append((name, value, share))
        return Breakdown(rows, total if total is not None else self.total, self.name)

    def rows(self, depth: int = 2):
        """Yield ``(level, path, block, count, share)`` for blocks down to ``depth``.

        ``count`` is what the block contributes to the model (all its copies);
        ``share`` its exact fraction of the total (``None`` while symbolic).
        """
        total = None if self.free else self.count
        for path, block, copies in self.tree.walk():
            level = path.count(".")
            if 1 <= level <= depth:
                value = (self._number(copies * block.count) if total is None else
                         self._int(copies) * self._per_copy[id(block)][0])
                share = sp.Rational(value, total) if total else None
                yield level, path.split(".", 1)[1], block, value, share

    # -- variants --------------------------------------------------------------
    def subs(self, **values) -> "Model":
        """A new model with more (or other) values."""
        merged = {s.name: v for s, v in self.values.items()}
        merged.update(values)
        return Model(self.family, merged, self.switches, self.head, self.name)

    def with_switches(self, **switches) -> "Model":
        merged = dict(self.switches)
        merged.update(switches)
        return Model(self.family, {s.name: v for s, v in self.values.items()}, merged, self.head, self.name)

    def prove(self):
        """The head-count (in)variance proof for this model (see :mod:`symparams.proof`)."""
        from .proof import prove

        return prove(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready summary the CLI prints with ``--json``."""
        self._require_values("count")
        return {
            "model": self.name,
            "family": self.family.name,
            "head": self.head,
            "values": {s.name: _json_number(v) for s, v in self.values.items()},
            "switches": dict(self.switches),
            "total": self.count,
            "trainable": self.trainable,
            "components": dict(self.components),
        }

    def __repr__(self) -> str:
        vals = ", ".join(f"{s.name}={v}" for s, v in self.values.items())
        return f"<Model {self.name} ({self.family.name}{', ' + self.head if self.head else ''}) {vals}>"


def _json_number(v: sp.Expr):
    return int(v) if v.is_Integer else str(v)


def model(name: "str | os.PathLike | Mapping", *, head: str | None = None, **values_and_switches) -> Model:
    """A model from a preset or family name, with values and switches as keywords.

    ``name`` may also be the path of a HuggingFace ``config.json`` (or of the
    folder holding one), or such a config as a dict; keywords then override
    its values (see :mod:`symparams.config`).

    >>> model("bert-base", L=24).count
    194536704
    >>> model("transformer-base", tie=False).components["output"]
    18944000
    >>> model({"model_type": "bert", "num_hidden_layers": 24}, H=1024, A=16).count
    335141888

    A value of ``None`` leaves a symbol free (drops a preset's value):

    >>> model("bert-base", H=None, A=20).free
    [H]
    """
    preset = find_preset(name) if isinstance(name, str) else None
    fam = None if preset is not None or not isinstance(name, str) else find_family(name)
    if preset is None and fam is None and (not isinstance(name, str) or _is_config_path(name)):
        return _from_config(name, head, values_and_switches)
    if preset is not None:
        fam = get_family(preset.family)
        values, switches = dict(preset.values), dict(preset.switches)
    elif fam is not None:
        values, switches = {}, {}
    else:
        known = ", ".join([*all_presets(), *all_families()])
        raise SymparamsError(f"unknown model {name!r} (presets and families: {known})")
    optional = frozenset(values) - frozenset(values_and_switches)
    for key, value in values_and_switches.items():
        if key in SYMBOLS:
            values[key] = value
        elif any(sw.name == key for sw in fam.switches):
            switches[key] = value
        else:
            symbols = " ".join(s for s in SYMBOLS)
            names = ", ".join(sw.name for sw in fam.switches) or "none"
            raise SymparamsError(f"unknown key {key!r} for {name} (symbols: {symbols}; switches: {names})")
    return Model(fam, values, switches, head, name, optional)


def _is_config_path(name: str) -> bool:
    return name.endswith(".json") or os.sep in name or "/" in name or os.path.exists(name)


def _from_config(source, head, overrides) -> Model:
    """A model from a config.json path (or its folder) or a config dict."""
    from . import config

    if isinstance(source, Mapping):
        return config.from_dict(source, head, overrides, source="config")
    if not isinstance(source, (str, os.PathLike)):
        raise SymparamsError(f"model() takes a name, a config.json path or a dict, not {type(source).__name__}")
    path = os.fspath(source)
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    return config.load(path, head, overrides)
