"""Meta-device builds: a config from keyword values, the model of one Auto class, its parameter shapes.

torch and transformers are imported inside functions, here and in :mod:`.meta`:
the rest of symparams (and its wheel) works without them.  Every build runs on
the meta device (:func:`.meta.meta_device`) from ``AutoConfig.for_model`` and
``from_config``: no weights, no network.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import re
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping

from ...core.errors import SymparamsError
from ...families.config import flattened
from ...families.inferred import expanded, run_length
from .layer_counts import listed_layer_counts
from .meta import meta_device
from .seeds import seeded

#: symparams' task heads → transformers' Auto classes
AUTO_CLASSES = {
    "base": "AutoModel",
    "causal-lm": "AutoModelForCausalLM",
    "masked-lm": "AutoModelForMaskedLM",
    "seq2seq-lm": "AutoModelForSeq2SeqLM",
    "sequence-classification": "AutoModelForSequenceClassification",
    "token-classification": "AutoModelForTokenClassification",
    "question-answering": "AutoModelForQuestionAnswering",
    "multiple-choice": "AutoModelForMultipleChoice",
    "next-sentence": "AutoModelForNextSentencePrediction",
    "pretraining": "AutoModelForPreTraining",
}

MISSING_EXTRA = "symparams infer needs torch and transformers: pip install symparams[infer]"


def libraries():
    """``(torch, transformers)``; a one-line :class:`SymparamsError` naming the extra when either is missing."""
    try:
        import torch
        import transformers
    except ImportError:
        raise SymparamsError(MISSING_EXTRA) from None
    transformers.logging.set_verbosity_error()
    return torch, transformers


@functools.lru_cache(maxsize=1)
def common_fields() -> frozenset:
    """The fields of transformers' base config class, which every config has."""
    _, transformers = libraries()
    return frozenset(transformers.PretrainedConfig().to_dict())


def model_types() -> list[str]:
    """Every ``model_type`` the installed transformers knows."""
    _, transformers = libraries()
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return sorted(CONFIG_MAPPING_NAMES)


def auto_class(model_type: str, cls: str):
    """The model class transformers builds for ``model_type`` and the head ``cls``; one-line errors otherwise."""
    _, transformers = libraries()
    if cls not in AUTO_CLASSES:
        raise SymparamsError(f"unknown class {cls!r} (known: {', '.join(AUTO_CLASSES)})")
    known = model_types()
    if model_type not in known:
        import difflib

        near = difflib.get_close_matches(model_type, known, n=3)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise SymparamsError(f"unknown model_type {model_type!r}: transformers {transformers.__version__} does not "
                             f"know it{hint}")
    auto = getattr(transformers, AUTO_CLASSES[cls])
    mapping = auto._model_mapping
    config_class = config_class_of(model_type)
    if config_class not in mapping:
        has = [name for name, a in AUTO_CLASSES.items() if config_class in getattr(transformers, a)._model_mapping]
        raise SymparamsError(f"model_type {model_type!r} has no {cls} class in transformers "
                             f"{transformers.__version__} (it has: {', '.join(has) or 'none'})")
    return mapping[config_class]


def config_class_of(model_type: str):
    """transformers' config class of ``model_type``, without making its default config (which a class may refuse
    as it stands: Gemma 4's assistant validates only with values the engine seeds)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    return CONFIG_MAPPING[model_type]


#: an element of a list of modules: its index, or a name and an index (NLLB-MoE's experts ``expert_0``, ...)
_INDEX = re.compile(r"^(?:[A-Za-z]+_)?\d+$")


@dataclass
class Observation:
    """One build: each normalised parameter name's shapes (one per instance) and the total."""

    shapes: dict[str, list[tuple[int, ...]]]
    total: int
    trainable: int
    frozen: frozenset = frozenset()  # names whose parameters do not train (a fixed sinusoidal table)
    values: dict = field(default_factory=dict)  # the config's fields as transformers holds them (dotted keys)

    @property
    def regime(self) -> frozenset:
        """The structure: the set of (normalised name, rank)."""
        return frozenset((name, len(s[0])) for name, s in self.shapes.items())

    def uneven(self) -> list[str]:
        """Names whose instances differ in shape (layers of different sizes)."""
        return sorted(n for n, s in self.shapes.items() if len(set(s)) > 1)


