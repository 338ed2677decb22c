"""The live derivation page: ``symparams derive MODEL --format html``.

One self-contained HTML file (no network: a Content-Security-Policy forbids
every fetch), laid out by ``templates/html/page.html.j2``: the derivation of
:mod:`symparams.documents.derivation`, with the documents' string catalogs
(``templates/i18n/*.json``), formulas as MathML
(SymPy's presentation printer, which browsers render natively), and a number
field and a slider for every symbol.  Editing one recomputes every
component's count, its share and the total at once, in the page: each count
is the component's closed form compiled to JavaScript by SymPy's code
printer, over ``BigInt`` so the arithmetic is exact at any size.  A ratio
(``r = 43/16``) is carried as numerator and denominator: each formula is
compiled as ``numerator / denominator`` polynomials with integer
coefficients, divided exactly at the end.

Each item reads as in the documents: its formula, the same with the numbers put in, its count per copy, and
how many copies the model holds; the numbers put in follow the values too.  A bar chart of the components'
shares, and the comparison with the articles where the model has one, as in the Markdown and LaTeX.  Only a
one-line bar with the total stays on top while scrolling; while a value is missing or breaks a constraint
(said in the page's language), the numbers still shown are greyed out.

Values can also come from the address: ``page.html#H=1024&L=24&r=43/16``.

>>> from symparams import model
>>> page = render_html(model("bert-base"))
>>> page.startswith("<!DOCTYPE html>") and "109,482,240" in page and "<math" in page
True
>>> "http://" in page.replace('xmlns="http://www.w3.org/1998/Math/MathML"', "") or "https://" in page
False
>>> from symparams.core.symbols import H, r
>>> bigint_js(3 * H**2 - H + 7)
'3n*(v.x_H ** 2n) - v.x_H + 7n'
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

import sympy as sp
from sympy.printing.jscode import JavascriptCodePrinter
from sympy.printing.precedence import precedence

from ..analysis.integer_forms import condition_tree, int_fraction
from ..core.algebra import closed_form
from ..core.errors import SymparamsError
from ..core.formatting import percent, ratio, thousands
from ..core.symbols import SYMBOLS
from .context import title_name, title_of, with_rules
from .derivation import derive, latex
from .environment import LANGS, catalog, html_environment, read_template
from .finetune_html import finetune_page
from .escape import escape_html
from .laws_page import laws_page
from .markup import marked_up, prose_html
from .mathml import _rank, mathml, mathml_inner
from .proof_text import proof_equations

# -- expressions to exact JavaScript ---------------------------------------------------

class _BigIntPrinter(JavascriptCodePrinter):
    """JavaScript over BigInt: ``7n``, ``(x ** 2n)``, symbols read from ``v``."""

    def _print_Integer(self, expr):
        return f"{int(expr)}n"

    _print_One = _print_NegativeOne = _print_Zero = _print_Integer

    def _print_Symbol(self, expr):
        return f"v.{expr.name}"

    def _print_Pow(self, expr):
        if not (expr.exp.is_Integer and expr.exp > 0):
            raise SymparamsError(f"cannot compile {expr} to exact JavaScript")
        return f"({self.parenthesize(expr.base, precedence(expr))} ** {int(expr.exp)}n)"

    def _print_Rational(self, expr):
        raise SymparamsError(f"cannot compile the fraction {expr} to exact JavaScript")

    _print_Float = _print_Rational


def _js_symbols(expr: sp.Expr) -> sp.Expr:
    """Integer symbols as ``x_NAME``, a ratio ``r`` as ``n_r / d_r``."""
    subs = {}
    for s in expr.free_symbols:
        if s.name in SYMBOLS and SYMBOLS[s.name].rational:
            subs[s] = sp.Symbol(f"n_{s.name}", integer=True, positive=True) / sp.Symbol(
                f"d_{s.name}", integer=True, positive=True)
        else:
            subs[s] = sp.Symbol(f"x_{s.name}", integer=True, positive=True)
    return expr.xreplace(subs)


def bigint_js(expr: sp.Expr) -> str:
    """An integer-coefficient polynomial as a BigInt JavaScript expression (symbols ``x_NAME`` on ``v``)."""
    expr = sp.sympify(expr)
    if any(s.name[:2] not in ("x_", "n_", "d_", "f_") for s in expr.free_symbols):
        expr = _js_symbols(expr)
    return _BigIntPrinter().doprint(expr)


def _floors_named(expr: sp.Expr) -> tuple[sp.Expr, dict]:
    """``expr`` with each whole-number division ``floor(a/b)`` (an inferred head width ``⌊H/A⌋``) replaced by a
    symbol ``f_k``, and each symbol's (numerator, denominator) as integer polynomials."""
    from ..families.inferred_data import CeilDiv, FloorDiv

    found = sorted(expr.atoms(sp.floor, sp.ceiling, FloorDiv, CeilDiv), key=sp.default_sort_key)
    floors = {}
    for k, atom in enumerate(found):
        if isinstance(atom, (FloorDiv, CeilDiv)):
            num, den = atom.args
        else:
            gens = sorted(atom.free_symbols, key=lambda s: s.name)
            num, den = int_fraction(atom.args[0], gens)
        if isinstance(atom, (CeilDiv, sp.ceiling)):  # ceil(a/b) = floor((a + b - 1)/b) for whole a, b > 0
            num = num + den - 1
        floors[sp.Symbol(f"f_{k}", integer=True, nonnegative=True)] = (num, den)
    return expr.xreplace(dict(zip(found, floors))), floors


