"""The figures of the three source articles, each as its own test.

Where an article's arithmetic is wrong, the test states the article's figure
and asserts the right one (and that they differ), so the discrepancy is
visible in the suite, not hidden.
"""

import sympy as sp

from symparams import model
from symparams.format import percent

BERT = model("bert-base")
ARTICLE_TRANSFORMER = model("transformer-base-article")


def part(m, path):
    return m.evaluate(m.block(path).total)


def layer_part(m, *paths):
    return sum(m.evaluate(m.block(p).count) for p in paths)


# -- bert-parameter-count.zh.txt ------------------------------------------------

def test_bert_token_segment_position_embeddings_23835648():
    # (30522+2+512)*768=23835648
    assert part(BERT, "embeddings.word_embeddings") + part(BERT, "embeddings.position_embeddings") \
        + part(BERT, "embeddings.token_type_embeddings") == 23_835_648


def test_bert_embedding_layer_norm_is_768_times_2():
    assert part(BERT, "embeddings.LayerNorm") == 768 * 2


def test_bert_embeddings_23837184():
    assert BERT.components["embeddings"] == 23_837_184


def test_bert_qkv_of_all_heads_1771776():
    # 12*3*(768*(768/12)+768/12)=1771776
    assert layer_part(BERT, "encoder.layer.attention.self") == 1_771_776


def test_bert_multi_head_attention_2362368():
    assert layer_part(BERT, "encoder.layer.attention.self", "encoder.layer.attention.output.dense") == 2_362_368


def test_bert_feed_forward_4722432():
    assert layer_part(BERT, "encoder.layer.intermediate", "encoder.layer.output.dense") == 4_722_432


def test_bert_encoder_85054464():
    # 12*(2362368+1536+4722432+1536)=85054464
    assert BERT.components["encoder"] == 85_054_464


def test_bert_pooler_590592():
    assert BERT.components["pooler"] == 590_592


def test_bert_base_total_109482240():
    assert BERT.count == 109_482_240


# -- bert-architecture-and-parameters.zh.txt ------------------------------------

def test_bert_total_equals_learnable_109482240():
    assert BERT.count == BERT.trainable == 109_482_240


def share(value):
    return percent(sp.Rational(value, BERT.count))


def test_bert_embedding_table_figures_and_shares():
    assert (part(BERT, "embeddings.word_embeddings"), share(part(BERT, "embeddings.word_embeddings"))) \
        == (23_440_896, "21.41%")
    assert (part(BERT, "embeddings.position_embeddings"),
            share(part(BERT, "embeddings.position_embeddings"))) == (393_216, "0.36%")
    assert (part(BERT, "embeddings.token_type_embeddings"),
            share(part(BERT, "embeddings.token_type_embeddings"))) == (1_536, "0.0014%")
    assert share(BERT.components["embeddings"]) == "21.77%"
    assert percent(sp.Rational(23_440_896, 23_837_184)) == "98.34%"  # word embeddings within the layer


def test_bert_attention_with_layer_norm_2363904():
    assert layer_part(BERT, "encoder.layer.attention") == 2_363_904
    assert 12 * 2_363_904 == BERT.evaluate(12 * BERT.block("encoder.layer.attention").count) == 28_366_848


def test_bert_feed_forward_with_layer_norm_article_says_4717824_but_it_is_4723968():
    article = 4_717_824  # the article dropped 6,144 (= 2 × 3072)
    ours = layer_part(BERT, "encoder.layer.intermediate", "encoder.layer.output")
    assert ours == 4_723_968 != article


def test_bert_one_layer_article_says_7081728_but_it_is_7087872():
    article = 7_081_728
    ours = BERT.evaluate(BERT.block("encoder.layer").count)
    assert ours == 7_087_872 != article


def test_bert_encoder_article_says_84980736_but_it_is_85054464():
    article = 84_980_736
    assert BERT.components["encoder"] == 85_054_464 != article


def test_bert_encoder_share_article_says_77_62_but_it_is_77_69():
    assert share(BERT.components["encoder"]) == "77.69%" != "77.62%"


def test_bert_ffn_of_12_layers_article_says_56613888_but_it_is_56687616():
    ffn = 12 * layer_part(BERT, "encoder.layer.intermediate", "encoder.layer.output")
    assert ffn == 56_687_616 != 56_613_888


def test_bert_attention_vs_ffn_shares_article_says_33_38_and_66_62():
    layer = BERT.evaluate(BERT.block("encoder.layer").count)
    attention = layer_part(BERT, "encoder.layer.attention")
    assert percent(sp.Rational(attention, layer)) == "33.35%" != "33.38%"
    assert percent(sp.Rational(layer - attention, layer)) == "66.65%" != "66.62%"


def test_bert_pooler_share_0_54():
    assert share(BERT.components["pooler"]) == "0.54%"


def test_bert_shares_sum_to_100_percent_exactly():
    assert sum(s for _, _, s in BERT.breakdown()) == 1


def test_bert_large_is_about_340m():
    assert 330_000_000 < model("bert-large").count < 340_000_000


# -- transformer-parameter-count.zh.txt (weights only: no biases, no LayerNorm) ------

def test_transformer_word_embedding_16384000():
    assert part(ARTICLE_TRANSFORMER, "embeddings.shared") == 16_384_000


def test_transformer_learned_positions_262144():
    assert part(ARTICLE_TRANSFORMER, "embeddings.positions") == 262_144


def test_transformer_encoder_18874368():
    assert ARTICLE_TRANSFORMER.components["encoder"] == 18_874_368


def test_transformer_decoder_25165824():
    assert ARTICLE_TRANSFORMER.components["decoder"] == 25_165_824


def test_transformer_output_layer_is_16_38_million_when_not_shared():
    untied = ARTICLE_TRANSFORMER.with_switches(tie=False)
    assert untied.components["output"] == 16_384_000
    assert untied.count - ARTICLE_TRANSFORMER.count == 16_384_000


def test_transformer_base_total_about_60m_is_60686336():
    # The article adds embedding, positions, encoder and decoder ("about 60M").
    assert ARTICLE_TRANSFORMER.count == 16_384_000 + 262_144 + 18_874_368 + 25_165_824 == 60_686_336
    assert ARTICLE_TRANSFORMER.components["output"] == 0  # tied: not counted again


def test_transformer_base_with_biases_and_layer_norm_is_larger_than_the_article():
    # The article's accounting leaves out 39,936 bias and LayerNorm parameters per encoder layer,
    # and the paper's vocabulary is 37,000, not 32,000.
    full = model("transformer-base")
    layer = full.evaluate(full.block("encoder.layers").count)
    article_layer = ARTICLE_TRANSFORMER.evaluate(ARTICLE_TRANSFORMER.block("encoder.layers").count)
    assert layer - article_layer == 4 * 512 + 2048 + 512 + 2 * 1024
