"""Sliding-window layers: which layers' caches keep only a window, read as transformers reads them.

transformers 5 builds a model's cache from its config (``DynamicCache(config=...)``,
``get_layer_types_and_kwargs`` in ``cache_utils.py``): a layer whose type in
``config.layer_types`` is ``sliding_attention`` (or ``chunked_attention``)
gets a ``DynamicSlidingWindowLayer``, which keeps only the last
``sliding_window − 1`` tokens (``attention_chunk_size − 1``); a config
without ``layer_types`` makes every layer sliding when ``sliding_window`` is
set (else chunked when ``attention_chunk_size`` is), else full.  Config
classes that have a ``layer_types`` field fill it in when the config leaves
it out, each by its own rule (:class:`Rule`): Gemma 2 alternates, Gemma 3
puts a global layer every ``sliding_window_pattern``, Qwen 2/3 slide from
layer ``max_window_layers`` on, Qwen2-MoE on the even layers below it.

A family holds what it reads in two switches: ``sliding_window`` (the
config's window, None where no layer slides) and its rule's number; the
tree declares, on each attention module, the tokens a windowed layer keeps
and how many of its layers are windowed (:func:`declared`).  A layer
pattern the family's rule cannot express is refused by name.

>>> from symparams.core.symbols import L
>>> GLOBAL_EVERY.count(L, 6), [GLOBAL_EVERY.slides(i, 6) for i in range(7)]
(L - floor(L/6), [True, True, True, True, True, False, True])
>>> declared({"sliding_window": 512, "sliding_window_pattern": 6}, GLOBAL_EVERY, L)
(511, L - floor(L/6))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy as sp

from ..core.errors import SymparamsError
from ..core.family import Switch
from ..core.symbols import L

#: the layer types a config's ``layer_types`` may hold that keep every token (``attention``: the legacy name)
FULL_TYPES = ("full_attention", "attention")


@dataclass(frozen=True)
class Rule:
    """How a config class marks its layers sliding: by one whole number of its own (``key``), or every layer
    alike (``key`` None)."""

    key: str | None
    slides: Callable[[int, int], bool]  # (layer index, the number) -> whether the layer slides
    count: Callable[[sp.Expr, sp.Expr], sp.Expr]  # (L, the number) -> how many layers slide
    least: int = 0  # the smallest number the rule takes

    def pattern(self, layers: int, number) -> list[bool]:
        return [self.slides(i, number) for i in range(layers)]

    def number_for(self, pattern: list[bool], preferred: int) -> int | None:
        """The rule's number that gives ``pattern`` (``preferred`` if it does), None if none does."""
        for number in (preferred, *range(self.least, len(pattern) + 2)):
            if self.pattern(len(pattern), number) == pattern:
                return number
        return None


#: Mistral, Mixtral, Phi-3, StarCoder 2, Qwen3-MoE: no ``layer_types`` field, every layer alike
EVERY = Rule(None, lambda i, _: True, lambda layers, _: layers)
#: Gemma 2 (every other layer, k = 2) and Gemma 3 (``sliding_window_pattern``, 6): layer i is global when
#: k divides i + 1
GLOBAL_EVERY = Rule("sliding_window_pattern", lambda i, k: (i + 1) % k != 0,
                    lambda layers, k: layers - sp.floor(layers / k), least=1)
#: Qwen 2 and Qwen 3: layers from ``max_window_layers`` on slide
FROM_LAYER = Rule("max_window_layers", lambda i, m: i >= m, lambda layers, m: sp.Max(layers - m, 0))
#: Qwen2-MoE: the even layers below ``max_window_layers`` slide
EVEN_BELOW = Rule("max_window_layers", lambda i, m: i % 2 == 0 and i < m,
                  lambda layers, m: sp.ceiling(sp.Min(layers, m) / 2))


# -- the switches ------------------------------------------------------------------------------

@dataclass(frozen=True)
class WholeSwitch(Switch):
    """A switch that takes a whole number of at least ``least``, or (``optional``) none."""

    least: int = 1
    optional: bool = False

    def parse(self, raw):
        text = str(raw).strip().lower()
        if self.optional and (raw is None or text in ("none", "null")):
            return None
        value = None
        if isinstance(raw, int) and not isinstance(raw, bool):
            value = raw
        elif isinstance(raw, str) and text.isascii() and text.isdigit() and len(text) <= 30:
            value = int(text)
        if value is None or value < self.least:
            none = " or none" if self.optional else ""
            raise SymparamsError(f"switch {self.name} takes a whole number of at least {self.least}{none}, "
                                 f"not {str(raw)[:40]!r}")
        return value

    def others(self, value) -> tuple:
        # a window of none and one of 1 (its cache keeps the last 0 tokens: every one) build the same tree
        return (self.least + 1,) if value is None else (value + 1,)


