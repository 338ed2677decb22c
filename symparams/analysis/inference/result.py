"""What the inference engine returns: the closed form, the symbols it is written in, where it holds, how it was checked.

Config fields that mean what a symparams symbol means are written with that
symbol (``hidden_size``, ``n_embd`` and ``d_model`` are all H); the others
keep their own name, as a positive integer symbol created once; boolean
flags are 0/1 symbols.

>>> symbols_for(["n_embd", "n_head", "n_layer", "rotary_dim"])
{'n_embd': H, 'n_head': A, 'n_layer': L, 'rotary_dim': rotary_dim}
>>> flag_symbol("tie_word_embeddings").is_nonnegative
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import sympy as sp

from ...core.errors import SymparamsError
from ...core.symbols import SYMBOLS
from ...families.inferred_conditions import side_value

#: config field → symparams symbol, where the field means what the symbol means (first field wins a symbol)
STANDARD = {
    "vocab_size": "V",
    "max_position_embeddings": "P", "n_positions": "P",
    "type_vocab_size": "S",
    "hidden_size": "H", "n_embd": "H", "d_model": "H", "emb_dim": "H",
    "num_hidden_layers": "L", "n_layer": "L", "num_layers": "L", "n_layers": "L", "encoder_layers": "L",
    "num_decoder_layers": "L_d", "decoder_layers": "L_d",
    "num_attention_heads": "A", "n_head": "A", "num_heads": "A", "n_heads": "A", "encoder_attention_heads": "A",
    "decoder_attention_heads": "A_d",
    "num_labels": "C",
    "embedding_size": "E",
    "num_key_value_heads": "G", "num_kv_heads": "G",
    "head_dim": "D", "d_kv": "D",
    "relative_attention_num_buckets": "B",
    "intermediate_size": "F", "n_inner": "F", "d_ff": "F", "ffn_dim": "F", "encoder_ffn_dim": "F",
    "ffn_hidden_size": "F",
    "num_local_experts": "N_e", "n_routed_experts": "N_e", "num_experts": "N_e",
    "num_experts_per_tok": "k_e",
    "moe_intermediate_size": "F_e",
    "n_shared_experts": "N_s",
    "shared_expert_intermediate_size": "F_s",
    "first_k_dense_replace": "L_f",
    "q_lora_rank": "R_q", "kv_lora_rank": "R_kv",
    "qk_nope_head_dim": "D_n", "qk_rope_head_dim": "D_r", "v_head_dim": "D_v",
}

#: the sub-config of a multimodal model's language model
TEXT_CONFIG = "text_config."

_OWN: dict[tuple[str, bool], sp.Symbol] = {}


def own_symbol(name: str, flag: bool = False) -> sp.Symbol:
    """The symbol of a field without a standard meaning: a positive integer (a flag: 0 or 1), created once.

    A field spelled like a symparams symbol (``H``) is written ``H_field`` so the two never meet.
    """
    text = f"{name}_field" if name in SYMBOLS else name.replace("#", "_")  # a kind count: layer_types_full
    key = (text, flag)
    if key not in _OWN:
        _OWN[key] = sp.Symbol(text, integer=True, nonnegative=True) if flag else \
            sp.Symbol(text, integer=True, positive=True)
    return _OWN[key]


def flag_symbol(name: str) -> sp.Symbol:
    """A boolean field as a 0/1 symbol."""
    return own_symbol(name, flag=True)


def symbols_for(fields) -> dict[str, sp.Symbol]:
    """Each size field's symbol: the standard one when the field means it (and no earlier field took it)."""
    out: dict[str, sp.Symbol] = {}
    taken: set[str] = set()
    for name in fields:
        # a multimodal model's language model says what its sizes mean; other towers get symbols of their own
        standard = STANDARD.get(name.removeprefix(TEXT_CONFIG))
        if standard is not None and standard not in taken:
            out[name] = SYMBOLS[standard].symbol
            taken.add(standard)
        else:
            out[name] = own_symbol(name)
    return out


@dataclass(frozen=True)
class Relation:
    """A discovered relation between two fields (or two products of fields, equal: see :mod:`.products`), as the
    sampled domain held it: divides, equals or below; or, where the structure changes as two fields meet (a
    projection between two widths only where they differ), differs or equals, one formula on each side; or, where
    a bound stops mattering past another field (the last layer with experts past the last layer), below or at
    least, one formula on each side."""

    left: str
    kind: str
    right: str

    def holds(self, values: Mapping[str, Any]) -> bool:
        a, b = side_value(self.left, values), side_value(self.right, values)
        return {"divides": lambda: a > 0 and b % a == 0, "equals": lambda: a == b, "below": lambda: a < b,
                "differs": lambda: a != b, "atleast": lambda: a >= b}[self.kind]()

    def __str__(self) -> str:
        word = {"divides": "divides", "equals": "=", "below": "<", "differs": "≠", "atleast": "≥"}[self.kind]
        return f"{self.left} {word} {self.right}"


