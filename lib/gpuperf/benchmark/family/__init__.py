"""The benchmark families: one module per family, each with ``DESCRIPTION`` and a ``cases()`` generator of
:class:`gpuperf.benchmark.Case` (:func:`gpuperf.benchmark.families` lists them, ``bench/run.py`` runs them).

A family module's cases and its counting (FLOP, bytes moved) live together in it; none imports torch or
triton at import time.
"""
