"""Every sentence a document prints holds for the model it is printed with, in both languages."""

import re

import pytest

from symparams import model
from symparams.core.symbols import L_f
from symparams.documents.render import render
from tests.documents.test_head_count_section import section
from tests.reference.documents import document


def md(name, lang="en", **kw):
    return render(model(name, **kw), format="md", lang=lang) if kw else document(name, "md", lang)


def rules_paragraph(text: str, lang: str) -> str:
    lead = "A few rules do all the counting." if lang == "en" else "整个计算只用到下面几条规则。"
    return next(line for line in text.splitlines() if line.startswith(lead))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_rules_are_the_ones_the_model_needs(lang):
    bert, t5, qwen, mixtral = (rules_paragraph(md(n, lang), lang)
                               for n in ("bert-base", "t5-small", "qwen2.5-7b", "mixtral-8x7b"))
    layer_norm, rms = ("LayerNorm over", "RMSNorm") if lang == "en" else ("LayerNorm，有缩放", "RMSNorm")
    no_bias, some_bias = (("no linear layer of this model has biases", "where it has them") if lang == "en"
                          else ("都不带偏置", "带偏置的还有"))
    assert layer_norm in bert and rms not in bert and no_bias not in bert  # BERT: biases and LayerNorm
    assert rms in t5 and layer_norm not in t5 and no_bias in t5  # T5: no biases anywhere, RMSNorm only
    assert some_bias in qwen  # Qwen 2: biases on Q, K, V only
    fused = "fused tensor" if lang == "en" else "融合张量"
    assert fused in mixtral and fused not in bert  # where the experts' [N_e, out, in] tensors are turned round


def test_shapes_count_every_tensor_they_stand_for():
    text = md("bert-base")
    assert "Shape $2 \\times [H] = 2 \\times [768]$" in text  # a LayerNorm's γ and β
    assert "Shape $3 \\times [H, A \\cdot \\frac{H}{A}] = 3 \\times [768, 768]$" in text  # Q, K and V
    assert "Shape $[H] = [768]$" not in text


def test_a_count_in_a_is_not_told_as_heads_that_cancel():
    text = md("t5-small")
    assert "B \\cdot A = A \\cdot B" not in text and "$$A \\cdot D \\cdot H$$" not in text
    assert "Written per head" not in text  # T5's heads are D wide: no split of H to cancel
    assert "Every part written per head" not in text
    assert "Written per head" in md("bert-base")


@pytest.mark.parametrize("name", ["llama-3-8b", "gpt2", "mistral-7b"])
def test_a_decoder_only_model_is_not_described_as_encoder_decoder(name):
    assert "encoder–decoder" not in md(name) and "编码器–解码器" not in md(name, "zh")


def test_an_encoder_decoder_layer_says_it_attends_to_the_encoder():
    assert "attention over the encoder's output" in md("t5-small")
    assert "对编码器输出的注意力" in md("t5-small", "zh")


def test_the_chinese_article_is_quoted_in_its_own_words():
    text = md("transformer-base-article", "zh")
    assert "大约为60M" in text and "大约 16.38 百万" in text
    assert "about 60M" not in text and "million" not in text
    assert "原文写作“大约为60M”" in md("transformer-base", "zh")
    assert "about 60M" in md("transformer-base-article")


def test_the_article_remarks_say_what_its_accounting_leaves_out():
    text = md("transformer-base-article")
    assert "English–French model uses 32,000 word pieces" in text
    assert "sinusoidal positional encodings, which hold no parameters" in text
    assert "leaves out the biases and the LayerNorms" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_tied_table_is_counted_once_and_not_as_a_hypothetical(lang):
    text = md("t5-small", lang)
    assert "untied it would add" not in text and "若不共享" not in text
    once = "are counted once, there" if lang == "en" else "只在那里算一次"
    assert len(re.findall(once, text)) == 2  # the encoder's and the decoder's embed_tokens, tied to shared


