"""The command line's grammar: every subcommand, its options, and the shared ``--set`` parsing."""

from __future__ import annotations

import argparse
from typing import Callable, Sequence

from ..core.errors import SymparamsError
from ..core.symbols import SYMBOLS


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2 (argparse prints usage too)
        raise SymparamsError(message)


def parse_sets(items: Sequence[str]) -> dict[str, str]:
    """``--set KEY=VALUE`` items as a dict (values stay text: the model parses them exactly)."""
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        key = key.strip(" ")
        if not sep or not key.isidentifier():
            raise SymparamsError(f"--set takes KEY=VALUE, KEY a symbol or a switch, not {item!r}")
        out[key] = value.strip()
    return out


def print_json(data) -> None:
    import json  # only when asked for: keeps the plain command fast

    print(json.dumps(data, indent=2, ensure_ascii=False))


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when asked."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib.metadata import version

        print(f"symparams {version('symparams')}")
        parser.exit()


def build_parser(handlers: dict[str, Callable], only: str | None = None) -> argparse.ArgumentParser:
    """The parser; ``handlers`` maps each subcommand to the function that runs it.

    ``only`` names the one subcommand the command line runs: only its parser is built, so a plain ``symparams
    count`` does not pay for a dozen parsers it never reads (a command line that names none gets them all).
    """
    parser = _Parser(prog="symparams", description="Exact, symbolic parameter counts for Transformer models.",
                     epilog="Run `symparams COMMAND --help` for a command's options and an example.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for name, (summary, description, example) in COMMANDS.items():
        if only is not None and name != only:
            continue
        p = sub.add_parser(name, help=summary, description=description, epilog=f"example:\n  {example}",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(func=handlers[name])
        _OPTIONS[name](p)
    parser.commands = sub.choices  # each command's own parser, by name (for the reference in docs/cli.md)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` runs (its first argument, when that is one), else None."""
    return argv[0] if argv and argv[0] in COMMANDS else None


#: each command: its one-line summary, its description, an example
COMMANDS = {
    "list": ("presets, families and inferred types", "The presets (named models with their values) and the "
             "families, with each family's switches and task heads; with --inferred, the model types counted by "
             "formulas inferred from transformers' builds, each with its status.", "symparams list --inferred"),
    "count": ("count parameters, with a breakdown", "The exact number of parameters of a model, with each "
              "component's count and share.", "symparams count bert-base --set L=24 --set H=1024 --set A=16"),
    "formula": ("the simplified closed form", "The total as a formula in the model's symbols, then a line saying what "
                "each symbol stands for (not with --latex). A preset gives its switches, not its values; values "
                "given with --set are substituted.",
                "symparams formula bert --set r=4 --latex"),
    "prove": ("prove whether the count depends on the head count A", "The proof that the count does (or does "
              "not) depend on the number of attention heads A: the per-head forms, the simplified total, dN/dA, "
              "the side conditions and a numeric witness.", "symparams prove llama-2-70b"),
    "flops": ("FLOPs of a forward pass and a training step", "The FLOPs of one forward pass over a batch of "
              "sequences and of a training step, per component, exactly, as PyTorch's FlopCounterMode counts "
              "them; per token beside Kaplan's, PaLM's and the published codebases' laws, and whether they "
              "depend on the head count A; with --step-time and --peak, MFU and HFU under each convention.",
              "symparams flops llama-3-8b --head causal-lm --seq 2048"),
    "memory": ("bytes of weights, gradients, optimizer state, activations and KV cache", "The memory of a model "
               "for training (--optimizer adam or sgd, ZeRO over --ranks) or serving (--optimizer none; a "
               "quantized checkpoint's format as --dtype, tensor by tensor), in bytes, exactly, with the "
               "conventions stated.",
               "symparams memory llama-3-8b --dtype bf16 --optimizer none --seq 8192"),
    "explain": ("why a published count differs from the exact one", "A ledger that reconciles a published "
                "count with the exact one: which conventions (embeddings, the output head, biases, norms, "
                "units, rounding) explain it, or the nearest and what remains.",
                "symparams explain bert-base --claim 110M"),
    "derive": ("render a derivation document", "The derivation of a model's count, step by step, as Markdown, "
               "LaTeX or a live HTML page, in English or Chinese.",
               "symparams derive bert-base --format tex --lang zh -o bert-base.zh.tex"),
    "solve": ("the integer value of a symbol whose count is nearest a target", "The admissible value of one "
              "symbol whose count is nearest a target, found exactly; the other values stay.",
              "symparams solve bert-base --set L=24 --set A=16 --target 1B --for H"),
    "sweep": ("evaluate the count over a grid of values", "The exact count at every point of a grid of values "
              "(a table, CSV, JSON or an SVG plot).", "symparams sweep bert-base --grid H=768:1024:64 --grid L=12,24"),
    "infer": ("infer the closed form of any transformers model_type", "The exact parameter count of a "
              "transformers model_type with one of its model classes, inferred from meta-device builds (no "
              "weights, no network) as a closed form in the config's fields, with the conditions where it holds "
              "and its check against real builds of fresh random configurations. Needs torch and transformers "
              "(pip install symparams[infer]).", "symparams infer llama --class causal-lm"),
    "audit": ("reconcile a checkpoint's tensors with the model's formula", "Reads a safetensors checkpoint (a "
              "file, or shards with their index) or a GGUF file by its headers only, no weights, and reconciles "
              "every tensor with the model's formula: missing, extra, shape, dtype, bytes. Exit status 0 with a "
              "one-line summary when everything reconciles; 2 with one line per category of difference.",
              "symparams audit tests/checkpoints/tiny-llama"),
    "shell": ("an interactive Python prompt with the model loaded", "A Python prompt with symparams, the symbols "
              "and every preset loaded (and the model named, as m).", "symparams shell bert-base"),
}


def _count_options(p) -> None:
    _model_options(p, json_=True)
    p.add_argument("--depth", type=_levels, metavar="N",
                   help="levels of components to show (default 2); with --json, a nested tree")
    _lora_options(p)


def _formula_options(p) -> None:
    _model_options(p, json_=False)
    p.add_argument("--latex", action="store_true", help="print LaTeX")
    _lora_options(p)


def _lora_options(p) -> None:
    p.add_argument("--lora", type=_positive, metavar="R", help="a LoRA adapter of rank R, counted as peft counts it "
                                                               "(needs --lora-targets)")
    p.add_argument("--lora-targets", metavar="NAMES", help="the modules the adapter wraps: names as PEFT matches them "
                                                           "(q_proj,v_proj: every module whose name ends so), or "
                                                           "all-linear (every linear layer but the output layer)")
    p.add_argument("--dora", action="store_true", help="DoRA: a magnitude vector beside each LoRA (with --lora)")
    p.add_argument("--lora-bias", choices=("none", "all", "lora_only"),
                   help="which biases train with the adapter, as PEFT's bias option (default none; with --lora)")


def _explain_options(p) -> None:
    _model_options(p, json_=True)
    p.add_argument("--claim", required=True, help="the published count: 110M, 6.74B, 1.3e9 or a whole number")


def _shell_options(p) -> None:
    _model_options(p, json_=False)
    p.add_argument("--plain", action="store_true", help="the standard Python console even if IPython is installed")


def _model_options(p, json_: bool) -> None:
    keys = " ".join(SYMBOLS)
    p.add_argument("model", nargs="?", help="a preset (bert-base, ...), a family (bert, ...) or a preset's hub id; "
                                            "`symparams list` shows them")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help=f"a value of a symbol ({keys}) or a switch of the family (see `symparams list`); repeatable")
    p.add_argument("--head", help="a task head of the family, e.g. masked-lm (see `symparams list`)")
    p.add_argument("--config", metavar="PATH", help="read a HuggingFace config.json (or the folder holding one) "
                                                    "instead of naming a model")
    if json_:
        p.add_argument("--json", action="store_true", help="machine-readable output")


def _document_options(p) -> None:
    _model_options(p, json_=False)
    p.add_argument("--format", choices=("md", "tex", "html"),
                   help="Markdown, LaTeX or HTML (default: from -o's ending, .md, .tex or .html; else md)")
    p.add_argument("--lang", default="en", choices=("en", "zh"), help="English or Chinese")
    p.add_argument("--title", help="the document's title")
    p.add_argument("-o", "--output", help="write to this file (default: standard output)")
    p.add_argument("--template", help="render your own Jinja template (sandboxed)")


def _flops_options(p) -> None:
    _model_options(p, json_=True)
    p.add_argument("--seq", required=True, type=_positive, metavar="S", help="tokens per sequence")
    p.add_argument("--batch", default=1, type=_positive, metavar="B", help="sequences (default 1)")
    p.add_argument("--causal", action="store_true",
                   help="count the causal half of each decoder's attention square, s·(s+1)/2, not s²")
    p.add_argument("--recompute", action="store_true",
                   help="full activation recomputation: training runs each layer's forward pass twice (the "
                        "embeddings and the head once)")
    p.add_argument("--macs", action="store_true", help="multiply-accumulates (FLOPs / 2) in the text output")
    p.add_argument("--elementwise", action="store_true",
                   help="add the softmax, norm and activation FLOPs papers and PyTorch's counter leave out")
    p.add_argument("--tensor-parallel", type=_positive, metavar="T", help="tensor-parallel ranks")
    p.add_argument("--sequence-parallel", action="store_true", help="sequence parallelism (with --tensor-parallel)")
    _layout_options(p, memory=False)
    p.add_argument("--step-time", metavar="SECONDS", help="a measured training step's time: MFU and HFU "
                                                          "under each convention (with --peak)")
    p.add_argument("--peak", metavar="FLOPS", help="one GPU's peak FLOP/s (312e12 for an A100 in bf16)")
    p.add_argument("--gpus", default=1, type=_positive, metavar="N", help="GPUs the step runs on (default 1)")


#: the weights' types --dtype takes (the quantized formats are symparams.analysis.quantized.FORMATS)
DTYPES = ("fp32", "bf16", "fp16", "int8", "int4", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q3_k", "q4_k",
          "q5_k", "q6_k", "gptq", "awq", "fp8", "fp8-block", "mxfp4", "nf4", "fp4")


def _memory_options(p) -> None:
    _model_options(p, json_=True)
    p.add_argument("--dtype", default="bf16", choices=DTYPES, metavar="DTYPE",
                   help="the weights' type (default bf16: mixed precision when training): fp32, bf16, fp16, int8, "
                        "int4, or a quantized checkpoint's format (serving): GGUF q4_0, q4_1, q5_0, q5_1, q8_0, "
                        "q2_k, q3_k, q4_k, q5_k, q6_k; gptq, awq (4-bit); fp8, fp8-block; mxfp4; bitsandbytes' "
                        "nf4, fp4 (a QLoRA base with --lora)")
    p.add_argument("--group-size", metavar="G", help="gptq and awq: inputs per group of scales (default 128)")
    p.add_argument("--no-double-quant", action="store_true",
                   help="nf4 and fp4: absmax scales in fp32, not quantized again (default: double quantization)")
    p.add_argument("--prepare-kbit", action="store_true",
                   help="nf4 and fp4: the unquantized tensors in fp32, as peft's prepare_model_for_kbit_training "
                        "casts them (default: bf16)")
    p.add_argument("--keep", metavar="PARTS", help="a quantized format's parts left unquantized, separated by "
                                                   "commas, or none: embeddings, tables, output, routers, layers, "
                                                   "experts (default: the format's own policy)")
    p.add_argument("--optimizer", default="adam", choices=("adam", "sgd", "none"),
                   help="adam (default), sgd with momentum, or none: serving, no gradients")
    p.add_argument("--zero", default="0", metavar="{0,1,2,3}", help="ZeRO stage (default 0)")
    p.add_argument("--ranks", default=1, type=_positive, metavar="N", help="data-parallel ranks ZeRO spreads over")
    p.add_argument("--seq", type=_positive, metavar="S", help="tokens per sequence (activations, KV cache)")
    p.add_argument("--batch", default=1, type=_positive, metavar="B", help="sequences (default 1)")
    p.add_argument("--tensor-parallel", default=1, type=_positive, metavar="T", help="tensor-parallel ranks")
    p.add_argument("--sequence-parallel", action="store_true", help="sequence parallelism (with --tensor-parallel)")
    p.add_argument("--recompute", default="none", choices=("none", "selective", "full"),
                   help="activation recomputation (default none)")
    _layout_options(p, memory=True)
    p.add_argument("--fit", metavar="BYTES", help="a memory budget (80GB, 80GiB, 1e10): the longest sequence that "
                                                  "fits it, or with --seq the largest batch")
    p.add_argument("--kv-dtype", metavar="DTYPE", help="the KV cache's own type (serving): fp32, bf16, fp16, fp8 "
                                                       "(per-layer scales), int8, int4 (transformers' QuantizedCache: "
                                                       "group scales, an unquantized residual); default the weights'")
    p.add_argument("--block-size", nargs="?", const="16", metavar="B",
                   help="page the KV cache in blocks of B tokens as vLLM allocates it (B default 16), each sequence "
                        "rounded up to whole blocks in every layer")
    _lora_options(p)


def _layout_options(p, memory: bool) -> None:
    """The rest of a parallel layout: with any of them (or --tensor-parallel), the most loaded rank's figures."""
    p.add_argument("--context-parallel", type=_positive, metavar="C", help="context-parallel ranks (divide s)")
    p.add_argument("--pipeline-parallel", type=_positive, metavar="P", help="pipeline stages (divide the layers)")
    p.add_argument("--virtual-stages", type=_positive, metavar="V",
                   help="model chunks per pipeline stage (the interleaved schedule)")
    if memory:
        p.add_argument("--micro-batches", type=_positive, metavar="M",
                       help="micro-batches of --batch sequences a step (default: enough to fill the pipeline)")
    p.add_argument("--expert-parallel", type=_positive, metavar="E", help="expert-parallel ranks (divide the experts)")
    if memory:
        p.add_argument("--distributed-optimizer", action="store_true",
                       help="Megatron's distributed optimizer over the --ranks data-parallel ranks")
        p.add_argument("--fsdp", choices=("full-shard", "shard-grad-op", "hybrid-shard"),
                       help="PyTorch FSDP over the --ranks data-parallel ranks (fully_shard on each layer and the "
                            "root): the first rank's shards and the parameters it gathers")
        p.add_argument("--shard-group", type=_positive, metavar="K",
                       help="hybrid-shard: the ranks of one shard group (K divides --ranks; N/K replicas)")
    p.add_argument("--pad-vocab", action="store_true",
                   help="pad the vocabulary to a multiple of 128·T, as Megatron does")


def _solve_options(p) -> None:
    _model_options(p, json_=True)
    p.add_argument("--target", required=True, help="the parameter count to aim at: 1000000000, 1e9, 1B, 110M")
    p.add_argument("--for", dest="symbol", required=True, help="the symbol to solve for (e.g. H; s or b for FLOPs)")
    _quantity_options(p)


def _quantity_options(p) -> None:
    p.add_argument("--of", default="parameters", choices=("parameters", "flops", "training_flops"),
                   help="the parameter count (default), or the FLOPs of a forward pass or a training step "
                        "(then s and b may vary too)")
    p.add_argument("--seq", type=_positive, metavar="S", help="tokens per sequence, for FLOPs")
    p.add_argument("--batch", type=_positive, metavar="B", help="sequences, for FLOPs (default 1)")


def _sweep_options(p) -> None:
    _model_options(p, json_=True)
    p.add_argument("--grid", action="append", default=[], metavar="KEY=SPEC",
                   help="start:stop:step (stop included) or a,b,c; repeatable")
    p.add_argument("--csv", help="write CSV to this file")
    p.add_argument("--plot", help="draw count against the first grid key into an SVG file")
    p.add_argument("--force", action="store_true", help="allow grids over 10^9 points")
    p.add_argument("--head-width", type=_positive, metavar="D",
                   help="hold each head's width at D: the head count A follows H (A = H/D)")
    _quantity_options(p)


def asks_lora(args) -> bool:
    """Whether the command line asks for a LoRA adapter (any of its options given)."""
    return any(getattr(args, key, None) not in (None, False) for key in ("lora", "lora_targets", "dora", "lora_bias"))


def _positive(text: str) -> int:
    """A positive whole number below 10⁹, in any notation a size takes (``2048``, ``2e3``)."""
    from ..core.values import parse_whole  # imports SymPy: only once an option takes a number

    try:
        value = parse_whole("it", text)
    except SymparamsError:
        value = 0
    if not 1 <= value < 10**9:
        raise argparse.ArgumentTypeError(f"takes a positive whole number below 10^9, not {text!r}")
    return value


def _levels(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1 or len(text) > 3:
        raise argparse.ArgumentTypeError(f"--depth takes a whole number of levels from 1 to 999, not {text!r}")
    return int(text)


def _list_options(p) -> None:
    p.add_argument("--inferred", action="store_true",
                   help="the model types known only through inferred formulas, each with its status: exact, the "
                        "sizes held, why a class is not exact, whether FLOPs and memory answer")
    p.add_argument("--json", action="store_true", help="the presets, families and inferred types as JSON")


#: the dtypes a checkpoint the audit reads holds: plain ones (safetensors), a GGUF file's one type
AUDIT_DTYPES = ("fp32", "bf16", "fp16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k")


def _audit_options(p) -> None:
    p.add_argument("path", help="a .safetensors file, a folder of shards with model.safetensors.index.json, "
                                "or a .gguf file")
    p.add_argument("--model", help="the model the checkpoint should hold: a preset or a family (default: the "
                                   "config.json beside the checkpoint)")
    p.add_argument("--config", metavar="PATH", help="read this config.json rather than the one beside the "
                                                    "checkpoint")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a value of a symbol or a "
                                                                                   "switch; repeatable")
    p.add_argument("--head", help="the task head the checkpoint was saved with (default: the class the config's "
                                  "architectures names)")
    p.add_argument("--dtype", choices=AUDIT_DTYPES, metavar="DTYPE",
                   help="the dtype the tensors should be stored in: fp32, bf16, fp16 (default: the config's dtype); "
                        "a GGUF file's type, as llama.cpp writes a file of one type: q4_0, q4_1, q5_0, q5_1, q8_0, "
                        "q2_k, q3_k, q4_k, q5_k, q6_k (default: the types are listed, not checked)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _infer_options(p) -> None:
    from .infer import options

    options(p)


#: options whose value may begin with "-" (a title "---", a negative number to be refused with a reason)
VALUED = ("--title", "--set", "--target", "--grid", "--for", "--head", "--claim", "--fit", "--class", "--verify",
          "--group-size", "--lora", "--lora-targets")


def joined_values(argv: Sequence[str]) -> list[str]:
    """``--title ---`` as ``--title=---``: argparse would take a value starting with "-" for an option.

    Bytes that are not UTF-8 (which Python keeps as lone surrogates) become U+FFFD, so no document
    or file name carries them.
    """
    out, args = [], [a.encode("utf-8", "surrogateescape").decode("utf-8", "replace") for a in argv]
    i = 0
    while i < len(args):
        if args[i] in VALUED and i + 1 < len(args) and args[i + 1].startswith("-"):
            out.append(f"{args[i]}={args[i + 1]}")
            i += 2
        else:
            out.append(args[i])
            i += 1
    return out


#: what each command adds to its parser
_OPTIONS = {"list": _list_options, "count": _count_options, "formula": _formula_options,
            "prove": lambda p: _model_options(p, json_=True), "flops": _flops_options, "memory": _memory_options,
            "explain": _explain_options, "derive": _document_options, "solve": _solve_options,
            "sweep": _sweep_options, "infer": _infer_options, "audit": _audit_options, "shell": _shell_options}
