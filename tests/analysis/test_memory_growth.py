"""An encoder–decoder's inference memory grows with the sequence: its decoder's self-attention cache and its
cross-attention cache of the encoder's output (the mutation run found ``grows`` unchecked where the two are
equal, as in T5)."""

from symparams import model


def test_a_t5_cache_grows_by_its_self_and_cross_entries_per_position():
    # t5-small's config.json: 6 decoder layers of 8 heads × d_kv 64; K and V in fp32 (4 bytes), in each cache
    per_cache = 6 * 2 * 8 * 64 * 4
    short, longer = (model("t5-small", head="seq2seq-lm").memory("fp32", "none", seq=s) for s in (128, 129))
    assert longer.total - short.total == 2 * per_cache == 2 * 24_576
    assert short.grows()
