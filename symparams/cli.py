"""The command line: a thin layer over :func:`symparams.model`.

Every problem with the input is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence

import sympy as sp

from .errors import SymparamsError
from .format import percent, ratio, thousands


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2 (argparse prints usage too)
        raise SymparamsError(message)


def _parse_sets(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SymparamsError(f"--set takes KEY=VALUE, not {item!r}")
        out[key] = value.strip()
    return out


def load(args) -> Any:
    """The model named on the command line, with --set and --head applied."""
    from .model import model

    name = getattr(args, "model", None)
    if not name:
        raise SymparamsError("name a model (a preset or a family; see `symparams list`)")
    return model(name, head=getattr(args, "head", None), **_parse_sets(getattr(args, "set", ())))


def _print_json(data) -> None:
    import json  # only when asked for: keeps the plain command fast

    print(json.dumps(data, indent=2, ensure_ascii=False))


def _values_line(m) -> str:
    parts = [f"{s.name}={ratio(v)}" for s, v in m.values.items()]
    parts += [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in m.switches.items()]
    if m.head:
        parts.append(f"head={m.head}")
    return " ".join(parts)


def cmd_list(args) -> None:
    from .architectures import FAMILIES
    from .presets import PRESETS

    print("presets:")
    width = max(map(len, PRESETS))
    for p in PRESETS.values():
        print(f"  {p.name:<{width}}  {p.family:<12} {p.en}")
    print("families:")
    for f in FAMILIES.values():
        heads = f"  heads: {', '.join(f.heads)}" if f.heads else ""
        switches = ", ".join(s.name for s in f.switches) or "none"
        print(f"  {f.name:<{width}}  switches: {switches}{heads}")


def cmd_count(args) -> None:
    m = load(args)
    if args.json:
        _print_json(m.to_dict())
        return
    total = m.count  # raises (one line) when a value is missing
    rows = []
    for level, path, block, value, share in m.rows(depth=2):
        label = "  " * (level - 1) + block.name + (f" × {m.evaluate(block.repeat)}" if block.repeat != 1 else "")
        if block.tied_to:
            label += f" (tied to {block.tied_to})"
        elif not block.trainable:
            label += " (frozen)"
        rows.append((label, thousands(value), percent(share)))
    rows.append(("total", thousands(total), "100.00%"))
    rows.append(("trainable", thousands(m.trainable), percent(sp.Rational(m.trainable, total))))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print(f"{m.name} ({m.family.title['en']}): {_values_line(m)}")
    print(f"{'component':<{w0}}  {'parameters':>{w1}}  {'share':>8}")
    for label, value, share in rows:
        if label == "total":
            print("-" * (w0 + w1 + 12))
        print(f"{label:<{w0}}  {value:>{w1}}  {share:>8}")


def cmd_formula(args) -> None:
    from .model import Model

    m = load(args)
    # Preset values are not substituted (they would collapse the formula to a
    # number); values given with --set are.
    given = _parse_sets(args.set)
    fm = Model(m.family, {k: v for k, v in given.items()}, m.switches, m.head, m.name)
    expr = fm.total
    print(sp.latex(expr) if args.latex else sp.sstr(expr))


def cmd_prove(args) -> None:
    m = load(args)
    proof = m.prove()
    if args.json:
        _print_json(proof.to_dict())
        return
    verdict = "does not depend" if proof.invariant else "depends"
    print(f"{m.name}: the parameter count {verdict} on the number of heads A.")
    for step in proof.steps:
        if step.key == "per_head":
            print(f"  per head: {sp.sstr(step.lhs)} = {sp.sstr(step.rhs)}   [{', '.join(step.paths)}]")
        elif step.key == "simplified":
            print(f"  simplified total: N = {sp.sstr(step.rhs)}")
        elif step.key == "derivative":
            print(f"  dN/dA = {sp.sstr(step.rhs)}")
        elif step.key == "dependence":
            print(f"  terms holding A: {sp.sstr(step.rhs)}")
    for c in proof.conditions:
        print(f"  side condition: {c.en}")
    if proof.witness:
        counts = sorted(set(proof.witness.values()))
        heads = ", ".join(map(str, proof.witness))
        if len(counts) == 1:
            print(f"  witness: A in {{{heads}}} all give {thousands(counts[0])}")
        else:
            (a1, n1), (a2, n2) = proof.counterexample
            print(f"  counterexample: A={a1} gives {thousands(n1)}, A={a2} gives {thousands(n2)}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="symparams", description="Exact, symbolic parameter counts for Transformer models.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    def model_command(name, func, help_, json_=True):
        p = sub.add_parser(name, help=help_)
        p.add_argument("model", nargs="?", help="a preset (bert-base, ...) or a family (bert, transformer)")
        p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="a value (V P S H L A r C ...) or a switch (pooler, positions, tie, bias, layernorm)")
        p.add_argument("--head", help="a task head, e.g. masked-lm")
        if json_:
            p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(func=func)
        return p

    sub.add_parser("list", help="presets and families").set_defaults(func=cmd_list)
    model_command("count", cmd_count, "count parameters, with a breakdown")
    model_command("formula", cmd_formula, "the simplified closed form", json_=False).add_argument(
        "--latex", action="store_true", help="print LaTeX")
    model_command("prove", cmd_prove, "prove whether the count depends on the head count A")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        args.func(args)
    except SymparamsError as exc:
        print(f"symparams: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
