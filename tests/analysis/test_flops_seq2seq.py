"""FLOPs and KV cache of the encoder–decoders (the Transformer, T5 / mT5, BART, mBART, Marian, M2M-100, Pegasus)
against PyTorch's FlopCounterMode on tiny real transformers models.

Every family with every head (and the base model) is built on the CPU with eager attention and random
weights; the forward pass and the forward + backward pass are counted by
``torch.utils.flop_counter.FlopCounterMode`` and must equal ``m.flops(s, b)`` exactly, and a forward pass
with ``use_cache=True`` must leave exactly the bytes :func:`~symparams.analysis.cache.cache_per_token`
says (fp32: 4 bytes an element).  By our convention the encoder reads ``s`` positions and the decoder
writes ``s`` (``input_ids`` and ``decoder_input_ids`` of one length), so cross-attention is ``s × s``.

The sizes are tiny (V = 100, H = 32, two layers; s = 7, b = 2 and s = 12, b = 1); nothing here has a sliding
window or local attention.  The classification heads read the decoder's state at each sequence's last
``<eos>``: the inputs end with ``eos_token_id`` (the random ids start at 3, so it occurs once).  M2M-100's config has
``encoder_layerdrop = decoder_layerdrop = 0.05``: in training mode a layer is skipped at random, so the
references here set both to 0 (our count is every layer's).

The last tests write a few presets' FLOPs and cache by hand, from their sizes.
"""

import importlib

import pytest
import sympy as sp
import transformers

from symparams import model
from symparams.analysis.cache import cache_per_token
from symparams.core.symbols import A, A_d, D, H, L, L_d, V
from symparams.families import t5
from tests.reference import flops as ref
from tests.reference.decoders import t5_config
from tests.reference.more_families import seq2seq_config

pytestmark = pytest.mark.crosscheck

#: (s, b) of each FLOPs comparison, two lengths and two batch sizes (a term in s² is not one in s); the caches are
#: compared at the first
RUNS = ((7, 2), (12, 1))
SEQ, BATCH = RUNS[0]

SEQ2SEQ = ("bart", "mbart", "marian", "m2m_100", "pegasus")

#: tiny sizes of the BART-like families (M2M-100's positions are a buffer: no P)
TINY = dict(V=100, H=32, L=2, A=4, r=2, P=40)


def classes(family):
    return importlib.import_module(f"symparams.families.{family}").CLASSES


def tiny(family, head=None, switches=None, **extra):
    """A tiny ``family`` model: TINY sizes and ``extra``, but those its tree (the decoder alone, or the
    decoder's own L_d, A_d, r_d) does not use."""
    switches = switches or {}
    used = {s.name for s in model(family, head=head, **switches).symbols}
    values = {k: v for k, v in {**TINY, **extra}.items() if k in used}
    return model(family, head=head, **switches, **values)


def check(m, cls_name, config, *, encoder=True, decoder=True, cache=True):
    """FlopCounterMode's forward and training FLOPs at the first ``(s, b)`` of RUNS, its forward FLOPs at the
    second, and (``cache``) the cache's bytes at the first, equal ours for ``m``."""
    module = ref.real(cls_name, config)
    (seq, batch), (seq_2, batch_2) = RUNS
    forward, training = ref.counted(module, _inputs(m, config, seq, batch, encoder=encoder, decoder=decoder))
    f = m.flops(s=seq, b=batch)
    assert (f.forward, f.training) == (forward, training), f.by_kind
    assert f.training == 3 * f.forward  # every term is a product of two tensors that need gradients
    inputs = _inputs(m, config, seq_2, batch_2, encoder=encoder, decoder=decoder)
    assert m.flops(s=seq_2, b=batch_2).forward == ref.forward_counted(module, inputs)  # training is 3 × it
    own, cross = cache_per_token(m.tree)
    if not cache:
        return
    inputs = _inputs(m, config, SEQ, BATCH, encoder=encoder, decoder=decoder)
    if ref._takes_cache(module):
        expected = tuple(4 * SEQ * BATCH * int(m.evaluate(e)) for e in (own, cross))
        assert ref.cache_bytes(module, inputs) == expected
    else:  # T5ForTokenClassification: the encoder alone caches nothing
        assert (own, cross) == (0, 0)


