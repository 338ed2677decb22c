"""``audit PATH`` of a mixture of experts: checkpoints that transformers' own ``save_pretrained`` writes from a tiny
model built on the CPU, which stores the experts one tensor per expert and projection, as the released checkpoints
do (Mixtral's ``block_sparse_moe.experts.E.w1.weight``, Qwen's and DeepSeek's ``mlp.experts.E.gate_proj.weight``),
while the model holds them fused.  What the audit must find is planted in those files, never taken from its
output."""

import numpy as np
import pytest
import safetensors.numpy
import torch
import transformers

from tests.cli.test_audit_command import audited
from tests.reference.cli_runner import command

pytestmark = pytest.mark.crosscheck

SMALL = {
    "mixtral": transformers.MixtralConfig(vocab_size=50, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                          num_attention_heads=4, num_key_value_heads=2, num_local_experts=4),
    "qwen2_moe": transformers.Qwen2MoeConfig(vocab_size=50, hidden_size=32, moe_intermediate_size=24,
                                             shared_expert_intermediate_size=40, num_hidden_layers=2,
                                             num_attention_heads=4, num_key_value_heads=2, num_experts=4,
                                             num_experts_per_tok=2),
    "qwen3_moe": transformers.Qwen3MoeConfig(vocab_size=50, hidden_size=32, intermediate_size=56,
                                             moe_intermediate_size=24, num_hidden_layers=3, num_attention_heads=4,
                                             num_key_value_heads=2, head_dim=8, num_experts=4, num_experts_per_tok=2,
                                             mlp_only_layers=[0]),
    "deepseek_v3": transformers.DeepseekV3Config(vocab_size=50, hidden_size=32, intermediate_size=48,
                                                 moe_intermediate_size=24, num_hidden_layers=3,
                                                 first_k_dense_replace=1, num_attention_heads=4,
                                                 num_key_value_heads=4, n_routed_experts=4, n_shared_experts=1,
                                                 num_experts_per_tok=2, n_group=2, topk_group=1, q_lora_rank=16,
                                                 kv_lora_rank=8, qk_rope_head_dim=4, qk_nope_head_dim=8,
                                                 v_head_dim=8),
}


def saved(folder, kind) -> int:
    """``folder`` holding what save_pretrained writes for the tiny model of ``kind`` (a name of SMALL, or a
    config); its parameter count."""
    torch.manual_seed(0)
    module = transformers.AutoModelForCausalLM.from_config(SMALL.get(kind) if isinstance(kind, str) else kind)
    module.save_pretrained(folder)
    return module.num_parameters()


def edited(folder, change) -> None:
    """The checkpoint in ``folder`` rewritten with ``change`` applied to its arrays."""
    path = str(folder / "model.safetensors")
    arrays = safetensors.numpy.load_file(path)
    change(arrays)
    safetensors.numpy.save_file(arrays, path, metadata={"format": "pt"})


@pytest.mark.parametrize("kind", list(SMALL))
def test_a_mixture_transformers_saves_reconciles(kind, tmp_path):
    count = saved(tmp_path, kind)
    code, lines, data = audited(tmp_path)
    assert code == 0 and lines[-1].startswith("ok: ")
    assert data["formula_parameters"] == data["parameters"] == count
    assert data["formula_bytes"] == data["bytes"] == 4 * count


def test_the_released_layout_is_one_tensor_per_expert(tmp_path):
    """The file holds w1, w2 and w3 of every expert of every layer, and no fused tensor."""
    saved(tmp_path, "mixtral")
    names = safetensors.numpy.load_file(str(tmp_path / "model.safetensors"))
    assert "model.layers.1.block_sparse_moe.experts.3.w3.weight" in names
    assert not any("gate_up_proj" in name for name in names)


def test_a_missing_expert_tensor_is_named(tmp_path):
    saved(tmp_path, "mixtral")
    edited(tmp_path, lambda a: a.pop("model.layers.1.block_sparse_moe.experts.2.w3.weight"))
    code, lines, data = audited(tmp_path)
    assert code == 2 and lines == ["missing: 1 tensor (layers.*.block_sparse_moe.experts.*.w3.weight: 1 of 8)"]
    assert data["formula_parameters"] - data["parameters"] == 48 * 32


def test_an_expert_tensor_in_another_dtype_is_named(tmp_path):
    saved(tmp_path, "qwen3_moe")
    name = "model.layers.2.mlp.experts.1.down_proj.weight"

    def halve(arrays):
        arrays[name] = arrays[name].astype(np.float16)

    edited(tmp_path, halve)
    code, lines, _ = audited(tmp_path)
    assert code == 2 and lines == [f"dtype: 1 tensor stored as F16 where the model holds F32 ({name})"]


def test_an_expert_tensor_of_another_shape_is_named(tmp_path):
    """DeepSeek-V3's expert gate_proj stored transposed: [H, F] where the model's [F, H]."""
    saved(tmp_path, "deepseek_v3")
    name = "model.layers.2.mlp.experts.0.gate_proj.weight"

    def transpose(arrays):
        arrays[name] = np.ascontiguousarray(arrays[name].T)

    edited(tmp_path, transpose)
    code, lines, _ = audited(tmp_path)
    assert code == 2 and lines[0] == f"shape: 1 tensor ({name} [32, 24] where the model's [24, 32])"
    assert [line for line in lines[1:] if not line.startswith("note: ")] == []


def test_a_router_correction_bias_is_a_buffer_noted(tmp_path):
    """DeepSeek-V3's router keeps e_score_correction_bias as a buffer, which save_pretrained stores."""
    saved(tmp_path, "deepseek_v3")
    code, lines, data = audited(tmp_path)
    assert code == 0 and "e_score_correction_bias" in lines[0] and lines[0].startswith("note: 2 buffers")


def test_the_layouts_data_is_what_the_pinned_transformers_gives():
    """The per-expert layouts the audit reads are transformers' own conversion mapping, regenerated here."""
    import importlib.util

    from symparams.analysis import expert_layout
    from tests.reference import ROOT

    spec = importlib.util.spec_from_file_location("checkpoint_layouts", ROOT / "scripts" / "checkpoint_layouts.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    with open(expert_layout.DATA, encoding="utf-8") as f:
        assert script.text() == f.read()


def test_a_mixture_without_a_known_layout_is_refused_in_one_line(tmp_path):
    """A config type transformers' conversion mapping does not list (PhiMoE): how its checkpoints store the experts
    is not known, so the audit says so rather than guess."""
    config = transformers.PhimoeConfig(vocab_size=50, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                       num_attention_heads=4, num_key_value_heads=2, num_local_experts=4)
    saved(tmp_path, config)

    code, out, err = command("audit", tmp_path)
    assert (code, out) == (2, "") and err.count("\n") == 1 and "phimoe" in err
