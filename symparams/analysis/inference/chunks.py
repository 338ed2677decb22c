"""Kernels that work in chunks of a fixed number of positions, found and fitted.

The gated delta rule (Qwen3.5's linear attention) pads its input to a
multiple of 64 positions and runs a loop once per chunk; a state-space scan
may do the same.  At the lengths the costs are fitted on (3 to 23 tokens)
there is one chunk, so nothing shows it.  Here the base is traced once at
:data:`PROBE` tokens: when a target that the length did not move between the
base's two lengths moves there, the length where it first moves is found by
bisection (one past the chunk), and confirmed one chunk further.  The fit
then has one more variable, the number of chunks ``ceiling(s/c)``
(:data:`CHUNKS`), the products of one call's loop folded into one run of each
(:func:`.observing.fold_loops`), and traces drawn over three chunks, checked
on both sides of a chunk's end.  Where the chunk is a config field's value
(Mamba-2's ``chunk_size``), the field moved moves the chunk's end with it,
and the number of chunks is ``ceiling(s/field)`` (:func:`follows_field`); where it is the field's value
plus one (LongT5's blocks of ``local_radius + 1`` positions), ``ceiling(s/(field + 1))``.
"""

from __future__ import annotations

import sympy as sp

from ...core.compute import SEQ
from .tracing import Untraceable

#: the fit's name of the number of chunks (no config field is spelled so)
CHUNKS = "<chunks>"
#: the length a chunked kernel is looked for at: past the chunks transformers' eager kernels use (64, 128, 256)
PROBE = 301
#: the fit's traces are drawn over this many chunks
SPAN = 3
#: what a chunk that follows a field may add to the field's value (a block of a radius and its centre)
OFFSETS = (0, 1)


def count(seq: int, chunk: int) -> int:
    """The chunks of ``seq`` positions: ``ceiling(seq/chunk)``."""
    return -(-seq // chunk)


def symbol(chunk: int | sp.Expr) -> sp.Expr:
    """The number of chunks of ``s`` positions, chunks of a fixed length or of a field's symbol."""
    return sp.ceiling(SEQ / chunk)


def lengths(chunk: int) -> tuple[int, int]:
    """The range the fit's lengths are drawn from: over :data:`SPAN` chunks."""
    return 3, SPAN * chunk + 1


def boundaries(chunk: int) -> tuple[int, ...]:
    """Lengths on both sides of the first two chunks' ends, each checked in the verification."""
    return chunk, chunk + 1, 2 * chunk, 2 * chunk + 1


def look_for_chunks(domain, start: dict, base, longer) -> None:
    """``domain``'s chunk and loops (see the module's introduction), from its traces of ``start`` at the base's
    two lengths (``base`` with its backward): looked for only where a trace at the probe's length shows another
    structure, or a target the length did not move moved (one trace, for a class with none)."""
    probe = domain.observe(start, PROBE, base.batch, beyond=True)
    steady = _steady(base, longer)
    if probe is None or (probe.structure == base.structure
                         and all(probe.targets.get(t) == base.targets[t] for t in steady)):
        return
    domain.loops = True
    folded = [domain.observe(start, o.seq, base.batch, backward=o is base, beyond=True) for o in (base, longer)]
    found = None if None in folded else find_chunk(
        lambda seq: domain.observe(start, seq, base.batch, beyond=True), *folded)
    if found is None:
        domain.loops = False
        return
    if folded[0].targets != base.targets:  # the fields were moved with the loops unfolded
        raise Untraceable("a loop of several products runs at the base length as well as per chunk")
    domain.chunk, domain.effects[CHUNKS] = found
    candidates = [(n, offset) for offset in OFFSETS for n, v in domain.cost_fields.items()
                  if start.get(n, v) + offset == found[0]]
    domain.chunk_field, domain.chunk_offset = follows_field(
        lambda name, value, seq: domain.observe({**start, name: value}, seq, base.batch, beyond=True),
        base, longer, found[0], candidates) or (None, 0)


def _steady(base, longer) -> set:
    """The targets the length did not move between the base's two lengths."""
    return {t for t, v in base.targets.items() if longer.targets.get(t) == v}


def _moved(steady: set, obs, ref) -> bool | None:
    """Whether ``obs`` moved a target of ``steady`` from ``ref`` (None: no trace, or another structure)."""
    if obs is None or ref is None or obs.structure != ref.structure:
        return None
    return any(obs.targets.get(t) != ref.targets.get(t) for t in steady)


def follows_field(observe, base, longer, chunk: int, candidates: list) -> tuple[str, int] | None:
    """The field and offset among ``candidates`` (fields whose value plus the offset is the ``chunk`` found) the
    chunk follows, or None.

    ``observe(name, value, seq)`` traces the base with ``name`` at ``value``.  Set so that the chunk would be about
    half the one found, ``c``, the field's chunk ends at ``c`` where the fixed one would not: ``c + 1`` positions
    move a steady target from ``c``, ``2c`` do not from ``c + 1``, ``2c + 1`` do from ``2c`` (a fixed chunk of
    ``chunk`` shows none of the first)."""
    steady = _steady(base, longer)
    # odd first: a length equal to a head width may merge attention's two products into one key (another structure)
    tries = (chunk // 2 + 1, chunk // 2) if chunk >= 8 else (chunk * 2 + 1, chunk * 2)
    for name, offset in candidates:
        for c in tries:
            at = {seq: observe(name, c - offset, seq) for seq in (c, c + 1, 2 * c, 2 * c + 1)}
            steps = [_moved(steady, at[seq + 1], at[seq]) for seq in (c, 2 * c)]
            if steps == [True, True] and _moved(steady, at[2 * c], at[c + 1]) is False:
                return name, offset
    return None


def find_chunk(observe, base, longer) -> tuple[int, set] | None:
    """The chunk length of a kernel and the targets the number of chunks moves, or None when there is none.

    ``observe(seq)`` traces the base at ``seq`` tokens (loops folded); ``base`` and ``longer`` are its traces at
    the base's two lengths.  The targets equal in both (the length moved none of them) are watched: the first
    length that moves one is one past a chunk, found by bisection, and a chunk further they move again (and
    not before)."""
    steady = _steady(base, longer)

    def moved(obs, ref) -> bool | None:
        return _moved(steady, obs, ref)

    low, high = longer.seq, PROBE
    if not moved(observe(high), base):
        return None
    while high - low > 1:
        middle = (low + high) // 2
        step = moved(observe(middle), base)
        if step is None and middle + 1 < high:  # a length equal to a head width merges attention's two products
            middle += 1
            step = moved(observe(middle), base)
        if step is None and high - low > 2:
            return None
        if step is None:  # the one length between does not tell: either side may be the chunk
            break
        low, high = (low, middle) if step else (middle, high)
    return next((found for chunk in range(low, high) if (found := _confirmed(observe, steady, chunk))), None)


def _confirmed(observe, steady: set, chunk: int) -> tuple[int, set] | None:
    """``chunk`` and the targets the number of chunks moves, where a chunk further the steady targets move again
    (and not before); None where they do not."""
    first, second, further = observe(chunk + 1), observe(2 * chunk), observe(2 * chunk + 1)
    if _moved(steady, second, first) is None:  # as in the bisection: 2 chunks of 64 are a head width of 128
        second = observe(2 * chunk - 1)
    if _moved(steady, second, first) is not False or not _moved(steady, further, second):
        return None
    edge = observe(chunk)
    if _moved(steady, edge, first) is None:  # as above: the chunk's last length one below it
        edge = observe(chunk - 1)
    return chunk, {t for t in steady if edge.targets.get(t) != first.targets.get(t)}