def _inputs(m, config, seq, batch, *, encoder, decoder) -> dict:
    vocab = config.vocab_size
    decoder_vocab = min(vocab, getattr(config, "decoder_vocab_size", None) or vocab)
    if not encoder:  # a *ForCausalLM: the decoder alone reads input_ids
        return dict(input_ids=ref.token_ids(decoder_vocab, seq, batch))
    ids = ref.token_ids(vocab, seq, batch)
    if m.head == "sequence-classification":
        ids[:, -1] = config.eos_token_id
    inputs = dict(input_ids=ids)
    if decoder:
        inputs["decoder_input_ids"] = ref.token_ids(decoder_vocab, seq, batch, seed=2)
    return inputs


class _WithVocabulary:
    """``m`` with a value for V: an unshared, tied MarianForCausalLM scores the decoder's V_d rows, so V is no
    symbol of its tree, but its config still has a ``vocab_size`` (the encoder's, which it does not build)."""

    def __init__(self, m, vocab=TINY["V"]):
        self.values, self.switches = {**m.values, V: sp.Integer(vocab)}, m.switches


def seq2seq_reference(m, family):
    data = seq2seq_config(m if V in m.symbols else _WithVocabulary(m), family)
    data.update(encoder_layerdrop=0.0, decoder_layerdrop=0.0)  # M2M-100 would skip layers at random
    return transformers.CONFIG_MAPPING[family].from_dict(data)


def check_seq2seq(m, family):
    causal = m.head == "causal-lm"
    config = seq2seq_reference(m, family)
    # transformers sizes a *ForCausalLM's cache by num_hidden_layers, which reads encoder_layers: with more
    # decoder layers than encoder layers its forward pass with use_cache=True fails (IndexError), so the
    # cache is checked only where it can be built
    cache = not causal or config.decoder_layers <= config.encoder_layers
    check(m, classes(family)[m.head][0], config, encoder=not causal, cache=cache)


# -- BART, mBART, Marian, M2M-100, Pegasus: every head ----------------------------------------------------

@pytest.mark.parametrize("family,head", [(f, h) for f in SEQ2SEQ for h in classes(f)])
def test_every_head_matches_flop_counter_and_cache(family, head):
    check_seq2seq(tiny(family, head), family)


@pytest.mark.parametrize("head", [None, "seq2seq-lm", "sequence-classification", "causal-lm"])
@pytest.mark.parametrize("switches,values", [
    (dict(split_layers=True), dict(L_d=1)),
    (dict(split_heads=True), dict(A_d=2)),
    (dict(split_ffn=True), dict(r_d=3)),
    (dict(split_layers=True, split_heads=True, split_ffn=True, tie=False), dict(L_d=3, A_d=8, r_d=1)),
])
def test_bart_decoder_of_its_own_sizes_matches(head, switches, values):
    check_seq2seq(tiny("bart", head, switches, **values), "bart")


@pytest.mark.parametrize("head", [None, "seq2seq-lm", "causal-lm"])
@pytest.mark.parametrize("share,tie", [(True, False), (False, True), (False, False)])
def test_marian_own_decoder_vocabulary_matches(head, share, tie):
    check_seq2seq(tiny("marian", head, dict(share=share, tie=tie), V_d=90), "marian")


@pytest.mark.parametrize("family", ["pegasus", "m2m_100", "mbart"])
def test_decoder_heads_of_their_own_match(family):
    check_seq2seq(tiny(family, "seq2seq-lm", dict(split_heads=True, split_layers=True), A_d=8, L_d=3), family)


# -- the Transformer: MarianMTModel, whose tied LM head costs its matmul ---------------------------------

def transformer_reference(m):
    v = {s.name: int(x) for s, x in m.values.items()}
    inter = int(v["r"] * v["H"])
    return transformers.MarianConfig(
        vocab_size=v["V"], max_position_embeddings=v["P"], d_model=v["H"], encoder_layers=v["L"],
        decoder_layers=v["L"], encoder_attention_heads=v["A"], decoder_attention_heads=v["A"],
        encoder_ffn_dim=inter, decoder_ffn_dim=inter, pad_token_id=0, decoder_start_token_id=0, eos_token_id=0,
        forced_eos_token_id=0)


def test_transformer_matches_marian_mt_model():
    m = model("transformer", V=100, P=40, H=32, L=2, A=4, r=2)
    check(m, "MarianMTModel", transformer_reference(m))


