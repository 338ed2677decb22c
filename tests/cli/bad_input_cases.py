"""The bad-input table: a few hundred command lines (:class:`Case` rows generated from smaller tables: every
family, symbol, switch, head, option and kind of hostile file); the hostile files they name are made by
:mod:`tests.cli.bad_input_files`.  Run and checked by ``test_bad_input_table.py``, which states the promise
they are checked against.

What the families are made of is hard-coded here: the table must not depend on the package it tests.
"""

from collections.abc import Callable
from dataclasses import dataclass

from tests.cli.bad_input_files import CHECKPOINTS, CONFIGS, TEMPLATES

CASE_SECONDS = 10  # the promise: never a hang beyond 10 s
MEMORY_KB = 500 * 1024  # the promise: never more than 500 MB (peak resident set size, ru_maxrss)

SUBCOMMANDS = ("list", "count", "formula", "prove", "flops", "memory", "explain", "derive", "solve", "sweep", "shell",
               "audit")


@dataclass(frozen=True)
class Case:
    """One command line.  ``expect``: ``error`` (the promise), ``ok`` (must succeed safely: ``check`` gets
    stdout and returns problems) or ``either`` (a result or a one-line error)."""

    id: str
    args: tuple
    expect: str = "error"
    needle: "str | None" = None
    check: "Callable | None" = None

    @property
    def group(self) -> str:
        first = self.args[0] if self.args else ""
        return first if first in SUBCOMMANDS else "top"


def _show(arg) -> str:
    """An argument as a case id shows it: escaped, long ones cut."""
    text = arg.decode("utf-8", "surrogateescape") if isinstance(arg, bytes) else arg
    text = text.encode("unicode_escape").decode("ascii") if not text.isprintable() or not text.isascii() else text
    if len(text) > 28:
        text = f"{text[:12]}...[{len(text)} chars]"
    return text if text and " " not in text else repr(text)


_IDS: dict = {}


def case(*args, expect="error", needle=None, check=None, label=None) -> Case:
    """A case; its id is the command line (shortened), made unique."""
    base = label or " ".join(_show(a) for a in args) or "(no arguments)"
    n = _IDS[base] = _IDS.get(base, 0) + 1
    return Case(base if n == 1 else f"{base} #{n}", tuple(args), expect, needle, check)


# -- what the families are made of (hard-coded: the table must not depend on the package it tests) ------------

PRESET = {"bert": "bert-base", "transformer": "transformer-base", "albert": "albert-base-v2", "bart": "bart-base",
          "distilbert": "distilbert-base", "electra": "electra-small", "gpt2": "gpt2", "llama": "llama-3-8b",
          "marian": "opus-mt-en-de", "roberta": "roberta-base", "t5": "t5-small"}
SYMBOLS_OF = {"bert": "V P S H L A r", "transformer": "V P H L A r", "albert": "V P S H L A r E",
              "bart": "V P H L A r", "distilbert": "V P H L A r", "electra": "V P S H L A r E",
              "gpt2": "V P H L A r", "llama": "V H L A G F", "marian": "V P H L A r", "roberta": "V P S H L A r",
              "t5": "V H L A D B F"}
SWITCHES_OF = {"bert": "pooler", "transformer": "positions tie bias layernorm",
               "albert": "pooler hidden_groups inner_groups tie", "bart": "tie split_layers",
               "distilbert": "sinusoidal tie", "electra": "project tie", "gpt2": "tie cross_attention",
               "llama": "gqa free_head_dim tie attention_bias mlp_bias token_classification_bias",
               "marian": "share tie split_layers", "roberta": "pooler tie", "t5": "gated tie split_layers"}
COUNT_SWITCHES = {"hidden_groups", "inner_groups"}  # positive whole numbers
CHOICE_SWITCHES = {"positions"}  # sinusoidal, learned, none

DIGITS = "9" * 5000
BAD_SIZES = ["0", "-1", "1.5", "1.55e1", "", " ", "abc", "٣", DIGITS, "1/0", "true", "0x10", "1_000", "inf", "nan",
             "+-1", "1,000", "²", "768 768", "-0", "12\x1b[2K"]
BAD_RATIOS = ["0", "abc", "1e5000", "1/0", "-3/4"]  # r is a positive rational: 1.5 and 1e3 are good ones
BAD_BOOLS = ["maybe", "", "2", "truee", "None", "t", "٣", "yes please", "-1", "null"]
BAD_COUNTS = ["0", "-1", "1.5", "abc", "", DIGITS, "true", "٣"]
BAD_CHOICES = ["rope", "", "sinusoidal,learned", "true"]


