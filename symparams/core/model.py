"""The Model: one family's Block tree plus values for (some of) its symbols.

Everything the package shows (counts, JSON, formulas, documents, proofs)
comes from a :class:`Model`.  It is immutable: :meth:`Model.subs` returns a
new one.

>>> from symparams import model
>>> m = model("bert-base")
>>> m.count
109482240
>>> m.components["embeddings"]
23837184
>>> m.subs(L=24, H=1024, A=16).count
335141888
>>> model("bert").total
H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3)
"""

from __future__ import annotations

import numbers
import re
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any, Mapping

import sympy as sp

from .algebra import BlockCounts, closed_form, exact_counts, whole
from .blocks import Block
from .display import Displayable, presentation
from .errors import SymparamsError
from .family import Family
from .formatting import json_number, percent, text_table, thousands
from .symbols import SYMBOLS
from .values import parse_value

#: a layer's index in a module path (``encoder.block.0.``), folded to ``*`` as for every layer
_LAYER_INDEX = re.compile(r"\.\d+(?=\.|$)")


@lru_cache(maxsize=256)
def build_tree(family: Family, switches: tuple, head: str | None) -> Block:
    """The family's Block tree for these switches and head, built once.

    The tree depends on nothing else, so models that differ only in values
    (every preset of a family) share one tree and what is derived from it.
    """
    return family.build(dict(switches), head)


def tree_of(family: Family, switches: Mapping[str, Any], head: str | None) -> Block:
    """The family's Block tree for these (resolved) switches and head: :func:`build_tree`'s, built once."""
    key = tuple(sorted(switches.items()))
    try:
        hash(key)
    except TypeError:  # an unhashable switch value: build afresh
        return family.build(switches, head)
    return build_tree(family, key, head)