def test_transformer_flops_do_not_depend_on_biases_norms_or_positions():
    """Bias adds, norms and position tables are no matmuls: the article's weights-only variant costs the
    same as MarianMTModel."""
    sizes = dict(V=100, P=40, H=32, L=2, A=4, r=2)
    full = model("transformer", **sizes)
    bare = model("transformer", bias=False, layernorm=False, positions="learned", tie=False, **sizes)
    assert bare.flops(s=SEQ, b=BATCH).forward == full.flops(s=SEQ, b=BATCH).forward
    check(bare, "MarianMTModel", transformer_reference(full))


# -- T5 and mT5 ------------------------------------------------------------------------------------------

T5_TINY = dict(V=100, H=32, L=2, A=4, D=8, F=48, B=8)


def check_t5(m, cls_name, config):
    check(m, cls_name, config, decoder=m.head != "token-classification")


T5_VARIANTS = {"relu": {}, "gated": dict(gated=True, tie=False), "split": dict(split_layers=True)}


@pytest.mark.parametrize("head,variant", [(h, v) for v in T5_VARIANTS for h in t5.CLASSES
                                          if not (v == "split" and h == "token-classification")])  # no decoder
def test_t5_every_head_matches_flop_counter_and_cache(head, variant):
    switches = T5_VARIANTS[variant]
    m = model("t5", head=head, **switches, **(dict(T5_TINY, L_d=3) if variant == "split" else T5_TINY))
    check_t5(m, t5.CLASSES[head][0], t5_config(m))


def test_t5_heads_wider_than_h_over_a_match():
    """D is its own size: A·D = 96 ≠ H = 32."""
    m = model("t5", head="seq2seq-lm", **dict(T5_TINY, A=6, D=16))
    check_t5(m, "T5ForConditionalGeneration", t5_config(m))


MT5_CLASSES = {None: "MT5Model", "seq2seq-lm": "MT5ForConditionalGeneration",
               "sequence-classification": "MT5ForSequenceClassification",
               "token-classification": "MT5ForTokenClassification", "question-answering": "MT5ForQuestionAnswering"}


@pytest.mark.parametrize("head", list(MT5_CLASSES))
def test_mt5_config_every_head_matches(head):
    data = dict(model_type="mt5", vocab_size=100, d_model=32, d_kv=8, d_ff=48, num_layers=2, num_heads=4,
                relative_attention_num_buckets=8, tie_word_embeddings=False)
    m = model(data, head=head)
    assert m.family.name == "t5" and m.switches["gated"]
    check_t5(m, MT5_CLASSES[head], transformers.MT5Config.from_dict(dict(data)))


# -- presets by hand ---------------------------------------------------------------------------------------

def attention(s, b, heads, width):
    """One attention module: Q·Kᵀ and softmax(·)·V, each 2·b·heads·s²·width."""
    return 2 * 2 * b * heads * s * s * width


