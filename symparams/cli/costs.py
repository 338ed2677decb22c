"""``flops``, ``memory`` and ``explain``: what a step costs, what it holds, and why a published count differs."""

from __future__ import annotations

from ..core.errors import SymparamsError
from ..core.formatting import thousands
from ..documents.results_view import heading, report, utilisation_json, utilisation_text
from .parser import asks_lora, print_json


#: the layout's options, as :class:`~symparams.analysis.memory.Memory` names them (--pad-vocab aside)
LAYOUT = ("context_parallel", "pipeline_parallel", "virtual_stages", "micro_batches", "expert_parallel",
          "distributed_optimizer", "fsdp", "shard_group")


def _layout(args) -> dict:
    """The layout options given on the command line, as keywords of ``memory`` and ``flops``."""
    layout = {key: getattr(args, key) for key in LAYOUT if getattr(args, key, None) not in (None, False)}
    if args.pad_vocab:
        layout["pad_vocabulary"] = True
    return layout


def cmd_flops(args, m) -> None:
    layout = _layout(args)
    layout.update({k: v for k, v in (("tensor_parallel", args.tensor_parallel),
                                     ("sequence_parallel", args.sequence_parallel)) if v})
    f = m.flops(args.seq, args.batch, causal=args.causal, recompute=args.recompute, elementwise=args.elementwise,
                **layout)
    used = _utilisation(args, f)
    if args.json:
        data = f.to_dict()
        if args.macs:
            data.update({f"{k}_macs": data[k] // 2 for k in ("forward", "backward", "training")})
        if used is not None:
            data["utilisation"] = utilisation_json(used)
        print_json(data)
        return
    print(report(f, macs=args.macs).text())
    if used is not None:
        print(utilisation_text(used))


def _utilisation(args, f):
    """``--step-time`` and ``--peak`` (both, or neither): the step's utilisation under each convention."""
    if (args.step_time is None) != (args.peak is None):
        raise SymparamsError("--step-time and --peak go together: the step's seconds and one GPU's peak FLOP/s")
    return None if args.step_time is None else f.utilisation(args.step_time, args.peak, args.gpus)


def cmd_memory(args, m) -> None:
    settings = dict(dtype=args.dtype, optimizer=args.optimizer, zero=args.zero, ranks=args.ranks,
                    tensor_parallel=args.tensor_parallel, sequence_parallel=args.sequence_parallel,
                    recompute=args.recompute, **_quantized(args))
    layout = _layout(args)
    if args.fit is not None and layout:
        raise SymparamsError("--fit answers for one rank's plain memory: leave out the pipeline, context and expert "
                             "parallelism, the distributed optimizer, FSDP and --pad-vocab")
    settings.update(layout)
    subject = m  # what holds the memory: the model, or a LoRA adapter on it (the fine-tuning's memory)
    if asks_lora(args):
        from .adapters import adapter_of

        subject = adapter_of(m, args)
    if args.fit is not None:
        _fit(args, m, settings, subject)
        return
    mem = subject.memory(seq=args.seq, batch=args.batch, **settings)
    if args.json:
        from ..analysis.ranks import per_rank

        busiest = per_rank(mem)
        print_json({**mem.to_dict(), **({"per_rank": busiest.to_dict()} if busiest is not None else {})})
        return
    print(report(mem).text())


def _quantized(args) -> dict:
    """--group-size, --keep, --no-double-quant and --prepare-kbit, where given (a plain dtype refuses them);
    --kv-dtype and --block-size, the cache's."""
    given = (("group_size", args.group_size), ("keep", args.keep),
             ("double_quant", False if args.no_double_quant else None),
             ("prepare_kbit", True if args.prepare_kbit else None), ("kv_dtype", args.kv_dtype),
             ("block_size", args.block_size))
    return {k: v for k, v in given if v is not None}


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
