"""Notebook and console display of models and proofs (issue 5).

:class:`ModelDisplay` and :class:`ProofDisplay` are mixed into
:class:`~symparams.model.Model` and :class:`~symparams.proof.Proof`; they hold
the ``_repr_*_`` methods Jupyter and IPython call.
"""

from __future__ import annotations


class ModelDisplay:
    """Display methods for :class:`~symparams.model.Model`."""


class ProofDisplay:
    """Display methods for :class:`~symparams.proof.Proof`."""
