"""A tiled matrix multiply in Triton: C = A @ B with A of shape (m, k) and B of shape (k, n).

What this module shows: each program computes one BLOCK_M x BLOCK_N tile of C, walking k in steps of BLOCK_K
and keeping the partial sums in registers (fp32). A tile reads (BLOCK_M + BLOCK_N) * k elements and does
2 * BLOCK_M * BLOCK_N * k FLOP, so its intensity grows with the tile (:mod:`gpuperf.tiling` counts it).

HBM bytes, counted at the minimum (every element of A and B read once, C written once; b bytes per element):
``b * (m k + k n + m n)``. The kernel itself reads A ``ceil(n / BLOCK_N)`` times and B ``ceil(m / BLOCK_M)``
times from L2 or HBM; grouped ordering (below) makes most of those re-reads hit L2.

Two implementations, one public function :func:`matmul`:

* **portable** (``_matmul_kernel``): one program per output tile, launched in *grouped* order: GROUP_M tile
  rows are walked column by column, so programs that run at the same time share rows of A and columns of B
  in L2. Plain pointer loads. Only edge tiles (the last tile row and column) mask their loads along m and n,
  and only the last, partial k step masks along k, so every other load stays a 16-byte vector (masks
  everywhere made it 15x slower on an H200). Runs on any GPU Triton supports (Ampere, a T4 without tensor
  cores) and under the interpreter.
* **tma** (``_matmul_tma_kernel``, Hopper and later, fp16/bf16): tiles are loaded by the Tensor Memory
  Accelerator through tensor descriptors (``tl.make_tensor_descriptor``: the hardware does the address
  arithmetic and zero-fills out-of-bounds elements, so any m, n, k works), and the kernel is *persistent*:
  it launches one program per SM, and each program loops over output tiles in grouped order, which removes
  the launch of later waves and lets the loads of the next tile overlap the epilogue of this one. With
  ``warp_specialize`` (backend ``"tma_ws"``, the default on Blackwell and later) Triton gives the TMA loads
  to producer warps and the Tensor Core instructions to consumer warps. On Hopper, Triton 3.6 compiles the
  flag to the same kernel as without it (8 warps, 256 threads, same registers and shared memory: measured,
  bench/NOTES.md), so there "auto" takes the plain TMA kernel, software-pipelined ``num_stages`` deep.

The TMA tile, :data:`TMA_LARGE_CONFIG`, was chosen by an interleaved sweep on an H200 (bench/NOTES.md, job
mm-1): 4 stages, GROUP_M 16, a 256 x 128 tile, BLOCK_K 128 and an unsplit epilogue were each no faster
beyond the noise, several slower.

Precision: fp16 and bf16 inputs are multiplied on the tensor cores with fp32 accumulation and rounded once to
the input dtype on store. fp32 inputs need an explicit ``input_precision``: ``"tf32"`` (tensor cores, inputs
rounded to 10 explicit mantissa bits, about 8x faster on an H200) or ``"ieee"`` (full fp32 FMAs on the CUDA
cores). Under the interpreter (CPU) the kernels take fp32 and fp16 only (bf16 arithmetic is unsupported there,
FACTS) and ``tl.dot`` is exact, whatever ``input_precision`` says.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gpuperf.kernels import _checks, _launch, interpreter_enabled

#: True when this module's kernels were defined for Triton's interpreter (fixed at import, as in
#: :mod:`gpuperf.kernels.elementwise`).
INTERPRETED = interpreter_enabled()

DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
INPUT_PRECISIONS = ("tf32", "ieee")
BACKENDS = ("auto", "portable", "tma", "tma_ws")

#: The one tile used under the interpreter (small: every program instance costs ~0.6 ms there).
INTERPRETER_CONFIG = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4}


def matmul_flop(m: int, n: int, k: int) -> int:
    """FLOP of an (m, k) x (k, n) product: 2 m n k (one multiply and one add per term)."""
    return 2 * m * n * k


def matmul_min_bytes_moved(m: int, n: int, k: int, bytes_per_element: int) -> int:
    """The fewest HBM bytes: read A and B once, write C once: b (m k + k n + m n)."""
    return bytes_per_element * (m * k + k * n + m * n)


def matmul_reference(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The torch reference the benchmark compares with (cuBLAS on a GPU)."""
    return torch.matmul(a, b)


