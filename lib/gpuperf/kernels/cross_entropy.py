"""Fused cross-entropy loss over [tokens, vocabulary] logits, forward and backward in one read.

For row ``i`` with logits ``x_i`` (``V`` columns), target ``t_i`` and label smoothing ``eps``:

* ``lse_i = log sum_j exp(x_ij)`` (online: a running maximum and a rescaled sum, as chapter 13's softmax),
* ``loss_i = (1 - eps) (lse_i - x_{i t_i}) + eps (lse_i - mean_j x_ij)`` (``F.cross_entropy``'s smoothing:
  the target distribution puts ``1 - eps + eps / V`` on the target and ``eps / V`` elsewhere),
* ``d loss_i / d x_ij = softmax(x_i)_j - (1 - eps) [j = t_i] - eps / V``, times the upstream gradient and, for
  ``reduction="mean"``, divided by the number of rows whose target is not ``ignore_index``.

One program owns a row at a time (a persistent grid): pass 1 streams the row once for ``lse`` (and the sum of
the row, with smoothing); pass 2 re-reads it, last block first, so that the blocks read last are still in L2,
and writes the gradient **into the logits' own storage** (``inplace=True``, as Liger Kernel does): after the
forward, the logits tensor holds its gradient, and the logits are gone. HBM traffic: one read of the logits and
one write of the gradient when pass 2 hits L2 (the byte bound of a training step's loss: a copy), two reads
and one write when it does not. At the default launch 2 programs per SM hold 264 rows in flight on an H200:
at 128256 bf16 columns that is 68 MB, more than its L2, so there the logits are read between once and twice.
Rows whose target is ``ignore_index`` (-100) contribute no loss and a zero gradient. The gradient is computed
in the forward for an upstream gradient of 1 (a scalar loss's ``backward()``); the backward multiplies by the
actual upstream gradient only where it is not 1, a check each program makes on the GPU (no host
synchronisation, no traffic in the common case).

Rows start wherever they start (odd vocabularies such as 50257 put rows at 2-byte offsets): each row is a short
head up to its first 16-byte boundary, an aligned body loaded as 16-byte vectors, and a short tail.
Under the Triton interpreter (CPU) bf16 is refused, as elsewhere in ``gpuperf.kernels``.
"""

from __future__ import annotations

import numbers

import torch
import triton
import triton.language as tl

from gpuperf.kernels import _checks, interpreter_enabled
from gpuperf.kernels import softmax as _sm

INTERPRETED = interpreter_enabled()

DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
REDUCTIONS = ("mean", "sum", "none")

#: Columns per block, warps per program and programs per SM of the persistent grid on a GPU.
BLOCK = 4096
NUM_WARPS = 8
PROGRAMS_PER_SM = 2
NUM_STAGES = 4  # 3 -> 4 measured on an H100 (2026-12-07): 0.79 -> 0.81 of a copy at 8192 x 32000, 0.71 -> 0.74 at 50257
#: (the split kernel, off by default, takes NUM_STAGES too: not measured at 4)

#: Rows of at least this many columns (with a gradient, on a GPU) go to the split kernel: a row over
#: programs of SPLIT_CHUNK columns each, SPLIT_PROGRAMS_PER_SM programs per SM.
SPLIT_MIN_COLS = 1 << 30  # off until measured
SPLIT_CHUNK = 32768
SPLIT_PROGRAMS_PER_SM = 2


def cross_entropy_reference(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100,
                            label_smoothing: float = 0.0, reduction: str = "mean"):
    """``F.cross_entropy`` in float64 on the CPU: (loss, gradient of the loss's sum (or of the loss) with
    respect to the logits)."""
    x = logits.detach().to(device="cpu", dtype=torch.float64).requires_grad_(True)
    loss = torch.nn.functional.cross_entropy(x, target.detach().cpu(), ignore_index=ignore_index,
                                             label_smoothing=label_smoothing, reduction=reduction)
    (loss.sum() if reduction == "none" else loss).backward()
    return loss.detach(), x.grad


