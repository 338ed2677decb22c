"""Meta-device builds: a config from keyword values, the model of one Auto class, its parameter shapes.

torch and transformers are imported here, inside functions, and only here:
the rest of symparams (and its wheel) works without them.  Every build runs
``with torch.device("meta")`` from ``AutoConfig.for_model`` and
``from_config``: no weights, no network.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping

from ...core.errors import SymparamsError

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
    config_class = transformers.AutoConfig.for_model(model_type).__class__
    if config_class not in mapping:
        has = [name for name, a in AUTO_CLASSES.items() if config_class in getattr(transformers, a)._model_mapping]
        raise SymparamsError(f"model_type {model_type!r} has no {cls} class in transformers "
                             f"{transformers.__version__} (it has: {', '.join(has) or 'none'})")
    return mapping[config_class]


_INDEX = re.compile(r"^\d+$")


@dataclass
class Observation:
    """One build: each normalised parameter name's shapes (one per instance) and the total."""

    shapes: dict[str, list[tuple[int, ...]]]
    total: int
    trainable: int

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

    def __post_init__(self):
        self.model_class = auto_class(self.model_type, self.cls)

    def config(self, values: Mapping[str, Any]):
        """``AutoConfig.for_model(model_type, **values)``: rebuilt from scratch, so derived state is recomputed."""
        _, transformers = libraries()
        with _quiet():
            return transformers.AutoConfig.for_model(self.model_type, **values)

    def defaults(self) -> dict[str, Any]:
        """The default config's fields (``num_labels`` among them)."""
        cfg = self.config({})
        out = cfg.to_dict()
        out["num_labels"] = cfg.num_labels
        return out

    def observe(self, values: Mapping[str, Any]) -> Observation | None:
        """The shapes of the model built from ``values``, or None when it cannot be built."""
        torch, _ = libraries()
        start = time.perf_counter()
        self.builds += 1
        try:
            with _quiet():
                cfg = self.config(values)
                with torch.device("meta"):
                    model = self.model_class._from_config(cfg)
            return _shapes(model)
        except Exception as exc:  # whatever the modeling code raises: this configuration does not build
            self.failures += 1
            text = f"{type(exc).__name__}: {exc}".splitlines()
            self.errors[tuple(sorted(values.items()))] = text[0][:200] if text else type(exc).__name__
            return None
        finally:
            self.seconds += time.perf_counter() - start

    def read_back(self, values: Mapping[str, Any], others=()) -> dict[str, Any] | None:
        """What the config holds for each of ``values``' keys (and ``others``) after ``__init__`` (None: it
        refuses them)."""
        try:
            cfg = self.config(values)
        except Exception:  # an invalid value the config class refuses
            return None
        return {k: getattr(cfg, k, None) for k in [*values, *others]}


def _shapes(model) -> Observation:
    from torch import nn

    lists = {name for name, m in model.named_modules() if isinstance(m, (nn.ModuleList, nn.ParameterList))}
    shapes: dict[str, list[tuple[int, ...]]] = {}
    total = trainable = 0
    for name, p in model.named_parameters():
        shapes.setdefault(_normalise(name, lists), []).append(tuple(int(d) for d in p.shape))
        total += p.numel()
        trainable += p.numel() if p.requires_grad else 0
    return Observation(shapes, total, trainable)


def _normalise(name: str, lists: set[str]) -> str:
    """Indices into a ModuleList become ``*``; fixed positions in an ``nn.Sequential`` stay."""
    parts = name.split(".")
    out = []
    for i, part in enumerate(parts):
        out.append("*" if _INDEX.match(part) and ".".join(parts[:i]) in lists else part)
    return ".".join(out)


@contextlib.contextmanager
def _quiet():
    """No warnings, log lines or prints from the modeling code while it builds."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)
