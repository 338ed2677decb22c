"""The reference: transformers models built on PyTorch's meta device (torch's initialisers, which do nothing to a
meta tensor, skipped: see :mod:`symparams.analysis.inference.meta`, tested against plain meta builds).

Nothing is allocated and nothing is downloaded: configs are built in code
or read from the fixtures shipped in tests/fixtures.
"""

from __future__ import annotations

import re
import warnings

import transformers

from symparams.analysis.inference.meta import meta_device

transformers.logging.set_verbosity_error()
warnings.filterwarnings("ignore")

_LAYER_INDEX = re.compile(r"\.\d+(?=\.|$)")


def normalize(name: str) -> str:
    """``encoder.layer.3.attention...`` → ``encoder.layer.*.attention...``."""
    return _LAYER_INDEX.sub(".*", name)


def build(cls_name: str, config):
    """``transformers.<cls_name>(config)`` on the meta device."""
    cls = getattr(transformers, cls_name)
    with meta_device():
        return cls(config)


def parameters(module, strip: str | None = None) -> dict[str, tuple[int, bool]]:
    """Normalized parameter path → (elements summed over layers, trainable).

    ``named_parameters()`` lists a tensor shared by several modules (tied
    weights) once, as ``parameters()`` and the total do.  ``strip`` removes
    a base-model prefix (``"bert."``) so task models compare with the same
    paths as the base model.
    """
    out: dict[str, tuple[int, bool]] = {}
    for name, p in module.named_parameters():
        if strip and name.startswith(strip):
            name = name[len(strip):]
        key = normalize(name)
        n, trainable = out.get(key, (0, p.requires_grad))
        if trainable != p.requires_grad:
            raise AssertionError(f"{key}: layers disagree on requires_grad")
        out[key] = (n + p.numel(), trainable)
    return out


def totals(module) -> tuple[int, int]:
    """(all parameters, trainable parameters), as PyTorch counts them."""
    ps = list(module.parameters())
    return sum(p.numel() for p in ps), sum(p.numel() for p in ps if p.requires_grad)


def assert_matches(m, module, strip: str | None = None) -> None:
    """Per-parameter, total and trainable equality of a symparams model and a module."""
    ours = m.reference_counts()
    theirs = parameters(module, strip)
    missing = sorted(set(theirs) - set(ours))
    extra = sorted(set(ours) - set(theirs))
    wrong = sorted(k for k in set(ours) & set(theirs) if ours[k] != theirs[k])
    assert not (missing or extra or wrong), (
        f"missing {missing}, extra {extra}, differ {[(k, ours[k], theirs[k]) for k in wrong]}")
    assert (m.count, m.trainable) == totals(module)


def lora_wrapped(module, **options):
    """``peft.get_peft_model(module, LoraConfig(**options))``; PEFT is imported here, when a test first needs it:
    its import compiles quantisation kernels with torch.compile, seconds a worker running no PEFT test would spend
    collecting the files that use it."""
    from peft import LoraConfig, get_peft_model

    return get_peft_model(module, LoraConfig(**options))
