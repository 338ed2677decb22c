"""Article figures beyond the articles' own claims.

Each figure an article states is its own test in ``tests/test_article_claims.py``
(the right number written there by hand, the wrong ones named).  This file
keeps what the claims do not cover: properties of the breakdown, and how
the article's accounting relates to the full model.
"""

from symparams import model

BERT = model("bert-base")
ARTICLE_TRANSFORMER = model("transformer-base-article")


def test_bert_shares_sum_to_100_percent_exactly():
    assert sum(s for _, _, s in BERT.breakdown()) == 1


def test_bert_large_is_about_340m():
    assert 330_000_000 < model("bert-large").count < 340_000_000


def test_transformer_article_total_is_its_four_parts_and_a_tied_output():
    # The article adds embedding, positions, encoder and decoder ("about 60M"); the tied output adds 0.
    assert ARTICLE_TRANSFORMER.count == 16_384_000 + 262_144 + 18_874_368 + 25_165_824
    assert ARTICLE_TRANSFORMER.components["output"] == 0
    untied = ARTICLE_TRANSFORMER.with_switches(tie=False)
    assert untied.count - ARTICLE_TRANSFORMER.count == 16_384_000


def test_transformer_base_with_biases_and_layer_norm_is_larger_than_the_article():
    # The article's accounting leaves out the biases and LayerNorm parameters of every encoder layer,
    # and the paper's vocabulary is 37,000, not 32,000.
    full = model("transformer-base")
    layer = full.evaluate(full.block("encoder.layers").count)
    article_layer = ARTICLE_TRANSFORMER.evaluate(ARTICLE_TRANSFORMER.block("encoder.layers").count)
    assert layer - article_layer == 4 * 512 + 2048 + 512 + 2 * 1024
