"""``audit PATH``: checkpoints written by the real libraries, reconciled with the model's formula.

Each checkpoint's names and shapes are transformers' own: a tiny model built on the meta device (its
``named_parameters()``, which lists a tied tensor once, as ``save_pretrained`` stores it), written with
``safetensors.numpy.save_file`` as zero arrays of those shapes (GPT-2's ``Conv1D`` weights ``[in, out]``, as
transformers holds them); one tiny Llama is built for real on the CPU and saved by ``save_pretrained``, and one
GPT-2 by ``safetensors.torch.save_model``, which de-duplicates its tied tensors itself.  The config.json beside
each is transformers' too.  What the audit must find is planted in those files, never taken from its output.
"""

import json
import re

import numpy as np
import pytest
import safetensors.numpy
import safetensors.torch
import torch
import transformers

from tests.reference import ROOT, tiny_checkpoint
from tests.reference.cli_runner import command

pytestmark = pytest.mark.crosscheck

NUMPY = {"float32": np.float32, "float16": np.float16}
LLAMA = dict(vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, tie_word_embeddings=False)
#: tiny configs of four families: GQA and an untied head, Conv1D and a tied head, a base-model prefix ("bert.")
#: with a tied decoder, relative position buckets held by the first block only, a buffer saved beside the
#: parameters (BART's final_logits_bias)
CONFIGS = {
    "llama": (transformers.LlamaForCausalLM, transformers.LlamaConfig(**LLAMA)),
    "gpt2": (transformers.GPT2LMHeadModel, transformers.GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=4,
                                                                   n_positions=16)),
    "bert": (transformers.BertForMaskedLM, transformers.BertConfig(
        vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
        max_position_embeddings=16)),
    "t5": (transformers.T5ForConditionalGeneration, transformers.T5Config(
        vocab_size=64, d_model=32, d_kv=8, d_ff=48, num_layers=2, num_heads=4)),
    "bart": (transformers.BartForConditionalGeneration, transformers.BartConfig(
        vocab_size=64, d_model=32, encoder_ffn_dim=48, decoder_ffn_dim=48, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=4, decoder_attention_heads=4, max_position_embeddings=16)),
}


def meta_tensors(family: str, buffers: bool = False) -> tuple[dict, int]:
    """Name → shape of every parameter transformers' model holds (a tied one once), with ``buffers`` the buffers
    its state_dict saves too; and its parameter count."""
    cls, config = CONFIGS[family]
    with torch.device("meta"):
        module = cls(config)
    shapes = {name: tuple(p.shape) for name, p in module.named_parameters()}
    if buffers:
        saved = module.state_dict()
        shapes.update({name: tuple(b.shape) for name, b in module.named_buffers() if name in saved})
    return shapes, sum(p.numel() for p in module.parameters())


def write(folder, family: str, dtype: str = "float32", change=None, shards: int = 1) -> int:
    """``folder`` holding the config.json and the checkpoint of ``family`` (``change`` edits the arrays first;
    ``shards`` > 1: files and an index, as save_pretrained shards); the model's parameter count."""
    cls, config = CONFIGS[family]
    config.dtype, config.architectures = dtype, [cls.__name__]  # as save_pretrained writes them
    config.save_pretrained(folder)
    shapes, count = meta_tensors(family, buffers=True)
    arrays = {name: np.zeros(shape, NUMPY[dtype]) for name, shape in shapes.items()}
    if change:
        change(arrays)
    if shards == 1:
        safetensors.numpy.save_file(arrays, str(folder / "model.safetensors"))
        return count
    names, weight_map = sorted(arrays), {}
    for i in range(shards):
        file = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        part = names[i::shards]
        safetensors.numpy.save_file({n: arrays[n] for n in part}, str(folder / file))
        weight_map.update({n: file for n in part})
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return count


def audited(path, *options) -> tuple[int, list[str], dict]:
    """The audit's exit status, its lines, and its JSON."""
    code, out, err = command("audit", path, *options)
    assert err == "" and code in (0, 2), err
    code_json, out_json, _ = command("audit", path, *options, "--json")
    assert code_json == code
    return code, out.splitlines(), json.loads(out_json)


@pytest.mark.parametrize("family, shards", [("llama", 1), ("gpt2", 1), ("bert", 1), ("t5", 3), ("bart", 1)])
def test_a_correct_checkpoint_reconciles(family, shards, tmp_path):
    count = write(tmp_path, family, shards=shards)
    code, lines, data = audited(tmp_path)
    assert code == 0 and lines[-1].startswith("ok: ") and all(line.startswith("note: ") for line in lines[:-1])
    assert data["formula_parameters"] == data["parameters"] == count
    assert data["formula_bytes"] == data["bytes"] == 4 * count
    assert data["tensors"] == len(meta_tensors(family)[0])


def test_a_checkpoint_save_pretrained_writes_reconciles(tmp_path):
    config = transformers.LlamaConfig(**LLAMA, dtype="bfloat16")
    torch.manual_seed(0)
    module = transformers.LlamaForCausalLM(config).to(torch.bfloat16)
    module.save_pretrained(tmp_path)
    code, lines, data = audited(tmp_path)
    assert code == 0 and data["dtype"] == "bf16"
    assert data["formula_bytes"] == 2 * module.num_parameters() == (tmp_path / "model.safetensors").stat().st_size \
        - 8 - int.from_bytes((tmp_path / "model.safetensors").read_bytes()[:8], "little")


