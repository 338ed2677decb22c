"""Infer the closed form of every text model type of the installed transformers; write the data file and the table.

    nice -n 19 python scripts/infer_formulas.py --jobs 2             # every text type, two processes
    nice -n 19 python scripts/infer_formulas.py --only llama t5      # update some entries of the existing file
    nice -n 19 python scripts/infer_formulas.py --order-only         # only the parameters' order, one build a class
    python scripts/infer_formulas.py --table-only                    # only docs/inferred.md, from the data file
    python scripts/infer_formulas.py --budget 3000 --first gpt2,bert # stop starting types after 50 min

A text model type is one transformers maps to a causal-lm, masked-lm or
seq2seq-lm class; each is inferred with each of those classes it has, and
with ``base`` when it has a base model.  Writes
``symparams/families/data/inferred.json`` and ``docs/inferred.md`` (the
coverage table) after every type, so a run cut short leaves both usable.

The data file holds, per class: the verdict (or the reason it was not
inferred), the field → symbol mapping, every normalised parameter name with
its instance count and its dimensions (formulas as plain data, read back
without eval by :func:`symparams.analysis.inference.decode_value`), the
validity conditions and the verification record.  It is sorted and has no
timings, so two runs with one transformers version write the same bytes;
timings go to the table only.  Each class gets :data:`SECONDS` before it is
abandoned as "timed out".  Each exact class also keeps the order transformers
registers its parameters in and which are linear layers' weights (see
:mod:`symparams.analysis.inference.order`); ``--order-only`` adds that to the
existing file from one default build per class, the formulas untouched.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import resource
import signal
import sys
import time
from pathlib import Path

import sympy as sp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from symparams.analysis.inference import infer  # noqa: E402
from symparams.analysis.inference.audit import audit  # noqa: E402
from symparams.analysis.inference.cost_engine import infer_costs  # noqa: E402
from symparams.analysis.inference.layers import KIND, kind_counts  # noqa: E402
from symparams.analysis.inference.order import with_layout  # noqa: E402
from symparams.analysis.inference.probing import Builder, attribute, configure, libraries  # noqa: E402
from symparams.families.config import flattened  # noqa: E402
from symparams.families.inferred import branch_key  # noqa: E402
from symparams.families.inferred_tree import TOP_K_FIELDS  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from inferred_table import TABLE, costs_verdict, old_table, table  # noqa: E402

DATA = ROOT / "symparams" / "families" / "data" / "inferred.json"
#: symparams' classes and transformers' tables of the model types that have them (base first)
CLASS_TABLES = {"base": "MODEL_MAPPING_NAMES", "causal-lm": "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
                "masked-lm": "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
                "seq2seq-lm": "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES"}
LM_CLASSES = ("causal-lm", "masked-lm", "seq2seq-lm")
SECONDS = 600
#: the seconds a class's costs get before they are abandoned as "timed out" (the count is kept)
COST_SECONDS = 300
VERIFY = 10
SEED = 0


def bounded_memory(workers: int) -> None:
    """Let this process use at most its share of the machine's memory (address space), so that a class whose
    trace asks for more (BigBird's block-sparse attention asked for 24 GB) fails with its reason recorded instead
    of the kernel killing the run."""
    share = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (max(workers, 1) + 1)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (share if hard == resource.RLIM_INFINITY else min(share, hard), hard))


def _worker(workers: int) -> None:
    bounded_memory(workers)
    libraries()


class _TimedOut(Exception):
    pass


def text_types() -> dict[str, list[str]]:
    """Each text model type → the classes it has (base first, when it has one, then its LM classes)."""
    _, transformers = libraries()
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    tables = {cls: getattr(transformers.models.auto.modeling_auto, name) for cls, name in CLASS_TABLES.items()}
    text = sorted({t for cls in LM_CLASSES for t in tables[cls] if t in CONFIG_MAPPING_NAMES})
    return {t: [cls for cls in CLASS_TABLES if t in tables[cls]] for t in text}


def run_one(model_type: str, cls: str) -> tuple[dict, float, float]:
    """One class's stored entry, the seconds its count took and the seconds its costs took; any exception
    becomes the entry's (or its costs') reason."""
    def alarm(signum, frame):
        raise _TimedOut

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(SECONDS)
    start = time.perf_counter()
    inferred = None
    try:
        inferred = infer(model_type, cls, verify_configurations=VERIFY, seed=SEED)
        entry = with_layout(audited(inferred.to_dict()))
    except _TimedOut:
        entry = _failed(model_type, cls, f"timed out after {SECONDS} s")
    except Exception as exc:  # an error inside transformers that the engine did not expect: recorded, not fatal
        entry = _failed(model_type, cls, _one_line(exc))
    finally:
        signal.alarm(0)
    took = round(time.perf_counter() - start, 1)
    start = time.perf_counter()
    if entry["exact"]:
        signal.alarm(COST_SECONDS)
        try:
            entry["costs"] = infer_costs(inferred, seed=SEED, real=True).to_dict()
        except _TimedOut:
            entry["costs"] = {"exact": False, "reason": f"timed out after {COST_SECONDS} s"}
        except Exception as exc:  # as above: the count stays, the costs are not inferred
            entry["costs"] = {"exact": False, "reason": _one_line(exc)}
        finally:
            signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)
    return entry, took, round(time.perf_counter() - start, 1)


def _one_line(exc: Exception) -> str:
    lines = str(exc).splitlines()
    return f"{type(exc).__name__}: {lines[0][:160]}" if lines else type(exc).__name__


def _failed(model_type: str, cls: str, reason: str) -> dict:
    return {"model_type": model_type, "class": cls, "exact": False, "reason": reason}


def stored(entry: dict) -> dict:
    """What the data file keeps of a result: what a model needs beyond the total (its parameter names, counts
    and shapes, symbols, conditions) and the verification; a class not inferred keeps only its reason."""
    out = {k: entry[k] for k in ("model_type", "class", "model_class", "exact", "reason", "builds")}
    if not entry["exact"]:
        out["reason"] = entry["reason"] or "not inferred"
        return out
    out.update({k: entry[k] for k in ("symbols", "flags", "parameters")})
    out["conditions"] = {k: v for k, v in entry["conditions"].items() if k != "regime" and v}
    v = entry["verification"]
    out["verification"] = {k: v[k] for k in ("configurations", "exact", "seed", "default_formula", "default_real")}
    if entry.get("branches"):
        out["branches"] = [stored(b) for b in entry["branches"]]
    return out


def audited(result: dict) -> dict:
    """The stored entry of an inferred class, checked once more as ``count --config`` reads it (see
    :mod:`symparams.analysis.inference.audit`): a branch whose count differs from a build is dropped, a main
    formula whose count differs leaves the class not inferred, with the config that shows it."""
    entry = with_defaults(stored(result))
    while entry["exact"]:
        found = audit(entry)
        if not found.mismatches:
            entry["verification"]["confirmed"] = found.compared
            break
        wrong = {key for *_, key in found.mismatches}
        if () in wrong:
            return with_defaults(stored({**result, "exact": False, "reason": found.reason}))
        kept = [b for b in entry["branches"] if branch_key(b["conditions"]) not in wrong]
        entry = {k: v for k, v in entry.items() if k != "branches"} | ({"branches": kept} if kept else {})
    return entry


def defaults_of(model_type: str, fields) -> dict:
    """The default config's value of each of ``fields`` (what a config.json that leaves one out means)."""
    _, transformers = libraries()
    config = transformers.AutoConfig.for_model(model_type)
    values = {**flattened(config.to_dict()), "num_labels": config.num_labels}
    values.update({name: attribute(config, name) for name in fields if KIND in name})  # layers of one kind
    return {name: values[name] for name in sorted(fields) if name in values}


