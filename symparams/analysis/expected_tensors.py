"""The tensors a checkpoint of a model holds, as the audit expects them: each name pattern's shapes as stored,
with their copies, dtype and bytes.

The tree's stored tensors (:mod:`.stored`: a repeated layer's index as ``*``, a tied tensor once, where it is
owned) evaluated at the model's values.  GPT-2's projections are ``Conv1D`` modules, which transformers stores
``[in, out]`` in safetensors.

>>> from symparams import model
>>> [(e.pattern, dict(e.shapes)) for e in expected_tensors(model("gpt2", L=2), "fp32")][2]
('h.*.ln_1.weight', {(768,): 2})
>>> tied_names(model("gpt2", head="causal-lm").tree)
{'lm_head.weight': 'wte.weight'}
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..core.blocks import Block
from ..core.errors import SymparamsError
from .stored import Stored, stored_tensors

#: the safetensors dtype each plain dtype is stored as
STORED_AS = {"fp32": "F32", "bf16": "BF16", "fp16": "F16"}
#: the families whose linear layers are ``Conv1D`` modules, stored ``[in, out]``
CONV1D = ("gpt2",)
#: buffers transformers saves beside the parameters (or saved in older releases, which checkpoints on the hub
#: still hold), by name as the checkpoint writes it, the base model's prefix taken off: not parameters, so
#: neither in the formula nor extra
BUFFERS = re.compile(r"(.*\.)?(final_logits_bias|position_ids|token_type_ids|rotary_emb\.inv_freq"
                     r"|h\.\d+\.attn\.(masked_)?bias|mlp\.gate\.e_score_correction_bias)")

@dataclass
class Expected:
    """The tensors one name pattern stands for: their shapes as stored, each with its number of copies, and the
    dtype and bytes of one tensor of each shape (None where the audit does not check them)."""

    pattern: str
    shapes: Counter = field(default_factory=Counter)
    kinds: dict = field(default_factory=dict)
    regex: re.Pattern = field(init=False)

    def __post_init__(self):
        self.regex = re.compile(re.escape(self.pattern).replace(r"\*", r"\d+"))

    @property
    def copies(self) -> int:
        return sum(self.shapes.values())


def model_tensors(m) -> tuple[Stored, ...]:
    """The tensors a GGUF file of ``m`` stores; refused for routed experts, which llama.cpp names its own way."""
    tensors = stored_tensors(m.tree)
    if any(t.part == "experts" for t in tensors):
        raise SymparamsError("the audit does not read a GGUF file of a mixture of experts yet (llama.cpp stores "
                             "its experts under names of its own)")
    return tensors


def expected_tensors(m, dtype: str, names=(), layout=None) -> list[Expected]:
    """The model's stored tensors at its values, grouped by name pattern, in the safetensors dtype of ``dtype``;
    a mixture's experts as a checkpoint of tensor names ``names`` stores them (:mod:`.expert_layout`); the linear
    weights a quantized ``layout`` packs as its tensors (:mod:`.quantized_layout`)."""
    from .expert_layout import as_checkpoint

    conv1d = m.family.name in CONV1D
    if conv1d and layout is not None:
        raise SymparamsError(f"the audit does not read {layout.method} checkpoints of {m.family.name} (its Conv1D "
                             f"layers are packed their own way)")
    tensors = stored_tensors(m.tree)
    if layout is not None and layout.method != "fp8" and any(t.part == "experts" for t in tensors):
        raise SymparamsError(f"the audit does not read {layout.method} checkpoints of a mixture of experts yet (no "
                             f"quantizer here writes one to check its layout against)")
    groups: dict[str, Expected] = {}
    for t in as_checkpoint(m, tensors, names):
        shape = evaluated_shape(m, t)
        if conv1d and t.part == "layers" and len(shape) == 2:
            shape = shape[::-1]
        packed = layout is not None and layout.quantizes(t.path, t.part, shape)
        for path, shape_, stored_as in layout.stored(t.path, shape) if packed else [(t.path, shape, STORED_AS[dtype])]:
            group = groups.setdefault(path, Expected(path))
            group.shapes[shape_] += int(m.evaluate(t.copies))
            group.kinds[shape_] = (stored_as, None)  # bytes: the file's own, checked by _bytes
    return list(groups.values())


def evaluated_shape(m, t: Stored) -> tuple[int, ...]:
    return tuple(int(m.evaluate(d)) for d in t.shape)


def tied_names(tree: Block) -> dict[str, str]:
    """Each tied tensor's name pattern → the name pattern of the tensor it shares (``lm_head.weight`` →
    ``embed_tokens.weight``)."""
    by_name = {}  # a block's path of names → its path as transformers names it
    tied = []

    def visit(block: Block, names: str, ref: str):
        names = ".".join(p for p in (names, block.name) if p)
        ref = ".".join(p for p in (ref, block.name if block.ref is None else block.ref) if p)
        by_name[names] = ref
        if block.tied_to is not None:
            tied.append((ref, block))
        for child in block.children:
            visit(child, names, ref)

    for child in tree.children:  # tied_to names a block from below the root
        visit(child, "", "")
    return {f"{ref}.{pname}": f"{by_name[block.tied_to]}.{pname}" for ref, block in tied
            for pname, _ in block.params if block.tied_to in by_name}
