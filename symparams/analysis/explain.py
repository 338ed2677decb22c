"""Why a published count differs from the exact one: a ledger of named conventions.

A model card says 110M, a paper 65M, a tool 7B; the exact count of the
same architecture is another number.  :func:`explain` splits the exact
count into named terms read off the Block tree and searches the
conventions people count with until one reproduces the claim:

* leaving out a term of the exact count: ``token embeddings`` (tables of V
  or V_d rows: Kaplan's non-embedding N leaves them out), ``position
  embeddings`` (learned tables of positions, relative-position buckets),
  ``token type embeddings`` (S rows), the untied ``output head`` (an LM head
  or MLM decoder with weights of its own), the ``pooler``, ``biases`` (every
  parameter named ``bias`` outside the norms, the pooler and the output
  head), ``norms`` (their scales and shifts) and ``frozen tables``
  (registered, non-trainable tables such as sinusoidal positions).  Each
  parameter belongs to exactly one term, the first that claims it in the
  order frozen tables, norms, pooler, output head, embeddings, biases; the
  rest are ``other weights``, always counted;
* adding what the exact count does not hold: ``tied head counted again``
  (the weights of an output head tied to the embedding, counted a second
  time as tools that sum every ``state_dict`` tensor do) and ``vocabulary
  padded to a multiple of 64`` or ``of 128`` (the padded rows of each
  vocabulary table counted, Megatron style);
* the claim's unit: decimal (M = 10⁶, B = 10⁹) or binary (M = 2²⁰,
  B = 2³⁰), and its precision: ``110M`` has 2 significant digits (the
  trailing zero of an integer part before a unit is not significant),
  ``6.74B`` 3, ``1.3e9`` 2; a plain integer ``60,686,336`` is exact.

A combination *explains* the claim when its count, in the claim's unit,
rounds (half up) to the claim at the claim's precision.  The explanation
chosen is an exact equality if there is one, then the one with the fewest
departures from the plain exact count (each term left out, each addition
and binary units count one), then the one nearest the claim.  When nothing
explains it, the ledger shows the combination nearest the claim, with
``explained`` false.  No claim is ever parsed by SymPy: the text is
matched against a pattern and converted with integer arithmetic.

>>> from symparams import model
>>> ledger = explain(model("bert-base"), "110M")
>>> ledger.explained, ledger.exact, ledger.claim, ledger.remainder
(True, 109482240, 110000000, 517760)
>>> ledger.reason
'rounding: 109,482,240 is 110M to 2 significant digits'

Kaplan's non-embedding count of GPT-2 small, 12·L·H², is the exact count
without its embeddings, biases and norms:

>>> kaplan = explain(model("gpt2"), 12 * 12 * 768**2)
>>> kaplan.explained, kaplan.count == kaplan.claim == 84934656, kaplan.departures
(True, True, ('token embeddings', 'position embeddings', 'biases', 'norms'))
>>> print(kaplan)
gpt2: claim 84934656 (exact) against the exact count 124,439,808
term                      count  counted
token embeddings     38,597,376  no
position embeddings     786,432  no
biases                   82,944  no
norms                    38,400  no
other weights        84,934,656  yes
----------------------------------------
counted              84,934,656
claim                84,934,656
remainder                     0
exact: without token embeddings, position embeddings, biases and norms, 84,934,656 is the claim
"""

from __future__ import annotations

import itertools
import math
import numbers
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy as sp

from ..core.display import Reported
from ..core.errors import SymparamsError
from ..core.formatting import thousands
from ..core.symbols import B, P, S, V, V_d
from ..core.values import MAX_DIGITS

# -- terms -------------------------------------------------------------------------------------

TOKEN = "token embeddings"
POSITION = "position embeddings"
TOKEN_TYPE = "token type embeddings"
HEAD = "output head"
POOLER = "pooler"
BIASES = "biases"
NORMS = "norms"
FROZEN = "frozen tables"
OTHER = "other weights"
TIED_AGAIN = "tied head counted again"
PAD = "vocabulary padded to a multiple of {}"

