"""The families layer: the architectures, their presets, and config.json reading.

:func:`~symparams.families.lookup.model` turns a name, a config path or a
config dict into a :class:`~symparams.core.model.Model`; the registry
(:mod:`symparams.families.registry`) lists the family modules.
"""