# --------------------------------------------------------------------------------------------------------
# Portable kernel: one program per output tile, grouped order, pointer loads.
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    # Tiles are numbered group by group; a group is GROUP_M tile rows, walked column
    # by column, so consecutive programs share rows of A and a column block of B.
    tiles_per_group = GROUP_M * num_pid_n
    group = tile_id // tiles_per_group
    first_m = group * GROUP_M
    group_rows = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (tile_id % tiles_per_group) % group_rows
    pid_n = (tile_id % tiles_per_group) // group_rows
    return pid_m, pid_n


@triton.jit
def _k_loop(a_ptrs, b_ptrs, row_ok, col_ok, K, stride_ak, stride_bk,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
            INPUT_PRECISION: tl.constexpr):
    # row_ok / col_ok: None for an interior tile, boolean vectors for an edge tile.
    ks = tl.arange(0, BLOCK_K)
    acc = tl.full((BLOCK_M, BLOCK_N), 0.0, tl.float32)  # fp32 running sums
    full_steps = K // BLOCK_K
    for _ in range(0, full_steps):  # full k steps: no mask along k
        if row_ok is None:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=row_ok[:, None], other=0.0)
            b = tl.load(b_ptrs, mask=col_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    # the last, partial k step: masked; zeros beyond K add nothing
    if full_steps * BLOCK_K < K:
        k_ok = ks < K - full_steps * BLOCK_K
        if row_ok is None:
            a = tl.load(a_ptrs, mask=k_ok[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=k_ok[:, None], other=0.0)
        else:
            a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
    return acc


@triton.jit
def _matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, INPUT_PRECISION: tl.constexpr,
):
    num_pid_m = (M + BLOCK_M - 1) // BLOCK_M
    num_pid_n = (N + BLOCK_N - 1) // BLOCK_N
    pid_m, pid_n = _grouped_tile(tl.program_id(0), num_pid_m, num_pid_n, GROUP_M)
    # 64-bit row and column indices: m * k may pass 2**31 elements.
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K).to(tl.int64)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    # Mask only the edge tiles: a mask along n that is not uniform over 16 bytes
    # turns B's vector loads into one element at a time.
    if (pid_m + 1) * BLOCK_M <= M and (pid_n + 1) * BLOCK_N <= N:
        acc = _k_loop(a_ptrs, b_ptrs, None, None, K, stride_ak, stride_bk,
                      BLOCK_M, BLOCK_N, BLOCK_K, INPUT_PRECISION)
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))
    else:
        row_ok = rows < M
        col_ok = cols < N
        acc = _k_loop(a_ptrs, b_ptrs, row_ok, col_ok, K, stride_ak, stride_bk,
                      BLOCK_M, BLOCK_N, BLOCK_K, INPUT_PRECISION)
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
                 mask=row_ok[:, None] & col_ok[None, :])
# With masks on every tile the kernel ran at 49 TFLOP/s at 4096^3 bf16 on an H200 (bench/NOTES.md).


def _portable_configs() -> list:
    # A small list (each config costs a compile and a timing per shape): large tiles for large products,
    # smaller ones for small or skinny shapes, where large tiles leave SMs idle.
    shapes = [
        (128, 256, 64, 3, 8),
        (128, 128, 64, 4, 8),
        (128, 64, 64, 4, 4),
        (64, 128, 64, 4, 4),
        (64, 64, 64, 4, 4),
    ]
    return [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_stages=s, num_warps=w)
        for bm, bn, bk, s, w in shapes
    ]


