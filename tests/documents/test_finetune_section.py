"""The documents' fine-tuning section: LoRA r = 16 on all-linear (on a mixture of experts, its router and experts as
PEFT wraps them under transformers 5), on a bf16 and on an NF4 base.

The adapter's count and the total are checked against PEFT's ``get_nb_trainable_parameters()`` for the
transformers model built on the meta device with the section's own setting; the LoRA column against PEFT's
counts times the bytes PEFT keeps them in (the base frozen in bf16, the adapter in fp32, AdamW's two fp32
moments); the QLoRA column only against the ``memory --dtype nf4 --lora`` command, as a consistency check (its
bytes are checked against bitsandbytes' layout in tests/analysis/test_fourbit.py).
"""

import json
from fractions import Fraction

import pytest
import torch
import transformers

from symparams import model
from symparams.core.formatting import thousands
from symparams.documents.derivation import derive
from symparams.documents.finetune_view import finetune_view
from symparams.documents.render import render
from symparams.families.inferred import model as inferred
from tests.documents.test_head_count_section import section
from tests.reference import FIXTURES
from tests.reference.in_process import command_here
from tests.reference.documents import document
from tests.reference.hf import lora_wrapped

pytestmark = pytest.mark.crosscheck

AUTO = {None: transformers.AutoModel, "causal-lm": transformers.AutoModelForCausalLM}

# preset, its checkpoint's config.json, the transformers class a fine-tuning run loads, PEFT's targets
CASES = [
    # an encoder as it is (BertModel: no output layer, so all-linear is every linear layer, the pooler's too)
    ("bert-base", "bert-base-uncased", None, "all-linear"),
    # grouped-query attention, a gated MLP, an untied LM head that all-linear leaves out
    ("llama-3-8b", "meta-llama/Meta-Llama-3-8B", "causal-lm", "all-linear"),
    # GPT-2's Conv1D layers, c_attn one fused module; its LM head tied to wte, left out by all-linear
    ("gpt2", "gpt2", "causal-lm", "all-linear"),
    # a mixture of experts: PEFT's all-linear also takes the router and the 3-D expert tensors
    ("mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1", "causal-lm", "all-linear"),
    # a mixture whose names PEFT does not convert: the shared expert's linear layers, not the router nor the experts
    ("qwen1.5-moe-a2.7b", "Qwen/Qwen1.5-MoE-A2.7B", "causal-lm", "all-linear"),
]


def peft_counts(checkpoint: str, head, targets) -> tuple[int, int]:
    """(trainable, all) as PEFT counts them for ``get_peft_model(model, LoraConfig(r=16, target_modules=targets))``."""
    config = transformers.AutoConfig.from_pretrained(FIXTURES / checkpoint)
    with torch.device("meta"):
        module = AUTO[head].from_config(config)
    return lora_wrapped(module, r=16, target_modules=targets).get_nb_trainable_parameters()


@pytest.fixture(scope="session", params=CASES, ids=lambda case: case[0])
def case(request):
    preset, checkpoint, head, targets = request.param
    return preset, head, targets, peft_counts(checkpoint, head, targets)


def test_adapter_and_total_are_peft_counts(case):
    preset, head, targets, (trainable, total) = case
    v = derive(model(preset)).finetune
    assert (v.head, v.targets) == (head, None if targets == "all-linear" else tuple(targets))
    assert (v.adapter, v.total) == (trainable, total)
    assert v.share == Fraction(trainable, total)
    text = section(document(preset, "md", "en"), 9)
    assert f"that is {thousands(trainable)} trainable parameters" in text
    assert f"{thousands(total)} that PEFT's `get_nb_trainable_parameters()` counts in all" in text


def test_lora_column_is_peft_counts_in_the_bytes_peft_keeps_them_in(case):
    """The frozen base in bf16 (2 bytes), the adapter in fp32 (4), its gradients in fp32 (4), AdamW's two fp32
    moments (8)."""
    preset, _, _, (trainable, total) = case
    lora = derive(model(preset)).finetune.lora
    assert lora == {"base_weights": 2 * (total - trainable), "adapter_weights": 4 * trainable,
                    "gradients": 4 * trainable, "optimizer": 8 * trainable,
                    "total": 2 * (total - trainable) + 16 * trainable,
                    "serving": 2 * (total - trainable) + 4 * trainable}


