"""A document lists the structural switches its model's build reads: not one only a task head reads (a tied LM head,
a token-classification bias) in a document of the base model.  Which config fields only a head reads is
transformers' fact, checked on the meta device."""

from __future__ import annotations

import re

import pytest
import transformers

from symparams import model
from symparams.documents.render import render
from tests.reference import ROOT
from tests.reference.hf import build

DOCUMENTS = sorted(p for p in (ROOT / "docs").iterdir() if re.match(r".+\.(en|zh)\.(md|tex)$", p.name))
#: a listed switch: its name, and the rest of its line (its meaning)
LISTED = re.compile(r"^ *(?:- |\\item )(?:`|\\texttt\{)([a-z_]+)(?:`|\})(.*)$", re.M)
#: the meanings of switches only a task head's module reads (an LM head tied or not, a head's biases)
HEAD_ONLY = re.compile(r"(causal-lm|seq2seq-lm) head tied|LM head's decoder weight|token-classification score layer"
                       r"|masked-LM head is|masked-LM decoder|heads' dense layer")
TINY = dict(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
            num_key_value_heads=2)


def listed(text: str, markdown: bool = True) -> dict[str, str]:
    """The switches the introduction lists: name → meaning."""
    text = text.replace("\\allowbreak{}", "").replace("\\_", "_")
    return dict(LISTED.findall(text.split("## 2." if markdown else "\\section*{2.")[0]))


def _parameters(cls: str, **config) -> int:
    return sum(p.numel() for p in build(cls, transformers.LlamaConfig(**TINY, **config)).parameters())


@pytest.mark.parametrize("field, head", [("tie_word_embeddings", "LlamaForCausalLM"),
                                         ("token_classification_bias", "LlamaForTokenClassification")])
def test_a_head_only_switch_leaves_the_base_model_alone_and_changes_its_head(field, head):
    assert _parameters("LlamaModel", **{field: True}) == _parameters("LlamaModel", **{field: False})
    assert _parameters(head, **{field: True}) != _parameters(head, **{field: False})


@pytest.mark.parametrize("path", [p for p in DOCUMENTS if ".en." in p.name], ids=lambda p: p.name)
def test_a_base_model_document_lists_no_switch_only_a_head_reads(path):
    switches = listed(path.read_text(encoding="utf-8"), path.suffix == ".md")
    assert not [name for name, meaning in switches.items() if HEAD_ONLY.search(meaning)]


@pytest.mark.parametrize("path", [p for p in DOCUMENTS if ".zh." in p.name], ids=lambda p: p.name)
def test_a_chinese_document_lists_the_switches_its_english_twin_lists(path):
    twin = path.with_name(path.name.replace(".zh.", ".en."))
    markdown = path.suffix == ".md"
    assert listed(path.read_text(encoding="utf-8"), markdown).keys() == listed(twin.read_text(encoding="utf-8"),
                                                                               markdown).keys()


@pytest.mark.parametrize("name, head, switch", [("llama-2-7b", "token-classification", "token_classification_bias"),
                                                ("llama-2-7b", "causal-lm", "tie"),
                                                ("t5-base", "seq2seq-lm", "tie")])
def test_a_document_with_a_head_lists_the_switches_its_head_reads(name, head, switch):
    for lang in ("en", "zh"):
        text = render(model(name, head=head), format="md", lang=lang)
        assert switch in listed(text)
