"""The live derivation page: ``symparams derive MODEL --format html``.

One self-contained HTML file (no network: a Content-Security-Policy forbids
every fetch): the derivation of :mod:`symparams.derivation`, with the
documents' string catalogs (``templates/i18n/*.json``), formulas as MathML
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

import html
import json
import re
from typing import Any

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
from .environment import catalog
from .mathml import mathml, mathml_inner
from .proof_text import proof_equations

#: the page's own few words (everything else comes from the documents' catalogs)
UI = {
    "en": {
        "values": "Values", "values_lead": "Change any value: every count, share and the total below follow at once, "
                                            "computed exactly in the page.",
        "per_copy": "per copy", "copies": "copies", "invalid": "not a positive whole number",
        "invalid_ratio": "not a positive ratio (write 4, 43/16 or 2.6875)", "not_whole": "not a whole number",
        "reset": "Reset", "tied": "tied to", "frozen": "not trainable",
        "live_total": "Total at these values",
    },
    "zh": {
        "values": "取值", "values_lead": "修改任意取值，下面每个部分的参数量、占比和总量都会随之更新（在页面中精确计算）。",
        "per_copy": "每份", "copies": "份", "invalid": "不是正整数",
        "invalid_ratio": "不是正的比值（可写 4、43/16 或 2.6875）", "not_whole": "不是整数",
        "reset": "重置", "tied": "与之共享权重：", "frozen": "不可训练",
        "live_total": "当前取值下的总参数量",
    },
}


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


# -- catalog prose to HTML -------------------------------------------------------------------

_TEX = {r"\cdot": "·", r"\times": "×", r"\to": "→", r"\mid": "∣", r"\partial": "∂", r"\gamma": "γ",
        r"\beta": "β", r"\alpha": "α", r"\rho": "ρ", r"\leq": "≤", r"\geq": "≥", r"\neq": "≠", r"\approx": "≈",
        r"\left": "", r"\right": "", r"\,": " ", r"\;": " ", r"\ ": " "}


def _math_text(tex: str) -> str:
    tex = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", tex)
    tex = re.sub(r"([_^])(?:\{([^{}]*)\}|(\w))",
                 lambda mo: f"<{'sup' if mo.group(1) == '^' else 'sub'}>{mo.group(2) or mo.group(3)}"
                            f"</{'sup' if mo.group(1) == '^' else 'sub'}>", tex)
    tex = re.sub(r"\\(?:text|mathrm|operatorname)\{([^{}]*)\}", r"\1", tex)
    for k in sorted(_TEX, key=len, reverse=True):
        tex = tex.replace(k, _TEX[k])
    return tex.replace("{", "").replace("}", "")


def prose(text: str, **values) -> str:
    """Catalog mini-markup (``**bold**``, ```code```, ``$math$``, ``[[hole]]``) as escaped HTML.

    >>> prose("**[[model]]** has $n \\\\cdot d$ numbers", model="<x>")
    '<strong>&lt;x&gt;</strong> has <i class="m">n · d</i> numbers'
    """
    out = html.escape(str(text), quote=False)
    out = re.sub(r"\$([^$]+)\$", lambda mo: f'<i class="m">{_math_text(mo.group(1))}</i>', out)
    out = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\[\[(\w+)\]\]", lambda mo: html.escape(str(values.get(mo.group(1), mo.group(0))), quote=False),
                  out)


# -- the page --------------------------------------------------------------------------------

def _contribution(item) -> sp.Expr:
    """What ``item`` adds to the model, in the symbols (all its copies)."""
    if item.tied_to:
        return sp.Integer(0)
    return sp.expand(item.copies * item.repeat * sp.expand(item.expr.doit()))


def _math(expr, order: str | None = None, display: bool = False) -> str:
    inner = expr if isinstance(expr, str) else mathml_inner(expr, order)
    return mathml(inner, display=display).replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "")


def _symbol_controls(m, lang: str) -> tuple[list[dict], str]:
    specs, rows = [], []
    for s in m.symbols:
        info = SYMBOLS.get(s.name)
        value = m.values[s]
        rational = bool(info and info.rational)
        meaning = (info.zh if lang == "zh" else info.en) if info else s.name
        if rational:
            q = sp.Rational(value)
            lo, hi, step = 1, max(64, int(8 * q * 4)), 8  # the slider moves in eighths
            slider = int(q * 8) if (q * 8).is_Integer else 8
        else:
            lo, hi, step = 1, max(8, 4 * int(value)), 1
            slider = int(value)
        specs.append({"name": s.name, "rational": rational, "init": ratio(value), "den": step})
        rows.append(
            f'<tr><td>{_math(s)}</td><td>{html.escape(meaning)}</td>'
            f'<td><input id="in-{s.name}" data-symbol="{s.name}" class="value" type="text" inputmode="'
            f'{"decimal" if rational else "numeric"}" value="{html.escape(ratio(value))}" size="10" '
            f'aria-label="{s.name}"></td>'
            f'<td><input id="slide-{s.name}" data-symbol="{s.name}" class="slider" type="range" min="{lo}" '
            f'max="{hi}" step="1" value="{slider}" aria-label="{s.name}"></td>'
            f'<td class="error" id="err-{s.name}"></td></tr>')
    return specs, "\n".join(rows)


def _item_html(i, d, t, m, ui, items: list, depth: int = 0) -> str:
    title, about = title_of(i.keys, i.names, d.family, t)
    ident = f"i{len(items)}"
    items.append({"id": ident, "f": _contribution(i), "init": i.contribution})
    chain = [mathml_inner(i.expr, "none")]
    if i.collapsed:
        chain.append(mathml_inner(sp.expand(i.expr.doit())))
    formula = _math("<mo>=</mo>".join(chain))
    reps = sp.expand(i.copies * i.repeat)
    times = f' <span class="copies">× {_math(reps)}</span>' if reps != 1 else ""
    notes = ""
    if i.tied_to:
        notes += f' <span class="note">({html.escape(ui["tied"])} <code>{html.escape(i.tied_to)}</code>)</span>'
    elif not i.trainable:
        notes += f' <span class="note">({html.escape(ui["frozen"])})</span>'
    tag = "h3" if depth == 0 else "span"
    head = f'<{tag} class="title">{prose(title)}</{tag}>'
    body = (f'<div class="formula">{formula}{times}</div>'
            f'<div class="count"><output id="{ident}" data-init="{i.contribution}">{thousands(i.contribution)}'
            f'</output> <output class="share" id="{ident}-share">{percent(i.share)}</output>{notes}</div>')
    about_html = f'<p class="about">{prose(about)}</p>' if about and depth == 0 else ""
    children = ""
    if i.children:
        children = "<ul>" + "".join(f"<li>{_item_html(c, d, t, m, ui, items, depth + 1)}</li>"
                                    for c in i.children) + "</ul>"
    cls = "section" if depth == 0 else "part"
    return f'<div class="{cls}" data-path="{html.escape(i.path)}">{head}{about_html}{body}{children}</div>'


def _summary(d, t, m, items, section_ids) -> str:
    rows = []
    for s, ident in zip(d.sections, section_ids):
        title, _ = title_of(s.keys, s.names, d.family, t)
        f = closed_form(_contribution(s))
        rows.append(f'<tr><td>{prose(title)}</td><td>{_math(f)}</td>'
                    f'<td class="num"><output data-copy="{ident}">{thousands(s.contribution)}</output></td>'
                    f'<td class="num"><output data-copy="{ident}-share">{percent(s.share)}</output></td></tr>')
    return "\n".join(rows)


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;
line-height:1.5;color:#1b1f24}
h1{font-size:1.7rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd}h3{margin:.2rem 0}
table{border-collapse:collapse}td,th{padding:.25rem .6rem;border-bottom:1px solid #eee;text-align:left}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
#controls{position:sticky;top:0;background:#fff;z-index:1;padding:.3rem 0;border-bottom:1px solid #ddd}
input.value{font:inherit;width:8rem}input.value.bad{border-color:#c00;background:#fee}
.error{color:#c00;font-size:.9rem}#warnings{color:#c00}
.section{margin:1.2rem 0;padding:.6rem .9rem;border-left:3px solid #4a7bd0;background:#f7f9fc}
.part{margin:.3rem 0}.title{font-weight:600}span.title{margin-right:.5rem}
.count output{font-variant-numeric:tabular-nums;font-weight:600}.count output.share{font-weight:400;color:#555;
margin-left:.6rem}.note{color:#666}.about{color:#333;margin:.2rem 0}.formula{overflow-x:auto;margin:.2rem 0}
#total-line{font-size:1.2rem}i.m{font-family:"Latin Modern Math","STIX Two Math",serif}
ul{list-style:none;padding-left:1.2rem;margin:.2rem 0}
"""

