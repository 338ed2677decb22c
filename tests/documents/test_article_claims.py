"""The articles' claims as data (symparams.documents.articles), checked one figure per test.

The right figures are written here by hand (from the articles' own line items
and plain arithmetic), not read from the program: the data in articles.py
says what each article claims and which component it means; this file says
what the right number is.
"""

from __future__ import annotations

import pytest

from symparams import model
from symparams.documents.articles import ARTICLES, check, notes_for, related_for

# (article key, claim key) → the right figure
RIGHT = {
    ("bert-parameter-count", "token_segment_position"): 23_835_648,   # (30522+2+512)·768
    ("bert-parameter-count", "embedding_layer_norm"): 1_536,           # 768·2
    ("bert-parameter-count", "embeddings"): 23_837_184,
    ("bert-parameter-count", "qkv"): 1_771_776,                        # 12·3·(768·64+64)
    ("bert-parameter-count", "multi_head_attention"): 2_362_368,       # + 768·768 + 768
    ("bert-parameter-count", "add_norm"): 1_536,
    ("bert-parameter-count", "feed_forward"): 4_722_432,               # 768·3072+3072+3072·768+768
    ("bert-parameter-count", "encoder"): 85_054_464,                   # 12·(2362368+1536+4722432+1536)
    ("bert-parameter-count", "pooling"): 590_592,
    ("bert-parameter-count", "total"): 109_482_240,
    ("bert-architecture-and-parameters", "total"): 109_482_240,
    ("bert-architecture-and-parameters", "trainable"): 109_482_240,
    ("bert-architecture-and-parameters", "about_110m"): 109_482_240,
    ("bert-architecture-and-parameters", "word_embeddings"): 23_440_896,      # 30522·768
    ("bert-architecture-and-parameters", "word_embeddings_share"): "21.41%",
    ("bert-architecture-and-parameters", "position_embeddings"): 393_216,     # 512·768
    ("bert-architecture-and-parameters", "position_embeddings_share"): "0.36%",
    ("bert-architecture-and-parameters", "token_type_embeddings"): 1_536,
    ("bert-architecture-and-parameters", "token_type_embeddings_share"): "0.0014%",
    ("bert-architecture-and-parameters", "embedding_layer_norm"): 1_536,
    ("bert-architecture-and-parameters", "embedding_layer_norm_share"): "0.0014%",
    ("bert-architecture-and-parameters", "embeddings"): 23_837_184,
    ("bert-architecture-and-parameters", "embeddings_share"): "21.77%",
    ("bert-architecture-and-parameters", "word_in_embeddings"): "98.34%",
    ("bert-architecture-and-parameters", "attention_with_norm"): 2_363_904,   # 4·768²+6·768
    ("bert-architecture-and-parameters", "ffn_with_norm"): 4_723_968,         # 2,359,296·2+3,072+768+1,536
    ("bert-architecture-and-parameters", "one_layer"): 7_087_872,             # 2,363,904 + 4,723,968
    ("bert-architecture-and-parameters", "encoder"): 85_054_464,              # 12 · 7,087,872
    ("bert-architecture-and-parameters", "encoder_share"): "77.69%",
    ("bert-architecture-and-parameters", "attention_12_layers"): 28_366_848,  # 12 · 2,363,904
    ("bert-architecture-and-parameters", "ffn_12_layers"): 56_687_616,        # 12 · 4,723,968
    ("bert-architecture-and-parameters", "attention_share_of_layer"): "33.35%",
    ("bert-architecture-and-parameters", "ffn_share_of_layer"): "66.65%",
    ("bert-architecture-and-parameters", "pooler"): 590_592,
    ("bert-architecture-and-parameters", "pooler_share"): "0.54%",
    ("transformer-parameter-count", "word_embedding"): 16_384_000,            # 32000·512
    ("transformer-parameter-count", "positions"): 262_144,                    # 512·512
    ("transformer-parameter-count", "encoder"): 18_874_368,                   # 6·(4·512²+2·512·2048)
    ("transformer-parameter-count", "decoder"): 25_165_824,                   # 6·(8·512²+2·512·2048)
    ("transformer-parameter-count", "output_untied"): 16_384_000,
    ("transformer-parameter-count", "total"): 60_686_336,                     # the four parts added
}

#: the figures the articles get wrong
WRONG = {("bert-architecture-and-parameters", k) for k in
         ("ffn_with_norm", "one_layer", "encoder", "encoder_share", "ffn_12_layers", "attention_share_of_layer",
          "ffn_share_of_layer")}

CLAIMS = [(a, c) for a in ARTICLES for c in a.claims]


def test_every_claim_has_its_right_figure_written_here():
    assert {(a.key, c.key) for a, c in CLAIMS} == set(RIGHT)


@pytest.mark.parametrize("article,claim", CLAIMS, ids=[f"{a.key}:{c.key}" for a, c in CLAIMS])
def test_claim(article, claim):
    result = check(claim, model(article.preset))
    right = RIGHT[(article.key, claim.key)]
    assert result.right_text == (right if isinstance(right, str) else f"{right:,}")
    if claim.approx:
        assert result.status == "approx"
    elif (article.key, claim.key) in WRONG:
        assert result.status == "wrong" and result.claimed_text != result.right_text
    else:
        assert result.status == "ok" and result.claimed_text == result.right_text


def test_notes_apply_to_the_reproducing_presets_only():
    assert [n.article.key for n in notes_for(model("bert-base"))] == ["bert-parameter-count",
                                                                      "bert-architecture-and-parameters"]
    assert [n.article.key for n in notes_for(model("transformer-base-article"))] == ["transformer-parameter-count"]
    for name, keys in (("bert-base", {"L": 24}), ("bert-large", {}), ("transformer-base", {}),
                       ("transformer-base-article", {"tie": False})):
        assert notes_for(model(name, **keys)) == ()
    assert notes_for(model("bert-base", head="masked-lm")) == ()


def test_the_same_model_from_a_family_reproduces_the_article():
    assert len(notes_for(model("bert", V=30522, P=512, S=2, H=768, L=12, A=12, r=4))) == 2


def test_transformer_base_points_to_the_article_accounting():
    (r,) = related_for(model("transformer-base"))
    assert (r["claimed_en"], r["claimed_zh"], r["preset"], r["preset_total"], r["total"]) == \
        ("about 60M", "大约为60M", "transformer-base-article", 60_686_336, 63_606_784)
    assert r["difference"] == 2_920_448
