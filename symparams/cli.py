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


def load(args, free: Sequence[str] = ()) -> Any:
    """The model named on the command line (or read with --config), with --set and --head applied.

    Symbols in ``free`` keep no value (a preset's is dropped): ``solve`` finds them.
    """
    from .model import model
    from .symbols import SYMBOLS

    name = getattr(args, "model", None)
    config = getattr(args, "config", None)
    sets = _parse_sets(getattr(args, "set", ()))
    sets.update({key: None for key in free if key in SYMBOLS})
    head = getattr(args, "head", None)
    if name and config:
        raise SymparamsError("give a model name or --config PATH, not both")
    if config:
        from .config import load as load_config

        return load_config(config, head=head, overrides=sets)
    if not name:
        raise SymparamsError("name a model (a preset or a family; see `symparams list`) or give --config PATH")
    return model(name, head=head, **sets)


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
    # Preset and config values are not substituted (they would collapse the
    # formula to a number); values given with --set are.
    given = {k: v for k, v in _parse_sets(args.set).items() if k in {s.name for s in m.symbols}}
    fm = Model(m.family, given, m.switches, m.head, m.name)
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
        elif step.key == "fixed_ratio":
            fr = proof.fixed_ratio
            print(f"  holding {fr.symbol}/A = {fr.ratio} fixed ({fr.symbol} = {sp.sstr(fr.substitution)}): "
                  f"N = {sp.sstr(fr.closed_form)}, dN/dA = {sp.sstr(fr.derivative)}: "
                  + ("invariant again" if fr.invariant else "still depends on A")
                  + ("" if fr.value is None else f" (here {fr.ratio} = {fr.value})"))
    for c in proof.conditions:
        print(f"  side condition: {c.en}")
    if proof.counterexample and not proof.witness:  # values picked by the prover: say which
        (a1, n1), (a2, n2) = proof.counterexample
        at = " ".join(f"{s.name}={ratio(v)}" for s, v in proof.counterexample_values.items())
        source = proof.counterexample_source
        where = f"values of {source}" if source.startswith("preset") else "small sizes picked by the prover"
        print(f"  counterexample ({where}: {at}): A={a1} gives {thousands(n1)}, A={a2} gives {thousands(n2)}")
    if proof.witness:
        counts = sorted(set(proof.witness.values()))
        heads = ", ".join(map(str, proof.witness))
        if len(counts) == 1:
            print(f"  witness: A in {{{heads}}} all give {thousands(counts[0])}")
        else:
            (a1, n1), (a2, n2) = proof.counterexample
            print(f"  counterexample: A={a1} gives {thousands(n1)}, A={a2} gives {thousands(n2)}")


def cmd_derive(args) -> None:
    from .render import render

    m = load(args)
    text = render(m, format=args.format, lang=args.lang, title=args.title, template=args.template)
    _write(text, args.output)


def _write(text: str, output: str | None) -> None:
    if not output or output == "-":
        sys.stdout.write(text)
        return
    try:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise SymparamsError(f"cannot write {output}: {exc.strerror}") from None


def cmd_solve(args) -> None:
    from .explore import cmd_solve as run

    run(load(args, free=(args.symbol,)), args)


def cmd_sweep(args) -> None:
    from .explore import cmd_sweep as run

    run(load(args, free=[item.partition("=")[0].strip() for item in args.grid]), args)


def cmd_shell(args) -> None:
    from .shell import cmd_shell as run

    run(load(args) if (args.model or args.config) else None, args)


def _add_document_commands(sub, model_command) -> None:
    """Issue 3 (documents) and the HTML page of issue 5."""
    p = model_command("derive", cmd_derive, "render a derivation document", json_=False)
    p.add_argument("--format", required=True, choices=("md", "tex", "html"), help="Markdown, LaTeX or HTML")
    p.add_argument("--lang", default="en", choices=("en", "zh"), help="English or Chinese")
    p.add_argument("--title", help="the document's title")
    p.add_argument("-o", "--output", help="write to this file (default: standard output)")
    p.add_argument("--template", help="render your own Jinja template (sandboxed)")


def _add_explore_commands(sub, model_command) -> None:
    """Issue 5: solve, sweep, shell."""
    p = model_command("solve", cmd_solve, "the integer value of a symbol whose count is nearest a target")
    p.add_argument("--target", required=True, help="the parameter count to aim at")
    p.add_argument("--for", dest="symbol", required=True, help="the symbol to solve for (e.g. H)")
    p = model_command("sweep", cmd_sweep, "evaluate the count over a grid of values")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=SPEC",
                   help="start:stop:step or a,b,c (repeatable)")
    p.add_argument("--csv", help="write CSV to this file")
    p.add_argument("--plot", help="draw count against the first grid key into an SVG file")
    p.add_argument("--force", action="store_true", help="allow grids over 10^9 points")
    p = model_command("shell", cmd_shell, "an interactive Python prompt with the model loaded", json_=False)
    p.add_argument("--plain", action="store_true", help="the standard Python console even if IPython is installed")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="symparams", description="Exact, symbolic parameter counts for Transformer models.")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    def model_command(name, func, help_, json_=True):
        p = sub.add_parser(name, help=help_)
        p.add_argument("model", nargs="?", help="a preset (bert-base, ...) or a family (bert, transformer)")
        p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="a value (V P S H L A r C ...) or a switch (pooler, positions, tie, bias, layernorm)")
        p.add_argument("--head", help="a task head, e.g. masked-lm")
        p.add_argument("--config", metavar="PATH", help="read a HuggingFace config.json instead of naming a model")
        if json_:
            p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(func=func)
        return p

    sub.add_parser("list", help="presets and families").set_defaults(func=cmd_list)
    model_command("count", cmd_count, "count parameters, with a breakdown")
    model_command("formula", cmd_formula, "the simplified closed form", json_=False).add_argument(
        "--latex", action="store_true", help="print LaTeX")
    model_command("prove", cmd_prove, "prove whether the count depends on the head count A")
    _add_document_commands(sub, model_command)
    _add_explore_commands(sub, model_command)
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
