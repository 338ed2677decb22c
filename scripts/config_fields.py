"""Write the spellings and defaults of every config class a hand-written family reads, from the installed transformers.

    python scripts/config_fields.py           # rewrite symparams/families/data/config_fields.json
    python scripts/config_fields.py --check   # exit status 1 if the file is not what this transformers gives

For each ``model_type`` a family lists in ``config_types``, the config class
transformers maps it to is read three ways, none by hand:

- its ``attribute_map``: names the class accepts for another field
  (``Qwen3MoeConfig`` stores ``num_experts`` as ``num_local_experts``);
- legacy names its ``__post_init__`` (or ``__init__``) takes out of its
  keyword arguments (``kwargs.pop("n_embed")``): each is tried with a
  sentinel value, and kept when exactly one stored field takes that value
  (Falcon's and BLOOM's ``n_embed`` is ``hidden_size``);
- its default instance: every whole-number, true/false, text or null field
  (or list of those) as ``to_dict()`` saves it.  A field whose declared
  default differs from the default instance's value is computed from others
  when a file leaves it out (Falcon's ``ffn_hidden_size`` is
  4·``hidden_size``): it is listed as ``derived``, its default being the
  default instance's.

The file holds one line per type, sorted, and no timings, so one transformers version always
writes the same bytes (the test suite regenerates it and compares).
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from symparams.families.registry import all_families  # noqa: E402

DATA = ROOT / "symparams" / "families" / "data" / "config_fields.json"
#: values that no real default takes, tried in turn (a class may refuse the first: a width its heads must divide)
SENTINELS = (7919, 2 * 3 * 5 * 7 * 11 * 13 * 17 * 71)
#: what ``to_dict()`` writes that is no field of the model
NOT_FIELDS = ("model_type", "transformers_version", "architectures", "id2label", "label2id")
_POPPED = re.compile(r"""kwargs\.(?:pop|get)\(\s*["'](\w+)["']""")


def hand_types() -> list[str]:
    """Every ``model_type`` a hand-written family reads."""
    return sorted({t for fam in all_families().values() if fam.from_config is not None for t in fam.config_types})


def _plain(value) -> bool:
    """A value a default can be compared with: a number, true/false, text, null, or a list of those."""
    if isinstance(value, list):
        return all(_plain(v) and not isinstance(v, list) for v in value)
    return value is None or isinstance(value, (bool, int, str))


def _stored(config) -> dict:
    """A config's fields as ``to_dict()`` saves them, those of no model and the private ones left out (a private
    field the class declares stays: OPT's ``_remove_final_layer_norm``)."""
    declared = {f.name for f in dataclasses.fields(config)}
    return {k: v for k, v in config.to_dict().items()
            if k not in NOT_FIELDS and (not k.startswith("_") or k in declared)}


def _popped_names(cls) -> set[str]:
    """Names the class's own code (not ``PreTrainedConfig``'s) takes out of its keyword arguments."""
    from transformers import PreTrainedConfig

    names: set[str] = set()
    for klass in cls.__mro__:
        if klass is PreTrainedConfig or not (isinstance(klass, type) and issubclass(klass, PreTrainedConfig)):
            break
        try:
            names |= set(_POPPED.findall(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
    return names


def _renamed(cls, name: str, stored_default: dict) -> str | None:
    """The stored field a legacy keyword ``name`` sets (its value unchanged), or None if it is no rename."""
    for sentinel in SENTINELS:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                stored = _stored(cls(**{name: sentinel}))
        except Exception:  # noqa: BLE001 - the class refuses this value: try the next
            continue
        taken = [k for k, v in stored.items() if v == sentinel and stored_default.get(k) != sentinel
                 and not isinstance(v, bool)]
        if len(taken) != 1 or taken[0] == name:
            return None
        # a rename sets what the stored name would; Inkling's dense_intermediate_size also moves the old
        # intermediate_size to the experts' width: no rename
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return taken[0] if _stored(cls(**{taken[0]: sentinel})) == stored else None
    return None


def _common_defaults() -> dict:
    """What every config holds the same (``return_dict``, ``dtype``, ...): left out of each type's defaults."""
    from transformers import PreTrainedConfig

    return _stored(PreTrainedConfig())


def legacy_names(cls, default: dict | None = None) -> dict[str, str]:
    """Each legacy keyword config class ``cls`` renames (its value unchanged) → the stored field it sets."""
    default = _stored(cls()) if default is None else default
    out = {}
    for name in sorted(_popped_names(cls) - set(default) - set(cls.attribute_map)):
        target = _renamed(cls, name, default) or _renamed_flag(cls, name)
        if target is not None:
            out[name] = target
    return out


def _renamed_flag(cls, name: str) -> str | None:
    """The stored true-or-false field a legacy keyword ``name`` sets (LFM2's ``tie_embedding`` is
    ``tie_word_embeddings``): the one field that is true with it true and false with it false, as it is with
    that field set so; None if there is no such one field."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            given = {flag: _stored(cls(**{name: flag})) for flag in (True, False)}
            taken = [k for k, v in given[True].items() if v is True and given[False].get(k) is False and k != name]
            if len(taken) == 1 and all(_stored(cls(**{taken[0]: flag})) == given[flag] for flag in (True, False)):
                return taken[0]
    except Exception:  # noqa: BLE001 - the class refuses a true-or-false value there: no flag
        return None
    return None


def class_fields(model_type: str) -> dict:
    """The spellings (stored name → other names the class accepts), defaults and derived fields of a type's class."""
    from transformers import CONFIG_MAPPING

    cls = CONFIG_MAPPING[model_type]
    default = _stored(cls())
    spellings: dict[str, list[str]] = {}
    for alias, target in [*cls.attribute_map.items(), *legacy_names(cls, default).items()]:
        spellings.setdefault(target, []).append(alias)
    declared = {cls.attribute_map.get(f.name, f.name): f.default for f in dataclasses.fields(cls)
                if f.default is not dataclasses.MISSING}
    derived = sorted(k for k, v in declared.items() if k in default and default[k] != v)
    common = _common_defaults()
    defaults = {k: v for k, v in default.items() if _plain(v) and not (k in common and common[k] == v)}
    return {"class": cls.__name__, "spellings": {k: sorted(v) for k, v in sorted(spellings.items())},
            "defaults": dict(sorted(defaults.items())), "derived": derived}


def generate() -> str:
    """The data file's text."""
    import transformers

    transformers.logging.set_verbosity_error()  # a default config's token ids outside its own vocabulary

    lines = [f"{json.dumps(t)}: {json.dumps(class_fields(t), ensure_ascii=False)}" for t in hand_types()]
    return (f'{{"transformers_version": {json.dumps(transformers.__version__)}, "types": {{\n'
            + ",\n".join(lines) + "\n}}\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args(argv)
    text = generate()
    if args.check:
        same = DATA.exists() and DATA.read_text(encoding="utf-8") == text
        print(f"{DATA.relative_to(ROOT)}: {'up to date' if same else 'differs from what this transformers gives'}")
        return 0 if same else 1
    DATA.write_text(text, encoding="utf-8")
    print(f"wrote {DATA.relative_to(ROOT)} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
