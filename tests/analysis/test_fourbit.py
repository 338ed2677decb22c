"""bitsandbytes' 4-bit storage (``--dtype nf4|fp4``) and QLoRA's memory, against transformers and bitsandbytes.

Which modules become ``Linear4bit`` is asked of transformers itself on the meta device: its
``get_keys_to_not_convert`` (``quantizers/base.py``), the class's ``_keep_in_fp32_modules`` and
``should_convert_module`` (``quantizers/quantizers_utils.py``), with the type test of ``replace_with_bnb_linear``
(``integrations/bitsandbytes.py``: an ``nn.Linear`` exactly, or GPT-2's ``Conv1D``).  bitsandbytes does not install
in the shared environment (its wheel may pull another torch), so each quantized weight's bytes follow its source,
written out in :func:`bnb_4bit_bytes`.  (By hand, bitsandbytes 0.50.2's CPU backend run from an unpacked wheel
gave the same bytes for every case here.)
"""

from math import ceil

import pytest
import torch
from torch import nn
from transformers.pytorch_utils import Conv1D
from transformers.quantizers.base import get_keys_to_not_convert
from transformers.quantizers.quantizers_utils import should_convert_module

from symparams import SymparamsError, model
from tests.reference import decoders, moe
from tests.reference import more_families as mf

pytestmark = pytest.mark.crosscheck

BF16 = 2


def bnb_4bit_bytes(n: int, double_quant: bool) -> int:
    """Bytes of ``Params4bit`` and its ``QuantState`` for a weight of ``n`` elements, as bitsandbytes'
    ``functional.py`` ``quantize_4bit`` makes them (blocksize 64; the default backend's
    ``bitsandbytes::quantize_4bit`` packs two codes a byte into a uint8 tensor of ``(n + 1) // 2`` and returns
    one fp32 absmax per block, the last block partial); the ``code`` is ``get_4bit_type``'s 16 fp32.  With
    ``compress_statistics``: ``quantize_blockwise(absmax - offset, blocksize=256)`` gives a uint8 absmax, its own
    state an fp32 absmax per 256 and a copy of the 256-entry dynamic code (fp32), and the fp32 ``offset``."""
    blocks = ceil(n / 64)
    out = (n + 1) // 2 + 16 * 4
    if not double_quant:
        return out + 4 * blocks
    return out + blocks + 4 * ceil(blocks / 256) + 256 * 4 + 4


def replaced_by_linear4bit(module) -> set[str]:
    """The weights of the modules transformers replaces by ``Linear4bit`` under ``load_in_4bit``."""
    skip = list(set(get_keys_to_not_convert(module)) | set(module._keep_in_fp32_modules or ()))
    return {f"{name}.weight" for name, m in module.named_modules()
            if should_convert_module(name, skip) and (isinstance(m, Conv1D) or type(m) is nn.Linear)}


def transformers_4bit_bytes(module, double_quant: bool) -> int:
    """The weights' bytes of ``module`` loaded with ``BitsAndBytesConfig(load_in_4bit=True)`` in bf16: the
    modules transformers replaces by ``Linear4bit`` hold :func:`bnb_4bit_bytes`, every other tensor bf16."""
    quantized = replaced_by_linear4bit(module)
    return sum(bnb_4bit_bytes(p.numel(), double_quant) if name in quantized else BF16 * p.numel()
               for name, p in module.named_parameters())


def _decoder(m):
    return decoders.reference(m)[0]


def _bert(m):
    return mf.reference(mf.encoder_config(m, "bert"), m.head)[0]


def _moe(m):
    return moe.reference(m)[0]