class Model(Displayable):
    """A parameter-count model.

    Parameters
    ----------
    family : Family
        (:func:`symparams.model` takes a family's or a preset's name.)
    values : mapping of symbol name to value
        Values for some or all symbols; the rest stay symbolic.
    switches : mapping of switch name to value
    head : str or None
        A task head (``"masked-lm"``, ...).
    name : str or None
        A display name (preset name, config path).
    notes : sequence of str
        What the model's source says of how it is counted (a config.json
        whose checkpoint differs from what transformers builds from it).
    double_entry : mapping or None
        How a config.json's count was cross-checked against a second
        derivation (``symparams.families.double_entry``); shown by
        :meth:`to_dict`, dropped by a variant with other values or head.
    saved_as : SavedAs or None
        The class a config.json's ``architectures`` names, as a head
        (:mod:`symparams.families.architectures`): what its checkpoint
        holds, shown beside the count.
    optional : set of str
        Keys of ``values`` that may go unused (a preset's, when switches
        drop a symbol); others must be used.
    reread : callable or None
        For a model read from a config.json: ``reread(changes, head)``, the
        model of the same file with ``changes`` (values and switches) set as
        ``--set`` sets them, written into the fields they name.  Then
        :meth:`subs` and :meth:`with_switches` mean what editing the file
        means (a width the file gives stays when H changes).
    """

    def __init__(self, family: Family | str, values: Mapping[str, Any] | None = None,
                 switches: Mapping[str, Any] | None = None, head: str | None = None,
                 name: str | None = None, optional: frozenset[str] = frozenset(), notes: tuple[str, ...] = (),
                 double_entry: Mapping[str, Any] | None = None, saved_as=None, reread=None):
        if not isinstance(family, Family):
            raise SymparamsError(f"Model() takes a Family, not {type(family).__name__} "
                                 f"(symparams.model({family!r}) takes a name)")
        self.family = family
        for what, given in (("values", values), ("switches", switches)):
            if given is not None and not isinstance(given, Mapping):
                raise SymparamsError(f"Model() takes {what} as a mapping of names, not {type(given).__name__}")
        self.head = self.family.check_head(head)
        self.given_switches = dict(switches or {})  # as given: a variant with another head resolves them anew
        self.switches = self.family.resolve(self.given_switches, self.head)
        self.optional = frozenset(optional)  # values a preset gave, dropped where a variant does not use them
        self.notes = tuple(notes)
        self.double_entry = double_entry
        self.saved_as = saved_as
        self.reread = reread
        self.name = name or self.family.name
        self.tree: Block = tree_of(self.family, self.switches, self.head)
        given = {k: parse_value(k, v) for k, v in (values or {}).items() if v is not None}  # None: leave free
        used = {s.name for s in self.symbols}
        for key in list(given):
            if key not in used and key in optional:
                del given[key]  # a preset's value for a symbol this variant does not use
            elif key not in used:
                raise SymparamsError(
                    f"symbol {key} is not used by {self.name} (its symbols: {' '.join(s.name for s in self.symbols)})")
        self.values: dict[sp.Symbol, sp.Expr] = {
            s: given[s.name] if s.name in given else self.family.defaults[s]
            for s in self.symbols if s.name in given or s in self.family.defaults
        }
        self._check_constraints()

    # -- structure ---------------------------------------------------------
    @cached_property
    def symbols(self) -> list[sp.Symbol]:
        """Symbols the model is written in (A included, though it may cancel)."""
        return list(self.tree.symbols)

    @property
    def free(self) -> list[sp.Symbol]:
        """Symbols still without a value."""
        return [s for s in self.symbols if s not in self.values]

    def _check_constraints(self):
        names = {s.name: v for s, v in self.values.items()}
        for c in self.family.constraints:
            if not c.expr.free_symbols <= set(self.values):
                continue
            value = c.expr.xreplace(self.values)
            if not (value.is_Integer and value > 0):
                raise SymparamsError(c.message.format(value=value, **names))

    # -- counts -------------------------------------------------------------
    def evaluate(self, expr) -> sp.Expr:
        """``expr`` (a SymPy expression, a number, or a symbol's name) with this model's values substituted.

        Text other than a symbol's name is refused, never parsed: parsing text
        with SymPy runs it as Python.

        >>> from symparams import model
        >>> model("bert-base").evaluate("H"), model("bert-base").evaluate(model("bert").tree.total) > 0
        (768, True)
        """
        if isinstance(expr, str):
            if expr not in SYMBOLS:
                raise SymparamsError(f"evaluate() takes a SymPy expression or a symbol's name, not {expr[:40]!r}")
            expr = SYMBOLS[expr].symbol
        elif isinstance(expr, numbers.Rational) and not isinstance(expr, bool):
            expr = sp.Rational(int(expr.numerator), int(expr.denominator))
        elif not isinstance(expr, sp.Basic):
            raise SymparamsError(f"evaluate() takes a SymPy expression or a symbol's name, not {type(expr).__name__}")
        return sp.expand(expr.xreplace(self.values))

    def _number(self, expr: sp.Expr):
        value = self.evaluate(expr)
        return int(value) if value.is_Integer else value

    @cached_property
    def closed_form(self) -> sp.Expr:
        """The simplified total in all the symbols (values not substituted)."""
        return closed_form(self.tree.total)

    @cached_property
    def total(self) -> sp.Expr:
        """The simplified total with the values given substituted."""
        return closed_form(self.evaluate(self.tree.total))

    @cached_property
    def trainable_total(self) -> sp.Expr:
        return closed_form(self.evaluate(self.tree.trainable_total))

    @cached_property
    def active_total(self) -> sp.Expr:
        """The simplified count of the parameters one token uses, with the values given substituted."""
        return closed_form(self.evaluate(self.tree.active_total))

    @property
    def routed(self) -> bool:
        """Whether the model has routed experts (a token uses only some of them, so ``active`` < ``count``
        unless every expert is used)."""
        return self.tree.routed

    def _require_values(self, what: str):
        if self.free:
            raise SymparamsError(
                f"{self.name}: no value for {', '.join(s.name for s in self.free)}, so the {what} is not a number "
                f"(give them with --set KEY=VALUE, or start from a preset)")

    @cached_property
    def _exact(self) -> dict[int, BlockCounts]:
        self._require_values("count")
        return exact_counts(self.tree, self.values, f"{self.name}: ")

    def counts_of(self, block: Block) -> BlockCounts:
        """The exact numbers of ``block`` (a block of this model's tree) at this model's values."""
        return self._exact[id(block)]

    @property
    def count(self) -> int:
        """The exact number of parameters (an error names any symbol without a value)."""
        self._require_values("count")
        c = self.counts_of(self.tree)
        return c.repeat * c.total

    @property
    def trainable(self) -> int:
        """The exact number of trainable parameters."""
        self._require_values("trainable count")
        c = self.counts_of(self.tree)
        return c.repeat * c.trainable

    @property
    def trainable_share(self) -> Fraction:
        """Trainable parameters as an exact fraction of all of them."""
        return Fraction(self.trainable, self.count)

    @property
    def active(self) -> int:
        """The exact number of parameters one token uses: of each mixture-of-experts layer, its top-k
        routed experts (the others left out), the shared experts, the router; all of every other block.
        Equal to :attr:`count` for a model without routed experts.

        >>> from symparams import model
        >>> m = model("mixtral-8x7b", head="causal-lm")
        >>> m.count, m.active
        (46702792704, 12879925248)
        """
        self._require_values("active count")
        c = self.counts_of(self.tree)
        return c.used * c.active

    @property
    def active_share(self) -> Fraction:
        """Active parameters as an exact fraction of all of them."""
        return Fraction(self.active, self.count)

    def _contribution(self, block: Block, copies: sp.Expr) -> Any:
        """What ``block`` (held ``copies`` times) adds: an integer once every symbol has a value."""
        if self.free:
            return self._number(copies * block.count)
        c = self.counts_of(block)
        return whole(copies, self.values) * c.total

    @cached_property
    def components(self) -> dict[str, Any]:
        """Top-level components: name → count (an integer once all values are given)."""
        out = {name: 0 for name in self.family.components}
        for child in self.tree.children:
            out[child.name] = self._contribution(child, child.repeat)
        return out

    def block(self, path: str) -> Block:
        """The block at dotted ``path`` (e.g. ``"encoder.layer.attention"``)."""
        if not isinstance(path, str):
            raise SymparamsError(f"a component's path is text such as 'encoder.layer', not {type(path).__name__}")
        try:
            return self.tree.find(path)
        except KeyError:
            raise SymparamsError(f"{self.name} has no component {path!r}") from None

    def reference_counts(self) -> dict[str, tuple[int, bool]]:
        """Parameter path (transformers naming, layers as ``*``) → (count, trainable)."""
        self._require_values("count")
        out: dict[str, tuple[int, bool]] = {}
        for path, size, trainable in self.tree.reference_params():
            # several of our blocks may map to one tensor path (GPT-2's fused c_attn) or to one
            # layer-folded path (T5's layer.0 / layer.1 / layer.2): they add up
            path = _LAYER_INDEX.sub(".*", path)  # a module of one layer (T5's block.0 bias) folded alike
            before, _ = out.get(path, (0, trainable))
            out[path] = (before + whole(size, self.values), trainable)
        return out

    def breakdown(self) -> Breakdown:
        """Rows ``(component, count, share)`` for the top-level components.

        The share is an exact ``Rational`` of the total (``None`` while the
        count is symbolic).  The rows come as a :class:`Breakdown`, a tuple
        that notebooks show as a table.
        """
        total = None if self.free else self.count
        rows = []
        for name, value in self.components.items():
            share = sp.Rational(value, total) if total else None
            rows.append((name, value, share))
        return Breakdown(rows, total if total is not None else self.total, self.name)

    def rows(self, depth: int = 2):
        """Yield ``(level, path, block, count, share)`` for blocks down to ``depth``.

        ``count`` is what the block contributes to the model (all its copies);
        ``share`` its exact fraction of the total (``None`` while symbolic).
        """
        self._check_depth(depth)
        total = None if self.free else self.count
        for path, block, copies in self.tree.walk():
            level = path.count(".")
            if 1 <= level <= depth:
                value = self._contribution(block, copies)
                share = sp.Rational(value, total) if total else None
                yield level, path.split(".", 1)[1], block, value, share

    # -- variants --------------------------------------------------------------
    def subs(self, **values) -> "Model":
        """A new model with more (or other) values; for a model read from a config.json, the model of the file
        with the values written into the fields they name, as transformers builds the edited file (``reread``).

        >>> from symparams import model
        >>> neox = model({"model_type": "gpt_neox", "hidden_size": 256, "intermediate_size": 512,
        ...               "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 1000})
        >>> neox.evaluate("r"), neox.subs(H=512).evaluate("r")  # intermediate_size stays 512 as H doubles
        (2, 1)
        """
        if self.reread is not None:
            return self.reread(values, self.head)
        merged = {s.name: v for s, v in self.values.items()}
        merged.update(values)
        return Model(self.family, merged, self.switches, self.head, self.name, self.optional - set(values),
                     self.notes, saved_as=self.saved_as)

    def with_switches(self, **switches) -> "Model":
        """A new model with other switches; a preset's value the new variant does not use is dropped.

        >>> from symparams import model
        >>> model("transformer-base").with_switches(positions="none").count
        63082496
        """
        if self.reread is not None:
            return self.reread(switches, self.head)
        merged = dict(self.switches)
        merged.update(switches)
        return Model(self.family, {s.name: v for s, v in self.values.items()}, merged, self.head, self.name,
                     self.optional, self.notes, saved_as=self.saved_as)

    def with_head(self, head: str | None) -> "Model":
        """The same model with another task head (None: the base model); switches the head decides
        (BERT's pooler) are decided anew unless they were given.

        >>> from symparams import model
        >>> model("llama-3-8b").with_head("causal-lm").count
        8030261248
        """
        return Model(self.family, {s.name: v for s, v in self.values.items()}, self.given_switches, head,
                     self.name, self.optional, self.notes, saved_as=self.saved_as,
                     reread=self.reread)

    def saved_model(self) -> "Model":
        """The model as its config.json's ``architectures`` says the checkpoint was saved: with that class's
        head, read from the config anew; this model when the config names none, or the base model."""
        saved = self.saved_as
        if saved is None or not saved.known or saved.head is None or saved.head == self.head:
            return self
        read = saved.model()  # then this model's values over the file's (a variant made with subs)
        return read.subs(**{s.name: v for s, v in self.values.items() if s in read.symbols})

    @property
    def lm_head(self) -> str | None:
        """The head that makes this family's base model the language model it was trained as
        (``seq2seq-lm``, else ``masked-lm``, else ``causal-lm``); None if it has none."""
        return next((h for h in ("seq2seq-lm", "masked-lm", "causal-lm") if h in self.family.heads), None)

    def prove(self):
        """The head-count (in)variance proof for this model (see :mod:`symparams.analysis.proof`).

        A call-time hook into the analysis layer, like SymPy's ``Printable._repr_latex_``:
        one of the upward imports ``tests/test_layers.py`` allows.
        """
        from ..analysis.proof import prove

        return prove(self)

    def flops(self, s, b=1, causal: bool = False, recompute: bool = False, elementwise: bool = False, **layout):
        """FLOPs of a forward pass and a training step over ``b`` sequences of ``s`` positions, and with a
        parallel ``layout`` (``tensor_parallel=8``, ...) its most loaded rank's (see
        :mod:`symparams.analysis.flops` for the conventions).  A call-time hook into the analysis
        layer, like :meth:`prove`."""
        from ..analysis.flops import Flops

        return Flops(self, s, b, causal=causal, recompute=recompute, elementwise=elementwise, **layout)

    def memory(self, dtype: str = "bf16", optimizer: str = "adam", zero: int = 0, ranks: int = 1,
               seq=None, batch=1, **options):
        """Bytes of weights, gradients, optimizer state, activations and KV cache for training or serving
        (see :mod:`symparams.analysis.memory`).  A call-time hook into the analysis layer, like :meth:`prove`."""
        from ..analysis.memory import Memory

        return Memory(self, dtype=dtype, optimizer=optimizer, zero=zero, ranks=ranks, seq=seq, batch=batch,
                      **options)

    def kv_cache(self, dtype: str = "bf16", seq=None, batch=1, kv_dtype=None, block_size=None):
        """The key/value cache: bytes per token of context, and for ``batch`` sequences of ``seq`` tokens, in
        ``kv_dtype`` (default: the weights' cache dtype; fp8, int8, int4 as servers quantize it), paged in
        blocks of ``block_size`` tokens (see :mod:`symparams.analysis.cache`, :mod:`~symparams.analysis.kv_serving`).
        A call-time hook into the analysis layer."""
        from ..analysis.cache import KVCache

        return KVCache(self, dtype=dtype, seq=seq, batch=batch, kv_dtype=kv_dtype, block_size=block_size)

    def lora(self, r, targets, dora: bool = False, bias: str = "none"):
        """A LoRA adapter of rank ``r`` on the modules ``targets`` names (or ``"all-linear"``), counted as PEFT
        counts it (see :mod:`symparams.analysis.adapters`).  A call-time hook into the analysis layer."""
        from ..analysis.adapters import LoRA

        return LoRA(self, r, targets, dora=dora, bias=bias)

    def explain(self, claim):
        """The ledger that reconciles a published count (``"110M"``, ``6.74e9``) with this exact one
        (see :mod:`symparams.analysis.explain`): a generative model without a head is counted as its released
        checkpoint is, with its LM head (:meth:`as_released`).  A call-time hook into the analysis layer."""
        from ..analysis.explain import explain

        return explain(self.as_released(), claim)

    def as_released(self) -> "Model":
        """The model a published size counts: a generative model's checkpoint with its LM head
        (``LlamaForCausalLM``, ``T5ForConditionalGeneration``), an encoder as it is (BERT's 110M is
        ``BertModel``'s), a model with a head as it is."""
        generative = self.head is None and self.lm_head in ("causal-lm", "seq2seq-lm")
        return self.with_head(self.lm_head) if generative else self

    def derive(self, format: str = "md", lang: str = "en", title: str | None = None,
               template: str | None = None) -> str:
        """The derivation document of this model (``format``: ``md``, ``tex`` or ``html``)."""
        return presentation().derive(self, format=format, lang=lang, title=title, template=template)

    def to_dict(self, depth: int | None = None) -> dict[str, Any]:
        """The JSON-ready summary the CLI prints with ``--json``; with ``depth``, also the nested ``tree``
        of components down to that level (each with its count over all its copies, and ``repeat``).
        ``active`` is the count one token uses (:attr:`active`); a model with routed experts gives it for
        every component of the tree too, and for the model with its LM head (``with_lm_head``).

        >>> from symparams import model
        >>> tree = model("bert-base").to_dict(depth=2)["tree"]
        >>> [(c["name"], c["count"], [g["name"] for g in c["children"]]) for c in tree][1]
        ('encoder', 85054464, ['layer'])
        """
        self._require_values("count")
        out = {
            "model": self.name,
            "family": self.family.name,
            "head": self.head,
            "values": {s.name: json_number(v) for s, v in self.values.items()},
            "switches": dict(self.switches),
            "total": self.count,
            "trainable": self.trainable,
            "active": self.active,
            "components": dict(self.components),
        }
        if self.notes:
            out["notes"] = list(self.notes)
        if self.double_entry is not None:
            out["double_entry"] = self.double_entry
        if self.saved_as is not None:
            saved = self.saved_as
            out["saved_as"] = {"class": saved.name, "head": saved.head,
                               "total": self.saved_model().count if saved.known else None}
        if self.head is None and self.lm_head is not None:
            lm = self.with_head(self.lm_head)
            out["with_lm_head"] = {"head": self.lm_head, "total": lm.count}
            if self.routed:  # the figure published for a mixture of experts: active with the LM head
                out["with_lm_head"]["active"] = lm.active
        if depth is not None:
            self._check_depth(depth)
            out["tree"] = [self._node(child, 1, 1, level=1, depth=depth) for child in self.tree.children]
        return out

    def _node(self, block: Block, copies: int, used: int, level: int, depth: int) -> dict[str, Any]:
        counts = self.counts_of(block)
        copies *= counts.repeat
        used *= counts.used
        node = {"name": block.name, "count": copies * counts.total, "repeat": counts.repeat}
        if self.routed:  # what one token uses of it, over all its copies
            node["active"] = used * counts.active
        if block.tied_to:
            node["tied_to"] = block.tied_to
        if not block.trainable:
            node["trainable"] = False
        node["children"] = ([self._node(c, copies, used, level + 1, depth) for c in block.children]
                            if level < depth else [])
        return node

    @staticmethod
    def _check_depth(depth) -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise SymparamsError(f"depth must be a whole number of levels, 1 or more, not {depth!r}")

    def __repr__(self) -> str:
        vals = ", ".join(f"{s.name}={v}" for s, v in self.values.items())
        return f"<Model {self.name} ({self.family.name}{', ' + self.head if self.head else ''}) {vals}>"


