"""Infer the closed form of every text model type of the installed transformers; write the data file and the table.

    nice -n 19 python scripts/infer_formulas.py --jobs 2             # every text type, two processes
    nice -n 19 python scripts/infer_formulas.py --only llama t5      # update some entries of the existing file
    nice -n 19 python scripts/infer_formulas.py --order-only         # only the parameters' order, one build a class
    nice -n 19 python scripts/infer_formulas.py --runs-only          # only the head widths the forward runs at
    nice -n 19 python scripts/infer_formulas.py --costs-only --jobs 2 # the costs not inferred, the counts kept
    nice -n 19 python scripts/infer_formulas.py --audit-only --jobs 2 # every exact entry read and built again
    python scripts/infer_formulas.py --table-only                    # only docs/inferred.md, from the data file
    nice -n 19 python scripts/infer_formulas.py --sub-defaults-only  # only what a sub-config left without a field holds
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
import resource
import signal
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# one torch thread per process (the spawned workers inherit it): the traced models are tiny, and with a thread
# per core in each of --jobs workers the threads wait on each other for most of each operation
os.environ.setdefault("OMP_NUM_THREADS", "1")

from symparams.analysis.inference import infer  # noqa: E402
from symparams.analysis.inference.audit import audit  # noqa: E402
from symparams.analysis.inference.cost_engine import infer_costs  # noqa: E402
from symparams.analysis.inference.long_check import long_sequence_check  # noqa: E402
from symparams.analysis.inference.order import with_layout  # noqa: E402
from symparams.analysis.inference.probing import libraries  # noqa: E402
from symparams.analysis.inference.running import width_rules  # noqa: E402
from symparams.analysis.inference.tracing import dispatch_modes_restored  # noqa: E402
from symparams.families.inferred import branch_key  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from config_keywords import ignored_keys, renamed_kinds  # noqa: E402
from config_reads import read_names  # noqa: E402
from inferred_fields import with_cost_texts, with_defaults  # noqa: E402
from inferred_table import TABLE, costs_verdict, old_table, table  # noqa: E402
from sub_config_defaults import with_sub_defaults  # noqa: E402

DATA = ROOT / "symparams" / "families" / "data" / "inferred.json"
#: symparams' classes and transformers' tables of the model types that have them (base first)
CLASS_TABLES = {"base": "MODEL_MAPPING_NAMES", "causal-lm": "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
                "masked-lm": "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
                "seq2seq-lm": "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES"}
LM_CLASSES = ("causal-lm", "masked-lm", "seq2seq-lm")
SECONDS = 900
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


def _worker(workers: int, cost_seconds: int = COST_SECONDS, seconds: int = SECONDS) -> None:
    global COST_SECONDS, SECONDS
    COST_SECONDS, SECONDS = cost_seconds, seconds
    bounded_memory(workers)
    libraries()


class _TimedOut(BaseException):
    """A class's time is up: a BaseException, so that the engine's ``except Exception`` around one trace (a
    configuration that does not build) cannot take it for a failed trace and go on."""


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
            with dispatch_modes_restored():  # the alarm may stop a trace inside its recorder's dispatch
                entry["costs"] = with_cost_texts(model_type, infer_costs(inferred, seed=SEED, real=True).to_dict())
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
    :func:`checked`)."""
    return checked(with_defaults(stored(result)))


def checked(entry: dict) -> dict:
    """``entry`` checked as ``count --config`` reads it (see :mod:`symparams.analysis.inference.audit`): a
    branch whose count differs from a build is dropped, a main formula whose count differs leaves the class not
    inferred, with the config that shows it; how many configs were compared is recorded."""
    while entry["exact"]:
        found = audit(entry)
        if not found.mismatches:
            entry["verification"]["confirmed"] = found.compared
            break
        wrong = {key for *_, key in found.mismatches}
        if () in wrong:
            kept = {k: entry[k] for k in ("model_type", "class", "model_class", "builds") if k in entry}
            return with_defaults({**kept, "exact": False, "reason": found.reason})
        kept = [b for b in entry["branches"] if branch_key(b["conditions"]) not in wrong]
        entry = {k: v for k, v in entry.items() if k != "branches"} | ({"branches": kept} if kept else {})
    return entry