def other_symbol(family, avoid):
    """A symbol of ``family`` that solve and sweep may vary, not ``avoid``."""
    return next(s for s in ("L", "V", "H") if s in SYMBOLS_OF[family].split() and s != avoid)


def command(sub, model, family, *extra, avoid=None, needle=None):
    """``symparams SUB MODEL ...`` made complete for each subcommand (what it requires), plus ``extra``."""
    x = other_symbol(family, avoid)
    tail = {"derive": ["--format", "md"], "solve": ["--target", "1e9", "--for", x],
            "sweep": ["--grid", f"{x}=1,2"], "flops": ["--seq", "8"], "explain": ["--claim", "110M"]}.get(sub, [])
    return case(sub, *([model] if model is not None else []), *extra, *tail, needle=needle)


ROTATION = ("count", "formula", "prove", "flops", "memory", "explain", "derive", "solve", "sweep", "shell")


def _rotating():
    i = 0
    while True:
        yield ROTATION[i % len(ROTATION)]
        i += 1


#: a family that uses each symbol, and what it takes to use it
SYMBOL_HOMES = {"V": ("gpt2",), "P": ("bert-base",), "S": ("roberta-base",), "H": ("bert-base",),
                "L": ("t5-small",), "L_d": ("bart-base", "--set", "split_layers=true"),
                "V_d": ("opus-mt-en-de", "--set", "share=false"), "A": ("llama-2-7b",), "r": ("bert-base",),
                "C": ("bert-base", "--head", "sequence-classification"), "E": ("albert-base-v2",),
                "G": ("llama-3-8b",), "D": ("t5-small",), "B": ("t5-small",), "F": ("llama-3-8b",)}
FAMILY_OF = {"gpt2": "gpt2", "bert-base": "bert", "roberta-base": "roberta", "t5-small": "t5", "bart-base": "bart",
             "opus-mt-en-de": "marian", "llama-2-7b": "llama", "llama-3-8b": "llama", "albert-base-v2": "albert"}


def value_cases():
    """Every symbol with bad values (two each; r more), every bad size at least once, every subcommand in turn."""
    subs = _rotating()
    out = []
    seen = set()
    for i, (sym, (preset, *extra)) in enumerate(SYMBOL_HOMES.items()):
        picks = BAD_RATIOS if sym == "r" else [BAD_SIZES[(2 * i + k) % len(BAD_SIZES)] for k in range(2)]
        for value in picks:
            seen.add(value)
            out.append(command(next(subs), preset, FAMILY_OF[preset], *extra, "--set", f"{sym}={value}", avoid=sym,
                               needle=sym))
    for value in BAD_SIZES:
        if value not in seen:
            out.append(command(next(subs), "bert-base", "bert", "--set", f"H={value}", avoid="H", needle="H"))
    return out


def switch_cases():
    """One switch of every family with a bad value (bool-ish, counts, choices)."""
    subs = _rotating()
    out = []
    for i, (family, preset) in enumerate(PRESET.items()):
        switches = SWITCHES_OF[family].split()
        switch = switches[i % len(switches)]
        bad = BAD_COUNTS if switch in COUNT_SWITCHES else BAD_CHOICES if switch in CHOICE_SWITCHES else BAD_BOOLS
        out.append(command(next(subs), preset, family, "--set", f"{switch}={bad[i % len(bad)]}", needle=switch))
    out += [case("count", "albert-base-v2", "--set", f"hidden_groups={DIGITS}", needle="hidden_groups"),
            case("count", "llama-3-8b", "--set", "gqa=", needle="gqa")]
    # a symbol given a switch's value, a switch given a size
    out += [case("count", "bert-base", "--set", "H=true", needle="H"),
            case("count", "gpt2", "--set", "tie=768", needle="tie")]
    return out


FOREIGN_HEADS = {"transformer": "masked-lm", "llama": "Causal-LM", "t5": "causal-lm"}  # another family's
UNUSED_KEYS = {"bert": "E=128", "transformer": "pooler=true", "albert": "G=2", "bart": "S=2",
               "distilbert": "pooler=false", "electra": "G=2", "gpt2": "D=64", "llama": "r=4", "marian": "V_d",
               "roberta": "L_d=3", "t5": "P=512"}