# --------------------------------------------------------------------------------------------------------
# Hopper kernel: TMA tensor descriptors, persistent over output tiles (fp16/bf16).
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _matmul_tma_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, NUM_PROGRAMS: tl.constexpr,
    SPLIT_EPILOGUE: tl.constexpr, WARP_SPECIALIZE: tl.constexpr,
):
    num_pid_m = (M + BLOCK_M - 1) // BLOCK_M
    num_pid_n = (N + BLOCK_N - 1) // BLOCK_N
    num_tiles = num_pid_m * num_pid_n
    k_steps = (K + BLOCK_K - 1) // BLOCK_K
    # Descriptors carry the true shapes: TMA zero-fills loads beyond them, clips stores.
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1],
                                       block_shape=[BLOCK_K, BLOCK_N])
    C_BLOCK_N: tl.constexpr = BLOCK_N // 2 if SPLIT_EPILOGUE else BLOCK_N
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_M, C_BLOCK_N])
    # Persistent: NUM_PROGRAMS programs (one per SM) step through all the tiles.
    for tile_id in tl.range(tl.program_id(0), num_tiles, NUM_PROGRAMS, flatten=True,
                            warp_specialize=WARP_SPECIALIZE):
        pid_m, pid_n = _grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.full((BLOCK_M, BLOCK_N), 0.0, tl.float32)  # fp32 running sums
        for ks in range(k_steps):
            a = a_desc.load([off_m, ks * BLOCK_K])
            b = b_desc.load([ks * BLOCK_K, off_n])
            acc = tl.dot(a, b, acc)
        if SPLIT_EPILOGUE:  # two halves: a smaller staging buffer, more room for stages
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            left, right = tl.split(halves)
            out_ty = c_ptr.dtype.element_ty
            c_desc.store([off_m, off_n], left.to(out_ty))
            c_desc.store([off_m, off_n + BLOCK_N // 2], right.to(out_ty))
        else:
            c_desc.store([off_m, off_n], acc.to(c_ptr.dtype.element_ty))


#: TMA kernel tiles: (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, stages, warps, split epilogue). The first won at
#: 4096^3 and 8192^3 in bf16 and fp16 on an H200 (bench/NOTES.md, p3 job 1; no variant of it beat it beyond
#: the noise in the interleaved sweep of job mm-1) and is the only one tried for large
#: products (autotuning among near-equal configs there only picks by noise); small and skinny products
#: also try a 128 x 128 tile, which leaves fewer SMs idle.
TMA_LARGE_CONFIG = (128, 256, 64, 8, 3, 8, True)
TMA_SMALL_CONFIG = (128, 128, 64, 8, 4, 8, False)
#: Products with m n at least this are "large" for the autotuner's pruning.
LARGE_OUTPUT_ELEMENTS = 2048 * 2048


def _tma_configs(warp_specialize: bool) -> list:
    return [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": g, "SPLIT_EPILOGUE": split,
                       "WARP_SPECIALIZE": warp_specialize}, num_stages=s, num_warps=w)
        for bm, bn, bk, g, s, w, split in (TMA_LARGE_CONFIG, TMA_SMALL_CONFIG)
    ]


def _prune_tma_configs(configs, named_args, **kwargs):
    if named_args["M"] * named_args["N"] >= LARGE_OUTPUT_ELEMENTS:
        return [c for c in configs if c.kwargs["BLOCK_N"] == TMA_LARGE_CONFIG[1]]
    return configs


def _tuning_bench(fn, quantiles):
    # Autotuning times every config once per new (m, n, k): shorter than do_bench's default 25 + 100 ms,
    # which would cost over a second per shape with five configs.
    return triton.testing.do_bench(fn, warmup=5, rep=25, quantiles=quantiles)


_autotuned: dict = {}


def _autotuned_kernel(kind: str):
    """The autotuned launcher of ``kind`` ("portable", "tma", "tma_ws"), built on first use (GPU only)."""
    if kind not in _autotuned:
        if kind == "portable":
            kernel, configs = _matmul_kernel, _portable_configs()
        else:
            kernel, configs = _matmul_tma_kernel, _tma_configs(warp_specialize=(kind == "tma_ws"))
        prune = {"early_config_prune": _prune_tma_configs} if kind != "portable" else None
        _autotuned[kind] = triton.autotune(configs=configs, key=["M", "N", "K"], do_bench=_tuning_bench,
                                           prune_configs_by=prune)(kernel)
    return _autotuned[kind]