#: the terms of the exact count a convention may leave out, in the ledger's order
OPTIONAL = (TOKEN, POSITION, TOKEN_TYPE, HEAD, POOLER, BIASES, NORMS, FROZEN)
#: the multiples vocabularies are padded to (Megatron pads to 128 per tensor-parallel rank; many to 64)
PAD_MULTIPLES = (64, 128)
#: block titles of output heads (an LM head, an MLM decoder)
HEAD_TITLES = ("output_projection", "mlm_decoder")
VOCABULARY = (V, V_d)


def _category(block, frozen: bool, pooler: bool, pname: str) -> str:
    """The term one parameter of a leaf belongs to (the first that claims it)."""
    if frozen:
        return FROZEN
    if block.kind == "norm":
        return NORMS
    if pooler:
        return POOLER
    if _is_head(block):
        return HEAD
    if block.kind == "embedding" and block.shape:
        rows = sp.sympify(block.shape[0])
        if rows in VOCABULARY:
            return TOKEN
        if S in rows.free_symbols:
            return TOKEN_TYPE
        if rows.free_symbols & {P, B}:
            return POSITION
    if pname == "bias":
        return BIASES
    return OTHER


def _is_head(block) -> bool:
    if block.kind != "linear":
        return False
    return block.title in HEAD_TITLES or (bool(block.shape) and sp.sympify(block.shape[-1]) in VOCABULARY)


@dataclass(frozen=True)
class _Parameter:
    """One parameter of the tree, every copy of it: its term, its count and its padded extra rows."""

    category: str
    count: int
    padded: tuple[int, ...]  # extra elements when V (V_d) is padded to each of PAD_MULTIPLES


def _padded_to(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _parameters(model) -> tuple[list[_Parameter], int]:
    """Every counted parameter of ``model`` with its term, and the size of tied output heads."""
    values = model.values
    vocab = {s: int(values[s]) for s in VOCABULARY if s in values}

    def number(expr) -> int:
        value = model.evaluate(sp.expand(expr))
        if not value.is_Integer:
            raise SymparamsError(f"{model.name}: a parameter count comes to {value}, not a whole number")
        return int(value)

    found: list[_Parameter] = []
    tied_heads = 0

    def visit(block, copies, tied, frozen, pooler):
        copies = copies * block.repeat
        tied = tied or block.tied_to is not None
        frozen = frozen or not block.trainable
        pooler = pooler or block.name == "pooler" or block.title == "pooler"
        if block.is_leaf:
            for pname, size in block.params:
                if tied:
                    if _is_head(block):
                        nonlocal tied_heads
                        tied_heads += number(copies * size)
                    continue
                count = number(copies * size)
                padded = []
                for multiple in PAD_MULTIPLES:
                    dims = {s: sp.Integer(_padded_to(n, multiple)) for s, n in vocab.items()
                            if any(sp.sympify(d) == s for d in block.shape)}
                    padded.append(number((copies * size).xreplace(dims)) - count if dims and not frozen else 0)
                found.append(_Parameter(_category(block, frozen, pooler, pname), count, tuple(padded)))
        for child in block.children:
            visit(child, copies, tied, frozen, pooler)

    visit(model.tree, sp.Integer(1), False, False, False)
    return found, tied_heads


# -- claims ----------------------------------------------------------------------------------------

#: unit letters and words → the power of 1000 (decimal) or 1024 (binary) they stand for
UNITS = {"k": 1, "thousand": 1, "m": 2, "million": 2, "b": 3, "g": 3, "billion": 3, "t": 4, "trillion": 4}
_CLAIM = re.compile(
    r"(?P<sign>[+-]?)"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+(?:_\d+)*)?"
    r"(?:\.(?P<frac>\d+)?)?"
    r"(?:[eE](?P<exp>[+-]?\d+))?"
    r"\s*(?P<unit>[a-zA-Z]+)?", re.ASCII)
