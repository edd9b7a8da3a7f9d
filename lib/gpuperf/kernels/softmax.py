"""Row softmax in Triton: one fused pass, a row split over cooperating programs and an online (streaming)
variant for long rows, and three passes.

``softmax(x, method=...)`` computes ``softmax`` over the last dimension of a 2-D tensor (rows contiguous, any
row stride) of ``n_rows x n_cols`` values in fp32; every program owns one row, except in ``"split"``. With
``b`` bytes per element and ``n = n_rows * n_cols``, the HBM traffic of each method is:

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
``"split"``       a row is cut into chunks of :data:`SPLIT_CHUNK` columns,     ``2 n b``
                  one program per chunk, each holding its chunk in registers;  (cooperative);
                  the programs of a row publish (max, sum of exp), wait for    ``3 n b`` (two
                  each other's, merge the partials and normalise the chunk     launches, under
                  still in registers (one cooperative launch); the two-launch  the interpreter)
                  form re-reads the chunk instead
``"gluon"``       Hopper only (:mod:`gpuperf.kernels.gluon_softmax`): a        ``2 n b``
                  persistent program stages rows in shared memory by TMA,
                  requesting the next rows' chunks while it normalises
``"rows"``        several short rows per program in registers, lengths and    ``2 n b``
                  strides passed as multiples of a 16-byte vector
``"stream"``      the online kernel with few rows in flight (so pass 2 finds   ``2 n b`` when
                  the row in L2), one exponential per value and pass, each     pass 2 hits L2
                  row's body 16-byte aligned whatever its offset; with
                  ``cooperative=True`` a row over programs of ``chunk_cols``
                  that meet at the split kernel's barrier between the passes
================  ==========================================================  ==================

``torch.softmax`` moves ``2 n b`` too; a copy (``2 n b``) is the same-run reference for "as fast as memory
allows". ``"auto"`` takes ``"gluon"`` on a Hopper GPU for 16-bit rows of :data:`GLUON_AUTO_COLS` columns
whose stride is a multiple of 16 bytes, at least :data:`GLUON_AUTO_MIN_ROWS` of them (where it measured
faster), else ``"fused"`` up to
:data:`AUTO_FUSED_MAX_COLS` columns (and up to :data:`FUSED_MAX_COLS` for rows whose length is not a multiple
of 16), ``"split"`` beyond (when the row's programs fit on the GPU at once) and ``"online"`` otherwise;
on a GPU, rows longer than :data:`STREAM_AUTO_UNALIGNED_MIN_COLS` that do not all start 16-byte aligned
(50257 columns, or a slice of wider rows) take ``"stream"``.

The cooperative split kernel is the one kernel of the course whose programs wait for each other; the comment
above :func:`_split_coop_kernel` argues why it cannot deadlock. The Triton interpreter runs programs one
after another, so a program there would wait forever for the next: under the interpreter (and with
``cooperative=False``) ``"split"`` runs as two launches, partials then normalise, with the same helpers.

:func:`softmax_reference` is the float64 reference. bf16 is refused under the Triton interpreter (it
rounds bf16 wrongly there; see ``gpuperf.kernels``); kernels convert to fp32 right after loading.
"""

from __future__ import annotations

import dataclasses
import numbers

import torch
import triton
import triton.language as tl

from gpuperf.kernels import _checks, _launch, interpreter_enabled

INTERPRETED = interpreter_enabled()

DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}

METHODS = ("auto", "fused", "online", "three_pass", "split", "gluon", "rows", "stream")

#: Row lengths (first exclusive, last inclusive) that ``"auto"`` gives to the Gluon kernel on a Hopper GPU
#: (fp16/bf16, rows 16-byte aligned), from the H200 runs in bench/NOTES.md ("Gluon softmax"): at 16384 the
#: fused kernel is faster; the longest row measured, 100000, keeps 24 KiB of the next rows in flight, as
#: up to 102400 does; longer rows fit the kernel's shared memory with less or nothing ahead (not measured).
GLUON_AUTO_COLS = (16384, 102400)

#: Fewest rows ``"auto"`` gives to the Gluon kernel: its gain comes from requesting the next rows' chunks
#: while a row is reduced, which needs rows to spare on every SM (all runs measured 1024 rows or more); a
#: few rows, as in one decoding step's logits, stay with the fused kernel and its cached launch (host time).
GLUON_AUTO_MIN_ROWS = 256

#: Longest row the fused kernel holds in registers (65536 fp32 values over 32 warps: 64 per thread).
FUSED_MAX_COLS = 65536

#: Rows from this many columns on whose length is not a multiple of 16 take the fused kernel with an
#: aligned body (:func:`_fused_body_kernel`); shorter ones the plain masked kernel.
BODY_MIN_COLS = 64

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

#: Launch of the split kernel on a GPU: columns per program (a row of n columns has ceil(n / SPLIT_CHUNK)
#: programs), warps per program, and whether a program loads its chunk of the next row while it waits
#: at the barrier: the fastest launch of the H200 sweep of job sm-4 at 65536-262144 columns
#: (book/data/softmax_split4_sweep_h200.json, bench/NOTES.md).
SPLIT_CHUNK = 8192
SPLIT_NUM_WARPS = 8
SPLIT_PREFETCH = False

#: Launch of ``"rows"`` on a GPU: rows per program and warps, by the row's padded length (lanes).
ROWS_LAUNCH = {1024: (4, 4), 2048: (2, 4), 4096: (1, 4), 8192: (1, 8), 16384: (1, 16)}

#: Launch of ``"stream"`` on a GPU: columns per block, warps, programs per SM, loads in flight per loop.
STREAM_LAUNCH = (4096, 8, 2, 3)

#: Columns per program of ``"stream"`` with ``cooperative=True`` (a row over several programs).
STREAM_SPLIT_CHUNK = 32768

#: ``"auto"`` (after the Gluon kernel's rows): ``"rows"`` up to ROWS_AUTO_MAX_COLS columns, ``"stream"``
#: beyond STREAM_AUTO_MIN_COLS (on a GPU), the older choices between.
ROWS_AUTO_MAX_COLS = 0
STREAM_AUTO_MIN_COLS = 1 << 30
#: ``"auto"``'s ``"stream"`` splits rows of at least this many columns over cooperating programs.
STREAM_SPLIT_AUTO_MIN_COLS = 1 << 30
#: ``"auto"`` takes ``"stream"`` (on a GPU) for rows longer than this whose starts are not all 16-byte
#: aligned (a length such as 50257, or rows read from or written to a wider stride): its aligned bodies move
#: 16-byte vectors where the fused kernel's rows fall back to narrower loads. Measured on an H100 on
#: 2026-12-05 (bench/profiles/h100-2026-12-05 and h100-2026-12-05b, same runs): 4096 x 50257 fp16 at 0.65 of the copy against the fused
#: kernel's 0.57; rows of stride 50304 into a contiguous ``out`` at 1.11 of the strided copy against the
#: Gluon kernel's 0.42 (which "auto" gave them before): this rule comes before the Gluon kernel's.
STREAM_AUTO_UNALIGNED_MIN_COLS = 32768