_SCRIPT = r"""
"use strict";
const UI = __UI__;
function gcd(a, b) { while (b) { [a, b] = [b, a % b]; } return a; }
function parse(text, rational) {
  text = String(text).trim().replace(/[_,\s]/g, "");
  let m = /^\+?(\d+)$/.exec(text);
  if (m) { const n = BigInt(m[1]); return n > 0n ? [n, 1n] : null; }
  if (!rational) return null;
  m = /^\+?(\d+)\/(\d+)$/.exec(text);
  let n, d;
  if (m) { n = BigInt(m[1]); d = BigInt(m[2]); }
  else {
    m = /^\+?(\d*)\.(\d+)$/.exec(text);
    if (!m) return null;
    n = BigInt((m[1] || "0") + m[2]); d = 10n ** BigInt(m[2].length);
  }
  if (n <= 0n || d <= 0n) return null;
  const g = gcd(n, d);
  return [n / g, d / g];
}
function show([n, d]) { return d === 1n ? n.toString() : n + "/" + d; }
function group(n) { return n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
function exact(f, v) { const [n, d] = f(v); return n % d === 0n ? n / d : null; }
function roundRational(n, d, digits) {
  const scale = 10n ** BigInt(digits);
  const k = (2n * n * scale + d) / (2n * d);
  return [k / scale, k % scale];
}
function percent(part, whole) {
  const n = part * 100n, d = whole;
  let digits = 2;
  const zero = (p) => { const [w, f] = roundRational(n, d, p); return w === 0n && f === 0n; };
  if (n !== 0n && zero(digits)) { while (digits < 8 && zero(digits)) digits++; digits++; }
  const [w, f] = roundRational(n, d, digits);
  return w + "." + f.toString().padStart(digits, "0") + "%";
}
function fill(message, values, extra) {
  return message.replace(/\{(\w+)\}/g, (all, key) =>
    key in extra ? extra[key] : key in values ? show(values[key]) : all);
}
function read() {
  const v = {}, raw = {};
  let ok = true;
  for (const s of SYMBOLS) {
    const input = document.getElementById("in-" + s.name);
    const q = parse(input.value, s.rational);
    input.classList.toggle("bad", q === null);
    document.getElementById("err-" + s.name).textContent =
      q === null ? (s.rational ? UI.invalid_ratio : UI.invalid) : "";
    if (q === null) { ok = false; continue; }
    raw[s.name] = q;
    if (s.rational) { v["n_" + s.name] = q[0]; v["d_" + s.name] = q[1]; }
    else v["x_" + s.name] = q[0];
  }
  return ok ? [v, raw] : [null, raw];
}
function setOut(id, text) {
  const el = document.getElementById(id);
  if (el) el.textContent = text;
  for (const copy of document.querySelectorAll('[data-copy="' + id + '"]')) copy.textContent = text;
}
function update() {
  const [v, raw] = read();
  const warnings = [];
  if (v) {
    for (const c of CONSTRAINTS) {
      const [n, d] = c.f(v);
      if (!(n > 0n && n % d === 0n)) {
        const value = n % d === 0n ? (n / d).toString() : show([n / gcd(n, d), d / gcd(n, d)]);
        warnings.push(fill(c.message, raw, {value: value}));
      }
    }
  }
  const total = v ? exact(TOTAL, v) : null;
  const trainable = v ? exact(TRAINABLE, v) : null;
  setOut("total", total === null ? "—" : group(total));
  setOut("trainable", trainable === null ? "—" : group(trainable));
  setOut("trainable-share", total && trainable !== null ? percent(trainable, total) : "");
  if (v && total === null) warnings.push(UI.not_whole);
  for (const item of ITEMS) {
    const value = v ? exact(item.f, v) : null;
    setOut(item.id, value === null ? "—" : group(value));
    setOut(item.id + "-share", value !== null && total ? percent(value, total) : "");
  }
  document.getElementById("warnings").textContent = warnings.join(" · ");
  document.documentElement.dataset.total = total === null ? "" : total.toString();
}
function fromSlider(s, input, slider) {
  const k = BigInt(slider.value);
  input.value = s.rational ? show([k / gcd(k, BigInt(s.den)), BigInt(s.den) / gcd(k, BigInt(s.den))]) : slider.value;
}
function toSlider(s, input, slider) {
  const q = parse(input.value, s.rational);
  if (!q) return;
  const scaled = q[0] * BigInt(s.den);
  if (scaled % q[1] === 0n) {
    const k = scaled / q[1];
    if (k > BigInt(slider.max)) slider.max = k.toString();
    slider.value = k.toString();
  }
}
function fromHash() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  for (const s of SYMBOLS) {
    if (params.has(s.name)) {
      const input = document.getElementById("in-" + s.name);
      input.value = params.get(s.name);
      toSlider(s, input, document.getElementById("slide-" + s.name));
    }
  }
}
for (const s of SYMBOLS) {
  const input = document.getElementById("in-" + s.name), slider = document.getElementById("slide-" + s.name);
  input.addEventListener("input", () => { toSlider(s, input, slider); update(); });
  slider.addEventListener("input", () => { fromSlider(s, input, slider); update(); });
}
document.getElementById("reset").addEventListener("click", () => {
  for (const s of SYMBOLS) {
    const input = document.getElementById("in-" + s.name);
    input.value = s.init;
    toSlider(s, input, document.getElementById("slide-" + s.name));
  }
  update();
});
window.addEventListener("hashchange", () => { fromHash(); update(); });
fromHash();
update();
document.documentElement.dataset.ready = "1";
"""


