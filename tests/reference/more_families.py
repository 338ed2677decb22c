"""The transformers reference for XLM-RoBERTa, BERT's added heads, DeBERTa-v2, MPNet, ModernBERT and the
BART-like encoder–decoders (BART, mBART, Pegasus, M2M-100, Marian), built on the meta device.

``config(m)`` writes the transformers config for a symparams model (its values, switches and head) as a
config.json dict; ``reference(data, head)`` builds the class the family's ``CLASSES`` table names for that
head from such a dict, as ``from_pretrained`` would (``from_dict`` of the config class).
"""

from __future__ import annotations

import transformers

from symparams.families import bart, bert, deberta_v2, m2m_100, marian, mbart, modernbert, mpnet, pegasus, roberta

from .hf import build, normalize, totals

#: each config.json model_type and the CLASSES table of the family that reads it
CLASSES = {
    "bert": bert.CLASSES, "roberta": roberta.CLASSES, "xlm-roberta": roberta.XLM_ROBERTA_CLASSES,
    "deberta-v2": deberta_v2.CLASSES, "mpnet": mpnet.CLASSES, "modernbert": modernbert.CLASSES,
    "bart": bart.CLASSES, "mbart": mbart.CLASSES, "pegasus": pegasus.CLASSES, "m2m_100": m2m_100.CLASSES,
    "marian": marian.CLASSES,
}


def values(m) -> dict:
    return {s.name: (int(v) if v.is_Integer else v) for s, v in m.values.items()}


def encoder_config(m, model_type):
    """BERT, RoBERTa, XLM-RoBERTa and MPNet: BERT's keys."""
    v, sw = values(m), m.switches
    data = dict(model_type=model_type, vocab_size=v["V"], max_position_embeddings=v["P"], hidden_size=v["H"],
                num_hidden_layers=v["L"], num_attention_heads=v["A"], intermediate_size=int(v["r"] * v["H"]),
                num_labels=v.get("C", 2))
    if "S" in v:
        data["type_vocab_size"] = v["S"]
    if "B" in v:
        data["relative_attention_num_buckets"] = v["B"]
    if "tie" in sw:
        data["tie_word_embeddings"] = sw["tie"]
    return data


def deberta_config(m):
    v, sw = values(m), m.switches
    data = dict(model_type="deberta-v2", vocab_size=v["V"], hidden_size=v["H"], num_hidden_layers=v["L"],
                num_attention_heads=v["A"], intermediate_size=int(v["r"] * v["H"]), num_labels=v.get("C", 2),
                max_position_embeddings=v.get("P", 512), position_biased_input=sw["positions"],
                type_vocab_size=v.get("S", 0), embedding_size=v.get("E", v["H"]),
                relative_attention=sw["relative"], position_buckets=v.get("B", -1),
                norm_rel_ebd="layer_norm" if sw["rel_norm"] else "none", share_att_key=sw["share_att_key"],
                pos_att_type=[t for t in ("c2p", "p2c") if sw[t]], legacy=sw["legacy"],
                tie_word_embeddings=sw["tie"])
    return data


def modernbert_config(m):
    v, sw = values(m), m.switches
    return dict(model_type="modernbert", vocab_size=v["V"], hidden_size=v["H"], num_hidden_layers=v["L"],
                num_attention_heads=v["A"], intermediate_size=v["F"], num_labels=v.get("C", 2),
                pad_token_id=min(50283, v["V"] - 1), tie_word_embeddings=sw["tie"],
                **{name: sw[name] for name in ("norm_bias", "attention_bias", "mlp_bias", "classifier_bias",
                                               "decoder_bias")})


def seq2seq_config(m, model_type):
    """BART and the configs copied from it: the decoder's own sizes where the model has them."""
    v, sw = values(m), m.switches
    data = dict(model_type=model_type, vocab_size=v["V"], d_model=v["H"],
                encoder_layers=v.get("L", 1), decoder_layers=v["L_d"] if sw["split_layers"] else v.get("L", 1),
                encoder_attention_heads=v.get("A", 1),
                decoder_attention_heads=v["A_d"] if sw["split_heads"] else v.get("A", 1),
                encoder_ffn_dim=int(v.get("r", 1) * v["H"]),
                decoder_ffn_dim=int((v["r_d"] if sw["split_ffn"] else v.get("r", 1)) * v["H"]),
                max_position_embeddings=v.get("P", 1024), tie_word_embeddings=sw["tie"], pad_token_id=1)
    if "C" in v:
        data["num_labels"] = v["C"]
    if model_type == "marian":
        data.update(share_encoder_decoder_embeddings=sw["share"], decoder_vocab_size=v.get("V_d", v["V"]))
    return data


def config(m, model_type=None) -> dict:
    """The config.json dict transformers needs to build ``m`` (``model_type``: xlm-roberta for the roberta
    family's XLM-RoBERTa models)."""
    fam = m.family.name
    if fam in ("bert", "mpnet", "roberta"):
        return encoder_config(m, model_type or fam)
    if fam == "deberta_v2":
        return deberta_config(m)
    if fam == "modernbert":
        return modernbert_config(m)
    return seq2seq_config(m, fam)


def reference(data, head=None):
    """The transformers model for ``head`` built from a config.json dict, on the meta device, and the prefix of
    its base model."""
    cls, prefix = CLASSES[data["model_type"]][head]
    return build(cls, transformers.CONFIG_MAPPING[data["model_type"]].from_dict(dict(data))), prefix


def tensors(module, prefix, names) -> dict[str, tuple[int, bool]]:
    """Like :func:`tests.reference.hf.parameters`, but a tensor shared by several modules is listed under the
    one of its names in ``names`` (ours) if any: PyTorch lists it under the first module registered, and
    ``XLMRobertaForMaskedLM`` registers ``lm_head`` (whose decoder is the word table) before ``roberta``."""
    aliases: dict[int, tuple] = {}
    for name, p in module.named_parameters(remove_duplicate=False):
        if prefix and name.startswith(prefix):
            name = name[len(prefix):]
        aliases.setdefault(id(p), (p, []))[1].append(normalize(name))
    out: dict[str, tuple[int, bool]] = {}
    for p, found in aliases.values():
        key = next((a for a in found if a in names), found[0])
        n, trainable = out.get(key, (0, p.requires_grad))
        assert trainable == p.requires_grad, f"{key}: layers disagree on requires_grad"
        out[key] = (n + p.numel(), trainable)
    return out


def assert_same(m, module, prefix):
    """Per-parameter, total and trainable equality, where a block repeated 0 times (ModernBERT's L − 1
    attention norms when L = 1) stands for the tensor transformers does not build."""
    ours = {k: v for k, v in m.reference_counts().items() if v[0] != 0}
    theirs = tensors(module, prefix, ours)
    assert ours == theirs, (sorted(set(ours) ^ set(theirs)),
                            [(k, ours[k], theirs[k]) for k in set(ours) & set(theirs) if ours[k] != theirs[k]])
    assert (m.count, m.trainable) == totals(module)


def check(m, data=None, model_type=None):
    """``m`` equals what transformers builds from ``data`` (default: ``config(m, model_type)``) with ``m``'s
    head."""
    module, prefix = reference(data or config(m, model_type), m.head)
    assert_same(m, module, prefix)
    return m