class Breakdown(Displayable, tuple):
    """The rows ``(component, count, share)`` of a model's top-level components.

    A tuple of rows (iterate it, index it, sum its shares), plus the total
    and the notebook displays.  A count is an ``int`` once every symbol has
    a value (an expression before); a share is an exact ``Rational`` of the
    total (``None`` while symbolic).

    >>> from symparams import model
    >>> b = model("bert-base").breakdown()
    >>> b[0]
    ('embeddings', 23837184, 4434/20365)
    >>> print(b)
    component    parameters    share
    embeddings   23,837,184   21.77%
    encoder      85,054,464   77.69%
    pooler          590,592    0.54%
    total       109,482,240  100.00%
    """

    total: Any
    name: str

    def __new__(cls, rows, total=None, name: str = ""):
        self = super().__new__(cls, (tuple(r) for r in rows))
        self.total = total
        self.name = name
        return self

    def cells(self, number, formula) -> tuple[list[tuple], Any]:
        """The rows with counts shown by ``number`` (or ``formula`` while symbolic), shares as
        percentages; and the total shown the same way (None when there is none)."""
        rows = []
        for comp, value, share in self:
            numeric = share is not None or not isinstance(value, sp.Basic) or value.is_Integer
            rows.append((comp, number(value) if numeric else formula(value), percent(share) if share is not None
                         else ""))
        total = None
        if self.total is not None:
            total = number(self.total) if isinstance(self.total, int) else formula(self.total)
        return rows, total

    def __str__(self) -> str:
        rows, total = self.cells(thousands, sp.sstr)
        if total is not None:
            rows.append(("total", total, "100.00%" if isinstance(self.total, int) else ""))
        return text_table(("component", "parameters", "share"), rows, "lrr")
