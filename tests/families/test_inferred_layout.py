"""An inferred tree walks modules in transformers' registration order and writes linear weights [in, out].

The data records, per class, the order ``named_parameters()`` yields its
parameters in and which are ``nn.Linear`` and ``nn.Embedding`` weights (one
default meta build, ``scripts/infer_formulas.py --order-only``).  These tests
rebuild a sample of types with transformers itself and compare.
"""

from __future__ import annotations

import json
import re

import pytest
import sympy as sp
import torch
import transformers
from torch import nn

from symparams.analysis.inference.confirm import built_model
from symparams.families.inferred import model
from symparams.families.inferred_data import DATA

transformers.logging.set_verbosity_error()

#: dense (OLMo), fused experts (OLMoE), layers of two kinds (Gemma 4, Kimi's linear and latent attention),
#: encoders (GTE; RoFormer with a frozen table), encoder-decoder (UMT5), GPT-2's Conv1D (GPT-SW3)
SAMPLE = [("olmo", "base"), ("olmoe", "causal-lm"), ("gemma4_text", "base"), ("kimi_linear", "causal-lm"),
          ("gte", "base"), ("roformer", "masked-lm"), ("umt5", "base"), ("gpt-sw3", "causal-lm")]
AUTO = {"base": "AutoModel", "causal-lm": "AutoModelForCausalLM", "masked-lm": "AutoModelForMaskedLM"}


def _entries():
    with open(DATA, encoding="utf-8") as fh:
        for e in json.load(fh)["formulas"]:
            if e["exact"]:
                yield e
                yield from e.get("branches", ())


def test_every_exact_class_records_its_registration_order_and_its_linear_layers():
    for e in _entries():
        n = len(e["parameters"])
        assert sorted(e["order"]) == list(range(n)), e["model_type"]
        indices = e["modules"]["linear"] + e["modules"]["embedding"]
        assert len(set(indices)) == len(indices) and all(0 <= i < n for i in indices), e["model_type"]
        # an nn.Linear or nn.Embedding weight is a matrix
        assert all(len(e["parameters"][i][2]) == 2 for i in indices), e["model_type"]


@pytest.fixture(scope="session", params=SAMPLE, ids=lambda s: f"{s[0]}-{s[1]}")
def built(request):
    """(our model at the type's defaults, transformers' build of the default config)."""
    model_type, cls = request.param
    ours = model({"model_type": model_type}, head=None if cls == "base" else cls, source=model_type)
    config = transformers.AutoConfig.for_model(model_type)
    with torch.device("meta"):
        theirs = getattr(transformers, AUTO[cls]).from_config(config)
    return ours, theirs


def _pattern(path: str) -> re.Pattern:
    """The full names a path of the tree stands for: ``layers.*.mlp`` matches ``layers.3.mlp``; a kind of layer
    (``layers.*2``) is matched by :func:`_matcher`."""
    return re.compile(r"\.(?:[A-Za-z]+_)?\d+\.".join(re.escape(p) for p in re.split(r"\.\*\d*\.", path)) + r"\Z")


def _leaves(m):
    """(parameter path, leaf block, elements of one copy) of every parameter of the tree, in its walk order."""
    for path, block in m.tree.reference_paths():
        if block.is_leaf and block.tied_to is None:
            for name, size in block.params:
                yield ".".join(p for p in (path, name) if p), block, int(sp.sympify(size).xreplace(m.values))


_KIND = re.compile(r"^(.*?)\.(\*\d+)\.(.*)$")
_INDEX = re.compile(r"^(.*?)\.(\d+)\.(.*)$")


def _matcher(ours, theirs):
    """A test of whether a real parameter name is the one a tree path stands for: the path's pattern, and for a
    stack of several kinds (``layers.*1``, ``layers.*2``) a layer of that kind, told by which kind's parameters
    (names and sizes) it shares most."""
    kinds: dict[str, dict[str, set]] = {}
    for path, _, size in _leaves(ours):
        if (found := _KIND.match(path)):
            kinds.setdefault(found[1], {}).setdefault(found[2], set()).add((found[3], size))
    layers: dict[tuple, set] = {}
    for name, p in theirs.named_parameters():
        if (found := _INDEX.match(name)) and found[1] in kinds:
            layers.setdefault((found[1], found[2]), set()).add((found[3], p.numel()))
    kind_of = {key: max(kinds[key[0]], key=lambda k: len(held & kinds[key[0]][k])) for key, held in layers.items()}

    def matches(path: str, name: str) -> bool:
        if not _pattern(path).match(name):
            return False
        kind, index = _KIND.match(path), _INDEX.match(name)
        return kind is None or kind_of.get((index[1], index[2])) == kind[2]

    return matches


@pytest.mark.crosscheck
def test_the_walk_follows_transformers_registration_order(built):
    ours, theirs = built
    names = [name for name, _ in theirs.named_parameters()]
    matches = _matcher(ours, theirs)
    firsts = [next(i for i, name in enumerate(names) if matches(path, name)) for path, _, _ in _leaves(ours)]
    assert len(firsts) > 3 and firsts == sorted(firsts)


