"""Two read-only kernels a reader times on their own GPU: a streaming read and a strided read.

What this module shows (chapters 02 and 04): how many bytes a kernel keeps in flight decides the bandwidth
it gets (Little's law), and how far apart the lanes of a warp read decides how many of the bytes it moves
are useful (coalescing). Both kernels only read; each folds what it read into an XOR, so that the loads
cannot be dropped and the result can be checked exactly against :func:`xor_reference`.

=========================  ============================================  =====================================
kernel                     what one program does                         HBM bytes read
=========================  ============================================  =====================================
``stream_read``            ``n_iters`` times: load a tile of BLOCK       4 n (every element once, coalesced)
                           int32, XOR it into registers, step a grid
``strided_read``           load BLOCK int32 that lie ``stride`` apart    32 n_used per 32-byte sector touched:
                                                                         4 n_used x min(stride, 8)
=========================  ============================================  =====================================

**Bytes in flight.** In ``stream_read`` each of a program's 32 x num_warps threads loads
BLOCK / (32 x num_warps) consecutive int32 of a tile (16-byte vector loads, four int32 each) and issues them
all before it XORs the first, so a thread keeps 4 x BLOCK / (32 x num_warps) bytes in flight, and an SM
holding p programs keeps p x 4 x BLOCK bytes. Launched with ``num_stages=1``, the compiler does not
prefetch the next tile, so that count is exact. The grid is persistent (p programs per SM, each looping),
so that p is set by the launch, not by how many programs happen to fit.

Both kernels run through Triton's interpreter on the CPU (for the tests: correctness only) and compiled on
any CUDA GPU Triton supports, Colab's T4 (sm_75) included: they use only loads, XOR and stores of int32.
"""

from __future__ import annotations

import numbers

import torch
import triton
import triton.language as tl

from gpuperf.kernels import interpreter_enabled

#: True when this module's kernels were defined for Triton's interpreter (fixed at import).
INTERPRETED = interpreter_enabled()

#: Bytes of one element (int32) and of one vector load (four int32).
ELEMENT_BYTES = 4
VECTOR_BYTES = 16


@triton.jit
def _stream_read_kernel(X, Out, n_iters, BLOCK: tl.constexpr):
    # HBM: reads n_programs x n_iters x BLOCK int32 once each; writes BLOCK int32 per program.
    pid = tl.program_id(0)
    step = tl.num_programs(0).to(tl.int64) * BLOCK  # the whole grid's tile
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.int32)
    for _ in range(n_iters):
        acc ^= tl.load(X + offs)  # BLOCK / (32 num_warps) int32 per thread, all in flight
        offs += step
    tl.store(Out + pid * BLOCK + tl.arange(0, BLOCK), acc)


@triton.jit
def _strided_read_kernel(X, Out, stride, BLOCK: tl.constexpr):
    # HBM: reads BLOCK int32 per program, `stride` elements apart; writes one int32 per program.
    pid = tl.program_id(0)
    idx = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + idx * stride)  # lane i of a warp reads 4 bytes at 4 * stride * i
    tl.store(Out + pid, tl.xor_sum(x, 0))


def _check_int32(name: str, x) -> None:
    if not isinstance(x, torch.Tensor) or x.dtype != torch.int32 or x.dim() != 1 or not x.is_contiguous():
        raise ValueError(f"{name} must be a contiguous 1-D int32 tensor, got {getattr(x, 'dtype', type(x))} "
                         f"of shape {tuple(getattr(x, 'shape', ()))}")
    if INTERPRETED == x.is_cuda:
        where = "CPU tensors (Triton's interpreter)" if INTERPRETED else "CUDA tensors"
        raise ValueError(f"{name} is on {x.device}; this module's kernels take {where}")


def _check_positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return int(value)


def _check_block(block: int) -> int:
    block = _check_positive_int("block", block)
    if block & (block - 1):
        raise ValueError(f"block must be a power of two, got {block}")
    return block


def stream_read_shape(n_elements: int, n_programs: int, block: int) -> int:
    """Iterations each program makes so that n_programs x iterations x block elements fit in n_elements
    (the kernel reads whole tiles only; the rest of the buffer is not read). Raises ValueError below one."""
    n_elements = _check_positive_int("n_elements", n_elements)
    n_programs = _check_positive_int("n_programs", n_programs)
    block = _check_block(block)
    n_iters = n_elements // (n_programs * block)
    if n_iters < 1:
        raise ValueError(f"n_elements ({n_elements}) is smaller than one tile per program "
                         f"({n_programs} x {block})")
    return n_iters


