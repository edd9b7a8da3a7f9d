"""Start a notebook's Jupyter kernel again when it does not answer (used by tests/conftest.py for nbval).

nbval starts one kernel per notebook and waits for its first reply (``kernel_info``); when the kernel never
answers, every cell of that notebook fails with "Kernel didn't respond". With several kernels starting at
once this happens now and then (on the H200 with 15 workers; on a 2-core machine about 1 start in 300, 8 or
12 at a time), and a longer wait does not help: that kernel never answers (CONTRIBUTING.md, "Tests that
never flake"). A fresh kernel (a new process, new ports) does, so :func:`retrying` wraps nbval's
``start_new_kernel``: after a failed start (nbval has already shut the silent kernel down) it starts
another, up to ``attempts`` times, then raises the last error. Nothing about the notebook's cells changes;
the retry is printed to stderr.
"""

from __future__ import annotations

import sys

ATTEMPTS = 3


def retrying(start, attempts: int = ATTEMPTS):
    """``start`` (nbval's ``start_new_kernel``) called again after a ``RuntimeError``, at most
    ``attempts`` times in all."""
    if attempts < 1:
        raise ValueError(f"attempts must be >= 1, got {attempts!r}")
    if getattr(start, "retries_kernel_start", False):
        return start

    def start_new_kernel(*args, **kwargs):
        for attempt in range(1, attempts + 1):
            try:
                return start(*args, **kwargs)
            except RuntimeError as exc:
                if attempt == attempts:
                    raise
                print(f"kernel start failed ({exc}); starting a new kernel, attempt {attempt + 1} of "
                      f"{attempts}", file=sys.stderr)
        raise AssertionError("unreachable")  # pragma: no cover

    start_new_kernel.retries_kernel_start = True
    return start_new_kernel


def install() -> bool:
    """Wrap ``nbval.kernel.start_new_kernel`` (once); False when nbval is not installed."""
    try:
        import nbval.kernel
    except ImportError:
        return False
    nbval.kernel.start_new_kernel = retrying(nbval.kernel.start_new_kernel)
    return True
