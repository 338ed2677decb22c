"""``symparams infer MODEL_TYPE``: the closed form inferred from meta-device builds of transformers' model.

The engine (and torch and transformers) is imported only when the command
runs; without them the command is one line naming the ``[infer]`` extra.
"""

from __future__ import annotations

import argparse
import os

from ..core.errors import SymparamsError

CLASSES = ("base", "causal-lm", "masked-lm", "seq2seq-lm", "sequence-classification", "token-classification",
           "question-answering", "multiple-choice", "next-sentence", "pretraining")
#: at most this many verification configurations (each one is a real build)
MAX_VERIFY = 1000


def options(p) -> None:
    p.add_argument("model_type", metavar="MODEL_TYPE", help="a transformers model_type: bert, llama, t5, ...")
    p.add_argument("--class", dest="cls", default="base", metavar="CLASS",
                   help=f"the model class: {', '.join(CLASSES)} (default base: what AutoModel builds)")
    p.add_argument("--verify", type=_verify_count, default=20, metavar="N",
                   help="fresh random configurations to check the formula on with real builds (default 20)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _verify_count(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_VERIFY or len(text) > 4:
        raise argparse.ArgumentTypeError(f"takes a whole number from 1 to {MAX_VERIFY}, not {text!r}")
    return int(text)


def cmd_infer(args) -> None:
    if args.cls not in CLASSES:
        raise SymparamsError(f"unknown class {args.cls!r} (known: {', '.join(CLASSES)})")
    if not args.model_type.replace("-", "_").replace("_", "a").isalnum() or not args.model_type.isascii():
        raise SymparamsError(f"unknown model_type {args.model_type!r}: a model_type is a word such as llama")
    # one torch thread: the traced models are tiny, and threads that wait on each other only slow them down
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from ..analysis.inference import infer

    result = infer(args.model_type, args.cls, verify_configurations=args.verify)
    if args.json:
        import json

        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(report(result))


def report(result) -> str:
    """The result as text: verdict, closed form, mapping, conditions, verification."""
    lines = [f"{result.model_type} ({result.cls}: {result.model_class}), transformers {result.transformers_version}"]
    return "\n".join(lines + _body(result) + _branches(result) + [
        f"cost: {result.builds} builds ({result.failed_builds} failed), {result.seconds:.1f} s"])


def _body(result) -> list[str]:
    """Verdict, closed form, symbols, conditions and verification of one formula."""
    lines = []
    if result.total is None:
        lines.append(f"not inferred: {result.reason}")
    else:
        verdict = "exact" if result.exact else f"not verified: {result.reason}"
        lines += [f"verdict: {verdict}", "", f"parameters = {result.total}", ""]
    if result.symbols or result.flags:
        lines.append("symbols:")
        lines += [f"  {sym} = {name}" for name, sym in result.symbols.items()]
        lines += [f"  {sym} = {name} (0 or 1)" for name, sym in result.flags.items()]
    lines += _conditions(result.conditions, result.symbols)
    v = result.verification
    if v is not None:
        default = "the default config" + "".join(f" with {k} = {m}" for k, m in result.conditions.minimum.items())
        lines += ["", f"verification: {v.exact} of {v.configurations} fresh random configurations exact against "
                      f"meta-device builds (seed {v.seed}); {default}: formula {v.default_formula}, "
                      f"real {v.default_real}"]
    return lines


def _branches(result) -> list[str]:
    """Each branch (a held field's larger values), indented under the condition it holds in."""
    lines = []
    for branch in result.branches:
        where = ", ".join(f"{k} ≥ {v}" for k, v in branch.conditions.minimum.items())
        lines += ["", f"where {where}, a formula of its own:", *("  " + line for line in _body(branch)), ""]
    return lines


def _named(field: str, symbols: dict) -> str:
    return f"{symbols[field]} ({field})" if field in symbols and str(symbols[field]) != field else field


def _conditions(c, symbols: dict) -> list[str]:
    out = ["conditions (every other field at its default):"]
    out += [f"  {_named(r.left, symbols)} {str(r)[len(r.left) + 1:-len(r.right) - 1]} {_named(r.right, symbols)}"
            for r in c.relations]
    out += [f"  {k} = {v!r} ({'the only value transformers accepts' if k in c.sole else 'held'})"
            for k, v in c.fixed.items()]
    out += [f"  {k} ≥ {v!r}" for k, v in c.minimum.items()]
    if c.unset:
        out.append(f"  left unset (None): {', '.join(c.unset)}")
    if c.irrelevant:
        out.append(f"  any value (no effect on the count): {', '.join(c.irrelevant)}")
    if c.derived:
        out.append(f"  computed by the config: {', '.join(c.derived)}")
    if c.regime:
        out.append(f"  structure: the default config's {len(c.regime)} parameter names")
    return out
