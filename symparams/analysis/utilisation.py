"""Model and hardware FLOPs utilisation of a measured training step, under every convention, as exact ratios.

Utilisation is the FLOPs one training step does divided by what the GPUs could
do in its time: ``flops / (step_time · gpus · peak)``.  The step processes the
:class:`~symparams.analysis.flops.Flops`' ``batch`` sequences of ``seq`` tokens
(the global batch, over all ``gpus``).

* MFU (model FLOPs utilisation, Chowdhery et al. 2022) counts the exact model
  FLOPs of forward and backward, never a recomputation;
* HFU (hardware FLOPs utilisation) counts what the hardware runs: with full
  recomputation (``recompute=True``), each layer's forward pass twice;
* each published law's training count (Kaplan, PaLM, Narayanan et al.,
  Megatron-LM, nanoGPT, torchtitan, MaxText, Chinchilla) gives its own figure,
  side by side, so that two codebases' MFU can be compared on one model.

Times and peaks are read exactly (``"0.25"``, ``"312e12"``, ``"1/3"``): no float
touches a ratio.

>>> from symparams import model
>>> f = model("gpt2", head="causal-lm").flops(1024, 480)
>>> u = f.utilisation(step_time="2.5", peak="312e12")
>>> u.rows[0].name, u.rows[0].flops == f.forward + f.backward, u.rows[0].ratio == Fraction(u.rows[0].flops, 780 * 10**12)
('mfu', True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..core.errors import SymparamsError
from ..core.values import NotANumber, exact_number, parse_whole


@dataclass(frozen=True)
class Convention:
    """One way of counting a training step's FLOPs, and the utilisation it gives."""

    name: str
    flops: int | Fraction  # FLOPs of the step under this convention
    ratio: Fraction  # flops / (step_time · gpus · peak)


@dataclass(frozen=True)
class Utilisation:
    step_time: Fraction
    peak: Fraction
    gpus: int
    rows: tuple[Convention, ...]

    @property
    def capacity(self) -> Fraction:
        """The FLOPs the GPUs could do in the step's time at their peak."""
        return self.step_time * self.gpus * self.peak


def parse_positive(raw, what: str) -> Fraction:
    """A positive exact number (seconds, FLOP/s) from text or a number, never a float.

    >>> parse_positive("312e12", "the peak"), parse_positive("0.25", "the step time")
    (Fraction(312000000000000, 1), Fraction(1, 4))
    """
    if isinstance(raw, float):
        raise SymparamsError(f"{what}: give {raw!r} as text (\"{raw!r}\") or a Fraction, not a float, so that it "
                             f"is read exactly")
    try:
        value = exact_number(raw, what)
    except NotANumber:
        raise SymparamsError(f"{what} must be a positive number such as 0.5 or 312e12, not {raw!r}") from None
    if value <= 0:
        raise SymparamsError(f"{what} must be positive, not {raw!r}")
    return value


def utilisation(flops, step_time, peak, gpus=1) -> Utilisation:
    """MFU, HFU and each training law's utilisation of the step ``flops`` describes, done in ``step_time``
    seconds on ``gpus`` GPUs of ``peak`` FLOP/s each."""
    step_time = parse_positive(step_time, "the step time (seconds)")
    peak = parse_positive(peak, "the peak (FLOP/s per GPU)")
    gpus = parse_whole("the GPUs", gpus)
    capacity = step_time * gpus * peak
    counts = [("mfu", flops.forward + flops.backward), ("hfu", flops.training)]
    counts += [(law["name"], Fraction(law["law_value"]) * flops.tokens) for law in flops.laws
               if law["name"].endswith("_training")]
    rows = tuple(Convention(name, _whole(count), Fraction(count) / capacity) for name, count in counts)
    return Utilisation(step_time, peak, gpus, rows)


def _whole(value) -> int | Fraction:
    value = Fraction(value)
    return value.numerator if value.denominator == 1 else value
