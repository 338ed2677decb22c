"""A checkpoint reconciled with the model's formula, tensor by tensor: missing, extra, shape, dtype, bytes.

The model's tensors are the tree's stored tensors (:mod:`.stored`: a repeated layer's index as ``*``, a tied
tensor once, where it is owned), each expected ``copies`` times with its shape as stored and its bytes in the
expected dtype (:mod:`.expected_tensors`; a GGUF file's: :mod:`.gguf_audit`).  A checkpoint's names may carry
the base model's prefix (``model.``, ``bert.``): the prefix that matches most names is taken off.

Tied tensors: the checkpoint may hold one under either name (transformers' ``save_pretrained`` drops the tied
name, ``lm_head.weight``; safetensors' ``save_model`` de-duplicates shared tensors and may keep the other), or
under both (older checkpoints): each is accepted and said in a note, never counted as extra or missing.

>>> from symparams import model
>>> from symparams.analysis.checkpoint import Checkpoint, Tensor
>>> m = model("llama", V=8, H=4, L=1, A=2, G=1, F=6, gqa=True)
>>> shapes = {"embed_tokens.weight": (8, 4), "layers.0.input_layernorm.weight": (4,), "norm.weight": (4,)}
>>> file = Checkpoint("safetensors", tuple(Tensor("model." + n, "BF16", s, 2 * (s[0] * s[-1] if len(s) > 1
...                   else s[0])) for n, s in shapes.items()), ("x.safetensors",), ".")
>>> for line in audit(m, file, "bf16").lines():
...     print(line)
missing: 8 tensors (layers.0.self_attn.q_proj.weight, layers.0.self_attn.k_proj.weight, layers.0.self_attn.v_proj.weight, layers.0.self_attn.o_proj.weight, layers.0.post_attention_layernorm.weight and 3 more)
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

import sympy as sp

from ..core.errors import SymparamsError
from .checkpoint import ELEMENT_BYTES, Checkpoint, Tensor, expected_bytes
from .dtypes import DTYPE_BYTES
from .expected_tensors import BUFFERS, STORED_AS, Expected, expected_tensors, tied_names
from .gguf_audit import gguf_expected
from .stored import stored_tensors

#: names shown in one line before "and N more"
SHOWN = 5


@dataclass
class Audit:
    """What a checkpoint holds against what the model's formula gives: each category of difference with the
    tensors in it, the notes (tied tensors), the parameters and bytes of each."""

    model: str
    dtype: str | None
    tensors: int
    differences: dict
    notes: list
    parameters: int
    bytes: int
    formula_parameters: int
    formula_bytes: int | None
    stored_types: dict = field(default_factory=dict)
    quantization: str | None = None  # the method of a quantized checkpoint (fp8, gptq, awq)

    @property
    def ok(self) -> bool:
        return not self.differences

    def lines(self) -> list[str]:
        """One line per category of difference (none when the checkpoint reconciles)."""
        return [_dtype_line(items) if what == "dtype" else f"{what}: {_listed(items)}"
                for what, items in self.differences.items()]

    def to_dict(self) -> dict:
        return {"model": self.model, "dtype": self.dtype, "ok": self.ok, "tensors": self.tensors,
                "parameters": self.parameters, "bytes": self.bytes, "formula_parameters": self.formula_parameters,
                "formula_bytes": self.formula_bytes, "differences": self.differences, "notes": self.notes,
                "stored_types": self.stored_types, "quantization": self.quantization}


def _listed(items: list) -> str:
    """``3 tensors (a, b, c)``, the first few named."""
    head = ", ".join(items[:SHOWN]) + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")
    return f"{len(items)} tensor{'s' if len(items) != 1 else ''} ({head})"


def _dtype_line(items: list) -> str:
    """The dtype differences (``name: F16 where F32``) in one line, by the dtype stored and the one expected."""
    by_kind: dict[str, list[str]] = {}
    for item in items:
        name, _, kind = item.rpartition(": ")
        by_kind.setdefault(kind, []).append(name)
    parts = [_listed(names).replace(" (", f" stored as {kind.replace(' where ', ' where the model holds ')} (", 1)
             for kind, names in by_kind.items()]
    return f"dtype: {'; '.join(parts)}"


def audit(m, checkpoint: Checkpoint, dtype: str | None, layout=None) -> Audit:
    """``checkpoint`` against model ``m`` whose tensors are stored in ``dtype`` (fp32, bf16 or fp16; for a GGUF
    file, its type, or None: the types are not checked); a safetensors checkpoint's linear weights packed as
    ``layout`` says (:mod:`.quantized_layout`), the other tensors in ``dtype``."""
    if checkpoint.format == "gguf":
        expected, formula_bytes, rename = gguf_expected(m, checkpoint, dtype)
    else:
        if dtype not in STORED_AS:
            raise SymparamsError(f"a safetensors checkpoint holds fp32, bf16 or fp16 tensors, not {dtype}")
        expected, rename = expected_tensors(m, dtype, [t.name for t in checkpoint.tensors], layout), {}
        formula_bytes = m.evaluate(DTYPE_BYTES[dtype] * _parameters(m)) if layout is None else _packed_bytes(expected)
    found, extra, buffers, notes = _matched(checkpoint, expected, tied_names(m.tree), rename)
    if buffers:
        notes.append(f"{_listed([t.name for t in buffers]).replace(' tensor', ' buffer', 1)} stored beside the "
                     f"parameters, as transformers saves them: not parameters, left out of the figures")
    differences = {}
    for what, items in (("missing", _missing(expected, found)), ("extra", [t.name for t in extra]),
                        ("shape", _shapes(expected, found)), ("dtype", _dtypes(expected, found)),
                        ("bytes", _bytes(checkpoint, expected, found)), ("index", list(checkpoint.index_problems))):
        if items:
            differences[what] = items
    held = [t for t in checkpoint.tensors if t not in buffers]
    return Audit(m.name, dtype, len(held), differences, notes, sum(math.prod(t.shape) for t in held),
                 sum(t.bytes for t in held), int(m.evaluate(_parameters(m))),
                 None if formula_bytes is None else int(formula_bytes),
                 dict(Counter(t.dtype for t in held).most_common()), layout and layout.method)


def _packed_bytes(expected: list[Expected]) -> int:
    """The bytes of every expected tensor, each shape in its dtype (a quantized checkpoint's)."""
    return sum(n * math.prod(shape) * ELEMENT_BYTES[e.kinds[shape][0]] for e in expected
               for shape, n in e.shapes.items())


def _matched(checkpoint: Checkpoint, expected: list[Expected], aliases: dict, rename: dict):
    """Each expected pattern's tensors, the extra ones, the buffers, and the notes on tied tensors."""
    prefix = _prefix(checkpoint.tensors, [e.regex for e in expected] + [_regex(a) for a in aliases], rename)
    found: dict[str, list[Tensor]] = {e.pattern: [] for e in expected}
    extra, buffers, tied_copies = [], [], []
    for t in checkpoint.tensors:
        name = rename.get(t.name) or _stripped(t.name, prefix)
        e = next((e for e in expected if e.regex.fullmatch(name)), None)
        owner = None if e else next((o for a, o in aliases.items() if _regex(a).fullmatch(name) and o in found), None)
        if e is not None:
            found[e.pattern].append(t)
        elif owner is not None:
            tied_copies.append((t, owner))
        else:
            (buffers if BUFFERS.fullmatch(name) else extra).append(t)
    return found, extra, buffers, _tied(tied_copies, found, {e.pattern: e for e in expected})


def _parameters(m) -> sp.Expr:
    """The parameters the checkpoint stores, as a formula: each stored tensor once (a tied one where owned)."""
    return sp.Add(*(t.size for t in stored_tensors(m.tree)))


def _regex(pattern: str) -> re.Pattern:
    return re.compile(re.escape(pattern).replace(r"\*", r"\d+"))


def _stripped(name: str, prefix: str) -> str:
    return name[len(prefix) + 1:] if prefix and name.startswith(prefix + ".") else name


def _prefix(tensors, regexes, rename: dict) -> str:
    """The base model's prefix the checkpoint's names carry: the first name segment that, taken off, makes
    the most names match (none when taking none matches as many); names ``rename`` translates aside."""
    tensors = [t for t in tensors if t.name not in rename]

    def matched(prefix: str) -> int:
        return sum(any(r.fullmatch(_stripped(t.name, prefix)) for r in regexes) for t in tensors)

    candidates = sorted({t.name.split(".", 1)[0] for t in tensors if "." in t.name})
    best = max([""] + candidates, key=matched)
    return best if matched(best) > matched("") else ""


def _tied(copies: list, found: dict, by_pattern: dict) -> list[str]:
    """A tied tensor stored under its own name: counted for the tensor it shares where that one is absent,
    else a copy the formula does not count; a note each."""
    notes = []
    for t, owner in copies:
        if len(found[owner]) < by_pattern[owner].copies:
            found[owner].append(t)
            notes.append(f"{t.name} holds the tensor it is tied to ({owner}), stored under the tied name")
        else:
            notes.append(f"{t.name} is stored as well, a copy of the tensor it is tied to ({owner}); the formula "
                         f"counts it once")
    return notes


def _missing(expected: list[Expected], found: dict) -> list[str]:
    out = []
    for e in expected:
        absent = e.copies - len(found[e.pattern])
        if absent <= 0:
            continue
        if e.pattern.count("*") == 1:  # one repeated layer: name the indices that are not there
            held = {_index(e, t.name) for t in found[e.pattern]}
            out += [e.pattern.replace("*", str(i)) for i in range(e.copies) if i not in held][:absent]
        elif "*" not in e.pattern:
            out.append(e.pattern)
        else:
            out.append(f"{e.pattern}: {absent} of {e.copies}")
    return out


def _index(e: Expected, name: str) -> int | None:
    """The layer index a name holds where its pattern has ``*``."""
    tail = re.escape(e.pattern).replace(r"\*", r"(\d+)")
    match = re.search(tail + "$", name)
    return int(match.group(1)) if match else None


def _shapes(expected: list[Expected], found: dict) -> list[str]:
    out = []
    for e in expected:
        for t in found[e.pattern]:
            if t.shape not in e.shapes:
                want = " or ".join(_shape(s) for s in e.shapes)
                out.append(f"{t.name} {_shape(t.shape)} where the model's {want}")
    return out


def _shape(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _dtypes(expected: list[Expected], found: dict) -> list[str]:
    """``name: F16 where F32`` for each tensor of the right shape stored in another dtype than the model's."""
    out = []
    for e in expected:
        for t in found[e.pattern]:
            want = e.kinds.get(t.shape, (None, None))[0]
            if want is not None and t.dtype != want:
                out.append(f"{t.name}: {t.dtype[:20]} where {want}")
    return out


def _bytes(checkpoint: Checkpoint, expected: list[Expected], found: dict) -> list[str]:
    """safetensors: tensors whose stored bytes are not their shape in their dtype (a damaged file); GGUF: tensors
    of the model's shape and type whose bytes are not the formula's."""
    if checkpoint.format == "gguf":
        return [f"{t.name}: {t.bytes:,} bytes where the formula gives {want:,}" for e in expected
                for t in found[e.pattern] for kind, want in [e.kinds.get(t.shape, (None, None))]
                if want is not None and t.dtype == kind and t.bytes != want]
    out = []
    for t in checkpoint.tensors:
        want = expected_bytes(t)
        if want is None:
            out.append(f"{t.name}: dtype {t.dtype[:20]} not known, its bytes not checked")
        elif want != t.bytes:
            out.append(f"{t.name}: {t.bytes:,} bytes where {_shape(t.shape)} of {t.dtype} is {want:,}")
    return out
