"""The analysis layer: what follows from a model beyond its count.

:mod:`~symparams.analysis.proof` proves whether the count depends on the
head count A; :mod:`~symparams.analysis.solve` finds the value of a symbol
nearest a target count; :mod:`~symparams.analysis.sweep` evaluates the
count over a grid, exactly.
"""