def softmax_reference(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension in float64 on the CPU (the accuracy reference)."""
    return torch.softmax(x.detach().to(device="cpu", dtype=torch.float64), dim=-1)


# ---- References: the loops the kernels run, in PyTorch --------------------------------------------------
# Chapter 13 lists each of these before the kernel that implements it. They work on every row at once
# (a kernel gives each row a program) and in fp32, as the kernels do; tests check them against float64.


def softmax_three_pass_torch(x: torch.Tensor, block: int = 1024) -> torch.Tensor:
    """Softmax of each row of 2-D ``x`` as :func:`_three_pass_kernel` computes it:
    a pass over blocks of ``block`` columns for the maximum m, one for
    l = sum exp(x - m), one to write exp(x - m) / l."""
    x = x.float()
    n_rows, n_cols = x.shape
    m = torch.full((n_rows, 1), float("-inf"), device=x.device)
    for start in range(0, n_cols, block):  # pass 1: m = max_j x_j
        m = torch.maximum(m, x[:, start:start + block].amax(1, keepdim=True))
    l = torch.zeros((n_rows, 1), device=x.device)
    for start in range(0, n_cols, block):  # pass 2: l = sum_j exp(x_j - m)
        l += torch.exp(x[:, start:start + block] - m).sum(1, keepdim=True)
    y = torch.empty_like(x)
    for start in range(0, n_cols, block):  # pass 3: y_j = exp(x_j - m) / l
        y[:, start:start + block] = torch.exp(x[:, start:start + block] - m) / l
    return y


def softmax_fused_torch(x: torch.Tensor) -> torch.Tensor:
    """Softmax of each row of 2-D ``x`` as :func:`_fused_kernel` computes it: the
    whole row at once."""
    x = x.float()  # the row, read once
    e = torch.exp(x - x.amax(1, keepdim=True))  # e_j = exp(x_j - m), m = max_j x_j
    return e / e.sum(1, keepdim=True)  # y_j = e_j / l, l = sum_j e_j


def softmax_online_torch(x: torch.Tensor, block: int = 1024) -> torch.Tensor:
    """Softmax of each row of 2-D ``x`` as :func:`_online_kernel` computes it:
    pass 1 keeps a running maximum m and sum l over blocks of ``block`` columns
    (the online recurrence), pass 2 writes exp(x - m) / l. Every row needs one
    finite value."""
    x = x.float()
    n_rows, n_cols = x.shape
    m = torch.full((n_rows, 1), float("-inf"), device=x.device)  # m_0 = -inf
    l = torch.zeros((n_rows, 1), device=x.device)  # l_0 = 0
    for start in range(0, n_cols, block):  # pass 1
        xb = x[:, start:start + block]
        m_new = torch.maximum(m, xb.amax(1, keepdim=True))  # m_k
        l = l * torch.exp(m - m_new) + torch.exp(xb - m_new).sum(1, keepdim=True)  # l_k
        m = m_new
    y = torch.empty_like(x)
    for start in range(0, n_cols, block):  # pass 2: y_j = exp(x_j - m) / l
        y[:, start:start + block] = torch.exp(x[:, start:start + block] - m) / l
    return y


def _fused_num_warps(block: int) -> int:
    # 8 warps up to 8192 columns: at 5000 and 6144 columns 8 warps reached 0.84 and 0.96 of the copy, 16
    # warps 0.68 and 0.91 (H200, fp16, bench/profiles/softmax_rows_sweep_before_h200.json).
    return 4 if block <= 1024 else 8 if block <= 8192 else 16 if block <= 16384 else 32


@triton.jit
def _fused_kernel(X, Y, n_cols, stride_x, stride_y,
                  BLOCK: tl.constexpr, EVEN: tl.constexpr):
    # listing: fused
    # HBM: read the row once (n_cols b), write it once (n_cols b).
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    if EVEN:  # n_cols == BLOCK: no mask, so loads and stores stay 16-byte vectors
        x = tl.load(X + row * stride_x + offs).to(tl.float32)
    else:
        x = tl.load(X + row * stride_x + offs, mask=offs < n_cols,
                    other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, 0))
    y = e / tl.sum(e, 0)
    if EVEN:
        tl.store(Y + row * stride_y + offs, y.to(Y.dtype.element_ty))
    else:
        tl.store(Y + row * stride_y + offs, y.to(Y.dtype.element_ty),
                 mask=offs < n_cols)
    # end listing: fused


@triton.jit
def _fused_body_kernel(X, Y, n_cols, stride, BLOCK: tl.constexpr, VEC: tl.constexpr):
    # The fused kernel for rows whose length is not a multiple of 16 elements: such rows start at addresses
    # that are not 16-byte aligned, and a mask offs < n_cols that changes inside a 16-byte group, so the
    # compiler would load and store one element at a time. Here a row is a short head (up to the first
    # 16-byte boundary), an aligned body of whole 16-byte groups (VEC elements each) and a short tail: the
    # body's start and length are multiples of VEC (tl.multiple_of), so its accesses are 16-byte vectors.
    # HBM: read the row once, write it once. X and Y are 16-byte aligned with one row stride (wrapper).
    row_start = tl.program_id(0).to(tl.int64) * stride
    head = (VEC - row_start % VEC) % VEC
    body = ((n_cols - head) // VEC) * VEC
    body_start = tl.multiple_of(row_start + head, VEC)
    body_len = tl.multiple_of(body, VEC)
    tail_start = row_start + head + body
    n_tail = n_cols - head - body
    offs = tl.arange(0, BLOCK)
    small = tl.arange(0, VEC)
    xb = tl.load(X + body_start + offs, mask=offs < body_len, other=float("-inf")).to(tl.float32)
    xh = tl.load(X + row_start + small, mask=small < head, other=float("-inf")).to(tl.float32)
    xt = tl.load(X + tail_start + small, mask=small < n_tail, other=float("-inf")).to(tl.float32)
    m = tl.maximum(tl.max(xb, 0), tl.maximum(tl.max(xh, 0), tl.max(xt, 0)))
    eb = tl.exp(xb - m)
    eh = tl.exp(xh - m)
    et = tl.exp(xt - m)
    inv = 1.0 / (tl.sum(eb, 0) + tl.sum(eh, 0) + tl.sum(et, 0))
    tl.store(Y + body_start + offs, (eb * inv).to(Y.dtype.element_ty), mask=offs < body_len)
    tl.store(Y + row_start + small, (eh * inv).to(Y.dtype.element_ty), mask=small < head)
    tl.store(Y + tail_start + small, (et * inv).to(Y.dtype.element_ty), mask=small < n_tail)


def _body_num_warps(block: int) -> int:
    # 4 warps up to 4096 lanes: at 3000 columns 4 warps reached 0.95-0.96 of the copy and 8 warps
    # 0.81-0.82; at 5000 columns (8192 lanes) 8 warps 0.80-0.84, 4 warps 0.76-0.79 (H200,
    # bench/profiles/softmax_rows_sweep_before_h200.json); beyond 4096 lanes, the fused kernel's rule.
    return 4 if block <= 4096 else _fused_num_warps(block)


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
    """Fold a block x into per-lane running (max, sum); a lane that has seen only
    -inf keeps (-inf, 0)."""
    # listing: online-update
    m_new = tl.maximum(m, x)
    shift = tl.where(m_new > float("-inf"), m_new, 0.0)  # avoids -inf - (-inf) = NaN
    l = l * tl.exp(m - shift) + tl.exp(x - shift)
    return m_new, l
    # end listing: online-update


@triton.jit
def _online_kernel(X, Y, n_rows, n_cols, stride_x, stride_y,
                   BLOCK: tl.constexpr, NUM_STAGES: tl.constexpr):
    # HBM: pass 1 reads the row (n_cols b); pass 2 reads it again and writes
    # it (2 n_cols b). The grid is persistent (programs_per_sm programs per SM,
    # each looping over rows), which bounds the rows in flight (1056 with the
    # default launch on an H200) so that pass 2, last block first, may find
    # pass 1's reads still in L2. At 65536 columns and more it mostly does not
    # (chapter 13, bench/NOTES.md).
    n_full = n_cols // BLOCK
    full_end = n_full * BLOCK
    offs = tl.arange(0, BLOCK)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        # 64-bit offsets. tl.cast, not .to(): Triton compiles an integer argument
        # equal to 1 (the stride of a one-column matrix) as a Python constant,
        # which has no .to, and the interpreter hands the loop index over as an int.
        x_row = X + tl.cast(row, tl.int64) * stride_x
        y_row = Y + tl.cast(row, tl.int64) * stride_y
        # listing: online-pass1
        # One running (max, sum) per lane; merged once at the end, so the loop has no
        # reductions.
        m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
        l = tl.zeros([BLOCK], dtype=tl.float32)
        # full blocks: no mask
        for start in tl.range(0, full_end, BLOCK, num_stages=NUM_STAGES):
            m, l = _online_update(m, l, tl.load(x_row + start + offs).to(tl.float32))
        if full_end < n_cols:  # the one partial block
            tail = tl.load(x_row + full_end + offs, mask=full_end + offs < n_cols,
                           other=float("-inf"))
            m, l = _online_update(m, l, tail.to(tl.float32))
        m_row = tl.max(m, 0)
        l_row = tl.sum(l * tl.exp(m - m_row), 0)  # padding lanes: l = 0, exp(-inf) = 0
        inv = 1.0 / l_row
        # end listing: online-pass1
        # Pass 2 backwards: the blocks read last are the likeliest still in L2.
        if full_end < n_cols:
            tail = tl.load(x_row + full_end + offs, mask=full_end + offs < n_cols,
                           other=float("-inf"))
            y = tl.exp(tail.to(tl.float32) - m_row) * inv
            tl.store(y_row + full_end + offs, y.to(Y.dtype.element_ty),
                     mask=full_end + offs < n_cols)
        for i in tl.range(0, n_full, num_stages=NUM_STAGES):
            start = (n_full - 1 - i) * BLOCK
            y = tl.exp(tl.load(x_row + start + offs).to(tl.float32) - m_row) * inv
            tl.store(y_row + start + offs, y.to(Y.dtype.element_ty))


@triton.jit
def _three_pass_kernel(X, Y, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    # listing: three-pass
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
    # end listing: three-pass


# ---- Vocabulary rows: several short rows per program ("rows"), and a streaming kernel with aligned bodies
# and few rows in flight ("stream") -----------------------------------------------------------------------


@triton.jit
def _rows_kernel(X, Y, n_rows, n_cols_v, stride_xv, stride_yv, BLOCK: tl.constexpr, ROWS: tl.constexpr,
                 VEC: tl.constexpr):
    # ROWS rows per program, each held in registers. Lengths and strides arrive divided by VEC (the
    # wrapper picks the largest VEC <= 16 bytes that divides all three) and are multiplied back here, so
    # the compiler knows every row starts, and every mask changes, on a VEC boundary: 16-byte vectors even
    # for 1000 or 5000 columns, which a plain integer argument (specialised only when divisible by 16)
    # would not show. HBM: read each row once, write it once.
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    n_cols = n_cols_v * VEC
    cols = tl.arange(0, BLOCK)
    live = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    rows64 = rows.to(tl.int64)
    x = tl.load(X + (rows64 * stride_xv)[:, None] * VEC + cols[None, :], mask=live,
                other=float("-inf")).to(tl.float32)
    m = tl.max(x, 1)
    m = tl.where(m > float("-inf"), m, 0.0)  # rows past the end: all -inf
    e = tl.exp(x - m[:, None])
    y = e / tl.sum(e, 1)[:, None]
    tl.store(Y + (rows64 * stride_yv)[:, None] * VEC + cols[None, :], y.to(Y.dtype.element_ty), mask=live)


@triton.jit
def _vector_split(start, n_cols, VEC: tl.constexpr):
    """A row of n_cols elements that starts `start` elements after a 16-byte boundary, cut into a head (up
    to its first boundary) and an aligned body of whole 16-byte vectors; what is left is its tail."""
    head = tl.minimum((VEC - start % VEC) % VEC, n_cols)
    body = tl.multiple_of(((n_cols - head) // VEC) * VEC, VEC)
    return head, body


@triton.jit
def _body_start(start, head, ALIGNED: tl.constexpr, VEC: tl.constexpr):
    """Where a row's aligned body starts: a multiple of VEC when the row is cut at its own boundaries."""
    body_start = start + head
    if ALIGNED:
        body_start = tl.multiple_of(body_start, VEC)
    return body_start


@triton.jit
def _edge_offsets(head, tail_start, n_cols, VEC: tl.constexpr):
    """Columns of a row's head (before its first 16-byte boundary) and tail (after its last), in one
    vector of 2 VEC lanes, and which lanes are real."""
    k = tl.arange(0, 2 * VEC)
    cols = tl.where(k < VEC, k, tail_start + k - VEC)
    live = tl.where(k < VEC, k < head, cols < n_cols)
    return cols, live


@triton.jit
def _stream_pass1(X, xb, lo, full_end, hi, xe, BLOCK: tl.constexpr, NUM_STAGES: tl.constexpr,
                  SUM_X: tl.constexpr):
    """Pass 1 over columns [lo, hi) of a row's aligned body from xb (whole blocks up to full_end, then a
    partial one, read first so the loop needs no mask), with the head and tail's values xe: the running
    maximum m (a block's maximum at a time; -inf while only -inf was seen), the shift c the sums are
    relative to, the sum of exp(x - c) kept per lane and rescaled by one exp per block when m grows (one
    exp per element), and with SUM_X the plain sum of the body's values (label smoothing)."""
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + xb + full_end + offs, mask=full_end + offs < hi, other=float("-inf")).to(tl.float32)
    m = tl.maximum(tl.max(xe, 0), tl.max(x, 0))
    c = tl.where(m > float("-inf"), m, 0.0)
    l = tl.exp(x - c)
    l_edge = tl.sum(tl.exp(xe - c), 0)
    sx = tl.where(full_end + offs < hi, x, 0.0)
    for start in tl.range(lo, full_end, BLOCK, num_stages=NUM_STAGES):
        x = tl.load(X + xb + start + offs).to(tl.float32)
        m = tl.maximum(m, tl.max(x, 0))
        c_new = tl.where(m > float("-inf"), m, 0.0)
        alpha = tl.exp(tl.minimum(c - c_new, 0.0))  # 1 unless the maximum grew (sums of 0: any factor)
        l = l * alpha + tl.exp(x - c_new)
        l_edge = l_edge * alpha
        c = c_new
        if SUM_X:
            sx += x
    return m, c, tl.sum(l, 0) + l_edge, tl.sum(sx, 0)


