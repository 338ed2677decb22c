"""The package's public surface: exactly ``__all__``, each name where the layers define it."""

import symparams
from symparams.analysis.solve import solve
from symparams.analysis.sweep import sweep
from symparams.core.errors import SymparamsError
from symparams.core.model import Model
from symparams.families.lookup import model


def test_public_surface_is_exactly_all():
    assert set(symparams.__all__) == {"Model", "SymparamsError", "model", "solve", "sweep"}
    public = {n for n in dir(symparams) if not n.startswith("_")}
    modules = {n for n in public if isinstance(getattr(symparams, n), type(symparams))}
    assert public - modules == set(symparams.__all__)
    assert (symparams.Model, symparams.SymparamsError, symparams.model, symparams.solve, symparams.sweep) == \
        (Model, SymparamsError, model, solve, sweep)
    assert SymparamsError.__module__ == "symparams"  # tracebacks name it where users import it from