@lru_cache(maxsize=1024)  # a page holds one per row and constraint: a preset's page made again reuses them
def fraction_js(expr: sp.Expr) -> str:
    """``expr`` as a JavaScript function ``v => [numerator, denominator]`` over BigInt, exact.

    A ``Piecewise`` (ELECTRA's "E ≠ H" constraint) becomes a chain of ``?:``.
    """
    expr, floors = _floors_named(sp.piecewise_fold(_js_symbols(sp.expand(sp.sympify(expr)))))
    if floors:  # each whole-number division once, as BigInt division (positive operands: it is the floor)
        names = ", ".join(f"{f.name}: ({bigint_js(n)}) / ({bigint_js(d)})" for f, (n, d) in floors.items())
        return f"(v) => ((v) => {_fraction_code(expr)})({{...v, {names}}})"
    return f"(v) => {_fraction_code(expr)}"


def _fraction_code(expr: sp.Expr) -> str:
    """The body of :func:`fraction_js`: ``[numerator, denominator]`` of an expression in JavaScript's names."""
    gens = sorted(expr.free_symbols, key=lambda s: s.name) or [sp.Symbol("x_unused")]

    def pair(e):
        num, den = int_fraction(e, gens)
        return f"[{bigint_js(num)}, {bigint_js(den)}]"

    def cond(c):
        kind = c[0]
        if kind == "const":
            return "true" if c[1] else "false"
        if kind == "rel":
            return f"({bigint_js(c[2])} {dict(zip(('==', '!='), ('===', '!=='))).get(c[1], c[1])} 0n)"
        if kind == "not":
            return f"!{cond(c[1])}"
        return "(" + (" && " if kind == "and" else " || ").join(cond(a) for a in c[1]) + ")"

    if not isinstance(expr, sp.Piecewise):
        return pair(expr)
    code = "[0n, 1n]"  # no piece applies: not a positive whole number
    for e, c in reversed(expr.args):
        test = condition_tree(c, gens)
        code = pair(e) if test == ("const", True) else f"({cond(test)} ? {pair(e)} : {code})"
    return code


# -- the page --------------------------------------------------------------------------------

def contribution_formula(item) -> sp.Expr:
    """What ``item`` adds to the model, in the symbols (all its copies): the page recomputes it live."""
    if item.tied_to:
        return sp.Integer(0)
    return sp.expand(item.copies * item.repeat * sp.expand(item.expr.doit()))


def _math(expr, order: str | None = None, display: bool = False) -> str:
    inner = expr if isinstance(expr, str) else mathml_inner(expr, order)
    return mathml(inner, display=display).replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "")


