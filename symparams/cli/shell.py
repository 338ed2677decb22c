"""``symparams shell [MODEL]``: an interactive Python prompt with symparams loaded.

IPython when it is installed (``--plain`` asks for the standard console),
the standard :mod:`code` console otherwise, with readline's history (kept in
``~/.symparams_history``) and tab completion where Python has readline.  The
namespace holds the symbols (``H``, ``L``, ...), ``model``, ``Model``,
``solve``, ``sweep``, ``sympy`` as ``sp``, every preset as a model (both in
``presets["bert-base"]`` and as ``bert_base``) and, when a model is named,
``m``.

>>> ns = namespace(None)
>>> ns["bert_base"].count, ns["presets"]["bert-large"].count
(109482240, 335141888)
>>> ns["H"].is_integer
True
>>> from symparams import model
>>> print(banner(model("bert-base")))  # doctest: +ELLIPSIS
symparams shell: bert-base (BERT): V=30522 P=512 S=2 H=768 L=12 A=12 r=4 pooler=true
  m.closed_form = H**2*(2*L*(r + 2) + 1) + H*(L*(r + 9) + P + S + V + 3)
  m.count = 109,482,240
Substitute values for a new model (m itself never changes):
  m.subs(L=24, H=1024, A=16).count    # 335,141,888
Loaded: m, model, Model, solve, sweep, sp, presets[...] and bert_base, ..., the symbols V P S H L A r (and the others by name)
"""

from __future__ import annotations

import builtins
import os
import sys
from typing import Any

import sympy as sp

from ..core.errors import SymparamsError
from ..core.formatting import thousands
from ..core.model import Model
from ..core.symbols import SYMBOLS
from ..documents.notebook import heading
from ..families.lookup import model
from ..families.presets import all_presets

HISTORY = "~/.symparams_history"


def _identifier(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def namespace(m=None) -> dict[str, Any]:
    """The names the shell starts with."""
    from ..analysis.solve import solve
    from ..analysis.sweep import sweep

    ns: dict[str, Any] = {name: info.symbol for name, info in SYMBOLS.items()}
    presets = {name: model(name) for name in all_presets()}
    for name, pm in presets.items():
        ident = _identifier(name)
        if ident.isidentifier() and ident not in ns:
            ns[ident] = pm
    ns.update(model=model, Model=Model, solve=solve, sweep=sweep, sp=sp, SymparamsError=SymparamsError,
              presets=presets)
    if m is not None:
        ns["m"] = m
    return ns


def _example(m) -> tuple[str, Any] | None:
    """A substitution that works for ``m``: ``("L=24, H=1024, A=16", count)``."""
    names = {s.name for s in m.symbols}
    tries = [dict(L=24, H=1024, A=16), dict(L=24, H=1024), dict(L=24)]
    tries += [{s.name: 2 * int(v)} for s, v in m.values.items() if v.is_Integer]
    for values in tries:
        if not set(values) <= names:
            continue
        try:
            new = m.subs(**values)
            result = new.count if not new.free else new.total
        except Exception:  # an example that breaks a constraint of this family: try the next
            continue
        return ", ".join(f"{k}={v}" for k, v in values.items()), result
    return None


def banner(m=None) -> str:
    """The text shown when the shell starts."""
    symbols = " ".join(s.name for s in m.symbols) + " (and the others by name)" if m is not None else \
        "V H L A ... (every symbol by name)"
    if m is None:
        return ("symparams shell: no model loaded; try\n"
                '  m = model("bert-base")\n'
                "  m.subs(L=24, H=1024, A=16).count\n"
                f"Loaded: model, Model, solve, sweep, sp, presets[...] and bert_base, ..., the symbols {symbols}")
    lines = [f"symparams shell: {heading(m)}", f"  m.closed_form = {sp.sstr(m.closed_form)}"]
    if not m.free:
        lines.append(f"  m.count = {thousands(m.count)}")
    elif m.values:
        lines.append(f"  m.total = {sp.sstr(m.total)}")
    example = _example(m)
    if example is not None:
        args, result = example
        call = f"m.subs({args}).{'count' if isinstance(result, int) else 'total'}"
        shown = thousands(result) if isinstance(result, int) else sp.sstr(result)
        lines += ["Substitute values for a new model (m itself never changes):", f"  {call}    # {shown}"]
    lines.append(f"Loaded: m, model, Model, solve, sweep, sp, presets[...] and bert_base, ..., the symbols {symbols}")
    return "\n".join(lines)


class _Printer:
    """The little of IPython's pretty printer that ``_repr_pretty_`` methods use."""

    def __init__(self):
        self.parts: list[str] = []

    def text(self, s: str) -> None:
        self.parts.append(s)


def _displayhook(value) -> None:
    """Show results as IPython would: models, breakdowns and proofs as tables."""
    if value is None:
        return
    builtins._ = None
    if hasattr(type(value), "_repr_pretty_"):
        p = _Printer()
        value._repr_pretty_(p, False)
        text = "".join(p.parts)
    else:
        text = repr(value)
    sys.stdout.write(text + "\n")
    builtins._ = value


def _readline(ns) -> str | None:
    """Tab completion over ``ns`` and a history file; the history path, or None without readline."""
    try:
        import readline
        import rlcompleter
    except ImportError:
        return None
    readline.set_completer(rlcompleter.Completer(ns).complete)
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    path = os.path.expanduser(HISTORY)
    try:
        readline.read_history_file(path)
    except OSError:
        pass
    readline.set_history_length(1000)
    return path


def plain(ns, text: str) -> None:
    """The standard console, with completion, history and pretty results."""
    import code

    history = _readline(ns)
    saved = sys.displayhook
    sys.displayhook = _displayhook
    try:
        code.InteractiveConsole(ns).interact(banner=text, exitmsg="")
    finally:
        sys.displayhook = saved
        if history is not None:
            import readline

            try:
                readline.write_history_file(history)
            except OSError:
                pass


def ipython(ns, text: str) -> bool:
    """IPython, if installed (False when it is not)."""
    try:
        from IPython import start_ipython
        from traitlets.config import Config
    except ImportError:
        return False
    config = Config()
    config.TerminalInteractiveShell.banner1 = text + "\n"
    config.TerminalInteractiveShell.confirm_exit = False
    start_ipython(argv=[], user_ns=ns, config=config)
    return True


def shell_command(m, args) -> None:
    """``symparams shell [MODEL] [--plain]``."""
    ns = namespace(m)
    text = banner(m)
    if getattr(args, "plain", False) or not ipython(ns, text):
        plain(ns, text)