@dataclass(frozen=True)
class Conditions:
    """Where the formula holds: the relations, every held field at its value, the structure (regime)."""

    relations: tuple[Relation, ...] = ()
    fixed: dict = field(default_factory=dict)  # fields that could not move, and flags held, at their values
    irrelevant: tuple[str, ...] = ()  # fields that change no shape (any value)
    derived: tuple[str, ...] = ()  # fields the config computes from the others
    unset: tuple[str, ...] = ()  # fields left None (their default), which would change shapes when set
    regime: tuple[tuple[str, int], ...] = ()  # (normalised parameter name, rank) of the default flags' build
    minimum: dict = field(default_factory=dict)  # a branch: fields at this value or above (else the next branch)
    sole: tuple[str, ...] = ()  # held fields whose every other value tried the config class refuses
    given: tuple[str, ...] = ()  # a branch: fields the default leaves unset, set here (variables of this formula)
    split: tuple[str, ...] = ()  # a branch: the relation on its side of a change of structure (also in relations)
    sums: dict = field(default_factory=dict)  # list of whole numbers → the size its entries must add up to

    def violated(self, values: Mapping[str, Any]) -> list[str]:
        """The conditions ``values`` (config field → value, a field left unset None or absent) breaks, each as a
        line of text."""
        values = {k: v for k, v in values.items() if v is not None}
        out = [str(r) for r in self.relations if side_value(r.left, values) is not None
               and side_value(r.right, values) is not None and not r.holds(values)]
        out += [f"{k} = {v!r}" for k, v in self.fixed.items() if k in values and values[k] != v]
        out += [f"{k} ≥ {v!r}" for k, v in self.minimum.items() if k in values and values[k] < v]
        out += [f"{k} unset" for k in self.unset if values.get(k) not in (None, [])]  # an empty list sets nothing
        out += [f"{k} set" for k in self.given if k not in values]
        out += [f"sum({k}) = {v}" for k, v in self.sums.items()
                if isinstance(values.get(v), int) and isinstance(values.get(k), (list, tuple))
                and sum(values[k]) != values[v]]
        return out


@dataclass(frozen=True)
class Parameter:
    """One normalised parameter name (``model.layers.*.mlp.up_proj.weight``): how many instances, each's shape."""

    name: str
    count: sp.Expr
    shape: tuple[sp.Expr, ...]
    frozen: bool = False  # does not train (``requires_grad`` False: a fixed sinusoidal table)

    def to_data(self) -> list:
        """``[name, count, [dim, ...]]`` (and ``"frozen"`` last when it does not train), each formula as
        :func:`encode_value` writes it."""
        return [self.name, encode_value(self.count), [encode_value(d) for d in self.shape]] + \
            (["frozen"] if self.frozen else [])


@dataclass(frozen=True)
class Verification:
    """Fresh random configurations (not used by the fit), each compared with a real meta-device build."""

    configurations: int
    exact: int
    seed: int
    default_formula: int | None = None  # the formula at the type's default config
    default_real: int | None = None  # the real count of the default config
    mismatches: tuple = ()  # (config values, formula, real) of the first few that differ
    outside: tuple[str, ...] = ()  # the formula's conditions the default config breaks (then none is counted)
    differs: str = ""  # the first parameter a mismatching configuration's build holds otherwise

    @property
    def passed(self) -> bool:
        return self.configurations > 0 and self.exact == self.configurations and \
            self.default_formula == self.default_real and not self.outside


