"""The sizes papers, model cards and announcements publish for the presets, each with its source.

The documents reconcile each figure with the exact count of the tree (see
:mod:`symparams.documents.published_view`); the figures are data here, never typed in a template.
A figure counts one of:

- ``total``: every parameter of the model as released (a generative model with its LM head);
- ``active``: the parameters one token uses (of a mixture of experts, its top-k routed experts);
- ``checkpoint``: a released checkpoint holding more than the model transformers builds, quoted as its
  source gives it and not reconciled (``parts``: how that source splits it).

``note`` names a catalog sentence (``published.notes``) about the figure: an erratum, a module left out,
or why a mixture of experts is not E times a dense model (``experts``, with ``parts`` the name's reading:
``8×7B`` read as ``56B``).

>>> [f.claim for f in figures("mixtral-8x7b")]
['46.7B', '12.9B']
>>> figures("bert-base-chinese")
()
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Published:
    claim: str
    counts: str
    source: str
    note: str = ""
    parts: tuple[str, ...] = ()

    def __post_init__(self):
        if self.counts not in ("total", "active", "checkpoint"):
            raise ValueError(f"a published figure counts total, active or checkpoint, not {self.counts!r}")


_BERT = "Devlin et al. 2019, the BERT paper, section 3"
_TRANSFORMER = "Vaswani et al. 2017, Attention Is All You Need, Table 3"
_T5 = "Raffel et al. 2020, the T5 paper, section 3.7"
_MIXTRAL = "Mistral AI 2023, Mixtral of experts"
_DEEPSEEK = "DeepSeek-AI 2024, DeepSeek-V3 Technical Report, abstract"

FIGURES: dict[str, tuple[Published, ...]] = {
    "bert-base": (Published("110M", "total", _BERT),),
    "bert-large": (Published("340M", "total", _BERT),),
    "transformer-base": (Published("65M", "total", _TRANSFORMER),),
    "transformer-big": (Published("213M", "total", _TRANSFORMER),),
    "gpt2": (Published("117M", "total", "Radford et al. 2019, the GPT-2 paper, Table 2", note="gpt2_erratum"),
             Published("124M", "total", "OpenAI, README of the gpt-2 repository")),
    "llama-2-7b": (Published("7B", "total", "Touvron et al. 2023, the Llama 2 paper, Table 1"),),
    "llama-3-8b": (Published("8B", "total", "Meta 2024, the Meta-Llama-3-8B model card"),),
    "t5-small": (Published("60M", "total", _T5),),
    "t5-base": (Published("220M", "total", _T5),),
    "t5-large": (Published("770M", "total", _T5),),
    "mixtral-8x7b": (Published("46.7B", "total", _MIXTRAL, note="experts", parts=("8×7B", "56B")),
                     Published("12.9B", "active", _MIXTRAL)),
    "deepseek-v3": (Published("671B", "total", _DEEPSEEK),
                    Published("37B", "active", _DEEPSEEK),
                    Published("685B", "checkpoint", "the deepseek-ai/DeepSeek-V3 model card",
                              note="mtp", parts=("671B", "14B"))),
}


def figures(preset: str) -> tuple[Published, ...]:
    """The published figures of the preset called ``preset``, in the order the documents state them."""
    return FIGURES.get(preset, ())