def test_redoing_a_document_for_other_sizes_is_told_once_in_the_guide_it_links():
    for name, lang in (("bert-base", "en"), ("llama-3-8b", "zh")):
        text = md(name, lang)
        assert "--set L=24" not in text and "KEY=VALUE" not in text and "(documents.md)" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_slip_is_listed_once_with_the_figures_it_carries_into(lang):
    text = md("bert-base", lang)
    errata = text.split("\n## 10.")[1].split("\n## 11.")[0]
    bullets = [line for line in errata.splitlines() if line.startswith("- ") and "**" in line]  # a figure put right
    assert len(bullets) == 1  # the feed-forward subtotal, 6,144 short; six figures inherit it
    carried = "the slip carries into 6 further figures" if lang == "en" else "这一处错误连带影响了 6 个数字"
    assert carried in bullets[0] and "4,723,968" in bullets[0]
    # the inconsistency, in the article's own numbers
    assert "23,837,184 + 84,980,736 + 590,592 = 109,408,512" in bullets[0]
    assert 23_837_184 + 84_980_736 + 590_592 == 109_408_512 != 109_482_240


def test_the_published_size_is_reconciled_with_the_exact_count():
    # 109,482,240 rounds to 110M at two significant digits (109.48M → 110M)
    assert "Its published size, 110M (Devlin et al. 2019, the BERT paper, section 3), is 109,482,240, rounded to 2 " \
        "significant digits." in md("bert-base")
    # Llama 3 8B is the causal LM: 8,030,261,248 with its untied head (the base model alone is 7,504,924,672);
    # the sentence before it says what the head adds, once: V·H = 128,256 × 4,096
    llama = section(md("llama-3-8b", "zh"), 1)
    assert "它公布的规模 8B（Meta，2024，Meta-Llama-3-8B 的模型说明）是 8,030,261,248（加上 causal-lm 头）" \
        "四舍五入到 1 位有效数字的结果。" in llama
    assert llama.count(f"`lm_head`（$H \\cdot V = {128_256 * 4_096:,}$".replace(",", "{,}")) == 1
    assert llama.count("lm_head") == 1
    # GPT-2's 117M is no accounting of this network: 124,439,808 exact, 123,532,032 the nearest
    gpt2 = md("gpt2")
    assert "117M (Radford et al. 2019" in gpt2 and "is not this count" in gpt2 and "123,532,032" in gpt2
    assert "published size" not in md("bert-base", L=24)  # a variant is not the published model


# -- what holding G/A or A·D fixed does, said of the FLOPs beside the count ------------------------------------

def _meta_count(config) -> int:
    import torch
    import transformers

    with torch.device("meta"):
        built = transformers.AutoModel.from_config(config)
    return sum(p.numel() for p in built.parameters())


@pytest.mark.crosscheck
@pytest.mark.parametrize("lang,like,unlike", [
    ("en", "as for the parameter count", "although the parameter count, held the same way, still depends on $A$"),
    ("zh", "和参数量的情形一样", "而参数量在同样固定时仍与 $A$ 有关")])
def test_the_flops_held_sentence_says_of_the_count_what_transformers_builds(lang, like, unlike):
    """T5 with A·D held: twice the heads of half the width are another count (a relative-position table per
    head); Llama with G/A held: the same count.  The FLOPs sentence of each document must say so."""
    import transformers

    t5 = dict(vocab_size=32128, d_model=512, d_ff=2048, num_layers=6, relative_attention_num_buckets=32)
    assert _meta_count(transformers.T5Config(**t5, num_heads=8, d_kv=64)) != \
        _meta_count(transformers.T5Config(**t5, num_heads=16, d_kv=32))
    llama = dict(vocab_size=128256, hidden_size=512, intermediate_size=1024, num_hidden_layers=2)
    assert _meta_count(transformers.LlamaConfig(**llama, num_attention_heads=8, num_key_value_heads=2)) == \
        _meta_count(transformers.LlamaConfig(**llama, num_attention_heads=16, num_key_value_heads=4))
    t5_text, llama_text = md("t5-small", lang), md("llama-3-8b", lang)
    assert unlike in t5_text and like not in t5_text
    assert like in llama_text and unlike not in llama_text


@pytest.mark.parametrize("lang,identical", [("en", "A stack of identical decoder layers"), ("zh", "结构一致的解码器层")])
def test_a_decoder_of_dense_and_expert_layers_is_not_called_identical(lang, identical):
    """DeepSeek-V3 stacks first_k_dense_replace = 3 dense layers before 58 with experts (its config.json);
    Llama's 32 layers are all alike."""
    deepseek = md("deepseek-v3", lang)
    assert model("deepseek-v3").values[L_f] == 3
    assert identical not in deepseek and identical in md("llama-3-8b", lang)