def head_and_key_cases():
    """For every family: an unknown head and a key it does not use; some heads of other families."""
    subs = _rotating()
    out = []
    for family, preset in PRESET.items():
        out.append(command(next(subs), preset, family, "--head", "nosuch-head", needle="nosuch-head"))
        key = UNUSED_KEYS[family]
        out.append(command(next(subs), preset, family, "--set", key if "=" in key else f"{key}=9",
                           needle=key.partition("=")[0]))
    for family, head in FOREIGN_HEADS.items():
        out.append(command(next(subs), PRESET[family], family, "--head", head, needle=head))
    out += [case("count", "bert-base", "--set", s) for s in ("1H=1", "H")]
    out += [case("count", "bert-base", "--head", "MASKED-LM")]
    return out


def constraint_cases():
    """Sizes that break a family's constraints: A | H, r·H whole, G | A, E ≠ H with a projection."""
    subs = _rotating()
    out = [command(next(subs), preset, family, "--set", "A=7", needle="7", avoid="A")
           for family, preset in PRESET.items() if family != "t5"]  # T5's heads are D wide: no A | H
    out += [case("count", "bert-base", "--set", "r=1/7", needle="r"),
            case("count", "llama-3-8b", "--set", "G=3", needle="G"),
            case("solve", "llama-3-8b", "--set", "G=64", "--for", "L", "--target", "1e9"),
            case("count", "electra-small", "--set", "E=256")]
    return out


def missing_value_cases():
    return [case("count", "bert", needle="bert"), case("count", "t5", "--json"),
            case("derive", "bert", "--format", "md"), case("solve", "bert", "--for", "H", "--target", "1e9"),
            case("sweep", "bert", "--grid", "H=768,1024"),
            case("count", "bart-base", "--set", "split_layers=true", needle="L_d")]


OPTIONS = {  # every option that takes an argument, per subcommand
    "count": ("--set", "--head", "--config", "--depth", "--lora", "--lora-targets", "--lora-bias"),
    "formula": ("--set", "--head", "--config", "--lora", "--lora-targets"),
    "prove": ("--set", "--head", "--config"),
    "derive": ("--set", "--head", "--config", "--format", "--lang", "--title", "-o", "--output", "--template"),
    "solve": ("--set", "--head", "--config", "--target", "--for"),
    "sweep": ("--set", "--head", "--config", "--grid", "--csv", "--plot", "--head-width"),
    "shell": ("--set", "--head", "--config"),
    "audit": ("--model", "--config", "--set", "--head", "--dtype"),
}


def option_cases():
    """Every option without its argument (last, or before another option); unknown and misplaced options."""
    out = []
    for sub, options in OPTIONS.items():
        required = {"derive": ["--format", "md"], "solve": ["--target", "1e9", "--for", "H"]}.get(sub, [])
        for opt in options:
            base = [a for a in required if a not in ("--format", "md")] if opt == "--format" else \
                ["--for", "H"] if opt == "--target" else ["--target", "1e9"] if opt == "--for" else required
            out.append(case(sub, "bert-base", *base, opt, needle=opt.lstrip("-")[:3]))
        if sub in ("count", "derive", "solve"):
            out.append(case(sub, "bert-base", *required, "--bogus", needle="--bogus"))
    out += [case("count", "bert-base", "--head", "--json"),
            case("derive", "bert-base", "--format", "--lang", "en", needle="--format"),
            case("count", "bert-base", "extra", needle="extra"), case("formula", "bert-base", "--json"),
            case("derive", "bert-base", "--format", "pdf", needle="pdf"),
            case("derive", "bert-base", "--format", "md", "--lang", "fr", needle="fr"),
            case("solve", "bert-base", "--for", "H", needle="--target")]
    out += [case("count", "bert-base", "--depth", d, needle="depth") for d in ("0", "-1", "abc", "1000", "1.5", "٣")]
    out += [case("sweep", "bert-base", "--grid", "H=768,1024", "--head-width", w, needle="head-width")
            for w in ("0", "-64", "abc", "1234567890", "٣")]
    out.append(case("sweep", "bert-base", "--grid", "A=1,2", "--head-width", "64", needle="A"))
    return out


def top_level_cases():
    return [case(), case("bogus", needle="bogus"), case("--bogus"), case("COUNT"), case("count", "--version"),
            case("list", "extra", needle="extra"), case("list", "--bogus"), case("", "bert-base")]


def generic_cases():
    """What every command that loads a model refuses the same way."""
    out = []
    for i, sub in enumerate(ROTATION):
        out.append(command(sub, "nosuchmodel", "bert", needle="nosuchmodel"))
        if i % 2:
            out.append(command(sub, "bert-base", "bert", "--config", "c-bert.json", needle="--config"))
        elif sub != "shell":  # a shell without a model is no error
            out.append(command(sub, None, "bert", needle="--config"))
    out += [command("count", "../../etc/passwd", "bert"), command("prove", "\x1b[31mbert\x1b[0m", "bert"),
            command("derive", "bert-bas", "bert", needle="bert-bas")]
    return out


