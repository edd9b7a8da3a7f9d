"""Triton kernels of the course, one kernel family per module (``gpuperf.kernels.elementwise``, ...).

Importing this subpackage imports torch (``import gpuperf`` alone never does). It also decides, once and
before any kernel module is imported, whether kernels run compiled on a GPU or through Triton's
interpreter on the CPU:

* if the environment variable ``TRITON_INTERPRET`` is already set, it is left exactly as the user set it;
* otherwise, when torch sees no CUDA GPU, it is set to ``"1"``, so the kernels defined afterwards run on CPU
  tensors through the interpreter (slowly: about half a millisecond per program instance).

The order matters: Triton reads the variable when an ``@triton.jit`` decorator runs, that is, when a kernel
module is imported. Importing ``gpuperf.kernels.elementwise`` runs this file first, so the switch is always
made in time. A kernel module imported earlier through another path would keep the mode it was defined in.
"""

from __future__ import annotations

import os

INTERPRET_ENV_VAR = "TRITON_INTERPRET"


def _switch_on_interpreter_without_cuda() -> None:
    if INTERPRET_ENV_VAR in os.environ:  # the user's choice wins, whatever it is
        return
    import torch

    if not torch.cuda.is_available():
        os.environ[INTERPRET_ENV_VAR] = "1"


_switch_on_interpreter_without_cuda()


def interpreter_enabled() -> bool:
    """True when kernels defined from now on run through the Triton interpreter (CPU tensors)."""
    return os.environ.get(INTERPRET_ENV_VAR, "0").strip().lower() in ("1", "true", "on")  # as Triton reads it


__all__ = ["INTERPRET_ENV_VAR", "interpreter_enabled"]
