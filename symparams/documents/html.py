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

import sympy as sp
from sympy.printing.jscode import JavascriptCodePrinter
from sympy.printing.precedence import precedence

from ..analysis.integer_forms import condition_tree, int_fraction
from ..core.algebra import closed_form
from ..core.errors import SymparamsError
from ..core.formatting import percent, ratio, thousands
from ..core.symbols import SYMBOLS
from .context import title_of
from .derivation import derive
from .environment import LANGS, catalog, html_environment, read_template
from .escape import escape_html
from .markup import prose_html
from .mathml import mathml, mathml_inner
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
    if any(s.name[:2] not in ("x_", "n_", "d_") for s in expr.free_symbols):
        expr = _js_symbols(expr)
    return _BigIntPrinter().doprint(expr)


def fraction_js(expr: sp.Expr) -> str:
    """``expr`` as a JavaScript function ``v => [numerator, denominator]`` over BigInt, exact.

    A ``Piecewise`` (ELECTRA's "E ≠ H" constraint) becomes a chain of ``?:``.
    """
    expr = sp.piecewise_fold(_js_symbols(sp.expand(sp.sympify(expr))))
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
        return f"(v) => {pair(expr)}"
    code = "[0n, 1n]"  # no piece applies: not a positive whole number
    for e, c in reversed(expr.args):
        test = condition_tree(c, gens)
        code = pair(e) if test == ("const", True) else f"({cond(test)} ? {pair(e)} : {code})"
    return f"(v) => {code}"


# -- the page --------------------------------------------------------------------------------

def contribution_formula(item) -> sp.Expr:
    """What ``item`` adds to the model, in the symbols (all its copies): the page recomputes it live."""
    if item.tied_to:
        return sp.Integer(0)
    return sp.expand(item.copies * item.repeat * sp.expand(item.expr.doit()))


def _math(expr, order: str | None = None, display: bool = False) -> str:
    inner = expr if isinstance(expr, str) else mathml_inner(expr, order)
    return mathml(inner, display=display).replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "")


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
                     "meaning": (info.zh if lang == "zh" else info.en) if info else s.name,
                     "min": 1, "max": hi, "slider": slider})
    return rows


def _item(i, d, lang: str, formulas: list) -> dict:
    """An item of the derivation as the page shows it; its live formula goes to ``formulas``."""
    title, about = title_of(i.keys, i.names, d.family, catalog(lang))
    ident = f"i{len(formulas)}"
    formulas.append((ident, contribution_formula(i)))
    chain = [mathml_inner(i.expr, "none")]
    if i.collapsed:
        chain.append(mathml_inner(sp.expand(i.expr.doit())))
    reps = sp.expand(i.copies * i.repeat)
    return {
        "id": ident, "path": i.path, "depth": i.depth, "title": prose_html(title),
        "about": prose_html(about) if about and i.depth == 0 else "",
        "formula": _math("<mo>=</mo>".join(chain)), "copies": _math(reps) if reps != 1 else "",
        "init": i.contribution, "count": thousands(i.contribution), "share": percent(i.share),
        "tied_to": i.tied_to or "", "trainable": i.trainable,
        "children": [_item(c, d, lang, formulas) for c in i.children],
    }


#: the compute-and-memory numbers the page recomputes live, and whether a number may not be whole (per token)
_LIVE_COSTS = {"forward": False, "matmul": False, "attention": False, "product": False, "backward": False,
               "training": False, "kaplan": True, "exact_per_token": True, "weights_fp32": False,
               "weights_bf16": False, "training_memory": False, "kv_per_token": False, "cross_kv_per_token": False}


def _costs(d, lang: str, formulas: list) -> dict:
    """The compute-and-memory section as the page shows it: every number an ``<output>`` recomputed live."""
    from .context import _costs as costs_text

    t = catalog(lang)
    text = costs_text(d.costs, lang)
    outputs = {}
    for key, approx in _LIVE_COSTS.items():
        ident = f"costs-{key}"
        formulas.append((ident, d.costs.exprs[key], approx))
        shown = text.get(key) or thousands(getattr(d.costs, key, 0) or 0)
        outputs[key] = f'<output id="{ident}">{escape_html(shown)}</output>'

    def sentence(key, **values):
        holes = {k: f"\u27e6{k}\u27e7" for k in values}
        html = prose_html(t["costs"][key], **holes)
        for k, v in values.items():
            html = html.replace(holes[k], v)
        return html

    c = d.costs
    heads = (sentence("heads_invariant") if c.heads_invariant else
             sentence("heads_dependent") + t["sp"] + _math(c.heads_derivative_expr) + t["stop"] +
             (t["sp"] + prose_html(t["costs"]["heads_held"], held=text["held"]) if c.held else ""))
    return {
        "formula": _math("<mi>FLOPs</mi><mo>(</mo><mi>s</mi><mo>,</mo><mi>b</mi><mo>)</mo><mo>=</mo>"
                         + mathml_inner(c.formula_expr), display=True),
        "forward": sentence("forward", seq=escape_html(text["seq"]), forward=outputs["forward"],
                            matmul=outputs["matmul"], attention=outputs["attention"]),
        "product": sentence("product", product=outputs["product"]) if c.product else "",
        "training": sentence("training", backward=outputs["backward"], training=outputs["training"]),
        "heads": heads,
        "kaplan": sentence("kaplan", kaplan=outputs["kaplan"], exact=outputs["exact_per_token"]),
        "kaplan_difference": _math(c.kaplan_difference_expr, display=True),
        "memory": [{"key": row["key"], "id": f"costs-{row['key']}", "bytes": row["bytes"]} for row in text["memory"]],
        "cache": prose_html(t["costs"]["cache" if text["caches"] else "no_cache"], model=d.name),
        "cli": prose_html(t["costs"]["cli"], model=d.name),
    }


