"""The names transformers' code may read from a config, as data for the inferred formulas' reader: a config.json
key that names a size and that no formula was fitted over is refused, as the modeling code may read it and shape
the model by it; a key that no code of its type reads by name (LFM2's hub files carry ``block_dim`` and
``conv_dim``, which transformers 5 reads nowhere) is stored on the config and changes nothing.

A name counts as read where the source holds it as an attribute of something named like a config
(``config.conv_dim``, ``self.text_config.head_dim``) or as a string that is one identifier (``getattr(config,
"head_dim")``, ``kwargs.pop("block_ff_dim")``), in the library's shared modules (outside ``models/``) or in the
type's own packages (its config's, its model classes') and every model package they import from.  Conversion
scripts and modular sources are never imported, and not read.  Used by ``infer_formulas.py``."""

from __future__ import annotations

import ast
import functools
import importlib
import re
from pathlib import Path

from symparams.analysis.inference.probing import AUTO_CLASSES, config_class_of, libraries
from symparams.families.inferred_keys import NOT_SIZES, SIZE_WORDS

#: a string holding one identifier: a name code may read with getattr or from a dict
IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
#: a relative import of another model's package (``from ..llama.modeling_llama import ...``)
MODEL_IMPORT = re.compile(r"^\s*from \.\.(\w+)\.", re.MULTILINE)


def read_names(model_types) -> dict:
    """``{"shared": [...], "types": {model_type: [...]}}``: the names that may be sizes read in the shared modules,
    and each type's read in its own packages beside them."""
    shared = _shared()
    return {"shared": sorted(shared), "types": {t: sorted(names_read(t) - shared) for t in sorted(set(model_types))}}


def names_read(model_type: str) -> frozenset:
    """The names that may be sizes read from a config in ``model_type``'s packages and those they import."""
    root = _library()
    out, seen = set(), set()
    todo = list(_own_packages(model_type))
    while todo:
        package = todo.pop()
        if package in seen or not (root / "models" / package).is_dir():
            continue
        seen.add(package)
        for path in sorted((root / "models" / package).glob("*.py")):
            if not path.name.startswith(("modular_", "convert_")):
                out |= _file_names(path)
                todo += MODEL_IMPORT.findall(path.read_text(encoding="utf-8"))
    return frozenset(out)


def _own_packages(model_type: str) -> set[str]:
    """The model packages of ``model_type``'s config class and of every model class transformers maps it to."""
    _, transformers = libraries()
    modules = {config_class_of(model_type).__module__}
    for auto in set(AUTO_CLASSES.values()):
        mapping = getattr(transformers, auto)._model_mapping
        try:
            found = mapping[config_class_of(model_type)]
        except (KeyError, ValueError):  # no such head for this type
            continue
        modules |= {c.__module__ for c in (found if isinstance(found, tuple) else (found,))}
    return {m.split(".")[2] for m in modules if m.startswith("transformers.models.")}


@functools.lru_cache(maxsize=1)
def _shared() -> frozenset:
    root = _library()
    out = set()
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).parts[0] != "models":
            out |= _file_names(path)
    return frozenset(out)


@functools.lru_cache(maxsize=None)
def _file_names(path: Path) -> frozenset:
    """The names of one source file that may be sizes read from a config (see the module's docstring)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):  # a file the interpreter could not import either
        return frozenset()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _config_like(node.value):
            out.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and IDENTIFIER.match(node.value):
            out.add(node.value)
    # the reader refuses only such names, and never a private one
    return frozenset(n for n in out if any(w in n for w in SIZE_WORDS) and not any(w in n for w in NOT_SIZES)
                     and not n.startswith("_"))


def _config_like(node) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "config" in name or "cfg" in name


def _library() -> Path:
    return Path(importlib.import_module("transformers").__file__).parent
