"""The transformers class each hand-written family compares a head with is the one transformers itself picks.

The cross-checks build the class a family's ``CLASSES`` table names for each
head (``bert.CLASSES["masked-lm"]`` is ``BertForMaskedLM``), and the package
reads the same table: a wrong entry would be mirrored, a count checked against
the wrong model and passing.  transformers' auto classes are an independent
record: ``AutoModelForMaskedLM`` builds, for a config of the family's
``model_type``, exactly one class, and that must be the table's.
"""

import importlib
import pkgutil

import pytest
from transformers.models.auto import modeling_auto as auto

import symparams.families

#: the auto class of each head, by the names its mapping has in transformers
AUTO_MAPPINGS = {
    None: auto.MODEL_MAPPING_NAMES,
    "causal-lm": auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
    "masked-lm": auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    "seq2seq-lm": auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
    "sequence-classification": auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES,
    "token-classification": auto.MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES,
    "question-answering": auto.MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES,
    "multiple-choice": auto.MODEL_FOR_MULTIPLE_CHOICE_MAPPING_NAMES,
    "next-sentence": auto.MODEL_FOR_NEXT_SENTENCE_PREDICTION_MAPPING_NAMES,
    "pretraining": auto.MODEL_FOR_PRETRAINING_MAPPING_NAMES,
}


def class_tables() -> dict:
    """Every head → class table of the families' modules (``CLASSES``, ``CLASSES_2``, ``XLM_ROBERTA_CLASSES``...),
    as ``{"module.NAME": {head: class name}}``."""
    found = {}
    for info in pkgutil.iter_modules(symparams.families.__path__):
        module = importlib.import_module(f"symparams.families.{info.name}")
        for name, table in vars(module).items():
            if "CLASSES" in name and isinstance(table, dict) and None in table:
                found[f"{info.name}.{name}"] = {head: c if isinstance(c, str) else c[0] for head, c in table.items()}
    return found


TABLES = class_tables()


def model_types_of(table: dict) -> list:
    """The model types whose auto classes build every head of ``table`` as the table says (several types share
    classes: EXAONE's config builds ``LlamaModel`` too)."""
    return [t for t in AUTO_MAPPINGS[None] if all(AUTO_MAPPINGS[h].get(t) == c for h, c in table.items())]


def test_every_family_with_a_transformers_twin_has_its_tables_here():
    assert len(TABLES) >= 36 and {"bert.CLASSES", "gpt2.CLASSES", "llama.CLASSES", "t5.CLASSES"} <= set(TABLES)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_head_is_the_class_transformers_auto_classes_build(name):
    table = TABLES[name]
    assert model_types_of(table), (
        f"{name}: no model_type's auto classes build "
        + ", ".join(f"{h or 'base'} {c}" for h, c in table.items()))


def test_a_wrong_class_is_seen():
    wrong = {**TABLES["bert.CLASSES"], "causal-lm": "BertForMaskedLM"}
    assert model_types_of(TABLES["bert.CLASSES"]) == ["bert"] and model_types_of(wrong) == []