def _launch_tma_fixed(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, tile: tuple,
                      warp_specialize: bool):
    """``out = a @ b`` by the TMA kernel with one fixed launch, no autotuning: ``tile`` is a tuple laid out
    like :data:`TMA_LARGE_CONFIG`. For sweeps and profiles (bench/NOTES.md); the caller checks the operands
    (:func:`tma_supported`). Returns Triton's compiled kernel (its ``n_regs``, ``n_spills``, ``metadata``)."""
    bm, bn, bk, group_m, stages, warps, split = tile
    m, k = a.shape
    n = b.shape[1]
    _set_tma_allocator()
    num_sms = _device_info(a.device)[1]
    grid = (min(num_sms, triton.cdiv(m, bm) * triton.cdiv(n, bn)),)
    return _matmul_tma_kernel[grid](a, b, out, m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                                    GROUP_M=group_m, NUM_PROGRAMS=num_sms, SPLIT_EPILOGUE=split,
                                    WARP_SPECIALIZE=warp_specialize, num_stages=stages, num_warps=warps)


_warp_specialize_failed = False


def _note_warp_specialize_failed() -> None:
    # Remember it: "auto" then goes straight to the TMA kernel without warp specialisation.
    global _warp_specialize_failed
    _warp_specialize_failed = True


def _set_tma_allocator() -> None:
    # Device-side descriptors live in a small global-memory scratch buffer that Triton asks for.
    _launch.ensure_scratch_allocator()


_device_cache: dict = {}


def _device_info(device: torch.device) -> tuple[int, int]:
    """(compute capability major, SM count) of a CUDA device, looked up once (launch overhead matters)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _device_cache:
        props = torch.cuda.get_device_properties(index)
        _device_cache[index] = (props.major, props.multi_processor_count)
    return _device_cache[index]


def auto_tma_kind(major: int) -> str:
    """The TMA launcher ``backend="auto"`` takes on a GPU of compute capability ``major``: ``"tma_ws"`` on
    Blackwell and later (10+), unless this Triton failed to compile it; ``"tma"`` on Hopper, where Triton
    3.6 compiles ``warp_specialize`` to the same kernel as without it (bench/NOTES.md, job mm-1)."""
    if isinstance(major, bool) or not isinstance(major, int) or major < 9:
        raise ValueError(f"major must be a compute capability major version >= 9 (TMA), got {major!r}")
    return "tma_ws" if (major >= 10 and not _warp_specialize_failed) else "tma"


def tma_supported(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when the TMA kernel can take ``a @ b``: compiled mode, a Hopper-or-later GPU, fp16/bf16, and
    16-byte aligned rows and bases (TMA's rule: k b and n b multiples of 16 bytes)."""
    if INTERPRETED or a.device.type != "cuda" or a.dtype not in (torch.float16, torch.bfloat16):
        return False
    if _device_info(a.device)[0] < 9:
        return False
    b_el = a.element_size()
    return all(
        (x % 16 == 0) for x in (a.shape[1] * b_el, b.shape[1] * b_el, a.data_ptr(), b.data_ptr())
    )


def matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    out: torch.Tensor | None = None,
    *,
    input_precision: str | None = None,
    backend: str = "auto",
    config: dict | None = None,
) -> torch.Tensor:
    """``a @ b`` by a Triton kernel; returns ``out`` (allocated when not given).

    ``a`` (m, k) and ``b`` (k, n): contiguous, one dtype (fp16, bf16, fp32; bf16 only on a GPU), one device
    (CUDA, or the CPU under the interpreter). ``out`` (m, n) of the same dtype must not overlap them.
    ``input_precision`` is required for fp32 inputs (``"tf32"`` or ``"ieee"``) and must be None otherwise.
    ``backend``: ``"auto"`` (where :func:`tma_supported`, the TMA kernel: with warp specialisation on
    Blackwell and later, falling back to the TMA kernel without it if this Triton cannot compile that;
    without it on Hopper, where Triton 3.6 does not specialise; else the portable kernel),
    ``"portable"``, ``"tma"``, or ``"tma_ws"`` (the ``warp_specialize`` flag: producer warps issue the TMA
    loads while consumer warps multiply where Triton specialises; on Hopper, Triton 3.6 compiles the same
    kernel as ``"tma"``). ``config`` fixes the portable kernel's tile (keys of :data:`INTERPRETER_CONFIG`) instead of
    autotuning (always fixed under the interpreter). Raises ``ValueError`` naming the argument.
    """
    plain = out is None and backend == "auto" and config is None and input_precision is None
    if plain and not INTERPRETED:  # a call like an earlier one: its checked, tuned launch
        key = _plan_key(a, b)
        plan = _PLANS.get(key) if key is not None else None
        if plan is not None:
            shape, grid, consts, options, launcher = plan
            out = torch.empty(shape, dtype=a.dtype, device=a.device)
            if launcher is not None:  # the compiled kernel, launched directly, pointers as integers
                launcher(grid, _launch.current_stream(key[4]),
                         (a.data_ptr(), b.data_ptr(), out.data_ptr(), *shape, a.shape[1], *consts))
            else:
                plan[4] = _launch.launcher(_matmul_tma_kernel, grid, (a, b, out, *shape, a.shape[1], *consts),
                                           options)
            return out
    _check_operand("a", a)
    _check_operand("b", b, like=("a", a))
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"b.shape[0] must equal a.shape[1] = {a.shape[1]} (the k dimension), got {b.shape[0]}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if config is not None and backend not in ("auto", "portable"):
        raise ValueError(f"config fixes the portable kernel's tile; it does not apply to backend {backend!r}")
    if a.dtype == torch.float32:
        if input_precision not in INPUT_PRECISIONS:
            raise ValueError(
                f"input_precision must be one of {INPUT_PRECISIONS} for fp32 inputs (tf32: tensor cores, "
                f"10-bit mantissas; ieee: full fp32), got {input_precision!r}"
            )
    elif input_precision is not None:
        raise ValueError(f"input_precision applies to fp32 inputs only; got {input_precision!r} for {a.dtype}")
    m, k = a.shape
    n = b.shape[1]
    out = _checked_out(out, (m, n), a, b)
    if m == 0 or n == 0:
        return out
    if k == 0:
        return out.zero_()
    tma_ok = backend != "portable" and config is None and tma_supported(a, b)
    use_tma = backend in ("tma", "tma_ws") or (backend == "auto" and tma_ok)
    if use_tma:
        if not tma_ok:
            raise ValueError(
                f"backend {backend!r} needs a compiled Hopper-or-later GPU, fp16/bf16 inputs and 16-byte aligned "
                f"rows (k and n multiples of 8); got {a.dtype}, k={k}, n={n}, device {a.device}"
            )
        _set_tma_allocator()
        num_sms = _device_info(a.device)[1]
        grid = lambda meta: (min(num_sms, triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"])),)
        kind = backend if backend != "auto" else auto_tma_kind(_device_info(a.device)[0])
        try:
            _autotuned_kernel(kind)[grid](a, b, out, m, n, k, NUM_PROGRAMS=num_sms)
        except Exception:  # noqa: BLE001 - a Triton that cannot compile warp specialisation on this GPU
            if backend != "auto" or kind != "tma_ws":
                raise
            _note_warp_specialize_failed()
            kind = "tma"
            _autotuned_kernel("tma")[grid](a, b, out, m, n, k, NUM_PROGRAMS=num_sms)
        if plain:
            _remember_plan(a, b, _autotuned_kernel(kind), num_sms)
        return out
    precision = input_precision or "tf32"  # 16-bit inputs: the argument has no effect
    args = (a, b, out, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))
    if INTERPRETED or config is not None:
        cfg = dict(INTERPRETER_CONFIG if config is None else _check_config(config))
        grid = (triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"]),)
        _matmul_kernel[grid](*args, INPUT_PRECISION=precision, **cfg)
    else:
        grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)
        _autotuned_kernel("portable")[grid](*args, INPUT_PRECISION=precision)
    return out


#: Checked, tuned TMA launches by :func:`_plan_key`: [(m, n), grid, constexprs after K, options, launcher]
#: (the launcher, :class:`gpuperf.kernels._launch.Launcher`, from the first launch through the plan).
_PLANS: dict = {}


def _plan_key(a, b):
    """What the checks, the backend choice and the autotuner read from the operands (classes, shapes,
    dtypes, devices, contiguity, 16-byte alignment), or None for inputs left to the full checks."""
    if not (a.__class__ is torch.Tensor and b.__class__ is torch.Tensor and a.is_contiguous()
            and b.is_contiguous()):
        return None
    return (a.shape, b.shape, a.dtype, b.dtype, a.get_device(), b.get_device(), a.data_ptr() % 16 == 0,
            b.data_ptr() % 16 == 0)


def _remember_plan(a, b, autotuned, num_sms: int) -> None:
    """Keep the launch the autotuner chose for these operands (its ``best_config``), so that the next call
    of the same key launches the kernel directly."""
    best = getattr(autotuned, "best_config", None)
    key = _plan_key(a, b)
    if best is None or key is None or getattr(best, "pre_hook", None) is not None:
        return
    kwargs = dict(best.kwargs)
    kwargs["NUM_PROGRAMS"] = num_sms
    names = _matmul_tma_kernel.arg_names[6:]
    if set(names) != set(kwargs):
        return
    m, n = a.shape[0], b.shape[1]
    grid = (min(num_sms, triton.cdiv(m, kwargs["BLOCK_M"]) * triton.cdiv(n, kwargs["BLOCK_N"])), 1, 1)
    options = tuple((name, value) for name, value in (("num_warps", best.num_warps),
                                                       ("num_stages", best.num_stages),
                                                       ("num_ctas", getattr(best, "num_ctas", 1)),
                                                       ("maxnreg", getattr(best, "maxnreg", None)))
                    if value is not None)
    if len(_PLANS) >= 1024:
        _PLANS.clear()
    _PLANS[key] = [(m, n), grid, tuple(kwargs[name] for name in names), options, None]


def _check_config(config: object) -> dict:
    if not isinstance(config, dict) or set(config) != set(INTERPRETER_CONFIG):
        raise ValueError(f"config must be a dict with keys {sorted(INTERPRETER_CONFIG)}, got {config!r}")
    for key, value in config.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1 or value & (value - 1):
            raise ValueError(f"config[{key!r}] must be a power of two, got {value!r}")
    if min(config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]) < 16:
        raise ValueError(f"config's BLOCK_M, BLOCK_N, BLOCK_K must be >= 16 (tl.dot's minimum), got {config!r}")
    return config


