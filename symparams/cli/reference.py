"""``docs/cli.md``: the command line's reference, written from the parser itself.

    python -m symparams.cli.reference           # rewrite docs/cli.md
    python -m symparams.cli.reference --check   # exit 1 if docs/cli.md differs from the parser

Each command's section is its ``--help`` text (80 columns wide), so the
reference never disagrees with the program.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .commands import HANDLERS
from .parser import COMMANDS, build_parser

WIDTH = "80"

JSON_OUTPUT = """## JSON output

`--json` (`count`, `prove`, `solve`, `sweep`) prints one JSON document on
standard output. Every number in it is exact:

- a whole number is a JSON integer, however large (Python's `json` reads it
  exactly; JavaScript's `JSON.parse` rounds integers above 2^53, so read big
  counts there with a BigInt-aware parser);
- a ratio is a string `"p/q"` in lowest terms, such as `"43/16"` for r;
- a closed form or a condition is a string in SymPy's syntax, with a
  `..._latex` twin where one is given;
- nothing is ever a float.

`count --json` is `Model.to_dict()`: `model`, `family`, `head`, `values`,
`switches`, `total`, `trainable`, `active` (the parameters one token uses:
a mixture of experts leaves out the routed experts a token is not sent to;
else the total), `components` (the top-level counts), for a base model of a
language model `with_lm_head` (`head` and `total` with that head, and
`active` for a mixture of experts) and, with `--depth N`, the nested `tree`
(with `active` per component for a mixture of experts). `sweep --json` has
a row per point (the grid's values, `parameters`, and `active` for a mixture
of experts) and ends with `skipped`: the points left out, per broken
constraint. `memory --json` with a parallel layout (`--tensor-parallel` above
1, `--pipeline-parallel`, `--context-parallel`, `--expert-parallel`,
`--distributed-optimizer` or `--pad-vocab`) adds `per_rank`: the most
loaded rank (`rank`, named; `stage`, from 0), its `parameters`, `weights`,
`gradients`, `optimizer`, `activations`, `kv_cache` and `total` in bytes,
every stage's (`stages`), the `layout`, the `formulas` and the
`conventions` (with `--fsdp`, FSDP's first rank: its shard's `parameters`,
and `unsharded`, the parameters it gathers at the peak); `flops --json` with a layout adds `per_rank` too: the most
loaded rank's `forward`, `backward` and `training` FLOPs for one micro-batch,
every stage's, the `layout` and the `conventions`.

`count --lora R --json` gives `total` and `trainable` as PEFT's
`get_nb_trainable_parameters()` does (the base plus the adapter; the
adapter, plus the biases `--lora-bias` thaws), `active` with the adapter,
and `lora`: `r`, `targets`, `dora`, `bias`, the wrapped `modules` (each
`path`, `kind`, `in`, `out`, `copies`), `wrapped` (how many in all),
`adapter`, `base` and the adapter's `formula` in the symbols and R
([adapters.md](adapters.md)). `memory --lora R --json` gives the
fine-tuning's parts (the base frozen, the adapter's gradients and optimizer
state), `parameters` and `trainable` as PEFT counts them, and the same
`lora`.
"""


def reference() -> str:
    """The Markdown text of docs/cli.md."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH  # argparse wraps help to the terminal's width
    try:
        parser = build_parser(HANDLERS)
        parts = ["# The command line\n",
                 "Generated from the program's own parser (`python -m symparams.cli.reference`); every "
                 "command's example is run by the tests.\n",
                 "```text\n" + parser.format_help() + "```\n"]
        for name, sub in parser.commands.items():
            parts.append(f"## `symparams {name}`\n\n{COMMANDS[name][1]}\n\n```text\n{sub.format_help()}```\n")
        parts.append(JSON_OUTPUT)
        return "\n".join(parts)
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m symparams.cli.reference", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report whether docs/cli.md is up to date")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "docs" / "cli.md")
    args = ap.parse_args(argv)
    text = reference()
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'up to date' if same else 'differs from the parser'}")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
