"""bitsandbytes' 4-bit storage of a model (NF4 or FP4, QLoRA's frozen base), tensor by tensor.

transformers' ``BitsAndBytesConfig(load_in_4bit=True)`` replaces every
``nn.Linear`` (and GPT-2's ``Conv1D``) by bitsandbytes' ``Linear4bit``, except
the modules ``get_keys_to_not_convert`` finds (``quantizers/base.py``: the
output embeddings, the module of the model's last parameter, tied tensors) or
the ``llm_int8_skip_modules`` the user names.  Each quantized weight of ``n``
elements is stored as ``quantize_4bit`` makes it (bitsandbytes'
``functional.py``; ``Params4bit`` keeps the ``QuantState``):

* the packed weight: a uint8 tensor of ⌈n/2⌉ bytes (two 4-bit codes a byte);
* the absmax of each block of 64: ⌈n/64⌉ fp32 scales;
* the 16-entry code (``quant_map``), 16 fp32;
* with double quantization (``bnb_4bit_use_double_quant``, QLoRA's recipe):
  the absmax as uint8 (⌈n/64⌉ bytes) by ``quantize_blockwise(absmax - offset,
  blocksize=256)``, whose own state holds ⌈⌈n/64⌉/256⌉ fp32 absmax and a copy of
  the 256-entry dynamic code (256 fp32), beside the fp32 ``offset``.

Everything else (embeddings, norms, biases, the kept modules; the routers and
experts of transformers 5's mixture-of-experts layers, which are parameters,
not ``nn.Linear``) stays in the dtype the model is loaded in, bf16, or fp32
after peft's ``prepare_model_for_kbit_training`` (``prepare_kbit``: it casts
every 16-bit parameter but a ``Params4bit`` to fp32).  A shared expert's gate
(``nn.Linear`` with one output) is quantized.

>>> n = 4096 * 4096  # q_proj: 8,388,608 bytes packed, 262,144 absmax bytes, 1,024 fp32 absmax of those
>>> fourbit_bytes(n, double_quant=True) == n // 2 + n // 64 + 4 * (n // 64 // 256) + 4 + 64 + 1024
True
"""

from __future__ import annotations

import sympy as sp

from ..core.errors import SymparamsError
from ..core.symbols import V, V_d

#: the 4-bit types ``--dtype`` takes for bitsandbytes' storage
FOURBIT = ("nf4", "fp4")
#: weights per absmax block (``Linear4bit``'s default), absmax values per block of the double quantization
BLOCK, NESTED_BLOCK = 64, 256
#: fp32 bytes of an absmax, the offset; the 16-entry 4-bit code and the 256-entry dynamic code, in fp32
FP32, CODE_BYTES, NESTED_CODE_BYTES = 4, 16 * 4, 256 * 4
#: model types whose ``_keep_in_fp32_modules`` transformers keeps in fp32 beside a 4-bit model (not counted here)
KEEPS_FP32 = frozenset({"t5", "mt5", "umt5", "udop", "pop2piano", "gpt_oss", "rwkv", "blip-2", "blip_2",
                        "instructblip", "instructblipvideo", "afmoe", "axk2", "deepseek_v32", "deepseek_v4",
                        "glm_moe_dsa", "longcat_flash", "mistral_large4"})
#: model types whose layers are subclasses of ``nn.Linear`` (Falcon's ``FalconLinear``), which
#: ``replace_with_bnb_linear`` leaves unquantized: it replaces an ``nn.Linear`` exactly
SUBCLASSED_LINEAR = frozenset({"falcon"})


def fourbit_bytes(n, double_quant: bool) -> sp.Expr:
    """The bytes ``Params4bit`` and its ``QuantState`` hold for one weight of ``n`` elements."""
    blocks = sp.ceiling(sp.sympify(n) / BLOCK)
    packed = sp.ceiling(sp.sympify(n) / 2) + CODE_BYTES
    if not double_quant:
        return packed + FP32 * blocks
    return packed + blocks + FP32 * sp.ceiling(blocks / NESTED_BLOCK) + FP32 + NESTED_CODE_BYTES


def refuse_unplaced(model, fmt: str, zero: int) -> None:
    """Refused: a model whose transformers class keeps some modules in fp32 under bitsandbytes or whose layers
    subclass ``nn.Linear`` (left unquantized); ZeRO stage 3 (FSDP or ZeRO-3 shard a ``Params4bit``'s packed data,
    not its ``QuantState``, which is no parameter)."""
    if zero == 3:
        raise SymparamsError(f"ZeRO stage 3 of a {fmt} base is not counted: the packed weights are sharded but "
                             f"not their quantization state; use stage 0, 1 or 2")
    types = {model.family.name, *model.family.config_types}
    if types & SUBCLASSED_LINEAR:
        raise SymparamsError(f"{model.name} in {fmt}: its layers subclass nn.Linear, which transformers' "
                             f"bitsandbytes integration leaves unquantized; not counted")
    if types & KEEPS_FP32:
        raise SymparamsError(f"{model.name} in {fmt}: transformers keeps some of its modules in fp32 "
                             f"(_keep_in_fp32_modules), which is not counted yet")


def fourbit_quantized(tensors: tuple, keep: frozenset, values) -> list[bool]:
    """Whether bitsandbytes quantizes each of ``tensors`` (:func:`~.stored.stored_tensors`, in the order of
    ``named_parameters()``): an ``nn.Linear`` weight not kept.  Keeping ``output`` keeps what transformers'
    default skips keep (the output embeddings, the last parameter's module), not a pooler."""
    last = len(tensors) - 1
    return [_linear(t, values) and not _kept(t, keep, i == last) for i, t in enumerate(tensors)]


def _kept(t, keep: frozenset, last: bool) -> bool:
    if t.part == "output":
        return "output" in keep and _kept_output(t, last)
    return t.part in keep


def _linear(t, values) -> bool:
    """A weight of an ``nn.Linear``: not an embedding table, a vector, an expert's 3-D parameter, nor a router
    of experts (transformers 5's ``TopKRouter`` holds a parameter), but a shared expert's one-output gate."""
    if t.part in ("embeddings", "tables", "vectors", "experts"):
        return False
    return t.part != "routers" or sp.sympify(t.shape[0]).xreplace(values) == 1


def _kept_output(t, last: bool) -> bool:
    """transformers' ``get_keys_to_not_convert``: the output embeddings (rows over the vocabulary), and the
    module of the model's last parameter when that is a weight (a classifier with a bias is quantized)."""
    return bool(sp.sympify(t.shape[0]).free_symbols & {V, V_d}) or last


def fourbit_conventions(fmt: str, double_quant: bool, keep: frozenset, parts: tuple, kept_as: str) -> list[str]:
    """The conventions a 4-bit base's weights follow, one short sentence each."""
    scales = ("its absmax as uint8 (double quantization: an fp32 absmax per 256 of them, an fp32 offset and a "
              "256-entry fp32 code)" if double_quant else "an fp32 absmax")
    named = [("the output embeddings and the last parameter's module (transformers' get_keys_to_not_convert)"
              if p == "output" else p) for p in parts if p in keep]
    policy = ", ".join(named) or "no nn.Linear"
    cast = " (peft's prepare_model_for_kbit_training casts them from bf16)" if kept_as == "fp32" else ""
    return [f"weights: bitsandbytes {fmt} (Linear4bit, Params4bit): every nn.Linear weight as two 4-bit codes a "
            f"byte, per block of {BLOCK} weights {scales}, and a 16-entry fp32 code per weight; kept in "
            f"{kept_as}: {policy}; embeddings, norms, biases, expert routers and experts in {kept_as}{cast}"]
