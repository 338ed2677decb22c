"""Article figures beyond the articles' own claims.

Each figure an article states is its own test in ``tests/documents/test_article_claims.py``
(the right number written there by hand, the wrong ones named).  This file
keeps what the claims do not cover: the exact figure behind "about 340M",
and how the article's accounting relates to the full model.
"""

from symparams import model

ARTICLE_TRANSFORMER = model("transformer-base-article")


def test_bert_large_is_335_141_888_the_articles_about_340m():
    # BERT-large ("340M" in Devlin et al.): 24·(12·1024² + 13·1024) layers, (30522 + 512 + 2)·1024 + 2·1024
    # embeddings, 1024² + 1024 pooler; BertModel agrees (tests/families/test_bert_transformer.py)
    by_hand = 24 * (12 * 1024**2 + 13 * 1024) + (30522 + 512 + 2) * 1024 + 2 * 1024 + 1024**2 + 1024
    assert model("bert-large").count == by_hand == 335_141_888


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
