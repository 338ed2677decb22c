"""Shipped formulas with floors the fit found beyond a width divided by a head count: a product of two widths split
into groups (DeepSeek-V4's output projection) and layers at a fixed place in every step (Switch Transformers'
sparse layers), counted from config.json values at sizes other than the defaults and compared with transformers'
meta-device builds."""

import pytest
import torch
import transformers

from symparams.families import inferred
from tests.reference.inferred_builds import built, entry

pytestmark = pytest.mark.crosscheck


#: a small Switch Transformers model; the layer counts and sparse counts are set by each test
SWITCH = {"model_type": "switch_transformers", "vocab_size": 100, "d_model": 32, "d_kv": 8, "d_ff": 48,
          "num_heads": 4, "num_experts": 3, "relative_attention_num_buckets": 8}


def sparse_blocks(config: dict) -> int:
    """How many encoder blocks transformers builds with experts."""
    values = {k: v for k, v in config.items() if k != "model_type"}
    with torch.device("meta"):
        model = transformers.AutoModel.from_config(transformers.AutoConfig.for_model("switch_transformers", **values))
    return sum(1 for block in model.encoder.block if block.layer[-1].is_sparse)


@pytest.mark.parametrize("cls", ["base", "seq2seq-lm"])
@pytest.mark.parametrize("layers,sparse,decoder,step", [(10, 4, (6, 2), None), (14, 4, (13, 3), None),
                                                       (12, 3, (5, 1), 2), (7, 3, (9, 2), 5)])
def test_switch_transformers_counts_a_sparse_block_in_every_step_from_the_second(cls, layers, sparse, decoder, step):
    """A block is sparse where ``i % step == 1``, the step ``num_layers // num_sparse_encoder_layers`` unless the
    config gives it: 10 layers and 4 sparse ones make a step of 2 and 5 sparse blocks (1, 3, 5, 7, 9), not 4; a
    step of 2 given with 12 layers and 3 sparse makes 6."""
    config = {**SWITCH, "num_layers": layers, "num_sparse_encoder_layers": sparse, "num_decoder_layers": decoder[0],
              "num_sparse_decoder_layers": decoder[1], **({"encoder_sparse_step": step} if step else {})}
    given = step or layers // sparse
    assert sparse_blocks(config) == sum(1 for i in range(layers) if i % given == 1)
    assert inferred.counted(entry("switch_transformers", cls), config)[0] == built(config, cls)


@pytest.mark.parametrize("step", [None, 1])
def test_switch_transformers_with_every_block_sparse_is_refused(step):
    """A step of 1 (more than half the layers sparse, or given) makes every block sparse, a structure the formula
    was not fitted over (its floor counts 5 of 6): refused, whether the step is given or computed."""
    config = {**SWITCH, "num_layers": 6, "num_sparse_encoder_layers": 4,
              **({"encoder_sparse_step": step} if step else {})}
    assert sparse_blocks(config) == 6
    with pytest.raises(inferred.OutsideConditions, match="encoder_sparse_step ≥ 2"):
        inferred.counted(entry("switch_transformers", "base"), config)


#: a small DeepSeek-V4: one layer of each compressed-attention kind
DEEPSEEK_V4 = {"model_type": "deepseek_v4", "vocab_size": 100, "hidden_size": 64, "moe_intermediate_size": 24,
               "num_attention_heads": 6, "head_dim": 20, "q_lora_rank": 16, "n_routed_experts": 4,
               "o_lora_rank": 8, "index_n_heads": 2, "index_head_dim": 16}


@pytest.mark.parametrize("cls", ["base", "causal-lm"])
@pytest.mark.parametrize("groups", [7, 8, 11])
def test_deepseek_v4_s_output_groups_take_heads_times_head_width_over_groups_inputs(cls, groups):
    """Each of ``o_groups`` groups takes ``num_attention_heads * head_dim // o_groups`` inputs: 120 // 7 = 17, so
    that a·D/g (17⅐) or a·⌊D/g⌋ (6·2 = 12) would be wrong where g divides neither."""
    config = {**DEEPSEEK_V4, "o_groups": groups}
    values = {k: v for k, v in config.items() if k != "model_type"}
    with torch.device("meta"):
        model = transformers.AutoModel.from_config(transformers.AutoConfig.for_model("deepseek_v4", **values))
    widths = {p.shape[1] for name, p in model.named_parameters() if name.endswith("o_a_proj.weight")}
    assert widths == {6 * 20 // groups}
    assert inferred.counted(entry("deepseek_v4", cls), config)[0] == built(config, cls)


#: a small SeamlessM4T: every part small (the speech encoder, the text-to-unit model and the vocoder too)
SEAMLESS = {"vocab_size": 300, "t2u_vocab_size": 50, "hidden_size": 64, "encoder_layers": 1, "decoder_layers": 1,
            "encoder_ffn_dim": 96, "decoder_ffn_dim": 96, "encoder_attention_heads": 4, "decoder_attention_heads": 4,
            "speech_encoder_layers": 1, "speech_encoder_intermediate_size": 96, "feature_projection_input_dim": 40,
            "t2u_encoder_layers": 1, "t2u_decoder_layers": 1, "t2u_encoder_ffn_dim": 96, "t2u_decoder_ffn_dim": 96,
            "t2u_encoder_attention_heads": 4, "t2u_decoder_attention_heads": 4, "unit_hifi_gan_vocab_size": 50,
            "upsample_initial_channel": 32, "unit_embed_dim": 40, "lang_embed_dim": 8, "spkr_embed_dim": 8,
            "vocoder_num_langs": 3, "vocoder_num_spkrs": 3}


@pytest.mark.parametrize("model_type", ["seamless_m4t", "seamless_m4t_v2"])
@pytest.mark.parametrize("heads", [4, 5, 7, 64])
def test_seamless_s_speech_encoder_head_width_is_the_hidden_size_over_its_heads_rounded_down(model_type, heads):
    """The speech encoder's attention keeps ``hidden_size // speech_encoder_attention_heads`` per head (its
    position biases, or v2's distance embedding, that wide) whether or not the heads divide the width: 64 over 5
    heads is 12 wide, over 7 is 9."""
    config = {"model_type": model_type, **SEAMLESS, "speech_encoder_attention_heads": heads}
    assert inferred.counted(entry(model_type, "base"), config)[0] == built(config, "base")