@pytest.mark.crosscheck
def test_mixtrals_published_46_7b_is_transformers_causal_lm_rounded():
    """Mistral AI announced Mixtral 8x7B at 46.7B parameters: MixtralForCausalLM at its config.json's sizes."""
    import torch
    import transformers

    config = transformers.MixtralConfig(vocab_size=32000, hidden_size=4096, intermediate_size=14336,
                                        num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                                        num_local_experts=8, num_experts_per_tok=2)
    with torch.device("meta"):
        built = transformers.MixtralForCausalLM(config)
    total = sum(p.numel() for p in built.parameters())
    assert round(total, -8) == 46_700_000_000
    assert f"Its published size, 46.7B (Mistral AI 2023, Mixtral of experts), is " \
        f"{total:,} with its causal-lm head" in md("mixtral-8x7b")


def test_the_chinese_published_size_is_spaced_as_chinese_text():
    # a space between a number and a Chinese word, none beside a full-width parenthesis
    assert "是 109,482,240 四舍五入到 2 位有效数字" in md("bert-base", "zh")
    assert "222,903,552（加上 seq2seq-lm 头）四舍五入" in md("t5-base", "zh")


@pytest.mark.parametrize("name", ["llama-3-8b", "flan-t5-base"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_gate_merged_with_the_layer_it_multiplies_is_described_as_the_pair(name, lang):
    # the two entries joined once read "A second widening layer whose output ... multiplies the first. A linear
    # layer that widens ...": the gate described before the layer it is the second of
    text = md(name, lang)
    pair, gate_alone = (("**Gate and up projections**", "A second widening layer") if lang == "en"
                        else ("**门控投影与升维投影**", "另一个升维层"))
    assert pair in text and gate_alone not in text


#: a tiny DeepSeek-V3 (one dense layer, one with experts) whose transformers build the tests below run
TINY_DEEPSEEK = dict(V=32, H=16, L=2, L_f=1, A=2, F=32, F_e=8, N_e=4, k_e=2, R_q=8, R_kv=6, D_n=4, D_r=2, D_v=4)


@pytest.mark.crosscheck
@pytest.mark.parametrize("lang,hedge,rotary", [
    ("en", "where the model has them, position encodings", "as rotary embeddings, which hold no parameters"),
    ("zh", "（如果有的话）位置编码", "以旋转位置编码加入，不含参数")])
def test_an_input_without_a_position_table_is_not_hedged_as_if_it_might_have_one(lang, hedge, rotary):
    """DeepseekV3Model and LlamaModel hold the token table alone: their positions are rotations, a buffer."""
    import transformers

    from tests.reference.hf import build
    from tests.reference.moe import deepseek_config

    llama = transformers.LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, num_key_value_heads=2)
    for built in (build("DeepseekV3Model", deepseek_config(model("deepseek-v3", **TINY_DEEPSEEK))),
                  build("LlamaModel", llama)):
        outside_layers = [name for name, _ in built.named_parameters() if not name.startswith("layers.")]
        assert outside_layers == ["embed_tokens.weight", "norm.weight"]
        assert not list(built.rotary_emb.parameters())
    for name in ("deepseek-v3", "llama-3-8b", "mixtral-8x7b"):
        computation = section(md(name, lang), 2)
        assert hedge not in computation and rotary in computation


@pytest.mark.crosscheck
@pytest.mark.parametrize("lang,latent,keys", [
    ("en", "compressed key/value latent", "keeps each layer's keys and values"),
    ("zh", "压缩后的键值潜在向量", "保存每一层的键和值")])
def test_latent_attention_is_said_to_cache_its_latent_not_keys_and_values(lang, latent, keys):
    """transformers' DeepseekV3Attention writes the normalised kv latent and the rotary key to the cache and
    expands them into keys and values at every step: R_kv + D_r numbers a token and layer, not A·(D_n + D_r + D_v)."""
    import torch
    import transformers

    from tests.reference.moe import deepseek_config

    config = deepseek_config(model("deepseek-v3", **TINY_DEEPSEEK))
    torch.manual_seed(0)
    built, cache, tokens = transformers.DeepseekV3Model(config).eval(), transformers.DynamicCache(config=config), 3
    with torch.no_grad():
        built(input_ids=torch.tensor([[1, 2, 3]]), cache=cache, use_cache=True)
    kept = sum(layer.keys.numel() + layer.values.numel() for layer in cache.layers)
    assert kept == tokens * config.num_hidden_layers * (config.kv_lora_rank + config.qk_rope_head_dim)
    # DeepSeek-V3's config.json: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64, two bytes a number in bf16
    costs = section(md("deepseek-v3", lang), 6)
    assert f"| {61 * (512 + 64) * 2:,} |" in costs
    assert latent in costs and keys not in costs
    assert keys in section(md("llama-3-8b", lang), 6)


@pytest.mark.parametrize("lang,said", [
    ("en", "In the estimate, $n_{\\text{layer}} \\cdot d_{\\text{attn}} = A L \\left(D_{n} + D_{r}\\right)$, WIDTH here"),
    ("zh", "估计式中的 $n_{\\text{layer}} \\cdot d_{\\text{attn}} = A L \\left(D_{n} + D_{r}\\right)$，这里是 WIDTH")])
def test_kaplans_attention_width_is_given_beside_the_estimate_it_makes(lang, said):
    """Kaplan et al.'s 2N + 2·n_layer·s·d_attn for DeepSeek-V3, worked by hand from its config.json: 61 layers of
    128 heads whose queries (and keys) are 128 + 64 wide; N the parameters besides the token table a token uses."""
    width = 61 * 128 * (128 + 64)
    attention = 7168 * 1536 + 1536 * 128 * 192 + 7168 * (512 + 64) + 512 * 128 * (128 + 128) + 128 * 128 * 7168
    norms = 2 * 7168 + 1536 + 512
    used = (61 * (attention + norms) + 3 * 3 * 7168 * 18432 + 58 * ((8 + 1) * 3 * 7168 * 2048 + 7168 * 256)
            + 7168)
    costs = section(md("deepseek-v3", lang), 6)
    assert said.replace("WIDTH", f"{width:,}") in costs
    assert f"{2 * used + 2 * 2048 * width:,}" in costs


@pytest.mark.crosscheck
@pytest.mark.parametrize("lang,hedge,said", [
    ("en", "where the model has them", "and shared experts, which every token uses"),
    ("zh", "模型有共享专家时", "另有共享专家，每个词元都经过")])
def test_a_mixture_with_shared_experts_says_it_has_them_without_a_hedge(lang, hedge, said):
    """DeepseekV3MoE holds shared_experts beside its router and routed experts."""
    from tests.reference.hf import build
    from tests.reference.moe import deepseek_config

    built = build("DeepseekV3Model", deepseek_config(model("deepseek-v3", **TINY_DEEPSEEK)))
    assert {name for name, _ in built.layers[1].mlp.named_children()} == {"gate", "experts", "shared_experts"}
    mixture = next(line for line in section(md("deepseek-v3", lang), 2).splitlines()
                   if line.startswith(("**Mixture of experts**", "**混合专家层**")))
    assert hedge not in mixture and said in mixture
# -- the Chinese documents say what the English ones say, of the model they are printed with ----------------

@pytest.mark.crosscheck
@pytest.mark.parametrize("name", ["gpt2", "mixtral-8x7b"])
def test_a_decoder_only_model_is_not_told_of_an_encoder_in_chinese(name):
    """No encoder comes before these decoders: 'likewise' (同样) and 'as in the encoder' have nothing to refer to."""
    import transformers

    config = {"gpt2": transformers.GPT2Config, "mixtral-8x7b": transformers.MixtralConfig}[name]()
    assert not config.is_encoder_decoder
    text = md(name, "zh")
    assert "解码器由多层结构一致的解码器层堆叠而成" in text
    assert "同样由" not in text and "编码器中的" not in text


@pytest.mark.parametrize("lang,sees_all", [("en", "Every token looks at every other token"),
                                           ("zh", "每个词元都能看到序列中的所有其他词元")])
def test_projections_under_a_causal_mask_are_not_said_to_see_every_token(lang, sees_all):
    # GPT-2's c_attn sits inside its masked self-attention: a token sees only the tokens before it
    gpt2 = md("gpt2", lang)
    masked = "**Masked self-attention**" if lang == "en" else "**掩蔽自注意力**"
    assert masked in gpt2 and sees_all not in gpt2
    assert sees_all in md("t5-base", lang)  # T5's encoder attends both ways


@pytest.mark.crosscheck
def test_t5_is_said_to_have_two_norms_in_some_layers_and_three_in_others():
    """T5's encoder block has two norms (self-attention, feed-forward), its decoder block three (cross-attention
    too): 'each layer does not have two' is false of the encoder; 'not every layer has two' is true."""
    import torch
    import transformers

    config = transformers.T5Config(vocab_size=64, d_model=8, d_kv=4, d_ff=16, num_layers=1, num_heads=2)
    with torch.device("meta"):
        built = transformers.T5Model(config)
    norms = [sum(1 for name, _ in block.named_modules() if name.endswith("layer_norm"))
             for block in (built.encoder.block[0], built.decoder.block[0])]
    assert norms == [2, 3]
    assert "并非每层都恰好有两个归一化" in md("t5-base", "zh") and "每层不是恰好" not in md("t5-base", "zh")
    en = md("t5-base")
    assert "which the forms leave out; and not every one of its layers runs exactly two norms" in en


@pytest.mark.parametrize("lang,premise,one_head", [("en", "Premise.", "One head."), ("zh", "前提。", "单个头。")])
def test_the_premise_and_the_one_head_lead_are_two_paragraphs(lang, premise, one_head):
    from markdown_it import MarkdownIt

    html_text = MarkdownIt("commonmark").render(md("t5-base", lang))
    paragraph = next(p for p in html_text.split("<p>") if premise in p)
    assert one_head not in paragraph


def test_every_published_source_is_named_in_chinese_in_the_chinese_documents():
    from symparams.documents.environment import catalog
    from symparams.families.published import FIGURES

    names = catalog("zh")["published"]["sources"]
    for figures in FIGURES.values():
        for figure in figures:
            assert " et al." not in names[figure.source] and ", the " not in names[figure.source]
    gpt2 = md("gpt2", "zh")
    assert "117M（Radford 等，2019，GPT-2 论文表 2）" in gpt2 and "the GPT-2 paper" not in gpt2
    assert "124M（OpenAI，gpt-2 代码库的 README）" in gpt2
    assert "Mixtral of experts）" not in md("mixtral-8x7b", "zh").replace("《Mixtral of experts》）", "")


@pytest.mark.crosscheck
def test_the_rule_of_thumbs_remainder_is_named_as_the_model_holds_it():
    """The 121,344 parameters outside 12LH² + (V + P)H are GPT2Model's biases and LayerNorms, no other weight:
    the sentence may not say that other weights are among them (BERT's remainder holds its pooler's weight)."""
    import torch
    import transformers

    with torch.device("meta"):
        built = transformers.GPT2Model(transformers.GPT2Config())
    left_out = sum(p.numel() for name, p in built.named_parameters() if name.endswith("bias") or ".ln_" in name
                   or name.startswith("ln_f"))
    assert left_out == 124_439_808 - (12 * 12 * 768**2 + (50257 + 1024) * 768) == 121_344
    assert "没有算进去的 121,344 个参数（0.10%）就是偏置和归一化层的参数。" in md("gpt2", "zh")
    assert "The 121,344 parameters it leaves out (0.10%) are the biases and the normalization layers." in md("gpt2")
    # BERT's pooler is a weight beside its layers and tables: there the sentence names such weights
    with torch.device("meta"):
        bert = transformers.BertModel(transformers.BertConfig())
    pooler = bert.pooler.dense.weight.numel()
    small = sum(p.numel() for name, p in bert.named_parameters() if name.endswith("bias") or "LayerNorm" in name)
    assert small + pooler == 109_482_240 - (12 * 12 * 768**2 + (30522 + 512 + 2) * 768) == 711_936
    assert "是偏置、归一化层，以及各层和嵌入表之外的权重。" in md("bert-base", "zh")


@pytest.mark.crosscheck
@pytest.mark.parametrize("lang,hedges,learned,rotary", [
    ("en", ("where the model has them",), "a table of learned position encodings", "as rotary embeddings"),
    ("zh", ("以及（如果有的话）位置编码", "模型有共享专家时"), "可学习的位置编码表", "旋转位置编码")])
def test_the_input_and_the_experts_are_told_as_this_model_has_them(lang, hedges, learned, rotary):
    """GPT-2 learns a position table (wpe); Mixtral has none (rotary positions) and no shared expert: neither
    document hedges with 'where the model has them'."""
    import torch
    import transformers

    tiny = dict(vocab_size=64, hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,
                num_key_value_heads=1, num_local_experts=2)
    with torch.device("meta"):
        gpt2 = transformers.GPT2Model(transformers.GPT2Config(n_embd=8, n_layer=1, n_head=2, vocab_size=64))
        mixtral = transformers.MixtralModel(transformers.MixtralConfig(**tiny))
    assert any(name.startswith("wpe.") for name, _ in gpt2.named_parameters())
    mixtral_names = [name for name, _ in mixtral.named_parameters()]
    assert not any("position" in name or "shared_expert" in name for name in mixtral_names)
    gpt2_text, mixtral_text = md("gpt2", lang), md("mixtral-8x7b", lang)
    assert learned in gpt2_text and rotary in mixtral_text
    assert not any(hedge in text for hedge in hedges for text in (gpt2_text, mixtral_text))


@pytest.mark.crosscheck
def test_kaplans_estimate_is_not_printed_as_the_count_it_is_made_from():
    """Kaplan et al. 2020, Table 1: C_forward = 2N + 2·n_layer·n_ctx·d_attn, N without the embeddings.  The zh
    sentence read '$N$ 是词嵌入表以外的参数量：这里是 188,986,368 次', the estimate's FLOPs after N's definition."""
    import torch
    import transformers

    with torch.device("meta"):
        built = transformers.GPT2Model(transformers.GPT2Config())
    n = sum(p.numel() for name, p in built.named_parameters() if not name.startswith(("wte.", "wpe.")))
    assert 2 * n + 2 * 12 * 1024 * 768 == 188_986_368
    text = md("gpt2", "zh")
    assert "按这个估计，这里每个词元是 188,986,368 次" in text and "参数量：这里是" not in text


def test_the_chinese_flops_laws_cite_their_papers_in_chinese():
    text = md("gpt2", "zh")
    assert "来源：Narayanan 等，2021，式 (3)。" in text and "来源：Hoffmann 等，2022，附录 F。" in text
    assert "et al." not in text


@pytest.mark.parametrize("lang,erratum", [("en", "OpenAI later wrote that this figure was wrong."),
                                          ("zh", "OpenAI 后来说明这个数字有误。")])
def test_gpt2s_conclusion_tells_that_117m_was_withdrawn(lang, erratum):
    # the gpt-2 repository's README: "our original parameter counts were wrong due to an error"
    text = md("gpt2", lang)
    conclusion = text[text.index("## 10."):]
    assert "117M" in conclusion and erratum in conclusion


@pytest.mark.crosscheck
@pytest.mark.parametrize("lang,shared", [("en", "and shared experts, which every token uses"),
                                         ("zh", "另有共享专家，每个词元都经过")])
def test_a_mixture_with_shared_experts_says_so_and_one_without_does_not(lang, shared):
    import torch
    import transformers

    tiny = dict(vocab_size=64, hidden_size=8, intermediate_size=16, moe_intermediate_size=8, num_hidden_layers=1,
                num_attention_heads=2, num_key_value_heads=2)
    with torch.device("meta"):
        qwen = transformers.Qwen2MoeModel(transformers.Qwen2MoeConfig(**tiny, num_experts=2,
                                                                      shared_expert_intermediate_size=8))
        mixtral = transformers.MixtralModel(transformers.MixtralConfig(**tiny, num_local_experts=2))
    assert any(".shared_expert." in name for name, _ in qwen.named_parameters())
    assert not any("shared" in name for name, _ in mixtral.named_parameters())
    assert shared in md("qwen1.5-moe-a2.7b", lang) and shared in md("deepseek-v3", lang)
    assert shared not in md("mixtral-8x7b", lang)
