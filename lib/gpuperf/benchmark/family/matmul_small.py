"""Benchmark family ``matmul_small``: small and ragged matmuls, the course's dispatch
(:func:`gpuperf.kernels.matmul_splitk.matmul_auto`: split-K, stream-K or the persistent TMA kernel by shape)
against cuBLAS (``torch.matmul``) in the same run, and for a decoding step against a copy of the weight.

Two groups (m, n, k: A is m x k, B is k x n):

* ``small``: products too small or too ragged to fill 132 SMs with large tiles: 1000^3, 777 x 4096 x 4096,
  2048^3, 1536^3, 1000 x 1000 x 8192 (few tiles, a long k); fp16 and bf16;
* ``decode``: a decoding step's m = 1, 16, 64 rows against the weights of a Llama-3-8B-like layer
  (4096 x 4096, k = 4096 x n = 14336, k = 14336 x n = 4096); fp16 and bf16. The time is reading the
  weight, so each shape also times ``dst.copy_(b)`` of the weight (kernel ``copy``, 2 k n b bytes): the
  same-run bandwidth our kernel's bytes per second are compared with.

Rows per shape: ``cublas`` (the reference), ``triton-auto`` (the dispatch) and ``triton-tma`` (the
persistent TMA kernel of :mod:`gpuperf.kernels.matmul` alone, what the course ran before the dispatch),
both naming cuBLAS as reference and timed in :data:`ROUNDS` interleaved rounds with it; ``copy`` for the
decoding shapes. Every case is checked first: the first 64 rows against a float64 product, the output
poisoned with NaN before. FLOP = 2 m n k; bytes = b (m k + k n + m n), the minimum traffic.
"""

from __future__ import annotations

DESCRIPTION = "small/ragged matmuls and decoding steps: split-K/stream-K dispatch vs same-run cuBLAS and a copy"

SMALL_SHAPES = ((1000, 1000, 1000), (777, 4096, 4096), (2048, 2048, 2048), (1536, 1536, 1536),
                (1000, 1000, 8192))
DECODE_MS = (1, 16, 64)
#: (k, n) of the weights: attention projection, MLP up, MLP down.
DECODE_WEIGHTS = ((4096, 4096), (4096, 14336), (14336, 4096))
DTYPES = ("bf16", "fp16")
ROUNDS = 3
CHECK_ROWS = 64


def shapes(quick: bool = False, groups=("small", "decode"), dtypes=DTYPES) -> list[tuple[str, str, int, int, int]]:
    """(group, dtype, m, n, k) of every case, in run order."""
    out = []
    for dtype in dtypes:
        if "small" in groups:
            out += [("small", dtype, m, n, k) for m, n, k in (SMALL_SHAPES[:2] if quick else SMALL_SHAPES)]
        if "decode" in groups:
            out += [("decode", dtype, m, n, k) for m in ((1,) if quick else DECODE_MS)
                    for k, n in (DECODE_WEIGHTS[:1] if quick else DECODE_WEIGHTS)]
    return out


def cases(quick: bool = False, groups=("small", "decode"), dtypes=DTYPES, rounds: int = ROUNDS):
    """cuBLAS, the dispatch, the TMA kernel (and the copy of the weight for decoding) for every shape."""
    import torch

    from gpuperf.benchmark import Case, check_all_written, check_relative_error
    from gpuperf.kernels import matmul as mm
    from gpuperf.kernels import matmul_splitk as mks

    torch_dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    gen = torch.Generator(device="cuda").manual_seed(0)
    for group, dtype, m, n, k in shapes(quick, tuple(groups), tuple(dtypes)):
        a = torch.randn(m, k, device="cuda", generator=gen).to(torch_dtypes[dtype])
        b = torch.randn(k, n, device="cuda", generator=gen).to(torch_dtypes[dtype])
        ref_rows = a[:CHECK_ROWS].double() @ b.double()
        tolerance = 2.0**-8 if dtype == "bf16" else 2.0**-10
        shape = f"{m}x{n}x{k}"
        params = {"group": group, "dtype": dtype, "m": m, "n": n, "k": k}
        flop = mm.matmul_flop(m, n, k)
        moved = mm.matmul_min_bytes_moved(m, n, k, a.element_size())

        def make_check(label, run):
            def check():
                run().fill_(float("nan"))  # the allocator hands the next call this block
                result = run()
                torch.cuda.synchronize()
                check_all_written(label, result)
                check_relative_error(label, result[:CHECK_ROWS], ref_rows, tolerance)
            return check

        ref_label = f"cublas {dtype} {shape}"
        runs = (("cublas", lambda a=a, b=b: torch.matmul(a, b)),
                ("triton-auto", lambda a=a, b=b: mks.matmul_auto(a, b)),
                ("triton-tma", lambda a=a, b=b: mm.matmul(a, b)))
        for kernel, run in runs:
            label = ref_label if kernel == "cublas" else f"{kernel} {dtype} {shape}"
            yield Case(label, run, flop=flop, bytes_moved=moved, metric="flop_per_s",
                       reference=None if kernel == "cublas" else ref_label, check=make_check(label, run),
                       params={**params, "kernel": kernel}, rounds=rounds)
        if group == "decode":
            dst = torch.empty_like(b)
            yield Case(f"copy {dtype} {shape}", lambda dst=dst, b=b: dst.copy_(b),
                       bytes_moved=2.0 * b.numel() * b.element_size(), params={**params, "kernel": "copy"})
        del a, b, ref_rows