def cross_entropy_online_torch(logits: torch.Tensor, target: torch.Tensor,
                               block: int = 1024):
    """The loss and lse of each row as the kernel's pass 1 finds them, over blocks
    of ``block`` columns: a running maximum m and a sum l rescaled by
    exp(m_old - m_new) whenever m grows. No ignore_index, no smoothing."""
    x = logits.float()
    n_rows, n_cols = x.shape
    m = torch.full((n_rows,), float("-inf"), device=x.device)
    l = torch.zeros(n_rows, device=x.device)
    for start in range(0, n_cols, block):
        xb = x[:, start:start + block]
        m_new = torch.maximum(m, xb.amax(1))
        l = l * torch.exp(m - m_new) + torch.exp(xb - m_new[:, None]).sum(1)
        m = m_new
    lse = m + torch.log(l)
    x_t = x.gather(1, target[:, None]).squeeze(1)
    return lse - x_t, lse


_edge_offsets = _sm._edge_offsets  # the head and tail lanes of a row, as softmax cuts rows


LOG2E = tl.constexpr(1.4426950408889634)  # log2(e): e^y = 2^(y log2(e))


@triton.jit
def _exp_shifted(x, c, c2, EXACT: tl.constexpr):
    """e^(x - c), with c2 = c log2(e). 16-bit logits: 2^(x log2(e) - c2), one fused multiply-add and one ex2 a
    value, off by about |c| 2^-24 relative (under a 16-bit rounding while |c| < 2^13); fp32 logits (EXACT):
    x - c first, exact near the maximum."""
    if EXACT:
        return tl.exp(x - c)
    else:
        return tl.math.exp2(x * LOG2E - c2)


@triton.jit
def _softmax_scaled(x, c, inv_l, k2, EXACT: tl.constexpr):
    """e^(x - c) inv_l, with k2 = (c - ln inv_l) log2(e): for 16-bit logits 2^(x log2(e) - k2), the factor
    folded into the shift (one fused multiply-add and one ex2 a value, off by about (|c| + |ln inv_l|) 2^-24
    relative); fp32 logits (EXACT): e^(x - c) inv_l."""
    if EXACT:
        return tl.exp(x - c) * inv_l
    else:
        return tl.math.exp2(x * LOG2E - k2)


