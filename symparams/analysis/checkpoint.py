"""A checkpoint's tensors read from its headers only: names, dtypes, shapes and bytes, never the weights.

safetensors (a file, or a folder of shards with ``model.safetensors.index.json``): an 8-byte little-endian
header length, then that many bytes of JSON naming each tensor's ``dtype``, ``shape`` and ``data_offsets``.
The length is checked against the file's size and safetensors' own limit (100,000,000 bytes) before a byte
of it is read, so a huge or truncated header is refused, never allocated.  GGUF: the ``gguf`` package's
``GGUFReader``, which maps the file and parses its header (the weights are not read).

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> with open(os.path.join(folder, "x.safetensors"), "wb") as fh:
...     _ = fh.write(b"\\xff" * 8)
>>> read_checkpoint(os.path.join(folder, "x.safetensors"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
symparams.SymparamsError: .../x.safetensors: a safetensors header of 18,446,744,073,709,551,615 bytes, over ...
>>> import shutil; shutil.rmtree(folder)
"""

from __future__ import annotations

import json
import math
import os
import struct
from typing import NamedTuple

from ..core.errors import SymparamsError
from ..core.files import open_regular, read_text

#: safetensors' own bound on a header (``MAX_HEADER_SIZE`` in its Rust sources)
MAX_HEADER = 100_000_000
#: bytes per element of each safetensors dtype (F4 and F6 pack below a byte: 1/2 and 3/4)
ELEMENT_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2,
                 "U16": 2, "I8": 1, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1}
INDEX = "model.safetensors.index.json"


class Tensor(NamedTuple):
    """One tensor as a checkpoint stores it: its name, dtype (``BF16``, ``Q4_K``), shape as stored, bytes."""

    name: str
    dtype: str
    shape: tuple
    bytes: int


class Checkpoint(NamedTuple):
    """A checkpoint's tensors, its format (``safetensors`` or ``gguf``), the files read and the folder they are
    in, the problems of its index (a tensor the index names but no shard holds, or the reverse), and a GGUF
    file's architecture (``llama``)."""

    format: str
    tensors: tuple
    files: tuple
    folder: str
    index_problems: tuple = ()
    architecture: str | None = None


def read_checkpoint(path: str) -> Checkpoint:
    """The checkpoint at ``path``: a ``.safetensors`` or ``.gguf`` file, an index file, or a folder holding
    one of them."""
    if os.path.isdir(path):
        path = _in_folder(path)
    folder = os.path.dirname(os.path.abspath(path))
    if path.endswith(".json"):
        return _sharded(path, folder)
    if _is_gguf(path):
        return _gguf(path, folder)
    return Checkpoint("safetensors", _safetensors(path), (path,), folder)


def _in_folder(folder: str) -> str:
    """The checkpoint a folder holds: its index, ``model.safetensors``, or its one safetensors or GGUF file."""
    for name in (INDEX, "model.safetensors"):
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    found = sorted(n for n in os.listdir(folder) if n.endswith((".safetensors", ".gguf")))
    if len(found) == 1:
        return os.path.join(folder, found[0])
    if found:
        raise SymparamsError(f"{folder}: {len(found)} checkpoint files and no {INDEX} saying how they go together: "
                             f"name one file")
    raise SymparamsError(f"{folder}: no checkpoint (no {INDEX}, no .safetensors or .gguf file)")


def _opened(path: str):
    """``path`` opened for reading, refused unless it is a regular file (a FIFO would wait forever)."""
    return os.fdopen(open_regular(path, "checkpoint"), "rb")


def _is_gguf(path: str) -> bool:
    with _opened(path) as fh:
        return fh.read(4) == b"GGUF"