def _sentence(text: str, **html) -> str:
    """Catalog text as HTML, its ``[[holes]]`` filled with HTML (MathML, outputs) rather than escaped text."""
    holes = {k: f"\u27e6{k}\u27e7" for k in html}
    out = prose_html(text, **holes)
    for k, v in html.items():
        out = out.replace(holes[k], v)
    return out


def _value_text(v) -> str:
    """A symbol's value as the page shows it inside a formula: ``30,522``, ``43/16``."""
    return thousands(v) if sp.sympify(v).is_Integer else ratio(v)


def _controls(m, lang: str) -> list[dict]:
    """A number field and a slider per symbol (a ratio's slider moves in eighths)."""
    rows = []
    for s in m.symbols:
        info = SYMBOLS.get(s.name)
        value = m.values[s]
        rational = bool(info and info.rational)
        if rational:
            q = sp.Rational(value)
            hi, den, slider = max(64, int(8 * q * 4)), 8, int(q * 8) if (q * 8).is_Integer else 8
        else:
            hi, den, slider = max(8, 4 * int(value)), 1, int(value)
        rows.append({"name": s.name, "math": _math(s), "rational": rational, "value": ratio(value), "den": den,
                     "meaning": marked_up((info.zh if lang == "zh" else info.en) if info else s.name),
                     "min": 1, "max": hi, "slider": slider})
    return rows


def _order(i) -> str | None:
    """``"none"`` where the item's formula is a form as written (its order kept, as the documents print it)."""
    written = latex(i.expr, written=True)
    return "none" if i.formula == written and written != latex(i.expr) else None


_SUM = re.compile(r"[\d{},]+(?: \+ [\d{},]+)+")  # thousands grouped as 23{,}837{,}184


def _substitution(i, children: list[dict], values: dict) -> str:
    """The item's formula with the numbers put in, as MathML the page refills: each symbol's value an
    ``<mn data-sym>``; for a group counted as the sum of its parts, each part's count an ``<mn data-copy>``.
    Empty where the numbers would only repeat the count (``H = 4,096``)."""
    if not i.substituted or i.tied_to or i.expr.is_Symbol or i.expr.is_Number:
        return ""
    if not i.leaf and _SUM.fullmatch(i.substituted):  # the sum of the parts' counts, as the articles write it
        parts = [(c, item) for c, item in zip(children, i.children) if not item.tied_to and item.total]
        if len(parts) != i.substituted.count("+") + 1:
            return ""
        return "<mo>+</mo>".join(f'<mn class="v" data-copy="{c["id"]}-{"one" if item.repeat == 1 else "total"}">'
                                 f"{thousands(item.total)}</mn>" for c, item in parts)
    return mathml_inner(i.expr, _order(i), values)


def _item(i, d, lang: str, formulas: list, values: dict, ui: dict) -> dict:
    """An item of the derivation as the page shows it; its live formulas go to ``formulas`` as
    ``(id, expression, per-token, has-share)``: its contribution (``iN``), one copy's count (``iN-one``),
    all ``repeat`` copies in its parent (``iN-total``) and how many copies the model holds (``iN-reps``)."""
    title, about = title_of(i.keys, i.names, d.family, catalog(lang))
    ident = f"i{len(formulas)}"
    formulas.append((ident, contribution_formula(i), False, True))
    one = sp.expand(i.expr.doit())
    reps = sp.expand(i.copies * i.repeat)
    chain = [mathml_inner(i.expr, _order(i))]
    if not i.tied_to:
        formulas.append((f"{ident}-one", one, False, False))
        if i.repeat != 1:
            formulas.append((f"{ident}-total", sp.expand(i.repeat * one), False, False))
        if i.collapsed:
            chain.append(mathml_inner(one))
    if reps != 1:
        formulas.append((f"{ident}-reps", reps, False, False))
    children = [_item(c, d, lang, formulas, values, ui) for c in i.children]
    if not i.tied_to:
        substituted = _substitution(i, children, values)
        if substituted:
            chain.append(substituted)
        chain.append(f'<mn class="v" data-copy="{ident}-one">{thousands(i.count)}</mn>')
    copies = _sentence(ui["in_all"], reps=_math(reps),
                       n=f'<output data-copy="{ident}-reps">{thousands(i.copies_value * i.repeat_value)}</output>'
                       ) if reps != 1 else ""
    return {
        "id": ident, "path": i.path, "depth": i.depth, "title": prose_html(title),
        "about": prose_html(about) if about and i.depth == 0 else "",
        "formula": _math("<mo>=</mo>".join(chain)), "copies": copies,
        "init": i.contribution, "count": thousands(i.contribution), "share": percent(i.share),
        "tied_to": i.tied_to or "", "trainable": i.trainable,
        "children": children,
    }


