"""What each subcommand does: load the model named on the command line, and print what was asked."""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence

import sympy as sp

from ..core.errors import SymparamsError, printable
from ..core.formatting import percent, text_table, thousands, values_line
from ..core.symbols import SYMBOLS, legend
from .output import check_target, write_text
from .parser import asks_lora, parse_sets, print_json


def load(args, free: Sequence[str] = (), build: bool = False) -> Any:
    """The model named on the command line (or read with --config), with --set and --head applied.

    Symbols in ``free`` keep no value (a preset's is dropped): ``solve`` finds them.  With ``build``, a config
    the inferred formulas do not cover is counted by one meta-device build (torch installed).
    """
    from ..families.lookup import model

    name = getattr(args, "model", None)
    config = getattr(args, "config", None)
    sets = parse_sets(getattr(args, "set", ()))
    sets.update({key: None for key in free if key in SYMBOLS})
    head = getattr(args, "head", None)
    if name and config:
        raise SymparamsError("give a model name or --config PATH, not both")
    if config is not None and not config.strip():
        raise SymparamsError("--config takes the path of a config.json or of the folder holding one")
    if config:
        return _from_config(config, head, sets, build)
    if not name:
        raise SymparamsError("name a model (a preset or a family; see `symparams list`) or give --config PATH")
    return model(name, head=head, **sets)


def _from_config(path: str, head, sets: dict, build: bool):
    """The model of a config.json; with ``build``, one the inferred formulas do not cover is counted by one
    meta-device build when torch and transformers are installed (and no --set asks for a formula)."""
    from ..families.lookup import from_config

    try:
        return from_config(path, head=head, overrides=sets)
    except SymparamsError as exc:
        from ..families.inferred import OutsideConditions  # imported only when a config was refused

        if not isinstance(exc, OutsideConditions) or sets or not build:
            raise
        from ..analysis.inference.confirm import built_model, can_build
        from ..families.config import read

        if not can_build():
            raise
        file = os.path.join(path, "config.json") if os.path.isdir(path) else path
        return built_model(read(file), head, file, str(exc))


def cmd_list(args) -> None:
    from ..families.inferred_status import statuses
    from ..families.presets import all_presets
    from ..families.registry import all_families

    presets, families = all_presets(), all_families()
    if args.json:
        print_json({"presets": [{"name": p.name, "family": p.family, "description": p.en} for p in presets.values()],
                    "families": [{"name": f.name, "switches": [s.name for s in f.switches], "heads": list(f.heads)}
                                 for f in families.values()],
                    "inferred": [s.to_dict() for s in statuses()]})
        return
    if args.inferred:
        _list_inferred(statuses())
        return
    print("presets:")
    width = max(map(len, presets))
    for p in presets.values():
        print(f"  {p.name:<{width}}  {p.family:<12} {p.en}")
    print("families:")
    for f in families.values():
        heads = f"  heads: {', '.join(f.heads)}" if f.heads else ""
        switches = ", ".join(s.name for s in f.switches) or "none"
        print(f"  {f.name:<{width}}  switches: {switches}{heads}")
    print("inferred: the model types counted by formulas inferred from transformers' builds: "
          "`symparams list --inferred`")


def _list_inferred(found) -> None:
    from ..families.inferred_data import version

    print(f"model types counted by formulas inferred from transformers {version()} meta-device builds "
          f"({len(found)}: {sum(s.exact for s in found)} exact, {sum(s.free for s in found)} with every size free, "
          f"{sum(s.costs for s in found)} with FLOPs and memory):")
    width = max(len(s.model_type) for s in found)
    for s in found:
        costs = "; FLOPs and memory" if s.costs else ""
        print(f"  {s.model_type:<{width}}  {', '.join(s.classes)}: {s.verdict}{costs}")


def cmd_count(args) -> None:
    m = load(args, build=True)
    if asks_lora(args):
        from .adapters import count_lora

        return count_lora(m, args, component_rows)
    if args.json:
        print_json(m.to_dict(depth=args.depth))
        return
    total = m.count  # raises (one line) when a value is missing
    rows = component_rows(m, args.depth)
    footer = [("total", thousands(total), "100.00%"),
              ("trainable", thousands(m.trainable), percent(m.trainable_share))]
    if m.routed:  # a mixture of experts: what one token uses, the experts it is not routed to left out
        footer.append(("active", thousands(m.active), percent(m.active_share)))
    print(f"{printable(m.name)} ({m.family.title['en']}): {values_line(m.values, m.switches, m.head)}")
    print(text_table(("component", "parameters", "share"), rows + footer, "lrr", rule_before=len(rows),
                     min_widths=(0, 0, 8)))
    for line in counted_lines(m):
        print(line)
    for note in m.notes:
        print(f"note: {printable(note)}")


