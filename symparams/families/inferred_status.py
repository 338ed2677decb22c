"""What the inferred formulas cover, type by type: what ``symparams list --inferred`` prints and
docs/inferred.md tabulates (``scripts/inferred_table.py`` reads its verdicts from here).

A class is *exact* when its formula was verified against fresh builds and its
reading check passed; a type is *free* when every class is exact with no size
field held at one value (a field a branch takes on, or one transformers
accepts at one value only, is not held).  Its costs are known when they were
fitted and checked against a tiny real model.

>>> status = next(s for s in statuses() if s.model_type == "olmo")
>>> status.verdict, status.costs
('exact, every size free', True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from .inferred_data import _file


def held_sizes(entry: dict) -> dict:
    """The size fields an exact entry holds at a value (flags do not count), but those a branch takes on from the
    next value up and those the config class admits at that value only."""
    conditions = entry.get("conditions") or {}
    branched = {k for b in entry.get("branches", ()) if not held_sizes(b) for k in b["conditions"].get("minimum", {})}
    return {k: v for k, v in conditions.get("fixed", {}).items()
            if not isinstance(v, bool) and k not in branched and k not in conditions.get("sole", ())}


def all_sizes_free(entry: dict) -> bool:
    """Exact with no size field held at a value, where no branch takes the field on."""
    return entry["exact"] and not held_sizes(entry)


def costs_known(entry: dict) -> bool:
    """Whether FLOPs and memory answer for this class: costs fitted and checked on a real model (the KV cache
    too, unless transformers' forward failed with it and the costs refuse it: ``cache_refused``)."""
    costs = entry.get("costs") or {}
    return bool(entry["exact"] and costs.get("exact") and (costs.get("check") or {}).get("passed"))


@dataclass(frozen=True)
class TypeStatus:
    """One inferred ``model_type``: its classes, whether all are exact and free, what is held, why any is not
    exact, and whether every class has its costs."""

    model_type: str
    classes: tuple[str, ...]
    exact: bool
    free: bool
    held: dict
    reasons: dict
    costs: bool

    @property
    def verdict(self) -> str:
        if not self.exact:
            return "not exact: " + "; ".join(f"{c}: {r}" for c, r in self.reasons.items())
        if self.free:
            return "exact, every size free"
        return "exact, holding " + ", ".join(f"{k} = {v}" for k, v in self.held.items())

    def to_dict(self) -> dict:
        return {"model_type": self.model_type, "classes": list(self.classes), "exact": self.exact,
                "free": self.free, "held": self.held, "reasons": self.reasons, "costs": self.costs}


def statuses() -> list[TypeStatus]:
    """Every type the data file lists, in its order (alphabetical), with its status."""
    by_type: dict[str, list[dict]] = {}
    for line in _file().splitlines()[1:]:
        line = line.strip().rstrip(b",")
        if line.startswith(b"{"):
            entry = json.loads(line)
            by_type.setdefault(entry["model_type"], []).append(entry)
    return [_status(t, es) for t, es in sorted(by_type.items())]


def _status(model_type: str, entries: list[dict]) -> TypeStatus:
    held = {k: v for e in entries if e["exact"] for k, v in held_sizes(e).items()}
    reasons = {e["class"]: e.get("reason") or "not verified" for e in entries if not e["exact"]}
    return TypeStatus(model_type, tuple(e["class"] for e in entries), not reasons,
                      all(all_sizes_free(e) for e in entries), held, reasons, all(costs_known(e) for e in entries))