def render_html(m, lang: str = "en", title: str | None = None) -> str:
    """The live derivation page of ``m`` (every symbol needs a value) as one HTML string."""
    if lang not in UI:
        raise SymparamsError(f"unknown language {lang!r} (languages: {', '.join(UI)})")
    d = derive(m)
    t = catalog(lang)
    ui = UI[lang]
    family_title = m.family.title.get(lang, m.family.name)
    heading = title if title is not None else re.sub(r"[*`$]", "", t["title"]).replace("[[model]]", m.name)
    specs, controls = _symbol_controls(m, lang)

    items: list[dict] = []
    sections, section_ids = [], []
    for s in d.sections:
        section_ids.append(f"i{len(items)}")
        sections.append(_item_html(s, d, t, m, ui, items))
    total_expr = m.closed_form
    trainable_expr = closed_form(m.tree.trainable_total)
    constraints = [c for c in m.family.constraints if c.expr.free_symbols <= set(m.symbols)]

    proof = m.prove()
    equations = "".join(f'<mtr><mtd columnalign="right">{lhs[1]}</mtd><mtd columnalign="left"><mo>=</mo>{rhs[1]}'
                        f"</mtd></mtr>" for lhs, rhs in proof_equations(proof))
    conditions = "".join(f"<li>{html.escape(c.zh if lang == 'zh' else c.en)}</li>" for c in proof.conditions)
    verdict = t["heads"]["invariant" if proof.invariant else "dependent"]
    name = m.name

    script = _SCRIPT.replace("__UI__", json.dumps({k: ui[k] for k in ("invalid", "invalid_ratio", "not_whole")},
                                                  ensure_ascii=False))
    compiled = [
        f"const SYMBOLS = {json.dumps(specs)};",
        f"const TOTAL = {fraction_js(total_expr)};",
        f"const TRAINABLE = {fraction_js(trainable_expr)};",
        "const ITEMS = [" + ",\n".join(f'{{id: "{i["id"]}", f: {fraction_js(i["f"])}}}' for i in items) + "];",
        "const CONSTRAINTS = [" + ",\n".join(
            f"{{f: {fraction_js(c.expr)}, message: {json.dumps(c.message, ensure_ascii=False)}}}"
            for c in constraints) + "];",
    ]
    js = "\n".join(compiled) + script
    js = js.replace("</", "<\\/")  # nothing inside the script can close it

    summary_rows = _summary(d, t, m, items, section_ids)
    total_text, trainable_text = thousands(m.count), thousands(m.trainable)
    trainable_share = percent(sp.Rational(m.trainable, m.count))
    csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
    sec = t["sections"]
    s = t["summary"]
    return f"""<!DOCTYPE html>
<html lang="{'zh-CN' if lang == 'zh' else 'en'}">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="symparams">
<title>{html.escape(heading)}</title>
<style>{_STYLE}</style>
</head>
<body>
<h1 id="title">{html.escape(heading)}</h1>
<p class="byline">{prose(t["byline"])}</p>
<p>{html.escape(family_title)} · <code>{html.escape(name)}</code></p>

<section id="controls">
<h2>{html.escape(ui["values"])}</h2>
<p>{html.escape(ui["values_lead"])} <button id="reset" type="button">{html.escape(ui["reset"])}</button></p>
<table>
<thead><tr><th>{prose(t["intro"]["symbol"])}</th><th>{prose(t["intro"]["meaning"])}</th>
<th>{prose(t["intro"]["value"])}</th><th></th><th></th></tr></thead>
<tbody>
{controls}
</tbody>
</table>
<p id="total-line">{html.escape(ui["live_total"])}: <strong><output id="live-total" data-copy="total">{total_text}</output></strong>
· {prose(s["trainable"])}: <output data-copy="trainable">{trainable_text}</output>
(<output data-copy="trainable-share">{trainable_share}</output>)</p>
<p id="warnings" role="status"></p>
</section>

<section id="computation">
<h2>{prose(sec["computation"])}</h2>
<p>{prose(t["intro"]["rules"])}</p>
{"".join(sections)}
</section>

<section id="summary">
<h2>{prose(sec["summary"])}</h2>
<p>{prose(s["lead"])}</p>
<table>
<thead><tr><th>{prose(s["component"])}</th><th>{prose(s["formula"])}</th><th class="num">{prose(s["count"])}</th>
<th class="num">{prose(s["share"])}</th></tr></thead>
<tbody>
{summary_rows}
<tr><th>{prose(s["total"])}</th><td>{_math(total_expr)}</td>
<th class="num"><output id="total">{total_text}</output></th><th class="num">100.00%</th></tr>
<tr><th>{prose(s["trainable"])}</th><td>{_math(trainable_expr)}</td>
<td class="num"><output id="trainable">{trainable_text}</output></td>
<td class="num"><output id="trainable-share">{trainable_share}</output></td></tr>
</tbody>
</table>
</section>

<section id="closed-form">
<h2>{prose(sec["closed_form"])}</h2>
<p>{prose(t["closed"]["lead"])}</p>
{_math(_mathml_chain_n(total_expr), display=True)}
</section>

<section id="heads">
<h2>{prose(sec["heads"])}</h2>
{_math(f"<mtable>{equations}</mtable>", display=True)}
<ul class="conditions">{conditions}</ul>
<p>{prose(verdict, model=name)}</p>
</section>

<script>
{js}
</script>
</body>
</html>
"""


def _mathml_chain_n(expr) -> str:
    return "<mi>N</mi><mo>=</mo>" + mathml_inner(expr)