@dataclass
class Builder:
    """Builds one ``model_type`` with one Auto class on the meta device, counting builds and time."""

    model_type: str
    cls: str
    builds: int = 0
    failures: int = 0
    seconds: float = 0.0
    errors: dict = field(default_factory=dict)
    built: dict = field(default_factory=dict)  # values → observation: the base search and the checks repeat builds
    companions: dict = field(default_factory=dict)  # layer count → (its per-layer list, the list's default)
    kinds: dict = field(default_factory=dict)  # per-layer list → (its layer count, its kinds, the list's default)
    sums: dict = field(default_factory=dict)  # size → (the list of whole numbers adding up to it, the list's default)

    def __post_init__(self):
        found = auto_class(self.model_type, self.cls)
        # a type may map to several classes (funnel: the full model and the base one); the first is the default
        self.model_class = found[0] if isinstance(found, tuple) else found

    def config(self, values: Mapping[str, Any]):
        """The config of ``values`` (see :func:`configure`), each per-layer list the config does not compute
        itself retiled to a layer count that moved (see :func:`retiled`), and each list that must add up to a size
        that moved written to (see :func:`with_sums`)."""
        values = with_sums(with_companions(values, self.companions), self.sums)
        return configure(self.model_type, with_kinds(values, self.kinds), self.cls)

    def defaults(self) -> dict[str, Any]:
        """The default config's fields (``num_labels`` among them), a sub-config's as dotted keys."""
        return held_values(self.config({}))

    def observe(self, values: Mapping[str, Any]) -> Observation | None:
        """The shapes of the model built from ``values``, or None when it cannot be built."""
        key = _hashable(values)
        if key not in self.built:
            self.built[key] = self._build(values)
        return self.built[key]

    def _build(self, values: Mapping[str, Any]) -> Observation | None:
        start = time.perf_counter()
        self.builds += 1
        try:
            with quiet():
                cfg = self.config(values)
                with meta_device():
                    model = self.model_class._from_config(config_for_class(self.model_class, cfg))
            found = observation_of(model)
            found.values = held_values(cfg)
            return found
        except Exception as exc:  # whatever the modeling code raises: this configuration does not build
            self.failures += 1
            text = f"{type(exc).__name__}: {exc}".splitlines()
            self.errors[_hashable(values)] = text[0][:200] if text else type(exc).__name__
            return None
        finally:
            self.seconds += time.perf_counter() - start

    def read_back(self, values: Mapping[str, Any], others=()) -> dict[str, Any] | None:
        """What the config holds for each of ``values``' keys (and ``others``) after ``__init__`` (None: refused)."""
        try:
            cfg = self.config(values)
        except Exception:  # an invalid value the config class refuses
            return None
        return {k: attribute(cfg, k) for k in [*values, *others]}

    def declares_int(self, name: str) -> bool:
        """Whether the config class declares ``name`` (dotted: a sub-config's field) to hold whole numbers."""
        return re.search(r"\bint\b", declared(self.config({}), name)) is not None

    def refusal(self, values: Mapping[str, Any]) -> str | None:
        """Why the config class refuses ``values`` (its error's text), or the model class in its own ``__init__``
        (see :meth:`class_refusal`); None when both take them."""
        try:
            config = self.config(values)
        except Exception as exc:  # whatever the config class raises: its text says what it refuses
            return str(exc)
        return self.class_refusal(config)

    def class_refusal(self, config) -> str | None:
        """Why the model class refuses ``config`` in its own ``__init__`` (Reformer's causal LM: no later chunk), or
        None: an error a module the class builds raises is the modeling code failing, not the class refusing."""
        try:
            with quiet(), meta_device():
                self.model_class._from_config(config_for_class(self.model_class, config))
        except Exception as exc:  # whatever the model class raises: where it was raised says whose refusal it is
            last = exc.__traceback__
            while last.tb_next is not None:
                last = last.tb_next
            return str(exc) if last.tb_frame.f_code is self.model_class.__init__.__code__ else None
        return None


