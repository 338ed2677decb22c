"""Per-rank parameters of a parallel layout against transformers models split by hand.

Each tiny model is built on the meta device and its ``named_parameters()``
are split here, by name, the way Megatron-LM's layers split them:
``ColumnParallelLinear`` (query, key, value, gate, up; GPT-2's ``c_attn`` and
``c_fc``) divides the output features, weight and bias; ``RowParallelLinear``
(the attention output, down; GPT-2's ``c_proj``) divides the input features
and keeps its bias whole; ``VocabParallelEmbedding`` and the output layer
divide the vocabulary's rows (padded to a multiple of 128·T with
``--make-vocab-size-divisible-by 128``, else the first rank holding
⌈V/T⌉); everything else is whole on every rank.  Pipeline stage ``i`` holds
layers ``i·L/P`` to ``(i+1)·L/P − 1`` (the interleaved schedule: chunk ``c`` of
stage ``i`` holds layers ``(c·P + i)·L/(P·V)`` on), the first the embeddings,
the last the final norm, the head and, for a tied head, a copy of the word
embedding.  Expert parallelism divides the fused expert tensors' first
dimension (the experts).
"""

import math

import pytest
import transformers

from symparams import model
from symparams.analysis.parallel import Layout, Split
from tests.reference import decoders, moe, more_families
from tests.reference.hf import build

pytestmark = pytest.mark.crosscheck

COLUMN = {"q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "c_attn", "c_fc", "gate_up_proj", "query", "key",
          "value", "intermediate.dense"}
ROW = {"o_proj", "down_proj", "c_proj", "output.dense"}
VOCAB = {"embed_tokens", "wte", "lm_head", "word_embeddings", "predictions.bias"}
FIRST = {"embed_tokens", "wte", "wpe", "embeddings"}

ARCEE = {"model_type": "arcee", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 8,
         "num_key_value_heads": 4, "intermediate_size": 96, "vocab_size": 1001}
CASES = {
    "llama-gqa": model("llama", head="causal-lm", V=1000, H=64, L=4, A=8, G=4, F=96, gqa=True),
    "gpt2-tied": model("gpt2", head="causal-lm", V=1001, P=32, H=64, L=4, A=4, r=4),
    "mixtral": model("mixtral", head="causal-lm", V=1000, H=64, L=4, A=8, G=4, N_e=4, k_e=2, F_e=48),
    "arcee-inferred": model(ARCEE, head="causal-lm"),
    "bert-masked-lm": model("bert", head="masked-lm", V=1001, P=16, S=2, H=64, L=4, A=8, r=2),
    # one dense layer, then three of a mixture of experts: the pipeline splits the four in order
    "deepseek-v2": model("deepseek_v2", head="causal-lm", V=1000, H=64, L=4, A=4, F=96, N_e=4, k_e=2, F_e=32,
                         N_s=1, L_f=1, R_kv=16, D_n=8, D_r=4, D_v=8, q_lora=False),  # an inferred type: its tree from the inferred formulas
}


def module_of(m):
    if m is CASES["arcee-inferred"]:
        return build("ArceeForCausalLM", transformers.ArceeConfig(**{k: v for k, v in ARCEE.items()
                                                                    if k != "model_type"}))
    if m.family.name in ("mixtral", "deepseek_v2"):
        return moe.reference(m)[0]
    if m.family.name == "bert":
        return more_families.reference(more_families.encoder_config(m, "bert"), m.head)[0]
    return decoders.reference(m)[0]


