"""Widths a type's modeling code computes from its config (with a float, or with floors no basis holds), as its source
writes them.

No polynomial in the sizes gives ``int(multiplier * int(2 * F / 3))`` rounded
up to a multiple (LFM2's feed-forward width): the multiplier is a float of the
config.  For such a type this table holds the computation, transcribed from
transformers' modeling code as a rule :func:`symparams.families.inferred_widths.width`
evaluates exactly.  The engine adds each width to every sampled point (the
floats drawn at random around their defaults, so a fit cannot mistake a width
for the sizes it is computed from) and, where a shape's own fields fit no
basis, fits it in the width instead; the verification and the audit build
every configuration for real, the floats moved too, so a rule transcribed
wrong fails there.  The data holds each rule beside the formula, and
``count --config`` computes the width from the config.json with it.

A width computed with whole numbers only (ConvBERT's kept heads, ``max(1, A //
head_ratio)``, and their width) has no float to move it apart from the fields
it reads: on the multiples the draws keep, it may equal a polynomial in them
(H/2 wherever H over the kept heads is even).  So the fit's points are also
moved off those multiples (see :func:`~.sampling.parted`), and such a width is
fitted in before the fields themselves.
"""

from __future__ import annotations

from ...families.inferred_widths import names_of, width


def _rounded_up(x, multiple: str) -> list:
    """``multiple * ((x + multiple - 1) // multiple)``, with Python's order of operations."""
    return ["*", multiple, ["//", ["+", ["+", x, multiple], -1], multiple]]


#: two thirds of the width, truncated (Lfm2MLP: ``int(2 * intermediate_size / 3)``)
_LFM2_THIRDS = ["int", ["/", ["*", 2, "intermediate_size"], 3]]

#: ConvBERT's attention heads kept, max(1, A // head_ratio) (ConvBertSelfAttention: one head when the quotient is 0)
_CONVBERT_KEPT = ["if", ["//", "num_attention_heads", "head_ratio"], ["//", "num_attention_heads", "head_ratio"], 1]

#: model_type → {width's name: rule}
COMPUTED: dict[str, dict[str, object]] = {
    # Lfm2MLP: with block_auto_adjust_ff_dim, two thirds of intermediate_size, then (with a multiplier) times it,
    # truncated and rounded up to a multiple of block_multiple_of; else intermediate_size itself
    "lfm2": {"ffn_width": ["if", "block_auto_adjust_ff_dim",
                           ["if", ["none", "block_ffn_dim_multiplier"], _LFM2_THIRDS,
                            _rounded_up(["int", ["*", "block_ffn_dim_multiplier", _LFM2_THIRDS]],
                                        "block_multiple_of")],
                           "intermediate_size"]},
    # xLSTMFeedForward: round_up_to_next_multiple_of(hidden_size * ffn_proj_factor, ffn_round_up_to_multiple_of),
    # int() of the float product rounded up; xLSTMLayer: int(hidden_size * qk_dim_factor), and v_dim_factor
    # ConvBertSelfAttention keeps n = max(1, A // head_ratio) heads of (H // n) // 2 each: no polynomial gives n, nor
    # its product with the halved quotient (H = 36, A = 12, head_ratio 1: 12 heads of 1, not H/2 = 18).  transformers
    # raises where n does not divide H: the width is then 0, which the reader refuses
    "convbert": {"attention_heads_kept": _CONVBERT_KEPT,
                 "attention_width": ["if", ["%", "hidden_size", _CONVBERT_KEPT], 0,
                                     ["*", _CONVBERT_KEPT, ["//", ["//", "hidden_size", _CONVBERT_KEPT], 2]]]},
    "xlstm": {"ffn_width": ["int", _rounded_up(["*", "hidden_size", "ffn_proj_factor"],
                                               "ffn_round_up_to_multiple_of")],
              "qk_width": ["int", ["*", "hidden_size", "qk_dim_factor"]],
              "v_width": ["int", ["*", "hidden_size", "v_dim_factor"]]},
}

#: a float of a rule is drawn as its default times one of these, to three decimals, one time in three shifted by a
#: tenth (a decimal no binary fraction is): the widths then move apart from the sizes they are computed from
FACTORS = (1, 0.5, 0.75, 1.25, 1.5, 2)


def computed_for(model_type: str) -> dict[str, object]:
    """The widths ``model_type``'s modeling code computes with a float (see :data:`COMPUTED`)."""
    return dict(COMPUTED.get(model_type, {}))


def floats_of(computed: dict, defaults: dict) -> dict[str, float]:
    """The float fields the rules read → their defaults."""
    names = set().union(*(names_of(rule) for rule in computed.values())) if computed else set()
    return {n: defaults[n] for n in sorted(names) if isinstance(defaults.get(n), float)}


def drawn_float(default: float, rng) -> float:
    value = default * rng.choice(FACTORS) + (0.1 if rng.random() < 1 / 3 else 0)
    return round(value, 3)


#: the operations of a rule that leave whole numbers (a rule of only these is the modeling code's integer arithmetic)
WHOLE = frozenset({"+", "*", "//", "%", "if"})


def whole_number(rule) -> bool:
    """Whether ``rule`` computes with whole numbers only (ConvBERT's kept heads), no float in it.

    >>> whole_number(["//", "h", ["if", "a", "a", 1]]), whole_number(["int", ["*", "h", "f"]])
    (True, False)
    """
    if isinstance(rule, list):
        return rule[0] in WHOLE and all(whole_number(r) for r in rule[1:])
    return True


def ingredients(computed: dict) -> set[str]:
    """The fields the widths of ``computed`` are computed from."""
    return set().union(*(names_of(rule) for rule in computed.values())) if computed else set()


def widths_at(computed: dict, config: dict) -> dict[str, int]:
    """Each width at a config's values (its fields as transformers holds them)."""
    return {name: width(rule, config) for name, rule in computed.items()}
