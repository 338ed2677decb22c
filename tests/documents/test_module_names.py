"""The module names a document prints are transformers' own: every path, with its indices, exists in the model
transformers builds (meta device), at every index it claims."""

from __future__ import annotations

import re

import pytest

from symparams import model
from symparams.documents.derivation import derive
from tests.reference import decoders, moe
from tests.reference.hf import build

import transformers
from tests.reference.documents import document

TINY_DEEPSEEK = dict(V=100, H=64, L=4, L_f=2, A=4, F=96, F_e=32, N_e=4, k_e=2, N_s=1, R_q=48, R_kv=32, D_n=16,
                     D_r=8, D_v=16)


def _bert(m):
    return build("BertModel", transformers.BertConfig())


MODELS = {
    "t5-base": (lambda: model("t5-base"), lambda m: decoders.reference(m)[0]),
    "deepseek-v3": (lambda: model("deepseek-v3").subs(**TINY_DEEPSEEK), lambda m: moe.reference(m)[0]),
    "bert-base": (lambda: model("bert-base"), _bert),
    # one fused tensor for Q, K and V: GPT-2's Conv1D c_attn, GPT-NeoX's query_key_value, ModernBERT's Wqkv
    "gpt2": (lambda: model("gpt2"), lambda m: build("GPT2Model", transformers.GPT2Config())),
    "pythia-160m": (lambda: model("pythia-160m"), lambda m: build("GPTNeoXModel", transformers.GPTNeoXConfig())),
    "modernbert-base": (lambda: model("modernbert-base"),
                        lambda m: build("ModernBertModel", transformers.ModernBertConfig())),
}


def _printed(item, prefix=""):
    """Every leaf's full module path as the document prints it: a part's name below its component's."""
    join = lambda *p: ".".join(s for s in p if s)  # noqa: E731
    if item.leaf:
        return [join(prefix, name) for name in item.names]
    if len(item.names) == 1:
        return [p for c in item.children for p in _printed(c, join(prefix, item.names[0]))]
    # a grouping transformers lacks names its parts (DeepSeek's decoder) or the modules they sit in (BERT's steps)
    out = []
    for child, name in zip(item.children, item.names, strict=True):
        out += _printed(child, prefix if child.names == (name,) else join(prefix, name))
    return out


def _indices(segment: str) -> list[int] | None:
    """``3–60`` → 3..60, ``2`` → [2], anything else → None."""
    if m := re.fullmatch(r"(\d+)–(\d+)", segment):
        return list(range(int(m[1]), int(m[2]) + 1))
    return [int(segment)] if segment.isdigit() else None


def _exists(path: str, real: set[str]) -> bool:
    """Whether ``path`` names a module or parameter of ``real`` at every index it claims: ``*`` every index the
    list has, ``3–60`` each of 3..60.  A part of a fused tensor is its module's: ``c_attn (query)``."""
    head, _, rest = path.partition(" (")[0].partition(".")
    return _expand(head, rest, real)


def _expand(done: str, rest: str, real: set[str]) -> bool:
    if not rest:
        return done in real
    segment, _, rest = rest.partition(".")
    if segment == "*":
        indices = sorted({int(n[len(done) + 1:].split(".")[0]) for n in real
                          if n.startswith(done + ".") and n[len(done) + 1:].split(".")[0].isdigit()})
        return bool(indices) and all(_expand(f"{done}.{i}", rest, real) for i in indices)
    indices = _indices(segment)
    if indices is None:
        return _expand(f"{done}.{segment}", rest, real)
    return all(_expand(f"{done}.{i}", rest, real) for i in indices)


def _real(module) -> set[str]:
    return {n for n, _ in module.named_modules()} | {n for n, _ in module.named_parameters()}


@pytest.mark.parametrize("name", MODELS)
def test_every_module_path_a_document_prints_exists_at_every_index_it_claims(name):
    make, reference = MODELS[name]
    m = make()
    real = _real(reference(m))
    d = derive(m)
    walked = [p for s in d.sections for p in _printed(s)]
    proof = [p for t in d.proof.terms for p in t["paths"]]
    tied = [i.tied_to for i in d.items if i.tied_to]
    assert walked and proof
    assert [p for p in walked + proof + tied if not _exists(p, real)] == []


def test_t5_names_each_sublayer_and_the_first_blocks_bias():
    text = document("t5-base", "md", "en")
    for name in ("`layer.0`", "`layer.1`", "`layer.2`", "`block.0.layer.0.SelfAttention.relative_attention_bias`",
                 "`decoder.block.*.layer.1.EncDecAttention.q`"):
        assert name in text
    assert "layer.*" not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_deepseek_names_its_dense_and_expert_layers_apart(lang):
    text = document("deepseek-v3", "md", lang)
    assert "`layers.0–2`" in text and "`layers.3–60`" in text
    assert "(`layers.*`" not in text and "（`layers.*`" not in text


def test_a_tied_table_is_named_as_the_document_names_its_owner():
    """The article's Transformer shares one table among the embeddings and the output layer: the tie names the
    module the walk shows (``shared``), not our tree's ``embeddings.shared``."""
    d = derive(model("transformer-base-article"))
    walked = {p for s in d.sections for p in _printed(s)}
    tied = {i.tied_to for i in d.items if i.tied_to}
    assert tied == {"shared"} and tied <= walked


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_head_count_section_names_a_fused_tensor_as_transformers_does(lang):
    """GPT-2's query, key and value are one tensor, ``h.N.attn.c_attn``: the section names that module, not
    ``c_attn (query)``, which ``named_parameters()`` has no such name for."""
    real = _real(MODELS["gpt2"][1](None))
    text = document("gpt2", "md", lang)
    section = text[text.index("## 5."):text.index("## 6.")]
    spans = re.findall(r"`([^`]+)`", section)
    assert spans == ["h.*.attn.c_attn"]
    assert all(_expand(*span.partition(".")[::2], real) for span in spans)
    # the parts named by one module are still listed as parts, not as a title and its subtitle
    listed, nested = (("$: key $W^K$, value $W^V$", "key $W^K$: value") if lang == "en"
                      else ("$：键 $W^K$、值 $W^V$", "键 $W^K$：值"))
    falcon = document("falcon-7b", "md", lang)
    assert listed in falcon and nested not in falcon
