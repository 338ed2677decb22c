"""Every config.json under tests/fixtures, whatever families exist, against transformers' AutoModel.

The list is read when the tests are collected, so a fixture added for any
family is checked here too: read with symparams, built by ``AutoConfig`` /
``AutoModel.from_config`` on the meta device from the same file, compared
per parameter, in total and in trainable count.
"""

import pytest
import torch
import transformers

from symparams.families.lookup import from_config
from tests.reference import FIXTURES
from tests.reference.hf import assert_matches

pytestmark = pytest.mark.crosscheck

PATHS = sorted(FIXTURES.rglob("config.json"))


def test_the_fixtures_include_the_bert_bart_and_marian_checkpoints():
    names = {p.parent.relative_to(FIXTURES).as_posix() for p in PATHS}
    assert {"bert-base-uncased", "bert-large-uncased", "facebook/bart-base", "Helsinki-NLP/opus-mt-en-de"} <= names


def test_every_fixture_names_its_source():
    sources = (FIXTURES / "SOURCES.md").read_text(encoding="utf-8")
    for path in PATHS:
        name = path.parent.relative_to(FIXTURES).as_posix()
        assert f"- {name}: https://huggingface.co/{name}/" in sources, name


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.parent.relative_to(FIXTURES).as_posix())
def test_fixture_matches_automodel_on_meta(path):
    m = from_config(str(path))
    config = transformers.AutoConfig.from_pretrained(path.parent)
    with torch.device("meta"):
        module = transformers.AutoModel.from_config(config)
    assert_matches(m, module)
