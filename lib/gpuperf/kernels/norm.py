"""A fused residual-add + RMSNorm in Triton (forward), as a pre-norm Transformer block runs it.

What this module shows: fusion turns several passes over a (rows, n) tensor into one. Unfused, eager PyTorch
reads and writes the tensor once per operation (the add, the square, the mean, the rsqrt scaling, the weight);
fused, one program reads a row of ``x`` and of ``residual`` once, keeps the row in registers for the
statistics and the scaling, and writes the two results once.

The operation, for each row (n elements), with storage dtype D and weight w (n elements)::

    h        = round_D(x + residual)                 # the updated residual stream, returned
    y        = round_D(h / sqrt(mean(h**2) + eps) * w)

The sum is formed in fp32 and rounded to D once; the statistics (mean of squares, reciprocal square root)
are in fp32 on the rounded h, exactly what an eager ``h = x + residual; rms_norm(h)`` computes from the
stored residual. References beside the kernel: :func:`add_rms_norm_reference` (eager torch, several kernels)
and :func:`add_rms_norm_reference_fp64` (the accuracy reference).

HBM bytes the fused kernel must move (b bytes per element, rows x n): read x and residual, write y and h:
``4 rows n b`` (plus n b for the weight, read once per program but from L2 after the first).
"""

from __future__ import annotations

import math
import numbers

import torch
import triton
import triton.language as tl

from gpuperf.kernels import _checks, _launch, interpreter_enabled

INTERPRETED = interpreter_enabled()

DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}

#: Longest row one program holds in registers (one row per program; beyond this a row would spill).
MAX_COLS = 65536


def add_rms_norm_bytes_moved(rows: int, cols: int, bytes_per_element: int) -> int:
    """HBM bytes of the fused kernel: read x and residual, write y and the new residual (4 rows n b),
    plus the weight once (n b)."""
    return bytes_per_element * (4 * rows * cols + cols)


