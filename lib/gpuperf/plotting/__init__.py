"""Plotting helpers: one style for every figure in the book, and one module per chapter's figures.

Simulators and models in ``gpuperf`` return plain data; only this subpackage draws.
"""
