"""The command line's grammar: every subcommand, its options, and the shared ``--set`` parsing."""

from __future__ import annotations

import argparse
from typing import Callable, Sequence

from ..core.errors import SymparamsError


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
        import symparams

        print(f"symparams {symparams.__version__}")
        parser.exit()


def build_parser(handlers: dict[str, Callable]) -> argparse.ArgumentParser:
    """The parser; ``handlers`` maps each subcommand to the function that runs it."""
    parser = _Parser(prog="symparams", description="Exact, symbolic parameter counts for Transformer models.")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    def model_command(name, help_, json_=True):
        p = sub.add_parser(name, help=help_)
        p.add_argument("model", nargs="?", help="a preset (bert-base, ...) or a family (bert, transformer)")
        p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="a value (V P S H L A r C ...) or a switch (pooler, positions, tie, bias, layernorm)")
        p.add_argument("--head", help="a task head, e.g. masked-lm")
        p.add_argument("--config", metavar="PATH", help="read a HuggingFace config.json instead of naming a model")
        if json_:
            p.add_argument("--json", action="store_true", help="machine-readable output")
        p.set_defaults(func=handlers[name])
        return p

    sub.add_parser("list", help="presets and families").set_defaults(func=handlers["list"])
    model_command("count", "count parameters, with a breakdown")
    model_command("formula", "the simplified closed form", json_=False).add_argument(
        "--latex", action="store_true", help="print LaTeX")
    model_command("prove", "prove whether the count depends on the head count A")
    _document_options(model_command("derive", "render a derivation document", json_=False))
    _explore_commands(model_command)
    return parser


def _document_options(p) -> None:
    p.add_argument("--format", required=True, choices=("md", "tex", "html"), help="Markdown, LaTeX or HTML")
    p.add_argument("--lang", default="en", choices=("en", "zh"), help="English or Chinese")
    p.add_argument("--title", help="the document's title")
    p.add_argument("-o", "--output", help="write to this file (default: standard output)")
    p.add_argument("--template", help="render your own Jinja template (sandboxed)")


def _explore_commands(model_command) -> None:
    p = model_command("solve", "the integer value of a symbol whose count is nearest a target")
    p.add_argument("--target", required=True, help="the parameter count to aim at")
    p.add_argument("--for", dest="symbol", required=True, help="the symbol to solve for (e.g. H)")
    p = model_command("sweep", "evaluate the count over a grid of values")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=SPEC",
                   help="start:stop:step or a,b,c (repeatable)")
    p.add_argument("--csv", help="write CSV to this file")
    p.add_argument("--plot", help="draw count against the first grid key into an SVG file")
    p.add_argument("--force", action="store_true", help="allow grids over 10^9 points")
    p = model_command("shell", "an interactive Python prompt with the model loaded", json_=False)
    p.add_argument("--plain", action="store_true", help="the standard Python console even if IPython is installed")