def with_defaults(entry: dict) -> dict:
    """An exact entry with its fields' defaults and how the config fills a field left out (kept in the entry;
    computed here for entries written before they were)."""
    if entry.get("branches"):
        entry = {**entry, "branches": [with_defaults(b) for b in entry["branches"]]}
    if not entry["exact"] or "follows" in entry:
        return entry
    fixed = entry.get("conditions", {}).get("fixed", {})
    fields = [*entry["symbols"], *entry["flags"], *fixed]
    sizes = sorted([*entry["symbols"], *(k for k, v in fixed.items() if not isinstance(v, bool))])
    known = set(fields).union(*(entry.get("conditions", {}).get(k, ()) for k in ("irrelevant", "derived", "unset")))
    flags = [*entry["flags"], *(k for k, v in fixed.items() if isinstance(v, bool))]
    # how many experts a token uses changes no shape, but the active count reads it
    top_k = [prefix + name for prefix in ("", "text_config.") for name in TOP_K_FIELDS]
    # a list whose kind counts are the formula's own fields is read as it is; another is checked against the rules
    kinds = {listed: rules for listed, rules in kinds_of(entry["model_type"], entry["class"], tuple(sizes)).items()
             if not any(name.startswith(listed + KIND) for name in entry["symbols"])}
    return {**entry, "defaults": defaults_of(entry["model_type"], [*fields, *top_k]),
            "follows": follows(entry["model_type"], sizes), "aliases": aliases_of(entry["model_type"], known),
            **({"texts": texts_of(entry["model_type"])} if flags else {}), **({"kinds": kinds} if kinds else {}),
            **({"legacy": legacy} if (legacy := legacy_of(entry["model_type"], entry["class"])) else {})}


