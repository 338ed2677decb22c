"""The inferred formulas as data: ``data/inferred.json``, read one model type at a time, and its formulas decoded.

``data/inferred.json`` (written by ``scripts/infer_formulas.py``) holds, for
each text model type of one transformers version and each of its classes
(``base``, ``causal-lm``, ...), every normalised parameter name
(``model.layers.*.mlp.up_proj.weight``) with its instance count and its
dimensions as formulas in the config's fields, the fields' defaults, the
conditions the formulas hold under and how they were verified.  It is read
only when a config.json's ``model_type`` has no family, and no text in it is
ever evaluated: formulas are plain data (see :func:`formula`).
"""

from __future__ import annotations

import json
import math
import os
from fractions import Fraction
from functools import lru_cache
from typing import Mapping

import sympy as sp

from ..core.errors import SymparamsError
from ..core.symbols import SYMBOLS

DATA = os.path.join(os.path.dirname(__file__), "data", "inferred.json")
#: symparams' head names for transformers' classes, as the data file names them
HEADS = ("causal-lm", "masked-lm", "seq2seq-lm")


@lru_cache(maxsize=1)
def _file() -> bytes:
    """The data file's bytes: its header on the first line, then one class a line (``scripts/infer_formulas.py``
    writes it so)."""
    with open(DATA, "rb") as fh:
        return fh.read()


@lru_cache(maxsize=None)
def entries(model_type: str) -> dict[str, dict] | None:
    """The classes inferred for ``model_type`` (class → entry), or None if the data does not list it.  Only its
    own lines are decoded and parsed: a cold command reads one type, not the megabytes of all of them."""
    text, needle = _file(), f'"model_type":{json.dumps(model_type)},'.encode()
    found, at = [], text.find(needle, text.find(b"\n"))
    while at >= 0:
        start, end = text.rfind(b"\n", 0, at) + 1, text.find(b"\n", at)
        found.append(json.loads(text[start:end if end >= 0 else len(text)].rstrip().rstrip(b",")))
        at = text.find(needle, end) if end >= 0 else -1
    return {entry["class"]: entry for entry in found if entry["model_type"] == model_type} or None


@lru_cache(maxsize=1)
def data() -> dict:
    """The data file's header: the transformers version, the keys of any config that change no shape, the legacy
    names of layer kinds transformers renames and each type's lists it renames them in, and the names its code may
    read from a config (shared, and by type)."""
    text = _file()
    head = json.loads(text[:text.find(b"\n")] + b"]}")  # a slice: partition would copy the megabytes after it
    return {"version": head["transformers_version"], "ignored": frozenset(head.get("ignored_keys", ())),
            "renamed": head.get("renamed_kinds", {"names": {}, "lists": {}}), "read": head.get("read_names")}


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
    denominator a name, a whole number, or a name plus a whole number written as a numerator is).

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
        out *= divided(_numerator(top, symbols), _numerator(bottom, symbols)) ** int(exponent)
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
                a, b = int(_numerator(top, numbers)), int(_numerator(bottom, numbers))
                if b < 1:
                    return None
                out *= Fraction((CeilDiv if "ceil" in marks else FloorDiv).divide(a, b)) ** int(exponent)
        except ZeroDivisionError:
            return None
        total += out
    return total


def _numerator(top, symbols) -> sp.Expr:
    """A floor's numerator: a name, or a list of a name, then names subtracted and a whole number added (layers
    not reusing others' keys and values, ``L - S``; the layers at 2 in every 5, ``L + 2``), a name in a list of
    its own added (the layers of two kinds together, ``["F", ["S"]]``), or a list holding names multiplied (a
    product of two widths, ``[["A", "D"]]``)."""
    if isinstance(top, list) and isinstance(top[0], list):
        return math.prod(_symbol(name, symbols) for name in top[0])
    if isinstance(top, list):
        out = _symbol(top[0], symbols)
        for item in top[1:]:
            out = out + item if isinstance(item, int) else out + _symbol(item[0], symbols) \
                if isinstance(item, list) else out - _symbol(item, symbols)
        return out
    return _symbol(top, symbols)


def numerator_names(top) -> list[str]:
    """The field names a floor's numerator (see :func:`_numerator`) is written in."""
    items = top if isinstance(top, list) else [top]
    return [n for item in items for n in (item if isinstance(item, list) else [item]) if isinstance(n, str)]


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
        top, bottom = (f"({printer._print(x)})" if x.is_Add else printer._print(x) for x in (a, b))
        return f"{self.word}({top}/{bottom})"

    def _latex(self, printer, exp=None) -> str:
        a, b = self.args
        left, right = self.brackets
        text = rf"\left{left}{{\frac{{{printer._print(a)}}}{{{printer._print(b)}}}}}\right{right}"
        return text if exp is None else f"{{{text}}}^{{{exp}}}"  # a power of it (LaTeX printer's exp=)


class FloorDiv(_WholeDivision):
    """``floor(a/b)``: a head width ``hidden_size // num_attention_heads``.

    >>> from symparams.core.symbols import H, A
    >>> FloorDiv(H, A), FloorDiv(H, A).subs({H: 2048, A: 12})
    (floor(H/A), 170)
    >>> print(sp.latex(FloorDiv(H, A) ** 2))  # a squared head width (RecurrentGemma's per-head gates)
    {\\left\\lfloor{\\frac{H}{A}}\\right\\rfloor}^{2}
    """

    word, brackets = "floor", (r"\lfloor", r"\rfloor")

    @staticmethod
    def divide(a: int, b: int) -> int:
        return a // b


class CeilDiv(_WholeDivision):
    """``ceiling(a/b)``: the layers ``0, f, 2f, …`` of ``L`` number ``ceiling(L/f)``.

    >>> from symparams.core.symbols import L
    >>> CeilDiv(L, 3), CeilDiv(L, 3).subs({L: 7}), CeilDiv(L, L + 1)
    (ceiling(L/3), 3, ceiling(L/(L + 1)))
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


def covers(model_type: str) -> bool:
    """Whether the data lists ``model_type`` (inferred or not: a type not inferred is refused with its reason)."""
    return isinstance(model_type, str) and entries(model_type) is not None


def version() -> str:
    """The transformers version the data was inferred from, as ``X.Y``."""
    return ".".join(data()["version"].split(".")[:2])


def names_in(encoded) -> set:
    """The symbol names an encoded formula uses (see :func:`~.inferred_data.formula`).

    >>> sorted(names_in([["2", [["H", 1]], [[["L", "S"], 6, 1]]], ["1", [], [["H", "A", 1]]]]))
    ['A', 'H', 'L', 'S']
    """
    if isinstance(encoded, str):
        return {encoded}
    if not isinstance(encoded, list):
        return set()
    out = set()
    for _, powers, floors in encoded:
        out |= {name for name, _ in powers}
        for top, bottom, *_ in floors:
            out |= set(numerator_names(top))
            out |= set(numerator_names(bottom))
    return out


def parameter_names(entry: dict) -> set:
    """The symbol names the parameter formulas of ``entry`` use."""
    return set().union(*(names_in(e) for _, count, shape, *_ in entry["parameters"] for e in (count, *shape)))