def serialise(version: str, entries: dict) -> str:
    """The data file: a header and one sorted, compact line per class (stable bytes, readable diffs)."""
    head = json.dumps({"ignored_keys": ignored_keys(), "read_names": read_names(k[0] for k in entries),
                       "renamed_kinds": renamed_kinds(k[0] for k in entries),
                       "transformers_version": version, "verify": VERIFY}, sort_keys=True)[:-1]
    return head + ', "formulas": [\n' + ",\n".join(line(entries[k]) for k in sorted(entries)) + "\n]}\n"


def line(entry: dict) -> str:
    """One class's line of the data file."""
    return json.dumps(with_costs_reason(with_defaults(entry)), sort_keys=True, separators=(",", ":"))


#: the costs of an exact class that no run inferred (its count kept from a run that traced none)
NOT_TRACED = "the count was kept from a run that traced no costs"


def with_costs_reason(entry: dict) -> dict:
    """``entry`` with costs that are exact or say why not: an exact count whose costs no run inferred (kept from
    an earlier run, or by ``--costs-only`` where a fresh inference counts otherwise) is written with that reason,
    never without one (docs/inferred.md shows it to users, and the reader refuses the costs with it)."""
    costs = entry.get("costs")
    if not entry["exact"] or (costs and (costs.get("exact") or costs.get("reason"))):
        return entry
    return {**entry, "costs": {**(costs or {}), "exact": False, "reason": NOT_TRACED}}


def _load() -> dict:
    if not DATA.exists():
        return {}
    return {(e["model_type"], e["class"]): with_defaults(e) for e in json.loads(DATA.read_text())["formulas"]}


def _task(job: tuple[str, str]) -> tuple[str, str, dict, float, float]:
    """One class, in a worker process."""
    return (*job, *run_one(*job))