def window_switch(default: int | None) -> WholeSwitch:
    """``sliding_window``: the window of the sliding layers as the config gives it (none: no layer slides)."""
    return WholeSwitch("sliding_window", default, least=1, optional=True,
                       en="tokens a sliding-window layer attends to (sliding_window; its cache keeps the last "
                          "sliding_window - 1); None: every layer keeps every token",
                       zh="滑动窗口层关注的词元数（sliding_window；其缓存保留最后 sliding_window - 1 个）；"
                          "为 None 时，每层都保留全部词元")


def rule_switch(rule: Rule, default: int) -> WholeSwitch:
    """The switch of ``rule``'s number (``sliding_window_pattern``, ``max_window_layers``)."""
    text = {"sliding_window_pattern": ("a global (full-attention) layer every k layers, the others sliding "
                                       "(sliding_window_pattern)", "每 k 层一个全局（完整注意力）层，其余为滑动窗口层"
                                       "（sliding_window_pattern）"),
            "max_window_layers": ("the layer index where the sliding layers start or stop, as the config class "
                                  "reads max_window_layers", "滑动窗口层开始或截止的层号，按配置类对 "
                                  "max_window_layers 的读法")}[rule.key]
    return WholeSwitch(rule.key, default, least=rule.least, en=text[0], zh=text[1])


# -- the tree's declaration -----------------------------------------------------------------------

def declared(switches, rule: Rule, runs: sp.Expr = L) -> tuple[sp.Expr | None, sp.Expr]:
    """``(window, windowed)`` for :class:`~symparams.core.compute.Attention`: the tokens a sliding layer's
    cache keeps (``sliding_window − 1``) and how many of the module's ``runs`` slide.

    A window of 1 keeps every token: transformers slices the last ``1 − 1 = 0`` as ``[-0:]``, the whole.
    """
    window = switches.get("sliding_window")
    if window is None or window == 1:
        return None, sp.Integer(0)
    if rule.key is None:
        return sp.Integer(window - 1), runs
    if runs != L:  # the rule counts layers by their index among all L
        raise SymparamsError(f"a {rule.key} pattern of sliding layers among layers of two kinds is not modelled "
                             f"by symparams")
    return sp.Integer(window - 1), rule.count(L, sp.Integer(switches[rule.key]))


# -- reading a config ------------------------------------------------------------------------------

def config_window(cfg, key: str = "sliding_window", default: int | None = None) -> int | None:
    """``key`` as the config class holds it: ``default`` when the config leaves it out, None when it says
    null (``cfg.int`` alone would take a null for the default)."""
    return cfg.int(key, default=None if key in cfg.data else default)


def _given_types(cfg, layers: int) -> list | None:
    """The config's own ``layer_types``, checked as the config class checks them; None without one."""
    types = cfg.data.get("layer_types")
    if types is None:
        return None
    if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise SymparamsError(f"{cfg.source}: key layer_types must be a list of layer types")
    if len(types) != layers:
        raise SymparamsError(f"{cfg.source}: key layer_types lists {len(types)} layers, but num_hidden_layers "
                             f"is {layers}")
    return types


def _layer_windows(cfg, types, layers: int, window: int | None) -> list[int | None]:
    """Each layer's window as transformers' cache takes it (None: the layer keeps every token)."""
    chunk = cfg.int("attention_chunk_size", default=None)
    if types is None:  # the cache infers every layer alike
        return [window if window is not None else chunk] * layers
    out = []
    for kind in types:
        if kind in FULL_TYPES:
            out.append(None)
        elif kind in ("sliding_attention", "chunked_attention"):
            size = window if kind == "sliding_attention" else chunk
            if not size:
                key = "sliding_window" if kind == "sliding_attention" else "attention_chunk_size"
                raise SymparamsError(f"{cfg.source}: key layer_types has {kind} layers but {key} gives them no "
                                     f"window, so transformers cannot build their cache")
            out.append(size)
        else:
            raise SymparamsError(f"{cfg.source}: key layer_types has {kind!r} layers, which symparams does not "
                                 f"model in this family")
    return out