def config_cases():
    subs = _rotating()
    out = []
    for name in CONFIGS:
        if name in ("bert", "bert-untied", "phimoe") or name.startswith("quant-"):  # read, their refusal audit's
            continue
        out.append(command(next(subs), None, "bert", "--config", f"c-{name}.json", needle=f"c-{name}.json"))
    for path in ("nope.json", "emptydir", "cfgdir-fifo", "/dev/zero", "big.json", "latin1.json", "bom.json",
                 "zero-link.json", "loop.json"):
        out.append(command(next(subs), None, "bert", "--config", path))
    out += [case("count", "--config", "/proc/self/mem"), case("prove", "--config", "cfg\x1b[2J.json"),
            case("count", "--config", "c-bert.json", "--head", "seq2seq-lm", needle="seq2seq-lm"),
            case("count", "--config", "c-bert-untied.json", "--head", "masked-lm", needle="tie_word_embeddings"),
            case("derive", "--config", "cfgdir-bad", "--format", "md", needle="cfgdir-bad")]
    return out


def template_cases():
    formats = ("md", "tex", "html")
    out = []
    for i, name in enumerate(TEMPLATES):
        out.append(case("derive", "bert-base", "--format", formats[i % 3], "--template", f"t-{name}.j2",
                        needle=f"t-{name}.j2"))
    for path in ("fifo", "/dev/zero", "big.j2", "latin1.j2"):
        out.append(case("derive", "bert-base", "--format", "md", "--template", path))
    return out


LONG_NAME = "x" * 300 + ".md"


def output_cases():
    """Outputs that cannot be written, and old files a failing command must leave as they were."""
    derive = ("derive", "bert-base", "--format", "md")
    grid = ("--grid", "H=768,1024")
    out = [case(*derive, "-o", path) for path in
           ("fifo", "emptydir", "/dev/full", "missing/out.md", LONG_NAME, "missing/\x1b[2Kout.md")]
    out += [case("derive", "nosuchmodel", "--format", "md", "-o", "old.md"),
            case("derive", "bert-base", "--set", "H=0", "--format", "tex", "-o", "old.md"),
            case("derive", "bert-base", "--format", "pdf", "-o", "old.md"),
            case("derive", "bert-base", "--format", "tex", "--template", "t-undefined.j2", "--output", "old.md"),
            case("derive", "bert-base", "--format", "md", "--template", "t-concat-bomb.j2", "-o", "old.md"),
            case("derive", "--config", "c-malformed.json", "--format", "html", "-o", "old.md")]
    out += [case("sweep", "bert-base", *grid, "--csv", path) for path in
            ("fifo", "dir.csv", "missing/x.csv")]
    out += [case("sweep", "bert-base", "--grid", "H=768:1024:0", "--csv", "old.csv"),
            case("sweep", "nosuchmodel", *grid, "--csv", "old.csv"),
            case("sweep", "bert-base", *grid, "--csv", "old.csv", "--json"),
            case("sweep", "bert-base", *grid, "--csv", "old.csv", "--plot", "old.png"),
            case("sweep", "bert-base", *grid, "--csv", "old.csv", "--plot", "dir.svg"),
            case("sweep", "bert-base", *grid, "--csv", "old.csv", "--plot", "fifo.svg"),
            case("sweep", "bert-base", *grid, "--csv", "old.csv", "--plot", "missing/x.svg")]
    out += [case("sweep", "bert-base", *grid, "--plot", path) for path in ("out.png", "fifo.svg")]
    out += [case("sweep", "bert-base", "--grid", "H=1:1000000", "--plot", "old.svg", needle="100,000"),
            case("sweep", "bert-base", "--grid", "H=0,768", "--plot", "old.svg")]
    return out


