"""A model named by its Hugging Face hub id (``ORG/NAME``, ``ORG/NAME@REVISION``): its config.json through
``huggingface_hub``'s own download and cache, as transformers and accelerate fetch it.

The library's settings hold: ``HF_HOME`` / ``HF_HUB_CACHE`` (where the cache is), ``HF_TOKEN`` (a gated or
private model), ``HF_HUB_OFFLINE=1`` (the cache only).  A preset's hub id needs neither the library nor the
network (``meta-llama/Meta-Llama-3-8B`` is the preset ``llama-3-8b``); any other id needs the optional
extra ``pip install 'symparams[hub]'``.  Every failure is one line saying what to do.

>>> hub_id("Qwen/Qwen2.5-1.5B@main"), hub_id("bert-bas"), hub_id("../x/config")
(('Qwen/Qwen2.5-1.5B', 'main'), None, None)
"""

from __future__ import annotations

import contextlib
import logging
import re

from ..core.errors import SymparamsError

#: ORG/NAME as the hub spells repositories (letters, digits, ``-``, ``_``, ``.``; no leading dot), then an
#: optional ``@REVISION`` (a branch, a tag or a commit)
_HUB_ID = re.compile(r"(?P<repo>[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95})(?:@(?P<revision>[\w./-]{1,255}))?",
                     re.ASCII)


def hub_id(name: str) -> tuple[str, str | None] | None:
    """(repository, revision or None) when ``name`` reads as a hub id, else None."""
    match = _HUB_ID.fullmatch(name)
    if match is None or ".." in name:
        return None
    return match["repo"], match["revision"]


@contextlib.contextmanager
def _quiet():
    """The library's warnings and progress bars held back while it fetches: a failure is our one line."""
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    logger = logging.getLogger("huggingface_hub")
    level, bars_off = logger.level, are_progress_bars_disabled()
    logger.setLevel(logging.CRITICAL)
    disable_progress_bars()
    try:
        yield
    finally:
        logger.setLevel(level)
        if not bars_off:
            enable_progress_bars()


def config_path(repo: str, revision: str | None) -> str:
    """The local path of ``repo``'s config.json (at ``revision``), downloaded or from the cache."""
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub import errors
    except ImportError:
        raise SymparamsError(f"{repo}: not a preset; a hub id's config.json is fetched by huggingface_hub: "
                             "pip install 'symparams[hub]' (or download config.json and pass --config)") from None
    where = f"{repo}@{revision}" if revision else repo
    try:
        with _quiet():
            return hf_hub_download(repo, "config.json", revision=revision)
    except errors.GatedRepoError:
        raise SymparamsError(f"{where}: a gated model: accept its terms on huggingface.co and set HF_TOKEN") from None
    except errors.RepositoryNotFoundError:
        raise SymparamsError(f"{where}: no such model on the hub (a private one needs HF_TOKEN)") from None
    except errors.RevisionNotFoundError:
        raise SymparamsError(f"{where}: the model has no revision {revision!r}") from None
    except errors.LocalEntryNotFoundError:
        raise SymparamsError(f"{where}: its config.json is not in the Hugging Face cache and the hub cannot be "
                             f"reached (offline: HF_HUB_OFFLINE, or no network); fetch it with `hf download "
                             f"{repo} config.json`, or pass --config PATH") from None
    except errors.EntryNotFoundError:
        raise SymparamsError(f"{where}: the model has no config.json") from None
    except (errors.HfHubHTTPError, OSError, ValueError) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise SymparamsError(f"{where}: cannot fetch its config.json: {first[:200]}") from None
