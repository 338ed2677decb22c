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
