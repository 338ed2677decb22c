"""The shipped FLOPs and cache of a class at a long sequence, against a trace of transformers' model on the meta
device.

The costs are fitted and verified on traces of 3 to 23 tokens.  A kernel that
works in chunks of a fixed size (the gated delta rule's 64 positions, a
state-space scan's chunks) costs by the number of chunks, which is 1 at
every one of those lengths: a formula fitted there would hold up to the
chunk and be wrong past it.  This check traces two configurations (the
defaults, and the small one the real-model check used) at :data:`LONG`
tokens, forward and backward, and once with the cache, and compares the
FLOPs and the elements the cache holds with the shipped formulas,
read as ``count --config`` reads a config.json
(:func:`symparams.families.inferred.model`); the reading also catches a layer
count the fit held (the products of four layers, whatever the config says;
keys cached in one attention layer of Jamba's 32, where its small traces had
one).
A class traced on real tensors (:mod:`.real_tensors`) is checked on the CPU
with random weights: the small configuration, and the same with the default
layer counts (the defaults' widths would not fit in memory), and, where its
config names a window longer than :data:`LONG` tokens, past twice that
window (an input padded to a multiple of the window costs the window's
length at every length the fit saw).
"""

from __future__ import annotations

import math
import random
from typing import Any

from ...core.errors import SymparamsError
from ...families.config import flattened
from .probing import config_class_of, configure, libraries, quiet
from .real_check import LARGEST
from .tracing import build, trace

#: past the chunks transformers' eager kernels use (64, 128, 256); odd, so no multiple of a chunk
LONG = 301
#: bytes of an element of the cache the formulas are read in (its elements are compared)
FP32 = 4


def long_sequence_check(entry: dict) -> str | None:
    """None when ``entry``'s shipped FLOPs (forward, and forward plus backward) and cache hold at :data:`LONG`
    tokens; otherwise why not, in one line."""
    default = default_config(entry)
    # the defaults (the conditions admit them, transformers builds them, and their layer counts are the model's),
    # and the small configuration too where the formulas count it and transformers traces it: two layer counts,
    # so a count the fit held cannot pass by being the one checked
    small = _checked(entry, small_config(entry, default))
    if (entry.get("costs") or {}).get("traced_on") == "cpu":
        # traced on real tensors: the defaults are too large for the CPU; the small configuration with the
        # default layer counts instead
        deeper = {k: v for k, v in _values(entry).items() if "layer" not in k}
        written = small_config(entry, default)
        past = past_windows(written)  # a model that pads its input to a window of more than LONG tokens
        return small or _checked(entry, _written(default, deeper)) or (past and _checked(entry, written, past))
    return small if small is not None and small.startswith("at ") else _checked(entry, _with_unset(entry, default))


def _with_unset(entry: dict, default: dict) -> dict:
    """``default`` with each field only the costs follow that it leaves unset at the small configuration's value:
    the costs set it where the default's forward pass fails without it (DeepSeek-V2's top-k), and a config.json
    without it has no costs, so the defaults are checked as a config.json that gives it."""
    costs, values = entry.get("costs") or {}, _values(entry)
    unset = {k: values[k] for k in costs.get("symbols", {}) if costs.get("defaults", {}).get(k, 0) is None
             and k in values}
    return _written(default, unset) if unset else default


def default_config(entry: dict) -> dict:
    """The config.json of the class's default config, as save_pretrained writes it."""
    return {**configure(entry["model_type"], {}, entry["class"]).to_dict(), "model_type": entry["model_type"]}


def small_config(entry: dict, default: dict | None = None) -> dict:
    """The config.json of the small configuration the real-model check ran (see :func:`_values`)."""
    return _written(default or default_config(entry), _values(entry))


def past_windows(config: dict) -> int | None:
    """A length past twice the longest window a config names, when that window is over :data:`LONG` tokens
    (Longformer pads its input to a multiple of its 512-token attention window: below one window the padded
    length is the window's, whatever the input's); None when no window is that long.

    >>> past_windows({"attention_window": [512, 512], "hidden_size": 768}), past_windows({"sliding_window": 64})
    (1025, None)
    """
    sizes = [v for k, value in flattened(config).items() if "window" in k
             for v in (value if isinstance(value, list) else [value]) if type(v) is int]
    top = max(sizes, default=0)
    return 2 * top + 1 if top > LONG else None


def _checked(entry: dict, config: dict, length: int = LONG) -> str | None:
    """:func:`long_sequence_check` at one config.json and ``length`` tokens (on the CPU with random weights where
    the costs were traced so)."""
    from ...families.inferred import model as inferred_model

    _, transformers = libraries()
    cls = entry["class"]
    device = (entry.get("costs") or {}).get("traced_on", "meta")
    try:
        # named for its type: a config without a path is named for the working directory (the checkout's folder)
        counted = inferred_model(config, head=None if cls == "base" else cls, source=entry["model_type"])
        flops = counted.flops(length, 1)
        refused = bool((entry.get("costs") or {}).get("cache_refused"))  # no cache traced: none to compare
        held = None if refused else counted.kv_cache("fp32", length, 1).total // FP32
    except SymparamsError as exc:
        return f"the formulas refuse the configuration checked: {exc}"
    if device != "meta" and counted.count > LARGEST:
        return f"the configuration checked is too large for the CPU ({counted.count} parameters)"
    try:
        with quiet():
            built = config_class_of(entry["model_type"]).from_dict(dict(config))
            module = build(getattr(transformers, entry["model_class"]), built, device)
            traced = trace(module, length, 1, device, cache=held is not None, backward=True)
    except Exception as exc:  # whatever the modeling code raises at this length: the formulas stay unchecked there
        lines = str(exc).splitlines()
        return f"no trace of {length} tokens: {type(exc).__name__}: {lines[0][:160] if lines else ''}"
    seen = (traced.forward, traced.forward + traced.backward)
    if (flops.forward, flops.training) != seen:
        return (f"at {length} tokens the formulas give {flops.forward} forward and {flops.training} training FLOPs, "
                f"the trace counts {seen[0]} and {seen[1]}")
    cached = sum(math.prod(t.shape) for t in traced.cache or ())
    if held is not None and held != cached:
        return f"after {length} tokens the formulas hold {held} elements in the cache, transformers' cache {cached}"
    return None


def _written(default: dict, values: dict) -> dict:
    """A config.json as save_pretrained writes one, ``values`` in it (kind counts as per-layer lists, the lists
    retiled to the layer counts): what both sides read."""
    from .audit import write_kinds, written

    values = dict(values)
    write_kinds(values, flattened(default), random.Random(0))
    return written(default, values, sparse=False)


def _values(entry: dict) -> dict[str, Any]:
    """The small configuration the real-model check ran (none: the defaults), its tables of positions at their
    defaults (a small table holds fewer positions than the long sequence)."""
    check = (entry.get("costs") or {}).get("check") or {}
    return {k: v for k, v in (check.get("values") or {}).items() if "position" not in k}