def test_a_missing_tensor_is_named(tmp_path):
    write(tmp_path, "llama", change=lambda a: a.pop("model.layers.1.mlp.up_proj.weight"))
    code, lines, data = audited(tmp_path)
    assert code == 2 and lines == ["missing: 1 tensor (layers.1.mlp.up_proj.weight)"]
    assert data["differences"] == {"missing": ["layers.1.mlp.up_proj.weight"]}
    assert data["formula_parameters"] - data["parameters"] == 48 * 32


def test_a_missing_untied_head_is_named(tmp_path):
    write(tmp_path, "llama", change=lambda a: a.pop("lm_head.weight"))
    assert audited(tmp_path)[1] == ["missing: 1 tensor (lm_head.weight)"]


def test_a_tensor_in_another_dtype_is_named(tmp_path):
    def halve(arrays):
        arrays["model.norm.weight"] = arrays["model.norm.weight"].astype(np.float16)

    write(tmp_path, "llama", change=halve)
    code, lines, _ = audited(tmp_path)
    assert code == 2 and lines == ["dtype: 1 tensor stored as F16 where the model holds F32 (model.norm.weight)"]


def test_a_whole_checkpoint_in_another_dtype(tmp_path):
    write(tmp_path, "gpt2", dtype="float16")
    code, lines, _ = audited(tmp_path, "--dtype", "fp32")
    assert code == 2 and len(lines) == 1 and lines[0].startswith("dtype: 28 tensors stored as F16 where the model holds F32 (")


def test_an_extra_tensor_and_a_wrong_config_are_named(tmp_path):
    qwen3 = {"model.layers.0.self_attn.q_norm.weight": np.zeros(8, np.float32)}  # a Qwen3's, not a Llama's
    write(tmp_path, "llama", change=lambda a: a.update(qwen3))
    code, lines, _ = audited(tmp_path, "--set", "F=40")
    assert code == 2
    assert lines[0] == "extra: 1 tensor (model.layers.0.self_attn.q_norm.weight)"
    assert lines[1].startswith("shape: 6 tensors (model.layers.0.mlp.gate_proj.weight [48, 32] where the model's "
                               "[40, 32], ")


def test_a_tied_head_stored_twice_is_noted_not_counted(tmp_path):
    write(tmp_path, "gpt2", change=lambda a: a.update({"lm_head.weight": a["transformer.wte.weight"].copy()}))
    code, lines, data = audited(tmp_path)
    assert code == 0 and lines[0].startswith("note: lm_head.weight is stored as well")
    assert data["bytes"] - data["formula_bytes"] == 4 * 64 * 32


def test_safetensors_de_duplicated_tied_tensors_reconcile(tmp_path):
    cls, config = CONFIGS["gpt2"]
    config.dtype, config.architectures = "float32", [cls.__name__]
    config.save_pretrained(tmp_path)
    torch.manual_seed(0)
    module = cls(config)
    safetensors.torch.save_model(module, str(tmp_path / "model.safetensors"))
    code, lines, data = audited(tmp_path)
    assert code == 0 and data["formula_parameters"] == module.num_parameters()


def test_an_index_that_names_a_tensor_no_shard_holds(tmp_path):
    write(tmp_path, "t5", shards=2)
    index = json.loads((tmp_path / "model.safetensors.index.json").read_text())
    index["weight_map"]["encoder.ghost.weight"] = "model-00001-of-00002.safetensors"
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    code, lines, _ = audited(tmp_path)
    assert code == 2 and lines == ["index: 1 tensor (encoder.ghost.weight is in no shard (the index says "
                                   "model-00001-of-00002.safetensors))"]


def test_a_buffer_transformers_saves_is_noted_not_counted(tmp_path):
    count = write(tmp_path, "bart")
    code, lines, data = audited(tmp_path)
    assert code == 0 and lines[0].startswith("note: 1 buffer (final_logits_bias) stored beside the parameters")
    assert data["parameters"] == count and data["tensors"] == len(meta_tensors("bart")[0])


def test_bytes_that_are_not_the_shape_in_the_dtype(tmp_path):
    """A header whose offsets give a tensor more bytes than its shape holds (written by hand: no library
    writes one)."""
    write(tmp_path, "llama")
    file = tmp_path / "model.safetensors"
    raw = file.read_bytes()
    length = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + length])
    entry = header["model.norm.weight"]
    entry["shape"] = [16]  # 32 floats stored, 16 declared
    text = json.dumps(header).encode()
    file.write_bytes(len(text).to_bytes(8, "little") + text + raw[8 + length:])
    code, lines, _ = audited(tmp_path)
    assert code == 2 and "bytes: 1 tensor (model.norm.weight: 128 bytes where [16] of F32 is 64)" in lines


def test_the_guides_checkpoints_are_what_their_generator_writes(tmp_path):
    tiny_checkpoint.write(tmp_path)
    for file in ("config.json", "model.safetensors", "damaged.safetensors"):
        assert (tmp_path / file).read_bytes() == (tiny_checkpoint.FOLDER / file).read_bytes(), file


def test_the_guides_example_of_a_damaged_checkpoint_is_what_the_program_prints():
    """docs/audit.md shows it in a text block (the console examples must exit 0): lacking lm_head.weight, its norm
    in float32, as the generator wrote it."""
    guide = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    block = re.search(r"`symparams (audit tests/\S+)`.*?prints\n\n```text\n(.*?)```", guide, re.S)
    code, out, err = command(*block.group(1).split(), cwd=ROOT)
    assert code == 2 and err == "" and out == block.group(2)
    assert out.splitlines()[0] == "missing: 1 tensor (lm_head.weight)"