@pytest.mark.parametrize("preset", ["llama-3-8b", "mixtral-8x7b"])
def test_columns_are_the_memory_commands_figures(preset):
    """A consistency check: each column is what ``memory --lora 16`` prints with the section's options."""
    v = finetune_view(model(preset))
    options = [preset, "--head", v.head, "--lora", "16", "--lora-targets", ",".join(v.targets or ["all-linear"]),
               "--json"]
    for dtype, column in (("bf16", v.lora), ("nf4", v.qlora)):
        code, out, err = command_here("memory", *options, "--dtype", dtype)
        assert code == 0, err
        printed = json.loads(out)
        assert (column["total"], column["gradients"], column["optimizer"]) == \
            (printed["total"], printed["gradients"], printed["optimizer"])
        assert column["base_weights"] + column["adapter_weights"] == printed["weights"]


def test_sentences_follow_the_model():
    """A mixture of experts says how PEFT wraps its experts (or why it leaves them out) and that they stay in bf16;
    an encoder without an output
    layer says all-linear leaves none out, a tied LM head is an output layer all the same; T5, which transformers keeps partly in fp32 beside a 4-bit model, gives
    the memory command's refusal for QLoRA and no QLoRA column."""
    mixtral = section(document("mixtral-8x7b", "md", "en"), 9)
    assert "`lora.ParamWrapper`" in mixtral and "every module and parameter PEFT's `all-linear` wraps" in mixtral
    assert "The routed experts and their router stay in bf16 too" in mixtral
    assert "over the 224 modules and parameters" in mixtral.lower()
    # PEFT 0.22 converts Qwen2-MoE's names as well, and wraps the shared expert's gate_proj beside the experts
    qwen = section(document("qwen1.5-moe-a2.7b", "md", "zh"), 9)
    assert "ParamWrapper" in qwen and "PEFT 0.22 也把那些线性层各按线性层包装" in qwen
    llama = section(document("llama-3-8b", "md", "zh"), 9)
    assert "微调与推理部署" in llama and "路由专家" not in llama and "输出层除外" in llama
    bert = section(document("bert-base", "md", "en"), 9)
    assert "this model has none" in bert and "the output layer (transformers'" not in bert
    # OLMo-1B as an inferred type: its LM head is tied, listed only under the token table, but it is an output
    # layer all the same (all-linear leaves it out, bitsandbytes keeps it)
    olmo = inferred(json.loads((FIXTURES / "allenai" / "OLMo-1B-hf.json").read_text()), source="OLMo-1B-hf")
    olmo_text = section(render(olmo, format="md", lang="en"), 9)
    assert "but the output layer (PEFT's `all-linear`)" in olmo_text and "the output layer (transformers'" in olmo_text
    t5 = section(document("t5-small", "md", "en"), 9)
    assert "QLoRA is not worked out for t5-small" in t5 and "_keep_in_fp32_modules" in t5
    assert "QLoRA (NF4 base) |" not in t5


@pytest.mark.parametrize("name", ["mixtral-8x7b", "deepseek-v3"])
def test_the_chinese_setting_names_the_model_then_the_modules_wrapped_on_it(name):
    # "在带 causal-lm 头的 X（即发布的模型）的PEFT 的 all-linear 在混合专家模型上包装的…上" nested two 的-phrases
    lead = section(document(name, "md", "zh"), 9)
    assert "（即发布的模型）的所有模块和参数（PEFT 的 `all-linear` 在混合专家模型上包装的那些，不含输出层）上" in lead
    assert "的PEFT" not in lead


def test_a_model_whose_adapter_is_refused_gives_the_refusal():
    """OpenAI GPT as an inferred type: its Conv1D layers are not known as linear, so all-linear is refused, and
    the section says so rather than count fewer modules than PEFT wraps."""
    config = {"model_type": "openai-gpt", "n_embd": 32, "n_layer": 2, "n_head": 4, "vocab_size": 50,
              "n_positions": 16}
    m = model(config)
    v = finetune_view(m)
    assert v.refusal and "Conv1D" in v.refusal and v.lora == {}
    text = section(render(m, format="md", lang="en"), 9)
    assert "is not worked out for" in text and "Conv1D" in text and "|" not in text  # no table of bytes
    assert "Conv1D" in m.derive("html", "zh") and "Conv1D" in render(m, format="tex", lang="zh")


def test_latex_and_html_carry_the_section():
    m = model("qwen1.5-moe-a2.7b")
    v = finetune_view(m)
    tex, page = render(m, format="tex", lang="zh"), m.derive("html", "en")
    for figure in (v.adapter, v.lora["total"], v.qlora["total"]):
        assert thousands(figure) in tex and thousands(figure) in page
    assert "微调与推理部署" in tex and '<section id="finetune">' in page
    assert "do not follow the values" in page
