"""Reading the files users name (a config.json, a template): regular files of bounded size only.

A FIFO would wait forever for a writer and ``/dev/zero`` never ends, so
anything but a regular file is refused, and so is a file over the size
limit, before a byte is read.
"""

from __future__ import annotations

import os
import stat

from .errors import SymparamsError

#: the largest file symparams reads (a config.json is a few kilobytes, a template a few dozen)
MAX_BYTES = 1 << 20


def open_regular(path: str, what: str) -> int:
    """A descriptor of the regular file ``path``, open for reading; ``what`` names it in errors."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the open
    except FileNotFoundError:
        raise SymparamsError(f"{path}: no such file") from None
    except OSError as exc:
        raise SymparamsError(f"{path}: cannot read ({exc.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise SymparamsError(f"{path}: {'is ' if kind.startswith('a ') else ''}{kind}, not a {what}")
    return fd


def read_text(path: str, what: str, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of the regular file ``path``; ``what`` names it in errors (``"config.json"``)."""
    fd = open_regular(path, what)
    st = os.fstat(fd)
    if st.st_size > max_bytes:
        os.close(fd)
        raise SymparamsError(f"{path}: {st.st_size:,} bytes; a {what} is read only up to {max_bytes:,} bytes")
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise SymparamsError(f"{path}: cannot read ({exc.strerror})") from None
    if len(data) > max_bytes:
        raise SymparamsError(f"{path}: over {max_bytes:,} bytes; a {what} is read only up to that")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SymparamsError(f"{path}: not UTF-8 text") from None
