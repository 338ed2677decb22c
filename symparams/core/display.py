"""How core and analysis objects show themselves: the one call-time hook into the documents layer.

Like SymPy's ``Printable._repr_latex_``, a :class:`Displayable` object only
knows that notebooks and documents can show it; how is the business of
:mod:`symparams.documents.notebook`, imported the first time one is shown.
This is the package's one upward import into the documents layer (the
Model's analysis methods, :meth:`~symparams.core.model.Model.prove` and the
like, reach the analysis layer); ``tests/test_layers.py`` allows exactly these.
"""

from __future__ import annotations


def presentation():
    """The documents layer's notebook module (imported on first use: plain counting never needs it)."""
    from ..documents import notebook

    return notebook


class Displayable:
    """Jupyter's ``_repr_latex_``/``_repr_markdown_``/``_repr_html_`` and IPython's ``_repr_pretty_``."""

    def __init_subclass__(cls, **kwargs):
        # IPython's pretty printer takes a class's own ``__repr__`` (Model's, or the one
        # ``@dataclass`` writes for Proof) before an inherited ``_repr_pretty_``.
        super().__init_subclass__(**kwargs)
        cls._repr_pretty_ = Displayable._repr_pretty_

    def _repr_latex_(self) -> str:
        return presentation().latex(self)

    def _repr_markdown_(self) -> str:
        return presentation().markdown(self)

    def _repr_html_(self) -> str:
        return presentation().html(self)

    def _repr_pretty_(self, p, cycle):
        p.text(presentation().cycle_text(self) if cycle else presentation().text(self))


class Reported(Displayable):
    """A result shown as a report, a title, a table and notes (memory, FLOPs, a KV cache, an explanation): its
    text is the command line's, its notebook display that table in HTML or Markdown
    (:mod:`symparams.documents.results_view`)."""

    def __str__(self) -> str:
        return presentation().text(self)
