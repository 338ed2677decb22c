"""``count``, ``formula`` and ``memory`` with a LoRA adapter (``--lora R --lora-targets NAMES [--dora]
[--lora-bias MODE]``)."""

from __future__ import annotations

import sympy as sp

from ..analysis.adapters import shaped
from ..core.errors import SymparamsError, printable
from ..core.formatting import percent, text_table, thousands, values_line
from ..core.symbols import legend
from .parser import print_json


def adapter_of(m, args):
    """The adapter the options ask for; one line for options given without ``--lora`` or its targets."""
    if args.lora is None:
        given = next(f"--{key.replace('_', '-')}" for key in ("lora_targets", "dora", "lora_bias")
                     if getattr(args, key) not in (None, False))
        raise SymparamsError(f"{given} needs --lora R, the adapter's rank")
    if args.lora_targets is None:
        raise SymparamsError("--lora needs --lora-targets: module names (q_proj,v_proj) or all-linear")
    return m.lora(args.lora, args.lora_targets, dora=args.dora, bias=args.lora_bias or "none")


def count_lora(m, args, component_rows) -> None:
    """The base model's components (``component_rows(m, depth, total)``: the table's rows, as ``count`` shows
    them), the adapter beside them, the total and the trainable count as PEFT's ``get_nb_trainable_parameters()``
    gives them; with ``--json``, the model's dict with those two figures and the adapter under ``"lora"``."""
    adapter = adapter_of(m, args)
    if args.json:
        out = m.to_dict(depth=args.depth)
        out.update(total=adapter.total, trainable=adapter.trainable, active=adapter.active, lora=adapter.to_dict())
        print_json(out)
        return
    total = adapter.total
    rows = component_rows(m, args.depth, total)
    rows.append(("lora adapter", thousands(adapter.adapter), percent(sp.Rational(adapter.adapter, total))))
    footer = [("total", thousands(total), "100.00%"),
              ("trainable", thousands(adapter.trainable), percent(sp.Rational(adapter.trainable, total)))]
    if m.routed:  # what one token uses: the adapters of the modules it passes through among them
        footer.append(("active", thousands(adapter.active), percent(sp.Rational(adapter.active, total))))
    print(f"{printable(m.name)} ({m.family.title['en']}): {values_line(m.values, m.switches, m.head)}")
    print(text_table(("component", "parameters", "share"), rows + footer, "lrr", rule_before=len(rows),
                     min_widths=(0, 0, 8)))
    for line in adapter.lines():
        print(printable(line))


def formula_lora(m, args) -> None:
    """The adapter's parameters as a formula in the model's symbols and the rank R (values given with --set
    substituted, as ``formula`` does), then what each symbol stands for."""
    from .parser import parse_sets

    adapter = adapter_of(m, args)

    given = {s: sp.sympify(m.values[s]) for s in m.values if s.name in parse_sets(args.set)}
    expr = shaped(adapter.formula.xreplace(given))
    if args.latex:
        print(sp.latex(expr))
        return
    print(sp.sstr(expr))
    print(legend(expr.free_symbols))