#: the compute-and-memory numbers the page recomputes live, and whether a number may not be whole (per token)
_LIVE_COSTS = {"forward": False, "matmul": False, "attention": False, "product": False, "backward": False,
               "training": False, "kaplan": True, "exact_per_token": True, "weights_fp32": False,
               "weights_bf16": False, "training_memory": False, "kv_per_token": False, "cross_kv_per_token": False}


_FLOPS = '<mi>FLOPs</mi><mo stretchy="false">(</mo><mi>s</mi><mo>,</mo><mi>b</mi><mo stretchy="false">)</mo>'


def _costs(d, lang: str, formulas: list) -> dict:
    """The compute-and-memory section as the page shows it: every number an ``<output>`` recomputed live."""
    from .context import _costs as costs_text

    t = catalog(lang)
    text = costs_text(d.costs, lang)
    outputs = {}
    for key, approx in _LIVE_COSTS.items():
        ident = f"costs-{key}"
        formulas.append((ident, d.costs.exprs[key], approx, False))
        shown = text.get(key) or thousands(getattr(d.costs, key, 0) or 0)
        outputs[key] = f'<output id="{ident}">{escape_html(shown)}</output>'

    def sentence(key, **values):
        return _sentence(t["costs"][key], **values)

    c = d.costs
    heads = (sentence("heads_invariant") if c.heads_invariant else
             sentence("heads_dependent") + t["sp"] + _math(c.heads_derivative_expr) + t["stop"] +
             (t["sp"] + prose_html(t["costs"][c.held_sentence], held=text["held"]) if c.held else ""))
    return {
        "formula": _math(_FLOPS + "<mo>=</mo>" + mathml_inner(c.formula_expr), display=True),
        "forward": sentence("forward", seq=escape_html(text["seq"]), forward=outputs["forward"],
                            matmul=outputs["matmul"], attention=outputs["attention"]),
        "product": sentence("product", product=outputs["product"]) if c.product else "",
        "training": sentence("training", backward=outputs["backward"], training=outputs["training"]),
        "heads": heads,
        "kaplan": sentence("kaplan_moe" if d.active != d.total else "kaplan", kaplan=outputs["kaplan"],
                           exact=outputs["exact_per_token"]),
        "kaplan_difference": _math(c.kaplan_difference_expr, display=True),
        "memory": [{"key": row["key"], "id": f"costs-{row['key']}", "bytes": row["bytes"]} for row in text["memory"]],
        "cache": prose_html(t["costs"][text["cache_text"]], model=d.name, tokens=text["window_tokens"]),
        "cli": prose_html(t["costs"]["cli" if d.target else "cli_config"], model=d.name, target=d.target, seq=d.costs.seq),
    }


def _constraint_message(c, m, ui: dict, lang: str) -> str:
    """What the page says when a constraint breaks: the family's own message in English; in another language
    the catalog's, with the constraint's side condition where it has one (``{H}``, ``{value}``: filled in the page)."""
    if lang == "en" and c.message:
        return c.message
    names = [s.name for s in m.symbols if s in c.expr.free_symbols]
    values = ui["values_sep"].join(f"{n}={{{n}}}" for n in names)
    if c.condition is not None:
        text = c.condition[2] if lang == "zh" else c.condition[1]
        return ui["constraint_condition"].replace("{values}", values).replace("{condition}", text)
    factors = sorted(sp.Mul.make_args(c.expr), key=_rank)  # r·H, as the documents write it
    expr = ("·".join(sp.sstr(f) for f in factors) if c.expr.is_Mul else sp.sstr(c.expr)).replace(" - ", " − ")
    return ui["constraint"].replace("{values}", values).replace("{expr}", expr)