@triton.jit
def _stream_kernel(X, Y, n_rows, n_cols, stride_x, stride_y, mis_x, mis_y, BLOCK: tl.constexpr,
                   VEC: tl.constexpr, Y_ALIGNED: tl.constexpr, NUM_STAGES: tl.constexpr):
    # Two passes over each row, one program per row at a time, few programs (rows in flight) per SM so
    # that pass 2, last block first, re-reads from L2. X and Y point at 16-byte boundaries; row r starts
    # mis + r * stride elements after them: a head up to its first 16-byte boundary, an aligned body
    # (16-byte vectors) and a tail, the head and tail in one small vector of 2 VEC lanes.
    # Pass 1 keeps one running maximum per row (a block's maximum, one reduction per block) and a sum per
    # lane rescaled by one exp per block: one exp per element, where a per-lane maximum costs two (the
    # SM's 16 exps per clock would then bind before HBM does).
    offs = tl.arange(0, BLOCK)
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        row64 = tl.cast(row, tl.int64)
        x_start = mis_x + row64 * stride_x
        y_start = mis_y + row64 * stride_y
        head, body = _vector_split(x_start, n_cols, VEC)
        xb = _body_start(x_start, head, True, VEC)
        yb = _body_start(y_start, head, Y_ALIGNED, VEC)
        n_full = body // BLOCK
        full_end = n_full * BLOCK
        e_cols, e_live = _edge_offsets(head, head + body, n_cols, VEC)
        xe = tl.load(X + x_start + e_cols, mask=e_live, other=float("-inf")).to(tl.float32)
        m, c, l_row, _ = _stream_pass1(X, xb, 0, full_end, body, xe, BLOCK, NUM_STAGES, False)
        inv = 1.0 / l_row
        if Y_ALIGNED:
            tl.store(Y + y_start + e_cols, (tl.exp(xe - c) * inv).to(Y.dtype.element_ty), mask=e_live)
            cols = full_end + offs
            x = tl.load(X + xb + cols, mask=cols < body, other=float("-inf")).to(tl.float32)
            tl.store(Y + yb + cols, (tl.exp(x - c) * inv).to(Y.dtype.element_ty), mask=cols < body)
            for i in tl.range(0, n_full, num_stages=NUM_STAGES):
                cols = (n_full - 1 - i) * BLOCK + offs
                x = tl.load(X + xb + cols).to(tl.float32)
                tl.store(Y + yb + cols, (tl.exp(x - c) * inv).to(Y.dtype.element_ty))
        else:
            # The output's rows start at other offsets modulo 16 bytes than the input's (a slice of wider
            # logits into contiguous rows): pass 2 splits the row by the output's boundaries instead, so
            # the stores to HBM stay 16-byte vectors and the re-reads, from L2, go element by element.
            hy, by = _vector_split(y_start, n_cols, VEC)
            yb = _body_start(y_start, hy, True, VEC)
            ey_cols, ey_live = _edge_offsets(hy, hy + by, n_cols, VEC)
            xe = tl.load(X + x_start + ey_cols, mask=ey_live, other=float("-inf")).to(tl.float32)
            tl.store(Y + y_start + ey_cols, (tl.exp(xe - c) * inv).to(Y.dtype.element_ty), mask=ey_live)
            ny_full = by // BLOCK
            cols = ny_full * BLOCK + offs
            x = tl.load(X + x_start + hy + cols, mask=cols < by, other=float("-inf")).to(tl.float32)
            tl.store(Y + yb + cols, (tl.exp(x - c) * inv).to(Y.dtype.element_ty), mask=cols < by)
            for i in tl.range(0, ny_full, num_stages=NUM_STAGES):
                cols = (ny_full - 1 - i) * BLOCK + offs
                x = tl.load(X + x_start + hy + cols).to(tl.float32)
                tl.store(Y + yb + cols, (tl.exp(x - c) * inv).to(Y.dtype.element_ty))


# ---- "split": one row over several programs -------------------------------------------------------------
# A row of n_cols values is cut into n_chunks = ceil(n_cols / CHUNK) chunks; chunk c covers columns
# [c CHUNK, (c + 1) CHUNK) and only the last one can be partial. Each chunk's partial state is its maximum
# m_c and l_c = sum of exp(x - m_c) (chapter 13's merge): PM[row, c] and PL[row, c], fp32.


