"""Every block's shape is the shape of the tensor transformers stores there, tied blocks included.

A tied block (T5's ``encoder.embed_tokens``, GPT-2's ``lm_head``) adds nothing to the count, so
the count comparisons cannot see its shape; the documents show it, so it is compared here with
the tensor transformers builds from the same published config.json on the meta device.  A linear
layer is written (in, out) as the articles write it, and ``nn.Linear`` stores [out, in]; GPT-2's
``Conv1D`` stores [in, out].
"""

from collections import defaultdict

import pytest
import sympy as sp
import transformers
from torch import nn

from symparams.families.lookup import from_config
from tests.reference import FIXTURES
from tests.reference.hf import build, normalize

pytestmark = pytest.mark.crosscheck

#: published config → (our head, transformers' class written out, its base model's prefix)
CASES = {
    "t5-small": ("seq2seq-lm", "T5ForConditionalGeneration", ""),
    "gpt2": ("causal-lm", "GPT2LMHeadModel", "transformer."),
    "facebook/bart-base": ("seq2seq-lm", "BartForConditionalGeneration", "model."),
    "bert-base-uncased": ("masked-lm", "BertForMaskedLM", "bert."),
    "Qwen/Qwen2.5-0.5B": ("causal-lm", "Qwen2ForCausalLM", "model."),
}


def reference_paths(block, prefix="", parent=None):
    """(transformers path, block, its parent) for every block of the tree, tied ones too, layers as ``*``."""
    segment = block.name if block.ref is None else block.ref
    path = ".".join(p for p in (prefix, segment) if p)
    yield path, block, parent
    for child in block.children:
        yield from reference_paths(child, path, block)


@pytest.fixture(scope="session", params=CASES, ids=str)
def built(request):
    head, cls, strip = CASES[request.param]
    ours = from_config(str(FIXTURES / request.param / "config.json"), head=head)
    config = transformers.AutoConfig.from_pretrained(str(FIXTURES / request.param))
    return ours, build(cls, config), strip


def stored_shapes(module, strip):
    """Parameter path (base prefix stripped, layers as ``*``) → the shapes stored there, each as we write it
    (an nn.Linear's [out, in] turned round); a shared tensor is listed under every name that holds it."""
    linear = {f"{prefix}.weight" for prefix, m in module.named_modules() if isinstance(m, nn.Linear)}
    shapes = defaultdict(set)
    for name, p in module.named_parameters(remove_duplicate=False):
        shapes[normalize(name.removeprefix(strip))].add(tuple(p.shape)[::-1] if name in linear else tuple(p.shape))
    return shapes


def shown(block, values):
    assert block.shape, f"{block.name}: no shape"
    return tuple(int(sp.sympify(d).xreplace(values).doit()) for d in block.shape)


def written(tree, values):
    """(parameter path, the shape we show there) for each block's weight or bare parameter; blocks fused into one tensor (GPT-2's query, key and value in
    ``c_attn``, siblings of one parent) are shown side by side, (in, Σ out), as the tensor concatenates them;
    blocks of different parents on one path (T5's ``layer.0`` and ``layer.1`` both ``layer.*``) each alone."""
    shapes = defaultdict(list)
    for path, block, parent in reference_paths(tree):
        if block.params:  # a layer's weight (its bias follows it) or a bare parameter; each has a shape
            # a path written with an index (T5's relative bias, in block 0 only) as transformers' names are read
            shapes[f"{normalize(path)}.{block.params[0][0]}", id(parent)].append(shown(block, values))
    return [(path, s[0] if len(s) == 1 else (s[0][0], sum(out for _, out in s))) for (path, _), s in shapes.items()]


def test_every_block_has_the_shape_transformers_stores(built):
    ours, module, strip = built
    stored = stored_shapes(module, strip)
    ours_shapes = written(ours.tree, ours.values)
    assert len(ours_shapes) > 5
    for path, shape in ours_shapes:
        assert stored[path] == {shape}, path


def test_a_tied_block_is_shown_as_the_tensor_it_shares(built):
    ours, module, strip = built
    stored = stored_shapes(module, strip)
    tied = [(path, block) for path, block, _ in reference_paths(ours.tree) if block.tied_to is not None]
    assert tied, "a case without a tied block"
    for path, block in tied:
        assert stored[f"{path}.weight"] == {shown(block, ours.values)}, path