def _script(m, controls: list[dict], formulas: list, ui: dict, about: str, lang: str = "en") -> str:
    """The page's script: every count's closed form compiled to exact JavaScript, then the page logic
    (``about``: how a rounded number reads, "about [[n]]")."""
    constraints = [c for c in m.family.constraints if c.expr.free_symbols <= set(m.symbols)]
    specs = [{"name": c["name"], "rational": c["rational"], "init": c["value"], "den": c["den"]} for c in controls]

    def entry(ident, f, approx=False, share=True):
        return (f'{{id: "{ident}", f: {fraction_js(f)}, about: {"true" if approx else "false"}, '
                f'share: {"true" if share else "false"}}}')

    compiled = [
        f"const SYMBOLS = {json.dumps(specs)};",
        f"const TOTAL = {fraction_js(m.closed_form)};",
        f"const TRAINABLE = {fraction_js(closed_form(m.tree.trainable_total))};",
        f"const ACTIVE = {fraction_js(closed_form(m.tree.active_total)) if m.routed else 'null'};",
        "const ITEMS = [" + ",\n".join(entry(*f) for f in formulas) + "];",
        "const CONSTRAINTS = [" + ",\n".join(
            f"{{f: {fraction_js(c.expr)}, message: {json.dumps(message, ensure_ascii=False)}}}"
            for c in constraints for message in [_constraint_message(c, m, ui, lang)]) + "];",
    ]
    words = json.dumps({**{k: ui[k] for k in ("invalid", "invalid_ratio", "not_whole", "stale")}, "about": about},
                       ensure_ascii=False)
    js = "\n".join(compiled) + read_template("html/page.js").replace("__UI__", words)
    return js.replace("</", "<\\/")  # nothing inside the script can close it


def _equations(proof, ui: dict) -> str:
    """The head-count proof's equations (:func:`~symparams.documents.proof_text.proof_equations`: one
    head's parts side by side, with all their copies, N, what holds A, ∂N/∂A), a row each in three cells
    (left side, "=", right side), so that the "=" line up in every browser (Chromium ignores MathML's
    ``columnalign``)."""
    holding = "<mi>A</mi>".join(f"<mtext>{escape_html(part).replace(' ', '&#xA0;')}</mtext>" if part else ""
                                for part in ui["terms_holding"].split("$A$"))
    rows = []
    for (lhs_latex, lhs), (_, rhs) in proof_equations(proof):
        lhs = holding if lhs_latex.startswith(r"\text{terms holding") else lhs
        rows.append(f'<tr><td class="lhs">{_math(lhs)}</td><td class="eq">{_math("<mo>=</mo>")}</td>'
                    f'<td class="rhs">{_math(rhs)}</td></tr>')
    return f'<div class="wide"><table class="proof">{"".join(rows)}</table></div>'


def _proof_words(d, proof, t: dict, lang: str) -> dict:
    """The words around the proof's equations, in its order: the premise and its conditions, then the
    verdict (∎ where every term loses A) and the formal check."""
    h = t["heads"]
    text = 1 if lang == "en" else 2  # a condition is (LaTeX, English, Chinese)
    premise = prose_html(h[d.proof.premise]) + (t["sp"] + prose_html(h["premise_also"])
                                                  if d.proof.premise_also else "") if d.proof.premise else ""
    if proof.invariant:
        verdict, closing = prose_html(h["cancel_all"]) + " " + h["qed"], prose_html(h["invariant"], model=d.name)
    else:
        verdict, closing = prose_html(h["dependent"], model=d.name) + t["sp"] + _math(proof.dependence), ""
    return {"premise": premise,
            "conditions": [prose_html(c[text]) for c in d.proof.conditions], "verdict": verdict, "closing": closing}


