"""GPTQ, AWQ, FP8 and MXFP4 bytes against published checkpoints and transformers' own layouts.

No library that packs GPTQ or AWQ installs and runs here with the pinned torch and transformers (AutoGPTQ and
AutoAWQ import transformers APIs 5.x removed; GPTQModel needs its kernels), so their tests follow the tensors
the released checkpoints list, as their ``model.safetensors`` headers give them, in the layout of AutoGPTQ's
``QuantLinear`` (``auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py``) and AutoAWQ's ``WQLinear_GEMM``
(``awq/modules/linear/gemm.py``).  FP8 is checked against transformers' ``replace_with_fp8_linear``
(``integrations/finegrained_fp8.py``) on the meta device and DeepSeek-V3's published tensors; MXFP4 against
the published size of gpt-oss-20b and transformers' reader of its blocks (``integrations/mxfp4.py``).
"""

import pytest
import torch
import transformers

from symparams import SymparamsError, model
from tests.reference import decoders, moe
from tests.reference.packed import by_tensor

pytestmark = pytest.mark.crosscheck

I32, F16, BF16, F32, F8, U8 = 4, 2, 2, 4, 1, 1
H7, F7, L7 = 4096, 11008, 32  # Llama-2-7B
LLAMA_2_7B = model("llama-2-7b", head="causal-lm")