def add_rms_norm_reference(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                           eps: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """Eager torch, one kernel per step (the unfused baseline): returns ``(y, h)``."""
    h = x + residual
    hf = h.float()
    y = hf * torch.rsqrt(hf.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (y * weight.float()).to(x.dtype), h


def add_rms_norm_reference_fp64(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                                eps: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """The accuracy reference: h rounded to the storage dtype (as the kernel stores it), then the norm in
    float64 on the CPU. Returns ``(y, h)`` as float64 CPU tensors."""
    h = (x.detach().cpu().double() + residual.detach().cpu().double()).to(x.dtype).double()
    y = h / torch.sqrt(h.pow(2).mean(dim=-1, keepdim=True) + eps) * weight.detach().cpu().double()
    return y, h


@triton.jit
def _add(a, b):
    # tl.reduce with our own combine function rather than tl.sum: tl.sum is a @triton.jit function of
    # triton.language, defined in whatever mode Triton was first imported in, and the interpreter refuses
    # it when triton was imported before gpuperf.kernels switched the interpreter on.
    return a + b


# listing: add-rms-norm
@triton.jit
def _add_rms_norm_kernel(
    x_ptr, r_ptr, w_ptr, y_ptr, h_ptr, n_cols,
    x_stride, r_stride, y_stride, h_stride, eps,
    BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)  # 64-bit: rows * stride may pass 2**31
    cols = tl.arange(0, BLOCK_N)
    if EVEN_N:  # the row fills the block: no mask, 16-byte vector loads
        x = tl.load(x_ptr + row * x_stride + cols).to(tl.float32)
        r = tl.load(r_ptr + row * r_stride + cols).to(tl.float32)
        w = tl.load(w_ptr + cols).to(tl.float32)
    else:
        mask = cols < n_cols
        x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_ptr + row * r_stride + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    # the residual stream, rounded once to the storage dtype
    h = (x + r).to(h_ptr.dtype.element_ty)
    hf = h.to(tl.float32)
    inv_rms = 1.0 / tl.sqrt(tl.reduce(hf * hf, 0, _add) / n_cols + eps)
    y = (hf * inv_rms * w).to(y_ptr.dtype.element_ty)
    if EVEN_N:
        tl.store(h_ptr + row * h_stride + cols, h)
        tl.store(y_ptr + row * y_stride + cols, y)
    else:
        tl.store(h_ptr + row * h_stride + cols, h, mask=mask)
        tl.store(y_ptr + row * y_stride + cols, y, mask=mask)
    # end listing: add-rms-norm


def _num_warps(block_n: int) -> int:
    # About 8-16 elements per thread: 4 warps up to 2048 columns, 8 at 4096, 16 from 8192.
    return max(4, min(16, block_n // 512))


def add_rms_norm(
    x: torch.Tensor,
    residual: torch.Tensor,
    weight: torch.Tensor,
    eps: float = 1e-6,
    *,
    out: torch.Tensor | None = None,
    residual_out: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Fused ``h = x + residual; y = rms_norm(h) * weight``; returns ``(y, h)``.

    ``x`` and ``residual``: (rows, n) contiguous, one dtype (fp32, fp16, or bf16 on a GPU), one device;
    ``weight``: (n,) of the same dtype and device; ``1 <= n <= MAX_COLS``; ``eps`` finite and > 0.
    ``out`` and ``residual_out`` (allocated when None) may be ``x`` and ``residual`` themselves (in place:
    each program reads its row before writing it) but must not partly overlap an input. Raises
    ``ValueError`` naming the argument.
    """
    plan_key = None
    if not INTERPRETED and out is None and residual_out is None:
        # The call as a model makes it: a plan per (shapes, strides, dtypes, devices, alignments, eps) of a
        # call that passed the checks holds the compiled kernel and its other arguments.
        try:
            plan_key = _plan_key(x, residual, weight, eps)
            plan = _PLANS.get(plan_key) if plan_key is not None else None
        except (AttributeError, TypeError):  # not tensors, or an eps of no value: the checks say what is wrong
            plan_key = plan = None
        if plan is not None:
            launcher, grid3, tail = plan
            out, residual_out = torch.empty_like(x), torch.empty_like(x)
            launcher(grid3, _launch.current_stream(plan_key[3]),  # pointers as integers (softmax.py)
                     (x.data_ptr(), residual.data_ptr(), weight.data_ptr(), out.data_ptr(),
                      residual_out.data_ptr(), *tail))
            return out, residual_out
    if not INTERPRETED and out is None and residual_out is None and _plain_inputs(x, residual, weight, eps):
        # The common call, checked in a few cheap tests (the same conditions as below, fresh outputs).
        out, residual_out = torch.empty_like(x), torch.empty_like(x)
        rows, n = x.shape
    else:
        plan_key = None
        rows, n, out, residual_out = _checked_call(x, residual, weight, eps, out, residual_out)
    if rows == 0:
        return out, residual_out
    block_n = _next_power_of_2(n)
    tail = (n, x.stride(0), residual.stride(0), out.stride(0), residual_out.stride(0), float(eps), block_n,
            block_n == n)
    launcher = _launch.launcher(_add_rms_norm_kernel, (rows,), (x, residual, weight, out, residual_out, *tail),
                                (("num_warps", _num_warps(block_n)),))
    if plan_key is not None and launcher is not None:
        if len(_PLANS) >= _launch.MAX_ENTRIES:
            _PLANS.clear()
        _PLANS[plan_key] = (launcher, (rows, 1, 1), tail)
    return out, residual_out


#: The key of a default call (fresh outputs) -> its plan: launcher, grid, the arguments after the tensors.
_PLANS: dict = {}


def _plan_key(x, residual, weight, eps) -> tuple | None:
    if x.__class__ is not torch.Tensor or residual.__class__ is not torch.Tensor \
            or weight.__class__ is not torch.Tensor:
        return None
    return (x.shape, x.stride(), x.dtype, x.get_device(), residual.shape, residual.stride(), residual.dtype,
            residual.get_device(), weight.shape, weight.stride(), weight.dtype, weight.get_device(),
            x.data_ptr() & 15, residual.data_ptr() & 15, weight.data_ptr() & 15, eps.__class__, eps)


def _next_power_of_2(n: int) -> int:
    return 1 << (n - 1).bit_length()


def _plain_inputs(x, residual, weight, eps) -> bool:
    """x and residual: contiguous 2-D CUDA tensors of one supported dtype, shape and device; weight: (n,)
    of that dtype and device; 1 <= n <= MAX_COLS; eps a float > 0 (finite)."""
    if not (x.__class__ is torch.Tensor and residual.__class__ is torch.Tensor
            and weight.__class__ is torch.Tensor and eps.__class__ is float and 0.0 < eps < math.inf):
        return False
    dtype = x.dtype
    return (x.is_cuda and dtype in DTYPE_NAMES and x.dim() == 2 and residual.dtype is dtype
            and weight.dtype is dtype and residual.shape == x.shape and weight.shape == x.shape[1:]
            and 1 <= x.shape[1] <= MAX_COLS and residual.device == x.device and weight.device == x.device
            and x.is_contiguous() and residual.is_contiguous() and weight.is_contiguous())


def _checked_call(x, residual, weight, eps, out, residual_out):
    _check_tensor("x", x)
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D (rows, n), got shape {tuple(x.shape)}")
    _check_tensor("residual", residual, like=("x", x))
    _check_tensor("weight", weight)
    rows, n = x.shape
    if weight.shape != (n,):
        raise ValueError(f"weight.shape must be (n,) = ({n},), got {tuple(weight.shape)}")
    if weight.dtype != x.dtype or weight.device != x.device:
        raise ValueError(f"weight must have x's dtype {x.dtype} and device {x.device}, got "
                         f"{weight.dtype} on {weight.device}")
    if not 1 <= n <= MAX_COLS:
        raise ValueError(f"x.shape[1] (n) must be in [1, {MAX_COLS}] (one row per program), got {n}")
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite number > 0, got {eps!r}")
    inputs = {"x": x, "residual": residual, "weight": weight}
    out = _checked_output("out", out, x, inputs)
    residual_out = _checked_output("residual_out", residual_out, x, inputs)
    if out.data_ptr() == residual_out.data_ptr() and out.numel():
        raise ValueError("out and residual_out must be different tensors")
    return rows, n, out, residual_out


def _checked_output(name: str, out, like: torch.Tensor, inputs: dict) -> torch.Tensor:
    if out is None:
        return torch.empty_like(like)
    _check_tensor(name, out, like=("x", like))
    for in_name, t in inputs.items():
        if in_name == "weight":
            if _checks.byte_ranges_overlap(out, t):
                raise ValueError(f"{name} must not overlap weight (every program reads all of it)")
            continue
        offset = _checks.partial_overlap_offset(out, t)
        if offset is not None:
            raise ValueError(f"{name} must be {in_name} itself or not overlap it, got {offset:+d} bytes from it")
    return out


def _check_tensor(name: str, t: object, like: tuple[str, torch.Tensor] | None = None) -> None:
    _checks.check_is_tensor(name, t)
    _checks.check_dtype(name, t, DTYPE_NAMES)
    _checks.check_device(name, t, INTERPRETED, bf16_note=" (it rounds bf16 wrongly)")
    _checks.check_contiguous(name, t)
    if like is not None:
        other_name, other = like
        _checks.check_same_shape(name, t, other_name, other)
        _checks.check_same_dtype_and_device(name, t, other_name, other)


__all__ = [
    "DTYPE_NAMES",
    "INTERPRETED",
    "MAX_COLS",
    "add_rms_norm",
    "add_rms_norm_bytes_moved",
    "add_rms_norm_reference",
    "add_rms_norm_reference_fp64",
]