@triton.jit
def _load_chunk(X, row_start, c_start, n_cols, valid, CHUNK: tl.constexpr):
    """The chunk in the input's dtype; -inf past the row's end; no memory touched when ``valid`` is false.

    The mask on full chunks is one scalar for the whole block, so their loads stay 16-byte vectors.
    """
    offs = c_start + tl.arange(0, CHUNK)
    if c_start + CHUNK <= n_cols:
        x = tl.load(X + row_start + offs, mask=valid, other=float("-inf"))
    else:
        x = tl.load(X + row_start + offs, mask=(offs < n_cols) & valid, other=float("-inf"))
    return x


@triton.jit
def _chunk_state(x):
    """(m, shift, e, l) of a chunk in fp32: m its maximum, e = exp(x - shift), l = sum(e); shift = m except
    for a chunk of -inf only (a masked stretch), where shift = 0 gives e = 0, l = 0 instead of NaN."""
    m = tl.max(x, 0)
    shift = tl.where(m > float("-inf"), m, 0.0)
    e = tl.exp(x - shift)
    return m, shift, e, tl.sum(e, 0)


@triton.jit
def _chunk_scale(shift, m_row, l_row):
    """exp(shift - m_row) / l_row: turns a chunk's e = exp(x - shift) into exp(x - m_row) / l_row.

    shift <= m_row except for a chunk of -inf only (shift = 0, e = 0): there exp(-m_row) overflows to inf
    once m_row < -88, and 0 * inf would write NaN where the softmax is 0. Clamping the exponent at 0 is
    exact for every other chunk; a row of -inf only (m_row = -inf, l_row = 0) still gives NaN, as torch."""
    return tl.exp(tl.minimum(shift - m_row, 0.0)) / l_row


@triton.jit
def _merge_partials(PM, PL, part_start, n_chunks, PB: tl.constexpr):
    """The row's maximum M and denominator L from its n_chunks partials (PB >= n_chunks, a power of two).

    ``.cg`` loads go to L2, past this SM's L1, which may hold a stale copy of the line (the partials of
    a neighbouring row share it)."""
    idx = tl.arange(0, PB)
    live = idx < n_chunks
    ms = tl.load(PM + part_start + idx, mask=live, other=float("-inf"), cache_modifier=".cg")
    ls = tl.load(PL + part_start + idx, mask=live, other=0.0, cache_modifier=".cg")
    m_row = tl.max(ms, 0)
    # A chunk of -inf only has m = -inf, l = 0: weight 0. A row of -inf only gives NaN, as torch.softmax.
    l_row = tl.sum(tl.where(live, ls * tl.exp(ms - m_row), 0.0), 0)
    return m_row, l_row


@triton.jit
def _split_partials_kernel(X, PM, PL, n_cols, stride_x, n_chunks, CHUNK: tl.constexpr):
    # Launch 1 of 2 (grid rows x chunks). HBM: reads the chunk (CHUNK b), writes 8 bytes.
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    x = _load_chunk(X, row * stride_x, c * CHUNK, n_cols, True, CHUNK).to(tl.float32)
    m, shift, e, l = _chunk_state(x)
    tl.store(PM + row * n_chunks + c, m)
    tl.store(PL + row * n_chunks + c, l)


@triton.jit
def _split_normalize_kernel(X, Y, PM, PL, n_cols, stride_x, stride_y, n_chunks, CHUNK: tl.constexpr,
                            PB: tl.constexpr):
    # Launch 2 of 2. HBM: reads the partials and the chunk again, writes the chunk (2 CHUNK b).
    row = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1)
    m_row, l_row = _merge_partials(PM, PL, row * n_chunks, n_chunks, PB)
    x = _load_chunk(X, row * stride_x, c * CHUNK, n_cols, True, CHUNK).to(tl.float32)
    y = tl.exp(x - m_row) * (1.0 / l_row)
    _store_block(Y, row * stride_y, c * CHUNK, n_cols, y, CHUNK)


@triton.jit
def _arrive(SEM, n_chunks, c):
    """Count this program in at its group's barrier; returns the counter as it found it.

    SEM is the group's int32 counter, 0 or -2^31 between rounds. In a round the group adds 2^31 modulo 2^32
    (chunk 0 adds 2^31 - (n_chunks - 1), the others 1), so its sign bit flips exactly when the last member
    arrives, and the low bits are back to 0: the counter never needs resetting. The add is a release: the
    partials this program stored before it are visible to any program that sees the flip (an acquire).
    """
    tl.debug_barrier()  # every thread's stores before this point happen before the release below
    return tl.atomic_add(SEM, tl.where(c == 0, 2147483647 - (n_chunks - 2), 1), sem="release", scope="gpu")


@triton.jit
def _wait(SEM, old):
    """Wait until the sign bit of the group's counter differs from ``old``: every member has arrived. A
    fast member may arrive at the next round before a slow one has seen this round's flip; that cannot flip
    the bit back, since the slow one has not arrived at the next round yet."""
    now = tl.atomic_add(SEM, 0, sem="acquire", scope="gpu")  # an acquire load (no add happens)
    while (old ^ now) >= 0:  # sign bits equal: the round is not complete
        now = tl.atomic_add(SEM, 0, sem="acquire", scope="gpu")
    tl.debug_barrier()  # no thread reads the partials before the acquire above


# Why the cooperative kernel cannot deadlock. A program waits only at its group's barrier, for the other
# n_chunks - 1 programs of its group; all of them loop over the same rows (row = group, group + n_groups,
# ...), so each reaches its k-th barrier after finite work once every member has passed the (k-1)-th. What
# could still hang is a member that never starts because the waiting programs hold the SMs it needs. The
# wrapper rules that out: the grid (n_groups x n_chunks programs) is at most the number of programs of this
# compiled kernel that the GPU holds at once (the CUDA occupancy calculator on its registers, shared memory
# and warps, times the SMs), so every program is resident from the start whatever order the block scheduler
# picks. Kernels of other streams that share the GPU only delay the start of some programs, PROVIDED they
# end on their own without waiting for this one. That fails for a kernel that never ends or itself spins
# (a second cooperative split launch on another stream: each grid's spinning programs can hold the SMs the
# other's missing programs need; NCCL kernels waiting on peers), and under MPS or green contexts with an SM
# limit, where fewer programs are resident than computed: use cooperative=False there. The launch is an
# ordinary one, not a CUDA cooperative launch, so the driver does not enforce co-residency. When the driver's
# occupancy calculator cannot be asked, the wrapper does not launch cooperatively (_resident_per_sm).
@triton.jit(do_not_specialize=["n_rows", "n_chunks", "n_groups"])  # one compiled kernel for every grid
def _split_coop_kernel(X, Y, PM, PL, SEM, n_rows, n_cols, stride_x, stride_y, n_chunks, n_groups,
                       CHUNK: tl.constexpr, PB: tl.constexpr, PREFETCH: tl.constexpr):
    # HBM: each chunk is read once and written once (2 n b in all) plus 8 bytes of partials per chunk.
    pid = tl.program_id(0)
    group = pid // n_chunks
    c = pid - group * n_chunks
    c_start = c * CHUNK
    sem = SEM + group
    if PREFETCH:
        x_next = _load_chunk(X, tl.cast(group, tl.int64) * stride_x, c_start, n_cols, group < n_rows, CHUNK)
    for row in tl.range(group, n_rows, n_groups):
        row64 = tl.cast(row, tl.int64)
        if PREFETCH:
            x = x_next.to(tl.float32)
        else:
            x = _load_chunk(X, row64 * stride_x, c_start, n_cols, True, CHUNK).to(tl.float32)
        m, shift, e, l = _chunk_state(x)
        tl.store(PM + row64 * n_chunks + c, m)
        tl.store(PL + row64 * n_chunks + c, l)
        old = _arrive(sem, n_chunks, c)
        if PREFETCH:  # issued after the release, which would otherwise wait for it; lands while we wait
            nxt = row + n_groups
            x_next = _load_chunk(X, tl.cast(nxt, tl.int64) * stride_x, c_start, n_cols, nxt < n_rows, CHUNK)
        _wait(sem, old)
        m_row, l_row = _merge_partials(PM, PL, row64 * n_chunks, n_chunks, PB)
        y = e * _chunk_scale(shift, m_row, l_row)
        _store_block(Y, row64 * stride_y, c_start, n_cols, y, CHUNK)