def component_rows(m, depth: int | None, total: int | None = None) -> list[tuple[str, str, str]]:
    """The table's rows of components down to ``depth`` (default 2): name, count, share of ``total`` (default
    the model's count)."""
    rows = []
    for level, path, block, value, share in m.rows(depth=2 if depth is None else depth):
        label = "  " * (level - 1) + block.name + (f" × {m.evaluate(block.repeat)}" if block.repeat != 1 else "")
        if block.used is not None:
            label += f" ({m.evaluate(block.used)} per token)"
        if block.tied_to:
            label += f" (tied to {block.tied_to})"
        elif not block.trainable:
            label += " (frozen)"
        rows.append((label, thousands(value), percent(share if total is None else sp.Rational(value, total))))
    return rows


def counted_lines(m) -> list[str]:
    """What was counted: the base model or a head; beside the base model, the head the config's architectures
    names (the released checkpoint's class), else the LM head, with its count."""
    saved = m.saved_as if m.saved_as is not None and m.saved_as.known else None
    named = f", the class the config names ({printable(saved.name)})" if saved else ""
    unknown = [] if m.saved_as is None or saved else [
        f"note: the config's architectures names {printable(m.saved_as.name)}, a class not counted here"]
    if m.head is not None:
        return [f"counted: the base model with the {m.head} head{named if saved and saved.head == m.head else ''}",
                *unknown]
    base = f"the base model{named}" if saved and saved.head is None else "the base model, no task head"
    head = saved.head if saved and saved.head else m.lm_head
    if head is None:
        return [f"counted: {base}", *unknown] if saved else unknown
    other = m.saved_model() if saved and saved.head else m.with_head(head)
    adds = " (the head adds no parameters)" if other.count == m.count else ""
    active = f", {thousands(other.active)} active" if m.routed else ""
    as_saved = f"as saved ({printable(saved.name)}), " if saved and saved.head else ""
    return [f"counted: {base}; {as_saved}with the {head} head (--head {head}): {thousands(other.count)}{active}"
            f"{adds}", *unknown]


def cmd_formula(args) -> None:
    from ..core.model import Model

    m = load(args)
    if asks_lora(args):
        from .adapters import formula_lora

        return formula_lora(m, args)
    # Preset and config values are not substituted (they would collapse the
    # formula to a number); values given with --set are.
    given = {k: v for k, v in parse_sets(args.set).items() if k in {s.name for s in m.symbols}}
    expr = Model(m.family, given, m.switches, m.head, m.name).total
    if args.latex:
        print(sp.latex(expr))
        return
    print(sp.sstr(expr))
    if expr.free_symbols:
        print(legend(expr.free_symbols))


def cmd_prove(args) -> None:
    from ..documents.proof_text import proof_lines

    proof = load(args).prove()
    if args.json:
        print_json(proof.to_dict())
        return
    print("\n".join(proof_lines(proof)))


def cmd_derive(args) -> None:
    from ..documents.render import render

    m = load(args)
    if args.output and args.output != "-":
        check_target(args.output)  # a path that cannot be written is answered before the document is rendered
    text = render(m, format=document_format(args.format, args.output), lang=args.lang, title=args.title,
                  template=args.template)
    _write(text, args.output)


def document_format(given: str | None, output: str | None) -> str:
    """The format asked for; else the one the output file's name ends with; else Markdown.

    >>> document_format(None, "bert.zh.tex"), document_format(None, None), document_format("html", "x.md")
    ('tex', 'md', 'html')
    """
    if given:
        return given
    ending = os.path.splitext(output or "")[1].lower().lstrip(".")
    return ending if ending in ("md", "tex", "html") else "md"


def _write(text: str, output: str | None) -> None:
    if not output or output == "-":
        sys.stdout.write(text)
    else:
        write_text(output, text)


def cmd_solve(args) -> None:
    from .explore import solve_command

    solve_command(load(args, free=(args.symbol,)), args)


def cmd_sweep(args) -> None:
    from .explore import sweep_command

    sweep_command(load(args, free=[item.partition("=")[0].strip() for item in args.grid]), args)


def cmd_shell(args) -> None:
    model = load(args) if (args.model or args.config is not None) else None  # a bad name answered before the shell loads
    from .shell import shell_command

    shell_command(model, args)


def cmd_flops(args) -> None:
    from .costs import cmd_flops

    cmd_flops(args, load(args))


def cmd_memory(args) -> None:
    from .costs import cmd_memory

    cmd_memory(args, load(args))


def cmd_explain(args) -> None:
    from .costs import cmd_explain

    cmd_explain(args, load(args))


def cmd_infer(args) -> None:
    from .infer import cmd_infer as run

    run(args)


def cmd_audit(args) -> int:
    from .audit import cmd_audit as run

    return run(args, load)


HANDLERS = {"list": cmd_list, "count": cmd_count, "formula": cmd_formula, "prove": cmd_prove,
            "flops": cmd_flops, "memory": cmd_memory, "explain": cmd_explain,
            "derive": cmd_derive, "solve": cmd_solve, "sweep": cmd_sweep, "infer": cmd_infer,
            "audit": cmd_audit, "shell": cmd_shell}