@pytest.mark.crosscheck
def test_linear_weights_are_written_in_out_and_nothing_else_turns_round(built):
    ours, theirs = built
    params = dict(theirs.named_parameters())
    linear = {f"{prefix}.weight" for prefix, module in theirs.named_modules() if isinstance(module, nn.Linear)}
    matches = _matcher(ours, theirs)
    checked = 0
    for path, block, _ in _leaves(ours):
        if not path.endswith("weight") or not block.shape:
            continue
        name = next(n for n in params if matches(path, n))
        stored = tuple(params[name].shape)
        shown = tuple(int(sp.sympify(d).xreplace(ours.values)) for d in block.shape)
        assert (block.kind == "linear") == (name in linear), path
        assert shown == (stored[::-1] if name in linear else stored), path
        checked += 1
    assert checked > 3


def _tied_in_build(theirs) -> dict[str, str]:
    """transformers' tied modules: the path of each module whose weight is a tensor an earlier module (the one
    ``named_parameters()`` lists it under) already holds → that module's path."""
    first: dict[int, str] = {}
    tied = {}
    for path, module in theirs.named_modules(remove_duplicate=False):
        weight = getattr(module, "weight", None)
        if isinstance(weight, nn.Parameter):
            tied.update({path: first[id(weight)]} if id(weight) in first and first[id(weight)] != path else {})
            first.setdefault(id(weight), path)
    return tied


#: an LM head tied to the token embeddings (SmolLM3), BERT's MLM decoder, CamemBERT (transformers keeps the
#: head's name and ties the embeddings to it), BART's encoder and decoder tables tied to the shared one
TIED = [("smollm3", "causal-lm"), ("bert", "masked-lm"), ("camembert", "masked-lm"), ("bart", "base")]


@pytest.mark.crosscheck
@pytest.mark.parametrize("model_type, cls", TIED, ids=lambda v: v)
def test_a_tied_module_is_shown_tied_to_the_module_transformers_lists_its_weight_under(model_type, cls):
    config = transformers.AutoConfig.for_model(model_type, tie_word_embeddings=True)
    ours = model({**config.to_dict(), "model_type": model_type}, head=None if cls == "base" else cls,
                 source=model_type)
    with torch.device("meta"):
        theirs = getattr(transformers, AUTO[cls]).from_config(config)
    blocks = {path: block for path, block in ours.tree.reference_paths() if block.tied_to}
    assert {path: block.tied_to for path, block in blocks.items()} == _tied_in_build(theirs) != {}
    modules = dict(theirs.named_modules(remove_duplicate=False))
    for path, block in blocks.items():  # a tied linear layer is one all the same (its FLOPs are a matmul)
        assert (block.kind == "linear") == isinstance(modules[path], nn.Linear), path


def _instances(tree, values) -> dict[str, int]:
    """Each module path of ``tree`` that a block's copies stand for → how many modules (its repeats and its
    ancestors'); a group of parts that come in different numbers (a list's dense and expert MLPs together) is
    no module's copies, and routed experts, one fused module a layer, are left out."""
    out = {}

    def walk(block, path, times, copied):
        if block.used is not None:
            return
        seg = block.name if block.ref is None else block.ref
        path = ".".join(p for p in (path, seg) if p)
        times *= int(sp.sympify(block.repeat).xreplace(values))
        copied = copied or block.repeat != 1
        if copied:
            out[path] = out.get(path, 0) + times
        for child in block.children:
            walk(child, path, times, copied)

    walk(tree, "", 1, False)
    return out


#: a stack of layers of several kinds held in one list: Qwen3-Next's 12 attention and 36 linear-attention layers
#: (a common factor of 12 is chance, not 12 copies of four layers), and 24 of each (nor are equal numbers 24
#: copies of two layers), GLM-4-MoE's dense first layer before 45 of experts, RecurrentGemma's recurrent and
#: attention blocks
KINDS = [("qwen3_next", "base", {}),
         ("qwen3_next", "base", {"num_hidden_layers": 48, "layer_types": ["linear_attention", "full_attention"] * 24}),
         ("glm4_moe", "base", {}), ("recurrent_gemma", "causal-lm", {})]


@pytest.mark.crosscheck
@pytest.mark.parametrize("counted", ["formula", "build"])
@pytest.mark.parametrize("model_type, cls, fields", KINDS, ids=lambda v: str(len(v)) if isinstance(v, dict) else v)
def test_each_part_of_a_stack_of_several_kinds_is_as_many_modules_as_transformers_builds(model_type, cls, fields,
                                                                                        counted):
    """As the inferred formula counts the config, and as a config outside its conditions is counted, by one
    meta-device build (whose numbers alone would group the layers by their common factor)."""
    config = transformers.AutoConfig.for_model(model_type, **fields)
    values, head = {**config.to_dict(), "model_type": model_type}, None if cls == "base" else cls
    ours = model(values, head=head, source=model_type) if counted == "formula" else \
        built_model(values, head, model_type, "outside the conditions")
    with torch.device("meta"):
        theirs = getattr(transformers, AUTO[cls]).from_config(config)
    built = [name for name, _ in theirs.named_modules()] + [name for name, _ in theirs.named_parameters()]
    checked = 0
    for path, n in _instances(ours.tree, ours.values).items():
        if re.search(r"\*\d*\.", path):  # a module in a layer
            assert n == sum(1 for name in built if _pattern(path).match(name)), path
            checked += 1
        elif path.endswith(".*"):  # copies of the layer itself: as many as the list holds
            assert n == sum(1 for name in built if re.fullmatch(re.escape(path[:-1]) + r"\d+", name)), path
    assert checked > 5