#: text keys of every config.json that say nothing of its structure
NOT_STRUCTURE = ("_name_or_path", "dtype", "model_type", "torch_dtype", "transformers_version")


def texts_of(model_type: str) -> dict:
    """The default config's text keys: a config class may compute a flag from one (T5's ``is_gated_act`` from
    ``feed_forward_proj``), so a config.json that leaves a flag out takes its default only with these texts."""
    _, transformers = libraries()
    base = flattened(transformers.AutoConfig.for_model(model_type).to_dict())
    return {k: v for k, v in sorted(base.items()) if isinstance(v, str) and k.rpartition(".")[2] not in NOT_STRUCTURE}


@functools.lru_cache(maxsize=None)
def legacy_of(model_type: str, cls: str) -> dict:
    """The keys a config class reads from its extra keyword arguments rather than its fields and that change the
    count (Qwen3-Next's ``full_attention_interval``, which shapes its default ``layer_types``), each → the
    default its source gives (None when it gives none that is a plain value): a config.json that sets one
    otherwise is refused, since the formulas were fitted with the default."""
    read = _read_beside(model_type)
    if not read:
        return {}
    builder = Builder(model_type, cls)
    base = builder.observe({})
    return {name: default for name, default in read.items()
            if base is not None and _shapes_count(builder, base.total, name, default)}


