"""``flops``, ``memory`` and ``explain``: what a step costs, what it holds, and why a published count differs."""

from __future__ import annotations

from ..core.formatting import thousands
from ..documents.results_view import heading, report
from .parser import print_json


def cmd_flops(args, m) -> None:
    f = m.flops(args.seq, args.batch, causal=args.causal, recompute=args.recompute, elementwise=args.elementwise)
    if args.json:
        data = f.to_dict()
        if args.macs:
            data.update({f"{k}_macs": data[k] // 2 for k in ("forward", "backward", "training")})
        print_json(data)
        return
    print(report(f, macs=args.macs).text())


def cmd_memory(args, m) -> None:
    settings = dict(dtype=args.dtype, optimizer=args.optimizer, zero=args.zero, ranks=args.ranks,
                    tensor_parallel=args.tensor_parallel, sequence_parallel=args.sequence_parallel,
                    recompute=args.recompute)
    if args.fit is not None:
        _fit(args, m, settings)
        return
    mem = m.memory(seq=args.seq, batch=args.batch, **settings)
    if args.json:
        print_json(mem.to_dict())
        return
    print(report(mem).text())


def _fit(args, m, settings: dict) -> None:
    """``--fit BYTES``: the longest sequence that fits (at --batch), or with --seq the largest batch."""
    from ..analysis.capacity import largest_batch, longest_context, parse_bytes

    budget = parse_bytes(args.fit)
    if args.seq is None:
        what, found = "seq", longest_context(m, budget, batch=args.batch, **settings)
    else:
        what, found = "batch", largest_batch(m, budget, seq=args.seq, **settings)
    fitted = None if found is None else m.memory(**{"seq": args.seq, "batch": args.batch, **{what: found}},
                                                 **settings).to_dict()
    if args.json:
        print_json({"model": m.name, "budget": budget, "solved_for": what, "value": found,
                    "memory": fitted})
        return
    print(heading(m))
    if found is None:
        print(f"nothing fits {thousands(budget)} bytes: even {what} = 1 needs more")
        return
    name = "tokens per sequence" if what == "seq" else "sequences"
    print(f"fits {thousands(budget)} bytes: at most {thousands(found)} {name} "
          f"({thousands(fitted['total'])} bytes; one more needs more)")


def cmd_explain(args, m) -> None:
    ledger = m.explain(args.claim)
    if args.json:
        print_json(ledger.to_dict())
        return
    print(heading(m))
    print(str(ledger))
