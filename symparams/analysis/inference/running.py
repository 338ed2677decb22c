"""Where the model transformers builds runs: the head widths its forward pass accepts.

A model builds, and its parameters count, at head widths its forward pass
refuses: a rotary embedding turns pairs of a head's channels, so an odd
rotated width fails with a shape mismatch (Persimmon rotates half of each
head: a head of 6 fails, one of 5 runs).  The costs are fitted on traces
that ran, and would still give FLOPs there: a figure for a model that does
not run.  So each quantity a head's query·key width is made of (``D``,
``H/A``, ``floor(H/A)``, MLA's rotary part) is traced at :data:`SPAN` consecutive
values, the others as the real-model check had them; where some fail, the
smallest modulus of :data:`~.regular.MODULI` whose residues part the runs from the
failures becomes a rule the reader enforces (or the one value, where only
it runs: NeoMMe's M-RoPE sections add up to half of one head width), and
runs that follow none are a reason to keep no costs at all.
"""

from __future__ import annotations

import math

import sympy as sp

from ...core.errors import SymparamsError
from ...families.inferred import reading_of
from ...families.inferred_conditions import parse_relation
from ...families.inferred_data import formula, names_in
from .long_check import default_config, small_config
from .probing import config_class_of, libraries, quiet
from .regular import SEQ, SPAN, _rule
from .tracing import build, trace



def width_rules(entry: dict) -> list | str | None:
    """``[[quantity, modulus, residues], ...]``: each quantity (encoded as the data encodes formulas) that the
    forward accepts only at some residues (modulus 0: at the one value); ``[]`` where every width traced runs; a
    reason (a string) where the runs follow no modulus of :data:`~.regular.MODULI`; None where neither the small
    configuration nor the default, read as ``count --config`` reads it, runs to start from, or where no head
    width is found to move (nothing is known).  The entry's own rules are set aside: read under them, the widths
    they refuse would be no value tried, and the rest all run (an entry kept from an earlier run lost its rule)."""
    entry = {**entry, "costs": {k: v for k, v in entry["costs"].items() if k != "runs"}}
    for base in (small_config(entry), default_config(entry)):
        quantities = _quantities(entry, base)
        if quantities and all(_value(entry, base, q) is not None for q, _ in quantities) \
                and _forward_runs(entry, base):
            return _rules_from(entry, base, quantities)
    return None


def _rules_from(entry: dict, base: dict, quantities: list) -> list | str:
    rules = []
    for quantity, setter in quantities:
        ran = _runs(entry, base, quantity, setter)
        if all(ran.values()):
            continue
        rule = _rule(ran)
        if rule is None:
            shown = ", ".join(f"{q} {'runs' if ok else 'fails'}" for q, ok in sorted(ran.items()))
            return f"the forward pass runs at some head widths and not others, in no pattern of 2, 4 or 8 ({shown})"
        rules.append([quantity, *rule])
    return rules


def _quantities(entry: dict, base: dict) -> list[tuple[list, tuple]]:
    """The quantities the attention modules' query·key widths are sums of, each with how to set it in a config
    (a field, and what the value is multiplied by there): a field alone or a whole part of it (``D``, ``H/16``
    where the heads are held at 16), or one field over another (``H/A``, ``floor(H/A)``, set through the
    numerator)."""
    fields = {name: field for field, name in {**entry["symbols"], **entry["costs"].get("symbols", {})}.items()}
    out = []
    for _, _, _, key_width, _, _ in entry["costs"]["attention"]:
        for coefficient, powers, floors in key_width if isinstance(key_width, list) else [["1", [[key_width, 1]], []]]:
            num, _, den = coefficient.partition("/")
            if num != "1":
                continue
            if len(powers) == 1 and not floors and powers[0][1] == 1 and fields.get(powers[0][0]) in base:
                quantity, setter = [[coefficient, [powers[0]], []]], (fields[powers[0][0]], int(den or 1))
            elif not den and not powers and len(floors) == 1 and _plain_floor(floors[0], fields, base):
                top, bottom, _ = floors[0]
                quantity, setter = [["1", [], [floors[0]]]], (fields[top], fields[bottom])
            elif not den and not floors and _ratio(powers, fields, base):
                (bottom, _), (top, _) = sorted(powers, key=lambda p: p[1])
                quantity, setter = [["1", powers, []]], (fields[top], fields[bottom])
            else:
                continue
            if quantity not in [q for q, _ in out]:
                out.append((quantity, setter))
    return out


def _ratio(powers: list, fields: dict, base: dict) -> bool:
    """Whether a term is one field over another (``H/A``, where the config requires A | H)."""
    return sorted(e for _, e in powers) == [-1, 1] and all(fields.get(name) in base for name, _ in powers)


def _plain_floor(floor: list, fields: dict, base: dict) -> bool:
    top, bottom, power = floor
    return power == 1 and isinstance(top, str) and isinstance(bottom, str) and fields.get(top) in base \
        and fields.get(bottom) in base


def _runs(entry: dict, base: dict, quantity: list, setter: tuple) -> dict[int, bool]:
    """Each value of ``quantity`` from the one ``base`` gives, on :data:`SPAN` in all: whether the forward runs
    (values the formulas refuse are left out: no figure is printed there)."""
    start = _value(entry, base, quantity)
    field, times = setter
    out = {}
    for value in range(start, start + SPAN):
        config = _solved(entry, {**base, field: value * (times if isinstance(times, int) else base[times])})
        if _value(entry, config, quantity) == value:
            out[value] = _forward_runs(entry, config)
    return out


def _solved(entry: dict, config: dict) -> dict:
    """``config`` with each product the costs need equal to a field (``head_dim*num_attention_heads =
    hidden_size``) solved for that field: a head width moved alone would break it, and the reader refuse it."""
    out = dict(config)
    for text in entry["costs"].get("relations", ()):
        left, kind, right = parse_relation(text)
        factors = left.split("*")
        if kind == "equals" and len(factors) > 1 and "*" not in right \
                and all(isinstance(out.get(n), int) for n in factors):
            out[right] = math.prod(out[n] for n in factors)
    return out


def _value(entry: dict, config: dict, quantity: list) -> int | None:
    """``quantity`` as ``count --config`` reads ``config``; None where the formulas refuse it."""
    try:
        reading = reading_of(config, entry)
    except SymparamsError:
        return None
    if reading.costs_refused:
        return None
    scope = {name: sp.Integer(v) for name, v in {**reading.values, **reading.numbers}.items()}
    if not names_in(quantity) <= set(scope):
        return None
    value = formula(quantity, scope)
    return int(value) if value.is_integer else None


def _forward_runs(entry: dict, config: dict) -> bool:
    _, transformers = libraries()
    try:
        with quiet():
            built = config_class_of(entry["model_type"]).from_dict(dict(config))
            trace(build(getattr(transformers, entry["model_class"]), built), SEQ, 1, cache=False, backward=False)
    except Exception:  # whatever the modeling code raises: this width does not run
        return False
    return True
