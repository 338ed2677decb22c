"""The core layer: symbols, value parsing, the Block tree, families' declarations, algebra, the Model.

It imports nothing from the layers above, but for two call-time hooks:
:meth:`symparams.core.model.Model.prove` (analysis) and
:func:`symparams.core.display.presentation` (documents).
"""
