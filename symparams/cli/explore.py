"""``symparams solve`` and ``symparams sweep``: their options and output (table, CSV, JSON, SVG plot)."""

from __future__ import annotations

import sys
from fractions import Fraction
from typing import Sequence

import sympy as sp

from ..analysis.solve import solve
from ..analysis.sweep import Axis, Sweep
from ..analysis.variables import QUANTITIES
from ..core.errors import SymparamsError
from ..core.formatting import json_number, ratio, table_row, thousands
from ..core.symbols import describe
from .output import check_target, replacing
from .parser import parse_sets, print_json

#: ``--plot`` draws at most this many points
MAX_PLOT = 100_000


#: how a plot names the pass's own sizes on its axis
PASS_SIZE_NAMES = {"s": "tokens per sequence", "b": "sequences"}


def solve_command(m, args) -> None:
    """``symparams solve MODEL --target N --for SYMBOL [--set ...] [--json]``."""
    if args.symbol in parse_sets(args.set):
        raise SymparamsError(f"{args.symbol} is what --for solves; do not also --set it")
    result = solve(m, args.target, args.symbol, of=args.of, seq=args.seq, batch=args.batch)
    if args.json:
        print_json(result.to_dict())
    else:
        print(result)



# -- the command ------------------------------------------------------------------

