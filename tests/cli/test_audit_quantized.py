"""``audit PATH`` of FP8, GPTQ and AWQ checkpoints: the tensors each method stores in place of a linear weight.

FP8: the names, shapes and dtypes are transformers' own: a tiny Llama built on the meta device, its linear
layers replaced by ``replace_with_fp8_linear`` (``integrations/finegrained_fp8.py``) for a
``FineGrainedFP8Config`` as a checkpoint's config.json names it, its ``state_dict()`` written with
``safetensors.torch.save_file`` as zeros of those shapes and dtypes (the kept tensors in the config's dtype, as
``save_pretrained`` writes them).  GPTQ and AWQ: their packing modules need ``gptqmodel``, not installed here;
the files follow the layouts their libraries' sources document, written out below from those sources (AutoGPTQ's
``auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py``, ``QuantLinear.__init__``; AutoAWQ's
``awq/modules/linear/gemm.py``, ``WQLinear_GEMM.__init__``), the modules they quantize being the meta model's
``nn.Linear`` layers inside its decoder layers.  What the audit must find is planted in those files.
"""

import json
import math

import pytest
import safetensors.torch
import torch
import transformers
from transformers import FineGrainedFP8Config
from transformers.integrations.finegrained_fp8 import replace_with_fp8_linear

from symparams import SymparamsError
from symparams.analysis.quantized_layout import read_layout
from tests.reference.cli_runner import command

pytestmark = pytest.mark.crosscheck

#: H = 256 and F = 320: two scale blocks of 128 per row, one partial; G = 2 heads of 64: k, v of 128 outputs
LLAMA = dict(vocab_size=64, hidden_size=256, intermediate_size=320, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, tie_word_embeddings=False, architectures=["LlamaForCausalLM"])
GROUP = 64


def meta_llama(dtype: str):
    config = transformers.LlamaConfig(**LLAMA, dtype=dtype)
    with torch.device("meta"):
        return config, transformers.LlamaForCausalLM(config)


def fp8_tensors(block) -> tuple[dict, dict]:
    """transformers' FP8 model's tensors (name → (shape, dtype)), and the quantization_config."""
    quantization = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": block}
    config, module = meta_llama("bfloat16")
    module = replace_with_fp8_linear(module, modules_to_not_convert=["lm_head"], pre_quantized=True,
                                     quantization_config=FineGrainedFP8Config(weight_block_size=block))
    held = {name: (tuple(t.shape), t.dtype if t.dtype != torch.float32 or "scale" in name else torch.bfloat16)
            for name, t in module.state_dict().items()}
    return held, quantization