@triton.jit
def _ce_kernel(X, G, T, LOSS, LSE, N_VALID, n_rows, n_cols, stride_x, stride_g, mis_x, mis_g,
               ignore_index, smoothing,
               BLOCK: tl.constexpr, VEC: tl.constexpr, GRAD: tl.constexpr, SMOOTH: tl.constexpr,
               MEAN: tl.constexpr, G_ALIGNED: tl.constexpr, NUM_STAGES: tl.constexpr, EXACT: tl.constexpr):
    # X and G point at 16-byte boundaries; row r starts mis + r * stride elements after them.
    offs = tl.arange(0, BLOCK)
    if MEAN:
        n_valid = tl.load(N_VALID).to(tl.float32)
        scale = 1.0 / n_valid  # all rows ignored: inf, but no row is written with it
        log2_scale = -tl.log2(n_valid)
    else:
        scale = 1.0
        log2_scale = 0.0
    # listing: ce-pass1
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        row64 = tl.cast(row, tl.int64)
        x_start = mis_x + row64 * stride_x
        g_start = mis_g + row64 * stride_g
        head = tl.minimum((VEC - x_start % VEC) % VEC, n_cols)
        body = ((n_cols - head) // VEC) * VEC
        xb_start = tl.multiple_of(x_start + head, VEC)
        if G_ALIGNED:
            gb_start = tl.multiple_of(g_start + head, VEC)
        else:
            gb_start = g_start + head
        n_full = body // BLOCK
        full_end = n_full * BLOCK
        body_v = tl.multiple_of(body, VEC)
        e_cols, e_live = _edge_offsets(head, head + body, n_cols, VEC)
        t = tl.load(T + row64).to(tl.int32)
        ignored = t == ignore_index
        # One read of the row: a running maximum m (a block's maximum at a time)
        # and, per lane, a sum of exp(x - m) rescaled when m grows (one exp per
        # element); the head and tail in xe.
        xe = tl.load(X + x_start + e_cols, mask=e_live, other=float("-inf")).to(tl.float32)
        # The body's last, partial block first (the only masked one), so the loop needs no mask.
        x = tl.load(X + xb_start + full_end + offs, mask=full_end + offs < body_v,
                    other=float("-inf")).to(tl.float32)
        m = tl.maximum(tl.max(xe, 0), tl.max(x, 0))
        c = tl.where(m > float("-inf"), m, 0.0)  # the shift the sums are taken at
        c2 = c * LOG2E
        l = _exp_shifted(x, c, c2, EXACT)
        l_edge = tl.sum(_exp_shifted(xe, c, c2, EXACT), 0)
        if SMOOTH:
            s = tl.where(full_end + offs < body_v, x, 0.0)
        for start in tl.range(0, full_end, BLOCK, num_stages=NUM_STAGES):
            x = tl.load(X + xb_start + start + offs).to(tl.float32)
            m = tl.maximum(m, tl.max(x, 0))
            c_new = tl.where(m > float("-inf"), m, 0.0)
            c2 = c_new * LOG2E
            alpha = tl.exp(tl.minimum(c - c_new, 0.0))  # 1 unless the maximum grew
            l = l * alpha + _exp_shifted(x, c_new, c2, EXACT)
            l_edge = l_edge * alpha
            c = c_new
            if SMOOTH:
                s += x
        l_row = tl.sum(l, 0) + l_edge
        lse = c + tl.log(l_row)
        in_row = (t >= 0) & (t < n_cols)  # a target outside the row (unchecked on a GPU) reads nothing
        x_t = tl.load(X + x_start + t, mask=in_row, other=0.0).to(tl.float32)
        loss = lse - x_t
        if SMOOTH:
            mean_x = (tl.sum(s, 0) + tl.sum(tl.where(e_live, xe, 0.0), 0)) / n_cols
            loss = (1.0 - smoothing) * loss + smoothing * (lse - mean_x)
        loss = tl.where(ignored, 0.0, loss)
        # end listing: ce-pass1
        tl.store(LOSS + row64, loss)
        tl.store(LSE + row64, lse)
        if GRAD:
            # listing: ce-pass2
            # gradient = (softmax - (1 - eps) onehot - eps / V) * scale, written over
            # the logits, last block first (the likeliest still in L2); an ignored row
            # gets zeros. softmax * scale = e^(x - c) inv_l, inv_l = scale / l_row
            # (k2: the shift with inv_l folded in). The one-hot term is left out of
            # the loops: the target's value is written after them.
            inv_l = tl.where(ignored, 0.0, scale / l_row)
            k2 = tl.where(ignored, float("inf"), c2 + tl.log2(l_row) - log2_scale)
            off_t = tl.where(ignored, 0.0, smoothing * scale / n_cols)
            on_t = tl.where(ignored, 0.0, (1.0 - smoothing) * scale)
            cols = full_end + offs
            x = tl.load(X + xb_start + cols, mask=cols < body_v, other=0.0).to(tl.float32)
            g = _softmax_scaled(x, c, inv_l, k2, EXACT)
            if SMOOTH:
                g -= off_t
            tl.store(G + gb_start + cols, g.to(G.dtype.element_ty), mask=cols < body_v)
            for i in tl.range(0, n_full, num_stages=NUM_STAGES):
                cols = (n_full - 1 - i) * BLOCK + offs
                x = tl.load(X + xb_start + cols).to(tl.float32)
                g = _softmax_scaled(x, c, inv_l, k2, EXACT)
                if SMOOTH:
                    g -= off_t
                tl.store(G + gb_start + cols, g.to(G.dtype.element_ty))
            ge = _softmax_scaled(xe, c, inv_l, k2, EXACT)
            if SMOOTH:
                ge -= off_t
            tl.store(G + g_start + e_cols, ge.to(G.dtype.element_ty), mask=e_live)
            # the target's value, after every thread's stores above: its own term of
            # l_row over l_row, so that p_t - 1 cancels as exactly as the sum allows
            tl.debug_barrier()
            g_t = _exp_shifted(x_t, c, c2, EXACT) / l_row * scale - off_t - on_t
            tl.store(G + g_start + t, g_t.to(G.dtype.element_ty), mask=in_row & (t != ignore_index))
            # end listing: ce-pass2


@triton.jit(do_not_specialize=["n_rows", "n_chunks", "n_groups", "chunk_cols"])
def _ce_split_kernel(X, G, T, LOSS, LSE, N_VALID, PM, PL, PS, SEM, n_rows, n_cols, stride_x, stride_g, mis_x,
                     mis_g, ignore_index, smoothing, chunk_cols, n_chunks, n_groups,
                     BLOCK: tl.constexpr, VEC: tl.constexpr, SMOOTH: tl.constexpr, MEAN: tl.constexpr,
                     G_ALIGNED: tl.constexpr, NUM_STAGES: tl.constexpr, PB: tl.constexpr,
                     PHASE: tl.constexpr):
    # _ce_kernel with a row over n_chunks programs (a group) that meet at the softmax split kernel's barrier
    # between the passes: each streams its chunk of the row's aligned body (chunk 0 also the head, the tail
    # and the target's logit), publishes (max, sum of exp, sum of x), waits, merges and writes the gradient
    # of its chunk, last block first. The chunk's second read follows its first by about (programs in
    # flight) x (chunk bytes), so it can come from L2 even for rows of 150K values. Gradient only.
    # PHASE 0: one launch; 1 / 2: the passes before / after the barrier as two launches (the interpreter).
    pid = tl.program_id(0)
    group = pid // n_chunks
    c = pid - group * n_chunks
    sem = SEM + group
    offs = tl.arange(0, BLOCK)
    if MEAN:
        scale = 1.0 / tl.load(N_VALID).to(tl.float32)
    else:
        scale = 1.0
    for row in tl.range(group, n_rows, n_groups):
        row64 = tl.cast(row, tl.int64)
        x_start = mis_x + row64 * stride_x
        g_start = mis_g + row64 * stride_g
        head, body = _sm._vector_split(x_start, n_cols, VEC)
        xb = _sm._body_start(x_start, head, True, VEC)
        gb = _sm._body_start(g_start, head, G_ALIGNED, VEC)
        lo, hi, n_full, full_end = _sm._chunk_span(c, chunk_cols, body, BLOCK, VEC)
        e_cols, e_live = _edge_offsets(head, head + body, n_cols, VEC)
        e_live = e_live & (e_cols * 0 + c == 0)  # chunk 0 only
        t = tl.load(T + row64).to(tl.int32)
        ignored = t == ignore_index
        xe = tl.load(X + x_start + e_cols, mask=e_live, other=float("-inf")).to(tl.float32)
        if PHASE != 2:
            m, _, l_chunk, s_chunk = _sm._stream_pass1(X, xb, lo, full_end, hi, xe, BLOCK, NUM_STAGES, SMOOTH)
            part = row64 * n_chunks + c
            tl.store(PM + part, m)
            tl.store(PL + part, l_chunk)
            if SMOOTH:
                tl.store(PS + part, s_chunk + tl.sum(tl.where(e_live, xe, 0.0), 0))
            # The target's logit, read before the barrier: after it, the chunk that holds it may overwrite
            # it (two launches: kept in LSE until the second).
            x_t = tl.load(X + x_start + t, mask=(t != ignore_index) & (c == 0), other=0.0).to(tl.float32)
            if PHASE == 1:
                tl.store(LSE + row64, x_t, mask=c == 0)
        if PHASE == 0:
            old = _sm._arrive(sem, n_chunks, c)
            _sm._wait(sem, old)
        if PHASE != 1:
            if PHASE == 2:
                x_t = tl.load(LSE + row64)
            m_row, l_row = _sm._merge_partials(PM, PL, row64 * n_chunks, n_chunks, PB)
            lse = m_row + tl.log(l_row)
            if c == 0:
                loss = lse - x_t
                if SMOOTH:
                    idx = tl.arange(0, PB)
                    s_row = tl.sum(tl.load(PS + row64 * n_chunks + idx, mask=idx < n_chunks, other=0.0,
                                           cache_modifier=".cg"), 0)
                    loss = (1.0 - smoothing) * loss + smoothing * (lse - s_row / n_cols)
                tl.store(LOSS + row64, tl.where(ignored, 0.0, loss))
                tl.store(LSE + row64, lse)
            inv_l = tl.where(ignored, 0.0, scale / l_row)
            off_t = tl.where(ignored, 0.0, smoothing * scale / n_cols)
            on_t = tl.where(ignored, 0.0, (1.0 - smoothing) * scale)
            ge = tl.exp(xe - m_row) * inv_l - off_t - tl.where(e_cols == t, on_t, 0.0)
            tl.store(G + g_start + e_cols, ge.to(G.dtype.element_ty), mask=e_live)
            cols = full_end + offs
            x = tl.load(X + xb + cols, mask=cols < hi, other=0.0).to(tl.float32)
            g = tl.exp(x - m_row) * inv_l - off_t - tl.where(cols + head == t, on_t, 0.0)
            tl.store(G + gb + cols, g.to(G.dtype.element_ty), mask=cols < hi)
            for i in tl.range(0, n_full, num_stages=NUM_STAGES):
                cols = full_end - (i + 1) * BLOCK + offs
                x = tl.load(X + xb + cols).to(tl.float32)
                g = tl.exp(x - m_row) * inv_l - off_t - tl.where(cols + head == t, on_t, 0.0)
                tl.store(G + gb + cols, g.to(G.dtype.element_ty))


@triton.jit
def _scale_kernel(G, GO, n_cols, stride_g, mis_g, stride_go, BLOCK: tl.constexpr):
    # The backward: multiply row `row` of the gradient by the upstream gradient, unless it is 1 (then no
    # memory is touched). Grid (rows, column blocks).
    row = tl.program_id(0).to(tl.int64)
    go = tl.load(GO + row * stride_go).to(tl.float32)
    if go != 1.0:
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        ptr = G + mis_g + row * stride_g + cols
        g = tl.load(ptr, mask=cols < n_cols, other=0.0).to(tl.float32)
        tl.store(ptr, (g * go).to(G.dtype.element_ty), mask=cols < n_cols)


_aligned_base = _sm._aligned_base
_sm_count = _sm._sm_count


def _check(logits, target, ignore_index, label_smoothing, reduction) -> None:
    _checks.check_is_tensor("logits", logits)
    _checks.check_ndim("logits", logits, 2, "must be 2-D (tokens, vocabulary)")
    _checks.check_dtype("logits", logits, DTYPE_NAMES)
    _checks.check_device("logits", logits, INTERPRETED, cuda_note="")
    if logits.shape[1] and logits.stride(1) != 1:
        raise ValueError(f"logits must have contiguous rows (stride(1) == 1), got strides {logits.stride()}")
    _checks.check_is_tensor("target", target)
    if target.shape != logits.shape[:1] or target.dtype not in (torch.int64, torch.int32) \
            or target.device != logits.device:
        raise ValueError(f"target must be a 1-D int64 or int32 tensor of {logits.shape[0]} class indices on "
                         f"{logits.device}, got shape {tuple(target.shape)}, {target.dtype}, {target.device}")
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, numbers.Real) \
            or not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be a number in [0, 1], got {label_smoothing!r}")
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, numbers.Integral):
        raise ValueError(f"ignore_index must be an integer, got {ignore_index!r}")
    if INTERPRETED and target.numel():  # cheap on the CPU; on a GPU it would synchronise
        bad = (target != ignore_index) & ((target < 0) | (target >= logits.shape[1]))
        if bool(bad.any()):
            raise ValueError(f"target values must be in [0, {logits.shape[1]}) or ignore_index "
                             f"{ignore_index}, got {target[bad][0].item()}")