@triton.jit
def _chunk_span(c, chunk_cols, body, BLOCK: tl.constexpr, VEC: tl.constexpr):
    """Chunk c of a row's aligned body: columns [lo, hi), n_full whole blocks from lo up to full_end."""
    lo = tl.multiple_of(c * chunk_cols, BLOCK)
    hi = tl.multiple_of(tl.minimum(lo + chunk_cols, body), VEC)
    n_full = tl.maximum(hi - lo, 0) // BLOCK
    return lo, hi, n_full, lo + n_full * BLOCK


@triton.jit(do_not_specialize=["n_rows", "n_chunks", "n_groups", "chunk_cols"])
def _stream_split_kernel(X, Y, PM, PL, SEM, n_rows, n_cols, stride_x, stride_y, mis_x, mis_y, chunk_cols,
                         n_chunks, n_groups, BLOCK: tl.constexpr, VEC: tl.constexpr, Y_ALIGNED: tl.constexpr,
                         NUM_STAGES: tl.constexpr, PB: tl.constexpr, PHASE: tl.constexpr):
    # "stream" with a row over n_chunks programs (a group): each streams its chunk of the row's aligned body
    # (chunk 0 also the head and tail) for its (m, l), publishes them, waits at the group's barrier (the
    # split kernel's), merges the row's partials and re-reads its chunk, last block first, to write it.
    # A group's programs run at once, so a chunk's second read follows its first by about (programs in
    # flight) x (chunk bytes), not x (row bytes): a row of 150K values can then be re-read from L2. Every
    # program is resident from the start (the wrapper sizes the grid by the occupancy calculator).
    # PHASE 0: all of it in one launch. PHASE 1 / 2: the passes before / after the barrier as two launches
    # (no barrier; the Triton interpreter, which runs programs one after another, and cooperative=False).
    pid = tl.program_id(0)
    group = pid // n_chunks
    c = pid - group * n_chunks
    sem = SEM + group
    offs = tl.arange(0, BLOCK)
    for row in tl.range(group, n_rows, n_groups):
        row64 = tl.cast(row, tl.int64)
        x_start = mis_x + row64 * stride_x
        y_start = mis_y + row64 * stride_y
        head, body = _vector_split(x_start, n_cols, VEC)
        xb = _body_start(x_start, head, True, VEC)
        yb = _body_start(y_start, head, Y_ALIGNED, VEC)
        lo, hi, n_full, full_end = _chunk_span(c, chunk_cols, body, BLOCK, VEC)
        e_cols, e_live = _edge_offsets(head, head + body, n_cols, VEC)
        e_live = e_live & (e_cols * 0 + c == 0)  # chunk 0 only
        xe = tl.load(X + x_start + e_cols, mask=e_live, other=float("-inf")).to(tl.float32)
        if PHASE != 2:
            m, _, l_chunk, _ = _stream_pass1(X, xb, lo, full_end, hi, xe, BLOCK, NUM_STAGES, False)
            tl.store(PM + row64 * n_chunks + c, m)  # -inf for a chunk of -inf only (its l is 0)
            tl.store(PL + row64 * n_chunks + c, l_chunk)
        if PHASE == 0:
            old = _arrive(sem, n_chunks, c)
            _wait(sem, old)
        if PHASE != 1:
            m_row, l_row = _merge_partials(PM, PL, row64 * n_chunks, n_chunks, PB)
            inv = 1.0 / l_row
            tl.store(Y + y_start + e_cols, (tl.exp(xe - m_row) * inv).to(Y.dtype.element_ty), mask=e_live)
            cols = full_end + offs
            x = tl.load(X + xb + cols, mask=cols < hi, other=float("-inf")).to(tl.float32)
            tl.store(Y + yb + cols, (tl.exp(x - m_row) * inv).to(Y.dtype.element_ty), mask=cols < hi)
            for i in tl.range(0, n_full, num_stages=NUM_STAGES):
                cols = full_end - (i + 1) * BLOCK + offs
                x = tl.load(X + xb + cols).to(tl.float32)
                tl.store(Y + yb + cols, (tl.exp(x - m_row) * inv).to(Y.dtype.element_ty))


def softmax(x: torch.Tensor, out: torch.Tensor | None = None, method: str = "auto", *,
            block_cols: int | None = None, num_warps: int | None = None, num_stages: int | None = None,
            programs_per_sm: int | None = None, cooperative: bool | None = None,
            prefetch: bool | None = None, rows_per_program: int | None = None,
            chunk_cols: int | None = None) -> torch.Tensor:
    """Softmax over the last dimension of a 2-D tensor whose rows are contiguous (any row stride), by a Triton
    kernel; returns ``out``.

    ``method`` is one of :data:`METHODS` (module docstring). ``block_cols`` (a power of two >= 16) sets
    the block of the streaming methods and the chunk of ``"split"``; ``num_warps`` overrides the launch
    heuristic; ``num_stages`` (loads in flight per loop) and ``programs_per_sm`` (size of the persistent grid)
    tune ``"online"``; ``cooperative`` (default: on a GPU, when the row's programs fit on it at once) and
    ``prefetch`` tune ``"split"``; ``rows_per_program`` tunes ``"rows"``; ``cooperative=True`` splits
    each row of ``"stream"`` over programs of ``chunk_cols`` columns (a multiple of ``block_cols``). Rows
    may have any stride (``stride(1) == 1``); ``out`` (allocated contiguous when None) must match ``x`` and
    must not overlap it.
    Raises ``ValueError`` naming the argument.
    """
    plan_key = None
    if (method == "auto" and block_cols is None and num_warps is None and num_stages is None
            and programs_per_sm is None and cooperative is None and prefetch is None
            and rows_per_program is None and chunk_cols is None and not INTERPRETED
            and x.__class__ is torch.Tensor and (out is None or out.__class__ is torch.Tensor)):
        # The call as a model makes it: a plan per (shape, strides, dtype, device, alignment of x, and of
        # out when given) holds the compiled kernel and its other arguments, so a repeated call allocates
        # (or checks out) and launches, nothing else. Pointers go to the launch as integers: the launcher
        # then skips asking the driver about each one.
        x_ptr = x.data_ptr()
        if out is None:
            plan_key = (x.shape, x.stride(), x.dtype, x.get_device(), x_ptr & 15)
        else:
            out_ptr = out.data_ptr()
            plan_key = (x.shape, x.stride(), x.dtype, x.get_device(), x_ptr & 15, out.shape, out.stride(),
                        out.dtype, out.get_device(), out_ptr & 15)
        plan = _PLANS.get(plan_key)
        if plan is not None:
            launcher, grid3, tail, span = plan
            if out is None:
                out = torch.empty_like(x)
            elif x_ptr < out_ptr + span and out_ptr < x_ptr + span:  # same shape and strides: same span
                raise ValueError("out must not overlap x (the streaming methods re-read x after writing)")
            launcher(grid3, _launch.current_stream(plan_key[3]), (x_ptr, out.data_ptr(), *tail))
            return out
    if INTERPRETED or not _plain_input(x):  # the full checks, with their messages, off the fast path
        _check_tensor("x", x)
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    n_rows, n_cols = x.shape
    if out is None:
        out = _new_out(x)
    else:
        _check_tensor("out", out)
        _check_out(out, x)
    if num_warps is not None and num_warps not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"num_warps must be a power of two from 1 to 32, got {num_warps!r}")
    if cooperative is not None or prefetch is not None:
        for name, flag in (("cooperative", cooperative), ("prefetch", prefetch)):
            if flag is not None and not isinstance(flag, bool):
                raise ValueError(f"{name} must be True, False or None, got {flag!r}")
    if cooperative and INTERPRETED:
        raise ValueError("cooperative=True needs a GPU: the Triton interpreter runs programs one after "
                         "another, so a program waiting for the others would wait forever; got True")
    if n_rows == 0 or n_cols == 0:
        return out
    if method == "auto":
        method = _auto_method(x, out)
        if method == "stream" and n_cols >= STREAM_SPLIT_AUTO_MIN_COLS and cooperative is None:
            cooperative = True
    if method == "gluon":
        tuning = {"block_cols": block_cols, "num_stages": num_stages, "programs_per_sm": programs_per_sm,
                  "cooperative": cooperative, "prefetch": prefetch}
        given = sorted(name for name, value in tuning.items() if value is not None)
        if given:
            raise ValueError(f"method 'gluon' takes only num_warps of the tuning options, got {given} (tune "
                             f"it through gpuperf.kernels.gluon_softmax.softmax)")
        from gpuperf.kernels import gluon_softmax

        return gluon_softmax.softmax(x, out, **({"num_warps": num_warps} if num_warps else {}))
    if method == "fused":
        if n_cols > FUSED_MAX_COLS:
            raise ValueError(f"method 'fused' holds a row in registers: x.shape[1] must be at most "
                             f"{FUSED_MAX_COLS}, got {n_cols} (use 'split' or 'online')")
        plan = _launch_fused(x, out, num_warps)
        _keep_plan(plan_key, plan, x, out)
        return out
    if rows_per_program is not None and (isinstance(rows_per_program, bool) or not isinstance(
            rows_per_program, numbers.Integral) or rows_per_program < 1 or rows_per_program & (rows_per_program - 1)):
        raise ValueError(f"rows_per_program must be a power of two >= 1, got {rows_per_program!r}")
    if method == "rows":
        if n_cols > FUSED_MAX_COLS:
            raise ValueError(f"method 'rows' holds rows in registers: x.shape[1] must be at most "
                             f"{FUSED_MAX_COLS}, got {n_cols}")
        _keep_plan(plan_key, _launch_rows(x, out, num_warps, rows_per_program), x, out)
        return out
    if block_cols is None:
        block_cols = (256 if INTERPRETED and method == "stream" else 1024 if INTERPRETED
                      else ONLINE_BLOCK if method == "online" else SPLIT_CHUNK if method == "split"
                      else STREAM_LAUNCH[0] if method == "stream" else STREAM_BLOCK)
    if (isinstance(block_cols, bool) or not isinstance(block_cols, numbers.Integral) or block_cols < 16
            or block_cols & (block_cols - 1)):
        raise ValueError(f"block_cols must be a power of two >= 16, got {block_cols!r}")
    if method == "stream":
        for name, value in (("num_stages", num_stages), ("programs_per_sm", programs_per_sm)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                                      or not 1 <= value <= 32):
                raise ValueError(f"{name} must be an integer from 1 to 32, got {value!r}")
        _launch_stream(x, out, block_cols, num_warps, programs_per_sm, num_stages, cooperative, chunk_cols)
        return out
    if method == "split":
        if block_cols > FUSED_MAX_COLS:
            raise ValueError(f"block_cols of 'split' is a chunk held in registers: at most {FUSED_MAX_COLS}, "
                             f"got {block_cols}")
        _launch_split(x, out, block_cols, num_warps, cooperative,
                      SPLIT_PREFETCH if prefetch is None else prefetch)
        return out
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