def gptq_tensors(awq: bool = False, group: int = GROUP) -> tuple[dict, dict]:
    """A 4-bit GPTQ (or AWQ GEMM) checkpoint's tensors, as the packing libraries' sources lay them out (GPTQ's
    group size -1: one group of the whole row, QuantLinear's ``group_size = infeatures``)."""
    config, module = meta_llama("float16")
    held = {name: (tuple(p.shape), torch.float16) for name, p in module.named_parameters()}
    for name, linear in module.named_modules():
        if isinstance(linear, torch.nn.Linear) and ".layers." in name:
            n_in, n_out = linear.in_features, linear.out_features
            g = n_in if group == -1 else group
            del held[f"{name}.weight"]
            if awq:  # WQLinear_GEMM: qweight (in, out // (32 // w_bit)), qzeros and scales per group of inputs
                held.update({f"{name}.qweight": ((n_in, n_out // 8), torch.int32),
                             f"{name}.qzeros": ((n_in // g, n_out // 8), torch.int32),
                             f"{name}.scales": ((n_in // g, n_out), torch.float16)})
            else:  # QuantLinear: qweight (in // 32 * bits, out), qzeros (ceil(in / g), out // 32 * bits), g_idx (in)
                held.update({f"{name}.qweight": ((n_in // 32 * 4, n_out), torch.int32),
                             f"{name}.qzeros": ((math.ceil(n_in / g), n_out // 32 * 4), torch.int32),
                             f"{name}.scales": ((math.ceil(n_in / g), n_out), torch.float16),
                             f"{name}.g_idx": ((n_in,), torch.int32)})
    method = {"quant_method": "awq", "bits": 4, "group_size": group, "version": "gemm", "zero_point": True} if awq \
        else {"quant_method": "gptq", "bits": 4, "group_size": group, "desc_act": False, "sym": True}
    return held, method


def write(folder, held: dict, quantization: dict, dtype: str, change=None) -> int:
    """The config.json and model.safetensors of ``held`` (``change`` edits it first); the file's tensor bytes."""
    config = transformers.LlamaConfig(**LLAMA, dtype=dtype)
    data = config.to_dict()
    data["quantization_config"] = quantization
    (folder / "config.json").write_text(json.dumps(data))
    held = dict(held)
    if change:
        change(held)
    tensors = {name: torch.zeros(shape, dtype=dtype_) for name, (shape, dtype_) in held.items()}
    safetensors.torch.save_file(tensors, str(folder / "model.safetensors"))
    return sum(t.numel() * t.element_size() for t in tensors.values())


def audited(path) -> tuple[int, list[str], dict]:
    code, out, err = command("audit", path)
    assert err == "" and code in (0, 2), err
    code_json, out_json, _ = command("audit", path, "--json")
    assert code_json == code
    return code, out.splitlines(), json.loads(out_json)


CASES = {"fp8-block": lambda: fp8_tensors([128, 128]) + ("bfloat16",),
         "fp8-tensor": lambda: fp8_tensors(None) + ("bfloat16",),
         "gptq": lambda: gptq_tensors() + ("float16",), "awq": lambda: gptq_tensors(awq=True) + ("float16",),
         # 320 inputs in groups of 128: three, the last partial; -1: one group a row
         "gptq-partial-group": lambda: gptq_tensors(group=128) + ("float16",),
         "gptq-row-group": lambda: gptq_tensors(group=-1) + ("float16",)}


@pytest.mark.parametrize("case", CASES)
def test_a_correct_quantized_checkpoint_reconciles(case, tmp_path):
    held, quantization, dtype = CASES[case]()
    size = write(tmp_path, held, quantization, dtype)
    code, lines, data = audited(tmp_path)
    assert code == 0 and lines[-1].startswith("ok: "), lines
    assert data["bytes"] == data["formula_bytes"] == size and data["tensors"] == len(held)
    assert data["quantization"] == quantization["quant_method"]


@pytest.mark.parametrize("block", [[128, 128], [64, 128], None])
def test_the_fp8_layout_is_what_transformers_holds(block):
    """Each FP8Linear's tensors, as the layout gives them from its weight's shape (partial blocks at the edges:
    F = 320 is three blocks of 128 outputs, the last partial)."""
    held, quantization = fp8_tensors(block)
    layout = read_layout(quantization)
    names = {"F8_E4M3": torch.float8_e4m3fn, "F32": torch.float32}
    weights = [n for n in held if n.endswith("_scale_inv")]
    assert len(weights) == 14
    for scale in weights:
        weight = scale.replace("_scale_inv", "")
        assert [(n, s, names[d]) for n, s, d in layout.stored(weight, held[weight][0])] == \
            [(weight, *held[weight]), (scale, *held[scale])]


#: for each method, the tensor the layout adds that a damaged file lacks
SCALES = {"fp8-block": "weight_scale_inv", "fp8-tensor": "weight_scale_inv", "gptq": "qzeros", "awq": "scales"}


@pytest.mark.parametrize("case", SCALES)
def test_a_missing_scale_is_named(case, tmp_path):
    held, quantization, dtype = CASES[case]()
    name = f"model.layers.1.self_attn.k_proj.{SCALES[case]}"
    write(tmp_path, held, quantization, dtype, change=lambda h: h.pop(name))
    code, lines, _ = audited(tmp_path)
    assert code == 2 and lines == [f"missing: 1 tensor ({name[len('model.'):]})"]


@pytest.mark.parametrize("case, name, dtype", [
    ("fp8-block", "model.layers.0.mlp.gate_proj.weight", torch.bfloat16),
    ("gptq", "model.layers.0.mlp.gate_proj.qweight", torch.float16),
    ("awq", "model.layers.0.mlp.gate_proj.qweight", torch.float16),
    ("gptq", "model.norm.weight", torch.int32)])
def test_a_tensor_in_another_dtype_is_named(case, name, dtype, tmp_path):
    held, quantization, config_dtype = CASES[case]()
    write(tmp_path, held, quantization, config_dtype, change=lambda h: h.update({name: (h[name][0], dtype)}))
    code, lines, _ = audited(tmp_path)
    assert code == 2 and len(lines) == 1 and lines[0].startswith("dtype: 1 tensor stored as ") and name in lines[0]


@pytest.mark.parametrize("case", ["gptq", "awq"])
def test_scales_of_another_group_size_are_a_shape_difference(case, tmp_path):
    held, quantization, dtype = CASES[case]()
    write(tmp_path, held, {**quantization, "group_size": 32}, dtype)  # the file's groups are of 64
    code, lines, data = audited(tmp_path)
    assert code == 2 and [line.split(":")[0] for line in lines] == ["shape"]
    assert all(name.split(" ")[0].endswith((".qzeros", ".scales")) for name in data["differences"]["shape"])


def test_fp8_scales_of_another_block_are_a_shape_difference(tmp_path):
    held, quantization = fp8_tensors([128, 128])
    write(tmp_path, held, {**quantization, "weight_block_size": [64, 64]}, "bfloat16")
    code, lines, data = audited(tmp_path)
    assert code == 2 and [line.split(":")[0] for line in lines] == ["shape"]
    assert len(data["differences"]["shape"]) == 14  # 7 linear layers a decoder layer, 2 layers


def test_a_plain_checkpoint_under_a_quantization_config_is_not_ok(tmp_path):
    config, module = meta_llama("bfloat16")
    held = {name: (tuple(p.shape), torch.bfloat16) for name, p in module.named_parameters()}
    write(tmp_path, held, {"quant_method": "fp8", "weight_block_size": [128, 128]}, "bfloat16")
    code, lines, _ = audited(tmp_path)
    assert code == 2 and [line.split(":")[0] for line in lines] == ["missing", "dtype"]


@pytest.mark.parametrize("key", ["down_proj", r"model\.layers\.\d+\.mlp\.down_proj"])
def test_modules_not_converted_are_expected_unquantized(key, tmp_path):
    held, quantization = fp8_tensors([128, 128])
    for name in ("model.layers.0.mlp.down_proj", "model.layers.1.mlp.down_proj"):
        held[f"{name}.weight"] = (held[f"{name}.weight"][0], torch.bfloat16)
        del held[f"{name}.weight_scale_inv"]
    write(tmp_path, held, quantization, "bfloat16")
    assert audited(tmp_path)[0] == 2
    write(tmp_path, held, {**quantization, "modules_to_not_convert": ["lm_head", key]}, "bfloat16")
    assert audited(tmp_path)[0] == 0


def test_modules_not_converted_in_some_layers_only_are_refused(tmp_path):
    held, quantization = fp8_tensors([128, 128])
    write(tmp_path, held, {**quantization, "modules_to_not_convert": ["model.layers.0.mlp.down_proj"]}, "bfloat16")
    code, out, err = command("audit", tmp_path)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "layers.*.mlp.down_proj" in err


# -- a mixture of experts, as DeepSeek-V3's FP8 checkpoint stores it ------------------------------------------------

def deepseek_fp8(folder, block, change=None) -> int:
    """``folder`` holding a tiny DeepSeek-V3 as ``save_pretrained`` writes it (one tensor per expert), each weight
    transformers' FP8 replacement makes an FP8Linear (its ``state_dict()``) or an FP8 expert stored as F8_E4M3
    with its ``weight_scale_inv`` of ⌈out/b0⌉ × ⌈in/b1⌉ blocks (FP8Linear's rule, one expert at a time, as
    DeepSeek-V3's released files hold them), the rest in bf16; the file's tensor bytes."""
    from tests.cli.test_audit_experts import SMALL

    config = SMALL["deepseek_v3"]
    torch.manual_seed(0)
    transformers.AutoModelForCausalLM.from_config(config).save_pretrained(folder)
    names = safetensors.torch.load_file(str(folder / "model.safetensors"))
    with torch.device("meta"):
        module = transformers.AutoModelForCausalLM.from_config(config)
    module = replace_with_fp8_linear(module, modules_to_not_convert=["lm_head"], pre_quantized=True,
                                     quantization_config=FineGrainedFP8Config(weight_block_size=block))
    fp8 = module.state_dict()
    held = {}
    for name, t in names.items():
        if name in fp8 and fp8[name].dtype == torch.float8_e4m3fn:
            held[name] = (tuple(t.shape), torch.float8_e4m3fn)
            scale = fp8[name.replace(".weight", ".weight_scale_inv")]
            held[name.replace(".weight", ".weight_scale_inv")] = (tuple(scale.shape), scale.dtype)
        elif ".experts." in name:
            (n_out, n_in), scale = t.shape, name.replace(".weight", ".weight_scale_inv")
            held[name], held[scale] = (tuple(t.shape), torch.float8_e4m3fn), \
                ((-(-n_out // block[0]), -(-n_in // block[1])), torch.float32)
        else:
            held[name] = (tuple(t.shape), torch.bfloat16)
    if change:
        change(held)
    data = json.loads((folder / "config.json").read_text())
    data.update(dtype="bfloat16", quantization_config={"quant_method": "fp8", "weight_block_size": block})
    (folder / "config.json").write_text(json.dumps(data))
    tensors = {name: torch.zeros(shape, dtype=dtype) for name, (shape, dtype) in held.items()}
    safetensors.torch.save_file(tensors, str(folder / "model.safetensors"))
    return sum(t.numel() * t.element_size() for t in tensors.values())


def test_a_deepseek_v3_fp8_checkpoint_reconciles(tmp_path):
    size = deepseek_fp8(tmp_path, [16, 16])
    code, lines, data = audited(tmp_path)
    buffers = 2 * 4 * 2  # the routers' e_score_correction_bias, 4 experts in bf16, in 2 layers: not parameters
    assert code == 0 and data["bytes"] == data["formula_bytes"] == size - buffers, lines
    assert data["stored_types"]["F8_E4M3"] == data["stored_types"]["F32"]


def test_a_deepseek_v3_expert_scale_missing_is_named(tmp_path):
    name = "model.layers.2.mlp.experts.3.down_proj.weight_scale_inv"
    deepseek_fp8(tmp_path, [16, 16], change=lambda held: held.pop(name))
    code, lines, _ = audited(tmp_path)
    assert code == 2 and [line for line in lines if not line.startswith("note: ")] == \
        ["missing: 1 tensor (layers.*.mlp.experts.*.down_proj.weight_scale_inv: 1 of 8)"]


@pytest.mark.parametrize("method", ["gptq", "awq"])
def test_a_gptq_or_awq_mixture_of_experts_is_refused_in_one_line(method):
    """No library here writes a GPTQ or AWQ mixture of experts to check the experts' packing against, so such an
    audit is refused rather than reconciled against an unchecked layout (FP8 experts are checked above)."""
    from symparams import model
    from symparams.analysis.expected_tensors import expected_tensors
    from symparams.analysis.quantized_layout import read_layout

    with pytest.raises(SymparamsError, match=f"does not read {method} checkpoints of a mixture of experts"):
        expected_tensors(model("mixtral-8x7b"), "bf16", (), read_layout({"quant_method": method, "bits": 4}))
    assert expected_tensors(model("llama-3-8b"), "bf16", (), read_layout({"quant_method": method, "bits": 4}))
