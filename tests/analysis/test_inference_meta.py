"""The meta device without torch's initialisers builds what ``with torch.device("meta")`` builds: every parameter
and buffer by name and shape, the same tying, and initialisers still run on tensors of other devices."""

import pytest
import torch
import transformers

from symparams.analysis.inference.meta import meta_device

transformers.logging.set_verbosity_error()

#: decoders and encoders, tied and untied heads, a mixture of experts, convolutions (ConvBERT), an RNN (xLSTM's
#: cells are linear; RWKV's time mixing is parameters), norms with and without biases
CASES = [("llama", "AutoModelForCausalLM"), ("gpt2", "AutoModelForCausalLM"), ("bert", "AutoModelForMaskedLM"),
         ("t5", "AutoModelForSeq2SeqLM"), ("mixtral", "AutoModelForCausalLM"), ("convbert", "AutoModel"),
         ("rwkv", "AutoModelForCausalLM"), ("mamba", "AutoModel")]


def _layout(module) -> tuple:
    """(name, shape) of every parameter and buffer, with tied parameters listed under each name, and which names
    share one tensor."""
    params = list(module.named_parameters(remove_duplicate=False))
    shared = {}
    for name, p in params:
        shared.setdefault(id(p), []).append(name)
    return ([(n, tuple(p.shape)) for n, p in params], [(n, tuple(b.shape)) for n, b in module.named_buffers()],
            sorted(names for names in shared.values() if len(names) > 1))


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type,auto", CASES)
def test_a_build_without_initialisers_is_the_build_with_them(model_type, auto):
    config = transformers.AutoConfig.for_model(model_type)
    for field in ("num_hidden_layers", "n_layer", "num_layers"):
        if hasattr(config, field) and isinstance(getattr(config, field), int):
            setattr(config, field, 2)
    build = getattr(transformers, auto).from_config
    with torch.device("meta"):
        expected = _layout(build(config))
    with meta_device():
        assert _layout(build(config)) == expected


def test_initialisers_still_run_on_other_devices_and_are_restored():
    original = torch.nn.init.normal_
    with meta_device():
        assert torch.nn.init.normal_ is not original
        cpu = torch.nn.init.normal_(torch.zeros(64, device="cpu"))
        meta = torch.nn.init.normal_(torch.empty(64, device="meta"))
    assert cpu.abs().sum() > 0 and meta.is_meta
    assert torch.nn.init.normal_ is original


def test_a_legacy_float_tensor_is_made_on_the_meta_device_and_the_constructor_restored():
    """XLNet makes its attention weights with ``torch.FloatTensor(d_model, n_head, d_head)``, which ignores
    ``torch.device("meta")``: at the widths the costs are verified at (16,384 × 128 × 128) each took a real
    gigabyte, its gradient another, and wider ones failed to allocate.  Inside :func:`meta_device` it is an empty
    meta tensor of the same shape; after it, torch's own constructor again."""
    config = transformers.XLNetConfig(vocab_size=11, d_model=16384, n_layer=2, n_head=128, d_inner=8)
    with meta_device():
        model = transformers.XLNetModel(config)
    weights = [p for name, p in model.named_parameters() if name.endswith("rel_attn.q")]
    assert len(weights) == 2 and all(p.is_meta and p.shape == (16384, 128, 128) for p in weights)
    assert all(p.is_meta for p in model.parameters())
    assert isinstance(torch.FloatTensor(2), torch.FloatTensor) and not torch.FloatTensor(2).is_meta
