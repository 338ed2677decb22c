"""A derivation as the plain data a template sees (strings, numbers, lists, dicts)."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from ..core.formatting import decimal, percent, round_rational, thousands
from ..core.symbols import R_kv
from .derivation import Derivation, derive, latex, math_count
from .environment import catalog
from .finetune_text import finetune_text
from .markup import marked_up, plain
from .head_change import untied_output
from .published_text import published_text
from .shards_text import shards_text
from .laws_text import laws_text


@lru_cache(maxsize=8192)
def _share_text(q) -> str:
    return percent(q)


def title_of(keys, names, family: str, t: dict) -> tuple[str, str]:
    """(title, about) in the catalog's mini-markup for an item with title ``keys``.

    Several keys with as many names are merged siblings (query, key, value):
    their titles are listed.  Two keys for one name are a chain (task head →
    classifier): "Task head: Classifier".  A key missing from the catalog
    shows the module's name.
    """
    blocks = t["blocks"]
    joint = blocks.get(",".join(keys)) if len(keys) == len(names) > 1 else None
    if joint:  # siblings the catalog describes together (a gate and the layer it multiplies), not one by one
        return joint["title"], joint.get("about", "")
    titles, abouts = [], []
    for key, name in zip(keys, list(names) + [names[-1]] * len(keys)):
        if "+" in key:  # a module shown with its norm, one level (see walk.wrapped): the module's about
            (part, part_about), (norm, _) = (title_of((k,), (name,), family, t) for k in key.split("+"))
            titles.append(prose_text(t["with_norm"], part=part, norm=norm))
            abouts.append(part_about)
            continue
        entry = blocks.get(f"{family}/{key}") or blocks.get(key)
        if entry is None:
            titles.append("`" + _short_name(name) + "`")
        else:
            titles.append(entry["title"])
            if entry.get("about"):
                abouts.append(entry["about"])
    titles = list(dict.fromkeys(titles))
    sep = t["colon"] if len(names) == 1 and len(keys) == 2 else t["list_sep"]
    return sep.join(titles), t["sp"].join(dict.fromkeys(abouts))


def _short_name(path: str) -> str:
    """A module's name as a title: its last segment, with the list it indexes when that is a ``*`` (one of
    a stack: ``layers.*``).

    >>> _short_name("encoder.layer.*"), _short_name("embeddings.word_embeddings")
    ('layer.*', 'word_embeddings')
    """
    parts = path.rsplit(".", 2)
    return ".".join(parts[-2:]) if parts[-1].startswith("*") and len(parts) > 1 else parts[-1]


@lru_cache(maxsize=8192)
def _title(keys: tuple, names: tuple, family: str, lang: str) -> tuple[str, str]:
    """:func:`title_of` in the catalog of ``lang``, memoized."""
    return title_of(keys, names, family, catalog(lang))


def repeat_phrase(repeat) -> str:
    """The catalog key that says how often an item repeats: "36 copies", not "36 = 36 copies", where the repeat
    is a number (a count the config's list gives), "L = 24 copies" where it is a formula."""
    return "repeat_number" if repeat.is_number else "repeat"


def _item_base(i, seen: set) -> tuple:
    """The language-independent part of an item's data; ``seen`` holds the title keys (and
    "per_head", and whether "A cancels" was said) already explained.

    Returns ``(head, fresh, body, children)``: the keys before the title, the title keys whose about
    text was not given yet (BERT's Add & Norm explains its LayerNorm only if the embeddings' did not),
    the keys after it, the children's bases.
    """
    fresh = tuple(k for k in i.keys if k not in seen)  # each part explained once, at its first appearance
    seen.update(i.keys)
    explain_per_head = i.per_head and "per_head" not in seen
    told = "per_head_cancels" if i.cancels else "per_head_remains"
    tell_cancels = i.per_head and told not in seen  # "A cancels" said once, where it first happens
    if i.per_head:
        seen.update(("per_head", told))
    chain = [i.formula]
    if i.collapsed:
        chain.append(i.collapsed)
    shown = i.untied if i.tied_to else i.count
    if i.substituted != str(shown):  # "H = 8192" needs no "= 8192" before "= 8,192"
        chain.append(i.substituted)
    chain.append(math_count(shown))
    total_chain = [i.total_formula, i.total_substituted, math_count(i.total)] if i.repeat_value != 1 \
        or i.repeat != 1 else []
    head = {"path": i.path, "block_path": i.block_path, "names": list(i.names), "keys": list(i.keys)}
    body = {
        "depth": i.depth, "leaf": i.leaf, "multiplicity": i.multiplicity,
        "repeat": "" if i.repeat == 1 else latex(i.repeat), "repeat_value": i.repeat_value,
        "repeat_phrase": repeat_phrase(i.repeat),
        "copies": "" if i.copies == 1 else latex(i.copies), "copies_value": i.copies_value,
        "shape": i.shape, "shape_values": i.shape_values,
        "formula": i.formula, "collapsed": i.collapsed or "", "substituted": i.substituted,
        "count": thousands(i.count), "count_math": math_count(i.count),
        "total_formula": i.total_formula, "total_substituted": i.total_substituted,
        "total": thousands(i.total), "total_math": math_count(i.total),
        "contribution": thousands(i.contribution), "share": _share_text(i.share),
        "tied_to": i.tied_to or "", "untied": thousands(i.untied), "trainable": i.trainable,
        "per_head": i.per_head, "explain_per_head": explain_per_head, "cancels": i.cancels,
        "tell_cancels": tell_cancels, "chain": chain,
        "total_chain": total_chain, "running": thousands(i.running),
    }
    return head, fresh, body, [_item_base(c, seen) for c in i.children]


def _item_lang(base, i, d, lang: str, within: str = "") -> dict:
    """An item as plain data: its base (:func:`_item_base`) with the title and about in ``lang``; ``within``
    names the repeated unit it sits in, as a sentence says it ("encoder layer"), "" outside one."""
    head, fresh, body, children = base
    t = catalog(lang)
    title, _ = _title(i.keys, i.names, d.family, lang)
    about = _title(fresh, i.names, d.family, lang)[1] if fresh else ""
    unit = _title((i.unit,), i.names[-1:], d.family, lang)[0] if i.unit else ""
    # where a list names the components, each goes by its own title ("Output layer", not "Output layer: Output
    # projection", whose colon would read as a label glued into the list); so does a label ending in a colon
    short = title.split(t["colon"])[0]
    # a subtotal says what it adds up: one copy of a repeated unit, a part of one copy, or a whole component
    kind = "subtotal_repeated" if body["total_chain"] else "subtotal_in" if within else "subtotal"
    # the titles are mini-markup themselves (a module's name in code): put in before the text is rendered
    subtotal = prose_text(t["item"][kind], title=short, unit=unit, within=within)
    subtotal = _cjk_spaced(subtotal) if lang == "zh" else subtotal
    if body["total_chain"]:
        within = _sentence_title(i.unit, d.family, t) or unit
    return {**head, "title": title, "short_title": short, **_labels(title, i.names, lang), "about": about, "unit": unit,
            **body, "subtotal": subtotal,
            "children": [_item_lang(b, c, d, lang, within) for b, c in zip(children, i.children)]}


def context(m, lang: str = "en", title: str | None = None) -> dict:
    """The plain data a template sees: ``doc`` (the derivation), ``t`` (the catalog), ``lang``, ``title``.

    Plain means strings, numbers, booleans, lists and dicts: no SymPy object
    reaches a template (a sandboxed template could call its methods).
    """
    d = derive(m)
    return {"doc": _doc(d, lang), "t": with_rules(catalog(lang), d.rules), "lang": lang, "title": title,
            "model_name": d.name}


def with_rules(t: dict, rules: tuple[str, ...]) -> dict:
    """The catalog ``t`` with ``intro.rules`` stating the rules this model needs, each a sentence."""
    intro = t["intro"]
    text = t["sp"].join([intro["rules"], *(intro[rule] for rule in rules)])
    return {**t, "intro": {**intro, "rules": text}}


@lru_cache(maxsize=8)
def _base(d: Derivation) -> tuple[list, list]:
    """What the documents of ``d`` in every language share: the items' and summary rows' data
    without their titles (see :func:`_item_base`)."""
    seen: set = set()
    items = [_item_base(s, seen) for s in d.sections]
    rows = [({"level": row.level, "path": row.path, "names": list(row.names)},
             {"repeat": row.repeat, "repeat_value": row.repeat_value, "shape": row.shape,
              "shape_values": row.shape_values, "formula": row.formula, "count": thousands(row.count),
              "share": _share_text(row.share), "tied_to": row.tied_to or "", "trainable": row.trainable})
            for row in d.summary]
    return items, rows


@lru_cache(maxsize=8)
def _doc(d: Derivation, lang: str) -> dict:
    t = catalog(lang)
    other = "zh" if lang == "en" else "en"
    bases, rows = _base(d)
    sections = [_item_lang(b, i, d, lang) for b, i in zip(bases, d.sections)]
    summary = [{**head, "title": _title(row.keys, row.names, d.family, lang)[0], **body}
               for row, (head, body) in zip(d.summary, rows)]
    # a table labels a row in few words: "词嵌入", its English name left to the walk (see render.summary_layout_md)
    summary = [{**r, "label": r["title"] if t["summary"]["asides"] else _aside(r["title"], lang)["title_head"]}
               for r in summary]
    # a pie cannot show a slice under 1% (a sliver, or none: Mermaid drops what rounds to 0%): such a
    # component is named with its share beside the pie instead
    chart = [{"title": s["title"], "label": plain(s["title"]), "count": c.contribution, "share": s["share"],
              "share_number": s["share"][:-1], "in_pie": bool(c.share >= Fraction(1, 100))}
             for s, c in zip(sections, d.sections) if c.contribution > 0]
    related = [{**r, "title": article_title(r["title"], r["title_en"], lang), "accounting": r[f"accounting_{lang}"],
                "claimed": r[f"claimed_{lang}"],
                "preset_total": thousands(r["preset_total"]), "total": thousands(r["total"]),
                "difference": thousands(r["difference"])} for r in d.related]
    largest = None
    if d.largest is not None:
        # one matrix or table: its own title, not the component it stands alone in ('Input: Token embedding')
        lt, _ = title_of(d.largest.keys[-1:], d.largest.names[-1:], d.family, t)
        largest = {"title": lt, **_labels(lt, d.largest.names, lang), "names": list(d.largest.names),
                   "share": _share_text(d.largest.share),
                   "contribution": thousands(d.largest.contribution)}
    biggest = max(d.sections, key=lambda s: s.contribution)
    return {
        "name": d.name, "family": d.family, "family_title": d.family_title.get(lang, d.family),
        "inferred": d.inferred, "floors": d.floors, "by_layer_kind": d.by_layer_kind, "polynomial": d.polynomial, "target": d.target,
        "preset": d.preset or "", "preset_title": (d.preset_title or {}).get(lang, ""),
        # "是 BERT-base" but "是文章口径的…": Chinese spaces Latin text off, not its own characters
        "preset_key": "preset" if (d.preset_title or {}).get(lang, "")[:1].isascii() else "preset_cjk",
        "changes": [{"key": k, "before": b, "after": a} for k, b, a in d.changes],
        "head": d.head or "",
        "lm_head": d.lm_head or "", "with_lm_head": "" if d.with_lm_head is None else thousands(d.with_lm_head),
        "with_lm_head_text": _with_lm_head(d, lang),
        "symbols": [{"name": s["name"], "latex": s["latex"], "meaning": marked_up(s[lang]), "value": s["value"],
                     "value_latex": s["value_latex"]} for s in d.symbols],
        "switch_names": [s["name"] for s in d.switches],
        # a boolean switch's meaning describes it on; the answer says whether it holds for this model.  An
        # inferred type's switches are its config's own fields, with no description to answer: the lead names them
        "switches": [{"name": s["name"], "value": s["value"],
                      "meaning": "" if d.inferred else marked_up(s[lang] or s[other] or s["name"]),
                      "answer": "" if d.inferred else {"true": "yes", "false": "no"}.get(s["value"], "")}
                     for s in d.switches if s["shapes"]],
        "sections": sections, "summary": summary, "chart": chart,
        "total": thousands(d.total), "total_math": math_count(d.total),
        "trainable": thousands(d.trainable), "trainable_math": math_count(d.trainable),
        "frozen": thousands(d.total - d.trainable), "all_trainable": d.total == d.trainable,
        "trainable_share": _share_text(d.trainable_share),
        # shown only where a token leaves some routed experts out
        "active": thousands(d.active), "active_share": _share_text(d.active_share),
        "active_formula": d.active_formula, "shows_active": d.active != d.total,
        "title_name": title_name(d, lang),
        # the base model ends in its own output layer (the Transformer's): "no task head" would read as "no lm_head"
        "own_output": any("output_projection" in i.keys for i in d.items),
        # the remark the head-count section starts from is the BERT article's: quoted where that article is a source
        "heads_article": any(n.article.key == "bert-parameter-count" for n in d.notes),
        "closed_formula": d.closed_formula, "closed_substituted": d.closed_substituted,
        "proof": _proof(d.proof, lang),
        "costs": _costs(d.costs, lang) if d.costs else None,
        "shards": shards_text(d.shards, d.name, lang) if d.shards else None,
        "laws": laws_text(d.laws, d.name, lang, d.target) if d.laws else None,
        "finetune": finetune_text(d.finetune, d.name, d.target, lang) if d.finetune else None,
        "published": {key: _cjk_spaced(text) if lang == "zh" else text
                      for key, text in published_text(d, lang).items()},
        "notes": [_note(note, lang) for note in d.notes], "related": related,
        "largest": largest,
        "biggest": {"title": title_of(biggest.keys, biggest.names, d.family, t)[0],
                    "share": _share_text(biggest.share)},
        "outline": [dict(o, children=[dict(c, title=title_of(c["keys"], c["names"], d.family, t)[0])
                                      for c in o["children"]]) for o in d.outline],
        "numbers": {o["id"]: o["number"] for o in d.outline},
    }


def _proof(p, lang: str) -> dict:
    """The head-count proof's data in ``lang``."""
    text = 1 if lang == "en" else 2  # a condition is (LaTeX, English, Chinese)

    def titled(term: dict) -> dict:  # a part written with A, with the title of its modules
        names = tuple(path.split(" ")[0].rsplit(".", 1)[-1] for path in term["paths"])
        # parts of one fused tensor are one module: each title still its own item ("key, value", not "key: value")
        names += names[-1:] * (len(term["titles"]) - len(names))
        return {**term, "paths": list(term["paths"]), "title": _title(term["titles"], names, p.family, lang)[0]}

    thumb = p.thumb and {"formula": p.thumb["formula"], "value": thousands(p.thumb["value"]),
                         "value_math": math_count(p.thumb["value"]), "total": thousands(p.thumb["total"]),
                         "share": percent(p.thumb["share"]), "rest": thousands(p.thumb["total"] - p.thumb["value"]),
                         "rest_share": percent(1 - p.thumb["share"]), "error": p.thumb["error"],
                         "biases_and_norms": p.thumb["biases_and_norms"]}
    return {
        "invariant": p.invariant, "has_heads": p.has_heads,
        "terms": [titled(term) for term in p.terms], "collected": p.collected, "gathered": p.gathered,
        "own_width": p.own_width,
        "premise": p.premise, "premise_also": p.premise_also, "heads_fitted": p.heads_fitted,
        "thumb": thumb, "thumb_status": p.thumb_status, "rule": p.rule and _rule_numbers(p.rule),
        "per_head": [{"lhs": lhs, "rhs": rhs, "paths": list(paths)} for lhs, rhs, paths in p.per_head],
        "written": p.written, "closed": p.closed, "derivative": p.derivative, "dependence": p.dependence or "",
        "conditions": [{"latex": c[0], "text": _after_condition(c[text], lang)} for c in p.conditions],
        "heads": [str(a) for a in p.heads], "totals": [thousands(n) for n in p.totals],
        "witness": [{"A": str(a), "total": thousands(n)} for a, n in p.witness],
        "counterexample": ([{"A": str(a), "total": thousands(n)} for a, n in p.counterexample]
                           if p.counterexample else []),
        "counterexample_source": p.counterexample_source,
        "counterexample_values": [{"symbol": k, "value": v} for k, v in p.counterexample_values],
        "fixed_ratio": None if p.fixed_ratio is None else {
            **{k: v for k, v in p.fixed_ratio.items() if k not in ("conditions", "remaining")},
            "conditions": [{"latex": c[0], "text": c[text]} for c in p.fixed_ratio["conditions"]],
            "remaining": [titled(term) for term in p.fixed_ratio["remaining"]]},
    }


def _rule_numbers(rule: dict) -> dict:
    """A family's rule of thumb with its value and its error as text."""
    return {"key": rule["key"], "formula": rule["formula"], "error": rule["error"], "exact": rule["exact"],
            "value": thousands(rule["value"]), "value_math": math_count(rule["value"]),
            "total": thousands(rule["total"]), "error_value": thousands(rule["total"] - rule["value"]),
            "error_share": percent(rule["share"]), "active": rule["active"] and _rule_numbers(rule["active"]),
            "tables": rule.get("tables", "")}


def _after_condition(text: str, lang: str) -> str:
    """What follows a condition's formula in the premise's list: its reading in parentheses, then what it means
    ("$A \\mid H$ ($A$ divides $H$): $H/A$ is …"), not a second colon after the first."""
    t = catalog(lang)
    reading, colon, meaning = text.partition(t["colon"])
    if not colon:
        return t["colon"] + text
    return f"{t['lp']}{reading}{t['rp']}{t['colon']}{meaning}"


def _slips(note, lang: str) -> list[dict]:
    """The article's wrong figures, each knock-on error listed under the slip it inherits."""
    t = catalog(lang)["articles"]
    wrong = {c.claim.key for c in note.wrong}
    roots = [c for c in note.wrong if c.claim.follows not in wrong]
    out = []
    for root in roots:
        why = getattr(root.claim, f"why_{lang}")
        carried = [c for c in note.wrong if c.claim.follows == root.claim.key]
        if carried:
            items = t["knock_on_sep"].join(
                prose_text(t["knock_on_item"], what=getattr(c.claim, lang), claimed=c.claimed_in(lang),
                           right=c.right_text)
                + (prose_text(t["knock_on_why"], why=getattr(c.claim, f"why_{lang}"))
                   if getattr(c.claim, f"why_{lang}") else "")
                for c in carried)
            why = prose_text(t["knock_on"], why=why, n=len(carried), items=items)
        out.append({"what": getattr(root.claim, lang), "claimed": root.claimed_in(lang), "right": root.right_text,
                    "why": why})
    return out


#: the most parts the sentence on an LM head lists; a head whose model is built further from the base model's
#: (an inferred multimodal model's text-only head), or that lists a tensor of the base model under another
#: module, gets the count and the difference only
HEAD_PARTS_LISTED = 8


def _with_lm_head(d: Derivation, lang: str) -> str:
    """The sentence that gives the count with the base model's LM head and says, part by part, what the head
    drops and adds ("" without one)."""
    c = d.head_change
    if c is None:
        return ""
    t = catalog(lang)
    h = t["intro"]["lm_head"]
    difference = c.total - c.base
    change = prose_text(h["more" if difference > 0 else "fewer" if difference < 0 else "same"],
                        n=thousands(abs(difference)))
    if not c.whole or len(c.dropped) + len(c.added) + len(c.tied) > HEAD_PARTS_LISTED:  # builds too far apart
        return prose_text(h["short"], head=c.head, count=thousands(c.total), change=change)
    tied = h["and"].join(prose_text(h["tied_pair"], part=_named(p.key, p.name, d.family, t),
                                    target=_named(p.tied_key, p.tied_name, d.family, t)) for p in c.tied)
    if not (c.dropped or c.added):  # a tied head, or one transformers lists no parameter of
        what = prose_text(h["tied_only"], tied=tied) if tied else h["none"]
    else:
        key = "drops_adds" if c.dropped and c.added else "drops" if c.dropped else "adds"
        what = prose_text(h[key], dropped=_listed(c.dropped, d.family, t), added=_listed(c.added, d.family, t))
        if tied:
            what += h["clause_sep"] + prose_text(h["tied"], tied=tied)
        elif untied_output(c):
            what += h["clause_sep"] + h["untied"]
    return prose_text(h["sentence"], head=c.head, count=thousands(c.total), change=change,
                      what=_cjk_spaced(what) if lang == "zh" else what)


def _listed(parts, family: str, t: dict) -> str:
    """``parts`` of a head's change as a list: each named, with its formula and count ("A, B and C")."""
    h = t["intro"]["lm_head"]
    texts = [prose_text(h["part"], named=_named(p.key, p.name, family, t), formula=p.formula,
                        count=math_count(p.count)) for p in parts]
    return h["and"].join(filter(None, (t["list_sep"].join(texts[:-1]), texts[-1]))) if texts else ""


def _named(key: str, name: str, family: str, t: dict) -> str:
    """A module as a sentence names it: its catalog title and its path (the path alone without a title)."""
    return prose_text(t["intro"]["lm_head"]["named"], title=_sentence_title(key, family, t), name=name).strip()


def _cjk_spaced(text: str) -> str:
    """Chinese text with a space between a Chinese character and a Latin word, number or code span, and
    none beside full-width punctuation.

    >>> _cjk_spaced("去掉了池化层（Pooler） `pooler`（590,592 个）、 MLM 变换层 `dense`与词嵌入")
    '去掉了池化层（Pooler）`pooler`（590,592 个）、MLM 变换层 `dense` 与词嵌入'
    """
    text = re.sub(r"([\u4e00-\u9fff])([A-Za-z0-9`])", r"\1 \2", text)
    text = re.sub(r"([A-Za-z0-9`])([\u4e00-\u9fff])", r"\1 \2", text)
    return re.sub(r" *([（）、，：；。]) *", r"\1", text)


def _sentence_title(key: str, family: str, t: dict) -> str:
    """A module's catalog title as a sentence uses it (an English one lower-cased unless its first word is
    a name such as LayerNorm); "" when the catalog has none, the module's path saying it."""
    blocks = t["blocks"]
    entry = blocks.get(f"{family}/{key}") or blocks.get(key)
    if entry is None:
        return ""
    title = entry["title"]
    first = title.split(" ", 1)[0]
    return title[0].lower() + title[1:] if t["lang"] == "en" and first[1:].islower() else title


def prose_text(text: str, **values) -> str:
    """Catalog text with its ``[[holes]]`` filled (still mini-markup: the template's ``prose`` renders it)."""
    for key, value in values.items():
        text = text.replace(f"[[{key}]]", str(value))
    return text


def _costs(c, lang: str) -> dict:
    """The compute-and-memory section's numbers as text (per-token figures that are not whole: "about")."""
    t = catalog(lang)

    def per_token(q) -> str:
        if isinstance(q, int) or q.denominator == 1:
            return thousands(int(q))
        return prose_text(t["costs"]["about"], n=thousands(round_rational(q, 0)[0]))

    def gib(n: int) -> str:
        return decimal(Fraction(n, 2**30))

    memory = [("weights_fp32", c.weights_fp32), ("weights_bf16", c.weights_bf16),
              ("training_memory", c.training_bytes), ("kv_per_token", c.kv_per_token),
              ("cross_kv_per_token", c.cross_kv_per_token)]
    return {
        "seq": thousands(c.seq), "seq_arg": str(c.seq), "formula": c.formula, "formula_numbers": c.formula_numbers,
        "forward": thousands(c.forward), "matmul": thousands(c.matmul), "attention": thousands(c.attention),
        "product": thousands(c.product) if c.product else "", "backward": thousands(c.backward),
        "training": thousands(c.training), "forward_math": math_count(c.forward),
        "heads_invariant": c.heads_invariant, "heads_derivative": c.heads_derivative,
        "held": r",\ ".join(c.held), "held_sentence": c.held_sentence,
        "kaplan": per_token(c.kaplan), "exact_per_token": per_token(c.exact_per_token),
        "kaplan_difference": c.kaplan_difference, **_kaplan_gap(c, per_token),
        "kaplan_width": c.kaplan_width, "kaplan_width_value": thousands(c.kaplan_width_value),
        "kaplan_parts": _kaplan_parts(c.kaplan_parts, t),
        "memory": [{"key": key, "bytes": thousands(n), "gib": "" if key.endswith("per_token") else gib(n)}
                   for key, n in memory
                   if n or key in ("weights_fp32", "weights_bf16", "training_memory")],
        "caches": c.kv_per_token != 0,
        # an encoder–decoder's one s stands for the source and the target length alike: said where it applies
        "cross": c.cross_kv_per_token != 0,
        # a sliding-window layer keeps only its window, latent attention only its compressed latent: the
        # sentence on how the cache grows says so
        "cache_text": _cache_text(c),
        "window_tokens": thousands(c.kv_windows[0][0]) if c.kv_windows else "",
    }


def _cache_text(c) -> str:
    """The catalog's sentence on what the cache keeps per token: keys and values, a window of them, or (latent
    attention) the compressed latent the keys and values are rebuilt from."""
    if c.kv_windows:
        return "cache_windowed"
    if not c.kv_per_token:
        return "no_cache"
    return "cache_latent" if R_kv in c.exprs["kv_per_token"].free_symbols else "cache"


def _labels(title: str, names, lang: str) -> dict:
    """How a title is labelled with its module names: :func:`_aside`'s split, and ``named`` where the title is
    the names themselves (a module the catalog has no title for), which are then not given twice."""
    named = title == catalog(lang)["list_sep"].join(f"`{name}`" for name in names)
    return {**_aside(title, lang), "named": named}


def _aside(title: str, lang: str) -> dict:
    """A title that ends in a parenthesis (``词嵌入（Token Embedding）``) split before it, so a document names
    the module inside the same parenthesis (``词嵌入（Token Embedding，`word_embeddings`）``), not a second one."""
    t = catalog(lang)
    head, lp, inner = title.rpartition(t["lp"])
    whole = {"title_head": title, "title_aside": ""}
    if not head or not inner.endswith(t["rp"]) or any(m in inner for m in ("$", "`", t["lp"].strip())):
        return whole
    inner = inner[:-len(t["rp"])]
    if t["rp"].strip() in inner or head.count("$") % 2 or head.count("`") % 2:
        return whole
    return {"title_head": head, "title_aside": inner}


def title_name(d, lang: str) -> str:
    """The name a document's title gives the model: a preset's own name (``BERT-base``, not the slug
    ``bert-base``), its description cut before the parenthesis or colon that qualifies it; else the name
    the model was asked for (a variant, a config.json)."""
    if not d.preset_title or d.changes:
        return d.name
    return re.split(r" \(|（|: |：", d.preset_title[lang], maxsplit=1)[0]


def _kaplan_parts(parts, t: dict) -> str:
    """The sentence saying where Kaplan's estimate and the exact count part ways, each part only where it is not
    0 ("" where the parts are not known to add up to the difference)."""
    if parts is None:
        return ""
    c = t["costs"]
    said = [prose_text(c[key], value=thousands(value)) for key, value in (
        ("kaplan_part_attention_cross" if parts.cross else "kaplan_part_attention", parts.attention),
        ("kaplan_part_products", parts.products), ("kaplan_part_tied", parts.tied),
        ("kaplan_part_" + "_".join(parts.unmultiplied_kinds), parts.unmultiplied)) if value]
    return prose_text(c["kaplan_parts"], parts=c["kaplan_part_sep"].join(said)) if said else ""


def _kaplan_gap(c, per_token) -> dict:
    """What the difference from Kaplan's estimate comes to at the document's sequence: by how much, and which way."""
    gap = Fraction(c.exact_per_token) - Fraction(c.kaplan)
    key = "kaplan_under" if gap > 0 else "kaplan_over" if gap < 0 else "kaplan_equal"
    share = _share_text(abs(gap) / Fraction(c.exact_per_token)) if c.exact_per_token else ""
    return {"kaplan_gap_key": key, "kaplan_gap_share": share, "kaplan_gap": per_token(abs(gap))}


def article_title(title: str, title_en: str, lang: str) -> str:
    """A Chinese article's title as a document in ``lang`` names it: in English with the original beside it."""
    return title if lang == "zh" else f"{title_en} ({title})"


def _verdict(c, note) -> str:
    """A claim's verdict in the errata table: a figure wrong only because it inherits another's slip is "carried",
    so the table tells the one slip from its consequences."""
    slips = {w.claim.key for w in note.wrong}
    return "carried" if c.status == "wrong" and c.claim.follows in slips else c.status


def _note(note, lang: str) -> dict:
    """An article's note (its claims checked against the model) in ``lang``."""
    a = note.article
    return {
        "key": a.key, "file": a.file, "title": article_title(a.title, a.title_en, lang), "about": getattr(a, lang),
        "preset": a.preset, "accounting": getattr(a, f"accounting_{lang}"),
        "claims": [{"what": getattr(c.claim, lang), "claimed": c.claimed_in(lang), "right": c.right_text,
                    "status": _verdict(c, note), "why": getattr(c.claim, f"why_{lang}")} for c in note.claims],
        "wrong": _slips(note, lang),
        "remarks": [r[0] if lang == "en" else r[1] for r in a.remarks],
    }
