"""Ask numpy's BLAS for one thread, before numpy is loaded (chapter 06 measures one core's two numbers).

numpy's copy runs on one core; its matrix product runs on as many as the BLAS library starts, decided when
numpy is first imported, from environment variables. :func:`request_single_blas_thread` sets those variables
to 1 (a value the user already set is kept) and says whether the request can take effect. This module
imports nothing but the standard library, so importing it does not load numpy.
"""

from __future__ import annotations

import os
import sys

#: The variables OpenBLAS, MKL, OpenMP and Apple's Accelerate read for their thread counts.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def request_single_blas_thread() -> bool:
    """Set every variable of :data:`BLAS_THREAD_VARIABLES` to ``"1"`` unless already set; return True when the
    request can work: numpy is not loaded yet and every variable now says 1. (Some hosted kernels load numpy
    at start-up; restarting the kernel and running this first fixes it.)"""
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    return "numpy" not in sys.modules and all(os.environ[name] == "1" for name in BLAS_THREAD_VARIABLES)


__all__ = ["BLAS_THREAD_VARIABLES", "request_single_blas_thread"]
