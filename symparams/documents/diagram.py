"""The block diagram of a model: its components from input to output, each weight with its shape.

Plain data for the templates (TikZ in LaTeX, a Mermaid flowchart in Markdown),
built from a :class:`~symparams.documents.derivation.Derivation`'s items:

* a **frame** is a group that holds a repeated stack (a layer stack ``× L``,
  routed experts ``× N_e``), or is one: it shows its parts one below the other;
* every other group is one **box** that lists the weights below it, each with
  its shape (and its repeat, where a single weight repeats: ModernBERT's
  attention norms, in all layers but the first); a single weight is a box of
  one line.

The diagram is a list of rows in reading order: ``open`` (a frame starts: its
title, and how often it repeats), ``box`` and ``close`` (a frame ends: its
members, and ``links``, its consecutive parts, which keep them one below the
other).  ``follows`` names the row (or closed frame) a row sits below;
``flow`` lists the arrows between the top-level components, in the order the
model computes.

>>> from symparams import model
>>> from symparams.documents.derivation import derive
>>> d = diagram(derive(model("bert-base")), "en")
>>> [(r["kind"], r["id"]) for r in d["rows"]][:3]
[('box', 'n1'), ('open', 'f2'), ('box', 'n3')]
>>> d["rows"][0]["title"], d["rows"][1]["title"]
('Embedding layer', 'Encoder')
>>> [line["shape"] for line in d["rows"][0]["lines"]]
['[30522, 768]', '[512, 768]', '[2, 768]', '2 \\\\times [768]']
>>> d["rows"][1]["repeat"], d["rows"][1]["n"]
('L', '12')
>>> [a for a, _ in d["flow"]]  # from the embeddings to the encoder, from the encoder to the pooler
['n1', 'f2']
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..core.formatting import thousands
from .context import repeat_phrase, title_of
from .derivation import Derivation, Item, latex
from .environment import catalog
from .markup import escape_html_text, prose_html

__all__ = ["diagram", "mermaid_text"]


def _repeated(item: Item) -> bool:
    return item.repeat != 1


def _holds_a_stack(item: Item) -> bool:
    """Whether ``item`` is a repeated group or holds one: then it is a frame, not a box."""
    return not item.leaf and any(_repeated(i) and not i.leaf for i in item.walk())


def _repeat(item: Item) -> dict:
    """How often ``item`` repeats: ``repeated``, ``repeat`` (LaTeX), ``factor`` (the same after ``\\times``,
    a sum in parentheses: ``× (L - L_f)``) and ``n`` (its value)."""
    if not _repeated(item):
        return {"repeated": False, "repeat": "", "factor": "", "n": "", "phrase": "repeat"}
    text = latex(item.repeat)
    return {"repeated": True, "repeat": text, "factor": f"\\left({text}\\right)" if item.repeat.is_Add else text,
            "n": thousands(item.repeat_value), "phrase": repeat_phrase(item.repeat)}


#: what Mermaid reads inside a quoted label: '"' ends it and '#' starts an entity code (#quot;, #35;)
_MERMAID = {"#": "#35;", '"': "#quot;"}
_MERMAID_RE = re.compile('[#"]')


def mermaid_text(html: str) -> str:
    """HTML label text made safe inside a Mermaid ``["…"]`` label (math in plain ``<i>``: no attribute
    needs quotes).

    >>> print(mermaid_text('<b>x</b> "y" #1 <i class="m">W<sup>O</sup></i>'))
    <b>x</b> #quot;y#quot; #35;1 <i>W<sup>O</sup></i>
    """
    return _MERMAID_RE.sub(lambda mo: _MERMAID[mo.group(0)], html.replace('<i class="m">', "<i>"))


class _Builder:
    """Rows in reading order, with ids (``n3`` a box, ``f2`` a frame, ``f2h`` its title row)."""

    def __init__(self, d: Derivation, lang: str):
        self.d, self.t = d, catalog(lang)
        self.rows: list[dict] = []
        self.count = 0

    def _id(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def title(self, item: Item) -> str:
        return title_of(item.keys, item.names, self.d.family, self.t)[0]

    def line(self, item: Item) -> dict:
        """One weight (or a run of identical ones): its shape, what it is tied to, how often it repeats."""
        return {"title": self.title(item), "shape": item.shape_values, "tied": item.tied_to or "",
                **_repeat(item)}

    def add(self, item: Item, depth: int, follows: str, arrow: bool) -> str:
        """The rows of ``item``, placed below ``follows``; the id of what it draws (box or frame)."""
        if _holds_a_stack(item):
            return self.frame(item, depth, follows, arrow)
        ident = self._id("n")
        lines = [] if item.leaf else [self.line(leaf) for leaf in item.walk() if leaf.leaf]
        box = {"kind": "box", "id": ident, "depth": depth, "follows": follows, "arrow": arrow, "lines": lines,
               **self.line(item)}
        box["mermaid"] = self.box_label(box)
        self.rows.append(box)
        return ident

    def frame(self, item: Item, depth: int, follows: str, arrow: bool) -> str:
        ident = self._id("f")
        opening = {"kind": "open", "id": ident, "head": f"{ident}h", "depth": depth, "follows": follows,
                   "arrow": arrow, "title": self.title(item), **_repeat(item)}
        opening["mermaid"] = self.frame_label(opening)
        self.rows.append(opening)
        members, above = [opening["head"]], opening["head"]
        for child in item.children:
            below = self.add(child, depth + 1, above, False)
            members.append(below)
            above = below
        parts = members[1:]
        self.rows.append({"kind": "close", "id": ident, "depth": depth, "members": members,
                          "repeated": opening["repeated"],
                          "links": [list(pair) for pair in zip(parts, parts[1:])]})
        return ident

    def repeat_html(self, row: dict) -> str:
        return prose_html(self.t["diagram"][row["phrase"]], factor=row["factor"], repeat=row["repeat"], n=row["n"])

    def shape_html(self, line: dict) -> str:
        """A weight's shape as Mermaid shows it, with what it is tied to and how often it repeats."""
        shape = escape_html_text(line["shape"].replace("\\times", "×"))
        tied = prose_html(self.t["diagram"]["tied"], target=line["tied"]) if line["tied"] else ""
        repeat = self.repeat_html(line) if line["repeated"] else ""
        return " ".join(part for part in (shape, tied, repeat) if part)

    def box_label(self, box: dict) -> str:
        head = f"<b>{prose_html(box['title'])}</b>"
        if not box["lines"]:
            shape = self.shape_html(box)
            return mermaid_text(head + (f"<br/>{shape}" if shape else ""))
        colon = self.t["colon"]
        lines = [prose_html(line["title"]) + (colon + self.shape_html(line) if self.shape_html(line) else "")
                 for line in box["lines"]]
        return mermaid_text("<br/>".join([head, *lines]))

    def frame_label(self, opening: dict) -> str:
        head = f"<b>{prose_html(opening['title'])}</b>"
        return mermaid_text(head + (" " + self.repeat_html(opening) if opening["repeated"] else ""))


def diagram(d: Derivation, lang: str) -> dict:
    """The block diagram of derivation ``d`` in ``lang``: ``rows``, ``flow``, ``frames`` (the
    close rows, outermost first: the order a picture fills them in) and ``repeats`` (whether some
    frame is a repeated stack)."""
    return _diagram(d, lang)


@lru_cache(maxsize=16)
def _diagram(d: Derivation, lang: str) -> dict:
    b = _Builder(d, lang)
    flow, above = [], ""
    for section in d.sections:
        ident = b.add(section, 0, above, bool(above))
        if above:
            flow.append([above, ident])
        above = ident
    frames = sorted((r for r in b.rows if r["kind"] == "close"), key=lambda r: r["depth"])
    return {"rows": b.rows, "flow": flow, "frames": frames,
            "repeats": any(r["kind"] == "open" and r["repeated"] for r in b.rows)}
