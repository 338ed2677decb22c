"""The documents layer: derivations and how every format shows them.

:mod:`~symparams.documents.derivation` turns a model into the data a
document shows; :mod:`~symparams.documents.render` renders it through the
templates (Markdown, LaTeX, the live HTML page); :mod:`~symparams.documents.notebook`
draws models, breakdowns and proofs in notebooks.  Escapes
(:mod:`~symparams.documents.escape`) and the catalogs' mini-markup
(:mod:`~symparams.documents.markup`) are defined once for every format.
"""
