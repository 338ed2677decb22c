"""``memory --dtype FORMAT --group-size G --keep PARTS``: the command line passes a quantized checkpoint's
settings to the library and shows what it answers."""

import json

from symparams import model
from symparams.analysis.dtypes import FORMATS
from symparams.cli.parser import DTYPES
from tests.reference.cli_runner import command

LLAMA = ("memory", "llama-2-7b", "--head", "causal-lm", "--optimizer", "none")


def test_the_dtypes_the_parser_offers_are_the_librarys():
    assert DTYPES == ("fp32", "bf16", "fp16", "int8", "int4", *FORMATS)


def test_group_size_and_keep_reach_the_library():
    code, out, err = command(*LLAMA, "--dtype", "gptq", "--group-size", "32", "--keep", "none", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    m = model("llama-2-7b", head="causal-lm")
    asked = m.memory("gptq", optimizer="none", group_size=32, keep="none")
    assert data["weights"] == asked.weights != m.memory("gptq", optimizer="none").weights
    assert data["quantization"]["group_size"] == 32
    assert data["quantization"]["keep"] == ["embeddings", "tables"]  # GPTQ never packs a table: the LM head is
    assert data["quantization"]["by_storage"]["gptq"] > m.memory("gptq", optimizer="none").to_dict()[
        "quantization"]["by_storage"]["gptq"]


def test_fit_takes_a_quantized_checkpoint():
    code, out, err = command(*LLAMA, "--dtype", "q4_k", "--keep", "output", "--fit", "8GB", "--json")
    assert code == 0 and err == ""
    fitted = json.loads(out)["memory"]
    m = model("llama-2-7b", head="causal-lm")
    assert fitted["weights"] == m.memory("q4_k", optimizer="none", keep="output").weights
    assert fitted["total"] <= 8 * 10**9 < m.memory("q4_k", optimizer="none", keep="output",
                                                  seq=fitted["seq"] + 1).total


def test_a_fallback_is_named_in_the_conventions():
    # Qwen2.5-0.5B's rows of 896 are not whole 256-weight blocks: q4_k keeps them in q5_0, as llama-quantize does
    code, out, err = command("memory", "qwen2.5-0.5b", "--dtype", "q4_k", "--optimizer", "none")
    assert code == 0 and err == ""
    assert "fall back (llama-quantize) to q5_0: embed_tokens.weight" in out


def test_qlora_settings_reach_the_library():
    # Llama-3-8B's base in nf4 with fp32 absmax: 6,027,761,664 bytes (tests/analysis/test_fourbit.py works it out)
    code, out, err = command("memory", "llama-3-8b", "--head", "causal-lm", "--dtype", "nf4", "--no-double-quant",
                             "--lora", "16", "--lora-targets", "q_proj,v_proj", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    adapter = 32 * 16 * (8192 + 5120)  # q_proj and v_proj of 32 layers at r = 16
    assert (data["weights"], data["gradients"], data["optimizer"]) == (6_027_761_664 + 4 * adapter, 4 * adapter,
                                                                       8 * adapter)
    assert data["quantization"]["double_quant"] is False and data["lora"]["r"] == 16


def test_prepare_kbit_reaches_the_library():
    # Llama-3-8B in nf4: 5,702,540,160 bytes, of which 1,050,939,392 tables and norms in bf16; fp32 doubles those
    code, out, err = command("memory", "llama-3-8b", "--head", "causal-lm", "--dtype", "nf4", "--prepare-kbit",
                             "--optimizer", "none", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["weights"] == 5_702_540_160 + 2 * 1_050_939_392 and data["quantization"]["prepare_kbit"] is True
