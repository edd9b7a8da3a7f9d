"""Elementwise kernels: a vector add and a fused chain of k elementwise operations.

What this module shows: an elementwise kernel does almost no arithmetic per byte, so its time is the time to
move its bytes through HBM; fusing k operations into one kernel moves the tensor once instead of k times.

Each kernel sits beside its plain torch reference and a count of the HBM bytes it must move (b = bytes per
element, n = number of elements):

=====================  =====================================  ==============  =============
kernel                 what it does                           HBM bytes       FLOP
=====================  =====================================  ==============  =============
``vector_add``         out = x + y                            3 n b           n
``fused_chain``        k ops in registers, one read, one      2 n b           k n
                       write
unfused chain (torch)  k eager ops, each reads and writes     2 k n b         k n
=====================  =====================================  ==============  =============

**The chain.** Operation j (j = 0, 1, ..., k-1) is ``y = y * scale`` for even j and ``y = y + shift`` for odd
j, starting from y = x. Counting convention: **1 FLOP per element per operation** (a multiply and an add are
one FLOP each), so the chain does k FLOP per element. With the defaults ``scale = 15/16`` and
``shift = 1/16`` every pair of steps is the contraction y -> (15/16) y + 1/16, whose fixed point is 1, so the
values stay bounded (|y| <= max(|x|, 1)) for any k; both constants are exact in fp32, fp16 and bf16.

**Precision.** The Triton kernels load in the storage dtype, convert to fp32 at once (Triton's interpreter
cannot do bf16 arithmetic; on a GPU it costs nothing here), compute in fp32 registers and round once, when
they store in the input dtype. The eager torch chain rounds to the storage dtype after every operation, so
in fp16 and bf16 it is the less accurate of the two. :func:`chain_reference_fp64` is the accuracy reference.

**Where they run.** On a machine without a CUDA GPU, ``gpuperf.kernels`` switches on Triton's interpreter
before this module defines its kernels, and the wrappers then take CPU tensors in fp32 or fp16 (bf16 is
refused there: the interpreter truncates when it stores bf16 instead of rounding to nearest); with a GPU
they take CUDA tensors of all three dtypes and run compiled kernels.
"""

from __future__ import annotations

import math
import numbers

import torch
import triton
import triton.language as tl

from gpuperf.kernels import _checks, interpreter_enabled

#: True when this module's kernels were defined for Triton's interpreter (fixed when the module is imported:
#: the ``@triton.jit`` decorators below read ``TRITON_INTERPRET`` once, now). The wrappers check tensors
#: against this mode, so changing the variable later cannot make them accept tensors the kernels cannot take.
INTERPRETED = interpreter_enabled()

#: Elements handled by one program instance. 1024 fills 4 warps with 8 elements per thread (two 16-byte
#: vector loads in fp32), enough bytes in flight per SM for a memory-bound kernel on current GPUs.
BLOCK_SIZE = 1024

#: Largest k accepted by :func:`fused_chain`; the loop is unrolled at compile time, one kernel per k.
MAX_K_OPS = 256

#: Default constants of the chain (exact in every supported dtype; see the module docstring).
CHAIN_SCALE = 0.9375
CHAIN_SHIFT = 0.0625

#: Storage dtypes the kernels accept, with the short names used in recorded results.
DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}


# --------------------------------------------------------------------------------------------------------
# Vector add.  HBM bytes: read x (n b) + read y (n b) + write out (n b) = 3 n b.  FLOP: n.
# --------------------------------------------------------------------------------------------------------


