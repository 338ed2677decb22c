"""The class a config.json says its checkpoint was saved from (``architectures``), as one of our heads.

transformers writes the class of the saved model into its config (``"architectures": ["Qwen2ForCausalLM"]``).
A count stays the base model's (what ``AutoModel`` builds, as for a preset); the class tells which head the
released checkpoint holds, so ``count`` can name it and give its count beside the base model's.

The base and language-model classes of each type are looked up in the inferred data, which holds the class
transformers' own auto mappings give each of them; task heads by the suffix transformers names them with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

#: the suffix of a task head's class name → our head (``BertForSequenceClassification``)
TASK_SUFFIXES = (("ForSequenceClassification", "sequence-classification"),
                 ("ForTokenClassification", "token-classification"),
                 ("ForQuestionAnswering", "question-answering"), ("ForMultipleChoice", "multiple-choice"),
                 ("ForNextSentencePrediction", "next-sentence"), ("ForPreTraining", "pretraining"))

#: longer than any class name transformers has: a longer name is shown cut
SHOWN = 80


@dataclass(frozen=True)
class SavedAs:
    """The class a config names (cut to :data:`SHOWN` characters) and the head it is: ``None`` for the base
    model; ``known`` False when the class is none we count.  ``model`` gives the model with that head, read
    from the config anew (a classification head reads ``num_labels``, which the base model's reading
    leaves out)."""

    name: str
    head: str | None
    known: bool
    model: Callable[[], Any] | None = field(default=None, compare=False, repr=False)


def saved_as(config: Mapping[str, Any], heads: tuple[str, ...]) -> SavedAs | None:
    """What ``config``'s ``architectures`` names, among ``heads`` (the heads the model's family counts); None
    when it names no class, or more than one (the head is then the user's to give).

    >>> saved_as({"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"]}, ("causal-lm",))
    SavedAs(name='Qwen2ForCausalLM', head='causal-lm', known=True)
    >>> saved_as({"model_type": "bert", "architectures": ["BertForMaskedLM"]}, ("causal-lm",))
    SavedAs(name='BertForMaskedLM', head=None, known=False)
    """
    classes = config.get("architectures")
    if not isinstance(classes, list) or len(classes) != 1 or not isinstance(classes[0], str) or not classes[0]:
        return None
    name = classes[0]
    head = _head_of(config.get("model_type"), name)
    shown = name if len(name) <= SHOWN else name[:SHOWN - 3] + "..."
    if head == "base":
        return SavedAs(shown, None, True)
    return SavedAs(shown, head, True) if head in heads else SavedAs(shown, None, False)


def _head_of(model_type: Any, name: str) -> str | None:
    """``"base"``, a head, or None: the class ``name`` of ``model_type`` as the inferred data and
    transformers' names know it."""
    from .inferred_data import entries

    for cls, entry in ((entries(model_type) or {}) if isinstance(model_type, str) else {}).items():
        if entry.get("model_class") == name:
            return cls
    return next((head for suffix, head in TASK_SUFFIXES if name.endswith(suffix)), None)
