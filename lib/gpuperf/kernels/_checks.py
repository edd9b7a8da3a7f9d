"""Input checks shared by the kernel wrappers (private: the public wrappers keep their own signatures).

Each helper raises ``ValueError`` naming the argument and the value. The wording that differs from one
kernel to another (what the shape should be, why a device is needed) is passed in, so every wrapper keeps
its exact messages; the caller also passes the mode its kernels were defined in (its module's
``INTERPRETED``), read at call time, since a kernel keeps that mode for good (see ``gpuperf.kernels``).
Overlap tests work on byte addresses (``data_ptr``) and do not read the tensors.
"""

from __future__ import annotations

import torch


def check_is_tensor(name: str, t: object) -> None:
    if not isinstance(t, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(t).__name__}")


def check_ndim(name: str, t: torch.Tensor, ndim: int, requirement: str) -> None:
    """``requirement`` is the message's middle, e.g. ``"must be a 2-D matrix"``."""
    if t.dim() != ndim:
        raise ValueError(f"{name} {requirement}, got shape {tuple(t.shape)}")


def check_dtype(name: str, t: torch.Tensor, dtype_names: dict) -> None:
    if t.dtype not in dtype_names:
        raise ValueError(f"{name}.dtype must be one of {list(dtype_names)}, got {t.dtype}")


def check_device(name: str, t: torch.Tensor, interpreted: bool, *, cpu_note: str = "", bf16_note: str = "",
                 cuda_note: str = " (kernels compiled for it)", cpu_dtypes: str = "fp32 or fp16") -> None:
    """Interpreted kernels take CPU tensors and no bf16 (the interpreter rounds it wrongly); compiled ones
    take CUDA tensors. The notes are inserted before each message's ``, got`` / ``; use`` part;
    ``cpu_dtypes`` names what the kernel takes on the CPU instead of bf16."""
    if interpreted:
        if t.device.type != "cpu":
            raise ValueError(
                f"{name} must be on the CPU while the Triton interpreter runs the kernels{cpu_note}, "
                f"got device {t.device}"
            )
        if t.dtype == torch.bfloat16:
            raise ValueError(
                f"{name}.dtype torch.bfloat16 is not supported by the Triton interpreter{bf16_note}; "
                f"use {cpu_dtypes} on the CPU, bf16 on a GPU; got {t.dtype}"
            )
    elif t.device.type != "cuda":
        raise ValueError(f"{name} must be on a CUDA device{cuda_note}, got device {t.device}")


def check_contiguous(name: str, t: torch.Tensor, *, with_shape: bool = False,
                     hint: str = " (call .contiguous())") -> None:
    if not t.is_contiguous():
        shape = f"shape {tuple(t.shape)} with " if with_shape else ""
        raise ValueError(f"{name} must be contiguous, got {shape}strides {tuple(t.stride())}{hint}")


def check_same_shape(name: str, t: torch.Tensor, other_name: str, other: torch.Tensor) -> None:
    if t.shape != other.shape:
        raise ValueError(f"{name}.shape must equal {other_name}.shape {tuple(other.shape)}, got {tuple(t.shape)}")


def check_same_dtype_and_device(name: str, t: torch.Tensor, other_name: str, other: torch.Tensor) -> None:
    if t.dtype != other.dtype:
        raise ValueError(f"{name}.dtype must equal {other_name}.dtype {other.dtype}, got {t.dtype}")
    if t.device != other.device:
        raise ValueError(f"{name}.device must equal {other_name}.device {other.device}, got {t.device}")


def partial_overlap_offset(out: torch.Tensor, t: torch.Tensor) -> int | None:
    """``out``'s start minus ``t``'s in bytes when ``out`` starts elsewhere within ``out``'s length of ``t``
    (a partial overlap, which an elementwise kernel cannot survive: a program could read an element another
    program has already overwritten); None when ``out`` is ``t`` itself or lies clear of its start."""
    size = out.numel() * out.element_size()
    offset = out.data_ptr() - t.data_ptr()
    return offset if offset != 0 and -size < offset < size else None


def byte_ranges_overlap(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when the bytes ``a`` spans and those ``b`` spans intersect (contiguous tensors)."""
    a_lo, b_lo = a.data_ptr(), b.data_ptr()
    return a_lo < b_lo + b.numel() * b.element_size() and b_lo < a_lo + a.numel() * a.element_size()


def check_out_like(out: torch.Tensor, x: torch.Tensor, overlap_reason: str) -> None:
    """``out`` has ``x``'s shape, dtype and device and shares no byte with it; ``overlap_reason`` says why the
    kernel cannot allow an overlap."""
    if out.shape != x.shape or out.dtype != x.dtype or out.device != x.device:
        raise ValueError(f"out must match x (shape {tuple(x.shape)}, {x.dtype}, {x.device}), got "
                         f"shape {tuple(out.shape)}, {out.dtype}, {out.device}")
    if out.numel() and byte_ranges_overlap(out, x):
        raise ValueError(f"out must not overlap x ({overlap_reason})")