def vocab_rows(vocab: int, t: int, pad: bool) -> int:
    if pad:
        vocab = -(-vocab // (128 * t)) * 128 * t
    return -(-vocab // t)


def rank_elements(module, name: str, shape: tuple, layout: Layout) -> int:
    """One tensor-parallel (and expert-parallel) rank's elements of parameter ``name``, the first rank's."""
    t, parts = layout.tensor, name.split(".")
    owner, kind = parts[-2], parts[-1]
    dims = list(shape)
    if ".".join(parts[-2:]) in VOCAB:  # BERT's output bias over the vocabulary
        return vocab_rows(dims[0], t, layout.pad_vocabulary)
    if owner == "dense":  # BERT names its layers by the module holding them
        owner = ".".join(parts[-3:-1])
    if owner == "experts":  # [N_e, out, in]: E divides the experts, T the output or the input features
        dims[0] //= layout.expert
        owner = kind
        kind = "weight"
        if owner in COLUMN:
            dims[1] //= t
        else:
            dims[2] //= t
        return math.prod(dims)
    conv1d = isinstance(module.get_submodule(".".join(parts[:-1])), transformers.pytorch_utils.Conv1D)
    out_dim, in_dim = (1, 0) if conv1d else (0, 1)
    if owner in VOCAB:
        return vocab_rows(dims[0], t, layout.pad_vocabulary) * dims[1]
    if owner in COLUMN:
        dims[out_dim if kind == "weight" else 0] //= t
    elif owner in ROW and kind == "weight":
        dims[in_dim] //= t
    return math.prod(dims)


def stage_of(name: str, layers: int, layout: Layout) -> int:
    parts = name.split(".")
    for stack in ("layers", "h", "layer"):
        if stack in parts:
            index = int(parts[parts.index(stack) + 1])
            chunk = layers // (layout.pipeline * layout.virtual)
            return (index // chunk) % layout.pipeline
    return 0 if FIRST & set(parts) else layout.pipeline - 1


def by_hand(m, layout: Layout) -> list[int]:
    module = module_of(m)
    config = module.config
    stages = [0] * layout.pipeline
    for name, p in module.named_parameters():
        stages[stage_of(name, config.num_hidden_layers, layout)] += rank_elements(module, name, tuple(p.shape), layout)
    if config.tie_word_embeddings and layout.pipeline > 1:  # Megatron's copy of the word embedding
        stages[-1] += vocab_rows(config.vocab_size, layout.tensor, layout.pad_vocabulary) * config.hidden_size
    return stages


LAYOUTS = {
    "T2": Layout(tensor=2),
    "T1-padded": Layout(pad_vocabulary=True),
    "P2": Layout(pipeline=2),
    "T2P2-padded": Layout(tensor=2, pipeline=2, pad_vocabulary=True),
    "T4P4": Layout(tensor=4, pipeline=4),
    "T2P2V2": Layout(tensor=2, pipeline=2, virtual=2),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("case", ["llama-gqa", "gpt2-tied", "arcee-inferred", "bert-masked-lm"])
def test_each_stage_holds_the_real_tensors_split_as_megatron_splits_them(case, layout):
    m, lay = CASES[case], LAYOUTS[layout]
    assert [s.parameters for s in Split(m, lay).stages] == by_hand(m, lay)


@pytest.mark.parametrize("lay", [Layout(tensor=2, expert=2, data=2), Layout(expert=4, pipeline=2, data=4),
                                 Layout(tensor=4, expert=2, data=2, pipeline=2, pad_vocabulary=True)])
def test_expert_parallel_ranks_hold_their_share_of_the_experts(lay):
    m = CASES["mixtral"]
    assert [s.parameters for s in Split(m, lay).stages] == by_hand(m, lay)


@pytest.mark.parametrize("lay", [Layout(pipeline=2), Layout(pipeline=2, virtual=2), Layout(pipeline=4),
                                 Layout(pipeline=2, expert=2, data=2, pad_vocabulary=True)])
def test_the_pipeline_splits_dense_and_expert_layers_in_their_order(lay):
    m = CASES["deepseek-v2"]
    assert [s.parameters for s in Split(m, lay).stages] == by_hand(m, lay)


def test_the_split_adds_up_to_the_model_when_nothing_is_padded_or_tied():
    """T ranks of each of P stages hold every parameter once, the replicated ones T times."""
    m = CASES["llama-gqa"]
    norms = (2 * 4 + 1) * 64  # two norms a layer and the final one, on every rank
    stages = Split(m, Layout(tensor=2, pipeline=2)).stages
    assert 2 * sum(s.parameters for s in stages) - norms == m.count