def _parse_grid(items: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, spec = item.partition("=")
        key = key.strip()
        if not sep or not key or not spec.strip():
            raise SymparamsError(f"--grid takes KEY=SPEC (start:stop:step or a,b,c), not {item!r}")
        if key in out:
            raise SymparamsError(f"--grid {key} is given twice")
        out[key] = spec
    return out


def sweep_command(m, args) -> None:
    """``symparams sweep MODEL --grid KEY=SPEC ... [--set ...] [--csv PATH | --json] [--plot PATH.svg]``."""
    grid = _parse_grid(args.grid)
    both = sorted(set(grid) & set(parse_sets(args.set)))
    if both:
        raise SymparamsError(f"{', '.join(both)} given both by --set and by --grid")
    if args.csv and args.json:
        raise SymparamsError("choose one of --csv and --json")
    if args.csv:
        check_target(args.csv)  # a path that cannot be written is answered before the sweep is worked out
    s = Sweep(m, grid, force=args.force, head_width=args.head_width, of=args.of, seq=args.seq, batch=args.batch)
    if args.plot and s.points > MAX_PLOT:  # before matplotlib is imported: a bad grid is answered at once
        raise SymparamsError(f"--plot draws at most {thousands(MAX_PLOT)} points; this grid has {thousands(s.points)}")
    plotter = _plotter(args.plot) if args.plot else None
    kept, skipped, plotted = 0, {}, []

    def consume(chunk):
        nonlocal kept
        kept += len(chunk)
        for k, v in chunk.skipped.items():
            skipped[k] = skipped.get(k, 0) + v
        if plotter is not None:
            plotted.extend(chunk.rows())

    draw = (lambda: plotter(s, plotted)) if plotter is not None else (lambda: None)
    if args.json:
        _write_json(s, consume)
        draw()
    elif args.csv:
        _write_csv(s, args.csv, consume, then=draw)
    else:
        _write_table(s, consume)
        draw()
    def why(label):
        if label in ("count", "active count"):
            return f"the {label} is not whole"
        if s.labels.get(label) == "condition":
            return f"{label} does not hold"
        return f"{label} is not a positive whole number"

    note = "; ".join(f"{v:,} point{'s' if v != 1 else ''} where {why(k)}" for k, v in skipped.items())
    if note and "H/A" in skipped and not args.head_width:
        note += " (with --head-width D, A follows H)"
    if args.csv:
        print(f"wrote {kept:,} rows to {args.csv}" + (f" (left out {note})" if note else ""))
    elif note and not args.json:
        print(f"{kept:,} of {s.points:,} points; left out {note}")
    if plotter is not None:
        print(f"drew {len(plotted):,} points into {args.plot}")


def _write_table(s: Sweep, consume) -> None:
    """The sweep as a console table, written chunk by chunk (column widths from the grid's ends and the bounds)."""
    widths = [max(len(k), _value_width(a)) for k, a in zip(s.keys, s.axes)]
    bounds = [s.bound, *([s.active_bound] if s.routed else [])]
    widths += [max(len(name), len(thousands(b))) for name, b in zip(s.columns[len(s.keys):], bounds)]
    align = "r" * len(widths)
    out = sys.stdout
    out.write(table_row(s.columns, widths, align) + "\n")
    grid = len(s.keys)
    for chunk in s.chunks():
        consume(chunk)
        lines = [table_row([*map(ratio, row[:grid]), *map(thousands, row[grid:])], widths, align)
                 for row in chunk.rows()]
        if lines:
            out.write("\n".join(lines) + "\n")


def _value_width(axis: Axis) -> int:
    """The widest value of an axis as text: a whole number's digits, or a ratio's ``n/d`` at its widest."""
    if axis.den == 1:
        return len(str(axis.max))
    return len(str(axis.max)) + 1 + len(str(axis.den))  # a reduced fraction is never wider


def _write_csv(s: Sweep, path: str, consume, then) -> None:
    """The sweep as CSV into ``path``; ``then`` runs before the file takes the old one's place, so a plot that
    fails leaves the old CSV as it was."""
    with replacing(path) as fh:
        fh.write(",".join(s.columns) + "\n")
        for chunk in s.chunks():
            consume(chunk)
            cols = chunk.text_columns()
            if cols[0]:
                fh.write("\n".join(map(",".join, zip(*cols))) + "\n")
        then()


def _write_json(s: Sweep, consume) -> None:
    import json

    m = s.model
    out = sys.stdout
    head = {
        "model": m.name, "family": m.family.name, "head": m.head,
        "values": {k: json_number(v) for k, v in s.fixed.items()}, "switches": dict(s.switches),
        **({"follows": {k.name: sp.sstr(v) for k, v in s.follows.items()}} if s.follows else {}),
        "grid": {a.key: [json_number(v) for v in a.values()] if a.items is not None else
                 {"start": json_number(a.value(0)), "stop": json_number(a.value(a.count - 1)),
                  "step": json_number(Fraction(a.step, a.den) if a.step % a.den else a.step // a.den),
                  "count": a.count} for a in s.axes},
        "points": s.points, "dtype": s.dtype, **({"head_width": s.head_width} if s.head_width else {}),
    }
    text = json.dumps(head, indent=2, ensure_ascii=False)
    out.write(text[:-2] + ',\n  "rows": [')
    first = True
    skipped: dict[str, int] = {}
    for chunk in s.chunks():
        consume(chunk)
        for k, v in chunk.skipped.items():
            skipped[k] = skipped.get(k, 0) + v
        parts = []
        for row in chunk.rows():
            item = {k: json_number(v) for k, v in zip(s.keys, row)}
            item.update(zip(s.columns[len(s.keys):], row[len(s.keys):]))  # parameters (and active)
            parts.append(json.dumps(item))
        if parts:
            out.write(("\n    " if first else ",\n    ") + ",\n    ".join(parts))
            first = False
    out.write(("\n  ]" if not first else "]") + ',\n  "skipped": ' + json.dumps(skipped) + "\n}\n")


def _plotter(path: str):
    """A function drawing the sweep into ``path`` (SVG); checks matplotlib first."""
    if not path.lower().endswith(".svg"):
        raise SymparamsError(f"--plot writes SVG: give a path ending in .svg, not {path!r}")
    check_target(path)  # before the CSV replaces an old file
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise SymparamsError("--plot needs matplotlib: pip install 'symparams[plot]'") from None

    def draw(s: Sweep, rows: list[tuple]) -> None:
        fig = Figure(figsize=(7, 4.5))
        ax = fig.add_subplot()
        series: dict[tuple, list] = {}
        grid = len(s.keys)
        for row in rows:  # the total against the first key (a routed model's active count is left out)
            series.setdefault(tuple(row[1:grid]), []).append((row[0], row[grid]))
        for label, points in series.items():
            points.sort()
            name = ", ".join(f"{k} = {ratio(v)}" for k, v in zip(s.keys[1:], label)) or s.model.name
            ax.plot(_floats(x for x, _ in points), _floats(n for _, n in points), marker=".", label=_plain(name))
        ax.set_xlabel(f"{s.keys[0]} ({PASS_SIZE_NAMES.get(s.keys[0]) or describe(s.keys[0])})")
        ax.set_ylabel(QUANTITIES[s.of])
        ax.set_title(_plain(f"{s.model.name}: {QUANTITIES[s.of]} against {s.keys[0]}"))
        ax.grid(True, alpha=0.3)
        if len(series) > 1 or len(s.keys) > 1:
            ax.legend()
        fig.tight_layout()
        with replacing(path, binary=True) as fh:
            fig.savefig(fh, format="svg", metadata={"Date": None})

    return draw


def _floats(values) -> list[float]:
    """The values as the plot's floats; one beyond a float's range is refused rather than drawn at infinity."""
    out = []
    for v in values:
        try:
            out.append(float(v))
        except OverflowError:
            raise SymparamsError(f"--plot cannot draw {thousands(v)[:40]}…: beyond a float's range "
                                 "(about 1.8e308); narrow the grid") from None
    return out


def _plain(text: str) -> str:
    """``text`` as matplotlib prints it literally: a ``$`` would start its mathtext, which a model's name or a
    config folder's must never do."""
    return text.replace("$", r"\$")