def _check_operand(name: str, t: object, like: tuple[str, torch.Tensor] | None = None) -> None:
    _checks.check_is_tensor(name, t)
    _checks.check_ndim(name, t, 2, "must be a 2-D matrix")
    _checks.check_dtype(name, t, DTYPE_NAMES)
    _checks.check_device(name, t, INTERPRETED, bf16_note=" (bf16 arithmetic is unsupported there)")
    _checks.check_contiguous(name, t, with_shape=True, hint=" (call .contiguous() first)")
    if like is not None:
        other_name, other = like
        _checks.check_same_dtype_and_device(name, t, other_name, other)


def _checked_out(out, shape, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if out is None:
        return torch.empty(shape, dtype=a.dtype, device=a.device)
    _check_operand("out", out, like=("a", a))
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"out.shape must be (m, n) = {tuple(shape)}, got {tuple(out.shape)}")
    for name, t in (("a", a), ("b", b)):
        if out.numel() and t.numel() and _checks.byte_ranges_overlap(out, t):
            raise ValueError(f"out must not overlap {name} (every tile reads all of a row block of it)")
    return out


__all__ = [
    "BACKENDS",
    "DTYPE_NAMES",
    "INPUT_PRECISIONS",
    "INTERPRETED",
    "INTERPRETER_CONFIG",
    "auto_tma_kind",
    "matmul",
    "matmul_flop",
    "matmul_min_bytes_moved",
    "matmul_reference",
    "tma_supported",
]
