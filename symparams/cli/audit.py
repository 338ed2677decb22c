"""``audit PATH``: a checkpoint's tensors, read from its headers, reconciled with the model's formula."""

from __future__ import annotations

import os

from ..core.errors import SymparamsError, printable
from ..core.formatting import thousands

#: the dtype names a config.json gives (``dtype``, formerly ``torch_dtype``) and their names here
CONFIG_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def cmd_audit(args, load) -> int:
    """Print the reconciliation; 2 when the checkpoint and the formula disagree (one line per category)."""
    from ..analysis.checkpoint import read_checkpoint
    from ..analysis.quantized_layout import read_layout
    from ..analysis.reconcile import audit

    checkpoint = read_checkpoint(args.path)
    config = args.config
    if args.model is None and config is None:
        config = os.path.join(checkpoint.folder, "config.json")
        if not os.path.isfile(config):
            raise SymparamsError(f"no config.json beside {args.path}: name the model with --model or --config")
    args.config = config
    m = load(args)
    if args.head is None:
        m = m.saved_model()
    gguf = checkpoint.format == "gguf"  # its type is the file's own, not the config's
    layout = None if gguf or not config else read_layout(_config(config).get("quantization_config"))
    found = audit(m, checkpoint, args.dtype if gguf or args.dtype else _config_dtype(config), layout)
    if args.json:
        from .parser import print_json

        print_json({"checkpoint": args.path, "files": list(checkpoint.files), **found.to_dict()})
        return 0 if found.ok else 2
    for line in found.lines():
        print(printable(line))
    for note in found.notes:
        print(f"note: {printable(note)}")
    if found.ok:
        print(printable(_summary(found)))
    return 0 if found.ok else 2


def _config_dtype(config: str | None) -> str:
    """The dtype the config.json names; refused where it names none (the checkpoint's own is no evidence)."""
    data = _config(config) if config else {}
    named = data.get("dtype", data.get("torch_dtype"))
    if named not in CONFIG_DTYPES:
        where = "the model is named without a config" if not config else f"{config} names {'no dtype' if named is None else repr(named)}"
        raise SymparamsError(f"say the dtype the tensors should be in with --dtype fp32, bf16 or fp16 ({where})")
    return CONFIG_DTYPES[named]


def _config(config: str) -> dict:
    """The JSON object of the config.json ``config`` names (a file or its folder)."""
    from ..families.config import read

    return read(config if not os.path.isdir(config) else os.path.join(config, "config.json"))


def _summary(found) -> str:
    """The line that says the checkpoint reconciles, with the figures of both sides."""
    if found.formula_bytes is None:
        return (f"ok: {found.tensors} tensors, {thousands(found.parameters)} parameters, names and shapes as the "
                f"formula of {found.model} gives ({thousands(found.formula_parameters)} parameters); "
                f"{thousands(found.bytes)} bytes, the types not checked (no --dtype): "
                f"{', '.join(f'{n} {kind}' for kind, n in found.stored_types.items())}")
    if found.quantization:
        return (f"ok: {found.tensors} tensors, {thousands(found.bytes)} bytes of {found.quantization} with the rest "
                f"in {found.dtype} ({', '.join(f'{n} {kind}' for kind, n in found.stored_types.items())}), as the "
                f"formula of {found.model} and the {found.quantization} layout give "
                f"({thousands(found.formula_parameters)} parameters, {thousands(found.formula_bytes)} bytes)")
    return (f"ok: {found.tensors} tensors, {thousands(found.parameters)} parameters and {thousands(found.bytes)} "
            f"bytes of {found.dtype}, as the formula of {found.model} gives ({thousands(found.formula_parameters)} "
            f"parameters, {thousands(found.formula_bytes)} bytes)")