_EXAMPLES = "such as 110M, 6.74B, 1.3e9 or 60,686,336"


@dataclass(frozen=True)
class Claim:
    """A claimed count as written: ``coefficient`` × 10^``shift`` in units of ``unit_power`` (K = 1,
    M = 2, …; 0 for none) or of 10^``exponent``.

    ``110M`` is 11 × 10¹ M (2 significant digits), ``6.74B`` 674 × 10⁻² B,
    ``1.3e9`` 13 × 10⁻¹ × 10⁹; a plain integer ``60686336`` is exact.
    """

    text: str
    coefficient: int
    shift: int
    unit_power: int = 0
    unit_letter: str = ""
    exponent: int = 0

    @property
    def digits(self) -> int | None:
        """Significant digits as written; None for a plain number (exact)."""
        return None if self.plain else len(str(self.coefficient))

    @property
    def plain(self) -> bool:
        return not self.unit_power and not self.exponent

    @property
    def value(self) -> int:
        """The claim in decimal units, a whole number of parameters."""
        return int(self.resolution(False) * self.coefficient)

    def units(self) -> tuple[bool, ...]:
        """Whether the claim is read in binary units: (False,), and True too when it has a unit letter."""
        return (False, True) if self.unit_power else (False,)

    def unit_size(self, binary: bool) -> int:
        if self.unit_power:
            return (1024 if binary else 1000) ** self.unit_power
        return 10**self.exponent

    def unit_name(self, binary: bool) -> str:
        if self.unit_power:
            return f"2^{10 * self.unit_power}" if binary else f"10^{3 * self.unit_power}"
        return f"10^{self.exponent}" if self.exponent else "1"

    def resolution(self, binary: bool) -> Fraction:
        """The place value of the claim's last significant digit, in parameters."""
        return Fraction(10) ** self.shift * self.unit_size(binary)

    def rounded(self, count: int, binary: bool) -> int:
        """``count`` rounded half up to the claim's last significant digit, as a coefficient."""
        return math.floor(Fraction(count) / self.resolution(binary) + Fraction(1, 2))

    def truncated(self, count: int, binary: bool) -> int:
        """``count`` cut (rounded down) to the claim's last significant digit, as a coefficient: how some model
        cards write a size (Qwen2.5-7B's 7,615,616,512 as 7.61B)."""
        return math.floor(Fraction(count) / self.resolution(binary))

    def explains(self, count: int, binary: bool, cut: bool = False) -> bool:
        return (self.truncated if cut else self.rounded)(count, binary) == self.coefficient

    def equals(self, count: int, binary: bool) -> bool:
        return self.resolution(binary) * self.coefficient == count

    def written(self, coefficient: int) -> str:
        """``coefficient`` (at the claim's precision) written as the claim is: ``110M``, ``6.74B``, ``1.3e9``."""
        places = max(0, -self.shift)
        digits = str(coefficient * 10 ** max(0, self.shift)).rjust(places + 1, "0")
        number = f"{digits[:-places]}.{digits[-places:]}" if places else digits
        if self.unit_power:
            return number + self.unit_letter
        return f"{number}e{self.exponent}" if self.exponent else number


def _bad(text, why: str = "") -> SymparamsError:
    shown = str(text)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return SymparamsError(f"a claimed count must be a positive number of parameters {_EXAMPLES}, "
                          f"not {shown!r}{why}")


