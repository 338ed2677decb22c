"""Model → the data a derivation document shows.

A :class:`Derivation` walks a model's Block tree top-down, like the articles:
one :class:`Item` per component and part, each with its formula as written
(``A`` kept visible in the per-head forms), the same formula with the
numbers substituted but not evaluated, the count, and its exact share of the
total.  Then the summary table, the closed form, the head-count proof and the
notes comparing with the source articles.

Every number and formula comes from the model tree; the templates only lay
them out (and look up prose by the items' title keys).  Nothing here knows
the path of a BERT module: it works for any family.

>>> from symparams import model
>>> d = derive(model("bert-base"))
>>> [s.path for s in d.sections]
['embeddings', 'encoder', 'pooler']
>>> d.sections[0].formula
'\\\\left(V + P + S\\\\right) H + 2 H'
>>> d.sections[0].substituted
'\\\\left(30522 + 512 + 2\\\\right) \\\\times 768 + 2 \\\\times 768'
>>> from symparams.core.formatting import percent
>>> d.sections[0].count, percent(d.sections[0].share)
(23837184, '21.77%')
>>> sum(s.share for s in d.sections)
1
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import sympy as sp

from ..core.algebra import by_layer_kind, closed_form
from ..core.blocks import Block
from ..core.compute import untraced
from ..core.errors import SymparamsError
from ..core.formatting import ratio
from ..core.family import Switch
from ..core.model import Model, tree_of
from ..core.symbols import SYMBOLS
from ..core.values import parse_value
from ..families.presets import all_presets
from .articles import notes_for, related_for
from .commands import suggested
from .costs_view import CostsView, costs_view
from .shards_view import ShardView, shards_view
from .laws_view import LawsView, laws_view
from .finetune_view import FinetuneView, finetune_view
from .formulas import latex, latex_numbers, math_count
from .head_change import HeadChange, head_change
from .items import Builder, Item, SummaryRow
from .proof_view import ProofView, has_floor, proof_view
from .published_view import published_view, released_bf16
from .walk import presented

__all__ = ["Derivation", "Item", "SummaryRow", "ProofView", "CostsView", "derive", "latex", "latex_numbers",
           "math_count", "presented"]


@dataclass(frozen=True, eq=False)  # hashed by identity: the documents' data is cached per derivation
class Derivation:
    """Everything a derivation document shows, computed once per model."""

    name: str
    family: str
    family_title: dict
    preset: str | None
    preset_title: dict | None
    changes: tuple[tuple[str, str, str], ...]   # (symbol or switch, preset value, this value)
    head: str | None
    symbols: tuple[dict, ...]
    switches: tuple[dict, ...]
    sections: tuple[Item, ...]
    summary: tuple[SummaryRow, ...]
    total: int
    trainable: int
    trainable_share: Fraction
    closed_form: sp.Expr
    closed_formula: str
    closed_substituted: str
    proof: ProofView
    notes: tuple = ()
    related: tuple = ()
    largest: Item | None = None
    outline: tuple[dict, ...] = field(default=())
    #: the parameters one token uses (routed experts it is not sent to left out), its share and closed form
    active: int = 0
    active_share: Fraction = Fraction(1)
    active_formula: str = ""
    #: a base model's LM head (the one it was trained with) and the total with it: what a model card counts
    lm_head: str | None = None
    with_lm_head: int | None = None
    #: what that head drops from the base model's tree and adds to it (see :mod:`.head_change`)
    head_change: HeadChange | None = None
    #: what a forward pass and a training step cost, and what they hold in memory
    costs: "CostsView | None" = None
    shards: "ShardView | None" = None
    #: the published FLOPs laws beside the exact count, part by part
    laws: "LawsView | None" = None
    #: LoRA and QLoRA of the released model at one common setting
    finetune: "FinetuneView | None" = None
    #: the counting rules this model needs (catalog keys ``intro.rule_*``), in the order the text states them
    rules: tuple[str, ...] = ()
    #: the preset's published sizes, each with the exact numbers that reconcile it (see :mod:`.published_view`)
    published: tuple[dict, ...] = ()
    #: the bytes of the released model's weights in bf16, where it is not the model counted (an LM head added)
    released_bf16: int = 0
    #: the family was inferred from transformers' builds (no article tells its story)
    inferred: bool = False
    #: the closed form holds a whole-number division (a floor: an inferred head width ⌊H/A⌋)
    floors: bool = False
    #: the closed form is kept per kind of layer (dense, then with experts), not collected in powers of H
    by_layer_kind: bool = False
    #: the closed form is a polynomial in the sizes (no G/A, no 1/A): else the text calls it a closed form
    polynomial: bool = True
    #: how the commands a document suggests name the model ("": by --config and its config.json)
    target: str = ""

    @property
    def items(self):
        """Every item of every section, depth first."""
        for s in self.sections:
            yield from s.walk()



def rules_of(tree: Block, inferred: bool = False) -> tuple[str, ...]:
    """The counting rules ``tree`` needs: its linear layers' (with biases, some, none), embeddings', norms'
    (with a shift: LayerNorm; a scale only: RMSNorm), and the shape convention; an ``inferred`` tree's other
    tensors are whatever transformers holds (experts, bare parameters, GPT-2's Conv1D), shown as stored."""
    leaves = [block for _, block, _ in tree.walk() if block.is_leaf]
    linear = [block for block in leaves if block.kind == "linear"]
    biased = sum(any(name == "bias" for name, _ in block.params) for block in linear)
    norms = {(len(block.params), block.mean) for block in leaves if block.kind == "norm"}
    rules = []
    if linear:
        rules.append("rule_linear" if biased == len(linear) else "rule_linear_no_bias" if not biased
                     else "rule_linear_some_bias")
    if any(block.kind == "embedding" for block in leaves):
        rules.append("rule_embedding")
    # a scale-only norm is an RMSNorm or a LayerNorm without shift; said as what it is, where the tree knows
    rules += [rule for kinds, rule in (({(2, True), (2, None)}, "rule_layer_norm"),
                                       ({(1, True)}, "rule_layer_norm_no_shift"), ({(1, False)}, "rule_rms_norm"),
                                       ({(1, None)}, "rule_scale_norm")) if kinds & norms]
    rules.append("rule_shapes")
    if any(block.kind == "tensor" for block in leaves):  # experts' fused tensors, shown as stored
        rules.append("rule_stored" if inferred else "rule_tensors")
    return tuple(rules)



def _preset_of(m: Model):
    """The preset ``m`` is named after (or None), and what ``m`` changes in it."""
    preset = all_presets().get(m.name)
    if preset is None or preset.family != m.family.name:
        return None, ()
    changes = []
    for key, raw in preset.values.items():
        sym = SYMBOLS[key].symbol
        if sym in m.values and m.values[sym] != parse_value(key, raw):
            changes.append((key, ratio(parse_value(key, raw)), ratio(m.values[sym])))
    resolved = m.family.resolve(dict(preset.switches), m.head)
    for key, value in m.switches.items():
        if resolved.get(key) != value:
            changes.append((key, _switch_text(resolved.get(key)), _switch_text(value)))
    return preset, tuple(changes)


def _switch_text(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _symbols(m: Model) -> tuple[dict, ...]:
    rows = []
    for s in m.symbols:
        info = SYMBOLS.get(s.name)
        value = m.values.get(s)
        rows.append({
            "name": s.name, "latex": sp.latex(s),
            "en": info.en if info else s.name, "zh": info.zh if info else s.name,
            "value": ratio(value) if value is not None else "",
            "value_latex": sp.latex(value) if value is not None else "",
        })
    return tuple(rows)


def _switches(m: Model) -> tuple[dict, ...]:
    """Every switch of the family, with whether this model's tree depends on it (``shapes``: a document lists
    only those; a variant names any it changed)."""
    return tuple({"name": sw.name, "value": _switch_text(m.switches.get(sw.name)), "en": sw.en, "zh": sw.zh,
                  "shapes": shapes_tree(m, sw)} for sw in m.family.switches)


def shapes_tree(m: Model, switch: Switch) -> bool:
    """Whether another value of ``switch`` (the others as they are) builds another tree for ``m``'s head: a switch
    the build reads only for a head, such as a token-classification bias or a tied LM head, does not shape the
    base model's, and a switch that decides nothing here is not this model's to describe.

    >>> from symparams import model
    >>> m = model("t5-base")
    >>> [sw.name for sw in m.family.switches if shapes_tree(m, sw)]
    ['gated', 'split_layers']
    >>> [sw.name for sw in m.family.switches if shapes_tree(m.with_head("seq2seq-lm"), sw)]
    ['gated', 'tie', 'split_layers']
    """
    value = m.switches.get(switch.name)
    for other in switch.others(value):
        try:
            switches = m.family.resolve({**m.switches, switch.name: other}, m.head)
            if switches.get(switch.name) != value and tree_of(m.family, switches, m.head) != m.tree:
                return True
        except SymparamsError:  # a value this head does not allow: the head decides it, not the switch
            continue
    return False


def _with_lm_head(m: Model) -> dict:
    """The base model's LM head, its total with it and what it changes; nothing for a model with a head, or
    without an LM head."""
    change = head_change(m)
    if change is None:
        return {}
    return {"lm_head": change.head, "with_lm_head": change.total, "head_change": change}


def _outline(sections, notes, costs: bool = True, shards: bool = False, laws: bool = False,
             finetune: bool = False) -> tuple[dict, ...]:
    ids = ["intro", "computation", "summary", "closed_form", "heads"] + (["costs"] if costs else []) \
        + (["shards"] if shards else []) + (["laws"] if laws else []) + (["finetune"] if finetune else [])
    if notes:
        ids.append("articles")
    ids.append("conclusion")
    out = []
    for i, ident in enumerate(ids, 1):
        entry = {"id": ident, "number": str(i), "children": []}
        if ident == "computation":
            entry["children"] = [{"id": f"c-{s.path}", "number": f"{i}.{j}", "path": s.path, "keys": list(s.keys),
                                  "names": list(s.names)} for j, s in enumerate(sections, 1)]
        out.append(entry)
    return tuple(out)


class _ByValue:
    """A model compared by what it is (name, family, head, values, switches, the sizes its config left to
    transformers): the key :func:`derive` caches on, so equal models share their derivation."""

    def __init__(self, m: Model):
        self.m = m
        self.key = (m.name, m.family.name, m.head, tuple(sorted((s.name, v) for s, v in m.values.items())),
                    tuple(sorted((k, str(v)) for k, v in m.switches.items())), m.family.follows)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        return isinstance(other, _ByValue) and self.key == other.key


def derive(m: Model) -> Derivation:
    """The derivation of ``m`` (all its symbols must have values)."""
    if m.free:
        raise SymparamsError(
            f"{m.name}: a derivation needs a value for every symbol; none for {', '.join(s.name for s in m.free)} "
            f"(give them with --set KEY=VALUE, or start from a preset)")
    return _derive(_ByValue(m))


@lru_cache(maxsize=16)  # a document is rendered in two formats and two languages
def _derive(key: _ByValue) -> Derivation:
    m = key.m
    commands = suggested(m)
    b = Builder(m, m.count)
    sections = b.sections()
    preset, changes = _preset_of(m)
    notes = notes_for(m)
    closed = m.closed_form
    leaves = [i for s in sections for i in s.walk() if i.leaf and not i.tied_to]
    largest = max(leaves, key=lambda i: i.count // i.multiplicity, default=None)  # one table or matrix
    # a traced model whose costs are only partly known (no activations, say) gets no costs section
    costs = costs_view(m) if commands.costs and not untraced(m.tree) else None
    # the activations a training rank keeps, term by term: only where the costs section gives the memory
    shards = shards_view(m, costs.seq) if costs is not None else None
    laws = laws_view(m, costs.seq) if costs is not None else None
    # LoRA and QLoRA: where the memory command answers (it gives the section's bytes)
    finetune = finetune_view(m) if commands.costs else None
    return Derivation(
        name=m.name, family=m.family.name, family_title=dict(m.family.title),
        preset=preset.name if preset else None,
        preset_title={"en": preset.en, "zh": preset.zh} if preset else None,
        changes=changes, head=m.head, symbols=_symbols(m), switches=_switches(m), sections=sections,
        summary=b.summary(sections), total=m.count, trainable=m.trainable, trainable_share=m.trainable_share,
        closed_form=closed,
        closed_formula=latex(closed), closed_substituted=latex_numbers(closed, m.values),
        proof=proof_view(m), notes=notes, related=related_for(m), largest=largest,
        outline=_outline(sections, notes, costs is not None, shards is not None, laws is not None,
                         finetune is not None),
        active=m.active,
        active_share=m.active_share,
        active_formula=latex(closed_form(m.tree.active_total)) if m.routed else "",
        inferred=m.family.inferred, floors=has_floor(closed), by_layer_kind=by_layer_kind(closed),
        polynomial=closed.is_polynomial(),
        costs=costs, shards=shards, laws=laws, finetune=finetune, rules=rules_of(m.tree, m.family.inferred),
        target=commands.target,
        published=published_view(m, preset.name if preset and not changes else None),
        released_bf16=released_bf16(m) if m.as_released() is not m and costs is not None else 0,
        **_with_lm_head(m))