def stream_read(x: torch.Tensor, n_programs: int, block: int, num_warps: int = 4,
                out: torch.Tensor | None = None) -> torch.Tensor:
    """Read the first n_programs x n_iters x block elements of `x` (int32) with a persistent grid of
    n_programs programs; return each program's XOR of what it read, shape (n_programs, block).

    Each thread keeps 4 x block / (32 x num_warps) bytes in flight (module docstring)."""
    _check_int32("x", x)
    block = _check_block(block)
    num_warps = _check_positive_int("num_warps", num_warps)
    if block < 32 * num_warps:
        raise ValueError(f"block ({block}) must hold at least one element per thread (32 x num_warps = "
                         f"{32 * num_warps})")
    n_iters = stream_read_shape(x.numel(), n_programs, block)
    if out is None:
        out = torch.empty(n_programs * block, dtype=torch.int32, device=x.device)
    _stream_read_kernel[(n_programs,)](x, out, n_iters, BLOCK=block, num_warps=num_warps, num_stages=1)
    return out.view(n_programs, block)


def _xor_over_first_dim(t: torch.Tensor) -> torch.Tensor:
    """XOR of the slices of `t` along its first dimension, folded pairwise (log2 steps, not one per slice)."""
    while t.shape[0] > 1:
        half = t.shape[0] // 2
        folded = t[:half] ^ t[half:2 * half]
        t = torch.cat([folded, t[2 * half:]]) if t.shape[0] % 2 else folded
    return t[0]


def stream_read_reference(x: torch.Tensor, n_programs: int, block: int) -> torch.Tensor:
    """What :func:`stream_read` returns, computed with torch: tile t of the grid belongs to program
    t mod n_programs, and each program XORs its tiles element by element."""
    n_iters = stream_read_shape(x.numel(), n_programs, block)
    return _xor_over_first_dim(x[: n_iters * n_programs * block].view(n_iters, n_programs, block))


def strided_read(x: torch.Tensor, n_used: int, stride: int, block: int = 1024, num_warps: int = 4,
                 out: torch.Tensor | None = None) -> torch.Tensor:
    """Read the n_used elements x[0], x[stride], x[2 stride], ... of `x` (int32), block per program;
    return each program's XOR of what it read (n_used / block values)."""
    _check_int32("x", x)
    block = _check_block(block)
    n_used = _check_positive_int("n_used", n_used)
    stride = _check_positive_int("stride", stride)
    if n_used % block:
        raise ValueError(f"n_used ({n_used}) must be a multiple of block ({block})")
    if (n_used - 1) * stride >= x.numel():
        raise ValueError(f"x holds {x.numel()} elements; stride {stride} over {n_used} needs "
                         f"{(n_used - 1) * stride + 1}")
    n_programs = n_used // block
    if out is None:
        out = torch.empty(n_programs, dtype=torch.int32, device=x.device)
    _strided_read_kernel[(n_programs,)](x, out, stride, BLOCK=block, num_warps=num_warps)
    return out


def strided_read_reference(x: torch.Tensor, n_used: int, stride: int, block: int = 1024) -> torch.Tensor:
    """What :func:`strided_read` returns, computed with torch."""
    picked = x[: (n_used - 1) * stride + 1: stride].view(n_used // block, block)
    return _xor_over_first_dim(picked.t().contiguous())


def sectors_per_request(stride: int, element_bytes: int = ELEMENT_BYTES, sector_bytes: int = 32) -> int:
    """32-byte sectors one warp's load touches when its 32 lanes read `element_bytes` each, `stride`
    elements apart (aligned start): the bytes moved per useful byte are this x 32 / (32 x element_bytes)."""
    stride = _check_positive_int("stride", stride)
    span = [lane * stride * element_bytes // sector_bytes for lane in range(32)]
    return len(set(span))


__all__ = ["ELEMENT_BYTES", "INTERPRETED", "VECTOR_BYTES", "sectors_per_request", "stream_read",
           "stream_read_reference", "stream_read_shape", "strided_read", "strided_read_reference"]
