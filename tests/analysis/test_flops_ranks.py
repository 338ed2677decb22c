"""Per-rank FLOPs of a parallel layout against PyTorch's FlopCounterMode on tiny real models, split by hand.

The counter's forward FLOPs per module (each module's own: its total less
its children's) are placed as Megatron places the module: a layer's modules
on its pipeline stage, the embeddings on the first, the final norm and head
on the last; a column- or row-parallel linear layer's products divided by T,
attention's score and weighted-sum products (the attention module's own) by
T (each rank runs A/T heads), the LM head's by its rows ⌈V/T⌉ of V; every
product by C under context parallelism (each rank's s/C tokens; its s/C
queries against all s keys).
"""

import functools
from fractions import Fraction

import pytest

from symparams import SymparamsError, model
from symparams.families import deepseek_v3, gpt2, llama
from tests.reference import flops as ref
from tests.reference.decoders import gpt2_config, llama_config
from tests.reference.moe import deepseek_config

pytestmark = pytest.mark.crosscheck

SEQ, BATCH = 8, 2
SPLIT = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "c_attn", "c_proj", "c_fc",
         "self_attn", "attn"}
CASES = {
    "llama-gqa": (model("llama", head="causal-lm", V=1001, H=64, L=4, A=8, G=4, F=96, gqa=True),
                  lambda m: ref.real(llama.CLASSES[m.head][0], llama_config(m))),
    "gpt2-tied": (model("gpt2", head="causal-lm", V=1001, P=32, H=64, L=4, A=4, r=4),
                  lambda m: ref.real(gpt2.CLASSES[m.head], gpt2_config(m))),
    # a dense layer, then three of a mixture of experts (eager experts: each token's top-k, whatever the routing)
    "deepseek-v2": (model("deepseek_v2", head="causal-lm", V=1001, H=64, L=4, A=4, F=96, N_e=4, k_e=2, F_e=32,
                          N_s=1, L_f=1, R_kv=16, D_n=8, D_r=4, D_v=8, q_lora=False),
                    lambda m: ref.real(deepseek_v3.CLASSES_V2[m.head][0], deepseek_config(m))),
}


@functools.cache
def own_forward_flops(case: str, vocab: int) -> dict[str, int]:
    """Each module's own forward FLOPs (its children's taken out), by its path in ``named_modules()``."""
    from torch.utils.flop_counter import FlopCounterMode

    m, build = CASES[case]
    with FlopCounterMode(display=False) as counter:
        build(m)(input_ids=ref.token_ids(vocab, SEQ, BATCH))
    totals = {name.partition(".")[2]: sum(ops.values()) for name, ops in counter.get_flop_counts().items()
              if name != "Global"}  # a ModuleList is never called, so it has no entry: a layer's parent is the model
    own = dict(totals)
    for name, total in totals.items():
        parents = [p for p in totals if name.startswith(p + ".") or (p == "" and name)]
        if parents:
            own[max(parents, key=len)] -= total
    return own


def by_hand(case: str, t: int, p: int, c: int) -> list[Fraction]:
    m = CASES[case][0]
    values = {str(symbol): int(v) for symbol, v in m.values.items() if v.is_Integer}
    vocab, layers = values["V"], values["L"]
    stages = [Fraction(0)] * p
    for name, flops in own_forward_flops(case, vocab).items():
        parts = name.split(".")
        stack = next((s for s in ("layers", "h") if s in parts), None)
        stage = int(parts[parts.index(stack) + 1]) // (layers // p) if stack else (0 if "wte" in parts or
                                                                                  "embed_tokens" in parts else p - 1)
        share = Fraction(1, t) if parts[-1] in SPLIT else Fraction(-(-vocab // t), vocab) if parts[-1] == "lm_head" \
            else Fraction(1)
        stages[stage] += flops * share / c
    return stages


@pytest.mark.parametrize("t, p, c", [(2, 1, 1), (1, 2, 1), (2, 2, 1), (4, 4, 2), (2, 2, 4)])
@pytest.mark.parametrize("case", ["llama-gqa", "gpt2-tied"])
def test_each_stage_runs_the_counters_products_split_as_megatron_splits_them(case, t, p, c):
    m = CASES[case][0]
    per_rank = m.flops(SEQ, BATCH, tensor_parallel=t, pipeline_parallel=p, context_parallel=c).per_rank
    assert [s.forward for s in per_rank.stages] == by_hand(case, t, p, c)
    assert all(s.training == 3 * s.forward for s in per_rank.stages)


@pytest.mark.parametrize("p, c", [(2, 1), (4, 1), (2, 2)])
def test_the_pipeline_runs_dense_and_expert_layers_in_their_order(p, c):
    m = CASES["deepseek-v2"][0]
    per_rank = m.flops(SEQ, BATCH, pipeline_parallel=p, context_parallel=c).per_rank
    assert [s.forward for s in per_rank.stages] == by_hand("deepseek-v2", 1, p, c)


def test_expert_parallelism_leaves_each_ranks_flops_as_its_own_tokens_need():
    m = model("mixtral", head="causal-lm", V=1000, H=64, L=4, A=8, G=4, N_e=4, k_e=2, F_e=48)
    plain = m.flops(SEQ, BATCH, tensor_parallel=2).per_rank
    assert m.flops(SEQ, BATCH, tensor_parallel=2, expert_parallel=4).per_rank.forward == plain.forward


@pytest.mark.parametrize("options, needle", [(dict(context_parallel=3), "sequence length s = 8"),
                                             (dict(context_parallel=2, causal=True), "--causal"),
                                             (dict(tensor_parallel=2, elementwise=True), "--elementwise"),
                                             (dict(tensor_parallel=3), "heads A = 8")])
def test_a_layout_the_flops_cannot_split_is_refused(options, needle):
    with pytest.raises(SymparamsError, match=needle):
        CASES["llama-gqa"][0].flops(SEQ, BATCH, **options).per_rank.forward


def test_traced_flops_have_no_modules_to_place_and_are_refused():
    m = model({"model_type": "arcee", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
               "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100}, head="causal-lm")
    with pytest.raises(SymparamsError, match="hand-written families"):
        m.flops(SEQ, pipeline_parallel=2).per_rank