def sweep_cases():
    s = ("sweep", "bert-base")
    specs = ["H=", "=768", "H", "H=768:1024:0", "H=768:1024:", "H=768:1024:-64", "H=1024:768:64", "H=768,,1024",
             "H=1:1000000000000", "Q=1,2", "pooler=true,false", "E=128,256", "H=1:2:3:4", "H=768:1024:6.4e-1",
             "H=768:1024:1.5", "r=3:4:1/0", "H=0:768:12", f"H=768:1024:{DIGITS}", f"r=3:4:1/{DIGITS}",
             "r=3:4:1/1000000000000", "H=768:1024:64\x1b[2K"]
    out = [case(*s, "--grid", spec) for spec in specs]
    out += [case(*s, needle="grid"),
            case(*s, "--grid", "H=1:100000", "--grid", "L=1:100000", needle="10^9"),
            case(*s, "--grid", "H=1:100000000000000000000", "--force"),
            case(*s, "--grid", "H=768", "--grid", "H=1024", needle="twice"),
            case(*s, "--grid", "H=768", "--set", "H=1024", needle="H"),
            case("sweep", "t5-small", "--grid", "r=1,2"),
            case("sweep", "albert-base-v2", "--grid", "hidden_groups=1,2")]
    return out


def solve_cases():
    s = ("solve", "bert-base", "--for", "H")
    targets = ["0", "-5", "1.5", "abc", "1e100000", "", "1/0", "inf", "٣", DIGITS]
    out = [case(*s, "--target", t) for t in targets]
    out += [case("solve", "bert-base", "--target", "1e9", "--for", f) for f in
            ("Q", "pooler", "E", "", "H ", "A", "\x1b[2KH")]
    out += [case(*s, "--target", "1e9", "--set", "H=768", needle="H")]
    return out


def layout_cases(memory):
    """A parallel layout that does not divide the model (llama-3-8b: A = 32, G = 8, L = 32), or a bad rank count."""
    out = [case(*memory, option, n) for option in ("--context-parallel", "--pipeline-parallel", "--virtual-stages",
                                                   "--micro-batches", "--expert-parallel") for n in ("0", "-2", "1.5")]
    out += [case(*memory, "--tensor-parallel", "3", needle="attention heads A = 32"),
            case(*memory, "--tensor-parallel", "16", needle="key/value heads G = 8"),
            case(*memory, "--pipeline-parallel", "64", needle="layers L = 32"),
            case(*memory, "--pipeline-parallel", "4", "--virtual-stages", "16", needle="P·V = 64"),
            case(*memory, "--virtual-stages", "2", needle="P > 1"),
            case(*memory, "--sequence-parallel", needle="T > 1"),
            case(*memory, "--seq", "1000", "--context-parallel", "3", needle="sequence length s = 1000"),
            case(*memory, "--expert-parallel", "2", needle="has none"),
            case("memory", "mixtral-8x7b", "--expert-parallel", "3", "--ranks", "3", needle="experts N_e = 8"),
            case("memory", "mixtral-8x7b", "--expert-parallel", "4", "--ranks", "2", needle="ranks N·C = 2"),
            case(*memory, "--distributed-optimizer", "--zero", "1", needle="not both"),
            case("memory", "t5-base", "--pipeline-parallel", "2", needle="run of consecutive layers"),
            case("memory", "deepseek-v2-lite", "--tensor-parallel", "2", needle="kv_a_proj_with_mqa"),
            case("memory", "gemma-2-9b", "--optimizer", "none", "--seq", "64", "--pipeline-parallel", "2",
                 needle="per pipeline stage"),
            case(*memory, "--pipeline-parallel", "2", "--fit", "80GB", needle="--fit")]
    out += fsdp_cases(memory)
    return out


def fsdp_cases(memory):
    """--fsdp and --shard-group: a bad value, a group that does not divide the ranks, another partition beside it."""
    fsdp = (*memory, "--ranks", "4", "--fsdp")
    return [case(*memory, "--fsdp", "zero3", needle="zero3"), case(*memory, "--fsdp", ""),
            case(*fsdp, "full-shard", "--shard-group", "0"), case(*fsdp, "full-shard", "--shard-group", "1.5"),
            case(*fsdp, "hybrid-shard", needle="--shard-group K"),
            case(*fsdp, "hybrid-shard", "--shard-group", "3", needle="K = 3 must divide"),
            case(*memory, "--ranks", "4", "--shard-group", "2", needle="hybrid-shard"),
            case(*fsdp, "shard-grad-op", "--shard-group", "2", needle="leave out --shard-group"),
            case(*fsdp, "full-shard", "--zero", "3", needle="not both"),
            case(*fsdp, "full-shard", "--distributed-optimizer", needle="give one"),
            case(*fsdp, "full-shard", "--tensor-parallel", "2", needle="data-parallel ranks alone"),
            case(*fsdp, "full-shard", "--pipeline-parallel", "2", needle="data-parallel ranks alone"),
            case(*fsdp, "full-shard", "--optimizer", "none", needle="for training"),
            case(*fsdp, "full-shard", "--fit", "80GB", needle="--fit"),
            case(*fsdp, "full-shard", "--lora", "8", "--lora-targets", "q_proj", needle="FSDP"),
            case("memory", "transformer-base", "--ranks", "2", "--fsdp", "full-shard", needle="frozen")]


