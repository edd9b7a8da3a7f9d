"""Row softmax in Triton: one fused pass, an online (streaming) variant for long rows, and three passes.

``softmax(x, method=...)`` computes ``softmax`` over the last dimension of a contiguous 2-D tensor of
``n_rows x n_cols`` values; every program owns one row and computes in fp32. With ``b`` bytes per element
and ``n = n_rows * n_cols``, the HBM traffic of each method is:

================  ==========================================================  ==================
method            what one program does with its row                          HBM bytes
================  ==========================================================  ==================
``"fused"``       load the whole row into registers, max, exp, sum, divide,    ``2 n b``
                  store (rows up to :data:`FUSED_MAX_COLS`)
``"online"``      pass 1 streams blocks and keeps a running max ``m`` and a   ``3 n b``
                  running sum ``l`` rescaled by ``exp(m_old - m_new)``;       (``2 n b`` when the
                  pass 2 re-reads the row backwards and writes               re-read hits L2)
                  ``exp(x - m) / l`` (a persistent grid keeps few rows in
                  flight, so the re-read can hit L2)
``"three_pass"``  safe softmax as written on paper: a pass for the max, one    ``4 n b``
                  for the sum of exponentials, one to normalise and store
================  ==========================================================  ==================

``torch.softmax`` moves ``2 n b`` too; a copy (``2 n b``) is the same-run reference for "as fast as memory
allows". ``"auto"`` takes ``"fused"`` up to :data:`AUTO_FUSED_MAX_COLS` columns and ``"online"`` beyond.

:func:`softmax_reference` is the float64 reference. bf16 is refused under the Triton interpreter (it
rounds bf16 wrongly there; see ``gpuperf.kernels``); kernels convert to fp32 right after loading.
"""

from __future__ import annotations

import numbers

import torch
import triton
import triton.language as tl

from gpuperf.kernels import _checks, interpreter_enabled

INTERPRETED = interpreter_enabled()

DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}

METHODS = ("auto", "fused", "online", "three_pass")

#: Longest row the fused kernel holds in registers (65536 fp32 values over 32 warps: 64 per thread).
FUSED_MAX_COLS = 65536

#: Longest row "auto" gives to the fused kernel; longer rows stream (set from the H200 run, bench/NOTES.md).
AUTO_FUSED_MAX_COLS = 32768

#: Columns per block of the streaming kernels on a GPU (under the interpreter: 1024).
STREAM_BLOCK = 4096

#: Launch of the online kernel on a GPU: columns per block, warps per program, loads in flight per
#: loop (software pipelining), programs per SM in the persistent grid: the fastest of the launches in
#: the H200 sweep of job fa-2 (book/data/softmax_h200.json, bench/NOTES.md).
ONLINE_BLOCK = 2048
ONLINE_NUM_WARPS = 4
ONLINE_NUM_STAGES = 4
ONLINE_PROGRAMS_PER_SM = 8