def _script(m, controls: list[dict], formulas: list, ui: dict, about: str) -> str:
    """The page's script: every count's closed form compiled to exact JavaScript, then the page logic
    (``about``: how a rounded number reads, "about [[n]]")."""
    constraints = [c for c in m.family.constraints if c.expr.free_symbols <= set(m.symbols)]
    specs = [{"name": c["name"], "rational": c["rational"], "init": c["value"], "den": c["den"]} for c in controls]
    compiled = [
        f"const SYMBOLS = {json.dumps(specs)};",
        f"const TOTAL = {fraction_js(m.closed_form)};",
        f"const TRAINABLE = {fraction_js(closed_form(m.tree.trainable_total))};",
        f"const ACTIVE = {fraction_js(closed_form(m.tree.active_total)) if m.routed else 'null'};",
        "const ITEMS = [" + ",\n".join(f'{{id: "{ident}", f: {fraction_js(f)}, about: {"true" if about else "false"}}}'
                                       for ident, f, *rest in formulas for about in [bool(rest and rest[0])]) + "];",
        "const CONSTRAINTS = [" + ",\n".join(
            f"{{f: {fraction_js(c.expr)}, message: {json.dumps(c.message, ensure_ascii=False)}}}"
            for c in constraints) + "];",
    ]
    words = json.dumps({**{k: ui[k] for k in ("invalid", "invalid_ratio", "not_whole")}, "about": about},
                       ensure_ascii=False)
    js = "\n".join(compiled) + read_template("html/page.js").replace("__UI__", words)
    return js.replace("</", "<\\/")  # nothing inside the script can close it


def render_html(m, lang: str = "en", title: str | None = None) -> str:
    """The live derivation page of ``m`` (every symbol needs a value) as one HTML string."""
    if lang not in LANGS:
        raise SymparamsError(f"unknown language {lang!r} (languages: {', '.join(LANGS)})")
    d = derive(m)
    t = catalog(lang)
    formulas: list = []
    sections = [_item(s, d, lang, formulas) for s in d.sections]
    controls = _controls(m, lang)
    proof = m.prove()
    equations = "".join(f'<mtr><mtd columnalign="right">{lhs[1]}</mtd><mtd columnalign="left"><mo>=</mo>{rhs[1]}'
                        f"</mtd></mtr>" for lhs, rhs in proof_equations(proof))
    costs = _costs(d, lang, formulas)
    summary = [{"id": s["id"], "title": s["title"], "formula": _math(closed_form(contribution_formula(i))),
                "count": s["count"], "share": s["share"]} for s, i in zip(sections, d.sections)]
    page = {
        "lang": "zh-CN" if lang == "zh" else "en",
        "csp": "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:",
        "heading": title if title is not None else re.sub(r"[*`$]", "", t["title"]).replace("[[model]]", m.name),
        "style": read_template("html/page.css"), "family_title": m.family.title.get(lang, m.family.name),
        "name": m.name, "controls": controls, "sections": sections, "summary": summary,
        "total": thousands(d.total), "trainable": thousands(d.trainable),
        "trainable_share": percent(d.trainable_share),
        "total_formula": _math(m.closed_form), "trainable_formula": _math(closed_form(m.tree.trainable_total)),
        # a model with routed experts: the parameters one token uses (the page recomputes them live)
        "active": thousands(d.active) if m.routed else "", "active_share": percent(d.active_share),
        "active_formula": _math(closed_form(m.tree.active_total)) if m.routed else "",
        "closed_form": _math("<mi>N</mi><mo>=</mo>" + mathml_inner(m.closed_form), display=True),
        "equations": _math(f"<mtable>{equations}</mtable>", display=True),
        "conditions": [c.zh if lang == "zh" else c.en for c in proof.conditions],
        "verdict": prose_html(t["heads"]["invariant" if proof.invariant else "dependent"], model=m.name),
        "costs": costs,
        "script": _script(m, controls, formulas, t["page"], t["costs"]["about"]),
    }
    return html_environment().get_template("html/page.html.j2").render(page=page, t=t, ui=t["page"])