def cost_cases():
    """flops, memory and explain: their own options, and FLOPs in solve and sweep."""
    flops, memory, explain = ("flops", "llama-3-8b"), ("memory", "llama-3-8b"), ("explain", "bert-base")
    out = [case(*flops, "--seq", n) for n in ("0", "-1", "1.5", "abc", "", DIGITS, "1.5e0", "1e9")]
    out += [case(*flops, needle="--seq"), case(*flops, "--seq", "8", "--batch", "0"),
            case("flops", "bert", "--seq", "8", needle="V"), case(*flops, "--seq", "8", "--macs", "2")]
    timed = (*flops, "--seq", "8")
    out += [case(*timed, "--step-time", t, "--peak", "312e12", needle="step time") for t in
            ("0", "-1", "abc", "nan", "inf", "1/0", "", "1e99999", "٣")]
    out += [case(*timed, "--step-time", "0.5", "--peak", p, needle="peak") for p in ("0", "-312e12", "abc", "1/0")]
    out += [case(*timed, "--step-time", "0.5", needle="--peak"), case(*timed, "--peak", "312e12", needle="--peak"),
            case(*timed, "--step-time", "0.5", "--peak", "312e12", "--gpus", "0"),
            case(*timed, "--step-time", "0.5", "--peak", "312e12", "--gpus", "1.5"),
            case(*timed, "--step-time", "1e-9", "--peak", "1/3", "--gpus", "7", "--json", expect="ok")]
    out += [case(*memory, "--dtype", "fp64"), case(*memory, "--optimizer", "lion"), case(*memory, "--zero", "4"),
            case(*memory, "--ranks", "0"), case(*memory, "--seq", "-8"), case(*memory, "--tensor-parallel", "0"),
            case(*memory, "--dtype", "int4", needle="int4"), case(*memory, "--recompute", "some"),
            case("memory", "bert-base", "--optimizer", "none", "--fit", "80GB", needle="grow")]
    serve = (*memory, "--optimizer", "none")
    out += [case(*serve, "--dtype", "gptq", "--group-size", g, needle="group size")
            for g in ("0", "-64", "1.5", "abc", "", DIGITS, "96")]
    out += [case(*serve, "--dtype", "q3_0"), case(*serve, "--dtype", "q4_k", "--keep", "heads", needle="heads"),
            case(*serve, "--dtype", "fp8", "--keep", "", needle="part"),
            case(*memory, "--dtype", "bf16", "--keep", "none", needle="keep"),
            case(*serve, "--dtype", "q8_0", "--group-size", "32", needle="group_size"),
            case(*serve, "--dtype", "mxfp4", needle="mxfp4"), case(*memory, "--dtype", "q4_k", needle="q4_k"),
            case(*serve, "--dtype", "q4_k", "--tensor-parallel", "2", needle="not split over ranks"),
            case(*serve, "--dtype", "gptq", "--pipeline-parallel", "2", needle="not split over ranks"),
            case(*memory, "--lora", "8", "--lora-targets", "q_proj", "--dtype", "q4_k", needle="quantized as q4_k"),
            case(*memory, "--lora", "8", "--lora-targets", "q_proj", "--tensor-parallel", "2",
                 needle="parallel layout"),
            case(*memory, "--no-double-quant", needle="double_quant"),
            case(*serve, "--dtype", "q4_k", "--prepare-kbit", needle="prepare_kbit"),
            case(*serve, "--dtype", "awq", "--no-double-quant", needle="nf4 and fp4"),
            case(*memory, "--dtype", "nf4", needle="nf4"), case(*serve, "--dtype", "fp4", "--keep", "layers",
                                                                needle="fp4"),
            case("memory", "t5-small", "--optimizer", "none", "--dtype", "nf4", needle="fp32"),
            case(*memory, "--lora", "8", "--lora-targets", "q_proj", "--dtype", "nf4", "--zero", "3", "--ranks", "8",
                 needle="ZeRO stage 3"),
            case(*memory, "--lora", "8", "--lora-targets", "q_proj", "--dtype", "nf4", "--pipeline-parallel", "2",
                 needle="not split over ranks")]
    out += [case(*memory, "--optimizer", "none", "--seq", "8", "--fit", budget, needle="budget")
            for budget in ("abc", "0", "-80GB", "80XB", "1.5", "1e99999")]
    out += [case(*serve, "--seq", "8", "--kv-dtype", kv, needle="KV cache dtype") for kv in ("fp9", "", "int3", "q4_k")]
    out += [case(*serve, "--seq", "8", "--block-size", size, needle="block size")
            for size in ("0", "-16", "1.5", "abc", "", DIGITS, "2e6")]
    out += [case(*memory, "--seq", "8", "--kv-dtype", "fp8", needle="serve the model"),
            case(*memory, "--seq", "8", "--block-size", needle="serve the model"),
            case(*serve, "--seq", "8", "--kv-dtype", "int4", "--block-size", needle="not paged"),
            case(*serve, "--seq", "8", "--kv-dtype", "fp8", "--tensor-parallel", "2", needle="not split over ranks"),
            case("memory", "gemma-2-9b", "--optimizer", "none", "--seq", "8", "--kv-dtype", "fp8",
                 needle="sliding-window"),
            case("memory", "gemma-2-9b", "--optimizer", "none", "--fit", "80GB", "--block-size", needle="sliding-window"),
            case("memory", "t5-small", "--optimizer", "none", "--seq", "8", "--kv-dtype", "fp8", needle="cross"),
            case("memory", "deepseek-v3", "--optimizer", "none", "--seq", "8", "--kv-dtype", "int4",
                 needle="groups of 64")]
    out += layout_cases(memory)
    out += [case(*flops, "--seq", "8", "--tensor-parallel", "3", needle="attention heads A = 32"),
            case(*flops, "--seq", "8", "--pipeline-parallel", "64", needle="layers L = 32"),
            case(*flops, "--seq", "8", "--context-parallel", "3", needle="sequence length s = 8"),
            case(*flops, "--seq", "8", "--context-parallel", "2", "--causal", needle="--causal"),
            case(*flops, "--seq", "8", "--tensor-parallel", "2", "--elementwise", needle="--elementwise"),
            case(*flops, "--seq", "8", "--expert-parallel", "2", needle="has none"),
            case(*flops, "--seq", "8", "--tensor-parallel", "0"), case(*flops, "--seq", "8", "--virtual-stages", "2"),
            case(*flops, "--seq", "8", "--distributed-optimizer"), case(*flops, "--seq", "8", "--micro-batches", "2")]
    out += [case(*explain, "--claim", claim) for claim in
            ("abc", "0", "-5", "", "1e999999", "7 billionz", "1/0", "nan", "٣", DIGITS, "110M\x1b[2K")]
    out += [case(*explain, needle="--claim"), case("explain", "bert", "--claim", "110M", needle="V")]
    out += [case("sweep", "bert-base", "--of", "flops", "--grid", "L=1,2", needle="--seq"),
            case("sweep", "bert-base", "--of", "joules", "--grid", "L=1,2"),
            case("sweep", "bert-base", "--grid", "s=1,2", "--seq", "8", needle="--of"),
            case("sweep", "bert-base", "--of", "flops", "--grid", "s=0,8"),
            case("sweep", "bert-base", "--of", "flops", "--grid", "s=8,16", "--seq", "8", needle="s"),
            case("solve", "bert-base", "--target", "1e12", "--for", "s", needle="s"),
            case("solve", "bert-base", "--of", "flops", "--target", "1e12", "--for", "L", needle="--seq"),
            case("solve", "bert-base", "--of", "flops", "--seq", "8", "--target", "1e12", "--for", "A", needle="A")]
    return out