def softmax_reference(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension in float64 on the CPU (the accuracy reference)."""
    return torch.softmax(x.detach().to(device="cpu", dtype=torch.float64), dim=-1)


def _fused_num_warps(block: int) -> int:
    return 4 if block <= 1024 else 8 if block <= 4096 else 16 if block <= 16384 else 32


@triton.jit
def _fused_kernel(X, Y, n_cols, stride_x, stride_y, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    # HBM: read the row once (n_cols b), write it once (n_cols b).
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    if EVEN:  # n_cols == BLOCK: no mask, so loads and stores stay 16-byte vectors
        x = tl.load(X + row * stride_x + offs).to(tl.float32)
    else:
        x = tl.load(X + row * stride_x + offs, mask=offs < n_cols, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 0))
    y = e / tl.sum(e, 0)
    if EVEN:
        tl.store(Y + row * stride_y + offs, y.to(Y.dtype.element_ty))
    else:
        tl.store(Y + row * stride_y + offs, y.to(Y.dtype.element_ty), mask=offs < n_cols)


@triton.jit
def _load_block(X, row_start, start, n_cols, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    if start + BLOCK <= n_cols:  # mask only the last, partial block
        x = tl.load(X + row_start + offs)
    else:
        x = tl.load(X + row_start + offs, mask=offs < n_cols, other=float("-inf"))
    return x.to(tl.float32)


@triton.jit
def _store_block(Y, row_start, start, n_cols, y, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    if start + BLOCK <= n_cols:
        tl.store(Y + row_start + offs, y.to(Y.dtype.element_ty))
    else:
        tl.store(Y + row_start + offs, y.to(Y.dtype.element_ty), mask=offs < n_cols)


@triton.jit
def _online_update(m, l, x):
    """Fold a block x into per-lane running (max, sum); a lane that has seen only -inf keeps (-inf, 0)."""
    m_new = tl.maximum(m, x)
    shift = tl.where(m_new > float("-inf"), m_new, 0.0)  # avoids -inf - (-inf) = NaN
    l = l * tl.exp(m - shift) + tl.exp(x - shift)
    return m_new, l


@triton.jit
def _online_kernel(X, Y, n_rows, n_cols, stride_x, stride_y, BLOCK: tl.constexpr, NUM_STAGES: tl.constexpr):
    # HBM: pass 1 reads the row (n_cols b); pass 2 reads it again and writes it (2 n_cols b). The grid is
    # persistent (programs_per_sm programs per SM, each looping over rows), which bounds the rows in flight
    # (1056 with the default launch on an H200) so that pass 2, last block first, may find pass 1's reads
    # still in L2. At 65536 columns and more it mostly does not (chapter 13, bench/NOTES.md).
    n_full = n_cols // BLOCK
    full_end = n_full * BLOCK
    offs = tl.arange(0, BLOCK)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        # 64-bit offsets. tl.cast, not .to(): Triton compiles an integer argument equal to 1 (the stride of
        # a one-column matrix) as a Python constant, which has no .to (the 1 x 1 case failed to compile on
        # the H200 in job fa-3), and the interpreter hands the loop index over as a Python int.
        x_row = X + tl.cast(row, tl.int64) * stride_x
        y_row = Y + tl.cast(row, tl.int64) * stride_y
        # One running (max, sum) per lane; merged once at the end, so the loop has no reductions.
        m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
        l = tl.zeros([BLOCK], dtype=tl.float32)
        for start in tl.range(0, full_end, BLOCK, num_stages=NUM_STAGES):  # full blocks: no mask
            m, l = _online_update(m, l, tl.load(x_row + start + offs).to(tl.float32))
        if full_end < n_cols:  # the one partial block
            tail = tl.load(x_row + full_end + offs, mask=full_end + offs < n_cols, other=float("-inf"))
            m, l = _online_update(m, l, tail.to(tl.float32))
        m_row = tl.max(m, 0)
        l_row = tl.sum(l * tl.exp(m - m_row), 0)  # lanes of padding only: l = 0, exp(-inf) = 0
        inv = 1.0 / l_row
        # Pass 2 backwards: the blocks read last are the likeliest still in L2.
        if full_end < n_cols:
            tail = tl.load(x_row + full_end + offs, mask=full_end + offs < n_cols, other=float("-inf"))
            y = tl.exp(tail.to(tl.float32) - m_row) * inv
            tl.store(y_row + full_end + offs, y.to(Y.dtype.element_ty), mask=full_end + offs < n_cols)
        for i in tl.range(0, n_full, num_stages=NUM_STAGES):
            start = (n_full - 1 - i) * BLOCK
            y = tl.exp(tl.load(x_row + start + offs).to(tl.float32) - m_row) * inv
            tl.store(y_row + start + offs, y.to(Y.dtype.element_ty))


@triton.jit
def _three_pass_kernel(X, Y, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    # HBM: three reads of the row (max, sum, normalise) and one write: 4 n_cols b.
    row = tl.program_id(0).to(tl.int64)
    x_start = row * stride_x
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        m = tl.maximum(m, _load_block(X, x_start, start, n_cols, BLOCK))
    m_row = tl.max(m, 0)
    l = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        l += tl.exp(_load_block(X, x_start, start, n_cols, BLOCK) - m_row)
    inv = 1.0 / tl.sum(l, 0)
    y_start = row * stride_y
    for start in range(0, n_cols, BLOCK):
        x = _load_block(X, x_start, start, n_cols, BLOCK)
        _store_block(Y, y_start, start, n_cols, tl.exp(x - m_row) * inv, BLOCK)


def softmax(x: torch.Tensor, out: torch.Tensor | None = None, method: str = "auto", *,
            block_cols: int | None = None, num_warps: int | None = None, num_stages: int | None = None,
            programs_per_sm: int | None = None) -> torch.Tensor:
    """Softmax over the last dimension of a contiguous 2-D tensor, by a Triton kernel; returns ``out``.

    ``method`` is one of :data:`METHODS` (module docstring). ``block_cols`` (a power of two >= 16) sets
    the block of the streaming methods; ``num_warps`` overrides the launch heuristic; ``num_stages`` (loads
    in flight per loop) and ``programs_per_sm`` (size of the persistent grid) tune ``"online"``. ``out`` (allocated
    when None) must match ``x`` and must not overlap it. Raises ``ValueError`` naming the argument.
    """
    _check_tensor("x", x)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    n_rows, n_cols = x.shape
    if out is None:
        out = torch.empty_like(x)
    else:
        _check_tensor("out", out)
        if out.shape != x.shape or out.dtype != x.dtype or out.device != x.device:
            raise ValueError(f"out must match x (shape {tuple(x.shape)}, {x.dtype}, {x.device}), got "
                             f"shape {tuple(out.shape)}, {out.dtype}, {out.device}")
        size = x.numel() * x.element_size()
        if out.numel() and abs(out.data_ptr() - x.data_ptr()) < size:
            raise ValueError("out must not overlap x (the streaming methods re-read x after writing)")
    if num_warps is not None and num_warps not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"num_warps must be a power of two from 1 to 32, got {num_warps!r}")
    if n_rows == 0 or n_cols == 0:
        return out
    if method == "auto":
        method = "fused" if n_cols <= AUTO_FUSED_MAX_COLS else "online"
    if method == "fused":
        if n_cols > FUSED_MAX_COLS:
            raise ValueError(f"method 'fused' holds a row in registers: x.shape[1] must be at most "
                             f"{FUSED_MAX_COLS}, got {n_cols} (use 'online')")
        block = triton.next_power_of_2(n_cols)
        _fused_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=block,
                                 EVEN=(block == n_cols), num_warps=num_warps or _fused_num_warps(block))
        return out
    if block_cols is None:
        block_cols = 1024 if INTERPRETED else ONLINE_BLOCK if method == "online" else STREAM_BLOCK
    if (isinstance(block_cols, bool) or not isinstance(block_cols, numbers.Integral) or block_cols < 16
            or block_cols & (block_cols - 1)):
        raise ValueError(f"block_cols must be a power of two >= 16, got {block_cols!r}")
    if method == "three_pass":
        _three_pass_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), BLOCK=block_cols,
                                      num_warps=num_warps or _fused_num_warps(block_cols))
        return out
    stages = ONLINE_NUM_STAGES if num_stages is None else num_stages
    per_sm = ONLINE_PROGRAMS_PER_SM if programs_per_sm is None else programs_per_sm
    for name, value in (("num_stages", stages), ("programs_per_sm", per_sm)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= value <= 32:
            raise ValueError(f"{name} must be an integer from 1 to 32, got {value!r}")
    n_programs = n_rows if INTERPRETED else min(n_rows, per_sm * _sm_count(x.device))
    _online_kernel[(n_programs,)](x, out, n_rows, n_cols, x.stride(0), out.stride(0), BLOCK=block_cols,
                                  NUM_STAGES=stages, num_warps=num_warps or ONLINE_NUM_WARPS)
    return out


def _sm_count(device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def softmax_bytes_moved(n_rows: int, n_cols: int, bytes_per_element: int, method: str) -> int:
    """HBM bytes of each method as the module docstring counts them (no L2 hits assumed)."""
    passes = {"fused": 2, "torch": 2, "copy": 2, "online": 3, "three_pass": 4}
    if method not in passes:
        raise ValueError(f"method must be one of {list(passes)}, got {method!r}")
    return passes[method] * n_rows * n_cols * bytes_per_element


def _check_tensor(name: str, t) -> None:
    _checks.check_is_tensor(name, t)
    _checks.check_ndim(name, t, 2, "must be 2-D (rows, cols)")
    _checks.check_dtype(name, t, DTYPE_NAMES)
    _checks.check_contiguous(name, t, hint="")
    _checks.check_device(name, t, INTERPRETED, cuda_note="")


__all__ = [
    "AUTO_FUSED_MAX_COLS",
    "DTYPE_NAMES",
    "FUSED_MAX_COLS",
    "INTERPRETED",
    "METHODS",
    "ONLINE_BLOCK",
    "ONLINE_NUM_STAGES",
    "ONLINE_NUM_WARPS",
    "ONLINE_PROGRAMS_PER_SM",
    "STREAM_BLOCK",
    "softmax",
    "softmax_bytes_moved",
    "softmax_reference",
]
