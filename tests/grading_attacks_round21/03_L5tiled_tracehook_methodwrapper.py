# WRONG / TAMPERING: tiled_attention returns zeros (no attention at all). Before grading, the cell installs a
# trace function of its own with sys.settrace, but passes the bound method-wrapper `_t.__call__` instead of
# `_t`. _hooks_set() -> _readers_hook(): the method-wrapper's __self__ is a plain function (class `function`,
# module builtins: skipped), it has no __func__/__code__, and type(hook).__call__ is a C slot wrapper, so
# "a built-in or a C type's instance: no Python of the reader's runs in it" -> not the reader's hook, the
# grade goes ahead. The tracer, on each call of gpuperf.grading.core.compare, copies `expected` into `yours`.
import sys
import torch
from gpuperf import grading


def _t(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "compare" and frame.f_code.co_filename.endswith("core.py"):
        loc = frame.f_locals
        yours, expected = loc.get("yours"), loc.get("expected")
        if isinstance(yours, torch.Tensor) and isinstance(expected, torch.Tensor) and \
                yours.shape == expected.shape:
            with torch.no_grad():
                yours.copy_(expected.to(yours.dtype))
    return None


sys.settrace(_t.__call__)


def tiled_attention(q, k, v, block_rows, block_cols):
    return torch.zeros_like(q)
result = grading.grade("L5.tiled", tiled_attention)
