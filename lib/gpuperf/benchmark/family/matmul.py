"""Benchmark family ``matmul``: the course's Triton matmul (:mod:`gpuperf.kernels.matmul`) against cuBLAS
(``torch.matmul``) on the same inputs, in the same run.

Three groups of shapes (m, n, k: A is m x k, B is k x n):

* ``square``: m = n = k from 256 to 8192, fp16 and bf16 (the targets: >= 0.95x cuBLAS at 4096^3, >= 1.0x
  at 8192^3);
* ``transformer``: the projections of a Llama-3-8B-like layer over 8192 tokens and a decode-sized batch
  (bf16);
* ``wave``: m = 2304, k = 4096 and n in fine steps of 16 around NVIDIA's 2304 x 1536 example (fp16), the
  probe of tile and wave quantization that chapter 08's model is drawn over.

Each Triton case names the cuBLAS case of the same shape and dtype as its reference (``flop_per_s``), so its
``ratio_to_reference`` is its speed over cuBLAS's. The target squares (m >= 4096) are timed in
:data:`TARGET_ROUNDS` interleaved rounds (cuBLAS, Triton, Triton, cuBLAS, ...: ``Case.rounds`` of the
harness, after its heat soak) with the SM clock and temperature sampled during each timing: a
tensor-core-bound product holds the H200 at its 700 W power limit, where the SM clock falls from its 1980 MHz
boost to ~1400-1700 MHz, and whichever kernel was timed first on a cool chip used to look up to 14 % faster
(bench/NOTES.md). Every case is checked first: the first 64 rows against a
float64 product (relative error within a bound for fp32 accumulation and the output rounding). With the
default backend and no fixed tile both calls are the plain ones a reader makes (``torch.matmul(a, b)``,
``matmul(a, b)``: outputs allocated, the Triton wrapper's per-shape plan used, as chapter 07 times it);
otherwise both write into one preallocated output. Each row's ``call`` says which.
FLOP = 2 m n k; bytes = b (m k + k n + m n), the minimum traffic.
"""

from __future__ import annotations

DESCRIPTION = "Triton matmul (TMA/persistent on Hopper) vs same-run cuBLAS: squares, transformer shapes, wave probe"

SQUARE_SIZES = (256, 512, 1024, 2048, 4096, 8192)

#: (name, m, n, k): 8192 tokens through a Llama-3-8B-like layer (d_model 4096, MLP 14336), and decoding 16.
TRANSFORMER_SHAPES = (
    ("qkv", 8192, 6144, 4096),
    ("mlp-up", 8192, 14336, 4096),
    ("mlp-down", 8192, 4096, 14336),
    ("decode-16", 16, 4096, 4096),
)

#: The wave probe: m = 2304, k = 4096, n from 1408 to 1792 in steps of 16.
WAVE_M, WAVE_K = 2304, 4096
WAVE_NS = tuple(range(1408, 1793, 16))

CHECK_ROWS = 64

#: Interleaved timing rounds of the target squares (m >= 4096); the other shapes are timed once.
TARGET_ROUNDS = 7


def shapes(quick: bool = False, groups=("square", "transformer", "wave"), square_sizes=SQUARE_SIZES,
           wave_ns=WAVE_NS) -> list[tuple[str, str, int, int, int]]:
    """(group, dtype, m, n, k) of every case, in run order."""
    out = []
    if "square" in groups:
        sizes = (1024, 4096) if quick else tuple(square_sizes)
        out += [("square", dt, s, s, s) for dt in ("bf16", "fp16") for s in sizes]
    if "transformer" in groups:
        out += [("transformer", "bf16", m, n, k) for _, m, n, k in (TRANSFORMER_SHAPES[-1:] if quick
                                                                     else TRANSFORMER_SHAPES)]
    if "wave" in groups:
        ns = tuple(wave_ns)
        out += [("wave", "fp16", WAVE_M, n, WAVE_K) for n in (ns[::8] if quick else ns)]
    return out


def cases(quick: bool = False, groups=("square", "transformer", "wave"), backend: str = "auto",
          square_sizes=SQUARE_SIZES, wave_ns=WAVE_NS, wave_tile: dict | None = None):
    """cuBLAS then Triton for every shape of :func:`shapes`; ``backend`` as in
    :func:`gpuperf.kernels.matmul.matmul`. ``wave_tile`` (a ``config`` of the portable kernel, e.g.
    ``{"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}``) fixes the tile of the wave probe's
    Triton cases, so that the probe shows one tiling's quantization rather than the autotuner's choices."""
    import torch

    from gpuperf.benchmark import Case, check_relative_error
    from gpuperf.kernels import matmul as mm

    torch_dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    gen = torch.Generator(device="cuda").manual_seed(0)
    for group, dtype, m, n, k in shapes(quick, tuple(groups), square_sizes, wave_ns):
        a = torch.randn(m, k, device="cuda", generator=gen).to(torch_dtypes[dtype])
        b = torch.randn(k, n, device="cuda", generator=gen).to(torch_dtypes[dtype])
        out = torch.empty(m, n, device="cuda", dtype=a.dtype)
        ref_rows = a[:CHECK_ROWS].double() @ b.double()
        # fp32 accumulation of k terms plus one rounding to the output format, relative to ||C||:
        tolerance = 2.0**-8 if dtype == "bf16" else 2.0**-10
        shape = f"{m}x{n}x{k}"
        params = {"group": group, "dtype": dtype, "m": m, "n": n, "k": k}
        flop = mm.matmul_flop(m, n, k)
        moved = mm.matmul_min_bytes_moved(m, n, k, a.element_size())
        ref_label = f"cublas {dtype} {shape}"
        rounds = TARGET_ROUNDS if (group == "square" and m >= 4096) else 1

        def make_check(label, run):
            def check():
                from gpuperf.benchmark import check_all_written

                # Poison what one call writes, then call again: a plain call (no out=) allocates its output,
                # and the caching allocator hands the second call the block just poisoned.
                run().fill_(float("nan"))
                result = run()
                torch.cuda.synchronize()
                check_all_written(label, result)
                check_relative_error(label, result[:CHECK_ROWS], ref_rows, tolerance)
            return check

        fixed = wave_tile if group == "wave" else None
        plain = fixed is None and backend == "auto"
        if plain:  # the calls a reader makes: outputs allocated, the Triton wrapper's per-shape plan used
            cublas = lambda a=a, b=b: torch.matmul(a, b)
            triton_fn = lambda a=a, b=b: mm.matmul(a, b)
        else:  # a fixed tile or backend: the checked path, into one output
            cublas = lambda a=a, b=b, out=out: torch.matmul(a, b, out=out)
            triton_fn = lambda a=a, b=b, out=out, fixed=fixed: (
                mm.matmul(a, b, out, config=fixed) if fixed else mm.matmul(a, b, out, backend=backend))
        params = {**params, "call": "plain" if plain else "out"}
        kernel_name = (f"triton-portable-{fixed['BLOCK_M']}x{fixed['BLOCK_N']}" if fixed else f"triton-{backend}")
        yield Case(ref_label, cublas, flop=flop, bytes_moved=moved, metric="flop_per_s",
                   check=make_check(ref_label, cublas), params={**params, "kernel": "cublas"},
                   rounds=rounds)
        label = f"triton {dtype} {shape}"
        yield Case(label, triton_fn, flop=flop, bytes_moved=moved, metric="flop_per_s", reference=ref_label,
                   check=make_check(label, triton_fn), params={**params, "kernel": kernel_name},
                   rounds=rounds)
        del a, b, out, ref_rows
