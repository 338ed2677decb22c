"""A sub-config a config.json gives without some fields, read as transformers reads it: built with the sub-config
class's own defaults and rules, not the parent's default sub-config.  An encoder–decoder's default decoder is a
decoder with cross-attention, but a decoder dict that does not say so builds a plain BERT; GOT-OCR2's default
language model has 1,024 wide layers, but a ``text_config`` that leaves the width out is a Qwen2 config, 4,096 wide;
a Llama ``text_config`` without ``head_dim`` computes it from its own width and heads.  Each file is hand-written
(the sub-config dicts leave those fields out) and compared with the model transformers builds on the meta device
from that very file (``AutoConfig.from_pretrained`` of its folder), and again as ``save_pretrained`` writes it."""

import copy
import json

import pytest
import torch
import transformers

from symparams.families import inferred
from tests.reference.cli_runner import command
from tests.reference.inferred_builds import AUTO, built

pytestmark = pytest.mark.crosscheck

SIDE = {"vocab_size": 99, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16}

#: (type, class, a hand-written config.json whose sub-config leaves out fields the parent's default sets otherwise,
#: what the old reading of the parent's defaults got wrong)
CASES = [
    ("encoder-decoder", "seq2seq-lm",
     {"encoder": SIDE, "decoder": {**SIDE, "is_decoder": True}}, "cross-attention the decoder does not have"),
    ("got_ocr2", "causal-lm",
     {"text_config": {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2}},
     "Qwen2's 151,936 tokens, not the default's 151,860, and 32 layers, not 24"),
    ("qwen3_asr", "base",
     {"text_config": {"vocab_size": 1000, "num_hidden_layers": 2}}, "4,096 wide, not 2,048"),
    ("ultravbert", "base",
     {"vision_config": {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
                        "num_hidden_layers": 2}}, "SigLIP's pooling head, which the default leaves out"),
    ("vibevoice_asr", "base",
     {"semantic_tokenizer_encoder_config": {"num_filters": 8}}, "64 wide, not 128"),
    ("omniasr", "base",
     {"text_config": {"hidden_size": 64}}, "head_dim 64 // 32 = 2 and 32 key/value heads, not 512 and 8"),
]


def from_file(config: dict, cls: str, tmp_path) -> int:
    """The parameters of what transformers builds from ``config`` written as a config.json, read back as
    ``from_pretrained`` reads it."""
    (tmp_path / "config.json").write_text(json.dumps(config))
    hf = transformers.AutoConfig.from_pretrained(tmp_path)
    with torch.device("meta"):
        model = getattr(transformers, AUTO[cls]).from_config(hf)
    return sum(p.numel() for p in model.parameters())


def _config(model_type: str, given: dict) -> dict:
    return {"model_type": model_type, **copy.deepcopy(given)}


@pytest.mark.parametrize("model_type, cls, given, wrong", CASES, ids=[c[0] for c in CASES])
def test_a_sub_config_given_without_a_field_takes_its_class_default(model_type, cls, given, wrong, tmp_path):
    config = _config(model_type, given)
    truth = from_file(config, cls, tmp_path)
    assert built(config, cls) == truth  # AutoConfig.for_model reads the dict as the file is read
    head = None if cls == "base" else cls
    assert inferred.model(config, head=head).count == truth, wrong


@pytest.mark.parametrize("model_type, cls, given, wrong", CASES, ids=[c[0] for c in CASES])
def test_the_file_save_pretrained_writes_counts_the_same(model_type, cls, given, wrong, tmp_path):
    hf = transformers.AutoConfig.for_model(model_type, **copy.deepcopy(given))
    hf.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    head = None if cls == "base" else cls
    assert inferred.model(saved, head=head).count == from_file(saved, cls, tmp_path)


def test_a_decoder_given_without_is_decoder_is_no_decoder(tmp_path):
    """The formula was fitted on decoders (a BERT with cross-attention must be one): a decoder dict that leaves
    ``is_decoder`` out is a plain BERT to transformers, 11,299 parameters, not the 11,603 of the default's decoder
    with cross-attention.  The formula refuses it by name; ``count`` builds it."""
    config = _config("encoder-decoder", {"encoder": SIDE, "decoder": SIDE})
    with pytest.raises(inferred.OutsideConditions, match="decoder.is_decoder is false"):
        inferred.model(config, head="seq2seq-lm")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    status, out, err = command("count", "--config", str(path), "--head", "seq2seq-lm", "--json")
    assert status == 0, err
    assert json.loads(out)["total"] == from_file(config, "seq2seq-lm", tmp_path) == 11_299


def test_a_sub_config_left_out_altogether_still_takes_the_parent_default():
    """No ``decoder`` at all: transformers builds the parent's default decoder, with cross-attention."""
    config = {"model_type": "encoder-decoder", "encoder": {"vocab_size": 99}}
    assert inferred.model(config, head="seq2seq-lm").count == built(config, "seq2seq-lm")


def test_a_width_the_given_sub_config_computes_follows_its_fields():
    """OmniASR's Llama ``text_config`` without ``head_dim``: transformers computes it as ``hidden_size //
    num_attention_heads`` (2 here; the parent's default holds 512 whatever the width), and the model says so, for
    the head-count proof to reason with."""
    from symparams.core.symbols import A, D, H

    m = inferred.model(_config("omniasr", {"text_config": {"hidden_size": 64}}))
    assert m.values[D] == 2
    assert {f.symbol: f.expr for f in m.family.follows}[D] == H / A


def test_a_layer_pattern_the_given_sub_config_takes_otherwise_is_refused_by_name():
    """NeMo SpeechLM's NemotronH ``text_config`` without its layer pattern takes NemotronH's own (1,653,757,848
    parameters with 1,000 tokens), not the default's the formula was fitted with (which read 16,570,280,088)."""
    config = _config("nemo_speechlm", {"text_config": {"vocab_size": 1000}})
    with pytest.raises(inferred.OutsideConditions, match="key text_config.layers_block_type is left out"):
        inferred.model(config)
    assert built(config, "base") == 1_653_757_848