@dataclass(frozen=True)
class Inferred:
    """The parameter count of one ``model_type`` and head, inferred from meta-device builds.

    ``total`` is None when the type could not be inferred (``reason`` says why); ``trainable`` leaves out the
    frozen parameters.  ``active`` (mixture of experts) is left None: the routed experts and their top-k are
    read from a config by the inferred family.
    """

    model_type: str
    cls: str
    model_class: str
    transformers_version: str
    total: sp.Expr | None
    symbols: dict  # free field → symbol
    flags: dict  # flag field → 0/1 symbol
    conditions: Conditions
    verification: Verification | None
    builds: int
    failed_builds: int
    seconds: float
    reason: str | None = None
    trainable: sp.Expr | None = None
    active: sp.Expr | None = None
    parameters: tuple[Parameter, ...] = ()  # the fitted parameter names the total sums over
    branches: tuple[Inferred, ...] = ()  # where a field held here moves up: a formula of its own (exact ones)
    discovery: Any = field(default=None, compare=False, repr=False)  # the fields' probes, for the cost inference

    @property
    def exact(self) -> bool:
        """Whether a formula was found and every verification configuration matched it."""
        return self.total is not None and self.verification is not None and self.verification.passed

    def substitution(self, values: Mapping[str, Any]) -> dict:
        """``{symbol: value}`` for config field values (flags as 0/1)."""
        subs = {sym: sp.Integer(int(values[name])) for name, sym in {**self.symbols, **self.flags}.items()
                if name in values}
        missing = [name for name in {**self.symbols, **self.flags} if name not in values]
        if missing:
            raise SymparamsError(f"{self.model_type}: no value for {', '.join(missing)}")
        return subs

    def count(self, values: Mapping[str, Any]) -> int:
        """The formula at config field values (``{"hidden_size": 768, ...}``), as an exact integer."""
        if self.total is None:
            raise SymparamsError(f"{self.model_type} ({self.cls}) was not inferred: {self.reason}")
        result = self.total.subs(self.substitution(values))
        if not result.is_Integer:
            raise SymparamsError(f"{self.model_type}: the formula is not a whole number at these values")
        return int(result)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the closed form as text and as ``sympy.srepr``), for JSON."""
        v = self.verification
        c = self.conditions
        return {
            "model_type": self.model_type, "class": self.cls, "model_class": self.model_class,
            "transformers_version": self.transformers_version, "exact": self.exact, "reason": self.reason,
            "total": None if self.total is None else str(self.total),
            "total_srepr": None if self.total is None else sp.srepr(self.total),
            "total_terms": None if self.total is None else encode(self.total),
            "trainable": None if self.trainable is None else str(self.trainable),
            "symbols": {k: str(s) for k, s in self.symbols.items()},
            "flags": {k: str(s) for k, s in self.flags.items()},
            "conditions": {"relations": [str(r) for r in c.relations], "fixed": c.fixed,
                           "irrelevant": list(c.irrelevant), "derived": list(c.derived), "unset": list(c.unset),
                           "regime": [list(r) for r in c.regime], "minimum": c.minimum, "sole": list(c.sole),
                           "given": list(c.given), "split": list(c.split), **({"sums": c.sums} if c.sums else {})},
            "verification": None if v is None else {
                "configurations": v.configurations, "exact": v.exact, "seed": v.seed,
                "default_formula": v.default_formula, "default_real": v.default_real,
                "mismatches": [list(m) for m in v.mismatches], "outside": list(v.outside), "differs": v.differs},
            "builds": self.builds, "failed_builds": self.failed_builds, "seconds": round(self.seconds, 2),
            "parameters": [p.to_data() for p in self.parameters],
            "branches": [b.to_dict() for b in self.branches],
        }


def encode(expr: sp.Expr) -> list:
    """An expanded closed form as plain data, read back by :func:`decode` without ``eval``.

    Each term is ``["p/q", [[name, exponent], ...], [[numerator, denominator, exponent], ...]]``: a rational
    coefficient, powers of symbols, and powers of ``floor(numerator/denominator)`` (``ceiling`` when the entry
    ends with ``"ceil"``; the numerator a name, or a name then names subtracted and a whole number added,
    ``["L", "S"]`` or ``["L", 2]``, a name in a list of its own added, ``["F", ["S"]]`` for ``F + S``, or two names
    multiplied in a list first, ``[["A", "D"]]`` for ``A*D``; the
    denominator may be a whole number, a fixed layer period, or a name plus a whole number, ``["R", 1]``).

    >>> from symparams.core.symbols import H, A, L
    >>> data = encode(sp.expand(2 * H**2 * L + L * A * sp.floor(H / A) - H / 3))
    >>> data
    [['-1/3', [['H', 1]], []], ['2', [['H', 2], ['L', 1]], []], ['1', [['A', 1], ['L', 1]], [['H', 'A', 1]]]]
    >>> decode(data, {"H": H, "A": A, "L": L}) == sp.expand(2 * H**2 * L + L * A * sp.floor(H / A) - H / 3)
    True
    """
    out = []
    for term in sp.Add.make_args(sp.expand(expr)):
        coefficient, rest = term.as_coeff_Mul()
        powers, floors = [], []
        for factor in sp.Mul.make_args(rest):
            base, exponent = factor.as_base_exp()
            if base == 1:
                continue
            if isinstance(base, (sp.floor, sp.ceiling)):
                num, den = base.args[0].as_numer_denom()
                if _numerator(num) is None or _denominator(den) is None:
                    raise ValueError(f"cannot encode {base}")
                floors.append([_numerator(num), _denominator(den), int(exponent)]
                              + (["ceil"] if isinstance(base, sp.ceiling) else []))
            elif base.is_Symbol and exponent.is_Integer:
                powers.append([base.name, int(exponent)])
            else:
                raise ValueError(f"cannot encode {factor}")
        out.append([str(sp.Rational(coefficient)), sorted(powers), sorted(floors, key=_floor_key)])
    return sorted(out, key=lambda t: (len(t[1]) + len(t[2]), t[1], [_floor_key(f) for f in t[2]], t[0]))


def _numerator(num: sp.Expr):
    """A floor's numerator as data: a symbol's name, or a list of a name, then names subtracted and a whole number
    added (``["L", "S"]`` is ``L - S``, ``["L", 2]`` is ``L + 2``), a second name added in a list of its own
    (``["F", ["S"]]`` is ``F + S``, layers of two kinds together), a list holding a list of two names multiplied
    (``[["A", "D"]]`` is ``A*D``), or a whole number; None when it is none of these."""
    if num.is_Symbol:
        return num.name
    if num.is_Mul and len(num.args) == 2 and all(f.is_Symbol for f in num.args):
        return [sorted(f.name for f in num.args)]  # a product of two widths, [["A", "D"]] for A*D
    if num.is_Integer:  # the first layers a fixed list holds (Flint's two dense ones): floor(2/d)
        return int(num)
    plus, minus, shift = [], [], 0
    for term in sp.Add.make_args(num):
        if term.is_Symbol:
            plus.append(term.name)
        elif (-term).is_Symbol:
            minus.append((-term).name)
        elif term.is_Integer:
            shift = int(term)
        else:
            return None
    if not 1 <= len(plus) <= 2 or len(minus) > 1 or (len(plus) == 2 and minus):
        return None
    plus.sort()
    return [plus[0], *([name] for name in plus[1:]), *minus, *([shift] if shift else [])]


def _denominator(den: sp.Expr):
    """A floor's denominator as data: a name, a whole number (a fixed period), or a name plus a whole number as a
    numerator writes it (``["R", 1]``: LongT5's blocks of ``R + 1`` positions); None when it is none of these."""
    if den.is_Symbol:
        return den.name
    if den.is_Integer:
        return int(den)
    terms = sp.Add.make_args(den)
    if len(terms) == 2 and sum(t.is_Symbol for t in terms) == 1 and sum(t.is_Integer for t in terms) == 1:
        return _numerator(den)
    return None


def _floor_key(entry: list) -> list:
    """A floor entry's sort key: a whole-number denominator (a fixed period) and a difference compare as text
    with names."""
    return [str(entry[0]), str(entry[1]), *entry[2:]]


def decode(data: list, symbols: Mapping[str, sp.Symbol]) -> sp.Expr:
    """The closed form :func:`encode` wrote, with ``symbols`` (name → symbol); names outside it are refused."""
    def sym(name) -> sp.Expr:
        if isinstance(name, int) and not isinstance(name, bool):
            return sp.Integer(name)  # a fixed period
        if name not in symbols:
            raise SymparamsError(f"unknown symbol {name!r} in an encoded formula")
        return symbols[name]

    def rational(text: str) -> sp.Rational:
        num, _, den = text.partition("/")
        return sp.Rational(int(num), int(den or 1))

    def top(name) -> sp.Expr:
        if not isinstance(name, list):
            return sym(name)
        if isinstance(name[0], list):  # a product of names
            return sp.Mul(*(sym(n) for n in name[0]))
        return sym(name[0]) + sum((sp.Integer(n) if isinstance(n, int) else sym(n[0]) if isinstance(n, list)
                                   else -sym(n) for n in name[1:]), sp.Integer(0))

    return sp.Add(*(rational(c) * sp.Mul(*(sym(n) ** int(e) for n, e in powers))
                    * sp.Mul(*((sp.ceiling if rest else sp.floor)(top(a) / top(b)) ** int(e)
                               for a, b, e, *rest in floors))
                    for c, powers, floors in data))


def encode_value(expr: sp.Expr):
    """A short form of :func:`encode` for what most shapes are: a whole number (``768``), one symbol
    (``"H"``), else the list of terms.

    >>> from symparams.core.symbols import H, L
    >>> [encode_value(sp.Integer(3)), encode_value(H), encode_value(2 * L)]
    [3, 'H', [['2', [['L', 1]], []]]]
    """
    if expr.is_Integer:
        return int(expr)
    if expr.is_Symbol:
        return expr.name
    return encode(expr)


def decode_value(data, symbols: Mapping[str, sp.Symbol]) -> sp.Expr:
    """The formula :func:`encode_value` wrote (names outside ``symbols`` refused, no ``eval``)."""
    if isinstance(data, bool):
        raise SymparamsError(f"not an encoded formula: {data!r}")
    if isinstance(data, int):
        return sp.Integer(data)
    if isinstance(data, str):
        return decode([["1", [[data, 1]], []]], symbols)
    return decode(data, symbols)