# H = 36 leaves q_proj's 1,296 weights 20¼ blocks of 64; F = 500 gives gate_proj 282 blocks, two of 256
CASES = {
    "llama": (model("llama", head="causal-lm", V=100, H=36, L=2, A=6, G=2, F=500, gqa=True), _decoder),
    # tied: the embedding and the LM head are one tensor, kept
    "llama-tied": (model("llama", head="causal-lm", V=100, H=36, L=2, A=6, G=2, F=52, gqa=True, tie=True),
                   _decoder),
    # the score head (no bias) holds the last parameter: kept in bf16
    "llama-score": (model("llama", head="sequence-classification", V=100, H=36, L=2, A=6, G=2, F=52, gqa=True, C=3),
                    _decoder),
    # Conv1D, and c_attn as one tensor
    "gpt2": (model("gpt2", head="causal-lm", V=100, P=16, H=36, L=2, A=4), _decoder),
    # the last parameter is classifier.bias, so the classifier is quantized, as is the pooler
    "bert-classifier": (model("bert", head="sequence-classification", V=100, P=16, S=2, H=36, L=2, A=4, r=2, C=3),
                        _bert),
    # the router is a parameter (not nn.Linear), the experts 3-D parameters: bf16; the shared expert's gate 4-bit
    "qwen2-moe": (model("qwen2_moe", head="causal-lm", V=100, H=36, L=2, A=6, G=2, F_e=20, N_e=4, k_e=2, F_s=28,
                        gqa=True), _moe),
}


@pytest.mark.parametrize("case, double_quant", [(c, True) for c in CASES] + [("llama", False)])
def test_4bit_bytes_match_transformers_policy_and_bitsandbytes_layout(case, double_quant):
    m, build = CASES[case]
    expected = transformers_4bit_bytes(build(m), double_quant)
    assert m.memory("nf4", optimizer="none", double_quant=double_quant).weights == expected
    assert m.memory("fp4", optimizer="none", double_quant=double_quant).weights == expected  # same storage


class Params4bit(nn.Parameter):
    """A stand-in for bitsandbytes' class: peft's ``prepare_model_for_kbit_training`` tells a 4-bit weight by its
    class name and leaves it, casting every other 16-bit parameter to fp32."""


def test_prepare_kbit_keeps_what_peft_casts_in_fp32():
    from peft import prepare_model_for_kbit_training

    m, build = CASES["llama"]
    module = build(m).to(torch.bfloat16)
    quantized = replaced_by_linear4bit(module)
    for name in quantized:
        owner = module.get_submodule(name.removesuffix(".weight"))
        owner.weight = Params4bit(owner.weight.data, requires_grad=False)
    module.is_loaded_in_4bit = True
    prepare_model_for_kbit_training(module, use_gradient_checkpointing=False)
    expected = sum(bnb_4bit_bytes(p.numel(), True) if name in quantized else p.element_size() * p.numel()
                   for name, p in module.named_parameters())
    assert {p.dtype for name, p in module.named_parameters() if name not in quantized} == {torch.float32}
    assert m.memory("nf4", optimizer="none", prepare_kbit=True).weights == expected


LLAMA_3_8B = model("llama-3-8b", head="causal-lm")
# Llama-3-8B (V = 128,256, H = 4,096, L = 32, G = 8 of 32 heads, F = 14,336), 8,030,261,248 parameters.
# Kept in bf16: embed_tokens and lm_head (2 · 525,336,576) and 65 norms of 4,096: 1,050,939,392 parameters,
# 2,101,878,784 bytes.  In 4-bit: the other 6,979,321,856 weights in 224 Linear4bit (7 a layer); every one a
# whole number of 64-blocks, and of 256 of them (q: 262,144 blocks, k: 65,536, gate: 917,504), so
#   packed:         6,979,321,856 / 2        = 3,489,660,928
#   absmax (uint8): 6,979,321,856 / 64       =   109,051,904
#   nested absmax:  109,051,904 / 256 · 4    =     1,703,936
#   per tensor:     224 · (64 + 4 + 1,024)   =       244,608   (4-bit code, offset, dynamic code)
# nf4 with double quantization: 3,600,661,376 + 2,101,878,784 = 5,702,540,160 bytes.  Without it, the absmax
# in fp32 (436,207,616) and the 4-bit code only (224 · 64 = 14,336): 3,925,882,880 + 2,101,878,784 = 6,027,761,664.
LLAMA_3_8B_NF4, LLAMA_3_8B_NF4_PLAIN_ABSMAX = 5_702_540_160, 6_027_761_664


def test_llama_3_8b_in_nf4_as_worked_out_by_hand():
    assert LLAMA_3_8B.memory("nf4", optimizer="none").weights == LLAMA_3_8B_NF4
    assert LLAMA_3_8B.memory("nf4", optimizer="none", double_quant=False).weights == LLAMA_3_8B_NF4_PLAIN_ABSMAX