def _notes(d, lang: str) -> list[dict]:
    """The articles' figures checked against the model (the documents' "compared with the articles" section)."""
    from .context import _note

    t = catalog(lang)
    a = t["articles"]
    notes = []
    for note in (_note(n, lang) for n in d.notes):
        notes.append({
            "title": note["title"],
            "article": prose_html(a["article"], title=note["title"], file=note["file"], about=note["about"],
                                  accounting=note["accounting"]),
            "claims": [{"what": prose_html(c["what"]), "claimed": c["claimed"], "right": c["right"],
                        "status": c["status"], "status_text": a[c["status"]]} for c in note["claims"]],
            "wrong": [prose_html(a["wrong_item"], what=c["what"], claimed=c["claimed"], right=c["right"])
                      + (t["lp"] + prose_html(c["why"]) + t["rp"] if c["why"] else "") + t["stop"]
                      for c in note["wrong"]],
            "remarks": t["sp"].join(prose_html(r) for r in note["remarks"]),
        })
    return notes


def _related(d, lang: str) -> list[str]:
    """Articles that count this model another way: what they claim, and the difference."""
    a = catalog(lang)["articles"]
    return [prose_html(a["related"], title=r["title"], file=r["file"], accounting=r[f"accounting_{lang}"],
                       claimed=r[f"claimed_{lang}"], preset=r["preset"],
                       preset_total=thousands(r["preset_total"]), total=thousands(r["total"]),
                       difference=thousands(r["difference"]))
            for r in d.related]


def render_html(m, lang: str = "en", title: str | None = None) -> str:
    """The live derivation page of ``m`` (every symbol needs a value) as one HTML string."""
    if lang not in LANGS:
        raise SymparamsError(f"unknown language {lang!r} (languages: {', '.join(LANGS)})")
    d = derive(m)
    t = with_rules(catalog(lang), d.rules)
    ui = t["page"]
    formulas: list = []
    values = {s.name: _value_text(v) for s, v in m.values.items()}
    sections = [_item(s, d, lang, formulas, values, ui) for s in d.sections]
    controls = _controls(m, lang)
    proof = m.prove()
    costs = _costs(d, lang, formulas) if d.costs else None
    summary = [{"id": s["id"], "title": s["title"], "formula": _math(closed_form(contribution_formula(i))),
                "count": s["count"], "share": s["share"]} for s, i in zip(sections, d.sections)]
    # the chart: a bar per component that holds parameters, its width its share (the page resizes it)
    chart = [{"id": s["id"], "title": s["title"], "share": s["share"], "width": f"{float(i.share) * 100:.4f}"}
             for s, i in zip(sections, d.sections) if i.contribution > 0]
    page = {
        "lang": "zh-CN" if lang == "zh" else "en",
        "csp": "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:",
        "heading": title if title is not None
        else re.sub(r"[*`$]", "", t["title"]).replace("[[model]]", title_name(d, lang)),
        "style": read_template("html/page.css"), "family_title": m.family.title.get(lang, m.family.name),
        "name": m.name, "controls": controls, "sections": sections, "summary": summary, "chart": chart,
        "total": thousands(d.total), "trainable": thousands(d.trainable),
        "trainable_share": percent(d.trainable_share),
        "total_formula": _math(m.closed_form), "trainable_formula": _math(closed_form(m.tree.trainable_total)),
        # a model with routed experts: the parameters one token uses (the page recomputes them live)
        "active": thousands(d.active) if m.routed else "", "active_share": percent(d.active_share),
        "active_formula": _math(closed_form(m.tree.active_total)) if m.routed else "",
        "closed_form": _math("<mi>N</mi><mo>=</mo>" + mathml_inner(m.closed_form), display=True),
        "equations": _equations(proof, ui), **_proof_words(d, proof, t, lang),
        "costs": costs, "laws": laws_page(d.laws, m.name, lang, d.target) if d.laws else None,
        "finetune": finetune_page(d, lang) if d.finetune else None,
        "notes": _notes(d, lang), "related": _related(d, lang),
        "articles_lead": prose_html(t["articles"]["lead"], model=m.name),
        "script": _script(m, controls, formulas, ui, t["costs"]["about"], lang),
    }
    return html_environment().get_template("html/page.html.j2").render(page=page, t=t, ui=ui)
