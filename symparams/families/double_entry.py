"""Double entry: a hand-written family's count of a config.json against the formula inferred from transformers.

Two independent derivations cover most config.json files: the hand-written
family (its Block tree, its reading of the file's keys) and the closed form
inferred from meta-device builds of transformers (``data/inferred.json``).
Like double-entry bookkeeping, every config a family reads is counted both
ways, and the total, the trainable count and (for a mixture of experts) the
active count must agree; a disagreement is one line naming both figures and
both sources, never a number printed silently.

Which models are compared: the one asked for when the inferred data has its
class (the base model, ``causal-lm``, ``masked-lm``, ``seq2seq-lm``), else the
base model under it (another head's own parameters have no formula); and,
for the base model, also the family's language model head (the figure
``count`` prints beside it).  A ``--set`` value for a symbol the family
reads from a field is written into the config first, so the edited file is
what both sides count; a value that names no field (the ratio r, a switch)
changes the hand model after reading, and the config is compared before it.

Where the inferred formula refuses the config (a value outside the
conditions it was verified under), where the family counts something else
on purpose (``ConfigReader.note(..., departs=...)``), or where the config
sets what the fit never varied (a list or private field the family reads,
two widths a weight spans set equal, a field's source given only under an
alias transformers applies after deriving the field), nothing is compared
and the family's count stands, as tested against transformers itself; but
when nothing at all was compared, a field that changes the count (a symbol,
flag or held value of the inferred data) which the config sets away from its
default and which the family never read is refused by name.

The outcome is returned for ``count --json`` (``double_entry``).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..core.errors import SymparamsError
from ..core.formatting import thousands

#: symparams' heads that the inferred data has classes for, besides the base model
LM_CLASSES = ("causal-lm", "masked-lm", "seq2seq-lm")
FIGURES = ("total", "trainable", "active")
_MISSING = object()
#: words of fields that count rows (positions, tokens, buckets, layers), not widths: a table of P rows of width H
#: stays when P = H
NOT_WIDTHS = ("position", "vocab", "bucket", "layer", "label")


class Disagreement(SymparamsError):
    """The two derivations count a config differently: never a value to step over (``solve`` and ``sweep``
    skip a value whose edited file the family refuses, not one of these)."""


def cross_check(read, reader, reread, data: Mapping[str, Any], source: str, overridden: bool = False) -> dict | None:
    """Compare the hand family's count of ``data`` as ``read`` (:class:`~.config.Settings`, by ``reader``) with
    the inferred formula's; the record for ``count --json``, None if the data does not know the type.
    ``reread(head)`` is the family's reading for another head (``(settings, reader)``).

    Raises one line when they disagree, or when no comparison could be made and the config sets a field that
    changes the count and that ``reader`` was never asked for.
    """
    from . import inferred  # the data file is read only here, and only for a type it lists

    known = inferred.entries(data["model_type"])
    if not known:
        return None
    compared: dict[str, Any] = {}
    counted = None  # the entry of the model counted (not of the language model head beside it)
    unseen = _unseen(known, reader)
    for head, cls in _pairs(read, known):
        entry = known[cls]
        counted = counted or entry
        why = unseen or _coincidence(entry, reader) or _alias_after_derivation(entry, reader)
        compared[entry["model_class"]] = {"not_compared": why} if why else _compare(
            (read, reader) if head == read.head else reread, head, data, entry, source)
    if not any("agrees" in outcome for outcome in compared.values()):
        _refuse_unread(read, reader, counted, source)
    return {"against": f"the formula inferred from transformers {inferred.version()} meta-device builds",
            "of": "the config as read, before --set" if overridden else "the config as read",
            "classes": compared}


def _pairs(read, known: Mapping[str, dict]) -> list[tuple[str | None, str]]:
    """(the hand model's head, the inferred class) pairs to compare: the head counted, else the base model
    under it; with no head, the language model head ``count`` prints beside it too."""
    head = read.head
    pairs = [(head, head)] if head in LM_CLASSES and head in known else [(None, "base")] if "base" in known else []
    lm = next((h for h in ("seq2seq-lm", "masked-lm", "causal-lm") if h in read.family.heads), None)
    if head is None and lm is not None and lm in known:
        pairs.append((lm, lm))
    return pairs


def _compare(reading, head, data, entry: dict, source: str) -> dict:
    """``{"agrees": [figures]}`` or ``{"not_compared": why}``; raises when the two counts differ.  ``reading`` is
    ``(settings, reader)`` for ``head``, or a function of the head giving them (read again as ``--head`` would
    read it: the family may read, or refuse, keys for that head)."""
    from ..core.model import Model
    from . import inferred

    if not entry.get("exact"):
        return {"not_compared": f"not inferred: {entry.get('reason')}"}
    try:
        read, reader = reading(head) if callable(reading) else reading
        if head in reader.departures:  # the family counts the checkpoint, not what transformers builds
            return {"not_compared": reader.departures[head]}
        ours = _figures(Model(read.family, read.values, read.switches, head, read.name, optional=read.optional))
    except SymparamsError as exc:  # the family refuses this head or these values: its own error tells
        return {"not_compared": _without_source(str(exc), source)}
    try:
        # the numbers alone (no tree) where no active count is asked: a cold count --config stays fast
        theirs = _figures(inferred.model(data, None if entry["class"] == "base" else entry["class"], source)) \
            if "active" in ours else inferred.counted_figures(entry, data, source)[0]
    except SymparamsError as exc:  # outside the formula's conditions: the family's count stands
        return {"not_compared": _without_source(str(exc), source)}
    shared = [f for f in FIGURES if f in ours and f in theirs]
    differ = [f for f in shared if ours[f] != theirs[f]]
    if differ:
        with_head = f" with the {head} head" if head is not None else ""
        raise Disagreement(
            f"{source}: symparams' {read.family.name} family counts {_listed(ours, differ)}{with_head}, the "
            f"formula inferred from transformers {inferred.version()} builds of {entry['model_class']} counts "
            f"{_listed(theirs, differ)}; one of them misreads this config, so neither is printed")
    return {"agrees": shared}


def _unseen(known: Mapping[str, dict], reader) -> str | None:
    """Why the inferred formulas cannot judge this config: a field the family reads of a kind the fit never
    varies (a list, such as Qwen-MoE's dense ``mlp_only_layers``; a private switch, such as OPT's
    ``_remove_final_layer_norm``) and the data does not name, set away from the config class's default;
    else None.  (Public numbers and switches the fit does vary: one it does not name changes no shape.)"""
    from .inferred_data import data

    seen = set(data()["ignored"]) | {"model_type", "num_labels", "id2label"}
    for entry in known.values():
        conditions = entry.get("conditions", {})
        seen |= {*entry.get("symbols", {}), *entry.get("flags", {}), *entry.get("follows", {}),
                 *entry.get("defaults", {}), *entry.get("texts", {}), *entry.get("aliases", {}),
                 *entry.get("aliases", {}).values(), *conditions.get("fixed", {}),
                 *(k for part in ("irrelevant", "derived", "unset") for k in conditions.get(part, ()))}
    for stored in sorted(reader.asked - seen):
        found = reader.lookup(stored)
        if found is None or not (stored.startswith("_") or isinstance(found[1], (list, dict))) \
                or _at_default(stored, found[1], reader.fields):
            continue
        return f"key {found[0]}={_shown(found[1])} is none of the fields the inferred formulas were fitted over"
    return None


def _at_default(stored: str, value, fields) -> bool:
    """Whether ``value`` is the config class's default for the field (an empty list or object is, for a field the
    class computes from others)."""
    if fields is None:
        return False
    if stored in fields.derived and value in ([], {}):
        return True
    default = fields.default(stored, _MISSING)
    return default is not _MISSING and _json(value) == _json(default)


def _coincidence(entry: dict, reader) -> str | None:
    """Two size fields a weight spans set to the same value (ELECTRA's ``embedding_size`` = ``hidden_size``):
    the formula was fitted where they differ, and transformers may then leave that weight out (a projection
    between equal widths); None if there is no such pair."""
    field_of = {name: f for f, name in entry.get("symbols", {}).items()
                if not any(word in f for word in NOT_WIDTHS)}
    for path, _, shape, *_ in entry.get("parameters", ()):
        if len(shape) != 2 or not all(isinstance(d, str) and d in field_of for d in shape) or shape[0] == shape[1]:
            continue
        values = [reader.lookup(field_of[d]) for d in shape]
        if all(v is not None for v in values) and _json(values[0][1]) == _json(values[1][1]):
            (a, value), (b, _) = values
            return (f"keys {a} and {b} are both {value}, where the inferred formula was fitted with them apart "
                    f"(transformers may leave out {path} then)")
    return None


def _alias_after_derivation(entry: dict, reader) -> str | None:
    """A field transformers derives from another when a file leaves it out (T5's ``num_decoder_layers`` from
    ``num_layers``), whose source the file gives only under an alias (``num_hidden_layers``): the class derives
    it before it applies the alias, from the source's default, and the inferred reading does not follow that."""
    data = reader.data
    for derived, rule in sorted(entry.get("follows", {}).items()):
        if any(data.get(name) is not None for name in reader.spellings(derived)):
            continue
        for source in _names(rule):
            found = reader.lookup(source)
            if found is not None and found[0] != reader.spellings(source)[0]:
                return (f"key {found[0]} is an alias, which transformers applies after deriving {derived} from "
                        f"{reader.spellings(source)[0]}; the inferred reading does not follow that")
    return None


def _names(rule) -> list[str]:
    """The fields a ``follows`` rule (a field's name, or terms of a formula) is written in."""
    from .inferred_data import numerator_names

    if isinstance(rule, str):
        return [rule]
    names = []
    for _, powers, floors in rule:
        names += [name for name, _ in powers]
        for top, bottom, *_ in floors:
            names += numerator_names(top) + numerator_names(bottom)
    return names


def _figures(m) -> dict[str, int]:
    out = {"total": m.count, "trainable": m.trainable}
    if m.routed:
        out["active"] = m.active
    return out


def _listed(figures: Mapping[str, int], names) -> str:
    return ", ".join(f"{thousands(figures[n])} {'parameters' if n == 'total' else n}" for n in names)


def _without_source(text: str, source: str) -> str:
    return text[len(source) + 2:] if text.startswith(f"{source}: ") else text


# -- fields the family did not read ----------------------------------------------------------------------

def _refuse_unread(read, reader, entry: dict | None, source: str) -> None:
    """One line naming a field that changes the count (per the inferred ``entry``), set in the config away from
    its default, that the family never asked the reader for."""
    if entry is None:
        return
    aliases = entry.get("aliases", {})
    for key in _count_fields(entry):
        stored = reader.fields.stored(aliases.get(key, key)) if reader.fields is not None else key
        found = reader.lookup(stored)
        if found is None or stored in reader.asked:
            continue
        name, value = found
        expected = _expected(stored, entry, reader)
        if expected is None or _json(value) != _json(expected):
            default = "" if expected is None else f" (transformers' default: {_json(expected)})"
            raise SymparamsError(
                f"{source}: key {name}={_json(value)}{default} changes the count of {entry['model_class']}, "
                f"and symparams' {read.family.name} family does not read it")


def _count_fields(entry: dict) -> list[str]:
    """The fields whose value changes the count: the formula's symbols, its flags and the values it holds."""
    held = entry.get("conditions", {}).get("fixed", {})
    return sorted({*entry.get("symbols", {}), *entry.get("flags", {}), *held})


def _expected(stored: str, entry: dict, reader) -> Any:
    """A field's value when a config leaves it out: the data's default, or what transformers computes from
    other fields (``num_key_value_heads`` follows ``num_attention_heads``); None if neither says."""
    defaults = entry.get("defaults", {})
    if stored in defaults:
        return defaults[stored]
    if stored in entry.get("follows", {}):
        return _followed(entry["follows"][stored], entry, reader)
    return reader.fields.default(stored, None) if reader.fields is not None else None


def _followed(rule, entry: dict, reader) -> int | None:
    """The value of a ``follows`` rule (a field's name, or a formula in fields) at the config's values."""
    import sympy as sp

    from .inferred_data import formula

    numbers = {}
    for name in {*entry.get("symbols", {}), *entry.get("defaults", {})}:
        found = reader.lookup(name)
        value = found[1] if found is not None else entry.get("defaults", {}).get(name)
        if isinstance(value, int):
            numbers[name] = sp.Integer(int(value))  # a flag of the rule as 0/1
    try:
        value = formula(rule, numbers)
    except (SymparamsError, ZeroDivisionError):
        return None
    return int(value) if value.is_Integer else None


def _json(value) -> str:
    return json.dumps(value, sort_keys=True)


def _shown(value) -> str:
    text = _json(value)
    return text if len(text) <= 40 else text[:37] + "..."