def _new_out(x: torch.Tensor) -> torch.Tensor:
    """The output for ``x``: contiguous, starting at ``x``'s offset modulo 16 bytes when ``x`` is contiguous
    (so that a row's head, body and tail fall at the same columns in both), else a fresh contiguous
    tensor (``torch.softmax`` returns contiguous rows for rows with a stride)."""
    if not x.is_contiguous():
        return torch.empty(x.shape, dtype=x.dtype, device=x.device)
    mis = (x.data_ptr() % 16) // x.element_size()
    if mis == 0:
        return torch.empty_like(x)
    return torch.empty(x.numel() + mis, dtype=x.dtype, device=x.device)[mis:].view(x.shape)


def _span_bytes(t: torch.Tensor) -> int:
    """Bytes from ``t``'s first element to the end of its last row."""
    if t.numel() == 0:
        return 0
    return ((t.shape[0] - 1) * t.stride(0) + t.shape[1]) * t.element_size()


def _check_out(out: torch.Tensor, x: torch.Tensor) -> None:
    if out.shape != x.shape or out.dtype != x.dtype or out.device != x.device:
        raise ValueError(f"out must match x (shape {tuple(x.shape)}, {x.dtype}, {x.device}), got "
                         f"shape {tuple(out.shape)}, {out.dtype}, {out.device}")
    a, b = x.data_ptr(), out.data_ptr()
    if x.numel() and a < b + _span_bytes(out) and b < a + _span_bytes(x):
        raise ValueError("out must not overlap x (the streaming methods re-read x after writing)")


def _keep_plan(plan_key, plan, x, out) -> None:
    """Remember a launch's plan under its key (the fast path of :func:`softmax` replays it). Plans are kept
    only when ``x`` and ``out`` have the same strides (one span for the overlap check)."""
    global PLAN_BUILDS
    if plan_key is None or plan is None or x.stride() != out.stride():
        return
    if len(_PLANS) >= _launch.MAX_ENTRIES:
        _PLANS.clear()
    _PLANS[plan_key] = (*plan, _span_bytes(x))
    PLAN_BUILDS += 1


def _rows_vec(x: torch.Tensor, out: torch.Tensor) -> int:
    """The largest number of elements, at most 16 bytes, dividing the row length and both row strides."""
    vec = 16 // x.element_size()
    while vec > 1 and (x.shape[1] % vec or x.stride(0) % vec or out.stride(0) % vec):
        vec //= 2
    return vec


