"""What a config class reads beside its fields, as data for the inferred formulas: the legacy keywords it
renames (LFM2's ``block_ff_dim`` is ``intermediate_size``), the legacy names of layer kinds it renames in its
per-layer lists (``mamba`` is ``linear_attention``), the keys read from its keyword arguments that change the
count (refused when a config.json sets them otherwise) or the layer pattern the costs were traced with.  All
found from the pinned transformers by trying values, never written by hand.  Used by ``inferred_fields.py``."""

from __future__ import annotations

import functools
import itertools

from symparams.analysis.inference.audit import LABEL_MAPS, bumped
from symparams.analysis.inference.probing import Builder, attribute, config_class_of, configure, libraries
from symparams.families.config import flattened
from symparams.families.inferred import expanded, kinds_listed
from config_fields import legacy_names


def default_config(model_type: str):
    """The type's default config; the seeded one where its class refuses the default as it stands (Gemma 4's
    assistant): what a config.json that leaves a key out then means is the seeded value, which
    :func:`defaults_of` withholds."""
    _, transformers = libraries()
    try:
        return transformers.AutoConfig.for_model(model_type)
    except Exception:  # whatever the config class raises for its own default
        return configure(model_type, {})


@functools.lru_cache(maxsize=None)
def layer_pattern_keys(model_type: str) -> dict:
    """The keys a config class reads beside its fields that set its per-layer list of kinds when a config.json
    leaves the list out (Cohere 2's ``sliding_window_pattern``: every 4th layer full attention), each → its
    default: the costs hold for the default's list (a count they do not change; one they do is refused by the
    count, see :func:`legacy_of`)."""
    lists = {k: v for k, v in flattened(default_config(model_type).to_dict()).items() if is_layer_kinds(v)}
    out = {}
    for name, default in _read_beside(model_type).items():
        if not lists or isinstance(default, bool) or not isinstance(default, int) \
                or name in renamed_keywords(model_type):  # a field under another name: the costs follow it
            continue
        for key, value in itertools.product(_sub_configs_of(lists), (default * 2, default + 1, max(default // 2, 1))):
            try:
                moved = flattened(configure(model_type, {key + name: value, **_left_out(lists, key)}).to_dict())
            except Exception:  # the config class refuses that value: another is tried
                continue
            if any(moved.get(k) != v for k, v in lists.items()):
                out[key + name] = default
                break
    return out


def _sub_configs_of(lists) -> list[str]:
    """Where a config's ``lists`` (dotted keys) live: ``""`` for the config itself, then each sub-config's prefix
    (``text_config.``)."""
    return ["", *sorted({k.rpartition(".")[0] + "." for k in lists if "." in k})]


def _left_out(lists, prefix: str) -> dict:
    """Each of ``lists`` in the sub-config ``prefix`` set to None: the engine writes a sub-config in with its
    defaults, and a file that gives a key of it leaves its lists out, for the class to compute."""
    return {k: None for k in lists if prefix and k.startswith(prefix)}


def is_layer_kinds(value) -> bool:
    """A per-layer list of kinds: text entries, at least two (``["conv", "attention", ...]``)."""
    return isinstance(value, (list, tuple)) and len(value) > 1 and all(isinstance(x, str) for x in value)


@functools.lru_cache(maxsize=None)
def legacy_of(model_type: str, cls: str) -> dict:
    """The keys a config class reads from its extra keyword arguments rather than its fields and that change the
    count (Qwen3-Next's ``full_attention_interval``, which shapes its default ``layer_types``), each → the
    default its source gives (None when it gives none that is a plain value): a config.json that sets one
    otherwise is refused, since the formulas were fitted with the default."""
    renamed = renamed_keywords(model_type)  # a key that only renames a field is read as that field
    patterns = {k.rpartition(".")[2] for k in kind_patterns(model_type)}  # text read as a list of kinds
    read = {name: default for name, default in _read_beside(model_type).items()
            if name not in renamed and name not in patterns}
    if not read:
        return {}
    builder = Builder(model_type, cls)
    base = builder.observe({})
    return {name: default for name, default in read.items()
            if base is not None and _shapes_count(builder, base.total, name, default)}


def _shapes_count(builder: Builder, total: int, name: str, default) -> bool:
    """Whether another whole-number (or true-or-false) value of a key changes the count of the default config; a
    key with no default that takes no whole number is taken to (a text may set the layers; one a letter a layer is
    read, see :func:`kind_patterns`): the reader refuses a text or a number there, and reads a mapping
    (``rope_scaling``)."""
    if isinstance(default, bool):
        tries = [not default]
    elif isinstance(default, int):
        tries = [default * 2, default + 1, max(default // 2, 1)]
    elif default is None:
        tries = [2, 16]
    else:
        return False
    built = [obs for obs in (builder.observe({name: v}) for v in tries) if obs is not None]
    return any(obs.total != total for obs in built) or (default is None and not built)


def _read_beside(model_type: str) -> dict:
    """The keys a config class reads from its extra keyword arguments, each → its source's default."""
    import ast
    import inspect
    import textwrap

    _, transformers = libraries()
    try:
        config = configure(model_type, {})
    except Exception:  # a default config its class refuses: no class source to read
        return {}
    known = set(flattened(config.to_dict())) | set(transformers.PretrainedConfig().to_dict())
    out = {}
    subs = [type(c) for c in vars(config).values() if isinstance(c, transformers.PretrainedConfig)]
    for cls in {type(config), *subs}:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError, SyntaxError):  # no source to read
            continue
        for node in ast.walk(tree):
            if _kwargs_read(node):
                name = node.args[0].value
                if name not in known and "token_id" not in name:
                    default = node.args[1] if len(node.args) > 1 else None
                    out[name] = _literal(default)
    return dict(sorted(out.items()))


def _kwargs_read(node) -> bool:
    """Whether an AST node is ``kwargs.pop("name", ...)`` or ``kwargs.get("name", ...)``."""
    import ast

    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("pop", "get") \
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "kwargs" and bool(node.args) \
        and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)


def _literal(node):
    import ast

    try:
        value = ast.literal_eval(node) if node is not None else None
    except ValueError:  # a default the source computes
        return None
    return value if isinstance(value, (int, float, str, bool)) else None


def aliases_of(model_type: str, fields) -> dict:
    """The other names a config.json may give ``fields``: the config class's attribute map, and the legacy keywords
    it renames (LFM2's ``block_ff_dim`` is ``intermediate_size``)."""
    cls = config_class_of(model_type)
    mapping = {**renamed_keywords(model_type), **cls.attribute_map}
    return {alias: name for alias, name in sorted(mapping.items()) if name in fields}


@functools.lru_cache(maxsize=None)
def renamed_keywords(model_type: str) -> dict:
    """The legacy keywords ``model_type``'s config class renames, each → the field it sets (as
    ``scripts/config_fields.py`` finds them for the hand-written families); none where its default does not
    build."""
    try:
        return legacy_names(config_class_of(model_type))
    except Exception:  # a class whose default config it refuses: no default to compare a sentinel with
        return {}


def ignored_keys() -> list[str]:
    """Whole-number keys of any config.json that never change a shape: the generation settings and the common
    config's own (a config.json key outside every entry's fields and these is refused: it may change shapes)."""
    _, transformers = libraries()
    common = {**transformers.PretrainedConfig().to_dict(), **transformers.GenerationConfig().to_dict()}
    return sorted(k for k, v in common.items() if isinstance(v, int) and not isinstance(v, bool))


def renamed_kinds(model_types, patterned=None) -> dict:
    """The legacy names of layer kinds transformers renames as a config is built (``mamba`` is
    ``linear_attention``, ``attention`` is ``full_attention``), and each type's per-layer lists it renames them
    in: found by writing each list of the default config under the legacy names and reading it back; the lists
    each type (of ``patterned``, where given) takes as text (see :func:`kind_patterns`)."""
    from transformers.configuration_utils import _LEGACY_LAYER_TYPE_REMAP as legacy

    model_types = sorted(set(model_types))
    lists = {}
    for model_type in model_types:
        found = _renamed_lists(model_type, legacy)
        if found:
            lists[model_type] = found
    patterns = {t: found for t in (model_types if patterned is None else sorted(patterned))
                if (found := kind_patterns(t))}
    return {"names": dict(sorted(legacy.items())), "lists": lists, "patterns": patterns}


@functools.lru_cache(maxsize=None)
def kind_patterns(model_type: str) -> dict:
    """The keys a config class (or a sub-config's, dotted) reads beside its fields that write a per-layer list of
    kinds as text, one character a layer (Nemotron-H's ``hybrid_override_pattern``, ``"M-M*"``: linear attention,
    MLP, linear attention, full attention), each → ``[the list it writes, {character: kind}]``: found by writing
    each printable character alone, then all of them in a row, and reading the lists back."""
    try:
        lists = {k: v for k, v in flattened(default_config(model_type).to_dict()).items() if kinds_listed(v)}
    except Exception:  # a type whose default config does not build has no list to read
        return {}
    out = {}
    for name, default in _read_beside(model_type).items():
        for key in (prefix + name for prefix in _sub_configs_of(lists) if default is None):
            if (found := _pattern(model_type, key, lists)) is not None:
                out[key] = found
    return out


def _pattern(model_type: str, key: str, lists: dict) -> list | None:
    """``[the list, {character: kind}]`` the text ``key`` writes, a character a layer; None where it writes none."""
    # text no list reads leaves every list as it is: only a key refusing it, or reading it, is tried a letter at a
    # time
    if _lists_read(model_type, {key: PATTERN_CHARACTERS}, lists) == {}:
        return None
    listed, chars = None, {}
    for char in PATTERN_CHARACTERS:
        read = _lists_read(model_type, {key: char}, lists) or {}
        if len(read) == 1:
            (found, kinds), = read.items()
            if len(kinds) == 1 and listed in (None, found):
                listed, chars[char] = found, kinds[0]
    if chars and _lists_read(model_type, {key: "".join(chars)}, lists) == {listed: list(chars.values())}:
        return [listed, chars]
    return None


#: the characters a pattern of layer kinds is tried with
PATTERN_CHARACTERS = "".join(chr(c) for c in range(33, 127))


def _lists_read(model_type: str, values: dict, lists: dict) -> dict | None:
    """The per-layer lists of kinds ``values`` change from their defaults, each → its kinds (None: refused); the
    lists of a sub-config ``values`` write into left out (see :func:`_left_out`)."""
    unset = {}
    for key in values:
        unset.update(_left_out(lists, key.rpartition(".")[0] + "." if "." in key else ""))
    try:
        before = _lists_unset(model_type, tuple(sorted(unset))) if unset else lists
        held = flattened(configure(model_type, {**unset, **values}).to_dict())
    except Exception:  # the config class refuses that text
        return None
    return {k: expanded(held.get(k)) for k in lists if held.get(k) != before.get(k) and expanded(held.get(k))}


@functools.lru_cache(maxsize=None)
def _lists_unset(model_type: str, unset: tuple) -> dict:
    return flattened(configure(model_type, dict.fromkeys(unset)).to_dict())


def _renamed_lists(model_type: str, legacy: dict) -> list[str]:
    """The dotted keys of ``model_type``'s default config whose list of layer kinds comes back under the new names
    when written under the legacy ones."""
    older = {new: old for old, new in sorted(legacy.items(), reverse=True)}  # one legacy name of each kind
    try:
        flat = flattened(default_config(model_type).to_dict())
    except Exception:  # a type whose default config does not build has no list to read
        return []
    out = []
    for key, value in sorted(flat.items()):
        kinds = expanded(value)
        if not kinds or not any(kind in older for kind in kinds):
            continue
        written = [older.get(kind, kind) for kind in kinds]
        try:
            read = attribute(configure(model_type, {key: written}), key)
        except Exception:  # the config class refuses the legacy names there: not renamed
            continue
        if list(read or ()) == kinds:
            out.append(key)
    return out


@functools.lru_cache(maxsize=None)
def mappings_of(model_type: str, cls: str) -> dict:
    """The default config's mappings of whole numbers whose other values change the count (DeepSeek-V4's
    ``compress_rates``), each → its default: the formulas were fitted with it, so a config.json that sets one
    otherwise is refused."""
    flat = flattened(default_config(model_type).to_dict())
    found = {k: v for k, v in flat.items() if isinstance(v, dict) and v and bumped(v) != v
             and k.rpartition(".")[2] not in LABEL_MAPS and ".per_layer_config." not in f".{k}"}
    if not found:
        return {}
    builder = Builder(model_type, cls)
    base = builder.observe({})
    return {k: v for k, v in sorted(found.items()) if base is not None
            and (obs := builder.observe({k: bumped(v)})) is not None and obs.total != base.total}


@functools.lru_cache(maxsize=None)
def per_layer_overrides(model_type: str, cls: str) -> dict:
    """Each ``per_layer_config`` of the default config (transformers' fields overridden on some layers) whose other
    values change the count → the per-layer list of kinds and each kind's overrides, where the default's follow
    the kinds (Gemma 4's head width of 512 on every full-attention layer); else → its overrides by layer.  A
    config.json must override the layers its own list makes of a kind so, or, without a list, as the default
    does.  NeoMMe's per-layer windows change no count: not recorded; overrides whose other values do not build
    are, as nothing tells they do not."""
    flat = flattened(default_config(model_type).to_dict())
    builder, base = None, None
    out = {}
    marker = "per_layer_config."
    for prefix in sorted({k.partition(marker)[0] for k in flat if k.startswith(marker) or f".{marker}" in k}):
        layers = {int(k.rpartition(".")[2]): v for k, v in flat.items() if k.startswith(prefix + marker)}
        builder = builder or Builder(model_type, cls)
        base = base or builder.observe({})
        moved = builder.observe({prefix + "per_layer_config": {str(i): bumped(v) for i, v in layers.items()}})
        if base is not None and moved is not None and moved.total == base.total:
            continue  # other overrides build the same count (or none builds: held, as it cannot be told)
        kinds = flat.get(prefix + "layer_types")
        by_kind: dict = {}
        for index, kind in enumerate(kinds if isinstance(kinds, list) else ()):
            if by_kind.setdefault(kind, layers.get(index)) != layers.get(index):
                by_kind = {}
                break
        rule = {"list": prefix + "layer_types", "by_kind": {k: v for k, v in sorted(by_kind.items()) if v}} \
            if by_kind else {"layers": {str(i): v for i, v in sorted(layers.items())}}
        out[prefix + "per_layer_config"] = rule
    return out