def _shapes_count(builder: Builder, total: int, name: str, default) -> bool:
    """Whether another whole-number (or true-or-false) value of a key changes the count of the default config."""
    if isinstance(default, bool):
        tries = [not default]
    elif isinstance(default, int):
        tries = [default * 2, default + 1, max(default // 2, 1)]
    elif default is None:
        tries = [2, 16]
    else:
        return False
    return any(obs is not None and obs.total != total for obs in (builder.observe({name: v}) for v in tries))


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
    """The other names a config.json may give ``fields`` (the config class's attribute map)."""
    _, transformers = libraries()
    mapping = type(transformers.AutoConfig.for_model(model_type)).attribute_map
    return {alias: name for alias, name in sorted(mapping.items()) if name in fields}


def ignored_keys() -> list[str]:
    """Whole-number keys of any config.json that never change a shape: the generation settings and the common
    config's own (a config.json key outside every entry's fields and these is refused: it may change shapes)."""
    _, transformers = libraries()
    common = {**transformers.PretrainedConfig().to_dict(), **transformers.GenerationConfig().to_dict()}
    return sorted(k for k, v in common.items() if isinstance(v, int) and not isinstance(v, bool))


def _read(model_type: str, values: dict, names) -> dict | None:
    """What the config class makes of ``values`` for ``names`` (None: it refuses them)."""
    try:
        config = configure(model_type, values)
    except Exception:  # the config class refuses these values
        return None
    return {n: attribute(config, n) for n in names}


def follows(model_type: str, sizes: list[str]) -> dict:
    """Each size field the config class computes from others when a config.json leaves it out (T5's
    ``num_decoder_layers`` is ``num_layers``, a head width ``hidden_size // num_attention_heads``): its formula
    in their names, fitted exactly on the values the config class computes; None when no formula fits."""
    return dict(_follows(model_type, tuple(sizes)))


@functools.lru_cache(maxsize=None)  # the classes of one type share their fields
def _follows(model_type: str, sizes: tuple) -> tuple:
    base = _read(model_type, {}, sizes)
    if base is None:
        return ()
    out = {}
    for name in sizes:
        leaders = [f for f in sizes if f != name and isinstance(base[f], int) and _moves(model_type, f, name, base)]
        if leaders:
            out[name] = _fit_follower(model_type, name, leaders, base)
    return tuple(out.items())


@functools.lru_cache(maxsize=None)
def kinds_of(model_type: str, cls: str, sizes: tuple) -> dict:
    """Each per-layer list of kinds that shapes the parameters (see :mod:`symparams.analysis.inference.layers`) →
    how many layers of each kind the config class computes from the size fields (a rule as ``follows`` holds
    one; a whole number when no size moves it)."""
    out = {}
    for listed, kinds in kind_counts(model_type, cls).items():
        base = _read(model_type, {}, sizes) or {}
        rules = {}
        for kind in kinds:
            name = f"{listed}{KIND}{kind}"
            count = (_read(model_type, {}, [name]) or {}).get(name)
            leaders = [f for f in sizes
                       if isinstance(base.get(f), int) and _moves(model_type, f, name, {**base, name: count})]
            rules[kind] = _fit_follower(model_type, name, leaders, base) if leaders else count
        out[listed] = rules
    return out


def _moves(model_type: str, leader: str, name: str, base: dict) -> bool:
    for value in (base[leader] * 3, base[leader] + 1, base[leader] * 2, base[leader] // 2):
        back = _read(model_type, {leader: value}, [name])
        if back is not None and back[name] != base[name]:
            return True
    return False


def _size(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _fit_follower(model_type: str, name: str, leaders: list[str], base: dict):
    from symparams.analysis.inference.fitting import expression, fit
    from symparams.analysis.inference.result import encode_value

    rng = random.Random(f"{model_type}/{name}")
    points, values = [], []
    for _ in range(400):  # half the draws are multiples of the defaults: a config class may want divisibility
        if len(points) == 40:
            break
        jitter = rng.random() < 0.5
        point = {f: max(1, base[f] * rng.randint(1, 4) + rng.randint(-3, 3) if jitter else base[f] * rng.randint(1, 8))
                 for f in leaders}
        # the other sizes scaled by lcm(1..8), so that a width the config wants divisible by a leader is
        others = {f: v * 840 for f, v in base.items() if f not in leaders and f != name and _size(v)}
        back = _read(model_type, {**others, **point}, [name])
        if back is not None and isinstance(back[name], int) and not isinstance(back[name], bool):
            points.append(point)
            values.append(back[name])
    # a count of layers of one kind may be a layer pattern: a period of a layer count
    layers = frozenset(f for f in leaders if "layer" in f.rpartition(".")[2])
    found = fit(points, values, leaders, layers=layers) if len(points) >= 20 else None
    if found is None:
        return None
    return encode_value(sp.expand(expression(found, {f: sp.Symbol(f) for f in leaders})))


def serialise(version: str, entries: dict) -> str:
    """The data file: a header and one sorted, compact line per class (stable bytes, readable diffs)."""
    head = json.dumps({"ignored_keys": ignored_keys(), "transformers_version": version, "verify": VERIFY},
                      sort_keys=True)[:-1]
    return head + ', "formulas": [\n' + ",\n".join(line(entries[k]) for k in sorted(entries)) + "\n]}\n"


def line(entry: dict) -> str:
    """One class's line of the data file."""
    return json.dumps(with_defaults(entry), sort_keys=True, separators=(",", ":"))


def _load() -> dict:
    if not DATA.exists():
        return {}
    return {(e["model_type"], e["class"]): with_defaults(e) for e in json.loads(DATA.read_text())["formulas"]}


def _task(job: tuple[str, str]) -> tuple[str, str, dict, float, float]:
    """One class, in a worker process."""
    return (*job, *run_one(*job))


def results(jobs: list[tuple[str, str]], workers: int, budget: float):
    """Each job's ``(model_type, class, entry, seconds)`` as it is done: in order in this process, or, with
    ``workers`` above 1, longest first (by the existing table's timings) in that many processes; no job starts
    once ``budget`` seconds are spent."""
    start = time.perf_counter()
    if workers <= 1:
        for job in jobs:
            if time.perf_counter() - start > budget:
                print(f"budget spent: stopped before {job[0]}", file=sys.stderr, flush=True)
                return
            yield _task(job)
        return
    import multiprocessing

    timings = old_table()[0]
    jobs = sorted(jobs, key=lambda job: -sum(t or 0.0 for t in timings.get(job, ())))
    with multiprocessing.get_context("spawn").Pool(workers, initializer=_worker, initargs=(workers,),
                                                   maxtasksperchild=20) as pool:
        for done in pool.imap_unordered(_task, jobs):
            yield done
            if time.perf_counter() - start > budget:
                print("budget spent: the jobs not yet done are left", file=sys.stderr, flush=True)
                pool.terminate()
                return


def _laid_out(key: tuple[str, str]) -> tuple[tuple[str, str], dict]:
    """One class of the existing file with its layout, in a worker process."""
    return key, with_layout(_loaded()[key])


@functools.lru_cache(maxsize=1)
def _loaded() -> dict:
    return _load()


def order_only(only: list[str] | None, workers: int) -> int:
    """Add each exact class's layout (registration order, linear weights) to the existing data file: one default
    meta build per class (two with flags), no inference; the formulas are left as they are."""
    _, transformers = libraries()
    entries = _load()
    keys = [k for k in sorted(entries) if entries[k]["exact"] and (not only or k[0] in only)]
    if workers > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(workers, initializer=libraries, maxtasksperchild=40) as pool:
            laid = dict(pool.imap_unordered(_laid_out, keys))
    else:
        laid = dict(map(_laid_out, keys))
    entries.update(laid)
    DATA.write_text(serialise(transformers.__version__, entries))
    print(f"{len(laid)} classes laid out", file=sys.stderr)
    return 0


def table_only(note: str) -> int:
    """docs/inferred.md written again from the data file as it is (after entries were merged or edited by hand),
    the timings and the types not reached kept from the existing table."""
    _, transformers = libraries()
    seconds, not_reached = old_table()
    TABLE.write_text(table(_load(), transformers.__version__, seconds, not_reached, note))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="TYPE", help="update these types' entries in the existing file")
    parser.add_argument("--first", default="", help="comma-separated types to run before the others")
    parser.add_argument("--budget", type=float, default=float("inf"), help="seconds after which no type starts")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (the classes run longest first)")
    parser.add_argument("--note", default="", help="a sentence for the table's header (e.g. why a run was cut)")
    parser.add_argument("--order-only", action="store_true",
                        help="only add the parameters' registration order to the existing file (no inference)")
    parser.add_argument("--table-only", action="store_true",
                        help="only write docs/inferred.md from the existing data file (timings kept from the table)")
    args = parser.parse_args(argv)
    if args.order_only:
        return order_only(args.only, args.jobs)
    if args.table_only:
        return table_only(args.note)
    _, transformers = libraries()
    if args.jobs <= 1:
        bounded_memory(1)
    todo = text_types()
    if args.only:
        todo = {t: todo.get(t, ["base"]) for t in args.only}
    first = [t for t in args.first.split(",") if t in todo]
    order = first + [t for t in todo if t not in first]
    entries = _load() if args.only else {}
    seconds, old_not_reached = old_table() if args.only else ({}, [])
    start = time.perf_counter()
    jobs = [(t, cls) for t in order for cls in todo[t]]
    done: set = set()
    for model_type, cls, entry, took, cost_took in results(jobs, args.jobs, args.budget):
        entries[model_type, cls] = with_defaults(entry)
        seconds[model_type, cls] = (took, cost_took if entry["exact"] else None)
        done.add((model_type, cls))
        costs = entry.get("costs") or {}
        print(f"{model_type:28} {cls:12} {took:6.1f}s {cost_took:6.1f}s "
              f"{'exact' if entry['exact'] else entry['reason']}; costs: "
              f"{costs_verdict(costs) if entry['exact'] else '–'}", flush=True)
        if any((model_type, c) not in done for c in todo[model_type]):
            continue  # the type's other classes are still running: its row waits for them
        unfinished = [t for t in order if any((t, c) not in done for c in todo[t])]
        not_reached = [t for t in old_not_reached if t not in args.only] if args.only else unfinished
        DATA.parent.mkdir(parents=True, exist_ok=True)
        DATA.write_text(serialise(transformers.__version__, {k: v for k, v in entries.items()
                                                             if k[0] not in unfinished or args.only}))
        TABLE.write_text(table({k: v for k, v in entries.items() if k[0] not in unfinished or args.only},
                               transformers.__version__, seconds, not_reached, args.note))
    print(f"{len(entries)} classes, {sum(e['exact'] for e in entries.values())} exact, "
          f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