def parse_claim(raw: Any) -> Claim:
    """A claimed count (text, an integer, or a float) with the precision it is written with.

    >>> c = parse_claim("110M")
    >>> c.value, c.digits, c.unit_name(False), c.unit_name(True)
    (110000000, 2, '10^6', '2^20')
    >>> [(parse_claim(t).value, parse_claim(t).digits) for t in ("6.74B", "1.3e9", "60,686,336", "0.50B")]
    [(6740000000, 3), (1300000000, 2), (60686336, None), (500000000, 2)]
    >>> parse_claim("-5")
    Traceback (most recent call last):
    ...
    symparams.SymparamsError: a claimed count must be positive, not '-5'
    """
    if isinstance(raw, bool):
        raise _bad(raw)
    if isinstance(raw, numbers.Integral):
        raw = int(raw)
        if abs(raw) >= 10**MAX_DIGITS:
            raise SymparamsError(f"a claimed count has at most {MAX_DIGITS} digits")
        text = str(raw)
    elif isinstance(raw, float):
        if not math.isfinite(raw):
            raise _bad(raw)
        text = repr(raw)  # the shortest text that is this float: 6.74e9 → '6740000000.0'
        if text.endswith(".0"):  # a whole float: its trailing zeros are not significant, 6.74e9 has 3 digits
            digits = text[:-2].lstrip("-")
            significant = digits.rstrip("0") or "0"
            places = len(digits) - 1
            if significant == digits:  # no trailing zero: every digit counts (60686336.0 is exact)
                text = text[:-2]
            else:
                text = (("-" if raw < 0 else "") + significant[0]
                        + (f".{significant[1:]}" if significant[1:] else "") + f"e{places}")
    elif isinstance(raw, str):
        text = raw
    else:
        raise SymparamsError(f"a claimed count is text {_EXAMPLES} or a number, not {type(raw).__name__}")
    stripped = text.strip()
    if len(stripped) > MAX_DIGITS + 20:
        raise SymparamsError(f"a claimed count has at most {MAX_DIGITS} digits")
    match = _CLAIM.fullmatch(stripped)
    if not match or not (match.group("int") or match.group("frac")):
        raise _bad(text)
    unit = (match.group("unit") or "").lower()
    if unit and unit not in UNITS:
        raise _bad(text, f" (unknown unit {match.group('unit')!r}; units: K, M, B or G, T)")
    if unit and match.group("exp"):
        raise _bad(text, " (an exponent and a unit together)")
    exp_text = match.group("exp") or "0"
    if len(exp_text.lstrip("+-0")) > 5 or abs(int(exp_text)) > MAX_DIGITS:
        raise SymparamsError(f"a claimed count has at most {MAX_DIGITS} digits, not {_short(stripped)}")
    exponent = int(exp_text)
    whole = (match.group("int") or "").replace(",", "").replace("_", "")
    frac = match.group("frac") or ""
    has_point = "." in stripped
    if not has_point and (unit or match.group("exp")):
        trimmed = whole.rstrip("0") or "0"  # 110M: the trailing zero is not significant
        shift = len(whole) - len(trimmed) if trimmed != "0" else 0
        digits = trimmed
    else:
        shift, digits = -len(frac), whole + frac
    coefficient = int(digits or "0")
    if match.group("sign") == "-" or coefficient == 0:
        raise SymparamsError(f"a claimed count must be positive, not {_short(stripped)}")
    if len(str(coefficient)) + max(shift + exponent + 3 * UNITS.get(unit, 0), 0) > MAX_DIGITS:
        raise SymparamsError(f"a claimed count has at most {MAX_DIGITS} digits, not {_short(stripped)}")
    letter = match.group("unit") or ""
    letter = f" {letter}" if len(letter) > 1 else letter  # 7B, 7 billion
    claim = Claim(stripped, coefficient, shift, UNITS.get(unit, 0), letter, exponent)
    if claim.resolution(False) * coefficient != claim.value:
        raise SymparamsError(f"a claimed count must be a whole number of parameters, not {_short(stripped)}")
    return claim


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


# -- the ledger -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Term:
    """One line of the ledger: a named part of the count (or an addition) and whether it is counted."""

    name: str
    count: int
    included: bool

    def to_dict(self) -> dict:
        return {"name": self.name, "count": self.count, "included": self.included}