def cross_entropy_forward(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100,
                          label_smoothing: float = 0.0, reduction: str = "mean", grad: bool = True,
                          inplace: bool = True, *, block_cols: int | None = None, num_warps: int | None = None,
                          programs_per_sm: int | None = None, num_stages: int | None = None,
                          chunk_cols: int | None = None):
    """One launch: (loss reduced as asked, lse per row (fp32), gradient or None).

    With ``grad`` the gradient of the reduced loss for an upstream gradient of 1 is written into the logits
    themselves (``inplace=True``: the returned gradient *is* ``logits``, whose values are lost) or into a
    new tensor. Target values outside ``[0, V)`` other than ``ignore_index`` are checked on the CPU only
    (on a GPU, where a check would need a synchronisation, such a row reads no logit: its loss is its lse and its
    gradient has no one-hot term)."""
    _check(logits, target, ignore_index, label_smoothing, reduction)
    for name, value in (("block_cols", block_cols), ("num_warps", num_warps),
                        ("programs_per_sm", programs_per_sm), ("num_stages", num_stages)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                                  or value < 1 or (name in ("block_cols", "num_warps") and value & (value - 1))):
            raise ValueError(f"{name} must be a positive integer (a power of two for block_cols and "
                             f"num_warps), got {value!r}")
    n_rows, n_cols = logits.shape
    dev = logits.device
    loss_rows = torch.empty(n_rows, device=dev, dtype=torch.float32)
    lse = torch.empty(n_rows, device=dev, dtype=torch.float32)
    g = None
    if grad and inplace and n_rows > 1 and n_cols and logits.stride(0) < n_cols:
        # Rows that share memory (an expanded or as_strided view): one row's gradient would overwrite
        # logits another row still reads.
        raise ValueError(f"inplace=True needs logits whose rows do not overlap in memory, got shape "
                         f"{tuple(logits.shape)} with strides {logits.stride()}; pass inplace=False "
                         f"or a contiguous copy")
    if grad:
        g = logits if inplace else torch.empty_like(logits)
    if n_rows and n_cols == 0:
        raise ValueError("logits must have at least one column")
    valid = target != ignore_index
    n_valid = valid.sum(dtype=torch.float32) if reduction == "mean" else None
    split = chunk_cols is not None or n_cols >= SPLIT_MIN_COLS
    if n_rows and split and grad:
        block = block_cols or (256 if INTERPRETED else BLOCK)
        _launch_split(logits, g, target, loss_rows, lse, n_valid, ignore_index, label_smoothing, reduction,
                      block, chunk_cols or SPLIT_CHUNK, num_warps or (4 if INTERPRETED else NUM_WARPS),
                      programs_per_sm or SPLIT_PROGRAMS_PER_SM, num_stages or NUM_STAGES)
    elif n_rows:
        block = block_cols or (256 if INTERPRETED else BLOCK)
        vec = 16 // logits.element_size()
        x_base, mis_x = _aligned_base(logits)
        g_base, mis_g = (x_base, mis_x) if g is None or g is logits else _aligned_base(g)
        g_stride = g.stride(0) if g is not None else logits.stride(0)
        per_sm = programs_per_sm or PROGRAMS_PER_SM
        n_programs = n_rows if INTERPRETED else min(n_rows, per_sm * _sm_count(dev))
        _ce_kernel[(n_programs,)](
            x_base, g_base, target, loss_rows, lse, n_valid if n_valid is not None else loss_rows,
            n_rows, n_cols, logits.stride(0), g_stride, mis_x, mis_g, ignore_index, float(label_smoothing),
            BLOCK=block, VEC=vec, GRAD=grad, SMOOTH=label_smoothing > 0, MEAN=reduction == "mean",
            G_ALIGNED=(mis_g - mis_x) % vec == 0 and (g_stride - logits.stride(0)) % vec == 0,
            NUM_STAGES=num_stages or NUM_STAGES, EXACT=logits.dtype == torch.float32,
            num_warps=num_warps or (4 if INTERPRETED else NUM_WARPS))
    if reduction == "none":
        loss = loss_rows
    elif reduction == "sum":
        loss = loss_rows.sum()
    else:
        loss = loss_rows.sum() / n_valid
    return loss, lse, g


