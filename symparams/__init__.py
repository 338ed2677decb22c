"""symparams: exact, symbolic parameter counts for Transformer models."""

from .errors import SymparamsError
from .model import Model, model

__all__ = ["Model", "SymparamsError", "model"]
