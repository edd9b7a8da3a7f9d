"""Launching compiled Triton kernels with little host time (private to the kernel wrappers).

``kernel[grid](*args, **options)`` makes Triton bind the arguments to the kernel's parameters, build a
specialisation key (a string) from every argument and look the compiled kernel up, on every call: about
10-15 us of Python per launch on Triton 3.6, more than a small kernel runs. :func:`launch` does that work
once per *launch key* and then calls the compiled kernel's own launcher (``CompiledKernel[grid](*args)``,
the path Triton itself ends in).

The launch key must never be coarser than Triton's specialisation, or a kernel compiled for one argument
set would run on another it is wrong for: Triton specialises an integer on whether it equals 1, is a
multiple of 16 and fits 32 bits, a tensor on its dtype and the 16-byte alignment of its address, a tensor
descriptor on its dtype and block shape. The key holds the *exact* value of every integer, float, bool and
string argument, the dtype and alignment of every tensor, the dtype, block shape, rank and padding of every
descriptor, the launch options and the current device: always finer than Triton's, so a key maps to one
compiled kernel. Its cost: one cache entry per distinct integer value seen (shapes), and a first call per
entry through Triton's own path. An argument of any other type takes Triton's path every time.

Under the Triton interpreter (an ``InterpretedFunction``, not a ``JITFunction``) every launch takes
Triton's path; the interpreter has no launcher to call.
"""

from __future__ import annotations

import torch
import triton

try:  # the calls Triton's own launch makes for the current device and stream (torch's C bindings)
    _current_device = torch._C._cuda_getDevice
    _current_stream = torch._C._cuda_getCurrentRawStream
except AttributeError:  # pragma: no cover - a torch without them
    _current_device = None
    _current_stream = None

#: Launch key -> compiled kernel. Cleared when it grows past :data:`MAX_ENTRIES` (a new shape per call
#: would otherwise grow it without bound).
_CACHE: dict = {}
MAX_ENTRIES = 4096

_JIT_TYPES: tuple = ()


def _jit_types() -> tuple:
    global _JIT_TYPES
    if not _JIT_TYPES:
        from triton.runtime.jit import JITFunction

        _JIT_TYPES = (JITFunction,)
    return _JIT_TYPES


def _compiled_type():
    from triton.compiler import CompiledKernel

    return CompiledKernel


class _Unkeyable(Exception):
    pass


def _arg_key(a):
    cls = a.__class__
    if cls is int or cls is str:
        return a
    if cls is bool:  # True == 1 and hashes alike, but Triton types them apart
        return (bool, a)
    if cls is float:
        return (float, a)  # 1.0 and 1 compile differently: keep the type with the value
    if cls is torch.Tensor or isinstance(a, torch.Tensor):
        return (a.dtype, a.data_ptr() % 16 == 0)
    if a is None:
        return None
    block = getattr(a, "block_shape", None)
    if block is not None and hasattr(a, "base"):  # triton.tools.tensor_descriptor.TensorDescriptor
        return ("desc", a.base.dtype, tuple(block), len(a.shape), getattr(a, "padding", None))
    if cls is torch.dtype:
        return a
    raise _Unkeyable


def launch_key(kernel, args: tuple, options: tuple):
    """The cache key of one launch (see the module docstring); None when an argument cannot be keyed."""
    try:
        return (kernel, _current_device(), options, *[_arg_key(a) for a in args])
    except _Unkeyable:
        return None


def launch(kernel, grid: tuple, args: tuple, options: tuple = ()):
    """``kernel[grid](*args, **dict(options))`` with Triton's per-call work done once per launch key.

    ``args`` holds every parameter of the kernel in order, ``tl.constexpr`` ones included (positionally, as
    Triton's launcher takes them); ``options`` is a tuple of ``(name, value)`` launch options
    (``num_warps``, ``num_stages``, ``maxnreg``, ...), in the same order at every call site. Returns
    Triton's compiled kernel (``n_regs``, ``n_spills``, ``metadata``), or under the interpreter whatever
    Triton's launch returns.
    """
    if _current_stream is None or not isinstance(kernel, _jit_types()):
        return kernel[grid](*args, **dict(options))
    key = launch_key(kernel, args, options)
    compiled = _CACHE.get(key) if key is not None else None
    if compiled is None:
        compiled = kernel[grid](*args, **dict(options))
        if key is not None and isinstance(compiled, _compiled_type()):
            if len(_CACHE) >= MAX_ENTRIES:
                _CACHE.clear()
            _CACHE[key] = compiled
        return compiled
    if len(grid) != 3:
        grid = (grid[0], grid[1] if len(grid) > 1 else 1, grid[2] if len(grid) > 2 else 1)
    compiled[grid](*args, stream=_current_stream(key[1]))
    return compiled


def clear() -> None:
    """Forget every cached launch (the next launch of each key takes Triton's path again)."""
    _CACHE.clear()


_SCRATCH: dict = {}


def scratch_allocator(size: int, alignment: int, stream):
    """Triton's allocator for the global scratch memory of in-kernel tensor descriptors: one buffer per
    (device, stream), grown when a launch needs more, instead of a fresh ``torch.empty`` per launch.

    Safe because launches on one stream run one after another: the next launch that reuses the buffer
    starts after the last one that wrote its descriptors there has finished (the same reuse torch's caching
    allocator makes of a buffer freed after the launch)."""
    if not torch.cuda.is_available():  # the interpreter: host memory
        return torch.empty(size, dtype=torch.int8)
    device = torch.cuda.current_device()
    key = (device, stream)
    buf = _SCRATCH.get(key)
    if buf is None or buf.numel() < size:
        buf = torch.empty(max(size, 1 << 16), dtype=torch.int8, device=f"cuda:{device}")
        _SCRATCH[key] = buf
    return buf


_ALLOCATOR_SET = False


def ensure_scratch_allocator() -> None:
    """Install :func:`scratch_allocator` as Triton's allocator (once)."""
    global _ALLOCATOR_SET
    if not _ALLOCATOR_SET:
        triton.set_allocator(scratch_allocator)
        _ALLOCATOR_SET = True