def lora_cases():
    """count and formula with a LoRA adapter: its rank, its targets, options given without --lora."""
    lora = ("count", "llama-3-8b", "--lora-targets", "q_proj,v_proj", "--lora")
    out = [case(*lora, rank, needle="lora") for rank in ("0", "-1", "1.5", "abc", "", DIGITS, "1e9", "٣")]
    out += [case("count", "llama-3-8b", "--lora", "8", "--lora-targets", target, needle=needle)
            for target, needle in (("qproj", "qproj"), ("q_proj,nothing", "nothing"), (",", "target"),
                                   ("input_layernorm", "input_layernorm"), ("self_attn", "self_attn"),
                                   ("layers.0.self_attn.q_proj", "layers.0"), ("", "target"),
                                   ("q_proj\x1b[2J", "q_proj"))]
    out += [case("count", "llama-3-8b", *extra, needle=needle) for extra, needle in (
        (("--lora-targets", "q_proj"), "--lora"), (("--dora",), "--dora"), (("--lora-bias", "all"), "--lora"),
        (("--lora", "8"), "--lora-targets"), (("--lora", "8", "--lora-targets", "q_proj", "--lora-bias", "some"),
                                              "some"))]
    out += [case("formula", "llama", "--dora", needle="--dora"),
            case("count", "mixtral-8x7b", "--lora", "8", "--lora-targets", "w1", needle="w3"),
            case("count", "mixtral-8x7b", "--lora", "8", "--lora-targets", "gate", "--dora", needle="DoRA"),
            case("count", "llama", "--lora", "8", "--lora-targets", "q_proj", needle="V")]
    lora = ("memory", "llama-3-8b", "--lora", "8", "--lora-targets", "q_proj")
    out += [case(*lora, "--fit", "80XB", needle="80XB"), case(*lora, "--dtype", "int4", needle="int4"),
            case(*lora, "--lora-bias", "all", needle="bias"), case("memory", "llama-3-8b", "--dora", needle="--dora"),
            case(*lora[:4], "--lora-targets", "nothing", needle="nothing"), case(*lora, "--seq", "0"),
            case(*lora, "--dtype", "int8", "--fit", "80GB", needle="int8")]
    return out