def held_values(config) -> dict[str, Any]:
    """A config's fields as it holds them after ``__init__`` (``num_labels`` among them), a sub-config's as
    dotted keys: a field the config computes when left out has its computed value here.  A field its class
    writes otherwise than it holds it is the value held (see :func:`written_otherwise`); a layer count it
    computes from a list and does not write is there too (see :func:`.layer_counts.listed_layer_counts`)."""
    out = flattened(config.to_dict())
    out.update({name: held for name, (_, held) in written_otherwise(config, out).items()})
    out.update(listed_layer_counts(config, out))
    out["num_labels"] = config.num_labels
    return out


def written_otherwise(config, written: dict | None = None) -> dict[str, tuple]:
    """The whole numbers and lists a config's ``to_dict`` writes otherwise than the config holds them, each →
    (written, held): Dory writes its layer counts doubled and an ``"mlp"`` entry after each of ``layer_types``,
    and reads a file so written back by halving them.  The model is built from the values held."""
    written = flattened(config.to_dict()) if written is None else written
    out = {}
    for name, value in written.items():
        if isinstance(value, bool) or not isinstance(value, (int, list)):
            continue
        held = attribute(config, name)
        if type(held) is type(value) and held != value:
            out[name] = (value, held)
    return out


def _hashable(value):
    """A config's values as a key (lists as tuples, dicts as sorted pairs)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def configure(model_type: str, values: Mapping[str, Any], cls: str | None = None):
    """``AutoConfig.for_model(model_type, **values)`` over the type's (and the class's) seeds: rebuilt from
    scratch, so derived state is recomputed.  A dotted key (``text_config.hidden_size``) sets a sub-config's."""
    _, transformers = libraries()
    plain = {k: v for k, v in values.items() if "." not in k}
    dotted = {k: v for k, v in values.items() if "." in k}
    if dotted:
        plain.update(nested(_nested_defaults(model_type), dotted))
    with quiet():
        return transformers.AutoConfig.for_model(model_type, **seeded(model_type, plain, cls))


@functools.lru_cache(maxsize=8)
def _nested_defaults(model_type: str) -> dict[str, Any]:
    """The default config as a nested dict (sub-configs as dicts), without the fields the parent writes into a
    sub-config (see :func:`parent_written`): left in, they would stay at the default's value while the fields the
    parent computes them from move."""
    return unwritten(model_type, configure(model_type, {}).to_dict())


def unwritten(model_type: str, whole: dict) -> dict:
    """A config's nested dict without the fields the parent writes into a sub-config (see :func:`parent_written`):
    what a file that leaves them to the parent holds."""
    whole = dict(whole)
    for name in parent_written(model_type):
        head, _, leaf = name.partition(".")
        whole[head] = {k: v for k, v in whole[head].items() if k != leaf}
    return whole


@functools.lru_cache(maxsize=8)
def parent_written(model_type: str) -> frozenset[str]:
    """The sub-config fields (dotted) the parent config computes from others: held at a number other than the
    one the sub-config's class declares by default, and, when the sub-config's dict leaves them out, held again
    at the default's value but moved by another field of the sub-config (Gemma 4's assistant sets its text
    config's ``num_kv_shared_layers`` to ``num_hidden_layers``: every layer reuses the target's keys and
    values).  A value the parent's own default dict gives (a constant) is no such field, nor is a seeded one.
    (Another field moved, a per-layer list of its length is left out, as :func:`nested` does.)"""
    import dataclasses

    config = configure(model_type, {})
    seeds = flattened(seeded(model_type, {}))
    out = set()
    for head, sub in config.to_dict().items():
        holder = attribute(config, head) if isinstance(sub, dict) else None
        if not dataclasses.is_dataclass(holder):
            continue
        declared = {f.name: f.default for f in dataclasses.fields(holder)}
        for leaf, value in sub.items():
            default = declared.get(leaf, dataclasses.MISSING)
            if f"{head}.{leaf}" in seeds or not _whole(value) or not _whole(default) or value == default:
                continue
            without = {k: v for k, v in sub.items() if k != leaf}
            if _held(model_type, {head: without}, f"{head}.{leaf}") == value and any(
                    _held(model_type, nested({head: without}, {f"{head}.{k}": 2 * v + 1}), f"{head}.{leaf}")
                    not in (value, None)
                    for k, v in without.items() if _whole(v)):
                out.add(f"{head}.{leaf}")
    return frozenset(out)


