"""symparams: exact, symbolic parameter counts for Transformer models.

>>> import symparams
>>> m = symparams.model("bert-base")
>>> m.subs(L=24, H=1024, A=16).count
335141888
>>> symparams.solve(m.subs(L=24, A=16), 10**9, "H").value
1808
>>> [row for row in symparams.sweep(m, L="12,24")]
[(12, 109482240), (24, 194536704)]

The package is layered; each layer imports only the ones before it:
``core`` (symbols, the Block tree, the Model), ``families`` (architectures,
presets, config.json), ``analysis`` (proof, solve, sweep), ``documents``
(derivations and their renderers), ``cli``.
"""

from .core.errors import SymparamsError
from .core.model import Model
from .families.lookup import model

__all__ = ["Model", "SymparamsError", "model", "solve", "sweep"]

_LAZY = {"solve": "symparams.analysis.solve", "sweep": "symparams.analysis.sweep"}  # the plain CLI stays fast


def __getattr__(name: str):
    if name == "__version__":
        from importlib.metadata import version  # looked up when asked: plain counting never needs it

        return version("symparams")
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'symparams' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_LAZY})