_SPLIT_PER_SM: dict = {}


def _launch_split(logits, g, target, loss_rows, lse, n_valid, ignore_index, smoothing, reduction, block, chunk,
                  warps, per_sm, stages, cooperative=True) -> None:
    """Launch :func:`_ce_split_kernel`: one launch whose programs meet at a barrier when ``cooperative``
    and its grid fits the GPU at once, else (and under the interpreter) the passes as two launches."""
    n_rows, n_cols = logits.shape
    if chunk % block:
        raise ValueError(f"chunk_cols must be a multiple of block_cols {block}, got {chunk}")
    n_chunks = triton.cdiv(n_cols, chunk)
    vec = 16 // logits.element_size()
    x_base, mis_x = _aligned_base(logits)
    g_base, mis_g = (x_base, mis_x) if g is logits else _aligned_base(g)
    part = _sm._partials(logits.device, n_rows * n_chunks)
    ps = torch.empty(n_rows * n_chunks if smoothing > 0 else 1, device=logits.device, dtype=torch.float32)
    consts = dict(BLOCK=block, VEC=vec, SMOOTH=smoothing > 0, MEAN=reduction == "mean",
                  G_ALIGNED=(mis_g - mis_x) % vec == 0 and (g.stride(0) - logits.stride(0)) % vec == 0,
                  NUM_STAGES=stages, PB=triton.next_power_of_2(n_chunks))
    args = (x_base, g_base, target, loss_rows, lse, n_valid if n_valid is not None else loss_rows, part[0],
            part[1], ps)
    scalars = (n_cols, logits.stride(0), g.stride(0), mis_x, mis_g, ignore_index, float(smoothing), chunk,
               n_chunks)
    if not cooperative or INTERPRETED:
        for phase in (1, 2):  # a row per group, no program waits; SEM unused
            _ce_split_kernel[(n_rows * n_chunks,)](*args, part[0], n_rows, *scalars, n_rows, **consts,
                                                   PHASE=phase, num_warps=warps)
        return
    ints = (n_cols, logits.stride(0), g.stride(0), mis_x, mis_g, ignore_index)
    key = (logits.device, logits.dtype, target.dtype, warps, tuple(sorted(consts.items())),
           tuple((i % 16 == 0, i == 1) for i in ints))
    if key not in _SPLIT_PER_SM:
        kernel = _ce_split_kernel.warmup(*args, _sm._semaphores(logits.device, 1), 1, n_cols, logits.stride(0),
                                         g.stride(0), mis_x, mis_g, ignore_index, float(smoothing), chunk,
                                         n_chunks, 1, **consts, PHASE=0, num_warps=warps, grid=(1,))
        kernel._init_handles()
        threads = kernel.metadata.num_warps * 32
        ours = _sm._occupancy(kernel.n_regs, threads, kernel.metadata.shared, logits.device)
        theirs = _sm._cuda_occupancy(kernel.function, threads, kernel.metadata.shared)
        _SPLIT_PER_SM[key] = _sm._resident_per_sm(ours, theirs)
    resident = min(_SPLIT_PER_SM[key], per_sm) * _sm_count(logits.device)
    n_groups = _sm._n_groups(n_rows, n_chunks, resident)
    if n_groups == 0:
        _launch_split(logits, g, target, loss_rows, lse, n_valid, ignore_index, smoothing, reduction, block, chunk,
                      warps, per_sm, stages, cooperative=False)
        return
    sem = _sm._semaphores(logits.device, n_groups)
    _ce_split_kernel[(n_groups * n_chunks,)](*args, sem, n_rows, *scalars, n_groups, **consts, PHASE=0,
                                             num_warps=warps)