def _held(model_type: str, values: dict, name: str):
    """What the config of ``values`` holds for ``name`` (None: it refuses them)."""
    try:
        return attribute(configure(model_type, values), name)
    except Exception:  # whatever the config class raises for the values
        return None


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def config_for_class(model_class, config):
    """The config ``model_class`` takes: a language-model class of a multimodal type (Llama 4's
    ``Llama4ForCausalLM``) takes the text config, as ``AutoModelForCausalLM.from_config`` gives it; where a
    config holds several text configs (MusicGen's text encoder and decoder), the one of the class's own type."""
    wanted = getattr(model_class, "config_class", None)
    if wanted is None or isinstance(config, wanted) or not hasattr(config, "get_text_config"):
        return config
    try:
        candidates = [config.get_text_config()]
    except ValueError:  # more than one text config: which is the class's, its type says
        candidates = [getattr(config, key, None) for key in getattr(config, "sub_configs", {})]
    return next((c for c in candidates if isinstance(c, wanted)), config)


def declared(config, name: str) -> str:
    """The type a config class declares for ``name`` (dotted: a sub-config's field), as text ('' for none).

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Toy:
    ...     n_inner: int | None = None
    >>> declared(Toy(), "n_inner"), declared(Toy(), "width")
    ('int | None', '')
    """
    import dataclasses

    *heads, leaf = name.split(".")
    for head in heads:
        config = getattr(config, head, None)
    if not dataclasses.is_dataclass(config):
        return ""
    found = next((f.type for f in dataclasses.fields(config) if f.name == leaf), "")
    return found if isinstance(found, str) else getattr(found, "__name__", None) or str(found)


def computed_when_unset(config, name: str) -> bool:
    """Whether the config class declares ``name`` (dotted: a sub-config's field) unset by default (None) while
    ``config`` holds a number for it: the class computes it from others when it is left out (Dory's recurrent
    layers, the layers that are neither input nor output ones).

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Toy:
    ...     layers: int = 4
    ...     inner: int | None = None
    ...     def __post_init__(self):
    ...         self.inner = self.layers - 1 if self.inner is None else self.inner
    >>> computed_when_unset(Toy(), "inner"), computed_when_unset(Toy(), "layers")
    (True, False)
    """
    import dataclasses

    *heads, leaf = name.split(".")
    holder = config
    for head in heads:
        holder = getattr(holder, head, None)
    if not dataclasses.is_dataclass(holder):
        return False
    found = next((f for f in dataclasses.fields(holder) if f.name == leaf), None)
    value = getattr(holder, leaf, None)
    return found is not None and found.default is None and isinstance(value, int) and not isinstance(value, bool)


def attribute(config, name: str):
    """``config.name`` (a dotted name: a sub-config's field), or None when the config has none or refuses to give
    one (a per-layer field of a config whose layers differ raises rather than pick a layer's).  ``list#kind``:
    how many entries of a per-layer list are ``kind``."""
    name, _, kind = name.partition("#")
    try:
        for part in name.split("."):
            config = getattr(config, part, None)
    except Exception:  # whatever the config class raises for a field it will not read globally
        return None
    if kind:
        entries = expanded(config)
        return None if entries is None else entries.count(kind)
    return config


def nested(defaults: Mapping[str, Any], dotted: Mapping[str, Any]) -> dict[str, Any]:
    """Each sub-config that ``dotted`` changes, as its default dict with the changes: a per-layer list the
    default holds (Gemma 3's ``layer_types``, Gemma 4's ``per_layer_config``) is left out when a field of its
    length changes, so the config computes it again for the new count.

    >>> nested({"text_config": {"num_hidden_layers": 3, "layer_types": ["a", "b", "a"], "width": 2}},
    ...        {"text_config.num_hidden_layers": 4})
    {'text_config': {'num_hidden_layers': 4, 'width': 2}}
    """
    by_head: dict[str, dict] = {}
    for key, value in dotted.items():
        head, _, rest = key.partition(".")
        by_head.setdefault(head, {})[rest] = value
    out = {}
    for head, changes in by_head.items():
        base = dict(defaults.get(head) or {})
        inner = {k: v for k, v in changes.items() if "." not in k}
        lengths = {base[k] for k in inner if isinstance(base.get(k), int) and base[k] != inner[k]}
        base = {k: v for k, v in base.items() if not any(per_layer(v, n) for n in lengths)}
        base.update(inner)
        base.update(nested(base, {k: v for k, v in changes.items() if "." in k}))
        out[head] = base
    return out


