"""FLOPs and memory of every preset in one process, beside PyTorch's FlopCounterMode tracing tiny models.

symparams reads the FLOPs (forward and training), the memory for Adam
training and the KV cache of every preset off its Block tree, at full size.
Side by side, in the same process, FlopCounterMode traces a tiny real model of
a few families (random weights, CPU, a forward and a backward pass), which is
what a tracing tool has to do; the tiny models' counts are checked equal to
symparams' on the way.  The ratio printed is the time per model of the trace
over the time per model of symparams: how much faster reading the tree is
than running even a toy model, at any size.

    python benchmarks/bench_costs.py [--check]   # needs torch and transformers

``--check`` exits 1 when symparams takes longer per model than the trace.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout, installed or not

SEQ, BATCH = 8, 2

#: (symparams family and values, transformers class and config) of the traced tiny models
TINY = (
    ("bert", dict(V=100, H=32, L=2, A=4, r=2, P=16, S=2), "BertModel", "BertConfig",
     dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
          max_position_embeddings=16, type_vocab_size=2)),
    ("llama", dict(V=100, H=32, L=2, A=4, G=2, F=48), "LlamaModel", "LlamaConfig",
     dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
          intermediate_size=48, pad_token_id=None, bos_token_id=None, eos_token_id=None)),
)


def symparams_pass() -> tuple[int, float]:
    """Every preset's FLOPs, training FLOPs, Adam memory and KV cache: (presets, seconds; the import of
    symparams not timed, as the trace's imports are not)."""
    from symparams import model
    from symparams.families.presets import all_presets

    start = time.perf_counter()
    names = list(all_presets())
    for name in names:
        m = model(name)
        f = m.flops(2048)
        assert f.training >= f.forward > 0
        mem = m.memory(dtype="bf16", optimizer="adam", seq=2048)
        assert mem.to_dict()["weights"] == 2 * m.count
        m.kv_cache()
    return len(names), time.perf_counter() - start


#: the layout of the per-rank pass: Megatron's, as a mid-sized run might use it
LAYOUT = dict(ranks=8, tensor_parallel=2, sequence_parallel=True, pipeline_parallel=2, distributed_optimizer=True)


def per_rank_pass() -> tuple[int, int, float, float]:
    """Every preset's memory at s = 2048, plain and for the most loaded rank of :data:`LAYOUT`: (presets,
    layouts refused as not dividing the model, seconds plain, seconds per rank)."""
    from symparams import SymparamsError, model
    from symparams.analysis.ranks import per_rank
    from symparams.families.presets import all_presets

    models = [model(name) for name in all_presets()]
    start = time.perf_counter()
    for m in models:
        m.memory(dtype="bf16", optimizer="adam", seq=2048).total
    plain = time.perf_counter() - start
    refused, start = 0, time.perf_counter()
    for m in models:
        try:
            per_rank(m.memory(dtype="bf16", optimizer="adam", seq=2048, **LAYOUT)).total
        except SymparamsError:  # an encoder-decoder's stacks are apart; T may not divide the heads
            refused += 1
    return len(models), refused, plain, time.perf_counter() - start


def trace_pass() -> tuple[int, float]:
    """FlopCounterMode over the tiny models, forward and backward, checked against symparams: (models, s)."""
    import torch
    import transformers
    from torch.utils.flop_counter import FlopCounterMode

    from symparams import model

    transformers.logging.set_verbosity_error()
    for _, _, cls, config_cls, _ in TINY:  # transformers imports each model's module on first use: not timed
        getattr(transformers, cls), getattr(transformers, config_cls)
    start = time.perf_counter()
    for family, values, cls, config_cls, config in TINY:
        cfg = getattr(transformers, config_cls)(**config)
        cfg._attn_implementation = "eager"
        module = getattr(transformers, cls)(cfg)
        ids = torch.randint(3, 100, (BATCH, SEQ))
        with FlopCounterMode(display=False) as counter:
            out = module(input_ids=ids)
            sum(t.sum() for t in out.values() if isinstance(t, torch.Tensor)).backward()  # every output's gradient
        ours = model(family, **values).flops(SEQ, BATCH)
        if counter.get_total_flops() != ours.training:
            raise SystemExit(f"{family}: FlopCounterMode {counter.get_total_flops()} != symparams {ours.training}")
    return len(TINY), time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    presets, ours = symparams_pass()
    models, traced = trace_pass()
    per_ours, per_trace = ours / presets, traced / models
    print(f"symparams: FLOPs, training FLOPs, Adam memory and KV cache of {presets} presets at full size: "
          f"{ours:.3f} s ({per_ours * 1000:.1f} ms each)")
    print(f"FlopCounterMode: {models} tiny models (s = {SEQ}, b = {BATCH}) traced forward and backward, "
          f"equal to symparams: {traced:.3f} s ({per_trace * 1000:.1f} ms each)")
    ratio = per_trace / per_ours
    print(f"ratio, trace / symparams per model: {ratio:.1f}× {'ok' if ratio > 1 else 'SLOWER THAN THE TRACE'}")
    presets, refused, plain, ranks = per_rank_pass()
    print(f"memory of {presets} presets at s = 2048: plain {plain:.3f} s; the most loaded rank of "
          f"{' '.join(f'{k}={v}' for k, v in LAYOUT.items())}: {ranks:.3f} s "
          f"({ranks / presets * 1000:.1f} ms each; {refused} refused: a layout that does not divide, stacks of "
          f"layers apart, a module not placed)")
    return 1 if (args.check and ratio <= 1) else 0


if __name__ == "__main__":
    sys.exit(main())
