"""The block diagram: every weight with the shape transformers gives it, every stack repeated as the
published config says, and a TikZ picture and a Mermaid flowchart that are well formed in both languages.

The shapes are compared with the model transformers builds on the meta device from the published
config.json (tests/fixtures): a linear map written [in, out] (the documents' convention; PyTorch stores
[out, in]), an expert's slice of a fused [N_e, out, in] tensor too (transformers applies it with F.linear), an
embedding table and a norm's vectors as stored.  A tied weight is drawn where it is used but counted once, as ``named_parameters()`` lists it.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from symparams import Model, model
from symparams.documents.derivation import derive
from symparams.documents.diagram import diagram, mermaid_text
from symparams.documents.render import render
from symparams.families.presets import all_presets
from symparams.families.registry import family
from tests.reference import FIXTURES
from tests.reference.documents import document

PRESETS = sorted(all_presets())
HOSTILE = r"\input{/etc/passwd} $x$ 100% _a_ #1 ~ ^ & {} \"q\" [b] (p)"

#: preset, its published config, the base class transformers builds
REFERENCES = [
    ("bert-base", "bert-base-uncased", "BertModel"),
    ("llama-3-8b", "meta-llama/Meta-Llama-3-8B", "LlamaModel"),
    ("t5-small", "t5-small", "T5Model"),
    ("mixtral-8x7b", "mistralai/Mixtral-8x7B-v0.1", "MixtralModel"),
    ("deepseek-v3", "deepseek-ai/DeepSeek-V3", "DeepseekV3Model"),
]

_SHAPE = re.compile(r"(?:(\d+) \\times )?\[([\d, ]+)\]")


def drawn_shapes(name: str) -> Counter:
    """Every weight the diagram of preset ``name`` draws: shape → how many the model holds (a line's
    multiplicity and repeat times the repeats of the frames around it); tied weights left out."""
    copies, shapes = [1], Counter()
    for row in diagram(derive(model(name)), "en")["rows"]:
        if row["kind"] == "open":
            copies.append(copies[-1] * (int(row["n"].replace(",", "")) if row["repeated"] else 1))
        elif row["kind"] == "close":
            copies.pop()
        else:
            for line in row["lines"] or [row]:
                if line["tied"]:
                    continue
                many, dims = _SHAPE.fullmatch(line["shape"]).groups()
                repeat = int(line["n"].replace(",", "")) if line["repeated"] else 1
                shapes[tuple(int(d) for d in dims.split(", "))] += int(many or 1) * repeat * copies[-1]
    return shapes


def reference_shapes(module) -> Counter:
    """Every parameter tensor of a transformers module, written as the documents write shapes."""
    import torch

    seen, shapes = set(), Counter()
    for mod in module.modules():
        for pname, p in mod.named_parameters(recurse=False):
            if id(p) in seen:  # a tied weight: one tensor
                continue
            seen.add(id(p))
            if p.dim() == 3:  # fused experts: one [out, in] slice per expert, a linear map
                shapes[tuple(reversed(p.shape[1:]))] += p.shape[0]
            elif p.dim() == 2 and not isinstance(mod, torch.nn.Embedding):  # a linear map (or a router)
                shapes[tuple(reversed(p.shape))] += 1
            elif not (isinstance(mod, torch.nn.Linear) and pname == "bias"):  # a diagram draws weights
                shapes[tuple(p.shape)] += 1
    return shapes


@pytest.mark.crosscheck
@pytest.mark.parametrize("name, checkpoint, cls", REFERENCES, ids=[r[0] for r in REFERENCES])
def test_every_weight_is_drawn_with_the_shape_transformers_gives_it(name, checkpoint, cls):
    import transformers

    from tests.reference.hf import build

    config = transformers.AutoConfig.from_pretrained(FIXTURES / checkpoint)
    assert drawn_shapes(name) == reference_shapes(build(cls, config))


def _frames(name: str) -> dict[str, str]:
    return {r["title"]: r["n"] for r in diagram(derive(model(name)), "en")["rows"] if r["kind"] == "open"}


def test_the_stacks_repeat_as_the_published_configs_say():
    bert = json.loads((FIXTURES / "bert-base-uncased" / "config.json").read_text())
    assert _frames("bert-base")["Encoder"] == str(bert["num_hidden_layers"])
    deepseek = json.loads((FIXTURES / "deepseek-ai" / "DeepSeek-V3" / "config.json").read_text())
    frames = _frames("deepseek-v3")
    dense = deepseek["first_k_dense_replace"]
    assert frames["Dense decoder layer"] == str(dense)
    assert frames["Decoder layer with experts"] == str(deepseek["num_hidden_layers"] - dense)
    assert frames["Routed experts"] == str(deepseek["n_routed_experts"])


def test_a_weight_that_repeats_on_its_own_says_how_often():
    # ModernBERT's first layer has no norm before its attention: the other layers' norms are one part
    config = json.loads((FIXTURES / "answerdotai" / "ModernBERT-base" / "config.json").read_text())
    rows = diagram(derive(model("modernbert-base")), "en")["rows"]
    norms = next(r for r in rows if r.get("title") == "LayerNorms before attention")
    assert norms["repeated"] and norms["n"] == str(config["num_hidden_layers"] - 1)
    assert norms["shape"] == f"[{config['hidden_size']}]"
    assert "L - 1 = 21" in norms["mermaid"]


def test_arrows_join_the_components_in_the_order_the_model_computes():
    d = diagram(derive(model("bert-base")), "zh")
    top = [r for r in d["rows"] if r["depth"] == 0 and r["kind"] != "close"]
    assert [r["title"] for r in top] == ["嵌入层（Embedding）", "编码器（Encoder）", "池化层（Pooler）"]
    assert d["flow"] == [[top[0]["id"], top[1]["id"]], [top[1]["id"], top[2]["id"]]]
    assert d["repeats"] and [f["depth"] for f in d["frames"]] == sorted(f["depth"] for f in d["frames"])


def test_mermaid_labels_escape_what_ends_a_label_or_starts_an_entity():
    assert mermaid_text('a "b" #c <i class="m">x</i>') == "a #quot;b#quot; #35;c <i>x</i>"


_LABEL = re.compile(r'\["(.*?)"\]')


def flowchart(text: str) -> str:
    charts = [b for b in re.findall(r"```mermaid\n(.*?)```", text, flags=re.S) if "flowchart TB" in b]
    assert len(charts) == 1
    return charts[0]


def check_flowchart(chart: str) -> None:
    """Subgraphs balanced, every node and subgraph defined once, every link between defined ones, and no
    label holding a quote that would end it."""
    defined, depth = [], 0
    for line in chart.splitlines()[2:]:
        words = line.split()
        if words[:1] == ["subgraph"]:
            depth += 1
            defined.append(words[1].split("[", 1)[0])
        elif words[:1] == ["end"]:
            depth -= 1
            assert depth >= 0
        elif "[" in line:
            defined.append(line.strip().split("[", 1)[0])
        elif len(words) == 3 and words[1] in ("-->", "~~~"):
            assert words[0] in defined and words[2] in defined, line
    assert depth == 0 and len(defined) == len(set(defined))
    for label in _LABEL.findall(chart):
        assert '"' not in label


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_presets_flowchart_is_well_formed(lang):
    for name in PRESETS:
        check_flowchart(flowchart(document(name, "md", lang)))


def test_a_hostile_model_name_stays_out_of_the_flowchart_and_the_picture():
    m = Model(family("transformer"), {"V": 32000, "P": 512, "H": 512, "L": 6, "A": 8, "r": 4}, name=HOSTILE)
    chart = flowchart(render(m, format="md", lang="en"))
    check_flowchart(chart)
    assert "passwd" not in chart
    tex = render(m, format="tex", lang="zh")
    picture = tex.split(r"\begin{tikzpicture}[font", 1)[1].split(r"\end{tikzpicture}", 1)[0]
    assert "passwd" not in picture


#: an encoder, encoder–decoders (a tied output layer; T5's shared table), decoders (GQA; MLA with experts in
#: stacks within stacks), ALBERT's shared group
SHAPES_OF_TREES = ["bert-base", "transformer-base", "t5-small", "gpt2", "llama-3-8b", "deepseek-v3", "albert-base-v2"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_picture_places_every_box_below_one_drawn_before_it(lang):
    for name in SHAPES_OF_TREES:
        tex = document(name, "tex", lang)
        picture = tex.split(r"\begin{tikzpicture}[font", 1)[1].split(r"\end{tikzpicture}", 1)[0]
        placed = set()
        for mo in re.finditer(r"\\node\[(\w+)(?:, below=[\d.]+mm of (\w+))?(?:, fit=((?:\(\w+\))+))?\] \((\w+)\)",
                              picture):
            kind, follows, members, ident = mo.groups()
            assert follows is None or follows in placed, (name, ident)
            assert members is None or set(re.findall(r"\((\w+)\)", members)) <= placed, (name, ident)
            placed.add(ident)
        drawn = re.findall(r"\\draw\[(?:stack|frame|flow)\] \((\w+)", picture)
        assert drawn and set(drawn) <= placed, name


@pytest.mark.parametrize("fmt, lang", [("tex", "en"), ("tex", "zh"), ("md", "en"), ("md", "zh")])
def test_the_diagram_comes_at_the_end_of_the_introduction(fmt, lang):
    text = document("llama-3-8b", fmt, lang)
    if fmt == "tex":
        intro, rest = text.split(r"\label{sec:computation}", 1)
        assert r"\ref{fig:blocks}" in intro.split(r"\label{sec:intro}", 1)[1] and r"\label{fig:blocks}" in intro
    else:
        intro, rest = text.split("\n## 2. ", 1)
        assert "flowchart TB" in intro.split("\n## 1. ", 1)[1]
    assert "flowchart" not in rest and "fig:blocks" not in rest
