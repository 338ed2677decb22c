"""LoRA counts of every preset in one process, beside the plain count and beside PEFT wrapping meta models.

symparams counts every preset (with its LM head where it has one), then the
same presets with a LoRA adapter of rank 16 on all-linear (o_proj for a
mixture of experts, whose all-linear is refused), and prints the time
per preset of each; the ratio is the adapter's time over the plain count's.
Side by side, in the same process, PEFT's ``get_peft_model`` wraps a few
presets' transformers models built on the meta device (what a tool that asks
PEFT has to do, for each model and each setting), and its counts are checked
equal to symparams' on the way.

    python benchmarks/bench_lora.py [--check]   # needs torch, transformers and peft

``--check`` exits 1 when symparams' LoRA count takes longer per preset than PEFT's wrapping of a meta model.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout, installed or not

#: presets PEFT wraps on the meta device, by the fixture of their config.json
WRAPPED = {"llama-3-8b": "meta-llama/Meta-Llama-3-8B", "gpt2": "gpt2", "bert-base": "bert-base-uncased",
           "qwen2.5-0.5b": "Qwen/Qwen2.5-0.5B"}


def targets(m) -> list[str] | str:
    """all-linear; on a mixture of experts (where it is refused) the attention's output projection."""
    return ["o_proj"] if m.routed else "all-linear"


def symparams_pass() -> tuple[int, float, float]:
    """(presets, seconds of the plain counts, seconds of the LoRA counts); the import of symparams not timed."""
    from symparams import model
    from symparams.families.presets import all_presets

    models = [model(name).as_released() for name in all_presets()]
    start = time.perf_counter()
    for m in models:
        m.subs().count  # a fresh model: nothing cached from an earlier pass
    plain = time.perf_counter() - start
    start = time.perf_counter()
    for m in models:
        fresh = m.subs()
        assert fresh.lora(16, targets(fresh)).total > fresh.count
    return len(models), plain, time.perf_counter() - start


def peft_pass() -> tuple[int, float]:
    """PEFT wrapping the presets of WRAPPED on the meta device, checked against symparams: (models, seconds)."""
    import warnings

    import torch
    import transformers
    from peft import LoraConfig, get_peft_model

    from symparams import model

    warnings.filterwarnings("ignore")
    transformers.logging.set_verbosity_error()
    fixtures = ROOT / "tests" / "fixtures"
    start = time.perf_counter()
    for name, folder in WRAPPED.items():
        m = model(name).as_released()
        config = transformers.AutoConfig.from_pretrained(fixtures / folder)
        auto = transformers.AutoModelForCausalLM if m.head == "causal-lm" else transformers.AutoModel
        with torch.device("meta"):
            module = auto.from_config(config)
        theirs = get_peft_model(module, LoraConfig(r=16, target_modules=targets(m))).get_nb_trainable_parameters()
        ours = m.lora(16, targets(m))
        if theirs != (ours.trainable, ours.total):
            raise SystemExit(f"{name}: PEFT {theirs} != symparams {(ours.trainable, ours.total)}")
    return len(WRAPPED), time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    counted, plain, lora = symparams_pass()
    wrapped, peft = peft_pass()
    per_plain, per_lora, per_peft = plain / counted, lora / counted, peft / wrapped
    print(f"symparams: {counted} presets, plain count {per_plain * 1000:.1f} ms and with LoRA "
          f"{per_lora * 1000:.1f} ms per preset ({per_lora / per_plain:.1f} × the plain count)")
    print(f"peft on the meta device: {per_peft * 1000:.0f} ms per model ({wrapped} models), "
          f"{per_peft / per_lora:.1f} × symparams' LoRA count")
    failed = args.check and per_lora > per_peft
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