def with_companions(values: Mapping[str, Any], companions: Mapping[str, tuple]) -> dict[str, Any]:
    """``values`` with each per-layer list of ``companions`` (layer count → the list's field and default) retiled
    to its layer count where that count is given and the list is not.

    >>> with_companions({"num_layers": 3}, {"num_layers": ("kinds", ["a", "b"])})
    {'num_layers': 3, 'kinds': ['a', 'b', 'a']}
    """
    out = dict(values)
    for count, (listed, default) in companions.items():
        if count in out and listed not in out:
            out[listed] = retiled(default, out[count])
    return out


def with_sums(values: Mapping[str, Any], sums: Mapping[str, tuple]) -> dict[str, Any]:
    """``values`` with each list of ``sums`` (size → the list that must add up to it, its default) written where the
    size is given and the list is not, its last entry taking up the size's move (Reformer's axial widths).

    >>> with_sums({"hidden": 100}, {"hidden": ("widths", [16, 48])})
    {'hidden': 100, 'widths': [16, 84]}
    """
    out = dict(values)
    for size, (listed, default) in sums.items():
        if isinstance(out.get(size), int) and listed not in out:
            out[listed] = [*default[:-1], out[size] - sum(default[:-1])]
    return out


def with_kinds(values: Mapping[str, Any], kinds: Mapping[str, tuple]) -> dict[str, Any]:
    """``values`` with each per-layer list of ``kinds`` (list → its layer count, its kinds in order, its default)
    whose kind counts (``list#kind``) are given written out: the kinds in that order, each as many times as its
    count says, and the layer count their sum.

    >>> with_kinds({"layer_types#full": 1, "layer_types#linear": 2, "width": 8},
    ...            {"layer_types": ("num_layers", ("linear", "full"), ["linear", "full"])})
    {'width': 8, 'layer_types': ['linear', 'linear', 'full'], 'num_layers': 3}
    """
    out = dict(values)
    for listed, (count, names, default) in kinds.items():
        keys = [f"{listed}#{kind}" for kind in names]
        if any(key in out for key in keys):
            entries = [kind for kind, key in zip(names, keys) for _ in range(out.pop(key, 0))]
            out[listed], out[count] = relisted(default, entries), len(entries)
    return out


def relisted(value, entries: list):
    """``entries`` (one per layer) in the form of the per-layer list ``value`` (a run-length list as one run)."""
    return [[entries, 1]] if run_length(value) else entries


def retiled(value, layers: int):
    """A per-layer list (see :func:`expanded`) for ``layers`` layers: its pattern repeated from the first layer and
    cut, in the list's own form (a run-length list as one run).

    >>> retiled(["sliding", "sliding", "full"], 4), retiled([[["global", "local"], 12]], 3)
    (['sliding', 'sliding', 'full', 'sliding'], [[['global', 'local', 'global'], 1]])
    """
    entries = expanded(value)
    return relisted(value, [entries[i % len(entries)] for i in range(layers)])


def per_layer(value, layers: int) -> bool:
    """Whether a config value holds one entry per layer of ``layers``: a list of that length (Gemma 3's
    ``layer_types``), or a dict keyed by layer indices below it (Gemma 4's ``per_layer_config``).

    >>> per_layer(["a", "b"], 2), per_layer({"5": {}, "11": {}}, 30), per_layer({"a": 1}, 30)
    (True, True, False)
    """
    if isinstance(value, list):
        return len(value) == layers
    return isinstance(value, dict) and bool(value) and all(str(k).isdigit() and int(k) < layers for k in value)


