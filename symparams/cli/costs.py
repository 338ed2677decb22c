"""``flops``, ``memory`` and ``explain``: what a step costs, what it holds, and why a published count differs."""

from __future__ import annotations

from ..core.formatting import thousands
from ..documents.results_view import heading, report
from .parser import asks_lora, print_json


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
    subject = m  # what holds the memory: the model, or a LoRA adapter on it (the fine-tuning's memory)
    if asks_lora(args):
        from .adapters import adapter_of

        subject = adapter_of(m, args)
    if args.fit is not None:
        _fit(args, m, settings, subject)
        return
    mem = subject.memory(seq=args.seq, batch=args.batch, **settings)
    if args.json:
        print_json(mem.to_dict())
        return
    print(report(mem).text())


def _fit(args, m, settings: dict, subject) -> None:
    """``--fit BYTES``: the longest sequence that fits (at --batch), or with --seq the largest batch; when nothing
    does, the bytes the smallest needs and the smallest change of each kind that would fit (``subject``: the
    model ``m``, or a LoRA adapter on it)."""
    from ..analysis.capacity import largest_batch, longest_context, parse_bytes, shortfall

    budget = parse_bytes(args.fit)
    what, given = ("seq", {"batch": args.batch}) if args.seq is None else ("batch", {"seq": args.seq})
    found = (longest_context if what == "seq" else largest_batch)(subject, budget, **given, **settings)
    fitted = None if found is None else subject.memory(**given, **{what: found}, **settings).to_dict()
    missing = None if found is not None else shortfall(subject, budget, what, **given, **settings)
    if args.json:
        print_json({"model": m.name, "budget": budget, "solved_for": what, "value": found, "memory": fitted,
                    **({"nothing_fits": missing.to_dict()} if missing else {})})
        return
    print(heading(m))
    name = "tokens per sequence" if what == "seq" else "sequences"
    if missing is None:
        print(f"fits {thousands(budget)} bytes: at most {thousands(found)} {name} "
              f"({thousands(fitted['total'])} bytes; one more needs more)")
        return
    print(f"nothing fits {thousands(budget)} bytes: even {what} = 1 needs {thousands(missing.needed)} bytes, "
          f"{thousands(missing.excess)} more")
    if not missing.remedies:
        print("no single change of ZeRO, ranks, tensor parallelism, type or recomputation makes it fit")
    for remedy in missing.remedies:
        options = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in remedy.change.items())
        holds = f"every {what} fits" if remedy.value is None else f"at most {thousands(remedy.value)} {name}"
        print(f"fits with {options}: {holds}")


def cmd_explain(args, m) -> None:
    ledger = m.explain(args.claim)
    if args.json:
        print_json(ledger.to_dict())
        return
    print(heading(m))
    print(str(ledger))