def audit_cases():
    """A checkpoint that is not one (its header read with a bounded size), a folder without one, a model or a
    dtype the audit cannot take."""
    out = [case("audit", name, "--model", "bert-base", "--dtype", "fp32", needle=name) for name in CHECKPOINTS
           if name not in ("st-good.safetensors", "st-empty.gguf")]
    out += [case("audit", name, "--model", "bert-base", "--dtype", "fp32", needle=needle) for name, needle in (
        ("st-index-no-shard", "gone.safetensors"), ("st-index-escape", "../st-good"), ("st-index-list", "index"),
        ("st-two-files", "st-two-files"), ("emptydir", "emptydir"), ("fifo", "fifo"), ("nothing.safetensors",
                                                                                   "nothing"))]
    out += [case("audit", "st-no-config", needle="--model"), case("audit", "st-no-dtype", needle="--dtype"),
            case("audit", "st-good.safetensors", "--model", "bert-base", needle="--dtype"),
            case("audit", "st-good.safetensors", "--model", "bert-base", "--dtype", "int8", needle="int8"),
            case("audit", "st-good.safetensors", "--model", "bert-base", "--dtype", "q8_0", needle="q8_0"),
            case("audit", "st-empty.gguf", "--model", "bert-base", "--dtype", "bf16", needle="bf16"),
            case("audit", "st-good.safetensors", "--config", "c-phimoe.json", "--dtype", "bf16", needle="phimoe"),
            *(case("audit", "st-good.safetensors", "--config", f"c-quant-{name}.json", needle=needle)
              for name, needle in (("bnb", "bitsandbytes"), ("list", "quantization_config"), ("gptq-3", "not 3"),
                                   ("gptq-group", "group_size"), ("awq-gemv", "gemv"),
                                   ("fp8-block", "weight_block_size"), ("fp8-skip", "modules_to_not_convert"))),
            case("audit", "st-good.safetensors", "--model", "bert-base", "--config", "c-bert.json", needle="both"),
            case("audit", "st-good.safetensors", "--model", "nosuchmodel", "--dtype", "fp32", needle="nosuchmodel"),
            case("audit", "/dev/zero", "--model", "bert-base", "--dtype", "fp32", needle="/dev/zero"),
            case("audit", needle="path")]
    return out


def shell_cases():
    """The shell's failures before any prompt (stdin is /dev/null: a prompt would read EOF and exit 0)."""
    return [case("shell", "--plain", "nosuchmodel"), case("shell", "bert-base", "extra"), case("shell", "--config", ""),
            case("shell", "--config", "c-list.json", "--plain"), case("shell", "llama-3-8b", "--set", "G=5"),
            case("shell", "bert-base", "--head", "seq2seq-lm")]


def encoding_cases():
    """Arguments that are not UTF-8 (a file name in Latin-1 from a shell): bytes, never a crash."""
    return [case(b"count", b"bert-base\xff"), case(b"count", b"bert-base", b"--set", b"H=\xff"),
            case(b"derive", b"bert-base", b"--format", b"md", b"--template", b"\xff.j2"),
            case(b"sweep", b"bert-base", b"--grid", b"H=768,\xff")]


TABLE = [*value_cases(), *switch_cases(), *head_and_key_cases(), *constraint_cases(), *missing_value_cases(),
         *option_cases(), *top_level_cases(), *generic_cases(), *config_cases(), *template_cases(),
         *output_cases(), *sweep_cases(), *solve_cases(), *cost_cases(), *lora_cases(), *audit_cases(), *shell_cases(),
         *encoding_cases()]
