"""The symparams commands a document suggests for its model: only those that work for it.

A document ends its sections with the commands that redo or extend them
(``symparams formula``, ``symparams derive ... --set``, ``symparams flops``).
A command is suggested only where it answers for this model, and named as the
command line names the model: a preset's or a family's name, else
``--config`` with the model's config.json (a model read from a file has no
name the command line knows).

>>> from symparams import model
>>> suggested(model("bert-base"))
Commands(target='bert-base', costs=True)
>>> from symparams.families.inferred import model as inferred
>>> suggested(inferred({"model_type": "olmo"}, source="OLMo-1B-hf"))  # its traced costs are in the data
Commands(target='', costs=True)
>>> suggested(inferred({"model_type": "pegasus_x"}))  # its costs could not be inferred: no flops, no memory
Commands(target='', costs=False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.errors import SymparamsError
from ..core.model import Model

#: a name a command can show as it is: no space, quote, backtick or markup
_PLAIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+@/-]*", re.ASCII)

#: the sequence length at which :func:`costs_answer` asks (any length answers alike)
_PROBE_SEQ = 128


@dataclass(frozen=True)
class Commands:
    """What a document may suggest for a model: ``target``, how a command names it (``""``: by ``--config``
    and its config.json), and whether ``flops`` and ``memory`` answer for it (``costs``)."""

    target: str
    costs: bool


def suggested(m: Model) -> Commands:
    """The commands that work for ``m``, and how they name it."""
    return Commands(_target(m), costs_answer(m))


def _target(m: Model) -> str:
    """``m``'s name where the command line resolves it to a model of the same family (a preset, a family) and
    it can be printed as one shell word in a code span; else ``""`` (a folder named with a backtick, a blank line
    or markup would break out of the span, and one with a space would need quoting)."""
    from ..families.lookup import model

    if not _PLAIN_WORD.fullmatch(m.name):
        return ""
    try:
        return m.name if model(m.name).family.name == m.family.name else ""
    except SymparamsError:
        return ""


def costs_answer(m: Model) -> bool:
    """Whether ``symparams flops`` and ``symparams memory`` answer for ``m`` (FLOPs, the weights' bytes and the
    KV cache): asked of them, so a document suggests them, and shows its costs section, exactly where they work."""
    try:
        m.flops(_PROBE_SEQ).forward
        m.kv_cache(dtype="bf16").per_token
        m.memory(dtype="bf16", optimizer="adam").weights
    except SymparamsError:
        return False
    return True