def _launch_rows(x, out, num_warps, rows_per_program):
    n_rows, n_cols = x.shape
    block = max(triton.next_power_of_2(n_cols), 16)
    rows, warps = ROWS_LAUNCH.get(block, (1, _fused_num_warps(block)))
    if INTERPRETED:
        rows, warps = min(rows, 2), 4
    rows = rows_per_program or rows
    vec = _rows_vec(x, out)
    tail = (n_rows, n_cols // vec, x.stride(0) // vec, out.stride(0) // vec, block, rows, vec)
    grid = (triton.cdiv(n_rows, rows),)
    launcher = _launch.launcher(_rows_kernel, grid, (x, out, *tail), (("num_warps", num_warps or warps),))
    return None if launcher is None else (launcher, (grid[0], 1, 1), tail)


def _aligned_base(t: torch.Tensor) -> tuple[torch.Tensor, int]:
    """A view of ``t``'s storage starting at the 16-byte boundary at or before ``t``'s first element, and
    ``t``'s offset from it in elements (CUDA allocations start 16-byte aligned: the view is in bounds)."""
    mis = (t.data_ptr() % 16) // t.element_size()
    if mis == 0:
        return t, 0
    return t.as_strided((1,), (1,), t.storage_offset() - mis), mis


def _launch_stream(x, out, block_cols, num_warps, programs_per_sm, num_stages, cooperative=None,
                   chunk_cols=None) -> None:
    n_rows, n_cols = x.shape
    if cooperative or chunk_cols is not None:
        _launch_stream_split(x, out, block_cols, num_warps, programs_per_sm, num_stages,
                             chunk_cols or STREAM_SPLIT_CHUNK, two_launches=not cooperative)
        return
    _, warps, per_sm, stages = STREAM_LAUNCH
    if INTERPRETED:
        warps = 4
    block = block_cols
    vec = 16 // x.element_size()
    x_base, mis_x = _aligned_base(x)
    y_base, mis_y = _aligned_base(out)
    per_sm = programs_per_sm or per_sm
    n_programs = n_rows if INTERPRETED else min(n_rows, per_sm * _sm_count(x.device))
    _stream_kernel[(n_programs,)](
        x_base, y_base, n_rows, n_cols, x.stride(0), out.stride(0), mis_x, mis_y, BLOCK=block, VEC=vec,
        Y_ALIGNED=(mis_y - mis_x) % vec == 0 and (out.stride(0) - x.stride(0)) % vec == 0,
        NUM_STAGES=num_stages or stages, num_warps=num_warps or warps)


_STREAM_SPLIT_PER_SM: dict = {}


def _launch_stream_split(x, out, block, num_warps, programs_per_sm, num_stages, chunk_cols,
                         two_launches=False) -> None:
    """``"stream"`` with each row over ``ceil(n / chunk_cols)`` programs that wait for each other (the
    split kernel's barrier); the grid holds at most ``programs_per_sm`` programs per SM and never more
    than the occupancy calculator says are resident at once. ``two_launches`` (and where the programs of
    a row cannot all be resident): the passes before and after the barrier as two launches instead."""
    n_rows, n_cols = x.shape
    _, warps, per_sm, stages = STREAM_LAUNCH
    if INTERPRETED:
        warps = 4
    warps, per_sm, stages = num_warps or warps, programs_per_sm or per_sm, num_stages or stages
    if chunk_cols % block:
        raise ValueError(f"chunk_cols must be a multiple of block_cols {block}, got {chunk_cols}")
    n_chunks = triton.cdiv(n_cols, chunk_cols)
    vec = 16 // x.element_size()
    x_base, mis_x = _aligned_base(x)
    y_base, mis_y = _aligned_base(out)
    part = _partials(x.device, n_rows * n_chunks)
    pb = triton.next_power_of_2(n_chunks)
    y_aligned = (mis_y - mis_x) % vec == 0 and (out.stride(0) - x.stride(0)) % vec == 0
    consts = dict(BLOCK=block, VEC=vec, Y_ALIGNED=y_aligned, NUM_STAGES=stages, PB=pb)
    args = (x_base, y_base, part[0], part[1])
    scalars = (n_rows, n_cols, x.stride(0), out.stride(0), mis_x, mis_y, chunk_cols, n_chunks)
    if two_launches or INTERPRETED:
        for phase in (1, 2):  # a group per row; no program waits
            _stream_split_kernel[(n_rows * n_chunks,)](*args, part[0], *scalars, n_rows, **consts,
                                                        PHASE=phase, num_warps=warps)  # SEM unused
        return
    # Triton compiles apart integers divisible by 16 or equal to 1: registers could differ between them.
    ints = (n_cols, x.stride(0), out.stride(0), mis_x, mis_y)
    key = (x.device, x.dtype, warps, tuple(sorted(consts.items())), tuple((i % 16 == 0, i == 1) for i in ints))
    if key not in _STREAM_SPLIT_PER_SM:
        kernel = _stream_split_kernel.warmup(
            x_base, y_base, part[0], part[1], _semaphores(x.device, 1), 1, n_cols, x.stride(0), out.stride(0),
            mis_x, mis_y, chunk_cols, n_chunks, 1, **consts, PHASE=0, num_warps=warps, grid=(1,))
        kernel._init_handles()
        threads = kernel.metadata.num_warps * 32
        ours = _occupancy(kernel.n_regs, threads, kernel.metadata.shared, x.device)
        theirs = _cuda_occupancy(kernel.function, threads, kernel.metadata.shared)
        _STREAM_SPLIT_PER_SM[key] = _resident_per_sm(ours, theirs)
    resident = min(_STREAM_SPLIT_PER_SM[key], per_sm) * _sm_count(x.device)
    n_groups = _n_groups(n_rows, n_chunks, resident)
    if n_groups == 0:
        _launch_stream_split(x, out, block, num_warps, programs_per_sm, num_stages, chunk_cols, True)
        return
    sem = _semaphores(x.device, n_groups)
    _stream_split_kernel[(n_groups * n_chunks,)](*args, sem, *scalars, n_groups, **consts, PHASE=0,
                                                  num_warps=warps)


def gluon_takes(x: torch.Tensor) -> bool:
    """Would ``"auto"`` give ``x`` to the Gluon kernel? A Hopper GPU with Gluon (compiled kernels, not the
    interpreter), fp16 or bf16, a row length in :data:`GLUON_AUTO_COLS`, at least
    :data:`GLUON_AUTO_MIN_ROWS` rows, a row stride of a multiple of 16 bytes (the kernel's other path, a flat
    view for unaligned rows, measured no better than ``"fused"`` over both dtypes: 2048 x 50257, fp16 0.60
    vs 0.53, bf16 0.58 vs 0.59 of the copy, book/data/softmax_targets_h200.json), and rows that fit the
    kernel's shared memory. Never raises."""
    lo, hi = GLUON_AUTO_COLS
    if (INTERPRETED or x.dtype not in (torch.float16, torch.bfloat16) or x.dim() != 2
            or not lo < x.shape[1] <= hi or x.shape[0] < GLUON_AUTO_MIN_ROWS
            or (x.stride(0) * x.element_size()) % 16 or not x.is_cuda):
        return False
    from gpuperf.kernels import gluon_softmax

    return bool(gluon_softmax.usable_for(x))


def _gluon_accepts_out(out: torch.Tensor) -> bool:
    """Can the Gluon kernel write into ``out`` (a CUDA tensor of contiguous rows at a 16-byte-aligned
    address)? A caller's ``out`` that it cannot take sends "auto" to the Triton kernels instead."""
    from gpuperf.kernels import gluon_softmax

    return bool(gluon_softmax.usable_for(out))


def _auto_method(x: torch.Tensor, out: torch.Tensor | None = None) -> str:
    n_cols = x.shape[1]
    if not INTERPRETED and (n_cols > STREAM_AUTO_MIN_COLS or (n_cols > STREAM_AUTO_UNALIGNED_MIN_COLS
                                                              and not _rows_aligned(x, out))):
        return "stream"
    if gluon_takes(x) and (out is None or _gluon_accepts_out(out)):
        return "gluon"
    if n_cols <= ROWS_AUTO_MAX_COLS:
        return "rows"
    if n_cols <= AUTO_FUSED_MAX_COLS or (n_cols % 16 and n_cols <= FUSED_MAX_COLS):
        # Rows not a multiple of 16 long are not 16-byte aligned: the split kernel's chunks would load
        # one element at a time; the fused kernel's aligned body does not (50257 columns: 0.53-0.60 of
        # the copy against 0.37, book/data/softmax_targets_h200.json).
        return "fused"
    if INTERPRETED or split_plan(x).cooperative:
        return "split"
    return "online"


def _rows_aligned(x: torch.Tensor, out: torch.Tensor | None) -> bool:
    """Every row of ``x`` (and of ``out``, when given) starts on a 16-byte boundary, at the same stride."""
    row_bytes = x.stride(0) * x.element_size()
    if row_bytes % 16 or x.data_ptr() % 16:
        return False
    return out is None or (out.stride(0) == x.stride(0) and out.data_ptr() % 16 == 0)


def _launch_fused(x: torch.Tensor, out: torch.Tensor, num_warps: int | None):
    """Launch the fused kernel on every row; returns the plan of this launch (launcher, grid, the arguments
    after ``x`` and ``out``) or None where there is none (the interpreter)."""
    n_rows, n_cols = x.shape
    block = triton.next_power_of_2(n_cols)
    options = (("num_warps", num_warps or _fused_num_warps(block)),)
    if (n_cols % 16 and n_cols >= BODY_MIN_COLS and x.stride(0) == out.stride(0)
            and x.data_ptr() % 16 == 0 and out.data_ptr() % 16 == 0):
        options = (("num_warps", num_warps or _body_num_warps(block)),)
        kernel, tail = _fused_body_kernel, (n_cols, x.stride(0), block, 16 // x.element_size())
    else:
        kernel, tail = _fused_kernel, (n_cols, x.stride(0), out.stride(0), block, block == n_cols)
    launcher = _launch.launcher(kernel, (n_rows,), (x, out, *tail), options)
    return None if launcher is None else (launcher, (n_rows, 1, 1), tail)


#: (shape, strides, dtype, device index, address mod 16, and the same of ``out`` when given) of a default
#: call -> its plan (_launch_fused, _launch_rows) and the bytes its rows span.
_PLANS: dict = {}

#: Plans built so far (a test counts them: a repeated call must not build another).
PLAN_BUILDS = 0


@dataclasses.dataclass(frozen=True)
class SplitPlan:
    """How ``"split"`` runs on ``x``: ``n_chunks`` programs per row of ``chunk`` columns each; cooperative
    (one launch of ``n_groups * n_chunks`` programs, every one resident at once: ``programs_per_sm`` of this
    compiled kernel per SM) or two launches of ``rows x n_chunks`` programs."""

    chunk: int
    num_warps: int
    prefetch: bool
    n_chunks: int
    cooperative: bool
    programs_per_sm: int | None = None
    n_groups: int | None = None


def split_plan(x: torch.Tensor, block_cols: int | None = None, num_warps: int | None = None,
               cooperative: bool | None = None, prefetch: bool | None = None,
               out: torch.Tensor | None = None) -> SplitPlan:
    """The launch ``softmax(x, out, method="split", ...)`` makes with these arguments (compiles, never
    runs)."""
    chunk = block_cols or (1024 if INTERPRETED else SPLIT_CHUNK)
    warps = num_warps or SPLIT_NUM_WARPS
    prefetch = SPLIT_PREFETCH if prefetch is None else prefetch
    n_rows, n_cols = x.shape
    n_chunks = triton.cdiv(n_cols, chunk)
    plan = SplitPlan(chunk, warps, prefetch, n_chunks, False)
    if INTERPRETED or cooperative is False or n_chunks < 2 or n_rows == 0:
        return plan
    per_sm = _coop_programs_per_sm(x, x if out is None else out, chunk, warps, prefetch)
    n_groups = _n_groups(n_rows, n_chunks, per_sm * _sm_count(x.device))
    if n_groups == 0:
        if cooperative:
            why = ("the CUDA occupancy calculator could not be asked" if per_sm == 0
                   else f"more than the GPU holds ({per_sm} per SM)")
            raise ValueError(f"cooperative=True: a row of x.shape[1] = {n_cols} needs {n_chunks} programs "
                             f"at once, {why}; got True")
        return plan
    return dataclasses.replace(plan, cooperative=True, programs_per_sm=per_sm, n_groups=n_groups)


def _n_groups(n_rows: int, n_chunks: int, resident: int) -> int:
    """Groups of ``n_chunks`` programs for a cooperative launch when ``resident`` programs fit on the GPU:
    as many as fit, then as few as keep the same number of rows per group (no group idles in the last
    round); 0 when not even one group fits."""
    max_groups = min(resident // n_chunks, n_rows)
    if max_groups == 0:
        return 0
    rounds = -(-n_rows // max_groups)
    return -(-n_rows // rounds)


def _launch_split(x, out, chunk, num_warps, cooperative, prefetch) -> None:
    n_rows, n_cols = x.shape
    plan = split_plan(x, chunk, num_warps, cooperative, prefetch, out)
    if plan.n_chunks == 1:  # the row is one chunk: the fused kernel is this case
        _launch_fused(x, out, plan.num_warps)
        return
    pb = triton.next_power_of_2(plan.n_chunks)
    if not plan.cooperative:
        part = _partials(x.device, n_rows * plan.n_chunks)
        grid = (n_rows, plan.n_chunks)
        _split_partials_kernel[grid](x, part[0], part[1], n_cols, x.stride(0), plan.n_chunks, CHUNK=chunk,
                                     num_warps=plan.num_warps)
        _split_normalize_kernel[grid](x, out, part[0], part[1], n_cols, x.stride(0), out.stride(0),
                                      plan.n_chunks, CHUNK=chunk, PB=pb, num_warps=plan.num_warps)
        return
    part = _partials(x.device, n_rows * plan.n_chunks)
    sem = _semaphores(x.device, plan.n_groups)
    _split_coop_kernel[(plan.n_groups * plan.n_chunks,)](
        x, out, part[0], part[1], sem, n_rows, n_cols, x.stride(0), out.stride(0), plan.n_chunks,
        plan.n_groups, CHUNK=chunk, PB=pb, PREFETCH=plan.prefetch, num_warps=plan.num_warps, num_stages=1)


_PER_SM: dict = {}
_OCCUPANCY: dict = {}  # (our count, the driver's) per compiled specialisation, for the tests
_SEMAPHORES: dict = {}


def _coop_programs_per_sm(x: torch.Tensor, out: torch.Tensor, chunk: int, num_warps: int,
                          prefetch: bool) -> int:
    """Programs of the compiled cooperative kernel one SM holds at once (the CUDA occupancy calculator on
    its registers, shared memory and warps; the smaller of that and our own count, should the two differ).

    Compiled (not run) on first use for each specialisation: Triton compiles a kernel afresh for inputs whose
    pointers or integers differ in alignment to 16 (or equal 1), and registers could differ between them."""
    n_cols = x.shape[1]
    pb = triton.next_power_of_2(triton.cdiv(n_cols, chunk))  # PB is a constexpr: part of the compiled kernel
    key = (x.device, x.dtype, chunk, num_warps, prefetch, pb, n_cols % 16 == 0, n_cols == 1,
           x.stride(0) % 16 == 0, x.stride(0) == 1, x.data_ptr() % 16 == 0, out.data_ptr() % 16 == 0)
    if key not in _PER_SM:
        n_chunks = triton.cdiv(n_cols, chunk)
        part = _partials(x.device, n_chunks)
        kernel = _split_coop_kernel.warmup(
            x, out, part[0], part[1], _semaphores(x.device, 1), 1, n_cols, x.stride(0), x.stride(0), n_chunks,
            1, CHUNK=chunk,
            PB=triton.next_power_of_2(n_chunks), PREFETCH=prefetch, num_warps=num_warps, num_stages=1,
            grid=(1,))
        kernel._init_handles()
        threads = kernel.metadata.num_warps * 32
        shared = kernel.metadata.shared
        ours = _occupancy(kernel.n_regs, threads, shared, x.device)
        theirs = _cuda_occupancy(kernel.function, threads, shared)
        _OCCUPANCY[key] = (ours, theirs)
        _PER_SM[key] = _resident_per_sm(ours, theirs)
    return _PER_SM[key]


def _resident_per_sm(ours: int, theirs: int | None) -> int:
    """Programs per SM the cooperative launch may count on: the smaller of our count and the driver's, and 0
    (no cooperative launch: two launches, or "online" under "auto") when the driver cannot be asked. Our own
    count alone is not trusted with a launch that hangs if it is too high."""
    return 0 if theirs is None else min(ours, theirs)


def _occupancy(regs_per_thread: int, threads: int, shared_bytes: int, device) -> int:
    """Blocks per SM from registers (allocated per warp in units of 256), threads and shared memory."""
    props = torch.cuda.get_device_properties(device)
    regs_sm = getattr(props, "regs_per_multiprocessor", 65536)
    threads_sm = getattr(props, "max_threads_per_multi_processor", 2048)
    smem_sm = getattr(props, "shared_memory_per_multiprocessor", 233472)
    warps = triton.cdiv(threads, 32)
    regs_warp = triton.cdiv(max(regs_per_thread, 1) * 32, 256) * 256
    by_regs = regs_sm // (regs_warp * warps)
    by_threads = threads_sm // (warps * 32)
    by_smem = smem_sm // (shared_bytes + 1024)  # 1 KiB per block is reserved by the driver
    return max(0, min(by_regs, by_threads, by_smem, 32))


def _cuda_occupancy(function: int, threads: int, shared_bytes: int) -> int | None:
    """cuOccupancyMaxActiveBlocksPerMultiprocessor from the driver, or None when it cannot be asked."""
    try:
        import ctypes

        lib = ctypes.CDLL("libcuda.so.1")
        blocks = ctypes.c_int(0)
        rc = lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(blocks), ctypes.c_void_p(function), ctypes.c_int(threads), ctypes.c_size_t(shared_bytes))
    except (OSError, AttributeError, TypeError):
        return None
    return blocks.value if rc == 0 else None


def _sm_count(device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def _partials(device, n: int) -> torch.Tensor:
    """fp32 (max, sum) slots: two rows of n, each padded to 16 bytes so both start 16-byte aligned (Triton
    compiles separately for pointers that are and are not)."""
    return torch.empty((2, triton.cdiv(n, 4) * 4), device=device, dtype=torch.float32)


def _semaphores(device, n: int) -> torch.Tensor:
    """Barrier counters for the cooperative kernel: zeroed once and reused, since each launch leaves every
    counter at 0 or -2^31 (see :func:`_arrive`); one buffer per device and stream, since launches on one
    stream never overlap."""
    key = (device, torch.cuda.current_stream(device).cuda_stream)
    sem = _SEMAPHORES.get(key)
    if sem is None or sem.numel() < n:
        sem = torch.zeros(max(n, 1024), device=device, dtype=torch.int32)
        _SEMAPHORES[key] = sem
    return sem


def softmax_bytes_moved(n_rows: int, n_cols: int, bytes_per_element: int, method: str) -> int:
    """HBM bytes of each method as the module docstring counts them (no L2 hits assumed)."""
    passes = {"fused": 2, "torch": 2, "copy": 2, "split": 2, "gluon": 2, "rows": 2, "stream": 3, "online": 3,
              "three_pass": 4}
    if method not in passes:
        raise ValueError(f"method must be one of {list(passes)}, got {method!r}")
    return passes[method] * n_rows * n_cols * bytes_per_element


def _plain_input(x) -> bool:
    """The common valid input, in a few cheap tests: a contiguous 2-D CUDA tensor of a supported dtype."""
    return x.__class__ is torch.Tensor and x.is_cuda and x.dim() == 2 and x.dtype in DTYPE_NAMES \
        and x.is_contiguous()


def _check_tensor(name: str, t) -> None:
    _checks.check_is_tensor(name, t)
    _checks.check_ndim(name, t, 2, "must be 2-D (rows, cols)")
    _checks.check_dtype(name, t, DTYPE_NAMES)
    if t.shape[1] > 1 and t.stride(1) != 1:
        raise ValueError(f"{name} must have contiguous rows (stride(1) == 1, any row stride), got strides "
                         f"{tuple(t.stride())}")
    _checks.check_device(name, t, INTERPRETED, cuda_note="")


__all__ = [
    "AUTO_FUSED_MAX_COLS",
    "DTYPE_NAMES",
    "FUSED_MAX_COLS",
    "GLUON_AUTO_COLS",
    "GLUON_AUTO_MIN_ROWS",
    "INTERPRETED",
    "METHODS",
    "ONLINE_BLOCK",
    "ONLINE_NUM_STAGES",
    "ONLINE_NUM_WARPS",
    "ONLINE_PROGRAMS_PER_SM",
    "SPLIT_CHUNK",
    "SPLIT_NUM_WARPS",
    "SPLIT_PREFETCH",
    "STREAM_BLOCK",
    "SplitPlan",
    "gluon_takes",
    "softmax",
    "softmax_bytes_moved",
    "softmax_reference",
    "split_plan",
]
