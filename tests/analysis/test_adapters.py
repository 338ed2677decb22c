"""LoRA adapters against PEFT: ``get_peft_model`` on the transformers model built on the meta device, its
``get_nb_trainable_parameters()`` the oracle for the trainable count and the total."""

import pytest
import torch
import transformers

from symparams import SymparamsError, model
from symparams.families.lookup import from_config
from tests.reference import FIXTURES
from tests.reference.decoders import untie
from tests.reference.hf import lora_wrapped

pytestmark = pytest.mark.crosscheck

AUTO = {None: transformers.AutoModel, "causal-lm": transformers.AutoModelForCausalLM,
        "masked-lm": transformers.AutoModelForMaskedLM, "seq2seq-lm": transformers.AutoModelForSeq2SeqLM}


def built(config, head=None):
    """The transformers model of ``config`` (a fixture's folder or a config dict) with ``head``, on the meta
    device."""
    if not isinstance(config, dict):
        config = transformers.AutoConfig.from_pretrained(FIXTURES / config)
    else:
        config = transformers.AutoConfig.for_model(**config)
    with torch.device("meta"):
        return AUTO[head].from_config(config)


def peft_counts(module, r, targets, **options) -> tuple[int, int]:
    """(trainable, total) as PEFT counts them, the targets a list or "all-linear"."""
    wrapped = lora_wrapped(module, r=r, target_modules=targets, **options)
    return wrapped.get_nb_trainable_parameters()


def ours(config, head=None):
    return from_config(str(FIXTURES / config / "config.json"), head=head) if not isinstance(config, dict) \
        else model(config, head=head)


CASES = [
    # GQA: k and v narrower than q
    ("meta-llama/Meta-Llama-3-8B", None, 16, ["q_proj", "v_proj"], {}),
    ("mistralai/Mistral-7B-v0.1", "causal-lm", 8, ["k_proj", "v_proj", "o_proj"], {}),
    # q, k, v with biases; all-linear leaves lm_head out
    ("Qwen/Qwen2.5-0.5B", "causal-lm", 4, "all-linear", {}),
    ("Qwen/Qwen2.5-0.5B", None, 4, ["q_proj", "k_proj"], {"bias": "lora_only"}),
    ("Qwen/Qwen2.5-0.5B", None, 4, ["o_proj", "q_proj"], {"bias": "all"}),
    # Conv1D, c_attn fused from Q, K and V; DoRA's magnitudes
    ("gpt2", None, 8, ["c_attn"], {}),
    ("gpt2", "causal-lm", 8, "all-linear", {"use_dora": True}),
    # BERT's dense is four modules; the masked-lm decoder is the output layer all-linear leaves out
    ("bert-base-uncased", None, 8, ["dense"], {}),
    ("bert-base-uncased", "masked-lm", 2, "all-linear", {}),
    ("bert-base-uncased", None, 4, ["word_embeddings", "query"], {"use_dora": True}),
    # T5: encoder and decoder, self- and cross-attention
    ("t5-small", None, 8, ["q", "v"], {}),
    ("google/flan-t5-base", "seq2seq-lm", 4, "all-linear", {}),
    # a mixture of experts: attention only
    ("mistralai/Mixtral-8x7B-v0.1", None, 16, ["q_proj", "v_proj"], {}),
    ("Qwen/Qwen1.5-MoE-A2.7B", None, 8, ["q_proj", "k_proj", "v_proj", "o_proj"], {}),
    # an inferred type (no family): GPT-Neo
    ("EleutherAI/gpt-neo-125M", "causal-lm", 8, "all-linear", {}),
    # inferred types whose output layer all-linear leaves out is found by the vocabulary: CamemBERT's table is
    # listed only under the tied decoder, CPM-Ant's table has V + prompt rows
    ({"model_type": "camembert", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 100, "is_decoder": True}, "causal-lm", 2, "all-linear", {}),
    ({"model_type": "cpmant", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "dim_head": 8,
      "dim_ff": 48, "vocab_size": 100, "prompt_types": 4, "prompt_length": 8, "segment_types": 4}, "causal-lm", 2,
     "all-linear", {}),
    ({"model_type": "olmo", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
      "num_attention_heads": 4, "vocab_size": 100}, None, 4, ["q_proj", "down_proj", "embed_tokens"],
     {"use_dora": True}),
]


@pytest.mark.parametrize("config, head, r, targets, options", CASES,
                         ids=lambda v: v if isinstance(v, str) else v["model_type"] if isinstance(v, dict) and
                         "model_type" in v else None)
def test_lora_matches_peft(config, head, r, targets, options):
    m = ours(config, head)
    adapter = m.lora(r, targets, dora=options.get("use_dora", False), bias=options.get("bias", "none"))
    module = built(config, head)
    if m.family.name == "t5" and head and not m.switches["tie"]:
        untie(module)  # a Flan-T5 checkpoint holds its own lm_head, as from_pretrained keeps it
    assert (adapter.trainable, adapter.total) == peft_counts(module, r, targets, **options)


def test_lora_of_a_preset_at_full_size_matches_peft():
    """llama-3-8b, r = 16 on q_proj and v_proj: the figure peft gives for the model built from the preset's own
    config.json (LlamaForCausalLM, lm_head untied)."""
    adapter = model("llama-3-8b", head="causal-lm").lora(16, ["q_proj", "v_proj"])
    assert (adapter.trainable, adapter.total) == peft_counts(built("meta-llama/Meta-Llama-3-8B", "causal-lm"), 16,
                                                             ["q_proj", "v_proj"]) == (6815744, 8037076992)