def _safetensors(path: str) -> tuple[Tensor, ...]:
    with _opened(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        head = fh.read(8)
        if len(head) < 8:
            raise SymparamsError(f"{path}: {len(head)} bytes, not a safetensors file (it begins with an 8-byte "
                                 f"header length)")
        (length,) = struct.unpack("<Q", head)
        if length > min(MAX_HEADER, size - 8):
            why = "past the end of the file (truncated?)" if length <= MAX_HEADER else \
                f"over safetensors' limit of {MAX_HEADER:,}"
            raise SymparamsError(f"{path}: a safetensors header of {length:,} bytes, {why}: not a safetensors file "
                                 f"or a damaged one")
        raw = fh.read(length)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise SymparamsError(f"{path}: its header is not JSON: not a safetensors file or a damaged one") from None
    if not isinstance(header, dict):
        raise SymparamsError(f"{path}: its header is not a JSON object: not a safetensors file")
    data = size - 8 - length
    return tuple(_entry(path, name, entry, data) for name, entry in header.items() if name != "__metadata__")


def _entry(path: str, name: str, entry, data: int) -> Tensor:
    """One header entry, checked: a known dtype, a shape of whole numbers, offsets inside the data."""
    ok = isinstance(entry, dict) and isinstance(entry.get("dtype"), str) and isinstance(entry.get("shape"), list) \
        and all(type(d) is int and d >= 0 for d in entry["shape"]) and isinstance(entry.get("data_offsets"), list) \
        and len(entry["data_offsets"]) == 2 and all(type(o) is int for o in entry["data_offsets"])
    if not ok:
        raise SymparamsError(f"{path}: the header entry of {name[:80]!r} lacks a dtype, a shape or data_offsets")
    begin, end = entry["data_offsets"]
    if not 0 <= begin <= end <= data:
        raise SymparamsError(f"{path}: {name[:80]} lies outside the file's data (offsets {begin}..{end} of {data:,} "
                             f"bytes): a damaged or truncated file")
    return Tensor(name, entry["dtype"], tuple(entry["shape"]), end - begin)


def expected_bytes(t: Tensor) -> int | None:
    """The bytes ``t``'s shape holds in its dtype (None for a dtype whose size is not known here)."""
    element = ELEMENT_BYTES.get(t.dtype)
    return None if element is None else element * math.prod(t.shape)


def _sharded(index: str, folder: str) -> Checkpoint:
    """The shards an index names, each header read; a tensor in the index but in no shard (or the reverse) is
    a problem of the index."""
    try:
        data = json.loads(read_text(index, "safetensors index", max_bytes=MAX_HEADER))
    except ValueError:
        raise SymparamsError(f"{index}: not JSON: not a safetensors index") from None
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(f, str) for f in weight_map.values()):
        raise SymparamsError(f"{index}: no weight_map of tensor names to shard files: not a safetensors index")
    shards = sorted(set(weight_map.values()))
    for shard in shards:
        if os.path.basename(shard) != shard:
            raise SymparamsError(f"{index}: the shard {shard[:80]!r} is not a file beside the index")
        if not os.path.exists(os.path.join(folder, shard)):
            raise SymparamsError(f"{index}: the shard {shard[:80]!r} it names is not in {folder}")
    tensors, problems = [], []
    for shard in shards:
        for t in _safetensors(os.path.join(folder, shard)):
            tensors.append(t)
            if weight_map.get(t.name) != shard:
                problems.append(f"{t.name} is in {shard}, the index says {weight_map.get(t.name) or 'nothing'}")
    held = {t.name for t in tensors}
    problems += [f"{name} is in no shard (the index says {shard})" for name, shard in weight_map.items()
                 if name not in held]
    return Checkpoint("safetensors", tuple(tensors), tuple(os.path.join(folder, s) for s in shards), folder,
                      tuple(problems))


def _gguf(path: str, folder: str) -> Checkpoint:
    try:
        import gguf  # an optional library, read only for a GGUF file
    except ImportError:
        raise SymparamsError("reading a GGUF file needs the gguf package (pip install symparams[gguf])") from None
    try:
        reader = gguf.GGUFReader(path)
    except Exception as exc:  # the reader raises ValueError, struct.error, IndexError... on a damaged file
        raise SymparamsError(f"{path}: not a readable GGUF file ({type(exc).__name__})") from None
    # GGUF lists a tensor's dimensions innermost first (ne[0] is the row): reversed, they read as PyTorch's
    tensors = tuple(Tensor(t.name, t.tensor_type.name, tuple(int(d) for d in reversed(t.shape.tolist())),
                           int(t.n_bytes)) for t in reader.tensors)
    field = reader.fields.get("general.architecture")
    arch = bytes(field.parts[field.data[0]]).decode("utf-8", "replace") if field is not None and field.data else None
    return Checkpoint("gguf", tensors, (path,), folder, architecture=arch)