def results(jobs: list[tuple[str, str]], workers: int, budget: float, shortest_first: bool = False):
    """Each job's ``(model_type, class, entry, seconds)`` as it is done: in order in this process, or, with
    ``workers`` above 1, longest first (by the existing table's timings; ``shortest_first``: the most classes
    done within a budget) in that many processes; no job starts once ``budget`` seconds are spent."""
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
    jobs = sorted(jobs, key=lambda job: sum(t or 0.0 for t in timings.get(job, ())), reverse=not shortest_first)
    with multiprocessing.get_context("spawn").Pool(workers, initializer=_worker, initargs=(workers, COST_SECONDS, SECONDS),
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


def _sub_key(key: tuple[str, str]) -> tuple[tuple[str, str], dict]:
    return key, with_sub_defaults(_loaded()[key])


def sub_defaults_only(only: list[str] | None, workers: int) -> int:
    """Add to each exact class (of ``only``) what a field of its sub-configs is when a config.json gives the
    sub-config without it (see ``sub_config_defaults.py``): config builds (and two default builds where a key
    that is no field changes), the formulas left as they are."""
    _, transformers = libraries()
    entries = _load()
    keys = [k for k in sorted(entries) if entries[k]["exact"] and (not only or k[0] in only)]
    for key, entry in _mapped(_sub_key, keys, workers):
        entries[key] = entry
        print(f"{key[0]:28} {key[1]:12} {'sub-config fields read' if _has_sub(entry) else '-'}", file=sys.stderr,
              flush=True)
    DATA.write_text(serialise(transformers.__version__, entries))
    changed = [f"{k[0]} {k[1]}" for k in keys if _has_sub(entries[k])]
    print(f"{len(keys)} classes read; with fields a given sub-config fills otherwise: {', '.join(changed) or 'none'}",
          file=sys.stderr)
    return 0


def _mapped(task, keys: list, workers: int):
    """``task`` of each key as it is done: here, or in ``workers`` processes."""
    if workers <= 1:
        yield from map(task, keys)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(workers, initializer=libraries, maxtasksperchild=40) as pool:
        yield from pool.imap_unordered(task, keys)


def _has_sub(entry: dict) -> bool:
    parts = ("sub_defaults", "sub_follows", "sub_held")
    return any(p in e for e in [entry, *entry.get("branches", ())] for p in parts)


def _checked_key(key: tuple[str, str]) -> tuple[tuple[str, str], dict]:
    """One class of the data file checked again as count --config reads it, and its FLOPs at a long sequence
    (see :mod:`symparams.analysis.inference.long_check`), in a worker process."""
    entry = checked(_loaded()[key])
    if entry["exact"] and (entry.get("costs") or {}).get("exact"):
        try:
            wrong = long_sequence_check(entry)
        except Exception as exc:  # a check that cannot run cannot vouch for the costs either
            wrong = f"the check at a long sequence failed: {_one_line(exc)}"
        entry = {**entry, "costs": {"exact": False, "reason": wrong}} if wrong is not None else _runs_where(entry)
    return key, entry


def _runs_where(entry: dict) -> dict:
    """``entry`` with the head widths transformers' forward runs at (see
    :mod:`symparams.analysis.inference.running`), or with its costs refused where no pattern says which."""
    try:
        rules = width_rules(entry)
    except Exception as exc:  # a probe that cannot run cannot say where the model runs
        rules = f"the head widths the forward pass runs at could not be traced: {_one_line(exc)}"
    if rules is None:  # nothing runs to start from: nothing is known, nothing recorded
        return entry
    if isinstance(rules, str):
        return {**entry, "costs": {"exact": False, "reason": rules}}
    return {**entry, "costs": {**entry["costs"], "runs": rules}}


def _runs_key(key: tuple[str, str]) -> tuple[tuple[str, str], dict]:
    return key, _runs_where(_loaded()[key])


def runs_only(only: list[str] | None, workers: int) -> int:
    """Add to each class with exact costs the head widths transformers' forward runs at (a rotary embedding needs
    an even rotated width), tracing only that; the formulas are left as they are."""
    _, transformers = libraries()
    entries = _load()
    keys = [k for k in sorted(entries) if (entries[k].get("costs") or {}).get("exact") and (not only or k[0] in only)]
    if workers > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(workers, initializer=libraries, maxtasksperchild=20) as pool:
            found = dict(pool.imap_unordered(_runs_key, keys))
    else:
        found = dict(map(_runs_key, keys))
    for key, entry in sorted(found.items()):
        costs = entry["costs"]
        shown = costs.get("runs", "no run to start from") if costs["exact"] else f"refused: {costs['reason']}"
        print(f"{key[0]:28} {key[1]:12} {shown}")
    entries.update(found)
    DATA.write_text(serialise(transformers.__version__, entries))
    seconds, not_reached = old_table()
    TABLE.write_text(table(entries, transformers.__version__, seconds, not_reached, ""))
    return 0


def audit_only(todo: dict[str, list[str]], workers: int) -> int:
    """Check the exact classes of ``todo`` (type → classes) in the data file as written, without inferring: each
    read as count --config reads it against builds (an entry a build contradicts is refused, a branch dropped,
    and each records how many configs were compared) and its FLOPs traced at a long sequence (costs that miss
    are refused).  Every run that infers ends with this over what it wrote."""
    _, transformers = libraries()
    _loaded.cache_clear()
    entries = _load()
    keys = [(t, c) for t, classes in todo.items() for c in classes if entries.get((t, c), {}).get("exact")]
    if workers > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(workers, initializer=_worker, initargs=(workers, COST_SECONDS, SECONDS),
                                                       maxtasksperchild=20) as pool:
            for key, entry in pool.imap_unordered(_checked_key, keys):
                entries[key] = _reported(key, entries[key], entry)
    else:
        fresh_data()
        for key in keys:
            entries[key] = _reported(key, entries[key], _checked_key(key)[1])
    DATA.write_text(serialise(transformers.__version__, entries))
    seconds, not_reached = old_table()
    TABLE.write_text(table(entries, transformers.__version__, seconds, not_reached, ""))
    return 0


def fresh_data() -> None:
    """Forget the data file this process read (the runtime reads it once): the checks read what was written."""
    from symparams.families import inferred, inferred_data

    inferred_data._file.cache_clear()
    inferred_data.data.cache_clear()
    inferred_data.entries.cache_clear()
    inferred.family.cache_clear()


def _reported(key: tuple[str, str], old: dict, new: dict) -> dict:
    """``new``, after a line saying what the check of ``key`` found."""
    if not new["exact"]:
        verdict = f"refused: {new['reason']}"
    else:
        dropped = len(old.get("branches", ())) - len(new.get("branches", ()))
        verdict = f"{new['verification']['confirmed']} configs read" + (f", {dropped} branch(es) dropped" if dropped
                                                                          else "")
        if (old.get("costs") or {}).get("exact") and not new["costs"]["exact"]:
            verdict += f"; costs refused: {new['costs']['reason']}"
    print(f"{key[0]:28} {key[1]:12} {verdict}", flush=True)
    return new


def table_only(note: str) -> int:
    """docs/inferred.md written again from the data file as it is (after entries were merged or edited by hand),
    the timings and the types not reached kept from the existing table."""
    _, transformers = libraries()
    seconds, not_reached = old_table()
    TABLE.write_text(table(_load(), transformers.__version__, seconds, not_reached, note))
    return 0


def costs_todo(entries: dict, only: list[str] | None) -> dict[str, list[str]]:
    """The exact classes whose costs to infer again: every one of ``only``'s types, or those not inferred."""
    todo: dict[str, list[str]] = {}
    for (model_type, cls), entry in sorted(entries.items()):
        if entry["exact"] and (model_type in only if only else not (entry.get("costs") or {}).get("exact")):
            todo.setdefault(model_type, []).append(cls)
    return todo


#: what an entry's count is: a fresh inference with the same gives costs that belong to the stored entry
COUNT_KEYS = ("parameters", "symbols", "conditions", "flags")


def costs_merged(old: dict, new: dict) -> dict:
    """The stored entry ``old`` with the costs of the fresh inference ``new`` where its count is the same (the
    costs are fitted over the fresh discovery); otherwise ``old`` (where its costs are not exact, with the reason
    they stay unknown), and a line on stderr."""
    same = {k: _as_stored(old.get(k)) == _as_stored(new.get(k)) for k in COUNT_KEYS}
    if new["exact"] and all(same.values()):
        return {**old, "costs": new.get("costs")}
    differs = next((k for k, equal in same.items() if not equal), new.get("reason"))
    print(f"{old['model_type']} {old['class']}: the count came out otherwise ({differs}); its entry is kept",
          file=sys.stderr, flush=True)
    if (old.get("costs") or {}).get("exact") or not old["exact"]:
        return old
    refused = (new.get("costs") or {}) if new["exact"] else {}
    if refused and not refused.get("exact") and refused.get("reason"):
        # the costs were traced and refused for what the model does (BigBird's block-sparse attention is
        # rebuilt at short lengths), whichever count they were fitted over: that is why they are unknown
        return {**old, "costs": {"exact": False, "reason": refused["reason"]}}
    # the fresh costs belong to another count: the kept count's costs stay unknown, and the reason says why
    fresh = f"differs in its {differs}" if new["exact"] else f"is not exact ({new.get('reason')})"
    return {**old, "costs": {"exact": False, "reason": f"a fresh inference of the count {fresh}, and the stored "
                                                       f"count was kept"}}


def _as_stored(value):
    """``value`` as the data file gives it back (tuples as lists)."""
    return json.loads(json.dumps(value, sort_keys=True))


def main(argv=None) -> int:
    global COST_SECONDS, SECONDS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="TYPE", help="update these types' entries in the existing file")
    parser.add_argument("--skip", nargs="+", default=[], metavar="TYPE", help="leave these types out of this run")
    parser.add_argument("--first", default="", help="comma-separated types to run before the others")
    parser.add_argument("--budget", type=float, default=float("inf"), help="seconds after which no type starts")
    parser.add_argument("--shortest-first", action="store_true",
                        help="run the classes shortest first (by the table's timings): the most done within --budget")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (the classes run longest first)")
    parser.add_argument("--seconds", type=int, default=SECONDS,
                        help="seconds a class's count gets before it is abandoned (more for a type of many nested "
                             "sub-configs, whose discovery builds many)")
    parser.add_argument("--cost-seconds", type=int, default=COST_SECONDS,
                        help="seconds a class's costs get before they are abandoned (more on a machine shared with "
                             "other runs, where the same traces take longer)")
    parser.add_argument("--note", default="", help="a sentence for the table's header (e.g. why a run was cut)")
    parser.add_argument("--order-only", action="store_true",
                        help="only add the parameters' registration order to the existing file (no inference)")
    parser.add_argument("--costs-only", action="store_true",
                        help="infer again only the costs of exact classes (of --only, or whose costs are not inferred); "
                             "a class's count entry is kept, and its costs replaced only where the count comes out "
                             "the same")
    parser.add_argument("--audit-only", action="store_true",
                        help="only check the exact entries of the existing file (of --only) again as count --config "
                             "reads them, against builds (no inference)")
    parser.add_argument("--runs-only", action="store_true",
                        help="only add to each class with exact costs (of --only) the head widths transformers' "
                             "forward runs at, traced (no inference)")
    parser.add_argument("--sub-defaults-only", action="store_true",
                        help="only record, for each exact class (of --only), what a field of a sub-config is when a "
                             "config.json gives the sub-config without it (config builds, no inference)")
    parser.add_argument("--table-only", action="store_true",
                        help="only write docs/inferred.md from the existing data file (timings kept from the table)")
    args = parser.parse_args(argv)
    COST_SECONDS, SECONDS = args.cost_seconds, args.seconds
    if args.order_only:
        return order_only(args.only, args.jobs)
    if args.runs_only:
        return runs_only(args.only, args.jobs)
    if args.table_only:
        return table_only(args.note)
    if args.sub_defaults_only:
        return sub_defaults_only(args.only, args.jobs)
    _, transformers = libraries()
    if args.jobs <= 1:
        bounded_memory(1)
    todo = text_types()
    if args.only:
        todo = {t: todo.get(t, ["base"]) for t in args.only}
    stored = _load()
    if args.costs_only:
        todo = costs_todo(stored, args.only)
    todo = {t: classes for t, classes in todo.items() if t not in args.skip}
    if args.audit_only:
        return audit_only(todo, args.jobs)
    first = [t for t in args.first.split(",") if t in todo]
    order = first + [t for t in todo if t not in first]
    kept = args.only or args.costs_only
    entries = stored if kept else {}
    seconds, old_not_reached = old_table() if kept else ({}, [])
    start = time.perf_counter()
    jobs = [(t, cls) for t in order for cls in todo[t]]
    done: set = set()
    for model_type, cls, entry, took, cost_took in results(jobs, args.jobs, args.budget, args.shortest_first):
        if args.costs_only:
            entry, took = costs_merged(entries[model_type, cls], entry), seconds.get((model_type, cls), (took,))[0]
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
        not_reached = [t for t in old_not_reached if t not in todo] if kept else unfinished
        DATA.parent.mkdir(parents=True, exist_ok=True)
        DATA.write_text(serialise(transformers.__version__, {k: v for k, v in entries.items()
                                                             if k[0] not in unfinished or kept}))
        TABLE.write_text(table({k: v for k, v in entries.items() if k[0] not in unfinished or kept},
                               transformers.__version__, seconds, not_reached, args.note))
    print(f"{len(entries)} classes, {sum(e['exact'] for e in entries.values())} exact, "
          f"{time.perf_counter() - start:.0f} s; checking them as written", file=sys.stderr)
    return audit_only({t: [c for c in todo[t] if (t, c) in done] for t in todo}, args.jobs)


if __name__ == "__main__":
    sys.exit(main())
