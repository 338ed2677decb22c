"""symparams: exact, symbolic parameter counts for Transformer models.

>>> import symparams
>>> m = symparams.model("bert-base")
>>> m.subs(L=24, H=1024, A=16).count
335141888
>>> symparams.solve(m.subs(L=24, A=16), 10**9, "H").value
1808
>>> [row for row in symparams.sweep(m, L="12,24")]
[(12, 109482240), (24, 194536704)]
"""

from .errors import SymparamsError
from .model import Model, model

__all__ = ["Model", "SymparamsError", "model", "solve", "sweep"]

_LAZY = ("solve", "sweep")  # from symparams.explore, imported on first use (the plain CLI stays fast)


def __getattr__(name: str):
    if name in _LAZY:
        from . import explore

        return getattr(explore, name)
    raise AttributeError(f"module 'symparams' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_LAZY})
