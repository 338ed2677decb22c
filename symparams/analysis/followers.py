"""The symbols ``solve`` and ``sweep`` vary, freed from a model, with what follows them in a config.json.

For a preset or a family, varying a symbol changes that symbol alone.  For a
model read from a config.json, varying ``H`` means what ``--set H=...``
means: the file edited to that ``hidden_size``, as transformers builds it.  A
field the file gives then stays (GPT-NeoX's ``intermediate_size``: the ratio
r = intermediate_size / H falls as H grows), one it leaves out follows as
the config class computes it (GPT-2's ``n_inner`` unset is 4H: r stays 4),
and a structure the file's values happen to share (a decoder as deep as the
encoder) parts when one of them moves.

The file is read again at four other values of the varied symbols (their
own values times a small factor, the first four the family accepts).  The
structure (family and switches) is the one most of those readings have, and
at least three of the five readings (the file's own and the four) must have
it.  In the readings of that structure each other symbol is then constant,
or what the family declares it follows (an inferred type's ``head_dim`` =
H/A) where that gives its value at every reading, or a ratio whose width
stays (its value times H constant), written ``width / H``.  Anything else
follows in a way no formula here expresses, and is refused in one line
naming it, never guessed.  The formula's count is checked against the
file's own count at all five readings (:meth:`Freed.check`).

>>> from symparams import model
>>> from symparams.core.symbols import H
>>> neox = model({"model_type": "gpt_neox", "hidden_size": 256, "intermediate_size": 512,
...               "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 1000})
>>> freed(neox, {H}).follows
{r: 512/H}
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import NamedTuple

import sympy as sp

from ..core.errors import SymparamsError
from ..core.model import Model
from ..core.symbols import SYMBOLS, H
from ..core.values import to_python
from ..families.double_entry import Disagreement
from .variables import without

#: the factors the varied values are multiplied by to read the file at other points, the first four that give
#: whole values the family reads (a head count may have to fall to divide the width)
FACTORS = (2, 3, 4, 5, 6, 7, 8, Fraction(1, 2), Fraction(1, 4), 9, 10, 12, 16, Fraction(1, 3), Fraction(1, 8))
POINTS = 4


class Freed(NamedTuple):
    """A model with symbols freed: ``model`` (their values taken out), ``follows`` (the symbols that follow
    them, as expressions in them), ``points`` (the file read at other values of them; none for a preset)."""

    model: Model
    follows: dict
    points: tuple = ()

    def check(self, expression: sp.Expr) -> None:
        """Raise unless ``expression`` (the count in the freed symbols, every other value substituted) equals
        the file's count at each of ``points``: a formula that is not the file's is never printed."""
        for point in self.points:
            at = {s: point.values[s] for s in expression.free_symbols}
            value = sp.expand(expression.xreplace(at))
            if value != point.count:
                shown = " ".join(f"{s.name}={v}" for s, v in at.items())
                raise SymparamsError(f"{self.model.name}: the formula counts {value} at {shown}, the file edited "
                                     f"to those values {point.count}; neither is printed")


def freed(m: Model, varying) -> Freed:
    """``m`` with the ``varying`` symbols free, at the structure the file has away from its own values, and
    what follows them; a model read from no file: the values taken out, nothing following."""
    reading = getattr(m, "reread", None)
    names = sorted(s.name for s in varying if s.name in SYMBOLS and s in m.symbols)
    if reading is None or not names:
        return Freed(without(m, varying), {})
    own = reading.unset(names, m.head)
    start = {name: to_python(own.values[SYMBOLS[name].symbol]) for name in names}
    points = _points(reading, m, start, names)
    # a structure the values happen to meet at one point (A·D = H: no head width of its own) counts the same there
    # as the one around it; the count is checked at every point
    chosen = Counter(map(_structure, points)).most_common(1)[0][0]
    alike = [p for p in [own, *points] if _structure(p) == chosen]
    if len(alike) < 3:
        raise SymparamsError(f"{m.name}: the file's reading changes its structure as {', '.join(names)} vary; "
                             f"vary them with --set instead")
    first = alike[-1]
    declared = {f.symbol: f.expr for f in first.family.follows}  # an inferred type's: head_dim = H/A, ...
    follows = {}
    for symbol in first.symbols:
        if symbol in varying:
            continue
        follower = _follower(symbol, alike, names, declared.get(symbol))
        if follower is None:
            raise SymparamsError(f"{m.name}: {symbol.name} follows {', '.join(names)} in the file's reading in a "
                                 f"way no formula here expresses ({_seen(symbol, alike, names)}); vary "
                                 f"{names[0]} with --set instead")
        if follower is not True:
            follows[symbol] = follower
    keep = {s: v for s, v in first.values.items() if s not in varying and s not in follows}
    follows = {s: sp.sympify(e).xreplace(keep) for s, e in follows.items()}
    return Freed(Model(first.family, {s.name: v for s, v in keep.items()}, first.switches, first.head, m.name),
                 follows, (own, *points))


def _structure(m: Model) -> tuple:
    """What a reading builds: the family, its switches and the tree's count (an inferred type's family is made
    anew at each reading)."""
    return m.family.name, tuple(sorted(m.switches.items())), m.tree.total


def _follower(symbol, readings, names, declared=None):
    """True if ``symbol`` holds one value at every reading; the family's ``declared`` expression where it gives
    the symbol's value at every reading; ``width / H`` for a ratio whose width stays as H varies; None otherwise."""
    seen = [p.values.get(symbol) for p in readings]
    if len(set(seen)) == 1:
        return True
    if declared is not None and all(sp.expand(declared.xreplace(p.values)) == v for v, p in zip(seen, readings)):
        return declared
    if not (SYMBOLS[symbol.name].rational and "H" in names) or None in seen:
        return None
    widths = {value * p.values[H] for value, p in zip(seen, readings)}
    return widths.pop() / H if len(widths) == 1 else None


def _points(reading, m: Model, start: dict, names) -> list[Model]:
    """The file read at :data:`POINTS` other values of ``names``: their own times the first factors of
    :data:`FACTORS` that give whole sizes the family reads."""
    points, refusal = [], "no value read"
    for factor in FACTORS:
        values = {name: Fraction(start[name]) * factor for name in names}
        if any(not SYMBOLS[name].rational and value.denominator != 1 for name, value in values.items()):
            continue
        try:
            points.append(reading({name: int(v) if v.denominator == 1 else v for name, v in values.items()}, m.head))
        except Disagreement:
            raise
        except SymparamsError as exc:
            refusal = str(exc)
            continue
        if len(points) == POINTS:
            return points
    raise SymparamsError(f"{m.name}: cannot read the file at other values of {', '.join(names)} to see what follows "
                         f"them ({refusal})")


def _seen(symbol, readings, names) -> str:
    """``r is 2 at H=256, 1 at H=512, ...``: a symbol's value at each reading."""
    def at(p):
        return " ".join(f"{n}={p.values.get(SYMBOLS[n].symbol)}" for n in names)

    return f"{symbol.name} is " + ", ".join(f"{p.values.get(symbol)} at {at(p)}" for p in readings)
