"""Benchmark family ``matmul_roof``: validate the compute roof of chapter 06 with cuBLAS (``torch.matmul``).

Square bf16 products from N = 128 to 8192, and the non-square shapes of a training step and of batched
decoding, each checked against a float64 product of a few rows and timed. Two same-run references:

* ``cublas bf16 8192x8192x8192``: the compute-bound cases are compared with it (``flop_per_s``);
* ``copy bf16 2^29``: a device-to-device copy of 1 GiB; the decode shapes, memory-bound by the roofline,
  are compared with it (``bytes_per_s``).

Chapter 06 reads the rows through :mod:`gpuperf.results.matmul` (fraction of the datasheet peak, the knee).
Shapes are (m, k, n): A is m x k, B is k x n. FLOP = 2 m k n; bytes = 2 (m k + k n + m n) (bf16, each
operand read once and the product written once, the roofline's minimum).
"""

from __future__ import annotations

DESCRIPTION = "cuBLAS bf16 matmul: squares 128..8192, training and decode shapes vs same-run 8192^3 and copy"

#: Square sizes N of the sweep (N x N x N).
SQUARE_SIZES = (128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)

#: (label, m, k, n): tokens x d_model times d_model x d_out, a Llama-3-8B-like layer (d_model 4096, MLP 14336).
TRAINING_SHAPES = (
    ("training qkv-like 16384x4096x4096", 16384, 4096, 4096),
    ("training mlp up 16384x4096x14336", 16384, 4096, 14336),
    ("training mlp down 16384x14336x4096", 16384, 14336, 4096),
)

#: Decode batch sizes M through one 4096 x 4096 layer (chapter 06, exercise 2: compute-bound from M = 230).
DECODE_BATCHES = (1, 8, 64, 256, 1024)

REFERENCE_LABEL = "cublas bf16 8192x8192x8192"
COPY_LABEL = "copy bf16 2^29"


def matmul_flop(m: int, k: int, n: int) -> float:
    """2 m k n."""
    return 2.0 * m * k * n


def matmul_bytes(m: int, k: int, n: int, bytes_per_element: int = 2) -> float:
    """b (m k + k n + m n): the roofline's minimum traffic."""
    return float(bytes_per_element * (m * k + k * n + m * n))


def shapes(quick: bool = False) -> list[tuple[str, str, int, int, int]]:
    """(kind, label, m, k, n) of every matmul case, in run order (the reference square last among squares)."""
    squares = SQUARE_SIZES[:4] + (8192,) if quick else SQUARE_SIZES
    out = [("square", f"cublas bf16 {n}x{n}x{n}", n, n, n) for n in squares]
    out += [("training", label, m, k, n) for label, m, k, n in (TRAINING_SHAPES[:1] if quick else TRAINING_SHAPES)]
    out += [("decode", f"decode bf16 M={m} x4096x4096", m, 4096, 4096) for m in DECODE_BATCHES]
    return out


def cases(quick: bool = False):
    """The copy reference, then every shape of :func:`shapes` (tensors made lazily, one case at a time)."""
    import torch

    from gpuperf.benchmark import Case, check_all_written, check_relative_error

    n_copy = 2**29  # 1 GiB of bf16: far beyond the 60 MiB L2
    src = torch.randn(n_copy, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)

    def copy_check(src=src, dst=dst):
        dst.fill_(float("nan"))
        dst.copy_(src)
        check_all_written(COPY_LABEL, dst)
        if not torch.equal(dst, src):
            raise RuntimeError(f"{COPY_LABEL}: the copy differs from its source")

    # Tensors are bound as default arguments: a case may be timed again (retime) after later cases exist.
    yield Case(label=COPY_LABEL, fn=lambda src=src, dst=dst: dst.copy_(src), bytes_moved=2.0 * 2 * n_copy,
               metric="bytes_per_s", check=copy_check, params={"kind": "copy", "dtype": "bf16", "m": 0, "k": 0, "n": n_copy},
               retime=True)

    generator = torch.Generator(device="cuda").manual_seed(0)
    for kind, label, m, k, n in shapes(quick):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=generator)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16, generator=generator)
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

        def check(a=a, b=b, out=out, label=label):
            out.fill_(float("nan"))
            torch.matmul(a, b, out=out)
            check_all_written(label, out)
            rows = torch.arange(0, a.shape[0], max(1, a.shape[0] // 16), device="cuda")
            reference = a[rows].double() @ b.double()
            # bf16 output rounding (2^-9 relative) plus fp32 accumulation; normal inputs make ||C|| ~ sqrt(k)
            check_relative_error(label, out[rows], reference, tolerance=2.0**-7)

        is_decode = kind == "decode"
        yield Case(
            label=label,
            fn=lambda a=a, b=b, out=out: torch.matmul(a, b, out=out),
            flop=matmul_flop(m, k, n),
            bytes_moved=matmul_bytes(m, k, n),
            metric="bytes_per_s" if is_decode else "flop_per_s",
            reference=None if label == REFERENCE_LABEL else (COPY_LABEL if is_decode else REFERENCE_LABEL),
            check=check,
            params={"kind": kind, "dtype": "bf16", "m": m, "k": k, "n": n},
            retime=label in (REFERENCE_LABEL, "cublas bf16 4096x4096x4096"),
        )
