"""RoBERTa and XLM-RoBERTa: BERT's base model with RoBERTa's own task heads.

The embeddings, the L encoder layers and the pooler are BERT's, module for
module (``RobertaModel`` has the same tree as ``BertModel``), so they are
built by :mod:`.bert`.  XLM-RoBERTa (``model_type`` xlm-roberta) is RoBERTa
module for module with a 250,002-token vocabulary: ``XLMRobertaModel`` and
its heads are read by this family.  What differs is read from the config:

- P is ``max_position_embeddings`` as transformers stores it, *including*
  the padding offset: roberta-base has 514 rows (positions start at
  ``padding_idx + 1 = 2``), and every row is a parameter;
- S is ``type_vocab_size``, 1 for the released checkpoints (2 is only
  ``RobertaConfig``'s default);
- the heads: ``sequence-classification`` is ``RobertaClassificationHead``
  (dense H·H + H, out_proj H·C + C) *instead of* the pooler; ``masked-lm``
  and ``causal-lm`` are ``RobertaLMHead`` (dense, layer_norm, a bias V and
  the decoder, tied to the word embeddings unless ``tie=false``);
  ``multiple-choice`` (H + 1, one score per choice) is the one head that
  keeps the pooler.

>>> from symparams import model
>>> model("roberta-base").count
124645632
>>> model("xlm-roberta-base").count
278043648
>>> model("roberta-base", head="sequence-classification").components["pooler"]
0
"""

from __future__ import annotations

import sympy as sp

from ..core.blocks import group, layer_norm, linear
from ..core.family import FFN_SIZE, HEAD_DIM, Family, Preset
from ..core.symbols import C, H
from . import bert
from .encoder_parts import TIE, classification_head, lm_decoder, pooler_default, qa_outputs, read_sizes, with_head

#: heads, with the transformers class that builds each (config.json ``model_type`` roberta) and its prefix
CLASSES = {
    None: ("RobertaModel", None),
    "sequence-classification": ("RobertaForSequenceClassification", "roberta."),
    "token-classification": ("RobertaForTokenClassification", "roberta."),
    "question-answering": ("RobertaForQuestionAnswering", "roberta."),
    "masked-lm": ("RobertaForMaskedLM", "roberta."),
    "causal-lm": ("RobertaForCausalLM", "roberta."),
    "multiple-choice": ("RobertaForMultipleChoice", "roberta."),
}

#: the same for ``model_type`` xlm-roberta: XLM-RoBERTa's classes are RoBERTa's, module for module
XLM_ROBERTA_CLASSES = {head: ("XLM" + cls, prefix) for head, (cls, prefix) in CLASSES.items()}

#: heads and whether transformers builds the pooler under them (only multiple-choice does)
HEADS = {
    "sequence-classification": False,
    "token-classification": False,
    "question-answering": False,
    "masked-lm": False,
    "causal-lm": False,
    "multiple-choice": True,
}

#: defaults of ``RobertaConfig`` and ``XLMRobertaConfig``: the same but for the vocabulary
DEFAULTS = {"roberta": dict(V=50265, P=512, S=2, H=768, L=12, A=12, inter=3072)}
DEFAULTS["xlm-roberta"] = {**DEFAULTS["roberta"], "V": 30522}


def heads(head, tie):
    """The task head as transformers builds it (names as in ``RobertaFor*``)."""
    if head == "sequence-classification":
        return classification_head()
    if head in ("token-classification", "multiple-choice"):
        return bert.heads(head)
    if head == "question-answering":
        return qa_outputs()
    if head in ("masked-lm", "causal-lm"):
        return group("lm_head", [linear("dense", H, H, title="mlm_transform"), layer_norm("layer_norm", H),
                                 *lm_decoder(H, tie)], title="mlm_head")
    return None


def build(switches, head):
    base = bert.base_model(switches, decoder=head == "causal-lm")  # RobertaForCausalLM: is_decoder, cached
    return group("roberta", [*base, with_head([heads(head, switches["tie"])])], ref="")


def from_config(cfg):
    """Values from a ``RobertaConfig`` or ``XLMRobertaConfig``; missing keys take its defaults (P=512, S=2,
    as transformers has them)."""
    cfg.refuse("add_cross_attention", True, default=False, family="roberta", what="cross-attention in every layer")
    values = read_sizes(cfg, DEFAULTS[cfg.str("model_type")])
    return values, {"tie": cfg.bool("tie_word_embeddings", default=True)}


FAMILY = Family(
    name="roberta",
    title={"en": "RoBERTa", "zh": "RoBERTa"},
    build=build,
    switches=(bert.FAMILY.switch("pooler"), TIE),
    heads=tuple(h for h in CLASSES if h is not None),
    constraints=(HEAD_DIM, FFN_SIZE),
    defaults={C: sp.Integer(2)},
    components=("embeddings", "encoder", "pooler"),
    resolve_switches=pooler_default(HEADS),
    config_types=("roberta", "xlm-roberta"),
    from_config=from_config,
)

_ROBERTA = dict(V=50265, P=514, S=1, r=4)

PRESETS = (
    Preset("roberta-base", "roberta", {**_ROBERTA, "H": 768, "L": 12, "A": 12},
           en="RoBERTa-base (Liu et al. 2019)", zh="RoBERTa-base（Liu 等人，2019）", reference="RobertaModel"),
    Preset("roberta-large", "roberta", {**_ROBERTA, "H": 1024, "L": 24, "A": 16},
           en="RoBERTa-large (Liu et al. 2019)", zh="RoBERTa-large（Liu 等人，2019）", reference="RobertaModel"),
    Preset("distilroberta-base", "roberta", {**_ROBERTA, "H": 768, "L": 6, "A": 12},
           en="DistilRoBERTa-base (6 layers, RoBERTa architecture)",
           zh="DistilRoBERTa-base（6 层，RoBERTa 结构）", reference="RobertaModel"),
    Preset("xlm-roberta-base", "roberta", {**_ROBERTA, "V": 250002, "H": 768, "L": 12, "A": 12},
           en="XLM-RoBERTa-base (Conneau et al. 2020), 100 languages, 250,002 tokens",
           zh="XLM-RoBERTa-base（Conneau 等人，2020），100 种语言，250,002 个词元", reference="XLMRobertaModel"),
    Preset("xlm-roberta-large", "roberta", {**_ROBERTA, "V": 250002, "H": 1024, "L": 24, "A": 16},
           en="XLM-RoBERTa-large (Conneau et al. 2020), 100 languages, 250,002 tokens",
           zh="XLM-RoBERTa-large（Conneau 等人，2020），100 种语言，250,002 个词元", reference="XLMRobertaModel"),
)
