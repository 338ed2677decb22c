"""Files the command line writes: complete or not at all.

A file is written next to its target under a temporary name and renamed over
the target only once it is complete, so an error, a full disk or Ctrl-C
midway never leaves a partial file or destroys the old one, and two writers
never interleave.  A symbolic link is written through, as editors do: the
file it points to is replaced and the link stays.  A read-only file is
refused (even for root, who could write it: its mode says not to).  A
character device (``/dev/null``, ``/dev/stdout``) is written directly; a FIFO
(which could wait forever for a reader), a folder or anything else in the
target's place is refused.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import IO, Iterator

from ..core.errors import SymparamsError


@contextlib.contextmanager
def replacing(path: str, binary: bool = False) -> Iterator[IO]:
    """A file to write that takes ``path``'s place when the ``with`` block ends without an error."""
    mode = _mode_for(path)
    if mode is None:
        with _device(path, binary) as fh:
            yield fh
        return
    target = os.path.realpath(path)
    try:
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".symparams-",
                                         suffix=".part")
    except OSError as exc:
        raise SymparamsError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": ""})) as fh:
            yield fh
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError as exc:
        _remove(temporary)
        raise SymparamsError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        _remove(temporary)
        raise


def check_target(path: str) -> None:
    """Refuse now a path that :func:`replacing` would refuse later (before any other file is written)."""
    _mode_for(path)
    folder = os.path.dirname(os.path.realpath(path))
    if not os.path.isdir(folder):
        raise SymparamsError(f"cannot write {path}: no such folder {folder}")


def write_text(path: str, text: str) -> None:
    with replacing(path) as fh:
        fh.write(text)


@contextlib.contextmanager
def _device(path: str, binary: bool) -> Iterator[IO]:
    try:
        with open(path, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as fh:
            yield fh
    except OSError as exc:
        raise SymparamsError(f"cannot write {path}: {exc.strerror or exc}") from None


def _mode_for(path: str) -> int | None:
    """The permissions the file will have: the old file's, else what a new file gets (0666 less the umask);
    None for a character device, written in place."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
    except OSError as exc:
        raise SymparamsError(f"cannot write {path}: {exc.strerror}") from None
    if stat.S_ISCHR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        raise SymparamsError(f"cannot write {path}: not a regular file")
    if not (st.st_mode & 0o222 and os.access(path, os.W_OK)):
        raise SymparamsError(f"cannot write {path}: the file is read-only")
    return stat.S_IMODE(st.st_mode)


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