@dataclass(frozen=True)
class Ledger(Reported):
    """The reconciliation of a claimed count with a model's exact count (see the module's conventions).

    ``exact`` is the model's exact count, ``claim`` the claim in decimal
    units, ``count`` the count of the chosen combination of ``terms``,
    ``remainder`` = ``claim − count``; ``explained`` says whether ``count``
    rounds to the claim (``equal``: is it), in ``unit`` at ``digits``
    significant digits (None: an exact claim).
    """

    model: str
    text: str
    exact: int
    claim: int
    digits: int | None
    unit: str
    binary: bool
    explained: bool
    equal: bool
    count: int
    terms: tuple[Term, ...]
    reason: str
    history: str = ""  # what the claim's own source later said of it (GPT-2's 117M)
    head: str | None = None  # the task head counted (a generative model's LM head, as its checkpoint has it)
    truncated: bool = False  # the claim is the count cut, not rounded, to its digits

    @property
    def remainder(self) -> int:
        return self.claim - self.count

    @property
    def departures(self) -> tuple[str, ...]:
        """The terms of the exact count left out and the additions counted, in the ledger's order."""
        out = [t.name for t in self.terms if t.name in OPTIONAL and not t.included]
        out += [t.name for t in self.terms if t.name not in OPTIONAL and t.name != OTHER and t.included]
        return tuple(out)

    def to_dict(self) -> dict:
        return {"model": self.model, "claim_text": self.text, "exact": self.exact, "claim": self.claim,
                "explained": self.explained, "equal": self.equal, "count": self.count,
                "remainder": self.remainder, "digits": self.digits, "unit": self.unit,
                "head": self.head, "truncated": self.truncated, "terms": [t.to_dict() for t in self.terms], "reason": self.reason,
                **({"history": self.history} if self.history else {})}

    def __repr__(self) -> str:
        return (f"Ledger({self.model}, claim={self.text!r}, exact={self.exact}, count={self.count}, "
                f"explained={self.explained})")


def digits_text(n: int) -> str:
    return f"{n} significant digit{'s' if n != 1 else ''}"


