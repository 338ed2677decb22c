"""``audit FILE.gguf``: files the ``gguf`` package's ``GGUFWriter`` writes as llama.cpp's converter does.

A tiny Llama or GPT-2 built by transformers on the meta device gives each tensor's name and shape; the names
are llama.cpp's, as ``convert_hf_to_gguf.py`` maps them (``gguf.get_tensor_name_map``: ``blk.0.attn_q.weight``;
GPT-2's ``Conv1D`` weights turned round to ``[out, in]``, its tied head not written), the policy of
``--outtype q8_0`` (1-D tensors and GPT-2's position table in F32, every other 2-D weight in Q8_0, quantized
by ``gguf.quants``).
``GGUFReader`` reads the file back; what the audit must find is planted in the file.
"""

import json

import gguf
import numpy as np
import pytest
import torch
import transformers

from tests.reference.cli_runner import command

pytestmark = pytest.mark.crosscheck

Q = gguf.GGMLQuantizationType
#: rows of 64 and 96 inputs: whole blocks of 32
CONFIG = transformers.LlamaConfig(vocab_size=64, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                                  num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False,
                                  architectures=["LlamaForCausalLM"])


GPT2 = transformers.GPT2Config(vocab_size=64, n_embd=64, n_layer=2, n_head=4, n_positions=16,
                               architectures=["GPT2LMHeadModel"])
MODELS = {"llama": (transformers.LlamaForCausalLM, CONFIG, gguf.MODEL_ARCH.LLAMA),
          "gpt2": (transformers.GPT2LMHeadModel, GPT2, gguf.MODEL_ARCH.GPT2)}
CONV1D = (".c_attn.weight", ".c_proj.weight", ".c_fc.weight")  # the converter's list


def llama_cpp_tensors(family: str) -> dict[str, tuple]:
    """llama.cpp's name → shape of each tensor of the tiny model, as its converter names and turns them."""
    cls, config, arch = MODELS[family]
    with torch.device("meta"):
        module = cls(config)
    names = gguf.get_tensor_name_map(arch, 2)
    return {names.get_name(n, try_suffixes=(".weight", ".bias")): tuple(p.shape)[::-1 if n.endswith(CONV1D) else 1]
            for n, p in module.named_parameters()}


def write(folder, change=None, types=None, family="llama"):
    """The config.json and ``model.gguf`` in ``folder``; ``change`` edits the tensors, ``types`` overrides a
    tensor's type; the file's bytes as GGUFReader reads them."""
    cls, config, arch = MODELS[family]
    config.save_pretrained(folder)
    tensors = llama_cpp_tensors(family)
    if change:
        change(tensors)
    writer = gguf.GGUFWriter(str(folder / "model.gguf"), gguf.MODEL_ARCH_NAMES[arch])
    for name, shape in tensors.items():
        data = np.zeros(shape, np.float32)
        kept = len(shape) == 1 or name.startswith("position_embd")
        kind = (types or {}).get(name, Q.F32 if kept else Q.Q8_0)
        if kind == Q.Q8_0:
            writer.add_tensor(name, gguf.quants.quantize(data, kind), raw_dtype=kind)
        else:
            writer.add_tensor(name, data.astype(np.float16 if kind == Q.F16 else np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return sum(int(t.n_bytes) for t in gguf.GGUFReader(str(folder / "model.gguf")).tensors)


def audited(folder, *options):
    code, out, err = command("audit", folder / "model.gguf", *options)
    assert err == "" and code in (0, 2), err
    data = json.loads(command("audit", folder / "model.gguf", *options, "--json")[1])
    return code, out.splitlines(), data


@pytest.mark.parametrize("family", MODELS)
def test_a_q8_0_file_reconciles_type_by_type(family, tmp_path):
    stored = write(tmp_path, family=family)
    code, lines, data = audited(tmp_path, "--dtype", "q8_0")
    assert code == 0 and lines[0].startswith("ok: ")
    cls, config, _ = MODELS[family]
    with torch.device("meta"):
        count = cls(config).num_parameters()
    assert data["formula_parameters"] == data["parameters"] == count
    assert data["formula_bytes"] == data["bytes"] == stored


def test_without_a_type_the_names_and_shapes_are_checked_and_the_types_listed(tmp_path):
    write(tmp_path)
    code, lines, data = audited(tmp_path)
    assert code == 0 and data["formula_bytes"] is None
    assert data["stored_types"] == {"Q8_0": 16, "F32": 5}
    assert lines[0].endswith("the types not checked (no --dtype): 16 Q8_0, 5 F32")


def test_a_tensor_in_another_type_is_named(tmp_path):
    write(tmp_path, types={"blk.1.ffn_down.weight": Q.F16})
    code, lines, _ = audited(tmp_path, "--dtype", "q8_0")
    assert code == 2 and lines == ["dtype: 1 tensor stored as F16 where the model holds Q8_0 (blk.1.ffn_down.weight)"]


def test_a_missing_and_a_misshapen_tensor_are_named(tmp_path):
    def damage(tensors):
        del tensors["output.weight"]
        tensors["blk.0.ffn_up.weight"] = (64, 64)

    write(tmp_path, change=damage)
    code, lines, _ = audited(tmp_path, "--dtype", "q8_0")
    assert code == 2 and lines == ["missing: 1 tensor (lm_head.weight)",
                                   "shape: 1 tensor (blk.0.ffn_up.weight [64, 64] where the model's [96, 64])"]


def test_the_types_the_audit_offers_are_the_librarys():
    from symparams.analysis.dtypes import GGUF_TYPES
    from symparams.cli.parser import AUDIT_DTYPES

    assert AUDIT_DTYPES == ("fp32", "bf16", "fp16", *GGUF_TYPES)
