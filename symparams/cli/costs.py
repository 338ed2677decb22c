"""``flops``, ``memory`` and ``explain``: what a step costs, what it holds, and why a published count differs."""

from __future__ import annotations

import sympy as sp

from ..core.errors import printable
from ..core.formatting import percent, text_table, thousands, values_line
from .parser import print_json

#: the conventions every FLOPs output states (the counter they are checked against)
FLOPS_CONVENTIONS = (
    "a matrix product [m, k] @ [k, n] is 2·m·n·k FLOPs (a multiply and an add; --macs halves it), "
    "as PyTorch's FlopCounterMode counts it on the transformers model with eager attention",
    "bias adds, norms, softmax and activations are not counted (--elementwise: softmax 3 per score, a norm "
    "2 + its parameters per feature, an activation 1 per element); an embedding lookup costs nothing",
    "attention: Q·Kᵀ and the weighted sum over the full s × s square (--causal: the causal half s·(s+1)/2)",
    "mixture of experts: only the experts each token is routed to",
    "backward = 2 × forward (the gradients of both factors of every product); "
    "training = forward + backward (+ one more forward with --recompute)",
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
    "(+ one more forward with --recompute)",
)


def _header(m) -> str:
    return f"{printable(m.name)} ({m.family.title['en']}): {values_line(m.values, m.switches, m.head)}"


def _count(n: int, macs: bool) -> str:
    return thousands(n // 2) if macs else thousands(n)


def cmd_flops(args, m) -> None:
    f = m.flops(args.seq, args.batch, causal=args.causal, recompute=args.recompute, elementwise=args.elementwise)
    if args.json:
        data = f.to_dict()
        if args.macs:
            data.update({f"{k}_macs": data[k] // 2 for k in ("forward", "backward", "training")})
        print_json(data)
        return
    unit = "MACs" if args.macs else "FLOPs"
    rows = []
    for level, path, block, flops in f.by_component():
        label = "  " * (level - 1) + block.name + (f" × {m.evaluate(block.repeat)}" if block.repeat != 1 else "")
        rows.append((label, _count(flops, args.macs), percent(sp.Rational(flops, f.forward))))
    footer = [("forward", _count(f.forward, args.macs), "100.00%"),
              ("backward", _count(f.backward, args.macs), ""),
              ("training", _count(f.training, args.macs), "")]
    sequences = f"{f.batch} sequence{'s' if f.batch != 1 else ''} of {thousands(f.seq)} tokens"
    print(_header(m))
    print(f"{unit} of one forward pass over {sequences}:")
    print(text_table(("component", unit, "share"), rows + footer, "lrr", rule_before=len(rows),
                     min_widths=(0, 0, 8)))
    kinds = f.by_kind
    print(f"of the forward pass: weight matmuls {_count(kinds['matmul'], args.macs)}, "
          f"attention (Q·Kᵀ and weighted sum) {_count(kinds['attention'], args.macs)}"
          + (f", other products {_count(kinds['product'], args.macs)}" if kinds["product"] else "")
          + (f", element-wise {_count(kinds['elementwise'], args.macs)}" if "elementwise" in kinds else ""))
    print(f"per token: forward {_fraction(f.forward_per_token)}, training {_fraction(f.training_per_token)} FLOPs")
    for law in f.laws:
        print(f"{LAW_NAMES[law['name']]}: {_fraction(law['law_value'])} per token; exact − law = "
              f"{sp.sstr(law['difference'])} = {_fraction(law['difference_value'])}")
    print(f"forward FLOPs = {sp.sstr(f.formula)}")
    premise = f" (taking {', '.join(f.premise)})" if f.premise else ""
    if f.heads_derivative == 0:
        print(f"head count{premise}: ∂FLOPs/∂A = 0, the FLOPs do not depend on A")
    else:
        print(f"head count{premise}: ∂FLOPs/∂A = {sp.sstr(f.heads_derivative)}, the FLOPs depend on A", end="")
        if f.held is not None:
            quantities, derivative = f.held
            verdict = "they do not" if derivative == 0 else f"∂FLOPs/∂A = {sp.sstr(derivative)}"
            print(f"; with {' and '.join(quantities)} held fixed, {verdict}", end="")
        print()
    for line in TRACED_CONVENTIONS if f.traced else FLOPS_CONVENTIONS:
        print(f"convention: {line}")


#: how each law reads in the text output
LAW_NAMES = {
    "kaplan_forward": "Kaplan forward, 2N + 2·n_layer·s·d_attn (N: non-embedding parameters a token uses)",
    "kaplan_training": "Kaplan training, 6N",
    "palm_training": "PaLM training, 6N + 12·n_layer·s·d_attn",
}


def _fraction(value) -> str:
    if isinstance(value, str):  # "p/q" from the JSON-ready form
        p, q = value.split("/")
        return f"{thousands(int(p))}/{thousands(int(q))}"
    return thousands(value)


def cmd_memory(args, m) -> None:
    settings = dict(dtype=args.dtype, optimizer=args.optimizer, zero=args.zero, ranks=args.ranks,
                    tensor_parallel=args.tensor_parallel, sequence_parallel=args.sequence_parallel,
                    recompute=args.recompute)
    if args.fit is not None:
        _fit(args, m, settings)
        return
    mem = m.memory(seq=args.seq, batch=args.batch, **settings)
    data = mem.to_dict()
    if args.json:
        print_json(data)
        return
    print(_header(m))
    rows = [(part, thousands(data[key]), _gib(data[key]))
            for part, key in (("weights", "weights"), ("gradients", "gradients"), ("optimizer state", "optimizer"),
                              ("activations", "activations"), ("KV cache", "kv_cache"))]
    print(text_table(("part", "bytes", "GiB"), rows + [("total", thousands(data["total"]), _gib(data["total"]))],
                     "lrr", rule_before=len(rows)))
    per_token = data["kv_cache_per_token"]
    if per_token:
        print(f"KV cache: {thousands(per_token)} bytes per token of context"
              f"{_windows(data['kv_cache_windows'], per_token)}")
    if data.get("cross_kv_cache_per_token"):
        print(f"cross-attention cache: {thousands(data['cross_kv_cache_per_token'])} bytes per token of the input")
    if data.get("kv_cache_state"):
        print(f"cache state: {thousands(data['kv_cache_state'])} bytes per sequence, whatever its length")
    for line in data.get("conventions", ()):
        print(f"convention: {line}")


def _windows(windows, per_token: int) -> str:
    """What the sliding-window layers keep, for the KV cache's line."""
    if len(windows) == 1 and windows[0]["per_token"] == per_token:
        return f", every layer keeping only its last {thousands(windows[0]['tokens'])} tokens"
    return "".join(f"; {thousands(w['per_token'])} of them on layers that keep only their last "
                   f"{thousands(w['tokens'])} tokens" for w in windows)


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
    print(_header(m))
    if found is None:
        print(f"nothing fits {thousands(budget)} bytes: even {what} = 1 needs more")
        return
    name = "tokens per sequence" if what == "seq" else "sequences"
    print(f"fits {thousands(budget)} bytes: at most {thousands(found)} {name} "
          f"({thousands(fitted['total'])} bytes; one more needs more)")


def _gib(n: int) -> str:
    """Bytes in GiB to two decimals, rounded exactly."""
    from ..core.formatting import decimal

    return decimal(sp.Rational(n, 2**30))


def cmd_explain(args, m) -> None:
    ledger = m.explain(args.claim)
    if args.json:
        print_json(ledger.to_dict())
        return
    print(_header(m))
    print(str(ledger))