def scale_gradient_(g: torch.Tensor, grad_output: torch.Tensor) -> torch.Tensor:
    """Multiply row i of ``g`` in place by ``grad_output`` (a scalar or one value per row), skipping rows
    whose factor is 1 on the GPU (no synchronisation, no traffic then); returns ``g``."""
    n_rows, n_cols = g.shape
    if n_rows == 0 or n_cols == 0:
        return g
    go = grad_output.to(device=g.device, dtype=torch.float32).reshape(-1)
    stride_go = 0 if go.numel() == 1 else go.stride(0)  # an expanded gradient (of a sum) has stride 0
    block = 1024 if INTERPRETED else 8192
    base, mis = _aligned_base(g)
    _scale_kernel[(n_rows, triton.cdiv(n_cols, block))](base, go, n_cols, g.stride(0), mis, stride_go,
                                                          BLOCK=block, num_warps=4 if INTERPRETED else 8)
    return g


class CrossEntropy(torch.autograd.Function):
    """``F.cross_entropy(logits, target, ignore_index=, label_smoothing=, reduction=)`` for 2-D logits; the
    forward computes the gradient too and, with ``inplace=True``, writes it over the logits."""

    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean", inplace=True,
                grad=True):
        # Grad mode is always off in here: whether a gradient is wanted is decided by cross_entropy().
        need = grad and ctx.needs_input_grad[0]
        loss, _, g = cross_entropy_forward(logits.detach(), target, ignore_index, label_smoothing, reduction,
                                           grad=need, inplace=inplace)
        if g is not None and inplace:
            # The kernel's writes do not bump the logits' version counter: bump it, so that an operator that
            # saved the logits for its own backward (tanh, a softcap) raises instead of reading a gradient.
            torch.autograd.graph.increment_version(logits)
        ctx.has_grad = g is not None
        ctx.used = False
        if g is not None:
            ctx.save_for_backward(g)  # autograd checks its version: a later in-place change raises
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        if not ctx.has_grad:
            return (None,) * 7
        if ctx.used:
            raise RuntimeError("cross_entropy: backward may run once only (the gradient was computed in "
                               "the forward and has been handed out)")
        ctx.used = True
        (g,) = ctx.saved_tensors
        return scale_gradient_(g, grad_output), None, None, None, None, None, None


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100,
                  label_smoothing: float = 0.0, reduction: str = "mean", inplace: bool = True) -> torch.Tensor:
    """Cross-entropy of 2-D ``logits`` [tokens, vocabulary] against class indices ``target``, with
    ``F.cross_entropy``'s semantics (no class weights). When ``logits`` requires a gradient, the forward
    computes it and, with ``inplace=True`` (the default), **overwrites the logits with it**: read nothing else
    from ``logits`` afterwards. An operator whose output *is* ``logits`` and that saved it for its backward
    (``logits = torch.tanh(z)``) then raises autograd's in-place error: use ``inplace=False`` there (a softcap
    ``30 * torch.tanh(z / 30)`` saves the tanh, not ``logits``, and is fine). For leaf logits, ``logits.grad``
    shares its storage with ``logits``. Logits whose rows overlap in memory (``expand``) are refused with
    ``inplace=True``. Under ``torch.no_grad()`` or ``torch.inference_mode()`` no gradient is computed and the
    logits are left alone (decided here: grad mode is always off inside ``Function.forward``). A second
    ``backward`` (``retain_graph=True``) raises ``RuntimeError``."""
    grad = torch.is_grad_enabled() and logits.requires_grad
    return CrossEntropy.apply(logits, target, ignore_index, label_smoothing, reduction, inplace, grad)