def test_lora_on_a_tied_output_layer_matches_peft():
    """GPT-2's lm_head shares wte's weight and adds no parameter, but it is a module LoRA wraps: r·(H + V)."""
    adapter = model("gpt2", head="causal-lm").lora(4, ["lm_head", "wte"])
    assert (adapter.trainable, adapter.total) == peft_counts(built("gpt2", "causal-lm"), 4, ["lm_head", "wte"])


def test_lora_on_mla_and_two_layer_stacks_matches_peft():
    """DeepSeek-V2-Lite: its first layer dense, the others experts; the same attention modules in both."""
    targets = ["q_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"]
    adapter = ours("deepseek-ai/DeepSeek-V2-Lite").lora(8, targets)
    assert (adapter.trainable, adapter.total) == peft_counts(built("deepseek-ai/DeepSeek-V2-Lite"), 8, targets)


@pytest.mark.parametrize("targets", [["q_proj", "v_proj"], "all-linear"], ids=str)
def test_lora_formula_in_symbols_matches_peft_at_other_sizes(targets):
    """The formula, in the family's symbols and R, evaluated at sizes no preset has."""
    sizes = dict(V=50, H=48, L=3, A=6, G=2, F=80)
    formula = model("llama").lora(5, targets).formula
    config = {"model_type": "llama", "vocab_size": 50, "hidden_size": 48, "num_hidden_layers": 3,
              "num_attention_heads": 6, "num_key_value_heads": 2, "intermediate_size": 80}
    trainable, _ = peft_counts(built(config), 5, targets)
    from symparams.core.symbols import SYMBOLS
    assert formula.xreplace({SYMBOLS[k].symbol: v for k, v in {**sizes, "R": 5}.items()}) == trainable


def test_lora_formula_of_q_and_v_is_the_count_by_hand():
    """q: R·(H + H), v: R·(H + G·H/A), in each of L layers."""
    from symparams.core.symbols import A, G, H, L, R
    formula = model("llama").lora(16, ["q_proj", "v_proj"]).formula
    assert (formula - L * (R * (H + H) + R * (H + G * H / A))).expand() == 0


@pytest.mark.parametrize("config, targets, why", [
    ("meta-llama/Llama-2-7b-hf", ["qproj"], "names no module"),
    ("meta-llama/Llama-2-7b-hf", ["input_layernorm"], "does not know"),
    ("meta-llama/Llama-2-7b-hf", ["self_attn"], "does not know"),
], ids=lambda v: v if isinstance(v, str) else "-".join(v) if isinstance(v, list) else None)
def test_lora_refuses_what_peft_refuses(config, targets, why):
    with pytest.raises(ValueError):
        peft_counts(built(config), 4, targets)
    with pytest.raises(SymparamsError, match=why):
        ours(config).lora(4, targets)


def test_lora_refuses_mamba_out_proj_as_peft_does():
    config = {"model_type": "mamba", "hidden_size": 32, "num_hidden_layers": 2, "vocab_size": 50}
    with pytest.raises(ValueError, match="incompatible"):
        peft_counts(built(config), 4, ["out_proj"])
    with pytest.raises(SymparamsError, match="Mamba"):
        model(config).lora(4, ["out_proj"])
    assert model(config).lora(4, ["in_proj"]).trainable == peft_counts(built(config), 4, ["in_proj"])[0]


def test_lora_refuses_all_linear_where_a_conv1d_is_not_known_as_linear():
    """An inferred type's data records nn.Linear, not Conv1D: OpenAI GPT's Conv1D layers would be left out."""
    config = {"model_type": "openai-gpt", "n_embd": 32, "n_layer": 2, "n_head": 4, "vocab_size": 50,
              "n_positions": 16}
    trainable, _ = peft_counts(built(config), 4, "all-linear")
    assert trainable > 0  # PEFT takes the Conv1D layers
    with pytest.raises(SymparamsError, match="Conv1D"):
        model(config).lora(4, "all-linear")


def test_lora_active_count_adds_the_adapter_a_token_passes_through():
    """Mixtral's attention adapter is used by every token: the active count grows by the whole adapter."""
    m = ours("mistralai/Mixtral-8x7B-v0.1")
    adapter = m.lora(16, ["q_proj", "v_proj"])
    assert adapter.active - m.active == adapter.trainable == peft_counts(built("mistralai/Mixtral-8x7B-v0.1"), 16,
                                                                         ["q_proj", "v_proj"])[0]


def test_lora_refuses_a_block_tied_across_layers():
    """Zamba2's shared transformer block: its weights listed once, but PEFT wraps each layer's copy of q_proj."""
    config = {"model_type": "zamba2"}
    wrapped = lora_wrapped(built(config), r=2, target_modules=["q_proj"])
    copies = [name for name, _ in wrapped.named_parameters() if name.endswith("q_proj.lora_A.default.weight")]
    assert len(copies) > 1 == sum(path.endswith("q_proj.weight") for path in model(config).reference_counts())
    with pytest.raises(SymparamsError, match="ties"):
        model(config).lora(2, ["q_proj"])
