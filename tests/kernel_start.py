"""Start each notebook's Jupyter kernel over Unix sockets, and start it again if it does not answer (used by
tests/conftest.py for nbval).

nbval starts one kernel per notebook over TCP on 127.0.0.1 and waits for its first reply (``kernel_info``).
With several kernels starting at once, now and then one never answered, and every cell of its notebook
failed with "Kernel didn't respond" (on the H200 with 15 workers; on a 2-core machine about 1 start in 350,
8 or 12 at a time); a longer wait did not help. The likely cause is TCP's simultaneous open: the client
connects to the kernel's five ports before the kernel listens on them, ZeroMQ retries every 100 ms from a
fresh ephemeral port, and when the ephemeral port it draws is the very port it is dialling, the socket
connects to itself and stays connected, so the kernel's real socket never hears from it (CONTRIBUTING.md,
"Tests that never flake"). Unix-domain sockets have no ports, so :func:`start_new_kernel` starts the kernel
with ``transport="ipc"`` (socket files in the temporary directory, removed when the kernel shuts down).
:func:`retrying` stays as a second line: after a failed start (the silent kernel already shut down) it
starts another, up to ``attempts`` times, then raises the last error, the retry printed to stderr. Nothing
about the notebook's cells changes.
"""

from __future__ import annotations

import os
import sys
import tempfile
import uuid

ATTEMPTS = 3


def ipc_address(directory: str | None = None) -> str:
    """A fresh base path for a kernel's five socket files (``<path>-1`` ... ``<path>-5``), short enough
    for a Unix socket's 104-byte limit."""
    path = os.path.join(directory or tempfile.gettempdir(), f"nbk-{uuid.uuid4().hex[:16]}")
    if len(path) + 3 > 104:
        raise ValueError(f"directory {directory!r} makes socket paths longer than 104 bytes")
    return path


def start_new_kernel(startup_timeout=60, kernel_name="python", **kwargs):
    """nbval's ``start_new_kernel`` (same arguments, same ``(manager, client)`` result) with the kernel
    listening on Unix-domain sockets instead of TCP ports."""
    from jupyter_client.manager import KernelManager
    from nbval.kernel import NbvalKernelspecManager

    manager = KernelManager(kernel_name=kernel_name, kernel_spec_manager=NbvalKernelspecManager(),
                            transport="ipc", ip=ipc_address())
    manager.start_kernel(**kwargs)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=startup_timeout)
    except RuntimeError:
        client.stop_channels()
        manager.shutdown_kernel()
        raise
    return manager, client


def retrying(start, attempts: int = ATTEMPTS):
    """``start`` (a ``start_new_kernel``) called again after a ``RuntimeError``, at most ``attempts``
    times in all."""
    if attempts < 1:
        raise ValueError(f"attempts must be >= 1, got {attempts!r}")
    if getattr(start, "retries_kernel_start", False):
        return start

    def start_with_retries(*args, **kwargs):
        for attempt in range(1, attempts + 1):
            try:
                return start(*args, **kwargs)
            except RuntimeError as exc:
                if attempt == attempts:
                    raise
                print(f"kernel start failed ({exc}); starting a new kernel, attempt {attempt + 1} of "
                      f"{attempts}", file=sys.stderr)
        raise AssertionError("unreachable")  # pragma: no cover

    start_with_retries.retries_kernel_start = True
    return start_with_retries


def install() -> bool:
    """Replace ``nbval.kernel.start_new_kernel`` (once) by :func:`start_new_kernel` with retries; on
    Windows, which has no Unix-domain sockets for ZeroMQ, by nbval's own start with retries. False when
    nbval is not installed."""
    try:
        import nbval.kernel
    except ImportError:
        return False
    start = nbval.kernel.start_new_kernel
    if not getattr(start, "retries_kernel_start", False):
        nbval.kernel.start_new_kernel = retrying(start if os.name == "nt" else start_new_kernel)
    return True
