"""Jinja templates for the derivation documents (installed as ``symparams.templates``)."""