def test_bart_base_seq2seq_lm_by_hand():
    s, b, h, layers, vocab = 128, 1, 768, 6, 50265
    encoder_layer = 4 * h * h + 2 * h * 4 * h            # Q, K, V, O and the FFN (4H)
    decoder_layer = 8 * h * h + 2 * h * 4 * h            # self- and cross-attention, FFN
    weights = layers * (encoder_layer + decoder_layer) + h * vocab  # the tied LM head still multiplies
    expected = 2 * b * s * weights + 3 * layers * attention(s, b, 12, h // 12)
    f = model("bart-base", head="seq2seq-lm").flops(s=s, b=b)
    assert f.forward == expected == 2 * 128 * (6 * 28 * 768**2 + 768 * 50265) + 18 * 4 * 128**2 * 768
    assert f.training == 3 * expected


def test_bart_large_classification_reads_one_position_per_sequence():
    s, b, h = 64, 4, 1024
    base = model("bart-large").flops(s=s, b=b).forward
    head = model("bart-large", head="sequence-classification").flops(s=s, b=b).forward
    assert head - base == 2 * b * (h * h + h * 3)  # dense H×H and out_proj H×3, on the <eos> state only


def test_pegasus_large_causal_lm_by_hand():
    """PegasusForCausalLM: the decoder's self-attention and FFN only (its cross-attention never runs)."""
    s, b, h, layers, vocab = 100, 2, 1024, 16, 96103
    m = model("pegasus-large", head="causal-lm")
    expected = 2 * b * s * (layers * (4 * h * h + 8 * h * h) + h * vocab) + layers * attention(s, b, 16, 64)
    assert m.flops(s=s, b=b).forward == expected
    assert tuple(m.evaluate(e) for e in cache_per_token(m.tree)) == (2 * h * layers, 0)


def test_t5_small_and_flan_t5_base_by_hand():
    s, b = 512, 1
    # t5-small: H 512, 8 heads of 64, FFN 2048 (ReLU), 6 + 6 layers, lm_head 512 × 32128 (tied)
    inner = 8 * 64
    enc = 4 * 512 * inner + 2 * 512 * 2048
    dec = 8 * 512 * inner + 2 * 512 * 2048
    expected = 2 * s * (6 * (enc + dec) + 512 * 32128) + 18 * attention(s, b, 8, 64)
    assert model("t5-small", head="seq2seq-lm").flops(s=s, b=b).forward == expected
    # flan-t5-base: H 768, 12 heads of 64, gated FFN 2048 (three matrices), 12 + 12 layers, untied lm_head
    inner = 12 * 64
    enc = 4 * 768 * inner + 3 * 768 * 2048
    dec = 8 * 768 * inner + 3 * 768 * 2048
    expected = 2 * s * (12 * (enc + dec) + 768 * 32128) + 36 * attention(s, b, 12, 64)
    assert model("flan-t5-base", head="seq2seq-lm").flops(s=s, b=b).forward == expected


def test_opus_mt_and_transformer_base_by_hand():
    s, b, h, layers = 50, 8, 512, 6
    body = layers * (12 * h * h + 16 * h * h)   # 4H² attention + 8H² FFN; the decoder another 4H² for cross
    for name, vocab in (("opus-mt-en-de", 58101), ("transformer-base", 37000)):
        head = "seq2seq-lm" if name == "opus-mt-en-de" else None
        expected = 2 * b * s * (body + h * vocab) + 3 * layers * attention(s, b, 8, 64)
        assert model(name, head=head).flops(s=s, b=b).forward == expected, name


def test_m2m100_and_mbart_by_hand():
    s, b, h, layers = 32, 1, 1024, 12
    for name, vocab in (("m2m100-418m", 128112), ("mbart-large-cc25", 250027)):
        expected = 2 * s * (layers * 28 * h * h + h * vocab) + 3 * layers * attention(s, b, 16, 64)
        assert model(name, head="seq2seq-lm").flops(s=s, b=b).forward == expected, name


def test_cache_per_token_symbolic():
    assert cache_per_token(model("bart").tree) == (2 * H * L, 2 * H * L)
    assert cache_per_token(model("bart", split_layers=True, split_heads=True).tree) == (2 * H * L_d, 2 * H * L_d)
    assert cache_per_token(model("bart", head="causal-lm").tree) == (2 * H * L, 0)
    assert cache_per_token(model("marian", head="causal-lm").tree) == (2 * H * L, 0)
    assert cache_per_token(model("transformer").tree) == (2 * H * L, 2 * H * L)
    assert cache_per_token(model("t5").tree) == (2 * A * D * L, 2 * A * D * L)
    assert cache_per_token(model("t5", split_layers=True).tree) == (2 * A * D * L_d, 2 * A * D * L_d)
    assert cache_per_token(model("t5", head="token-classification").tree) == (0, 0)
    # bart-large: 12 decoder layers × (K + V) × 1024 per token, for its own tokens and for the encoder's
    m = model("bart-large")
    assert tuple(m.evaluate(e) for e in cache_per_token(m.tree)) == (2 * 12 * 1024, 2 * 12 * 1024)


def test_split_heads_attention_is_a_d_heads_of_width_h_over_a_d():
    tree = model("bart", split_heads=True).tree
    for path in ("decoder.layers.self_attn", "decoder.layers.encoder_attn"):
        (att,) = tree.find(path).computes
        assert (att.heads, att.key_width, att.value_width) == (A_d, H / A_d, H / A_d)
    (att,) = tree.find("encoder.layers.self_attn").computes
    assert (att.heads, att.cache, att.causal, att.cross) == (A, 0, False, False)