def _listing(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def explain(model, claim) -> Ledger:
    """The ledger that reconciles ``claim`` (``"110M"``, ``"6.74B"``, ``"1.3e9"``, an integer) with
    ``model``'s exact count.

    >>> from symparams import model
    >>> explain(model("llama-2-7b", head="causal-lm"), "7B").reason
    'rounding: 6,738,415,616 is 7B to 1 significant digit'
    """
    parsed = parse_claim(claim)
    exact = model.count  # an error names any symbol without a value
    parameters, tied_heads = _parameters(model)
    parts = {name: 0 for name in (*OPTIONAL, OTHER)}
    for p in parameters:
        parts[p.category] += p.count
    if sum(parts.values()) != exact:  # every parameter in exactly one term
        raise SymparamsError(f"{model.name}: the ledger's terms add up to {sum(parts.values())}, "
                             f"not the exact count {exact}")
    optional = [name for name in OPTIONAL if parts[name]]
    paddable = any(any(p.padded) for p in parameters)

    padded = [{name: 0 for name in parts} for _ in PAD_MULTIPLES]
    for p in parameters:
        for which, extra in enumerate(p.padded):
            padded[which][p.category] += extra

    def padding(kept: frozenset, which: int) -> int:
        """The padded rows of the vocabulary tables of the terms ``kept``."""
        return sum(padded[which][name] for name in kept)

    best_key, best = None, None
    for left_out in itertools.chain.from_iterable(itertools.combinations(optional, k)
                                                  for k in range(len(optional) + 1)):
        kept = frozenset(name for name in parts if name not in left_out)
        base = sum(parts[name] for name in kept)
        for again in ((False, True) if tied_heads else (False,)):
            pads = [None] + [i for i in range(len(PAD_MULTIPLES)) if paddable and padding(kept, i)]
            for pad in pads:
                count = base + (tied_heads if again else 0) + (padding(kept, pad) if pad is not None else 0)
                for binary, cut in itertools.product(parsed.units(), (False, True) if parsed.digits else (False,)):
                    departures = len(left_out) + again + (pad is not None) + binary + cut
                    if cut and departures > 1:  # a cut count only as it is: cut and rearranged, anything fits
                        continue
                    if parsed.explains(count, binary, cut):
                        key = (0, not parsed.equals(count, binary), departures, abs(parsed.value - count))
                    else:
                        key = (1, abs(parsed.value - count), departures, 0)
                    if best_key is None or key < best_key:
                        best_key, best = key, (kept, again, pad, binary, cut, count)
    kept, again, pad, binary, cut, count = best
    terms = [Term(name, parts[name], name in kept) for name in (*optional, OTHER)]
    if tied_heads:
        terms.append(Term(TIED_AGAIN, tied_heads, again))
    same_padding: dict[int, list[int]] = {}  # padded rows → the multiples that give them (64 and 128 often agree)
    for i in range(len(PAD_MULTIPLES)):
        if paddable and padding(kept, i):
            same_padding.setdefault(padding(kept, i), []).append(i)
    for rows, which in same_padding.items():
        terms.append(Term(PAD.format(" or ".join(str(PAD_MULTIPLES[i]) for i in which)), rows, pad in which))
    assert sum(t.count for t in terms if t.included) == count
    explained = best_key[0] == 0
    equal = parsed.equals(count, binary)
    return Ledger(model.name, parsed.text, exact, parsed.value, parsed.digits, parsed.unit_name(binary), binary,
                  explained, equal, count, tuple(terms),
                  _reason(parsed, terms, count, binary, explained and cut, explained, equal),
                  PUBLISHED.get((exact, parsed.value), ""), model.head, explained and cut)


#: published claims whose authors later said they were wrong: (the released model's exact count, the claim) → what
#: the source says.  openai/gpt-2's README: "our original parameter counts were wrong due to an error (in our
#: previous blog posts and paper). Thus you may have seen small referred to as 117M and medium referred to as 345M."
_GPT2 = ("OpenAI's GPT-2 repository says the paper's and first blog posts' counts were wrong, from an error of "
         "theirs: small was called 117M and medium 345M; the released models have {} and {} parameters")
PUBLISHED = {(124_439_808, 117_000_000): _GPT2.format("124,439,808", "354,823,168"),
             (354_823_168, 345_000_000): _GPT2.format("124,439,808", "354,823,168")}


def _reason(claim: Claim, terms, count: int, binary: bool, cut: bool, explained: bool, equal: bool) -> str:
    left_out = [t.name for t in terms if t.name in OPTIONAL and not t.included]
    added = [t.name for t in terms if t.name not in OPTIONAL and t.name != OTHER and t.included]
    how = []
    if left_out:
        how.append(f"without {_listing(left_out)}")
    if added:
        how.append(f"with {_listing(added)}")
    conditions = ", ".join(how)
    units = f" in binary units (1{claim.unit_letter} = {claim.unit_name(True)})" if binary else ""
    digits = claim.digits
    precision = f" to {digits_text(digits)}" if digits else ""
    if explained and equal:
        return f"exact: {conditions + ', ' if conditions else ''}{thousands(count)} is the claim{units}"
    if cut:
        rounded = claim.written(claim.rounded(count, binary))
        return (f"truncation: {conditions + ', ' if conditions else ''}{thousands(count)} is {claim.text}{units} "
                f"cut (not rounded) to {digits_text(digits)}; rounded, it is {rounded}")
    if explained:
        return (f"rounding: {conditions + ', ' if conditions else ''}{thousands(count)} is {claim.text}{units}"
                f"{precision}")
    shown = claim.written(claim.rounded(count, binary)) if not claim.plain else thousands(count)
    remainder = claim.value - count
    side = f"{thousands(abs(remainder))} {'less' if remainder < 0 else 'more'} than the count"
    nearest = f"the nearest count, {thousands(count)}{' (' + conditions + ')' if conditions else ''}"
    if claim.plain:
        return f"not explained: {nearest}; the claim is {side}"
    return f"not explained: {nearest}, is {shown}{units}{precision}, not {claim.text}; the claim is {side}"