def observation_of(model) -> Observation:
    from torch import nn

    lists = {name for name, m in model.named_modules() if isinstance(m, (nn.ModuleList, nn.ParameterList))
             or (isinstance(m, nn.ModuleDict) and _numbered(m))}
    named = [(name.split("."), tuple(int(d) for d in p.shape), p) for name, p in model.named_parameters()]
    kinds = _layer_kinds([(parts, shape) for parts, shape, _ in named], lists)
    shapes: dict[str, list[tuple[int, ...]]] = {}
    frozen = set()
    total = trainable = 0
    for parts, shape, p in named:
        name = _normalise(parts, lists, kinds)
        shapes.setdefault(name, []).append(shape)
        total += p.numel()
        trainable += p.numel() if p.requires_grad else 0
        if not p.requires_grad:
            frozen.add(name)
    return Observation(shapes, total, trainable, frozenset(frozen))


def _numbered(modules) -> bool:
    """Whether a dict of modules is a list by another name: the keys of those holding parameters one word and
    0, 1, 2, … (NLLB-MoE's ``expert_0``, beside a parameterless dropout)."""
    keys = [k for k, m in modules.items() if any(True for _ in m.parameters())]
    return bool(keys) and all(_INDEX.match(k) for k in keys) and len({k.rpartition("_")[0] for k in keys}) == 1 \
        and sorted(_position(k) for k in keys) == list(range(len(keys)))


def _position(key: str) -> int:
    return int(key.rpartition("_")[2])


def _normalise(parts: list[str], lists: set[str], kinds: dict | None = None) -> str:
    """Indices into a ModuleList become ``*`` (``*1``, ``*2``, … when its layers are of several kinds); fixed
    positions in an ``nn.Sequential`` stay."""
    out = []
    for i, part in enumerate(parts):
        prefix = ".".join(parts[:i])
        out.append((kinds or {}).get((prefix, part), "*") if _INDEX.match(part) and prefix in lists else part)
    return ".".join(out)


def _layer_kinds(named: list[tuple[list[str], tuple]], lists: set[str]) -> dict[tuple[str, str], str]:
    """The kind of each element of a ModuleList whose elements hold one parameter name in different shapes
    (hybrid stacks: full and sliding attention of other widths, dense and MoE layers whose MLPs share names):
    ``*k`` for the k-th distinct structure, numbered in layer order, so the same config family names its kinds
    alike.  A list whose names keep one shape is left out (its elements are plain ``*``, a name some layers
    lack simply counts fewer instances).  A list inside a list element (the blocks of an up-sampling stage, the
    first widening the channels) has kinds of its own."""
    signatures: dict[str, dict[str, list]] = {}
    for parts, shape in named:
        for i in range(len(parts)):  # the last part too: the tensors of a ParameterList (Reformer's axial tables)
            prefix = ".".join(parts[:i])
            if prefix in lists and _INDEX.match(parts[i]):
                suffix = _normalise(parts[i + 1:], set())
                signatures.setdefault(prefix, {}).setdefault(parts[i], []).append((suffix, shape))
    kinds = {}
    for prefix, elements in signatures.items():
        shapes: dict[str, set] = {}
        for found in elements.values():
            for suffix, shape in found:
                shapes.setdefault(suffix, set()).add(shape)
        if all(len(s) == 1 for s in shapes.values()):
            continue
        kind = _kinds_of(elements)
        order: list[frozenset] = []
        for index in sorted(elements, key=_position):
            if kind[index] not in order:
                order.append(kind[index])
            kinds[prefix, index] = f"*{order.index(kind[index]) + 1}"
    return kinds


def _kinds_of(elements: dict[str, list]) -> dict[str, frozenset]:
    """Each layer's kind: its names and shapes, or, for a layer merely lacking names of one other kind (the first
    layer without a residual mix, a layer reusing another's keys and values), that kind's, so that it counts one
    instance fewer there rather than making a kind of its own, whatever the sizes."""
    own = {index: frozenset(found) for index, found in elements.items()}
    largest = {s for s in own.values() if not any(s < t for t in own.values())}
    out = {}
    for index, signature in own.items():
        holders = [t for t in largest if signature <= t]
        out[index] = holders[0] if len(holders) == 1 else signature
    return out


@contextlib.contextmanager
def quiet():
    """No warnings, log lines or prints from the modeling code while it builds."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)
