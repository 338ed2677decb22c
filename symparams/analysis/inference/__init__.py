"""Exact parameter counts of any transformers architecture, inferred from meta-device builds.

For a ``model_type`` and a head (``base``, ``causal-lm``, ...: an Auto class
of transformers), the engine finds the config's size fields and their
relations by perturbation, fits every parameter tensor's dimensions and
every module's repeat count exactly over rational bases, and assembles the
total as a SymPy closed form in the config's fields (written with symparams'
symbols where a field means one), with the conditions under which it holds
and a record of its verification against real builds of fresh random
configurations.  torch and transformers (the ``[infer]`` extra) are imported
only when the engine runs.

>>> from symparams.analysis.inference import AUTO_CLASSES
>>> AUTO_CLASSES["causal-lm"]
'AutoModelForCausalLM'
"""

from .engine import infer
from .probing import AUTO_CLASSES, MISSING_EXTRA
from .result import STANDARD, Conditions, Inferred, Relation, Verification, decode, encode, symbols_for

__all__ = ["AUTO_CLASSES", "MISSING_EXTRA", "STANDARD", "Conditions", "Inferred", "Relation", "Verification", "decode",
           "encode", "infer",
           "symbols_for"]