def peak_live_bytes(step) -> int:
    """The largest total size of the tensor storages that ``step()`` creates and holds alive at once (a CPU
    count of what a training step needs beyond its inputs: every operator's outputs, freed ones subtracted)."""
    import weakref

    from torch.utils._python_dispatch import TorchDispatchMode

    class _Live(TorchDispatchMode):
        live = peak = 0
        seen: set = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for o in out if isinstance(out, (tuple, list)) else (out,):
                if not isinstance(o, torch.Tensor):
                    continue
                st = o.untyped_storage()
                key, n = st.data_ptr(), st.nbytes()
                if n == 0 or key in self.seen:
                    continue
                self.seen.add(key)
                self.live += n
                self.peak = max(self.peak, self.live)
                weakref.finalize(st, self._free, key, n)
            return out

        def _free(self, key, n):
            self.live -= n
            self.seen.discard(key)

    mode = _Live()
    mode.seen = set()
    with mode:
        step()
    return mode.peak


def cross_entropy_bytes_moved(n_rows: int, n_cols: int, bytes_per_element: int) -> int:
    """The byte bound of forward + backward: one read of the logits and one write of their gradient."""
    return 2 * n_rows * n_cols * bytes_per_element


__all__ = [
    "BLOCK",
    "CrossEntropy",
    "DTYPE_NAMES",
    "INTERPRETED",
    "NUM_STAGES",
    "NUM_WARPS",
    "PROGRAMS_PER_SM",
    "REDUCTIONS",
    "cross_entropy",
    "cross_entropy_bytes_moved",
    "cross_entropy_forward",
    "cross_entropy_online_torch",
    "cross_entropy_reference",
    "peak_live_bytes",
    "scale_gradient_",
]
