"""Triton kernels of the course, one kernel family per module (``gpuperf.kernels.elementwise``, ...).

Importing this subpackage imports torch (``import gpuperf`` alone never does). It also decides, once and
before any kernel module is imported, whether kernels run compiled on a GPU or through Triton's
interpreter on the CPU:

* if the environment variable ``TRITON_INTERPRET`` is already set, it is left exactly as the user set it;
* otherwise, when torch sees no CUDA GPU, it is set to ``"1"``, so the kernels defined afterwards run on CPU
  tensors through the interpreter (slowly: about half a millisecond per program instance).

The order matters: Triton reads the variable when an ``@triton.jit`` decorator runs, that is, when a kernel
module is imported, and a kernel keeps that mode for good. Importing ``gpuperf.kernels.elementwise`` runs this
file first, so the switch is always made in time; each kernel module records the mode its kernels were
defined in (``INTERPRETED``) and its wrappers validate tensors against that, not against the variable's
value at call time. A notebook that defines its own ``@triton.jit`` kernels in a cell should
``import gpuperf.kernels`` first, for the same switch.
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

from gpuperf.kernels import _interpreter_compat  # noqa: E402  (after the switch: it imports Triton)

_interpreter_compat.apply()


def interpreter_enabled() -> bool:
    """True when kernels defined from now on run through the Triton interpreter (CPU tensors).

    Asks Triton itself (``triton.knobs.runtime.interpret``, Triton 3.4 and later): its spellings of "on"
    changed between versions (3.9 accepts 1, true, on, yes and y in any case, with no surrounding spaces).
    Older Triton, or none: "1", "true" or "on" in any case, the rule of its ``getBoolEnv``.
    """
    try:
        from triton import knobs
    except ImportError:
        return os.environ.get(INTERPRET_ENV_VAR, "").lower() in ("1", "true", "on")
    return bool(knobs.runtime.interpret)


__all__ = ["INTERPRET_ENV_VAR", "interpreter_enabled"]