def test_double_quantization_saves_what_the_qlora_paper_gives_per_parameter():
    """Dettmers et al. 2023 (QLoRA), section 3, Double Quantization: the constants cost 32/64 = 0.5 bits a
    parameter, and 8/64 + 32/(64·256) = 0.127 bits with double quantization.  Over Llama-3-8B's 6,979,321,856
    4-bit weights, less what the paper leaves out (each tensor's offset and 256-entry code, 224 · 1,028 bytes)."""
    from fractions import Fraction

    saved_bits = Fraction(32, 64) - (Fraction(8, 64) + Fraction(32, 64 * 256))
    saved = LLAMA_3_8B_NF4_PLAIN_ABSMAX - LLAMA_3_8B_NF4
    assert saved == 6_979_321_856 * saved_bits / 8 - 224 * (4 + 256 * 4)


def test_qlora_of_llama_3_8b_adds_the_fp32_adapter_and_its_adam_state():
    # r = 16 on q_proj (4,096 → 4,096) and v_proj (4,096 → 1,024) of 32 layers: 32 · 16 · (8,192 + 5,120)
    adapter = 32 * 16 * (8192 + 5120)
    mem = LLAMA_3_8B.lora(16, ["q_proj", "v_proj"]).memory("nf4", "adam")
    assert (mem.weights, mem.gradients, mem.optimizer) == (LLAMA_3_8B_NF4 + 4 * adapter, 4 * adapter, 8 * adapter)
    assert mem.to_dict()["quantization"]["double_quant"] is True


def test_qlora_formulas_are_its_numbers_at_the_model_values():
    from symparams.core.symbols import R

    adapter = LLAMA_3_8B.lora(8, "all-linear")
    mem = adapter.memory("fp4", "sgd", double_quant=False)
    values = {**LLAMA_3_8B.values, R: 8}
    for part in ("weights", "gradients", "optimizer"):
        assert mem.formulas[part].xreplace(values) == getattr(mem, part)


def test_keeping_the_layers_quantizes_only_the_lm_head():
    # an explicit policy replaces transformers' default skips (llm_int8_skip_modules): the LM head is 4-bit
    m = CASES["llama"][0]
    head = 100 * 36
    plain = m.memory("bf16", optimizer="none").weights
    assert m.memory("nf4", optimizer="none", keep="layers").weights == plain - BF16 * head + bnb_4bit_bytes(
        head, True)


@pytest.mark.parametrize("settings, needle", [
    (dict(dtype="bf16", double_quant=False), "double_quant applies to a quantized"),
    (dict(dtype="gptq", double_quant=False), "double_quant applies to nf4 and fp4"),
    (dict(dtype="nf4", double_quant="no"), "double_quant is True or False"),
    (dict(dtype="gptq", prepare_kbit=True), "prepare_kbit applies to nf4 and fp4"),
    (dict(dtype="fp16", prepare_kbit=True), "prepare_kbit applies to a quantized"),
    (dict(dtype="nf4", optimizer="adam"), "nf4 weights are not trained here"),
    (dict(dtype="nf4", keep="layers"), "no tensor of this model is stored in nf4"),
    # FSDP and ZeRO-3 shard a Params4bit's data, not its QuantState (an attribute, not a parameter)
    (dict(dtype="fp4", zero=3, ranks=8), "ZeRO stage 3 of a fp4 base"),
])
def test_bad_4bit_settings_are_refused_in_one_line(settings, needle):
    base = model("llama-3-8b")  # no head: keeping the layers leaves nothing in 4-bit
    with pytest.raises(SymparamsError, match=needle):
        base.memory(**{"optimizer": "none", **settings}).weights


def test_a_model_transformers_keeps_partly_in_fp32_is_refused():
    # T5's wo stays fp32 under bitsandbytes (_keep_in_fp32_modules), not counted here
    with pytest.raises(SymparamsError, match="_keep_in_fp32_modules"):
        model("t5-small").memory("nf4", optimizer="none")


def test_falcon_whose_layers_transformers_leaves_in_bf16_is_refused():
    """transformers replaces ``type(module) is nn.Linear`` only: Falcon's ``FalconLinear`` layers stay bf16."""
    from transformers.models.falcon.modeling_falcon import FalconLinear

    assert issubclass(FalconLinear, nn.Linear) and FalconLinear is not nn.Linear
    with pytest.raises(SymparamsError, match="subclass nn.Linear"):
        model("falcon-7b").memory("nf4", optimizer="none")
