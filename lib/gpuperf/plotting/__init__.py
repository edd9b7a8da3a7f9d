"""Presentation: one style for every figure in the book (``style``), one module per chapter's figures,
HTML tables (``tables``) and a kernel's source shown on the page (``listing``).

Simulators and models in ``gpuperf`` return plain data; only this subpackage draws. Importing it (or
``tables`` and ``listing``) does not import matplotlib; the figure modules do.
"""