def add_reference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The torch reference: one eager ``torch.add`` (3 n b bytes of HBM traffic, like the kernel)."""
    return torch.add(x, y)


# listing: vector-add
@triton.jit
def _add_tile(x_ptr, y_ptr, out_ptr, offsets, mask):
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)  # compute in fp32
    y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (x + y).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # 64-bit offsets: a tensor may hold more than 2**31 elements on a 141 GB GPU.
    start = tl.program_id(0).to(tl.int64) * BLOCK_SIZE
    offsets = start + tl.arange(0, BLOCK_SIZE)
    if start + BLOCK_SIZE <= n_elements:  # a full block: no mask, 16-byte vector loads
        _add_tile(x_ptr, y_ptr, out_ptr, offsets, None)
    else:  # the last, partial block: mask off the elements past the end
        _add_tile(x_ptr, y_ptr, out_ptr, offsets, offsets < n_elements)
# end listing: vector-add
# Why a mask only on the last block: when n is not a multiple of 16 the compiler cannot prove a mask uniform
# over a 16-byte vector, so masked loads and stores go one element at a time (measured on an H200, fp16,
# n = 2**24 + 3: 2.4x slower; bench/NOTES.md).


def vector_add(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """``x + y`` elementwise by a Triton kernel; returns ``out`` (allocated when not given).

    ``x``, ``y`` and ``out`` must be contiguous tensors of one shape, one dtype (fp32, fp16, or bf16 on a
    GPU) and one device (CUDA, or the CPU when the Triton interpreter is on); ``out`` may be ``x`` or ``y``
    (in place) but must not partly overlap them. The sum is formed in fp32 and rounded to the storage dtype,
    as ``torch.add`` does, so the two agree bit for bit; for fp16 and bf16 the two roundings equal one
    correct rounding of the exact sum, since fp32's 24-bit significand has at least 2p + 2 bits for a p-bit
    format (Figueroa, "When is double rounding innocuous?", SIGNUM Newsletter 30(3), 1995). Raises
    ``ValueError`` naming the offending argument.
    """
    _check_tensor("x", x)
    _check_tensor("y", y, like=("x", x))
    out = _checked_output(out, x=x, y=y)
    if x.numel() > 0:
        _add_kernel[_grid(x)](x, y, out, x.numel(), BLOCK_SIZE=BLOCK_SIZE)
    return out


# --------------------------------------------------------------------------------------------------------
# Chain of k elementwise ops.
#   fused (Triton):   read x (n b) + write out (n b) = 2 n b, whatever k.   FLOP: k n.
#   unfused (torch):  each of the k ops reads and writes the tensor = 2 k n b.   FLOP: k n.
# --------------------------------------------------------------------------------------------------------


def chain_reference_unfused(
    x: torch.Tensor, k_ops: int, scale: float = CHAIN_SCALE, shift: float = CHAIN_SHIFT
) -> torch.Tensor:
    """The unfused baseline: the chain as k separate eager torch ops, each a kernel launch that reads and
    writes the whole tensor in the storage dtype (2 k n b bytes of HBM traffic)."""
    return _apply_chain(x, _check_k_ops(k_ops), scale, shift)


def chain_reference_fp64(
    x: torch.Tensor, k_ops: int, scale: float = CHAIN_SCALE, shift: float = CHAIN_SHIFT
) -> torch.Tensor:
    """The accuracy reference: the same k ops in float64 on the CPU; returns a float64 CPU tensor."""
    return _apply_chain(x.detach().to(device="cpu", dtype=torch.float64), _check_k_ops(k_ops), scale, shift)


def _apply_chain(y: torch.Tensor, k_ops: int, scale: float, shift: float) -> torch.Tensor:
    for j in range(k_ops):  # one eager op (one kernel, one pass over the tensor) per step
        y = y * scale if j % 2 == 0 else y + shift
    return y


# listing: fused-chain
@triton.jit
def _chain_tile(x_ptr, out_ptr, offsets, mask, scale, shift, K_OPS: tl.constexpr):
    y = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)  # compute in fp32
    # Unrolled at compile time: k ops on values in registers, no HBM traffic between.
    for j in tl.static_range(K_OPS):
        if j % 2 == 0:
            y = y * scale
        else:
            y = y + shift
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _chain_kernel(x_ptr, out_ptr, n_elements, scale, shift,
                  K_OPS: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * BLOCK_SIZE  # 64-bit: n may pass 2**31
    offsets = start + tl.arange(0, BLOCK_SIZE)
    if start + BLOCK_SIZE <= n_elements:  # a full block: no mask, 16-byte vector loads
        _chain_tile(x_ptr, out_ptr, offsets, None, scale, shift, K_OPS)
    else:  # the last, partial block: mask off the elements past the end
        _chain_tile(x_ptr, out_ptr, offsets, offsets < n_elements, scale, shift, K_OPS)


def _launch_chain(x, out, k_ops, scale, shift):
    grid = (triton.cdiv(x.numel(), BLOCK_SIZE),)  # one program per block of elements
    _chain_kernel[grid](x, out, x.numel(), scale, shift,
                        K_OPS=k_ops, BLOCK_SIZE=BLOCK_SIZE)
# end listing: fused-chain


def fused_chain(
    x: torch.Tensor,
    k_ops: int,
    out: torch.Tensor | None = None,
    scale: float = CHAIN_SCALE,
    shift: float = CHAIN_SHIFT,
) -> torch.Tensor:
    """The chain of ``k_ops`` elementwise ops (module docstring) fused into one Triton kernel.

    Reads ``x`` once and writes ``out`` once (2 n b bytes) and does ``k_ops`` FLOP per element in fp32.
    ``x`` and ``out`` must be contiguous, of one shape, dtype (fp32, fp16, or bf16 on a GPU) and device, and
    ``out`` may be ``x`` but must not partly overlap it; ``1 <= k_ops <= MAX_K_OPS``; ``scale`` and ``shift`` finite. Raises ``ValueError`` naming the argument.
    Each distinct ``k_ops`` compiles its own kernel (the loop is unrolled).
    """
    k_ops = _check_k_ops(k_ops)
    scale = _check_finite("scale", scale)
    shift = _check_finite("shift", shift)
    _check_tensor("x", x)
    out = _checked_output(out, x=x)
    if x.numel() > 0:
        _launch_chain(x, out, k_ops, scale, shift)
    return out


# --------------------------------------------------------------------------------------------------------
# Launch helpers and checks shared by the wrappers.
# --------------------------------------------------------------------------------------------------------


def _grid(x: torch.Tensor) -> tuple[int]:
    return (triton.cdiv(x.numel(), BLOCK_SIZE),)


def _checked_output(out: object, **inputs: torch.Tensor) -> torch.Tensor:
    """``out`` checked against the first of ``inputs`` (allocated like it when None). It may be one of the
    inputs (in place: each element is read and then written by the same program) but must not partly
    overlap one: a program could then read an element that another program has already overwritten."""
    (like_name, like), *_ = inputs.items()
    if out is None:
        return torch.empty_like(like)
    _check_tensor("out", out, like=(like_name, like))
    size = out.numel() * out.element_size()
    for name, t in inputs.items():
        offset = _checks.partial_overlap_offset(out, t)
        if offset is not None:
            raise ValueError(
                f"out must be {name} itself or not overlap it, got out {offset:+d} bytes from {name} "
                f"(both {size} bytes long)"
            )
    return out


def _check_tensor(name: str, t: object, like: tuple[str, torch.Tensor] | None = None) -> None:
    _checks.check_is_tensor(name, t)
    _checks.check_dtype(name, t, DTYPE_NAMES)
    # Measured with triton 3.9: the interpreter truncates fp32 -> bf16 instead of rounding to nearest.
    _checks.check_device(
        name, t, INTERPRETED,
        cpu_note=" (TRITON_INTERPRET was on when gpuperf.kernels.elementwise was imported)",
        bf16_note=" (it rounds bf16 wrongly)",
        cuda_note=" (the kernels are compiled for it: TRITON_INTERPRET was off when "
                  "gpuperf.kernels.elementwise was imported)",
    )
    _checks.check_contiguous(name, t, with_shape=True, hint=" (call .contiguous() first)")
    if like is not None:
        other_name, other = like
        _checks.check_same_shape(name, t, other_name, other)
        _checks.check_same_dtype_and_device(name, t, other_name, other)


def _check_k_ops(k_ops: object) -> int:
    if isinstance(k_ops, bool) or not isinstance(k_ops, numbers.Integral) or not 1 <= k_ops <= MAX_K_OPS:
        raise ValueError(f"k_ops must be an integer in [1, {MAX_K_OPS}], got {k_ops!r}")
    return int(k_ops)


def _check_finite(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


__all__ = [
    "BLOCK_SIZE",
    "CHAIN_SCALE",
    "CHAIN_SHIFT",
    "DTYPE_NAMES",
    "INTERPRETED",
    "MAX_K_OPS",
    "add_reference",
    "chain_reference_fp64",
    "chain_reference_unfused",
    "fused_chain",
    "vector_add",
]
