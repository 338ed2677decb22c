"""The results of ``flops``, ``memory``, ``kv_cache`` and ``explain`` as reports: a title, a table and notes.

One report per result, shown three ways: the command line's text (``symparams flops``, ``memory``,
``explain``), and the Markdown and HTML a notebook displays (``m.memory(seq=2048)`` in Jupyter), so the
three never differ in a number.  Every number comes from the result's own exact evaluation.

>>> from symparams import model
>>> print(report(model("llama-3-8b").kv_cache("bf16", seq=4096, batch=2)).text())  # doctest: +ELLIPSIS
llama-3-8b (LLaMA): V=128256 H=4096 L=32 A=32 G=8 F=14336 gqa=true ...
KV cache in bf16 after 4,096 tokens, 2 sequences:
part                          bytes
per token of context        131,072
-----------------------------------
held                  1,073,741,824
convention: KV cache: the keys and values (or compressed latents) each token leaves in every attention module, ...
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ..analysis.cache import KVCache
from ..analysis.explain import Ledger, digits_text
from ..analysis.flops import Flops
from ..analysis.laws import COMPARES
from ..analysis.utilisation import Utilisation
from ..analysis.memory import Memory
from ..analysis.ranks import per_rank
from ..analysis.solve import Solution
from ..analysis.sweep import Sweep
from ..analysis.variables import QUANTITIES
from ..core.errors import printable
from ..core.formatting import decimal, percent, ratio, text_table, thousands, values_line
from .escape import escape_html, escape_md


@dataclass(frozen=True)
class Report:
    """A result as a title, a table (rows, then a rule, then the footer's rows) and the notes below it."""

    title: tuple[str, ...]
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    footer: tuple[tuple[str, ...], ...]
    align: str
    notes: tuple[str, ...]
    min_widths: tuple[int, ...] = ()

    def text(self) -> str:
        table = text_table(self.header, [*self.rows, *self.footer], self.align, rule_before=len(self.rows),
                           min_widths=self.min_widths)
        return "\n".join([*self.title, table, *self.notes])

    def markdown(self) -> str:
        side = {"l": ":---", "r": "---:"}
        lines = [f"**{escape_md(line)}**" if i == 0 else escape_md(line) for i, line in enumerate(self.title)]
        lines += ["", "| " + " | ".join(map(escape_md, self.header)) + " |",
                  "|" + "|".join(side[a] for a in self.align) + "|"]
        lines += ["| " + " | ".join(map(escape_md, row)) + " |" for row in self.rows]
        lines += ["| " + " | ".join(f"**{escape_md(c)}**" if c else "" for c in row) + " |" for row in self.footer]
        return "\n".join(lines + [""] + [f"- {escape_md(note)}" for note in self.notes])

    def html(self) -> str:
        side = {"l": "left", "r": "right"}

        def cells(row, tag):
            return "".join(f'<{tag} style="text-align:{side[a]}">{escape_html(c)}</{tag}>'
                           for c, a in zip(row, self.align))

        out = [f"<p><strong>{escape_html(self.title[0])}</strong></p>",
               *(f"<p>{escape_html(line)}</p>" for line in self.title[1:]),
               '<table class="symparams-result">', f"<thead><tr>{cells(self.header, 'th')}</tr></thead><tbody>",
               *(f"<tr>{cells(row, 'td')}</tr>" for row in self.rows),
               *(f"<tr>{cells(row, 'th')}</tr>" for row in self.footer), "</tbody></table>"]
        if self.notes:
            out += ["<ul>", *(f"<li>{escape_html(note)}</li>" for note in self.notes), "</ul>"]
        return "\n".join(out)


#: the results shown as reports
REPORTED = (Memory, Flops, KVCache, Ledger, Solution, Sweep)

#: a sweep's notebook display shows this many rows, then says how many more there are
SWEEP_ROWS = 50


def report(result, macs: bool = False) -> Report:
    """The report of a :class:`Memory`, :class:`Flops` (``macs``: halved, as multiply-accumulates),
    :class:`KVCache` or :class:`Ledger`."""
    if isinstance(result, Flops):
        return flops_report(result, macs)
    if isinstance(result, Memory):  # a fine-tuning's memory too
        return memory_report(result)
    return {KVCache: kv_report, Ledger: ledger_report, Solution: solution_report,
            Sweep: sweep_report}[type(result)](result)


def heading(m) -> str:
    """The model's line that heads every report: its name, family and values."""
    return f"{printable(m.name)} ({m.family.title['en']}): {values_line(m.values, m.switches, m.head)}"


def _gib(n: int) -> str:
    """Bytes in GiB to two decimals, rounded exactly."""
    return decimal(sp.Rational(n, 2**30))


# -- memory and the KV cache -------------------------------------------------------------------------------------

def memory_report(mem: Memory) -> Report:
    data = mem.to_dict()
    rows = tuple((part, thousands(data[key]), _gib(data[key]))
                 for part, key in (("weights", "weights"), ("gradients", "gradients"),
                                   ("optimizer state", "optimizer"), ("activations", "activations"),
                                   ("KV cache", "kv_cache")))
    notes = []
    per_token = data["kv_cache_per_token"]
    if per_token:
        notes.append(f"KV cache: {thousands(per_token)} bytes per token of context"
                     f"{_windows(data['kv_cache_windows'], per_token)}")
    if data.get("cross_kv_cache_per_token"):
        notes.append(f"cross-attention cache: {thousands(data['cross_kv_cache_per_token'])} bytes per token of "
                     "the input")
    if data.get("kv_cache_state"):
        notes.append(f"cache state: {thousands(data['kv_cache_state'])} bytes per sequence, whatever its length")
    for law in mem.laws:
        notes += _memory_law_lines(law)
    notes += [f"{MEMORY_LAW_NAMES[law['name']]}: not applied: {law['reason']}" for law in mem.laws_refused]
    notes += [f"convention: {line}" for line in data.get("conventions", ())]
    busiest = per_rank(mem)
    if busiest is not None:
        notes += _per_rank_notes(busiest.to_dict())
    return Report((heading(mem.model),), ("part", "bytes", "GiB"), rows,
                  (("total", thousands(data["total"]), _gib(data["total"])),), "lrr", tuple(notes))


#: how each memory law reads in the text output
MEMORY_LAW_NAMES = {"megatron_weights_and_optimizer": "Megatron-LM theoretical memory, weights and optimizer",
                    "megatron_activations": "Megatron-LM theoretical memory, activations",
                    "korthikanti_activations": "Korthikanti et al. 2022, Table 2 per layer, all layers"}


def _difference(formula, shown: str) -> str:
    """``exact − law = formula = value``; a difference that is a number is written once."""
    if sp.sympify(formula).is_Number:
        return f"exact − law = {shown}"
    return f"exact − law = {sp.sstr(formula)} = {shown}"


def _memory_law_lines(law: dict) -> list[str]:
    """A memory law in bytes per rank, exact − law, part by part, and what it assumes."""
    lines = [f"{MEMORY_LAW_NAMES[law['name']]}: {_amount(law['law_value'])} bytes ({law['source']}); "
             + _difference(law["difference"], _amount(law["difference_value"]))]
    lines += [f"  {t['part']}: " + _difference(t["difference"], _amount(t["difference_value"])) for t in law["terms"]]
    return lines + [f"  assumes {line}" for line in law["assumes"]]


def _per_rank_notes(data: dict) -> list[str]:
    """The most loaded rank of a parallel layout, each stage's total when there are several, its conventions."""
    parts = ", ".join(f"{name} {thousands(data[key])}" for name, key in (
        ("weights", "weights"), ("unsharded (gathered)", "unsharded"), ("gradients", "gradients"),
        ("optimizer state", "optimizer"), ("activations", "activations"), ("KV cache", "kv_cache")) if key in data)
    notes = [f"most loaded rank: {data['rank']}: {parts}; total {thousands(data['total'])} bytes "
             f"({_gib(data['total'])} GiB)"]
    if len(data["stages"]) > 1:
        notes.append("per stage (its first rank): " + ", ".join(
            f"{s['stage'] + 1}: {thousands(s['total'])}" for s in data["stages"]) + " bytes")
    return notes + [f"convention: {line}" for line in data["conventions"]]


def _windows(windows, per_token: int) -> str:
    """What the sliding-window layers keep, for the KV cache's line."""
    if len(windows) == 1 and windows[0]["per_token"] == per_token:
        return f", every layer keeping only its last {thousands(windows[0]['tokens'])} tokens"
    return "".join(f"; {thousands(w['per_token'])} of them on layers that keep only their last "
                   f"{thousands(w['tokens'])} tokens" for w in windows)


def kv_report(kv: KVCache) -> Report:
    data = kv.to_dict()
    when = "" if kv.seq is None else f" after {thousands(kv.seq)} tokens, {_sequences(kv.batch)}"
    rows = [("per token of context", thousands(data["per_token"]))]
    if data["cross_per_token"]:
        rows.append(("per token of the input (cross-attention)", thousands(data["cross_per_token"])))
    if data["state"]:
        rows.append(("per sequence, whatever its length", thousands(data["state"])))
    footer = () if data["total"] is None else (("held", thousands(data["total"])),)
    notes = [f"sliding window: {thousands(w['per_token'])} of the bytes per token on layers that keep only their "
             f"last {thousands(w['tokens'])} tokens" for w in data["windows"]]
    return Report((heading(kv.model), f"KV cache in {data['cache_dtype']}{when}:"), ("part", "bytes"), tuple(rows),
                  footer, "lr", tuple(notes + [f"convention: {line}" for line in data["conventions"]]))


def _sequences(batch: int) -> str:
    return f"{thousands(batch)} sequence{'s' if batch != 1 else ''}"


# -- FLOPs ---------------------------------------------------------------------------------------------------------

#: the conventions every FLOPs output states (the counter they are checked against)
FLOPS_CONVENTIONS = (
    "a matrix product [m, k] @ [k, n] is 2·m·n·k FLOPs (a multiply and an add; --macs halves it), "
    "as PyTorch's FlopCounterMode counts it on the transformers model with eager attention",
    "bias adds, norms, softmax and activations are not counted (--elementwise: softmax 3 per score, a norm "
    "2 + its parameters per feature, an activation 1 per element); an embedding lookup costs nothing",
    "attention: Q·Kᵀ and the weighted sum over the full s × s square (--causal: the causal half s·(s+1)/2)",
    "mixture of experts: only the experts each token is routed to",
    "backward = 2 × forward (the gradients of both factors of every product); "
    "training = forward + backward (+ the layers' forward once more with --recompute: the embeddings and "
    "the head are not recomputed)",
)

#: the conventions of FLOPs traced by PyTorch's counter (an inferred type's)
TRACED_CONVENTIONS = (
    "traced: every product PyTorch's FlopCounterMode counts on the transformers model (eager attention, "
    "experts run as the eager loop runs them, no cache), traced on the meta device at fitted sizes and checked "
    "against a tiny real model; a matrix product [m, k] @ [k, n] is 2·m·n·k FLOPs (--macs halves it)",
    "what the counter does not count is not counted: bias adds, norms, softmax, activations, an embedding lookup; "
    "attention over the full s × s square",
    "backward: the counter's own backward products (twice the forward for a product of two tensors that need "
    "gradients, once for one, a convolution's as its kernels compute it); training = forward + backward "
    "(+ the layers' forward once more with --recompute)",
)

#: how each law reads in the text output
LAW_NAMES = {
    "kaplan_forward": "Kaplan forward, 2N + 2·n_layer·s·d_attn (N: non-embedding parameters a token uses)",
    "kaplan_training": "Kaplan training, 6N",
    "palm_training": "PaLM training, 6N + 12·n_layer·s·d_attn",
    "narayanan_training": "Narayanan et al. 2021, 96·B·s·l·h²·(1 + s/6h + V/16lh) with full recomputation",
    "megatron_training": "Megatron-LM num_floating_point_operations",
    "nanogpt_training": "nanoGPT estimate_mfu, 6N + 12·L·H·Q·T (N without position embeddings)",
    "torchtitan_training": "torchtitan, 6·active parameters + 6·heads·(d_qk + d_v)·s per layer",
    "maxtext_training": "MaxText calculate_tflops_training_per_device",
    "chinchilla_forward": "Chinchilla (Hoffmann et al. 2022, appendix F) forward",
    "chinchilla_training": "Chinchilla (Hoffmann et al. 2022, appendix F) training, 3 × forward",
}


def flops_report(f: Flops, macs: bool = False) -> Report:
    m, unit = f.model, "MACs" if macs else "FLOPs"

    def count(n: int) -> str:
        return thousands(n // 2) if macs else thousands(n)

    rows = []
    for level, path, block, flops in f.by_component():
        label = "  " * (level - 1) + block.name + (f" × {m.evaluate(block.repeat)}" if block.repeat != 1 else "")
        rows.append((label, count(flops), percent(sp.Rational(flops, f.forward))))
    footer = (("forward", count(f.forward), "100.00%"), ("backward", count(f.backward), ""),
              ("training", count(f.training), ""))
    kinds = f.by_kind
    notes = [f"of the forward pass: weight matmuls {count(kinds['matmul'])}, "
             f"attention (Q·Kᵀ and weighted sum) {count(kinds['attention'])}"
             + (f", other products {count(kinds['product'])}" if kinds["product"] else "")
             + (f", element-wise {count(kinds['elementwise'])}" if "elementwise" in kinds else ""),
             f"per token: forward {_fraction(f.forward_per_token)}, training {_fraction(f.training_per_token)} FLOPs"]
    for law in f.laws:
        notes += _law_lines(law)
    notes += [f"{LAW_NAMES[law['name']]}: not applied: {law['reason']}" for law in f.laws_refused]
    notes += [f"forward FLOPs = {sp.sstr(f.formula)}", _heads_line(f)]
    notes += [f"convention: {line}" for line in (TRACED_CONVENTIONS if f.traced else FLOPS_CONVENTIONS)]
    if f.per_rank is not None:
        r = f.per_rank
        notes.append(f"most loaded rank: {r.rank}: forward {count(r.forward)}, training {count(r.training)} {unit}")
        notes += [f"convention: {line}" for line in r.conventions]
    title = (heading(m), f"{unit} of one forward pass over {_sequences(f.batch)} of {thousands(f.seq)} tokens:")
    return Report(title, ("component", unit, "share"), tuple(rows), footer, "lrr", tuple(notes), (0, 0, 8))


def _law_lines(law: dict) -> list[str]:
    """A law per token and exact − law; a published source's law also part by part, and what it assumes."""
    against = f" (against {COMPARES[law['compares']]}; {law['source']})" if "source" in law else ""
    lines = [f"{LAW_NAMES[law['name']]}: {_fraction(law['law_value'])} per token{against}; "
             + _difference(law["difference"], _fraction(law["difference_value"]))]
    lines += [f"  {t['part']}: " + _difference(t["difference"], _fraction(t["difference_value"]))
              for t in law.get("terms", ())]
    return lines + [f"  assumes {line}" for line in law.get("assumes", ())]


#: how each utilisation convention reads
UTILISATION_NAMES = {"mfu": "MFU: exact model FLOPs (forward + backward, no recomputation)",
                     "hfu": "HFU: exact hardware FLOPs (with --recompute, the layers' forward twice)",
                     "kaplan_training": "Kaplan, 6N", "palm_training": "PaLM, 6N + 12·n_layer·s·d_attn",
                     "narayanan_training": "Narayanan et al. 2021 (counts recomputation)",
                     "megatron_training": "Megatron-LM", "nanogpt_training": "nanoGPT", "torchtitan_training":
                     "torchtitan", "maxtext_training": "MaxText", "chinchilla_training": "Chinchilla"}


def utilisation_text(u: Utilisation) -> str:
    """The utilisation table: each convention's FLOPs per step and its share of the GPUs' peak."""
    rows = [(UTILISATION_NAMES[row.name], _amount(row.flops), percent(row.ratio)) for row in u.rows]
    title = (f"utilisation of a {ratio(u.step_time)} s step on {u.gpus} GPU(s) of {_amount(u.peak)} "
             f"FLOP/s (capacity {_amount(u.capacity)} FLOPs):")
    return "\n".join([title, text_table(("convention", "FLOPs per step", "utilisation"), rows, "lrr")])


def _amount(value) -> str:
    """A whole amount with thousands separators; a fractional one (a Fraction, or "p/q") to two decimals."""
    value = Fraction(value) if isinstance(value, str) else value
    value = sp.Rational(value.numerator, value.denominator) if isinstance(value, Fraction) else sp.Integer(value)
    return thousands(int(value)) if value.q == 1 else decimal(value)


def utilisation_json(u: Utilisation) -> dict:
    def number(value):  # JSON: a whole number, or "p/q"
        value = Fraction(value)
        return value.numerator if value.denominator == 1 else f"{value.numerator}/{value.denominator}"

    return {"step_time": number(u.step_time), "peak": number(u.peak), "gpus": u.gpus,
            "capacity": number(u.capacity),
            "conventions": [{"name": row.name, "flops": number(row.flops), "utilisation": number(row.ratio),
                             "percent": percent(row.ratio)} for row in u.rows]}


def _heads_line(f: Flops) -> str:
    premise = f" (taking {', '.join(f.premise)})" if f.premise else ""
    if f.heads_derivative == 0:
        return f"head count{premise}: ∂FLOPs/∂A = 0, the FLOPs do not depend on A"
    line = f"head count{premise}: ∂FLOPs/∂A = {sp.sstr(f.heads_derivative)}, the FLOPs depend on A"
    if f.held is not None:
        quantities, derivative = f.held
        verdict = "they do not" if derivative == 0 else f"∂FLOPs/∂A = {sp.sstr(derivative)}"
        line += f"; with {' and '.join(quantities)} held fixed, {verdict}"
    return line


def _fraction(value) -> str:
    if isinstance(value, str):  # "p/q" from the JSON-ready form
        p, q = value.split("/")
        return f"{thousands(int(p))}/{thousands(int(q))}"
    return thousands(value)


# -- explain -------------------------------------------------------------------------------------------------------

def ledger_report(ledger: Ledger) -> Report:
    precision = "exact" if ledger.digits is None else digits_text(ledger.digits)
    units = f", binary units of {ledger.unit}" if ledger.binary else ""
    counted = f" with the {ledger.head} head" if ledger.head else ""
    title = (f"{printable(ledger.model)}: claim {ledger.text} ({precision}{units}) against the exact count "
             f"{thousands(ledger.exact)}{counted}")
    rows = tuple((t.name, thousands(t.count), "yes" if t.included else "no") for t in ledger.terms)
    footer = (("counted", thousands(ledger.count), ""), ("claim", thousands(ledger.claim), ""),
              ("remainder", thousands(ledger.remainder), ""))
    notes = (ledger.reason, *((f"history: {ledger.history}",) if ledger.history else ()))
    return Report((title,), ("term", "count", "counted"), rows, footer, "lrl", notes)


# -- solve and sweep -------------------------------------------------------------------------------------------------

def solution_report(solution: Solution) -> Report:
    """A solution's notebook table (its text is :meth:`Solution.__str__`, the command line's)."""
    title, where = str(solution).splitlines()[:2]
    rows = tuple((v, n, d, mark.strip().removeprefix("<- ")) for v, n, d, mark in solution.rows())
    return Report((title, where.strip()), (solution.symbol, QUANTITIES[solution.of], "vs target", ""), rows, (),
                  "rrrl", ())


def sweep_report(s: Sweep) -> Report:
    """A sweep's first rows as a table, and how many more the grid holds."""
    rows = []
    for chunk in s.chunks():
        for row in chunk.rows():
            rows.append(tuple(ratio(v) for v in row[:len(s.keys)]) + tuple(thousands(n) for n in row[len(s.keys):]))
            if len(rows) == SWEEP_ROWS:
                break
        if len(rows) == SWEEP_ROWS:
            break
    more = s.points - len(rows)
    notes = (f"the first {SWEEP_ROWS} of {s.points:,} points; iterate the sweep for every row",) if more > 0 else ()
    title = f"{printable(s.model.name)}: {QUANTITIES[s.of]} over " + ", ".join(s.keys)
    return Report((title,), tuple(s.columns), tuple(rows), (), "r" * len(s.columns), notes)
