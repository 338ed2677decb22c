"""The inverse questions: the longest context or the largest batch whose memory fits a budget."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from ..core.errors import SymparamsError
from ..core.values import parse_whole
from ..core.formatting import thousands
from .dtypes import _shown
from .memory import RECOMPUTE

#: byte units a budget may be written in: decimal (GB = 10^9, as disk and GPU makers write it) and binary (GiB)
BYTE_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
              "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_BYTES = re.compile(r"(?P<number>\d[\d_,]*(?:\.\d+)?(?:[eE]\d{1,3})?)\s*(?P<unit>[a-zA-Z]*)", re.ASCII)


def parse_bytes(text) -> int:
    """A memory budget: ``80GB`` (10⁹ bytes each), ``80GiB`` (2³⁰), ``1.5e10`` or a whole number of bytes.

    >>> parse_bytes("80GB"), parse_bytes("80 GiB"), parse_bytes("1.5e3")
    (80000000000, 85899345920, 1500)
    """
    text = str(text).strip()
    if len(text) > 1000:  # beyond any memory, and beyond what Python converts to an int from text
        raise SymparamsError(f"a memory budget has at most 1000 characters, not {len(text):,}")
    match = _BYTES.fullmatch(text)
    unit = match and BYTE_UNITS.get(match.group("unit").lower())
    if not match or unit is None:
        raise SymparamsError(f"a memory budget is a number of bytes such as 80GB, 80GiB or 1e10, not {_shown(text)}")
    value = Fraction(match.group("number").replace("_", "").replace(",", "")) * unit
    if value.denominator != 1 or value <= 0:
        raise SymparamsError(f"a memory budget must be a positive whole number of bytes, not {_shown(text)}")
    return value.numerator


def longest_context(model, budget_bytes, **memory_args) -> int | None:
    """The largest sequence length ``s`` whose total fits ``budget_bytes`` (None: not even s = 1).

    ``memory_args`` are :class:`~symparams.analysis.memory.Memory`'s (``batch``, ``dtype``, ...); ``model`` is
    anything with their ``memory(...)``: a model, or a LoRA adapter on one (its fine-tuning's memory).  The
    total grows with ``s`` (the KV cache as transformers holds it: a
    sliding-window layer's no more once its window is full), so the answer
    is found by an exact integer search.  Where every layer keeps only its
    window and the total at a full window fits, every length fits: refused,
    as there is no longest.

    >>> from symparams import model
    >>> m = model("llama-3-8b")
    >>> longest_context(m, 2 * m.count + 131072 * 1000, optimizer="none")
    1000
    """
    return _largest(model, budget_bytes, "seq", memory_args)


def largest_batch(model, budget_bytes, **memory_args) -> int | None:
    """The largest batch ``b`` whose total fits ``budget_bytes`` (None: not even b = 1); ``seq`` is needed.

    >>> from symparams import model
    >>> m = model("llama-3-8b")
    >>> largest_batch(m, 2 * m.count + 131072 * 8192 * 3 + 1, optimizer="none", seq=8192)
    3
    """
    return _largest(model, budget_bytes, "batch", memory_args)


def _largest(model, budget_bytes, name: str, memory_args: dict) -> int | None:
    budget = parse_whole("the memory budget in bytes", budget_bytes)
    if name in memory_args:
        raise SymparamsError(f"{name} is what is solved for: leave it out")
    if name == "batch" and memory_args.get("seq") is None:
        raise SymparamsError("the largest batch needs the sequence length seq")
    mem = model.memory(**{**memory_args, name: 1})
    if not mem.grows():
        raise SymparamsError(f"{model.name}: the total does not grow with the {name} (no activations, no cache): "
                             f"any {name} fits or none does")

    def fits(x: int) -> bool:
        return (mem.total_at(x, mem.batch) if name == "seq" else mem.total_at(mem.seq, x)) <= budget

    full = mem.cache_stops_growing
    if name == "seq" and full is not None and fits(full):
        raise SymparamsError(f"{model.name}: every layer's cache keeps at most its last {thousands(full)} tokens, "
                             f"so the total stops growing at s = {thousands(full)} "
                             f"({thousands(mem.total_at(full, mem.batch))} bytes): every longer context fits "
                             f"{thousands(budget)} bytes too")
    return _last_true(fits)


def _last_true(fits) -> int | None:
    """The largest x ≥ 1 with ``fits(x)``, ``fits`` true up to it and false after (None if ``fits(1)`` is
    false): doubling, then bisection."""
    if not fits(1):
        return None
    low = 1
    while fits(2 * low):
        low *= 2
    high = 2 * low  # fits(low), not fits(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low



# -- when nothing fits -------------------------------------------------------------------------------------------

#: the changes tried when nothing fits, each alone: the smallest of each kind that fits is suggested
_ZERO_RANKS = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
_TENSOR_PARALLEL = (2, 4, 8, 16, 32, 64)
_SMALLER_DTYPES = {"fp32": ("bf16", "int8", "int4"), "bf16": ("int8", "int4"), "fp16": ("int8", "int4"),
                   "int8": ("int4",), "int4": ()}


@dataclass(frozen=True)
class Remedy:
    """One change of the memory options (``{"zero": 3, "ranks": 8}``) under which the budget holds the
    smallest size; ``value``: the longest sequence (or largest batch) it then holds, None for every one."""

    change: dict
    value: int | None

    def to_dict(self) -> dict:
        return {"change": self.change, "value": self.value}


@dataclass(frozen=True)
class Shortfall:
    """What the smallest size needs when nothing fits (``needed`` bytes, ``needed − budget`` too many), and the
    smallest change of each kind that fits: ZeRO over the given ranks, ZeRO-3 over more ranks, tensor
    parallelism, a smaller type, activation recomputation."""

    needed: int
    budget: int
    remedies: tuple[Remedy, ...]

    @property
    def excess(self) -> int:
        return self.needed - self.budget

    def to_dict(self) -> dict:
        return {"needed": self.needed, "excess": self.excess, "fits_with": [r.to_dict() for r in self.remedies]}


def shortfall(model, budget_bytes, name: str, **memory_args) -> Shortfall:
    """Why nothing fits ``budget_bytes`` when solving for ``name`` (``"seq"`` or ``"batch"``), and what would.

    >>> from symparams import model
    >>> s = shortfall(model("llama-3-8b"), 80 * 10**9, "seq", dtype="bf16", optimizer="adam")
    >>> s.needed, s.excess, [(r.change, r.value) for r in s.remedies]
    (120083256320, 40083256320, [({'zero': 3, 'ranks': 2}, 1586)])
    """
    budget = parse_whole("the memory budget in bytes", budget_bytes)
    needed = model.memory(**{**memory_args, name: 1}).total
    found = (_remedy(model, budget, name, memory_args, kind) for kind in _first_of_each_kind(memory_args))
    return Shortfall(needed, budget, tuple(r for r in found if r is not None))


def _first_of_each_kind(memory_args: dict):
    """The changes to try, kind by kind, smallest first: each kind a list, of which the first that fits counts."""
    zero, ranks = int(memory_args.get("zero", 0)), int(memory_args.get("ranks", 1))
    if ranks > 1:
        yield [{"zero": stage} for stage in range(zero + 1, 4)]
    yield [{"zero": 3, "ranks": n} for n in _ZERO_RANKS if n > ranks]
    tensor = int(memory_args.get("tensor_parallel", 1))
    yield [{"tensor_parallel": t} for t in _TENSOR_PARALLEL if t > tensor]
    yield [{"dtype": d} for d in _SMALLER_DTYPES.get(memory_args.get("dtype", "bf16"), ())]
    recompute = memory_args.get("recompute", "none")
    yield [{"recompute": r} for r in ("selective", "full") if RECOMPUTE.index(r) > RECOMPUTE.index(recompute)]


def _remedy(model, budget: int, name: str, memory_args: dict, changes: list[dict]) -> Remedy | None:
    """The first of ``changes`` under which the smallest size fits, with what it then holds; None if none does."""
    for change in changes:
        args = {**memory_args, **change}
        try:
            if model.memory(**{**args, name: 1}).total > budget:
                continue
        except SymparamsError:  # a change this model or optimizer refuses (int8 weights with an optimizer)
            continue
        try:
            return Remedy(change, _largest(model, budget, name, args))
        except SymparamsError:  # the total stops growing below the budget: every size fits
            return Remedy(change, None)
    return None
