"""The costs of a class whose forward pass reads its data: traced on the CPU with random weights, at small sizes.

Some models do not run on the meta device: a mixture of experts gathers the
tokens of each expert with ``torch.nonzero``, a model reads a length or a
language id with ``Tensor.item()``, another copies a tensor out of the
device.  Their FLOPs are traced instead on real tensors, random weights and
random token ids, with every size shrunk to a few units first (the default
sizes, a width of 6,144 and 132 experts, would not fit in memory): the
products' shapes are polynomials of the sizes whatever the sizes are, as
long as the structure is the same, so the fit over multiples of small bases
finds the same formulas, and the verification checks them at fresh sizes.

A model that reads its data may also spend FLOPs that depend on it (an
expert capacity that drops tokens, an expert loop whose products follow the
routing); every traced pass therefore draws its own weights and token ids,
and the base configuration is traced with several, and with every weight
zero (every token routed alike), before anything is fitted: a cost that
moves with them refuses the class.
"""

from __future__ import annotations

import dataclasses


#: what PyTorch raises when a model reads the data of a meta tensor, or mixes it with a tensor it makes on the
#: CPU whatever its device (XLNet's relative positions)
READS_DATA = ("torch.nonzero()", "Cannot copy out of meta tensor", "Tensor.item() cannot be called on meta tensors",
              "Tensor on device meta is not on the expected device cpu")
#: the fewest positions a table of positions keeps: the longest fit trace, plus a padding offset
LEAST_POSITIONS = 32
#: the shrinks tried in turn, (least, step, positions): sizes of ``least`` at least, multiples of ``step``, the
#: tables of positions shrunk or not (a head split in halves needs an even width; an id past a small vocabulary
#: needs 16; a model that pads its input to a window of a thousand tokens needs its positions)
SHRINKS = ((0, 1, True), (0, 2, True), (16, 1, True), (16, 4, True), (16, 1, False))
#: the seeds (weights and token ids) the base configuration is traced with, to see its costs follow no data
SEEDS = (1, 2, 3)

def reads_data(error: str) -> bool:
    """Whether an error of a meta-device pass is the model reading its data (the CPU can trace it)."""
    return any(text in error for text in READS_DATA)


def routed_together(trace):
    """``trace`` with the weight products of an experts loop taken together: the ``mm`` products one module runs
    within one call of the module around it (an experts loop over the experts of one layer) with views of one
    parameter of one shape (each expert's slice of the experts' weights) are one product over the rows of all
    of them.  Each expert multiplies the tokens routed to it, a number
    that follows the routing; their sum is the tokens times top-k when each token goes to k distinct experts,
    which :func:`data_independent` sees (several seeds, every token routed alike).  The FLOPs are the same sum."""
    kept, first = [], {}
    for p in trace.products:
        key = (p.module, p.outer, p.op, p.parameter, p.factors[1:])
        if p.op != "mm" or not p.weight:
            kept.append(p)
        elif key not in first:
            first[key] = dataclasses.replace(p)
            kept.append(first[key])
        else:
            merged = first[key]
            merged.factors = (merged.factors[0] + p.factors[0], *merged.factors[1:])
            merged.forward, merged.backward = merged.forward + p.forward, merged.backward + p.backward
    return dataclasses.replace(trace, products=kept)


def zero_weights(model) -> None:
    """Every parameter of ``model`` set to zero."""
    import torch

    with torch.no_grad():
        for p in model.parameters():
            p.zero_()


def data_independent(domain, values: dict, seq: int, batch: int) -> str | None:
    """None when ``values`` traced with each of :data:`SEEDS` (weights and token ids), and with every weight
    zero (a router's logits all equal: every token picks the same experts, the most an expert capacity can
    drop), gives the same products, FLOPs and cache; otherwise what moved, in one line."""
    seen = []
    for seed, zeroed in [*((s, False) for s in SEEDS), (SEEDS[0], True)]:
        domain.seed, domain.zeroed = seed, zeroed
        obs = domain.observe(values, seq, batch, backward=True)
        if obs is None:
            return "the base configuration does not trace on the CPU" + (f": {domain.errors[-1]}" if domain.errors
                                                                          else "")
        seen.append(obs)
    domain.seed, domain.zeroed = None, False
    first = seen[0]
    for other in seen[1:]:
        if (other.targets, other.cache) != (first.targets, first.cache):
            moved = sorted(str(t) for t in first.targets.keys() | other.targets.keys()
                           if first.targets.get(t) != other.targets.get(t))
            return ("the FLOPs depend on the data (other random weights and token ids trace other products: "
                    f"{moved[0] if moved else 'the cache'}); the routing decides what runs")
    return None
