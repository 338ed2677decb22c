"""The tensors a GPTQ, AWQ or FP8 safetensors checkpoint stores in place of each linear weight, read from the
``quantization_config`` of its config.json, for the audit to expect (:mod:`.expected_tensors`).

A linear weight ``[out, in]`` of the repeated layers (or of the routed experts) is stored as:

* FP8 (``quant_method: fp8``, transformers' ``FP8Linear`` in ``integrations/finegrained_fp8.py``): ``weight``
  ``[out, in]`` in F8_E4M3 and ``weight_scale_inv`` in F32, ``[⌈out/b0⌉, ⌈in/b1⌉]`` for a
  ``weight_block_size`` ``[b0, b1]`` (DeepSeek-V3's ``[128, 128]``), a scalar ``[]`` without one;
* GPTQ (``quant_method: gptq``, AutoGPTQ's ``QuantLinear``, ``auto_gptq/nn_modules/qlinear/qlinear_cuda.py``,
  ``__init__``): ``qweight`` I32 ``[in·bits/32, out]``, ``qzeros`` I32 ``[⌈in/g⌉, out·bits/32]``, ``scales``
  F16 ``[⌈in/g⌉, out]``, ``g_idx`` I32 ``[in]`` (a ``group_size`` of -1: one group of the whole row);
* AWQ (``quant_method: awq``, ``version: gemm``, AutoAWQ's ``WQLinear_GEMM``, ``awq/modules/linear/gemm.py``,
  ``__init__``): ``qweight`` I32 ``[in, out·bits/32]``, ``qzeros`` I32 ``[in/g, out·bits/32]``, ``scales`` F16
  ``[in/g, out]``.

Every other tensor (embeddings, norms, biases, routers, the output layers: the LM head, a pooler, a
classifier; the modules ``modules_to_not_convert`` names, matched as transformers'
``should_convert_module`` matches them) is kept in the config's dtype.  Any other method is refused.

>>> layout = read_layout({"quant_method": "fp8", "weight_block_size": [128, 128]})
>>> layout.stored("layers.*.mlp.down_proj.weight", (256, 320))
[('layers.*.mlp.down_proj.weight', (256, 320), 'F8_E4M3'), ('layers.*.mlp.down_proj.weight_scale_inv', (2, 3), 'F32')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.errors import SymparamsError

#: the methods the audit reads
METHODS = ("fp8", "gptq", "awq")
#: the parts of the model whose linear weights a method quantizes (:mod:`.stored`)
QUANTIZED_PARTS = ("layers", "experts")


@dataclass(frozen=True)
class Layout:
    """A quantization method as a checkpoint's config names it, with its parameters."""

    method: str
    bits: int | None = None
    group_size: int | None = None
    block: tuple | None = None
    skip: tuple = ()

    def quantizes(self, path: str, part: str, shape: tuple) -> bool:
        """Whether the tensor at ``path`` (a linear weight of ``part``) is stored quantized."""
        if part not in QUANTIZED_PARTS or len(shape) != 2 or not path.endswith(".weight"):
            return False
        module = path[: -len(".weight")]
        return not any(_skipped(module, key) for key in self.skip)

    def stored(self, path: str, shape: tuple) -> list[tuple[str, tuple, str]]:
        """The tensors (name, shape, dtype) that stand for the weight ``path`` of ``shape`` ``[out, in]``."""
        base, (n_out, n_in) = path[: -len(".weight")], shape
        if self.method == "fp8":
            scales = (-(-n_out // self.block[0]), -(-n_in // self.block[1])) if self.block else ()
            return [(path, shape, "F8_E4M3"), (f"{base}.weight_scale_inv", scales, "F32")]
        per_int = 32 // self.bits
        group = n_in if self.group_size == -1 else self.group_size
        for what, n in (("inputs", n_in), ("outputs", n_out)):
            if n % per_int:
                raise SymparamsError(f"{self.method} packs {per_int} weights an int32: the {what} of {path} ({n}) "
                                     f"are not a multiple of {per_int}")
        if self.method == "gptq":
            groups = -(-n_in // group)
            return [(f"{base}.qweight", (n_in // per_int, n_out), "I32"),
                    (f"{base}.qzeros", (groups, n_out // per_int), "I32"),
                    (f"{base}.scales", (groups, n_out), "F16"), (f"{base}.g_idx", (n_in,), "I32")]
        if n_in % group:
            raise SymparamsError(f"the AWQ group size {group} does not divide the inputs of {path} ({n_in})")
        return [(f"{base}.qweight", (n_in, n_out // per_int), "I32"),
                (f"{base}.qzeros", (n_in // group, n_out // per_int), "I32"),
                (f"{base}.scales", (n_in // group, n_out), "F16")]


def _skipped(module: str, key: str) -> bool:
    """transformers' ``should_convert_module``: ``key`` from the start up to a module boundary, or as a regex
    with that boundary, or as a suffix; the names here lack the base model's prefix (``model.``), which ``key``
    may carry.  Refused where ``key`` names some of a repeated layer's copies and not others."""
    found = {_matches(module.replace("*", str(i)), key) for i in (0, 1)}
    if len(found) > 1:
        raise SymparamsError(f"modules_to_not_convert names {module} in some layers only ({key[:60]}): the audit "
                             f"does not read a layout that differs from layer to layer")
    return found.pop()


def _matches(name: str, key: str) -> bool:
    prefix = re.match(r"(\w+)\\?\.", key)  # the base model's prefix (``model.``) the key may begin with
    names = [name] + ([f"{prefix.group(1)}.{name}"] if prefix else [])
    try:
        return any(re.match(rf"(?:{key})(?:(?<=\.)|(?=\.|$))", n) or n.endswith(key) for n in names)
    except re.error:
        return any(n.endswith(key) for n in names)


def read_layout(config: dict | None) -> Layout | None:
    """The layout a config.json's ``quantization_config`` names, None without one; refused one line where the
    audit does not read the method or its parameters."""
    if not config:
        return None
    if not isinstance(config, dict):
        raise SymparamsError("the config.json's quantization_config is not an object")
    method = config.get("quant_method")
    if method not in METHODS:
        raise SymparamsError(f"the audit does not read checkpoints quantized with {str(method)[:40]!r} (it reads "
                             f"{', '.join(METHODS)})")
    skip = tuple(config.get("modules_to_not_convert") or ())
    if not all(isinstance(k, str) for k in skip):
        raise SymparamsError("the quantization_config's modules_to_not_convert is not a list of names")
    if method == "fp8":
        block = config.get("weight_block_size")
        if block is not None and not (isinstance(block, list) and len(block) == 2 and all(_whole(b) for b in block)):
            raise SymparamsError(f"the fp8 weight_block_size is two positive whole numbers, not {str(block)[:40]}")
        return Layout("fp8", block=tuple(block) if block else None, skip=skip)
    bits, group = config.get("bits", 4), config.get("group_size", 128)
    if bits not in (2, 4, 8) or isinstance(bits, bool):
        raise SymparamsError(f"the audit reads {method} checkpoints of 2, 4 or 8 bits, not {str(bits)[:20]}")
    if not (_whole(group) or (method == "gptq" and group == -1)):
        raise SymparamsError(f"the {method} group_size is a positive whole number, not {str(group)[:20]}")
    if method == "awq" and str(config.get("version", "gemm")).lower() != "gemm":
        raise SymparamsError(f"the audit reads AWQ checkpoints of version gemm, not {str(config['version'])[:20]}")
    return Layout(method, bits, group, skip=skip)


def _whole(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n > 0