#: TheBloke/Llama-2-7B-GPTQ (main: 4 bits, group size 128), one layer's tensors: (name, shape, bytes an element)
GPTQ_LAYER = {f"{proj}.{part}": (shape, size)
              for proj, n_in, n_out in (("self_attn.q_proj", H7, H7), ("self_attn.k_proj", H7, H7),
                                        ("self_attn.v_proj", H7, H7), ("self_attn.o_proj", H7, H7),
                                        ("mlp.gate_proj", H7, F7), ("mlp.up_proj", H7, F7), ("mlp.down_proj", F7, H7))
              for part, shape, size in (("qweight", (n_in // 8, n_out), I32), ("qzeros", (n_in // 128, n_out // 8), I32),
                                        ("scales", (n_in // 128, n_out), F16), ("g_idx", (n_in,), I32))}
#: TheBloke/Llama-2-7B-AWQ (4 bits, group size 128, GEMM): qweight packs the outputs, and there is no g_idx
AWQ_LAYER = {name: ((shape[0] * 8, shape[1] // 8) if name.endswith("qweight") else shape, size)
             for name, (shape, size) in GPTQ_LAYER.items() if not name.endswith("g_idx")}


def _bytes(shape, size) -> int:
    return size * int(torch.tensor(shape).prod())


@pytest.mark.parametrize("fmt, layer", [("gptq", GPTQ_LAYER), ("awq", AWQ_LAYER)])
def test_gptq_and_awq_match_the_published_llama_2_7b_checkpoints(fmt, layer):
    ours = by_tensor(LLAMA_2_7B, fmt)
    for proj in ("self_attn.q_proj", "self_attn.k_proj", "mlp.down_proj"):
        published = sum(_bytes(*layer[f"{proj}.{part}"]) for part in ("qweight", "qzeros", "scales", "g_idx")
                        if f"{proj}.{part}" in layer)
        assert ours[f"layers.*.{proj}.weight"] == (L7 * published, {fmt})
    norms = (2 * L7 + 1) * H7
    plain = F16 * (2 * 32000 * H7 + norms)  # embed_tokens and lm_head stay fp16, as do the norms
    total = L7 * sum(_bytes(*t) for t in layer.values()) + plain
    assert LLAMA_2_7B.memory(fmt, optimizer="none").weights == total


def test_a_group_size_that_does_not_divide_a_row_is_refused_naming_it():
    with pytest.raises(SymparamsError, match=r"group size 96 does not divide the row length 4096 of layers\.\*"):
        LLAMA_2_7B.memory("gptq", optimizer="none", group_size=96).weights
    with pytest.raises(SymparamsError, match="group_size applies to gptq and awq, not q4_k"):
        LLAMA_2_7B.memory("q4_k", optimizer="none", group_size=64)


def test_a_policy_that_quantizes_nothing_is_refused():
    with pytest.raises(SymparamsError, match="no tensor of this model is stored in mxfp4"):
        LLAMA_2_7B.memory("mxfp4", optimizer="none").weights


def test_a_parallel_layout_of_a_quantized_checkpoint_is_refused():
    # the layout places plain weights by rows and columns; packed blocks and their scales are not placed so
    for layout in ({"tensor_parallel": 2}, {"pipeline_parallel": 2}):
        with pytest.raises(SymparamsError, match="quantized as q4_k is not split over ranks"):
            LLAMA_2_7B.memory("q4_k", optimizer="none", **layout)


# -- FP8 ----------------------------------------------------------------------------------------------------

def _stored_fp8(module) -> int:
    """A checkpoint of ``module`` after ``replace_with_fp8_linear``: fp8 weights, fp32 scales, the rest bf16."""
    total = 0
    for name, p in module.named_parameters():
        element = F32 if name.endswith("scale_inv") else F8 if p.dtype == torch.float8_e4m3fn else BF16
        total += element * p.numel()
    return total


#: rows and outputs that are not whole 128-blocks (H = 320, F = 200: partial blocks at the edges), and Mixtral's
#: experts (F_e = 256: its fused gate_up has the scale rows of its two halves)
FP8_CASES = {
    "llama": model("llama", head="causal-lm", V=100, H=320, L=2, A=4, G=2, F=200, gqa=True),
    "mixtral": model("mixtral", head="causal-lm", V=100, H=320, L=2, A=4, G=2, F_e=256, N_e=4, k_e=2, gqa=True),
}


@pytest.mark.parametrize("fmt, block", [("fp8", None), ("fp8-block", (128, 128))])
@pytest.mark.parametrize("case", list(FP8_CASES))
def test_fp8_matches_transformers_fp8_linear(case, fmt, block):
    m = FP8_CASES[case]
    if m.family.name == "mixtral":
        module, _, _ = moe.reference(m)
    else:
        module = decoders.untie(decoders.reference(m)[0])
    config = transformers.FineGrainedFP8Config(weight_block_size=block)
    transformers.integrations.finegrained_fp8.replace_with_fp8_linear(module, ["lm_head"], config)
    assert m.memory(fmt, optimizer="none").weights == _stored_fp8(module)


#: DeepSeek-V3's checkpoint (deepseek-ai/DeepSeek-V3), one MoE layer's FP8 tensors: (weight shape, scale shape)
DEEPSEEK_V3_FP8 = {
    "self_attn.q_a_proj": ((1536, 7168), (12, 56)),
    "self_attn.q_b_proj": ((24576, 1536), (192, 12)),
    "self_attn.kv_a_proj_with_mqa": ((576, 7168), (5, 56)),
    "self_attn.kv_b_proj": ((32768, 512), (256, 4)),
    "self_attn.o_proj": ((7168, 16384), (56, 128)),
    "mlp.shared_experts.down_proj": ((7168, 2048), (56, 16)),
}
#: each routed expert's gate_proj and up_proj ([2048, 7168], scales [16, 56]) and down_proj ([7168, 2048], [56, 16])
EXPERT_GATE, EXPERT_DOWN = ((2048, 7168), (16, 56)), ((7168, 2048), (56, 16))


def test_fp8_block_matches_deepseek_v3s_published_tensors():
    m = model("deepseek-v3", head="causal-lm")
    ours = by_tensor(m, "fp8-block")
    fp8 = lambda weight, scale: _bytes(weight, F8) + _bytes(scale, F32)  # noqa: E731
    for name, (weight, scale) in DEEPSEEK_V3_FP8.items():
        layers = 61 if name.startswith("self_attn") else 58
        assert ours[f"layers.*.{name}.weight"] == (layers * fp8(weight, scale), {"fp8-block"}), name
    assert ours["layers.*.mlp.experts.gate_up_proj"][0] == 58 * 256 * 2 * fp8(*EXPERT_GATE)
    assert ours["layers.*.mlp.experts.down_proj"][0] == 58 * 256 * fp8(*EXPERT_DOWN)
    assert ours["layers.*.mlp.gate.weight"] == (58 * BF16 * 256 * 7168, {"bf16"})  # the router stays bf16


# -- MXFP4 ----------------------------------------------------------------------------------------------------

def _gpt_oss(**sizes):
    config = transformers.GptOssConfig(**sizes, architectures=["GptOssForCausalLM"])
    return model(config.to_dict(), head="causal-lm"), config


def test_mxfp4_matches_the_published_size_of_gpt_oss_20b():
    """openai/gpt-oss-20b's ``model.safetensors.index.json`` gives ``total_size`` 13,761,264,768 bytes: its
    experts in MXFP4, everything else bf16."""
    m, _ = _gpt_oss(vocab_size=201088, hidden_size=2880, intermediate_size=2880, num_hidden_layers=24,
                    num_attention_heads=64, num_key_value_heads=8, head_dim=64, num_local_experts=32,
                    num_experts_per_tok=4, tie_word_embeddings=False)
    assert m.memory("mxfp4", optimizer="none").weights == 13_761_264_768


def test_mxfp4_blocks_and_scales_are_what_transformers_reads_back():
    """The checkpoint's ``gate_up_proj_blocks`` [E, 2F, H/32, 16] and ``_scales`` [E, 2F, H/32]: transformers
    turns them into the model's [E, H, 2F] parameter; their bytes are ours."""
    m, config = _gpt_oss(vocab_size=64, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, num_local_experts=4,
                         num_experts_per_tok=2)
    with torch.device("meta"):
        dense = transformers.GptOssForCausalLM(config).model.layers[0].mlp.experts
    ours = by_tensor(m, "mxfp4")
    for name, n_out, n_in in (("gate_up_proj", 2 * 96, 64), ("down_proj", 64, 96)):
        blocks = torch.zeros(4, n_out, n_in // 32, 16, dtype=torch.uint8)
        scales = torch.full((4, n_out, n_in // 32), 127, dtype=torch.uint8)
        read = transformers.integrations.mxfp4.convert_moe_packed_tensors(blocks, scales)
        assert read.shape == getattr(dense, name).shape
        assert ours[f"model.layers.*.mlp.experts.{name}"] == (2 * (blocks.numel() + scales.numel()), {"mxfp4"})