def read(cfg, family: str, layers: int, rule: Rule, *, window: int | None, number: int | None = None,
         generates: bool | None = None) -> dict:
    """The switches ``sliding_window`` and (with a keyed rule) the rule's number, from a config.

    ``window`` and ``number`` are the config class's values after its own
    reading (its defaults, ``use_sliding_window``); ``generates`` whether the
    class fills ``layer_types`` in by ``rule`` when the config leaves it out
    (False: all full; None: the class has no such field, so transformers'
    cache infers every layer alike).  A pattern ``rule`` cannot express, or
    layers of two windows, are refused naming the key.
    """
    types = _given_types(cfg, layers)
    if types is None and generates is not None:
        pattern = rule.pattern(layers, number) if generates else [False] * layers
        types = ["sliding_attention" if slides else "full_attention" for slides in pattern]
    windows = _layer_windows(cfg, types, layers, window)
    sizes = sorted({w for w in windows if w is not None})
    own = {} if rule.key is None else {rule.key: number}
    if not sizes:
        return {"sliding_window": None, **own}
    key = "layer_types" if "layer_types" in cfg.data else "sliding_window"
    if len(sizes) > 1:
        raise SymparamsError(f"{cfg.source}: key {key} gives layers windows of {sizes[0]} and {sizes[-1]} "
                             f"tokens, which symparams' {family} family does not model")
    slides = [w is not None for w in windows]
    if rule.key is None:
        if not all(slides):
            raise SymparamsError(f"{cfg.source}: key {key} makes some layers sliding and others full, which "
                                 f"symparams' {family} family does not model (its layers are all alike)")
        return {"sliding_window": sizes[0]}
    found = rule.number_for(slides, number)
    if found is None:
        raise SymparamsError(f"{cfg.source}: key {key} makes a pattern of sliding and full layers that "
                             f"symparams' {family} family cannot express by {rule.key}")
    return {"sliding_window": sizes[0], rule.key: found}


def refuse_stray(cfg, config_class: str, family: str, layers: int) -> None:
    """Refuse a config that would make transformers' cache slide where the family's model never does.

    ``config_class`` has no sliding window, yet transformers keeps any key a
    config.json holds, and its cache reads ``sliding_window``,
    ``attention_chunk_size`` and ``layer_types`` from any config: it would
    keep only a window of tokens while the attention still sees them all.
    """
    if not any(key in cfg.data for key in ("sliding_window", "attention_chunk_size", "layer_types")):
        return
    windows = _layer_windows(cfg, _given_types(cfg, layers), layers, cfg.int("sliding_window", default=None))
    if any(w is not None for w in windows):
        key = next(k for k in ("layer_types", "sliding_window", "attention_chunk_size") if cfg.has(k))
        raise SymparamsError(f"{cfg.source}: key {key} would make transformers' cache keep only a window of "
                             f"tokens, which {config_class} does not have: symparams' {family} family does not "
                             f"model it")


def every_layer(family: str, default: int | None = None):
    """``windows(cfg, layers)`` for a config class without ``layer_types`` whose ``sliding_window`` is
    ``default`` when the config leaves it out: every layer slides when it is set."""
    def windows(cfg, layers):
        return read(cfg, family, layers, EVERY, window=config_window(cfg, default=default))
    return windows


def qwen(family: str, rule: Rule):
    """``windows(cfg, layers)`` for the Qwen config classes: ``use_sliding_window`` (off by default) turns
    ``sliding_window`` (4096) on; Qwen 2 and 3 fill ``layer_types`` in by :data:`FROM_LAYER` when the window
    is on, Qwen2-MoE by :data:`EVEN_BELOW` when ``use_sliding_window`` is (its window, off, is 0), both with
    ``max_window_layers`` (28); Qwen3-MoE has no ``layer_types`` (:data:`EVERY`)."""
    def windows(cfg, layers):
        on = cfg.bool("use_sliding_window", default=False)
        window = config_window(cfg, default=4096) if on else None
        if rule is EVERY:
            return read(cfg, family, layers, rule, window=window)
        number = cfg.int("max_window_layers", default=28, minimum=0)
        generates = on if rule is EVEN_BELOW else window is not None
        return read(cfg, family, layers, rule, window=window, number=number, generates=generates)
    return windows


def gemma(family: str, pattern: int | None):
    """``windows(cfg, layers)`` for Gemma 2 (``pattern`` 2: the class alternates, whatever the config says) and
    Gemma 3 (``pattern`` None: ``sliding_window_pattern``, 6 by default): ``sliding_window`` 4096 by default;
    Gemma 3 with ``use_bidirectional_attention`` takes ``sliding_window // 2 + 1``, as its config class does."""
    def windows(cfg, layers):
        window = config_window(cfg, default=4096)
        if pattern is None and cfg.bool("use_bidirectional_attention", default=False) and window is not None:
            window = window // 2 + 1
        number = pattern if pattern is not None else cfg.int("sliding_window_pattern", default=6)
        return read(cfg, family, layers, GLOBAL_EVERY, window=window, number=number, generates=True)
    return windows
