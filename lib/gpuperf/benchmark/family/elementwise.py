"""Benchmark family ``elementwise``: copy, vector add (torch and Triton) and a chain of k elementwise ops
(unfused torch vs one fused Triton kernel), each against the device-to-device copy of its dtype in the same
run (GPU only).

The copy (``dst.copy_(src)``: read n b bytes, write n b bytes) is the reference for "as fast as HBM allows",
so every case is reported beside it. It is not a hard ceiling: on an H200 the add, which reads two bytes for
every one it writes, streams 3-5 % faster than the one-to-one copy (``bench/NOTES.md``).

One row per case, as recorded in ``book/data/elementwise_<device>.json`` by ``make bench``; the keys
(:data:`ROW_KEYS`) and their meaning are documented in :mod:`gpuperf.results.elementwise`, which reads the
rows. Bytes are the HBM bytes a kernel must move (:func:`bytes_moved`), FLOP count 1 per element per
operation (:func:`flop_count`), ``time_s`` is the median of ``triton.testing.do_bench`` (CUDA events).

The counting functions and :func:`with_ratio_to_copy` need no GPU; the cases (:func:`cases`,
:func:`elementwise_cases`) and :func:`run_elementwise_benchmark` do, and run through the one harness,
:mod:`gpuperf.benchmark`. Importing this module imports neither torch nor triton (the cases import them, and
the kernels of :mod:`gpuperf.kernels.elementwise`, when they run).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

from gpuperf.accumulation import unit_roundoff
from gpuperf.benchmark import check_all_written
from gpuperf.roofline import bytes_per_element

#: Keys of one result row, in order (their meaning: :mod:`gpuperf.results.elementwise`, which reads the rows).
ROW_KEYS = ("kernel", "dtype", "n_elements", "k_ops", "flop", "bytes_moved", "time_s", "bytes_per_s", "flop_per_s")

#: The kernels measured, in the order their rows are produced for each dtype.
KERNELS = ("copy", "torch_add", "triton_add", "torch_chain_unfused", "triton_chain_fused")

DESCRIPTION = "copy, add and k-op chains (unfused torch vs fused Triton) vs the same-run device copy"

#: Storage dtypes benchmarked, with their bytes per element (from :mod:`gpuperf.roofline`).
ELEMENT_BYTES = {dtype: int(bytes_per_element(dtype)) for dtype in ("fp32", "fp16", "bf16")}

#: Unit roundoff u = 2**-(mantissa bits + 1) of each storage dtype (from :mod:`gpuperf.accumulation`).
UNIT_ROUNDOFF = {dtype: unit_roundoff(dtype) for dtype in ELEMENT_BYTES}


def cases(quick: bool = False, n_elements: int | None = None, k_max: int = 16):
    """Every dtype (fp32, fp16, bf16) at 2**28 elements (2**24 when ``quick``), chains of k = 1, 2, 4, ...,
    ``k_max`` (powers of two)."""
    n = int(n_elements) if n_elements is not None else (2**24 if quick else 2**28)
    k_values = [1]
    while k_values[-1] * 2 <= int(k_max):
        k_values.append(k_values[-1] * 2)
    return elementwise_cases(n_elements=n, k_values=tuple(k_values))


def _check_kernel(kernel: str) -> None:
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")


def _check_positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _check_dtype_name(name: str, value: object) -> str:
    if value not in ELEMENT_BYTES:
        raise ValueError(f"{name} must be one of {tuple(ELEMENT_BYTES)}, got {value!r}")
    return str(value)


def bytes_moved(kernel: str, n_elements: int, element_bytes: int, k_ops: int = 1) -> float:
    """HBM bytes ``kernel`` must move for tensors of ``n_elements`` elements of ``element_bytes`` bytes.

    copy 2 n b (read + write), add 3 n b (two reads + a write), fused chain 2 n b (one read, one write,
    whatever k), unfused chain 2 k n b (every op reads and writes the tensor).
    """
    _check_kernel(kernel)
    n = _check_positive_int("n_elements", n_elements)
    b = _check_positive_int("element_bytes", element_bytes)
    k = _check_positive_int("k_ops", k_ops)
    passes = {"copy": 2, "torch_add": 3, "triton_add": 3, "triton_chain_fused": 2, "torch_chain_unfused": 2 * k}
    return float(passes[kernel] * n * b)


def flop_count(kernel: str, n_elements: int, k_ops: int = 1) -> float:
    """FLOP of ``kernel``, counting 1 per element per elementwise operation (0 for a copy)."""
    _check_kernel(kernel)
    n = _check_positive_int("n_elements", n_elements)
    k = _check_positive_int("k_ops", k_ops)
    ops = {"copy": 0, "torch_add": 1, "triton_add": 1, "triton_chain_fused": k, "torch_chain_unfused": k}
    return float(ops[kernel] * n)


def make_row(kernel: str, dtype: str, n_elements: int, k_ops: int, time_s: float) -> dict[str, Any]:
    """One result row (keys :data:`ROW_KEYS`) from a measured median ``time_s`` in seconds."""
    _check_kernel(kernel)
    dtype = _check_dtype_name("dtype", dtype)
    if kernel in ("copy", "torch_add", "triton_add") and k_ops != 1:
        raise ValueError(f"k_ops must be 1 for kernel {kernel!r}, got {k_ops!r}")
    if isinstance(time_s, bool) or not isinstance(time_s, numbers.Real) or not (math.isfinite(time_s) and time_s > 0):
        raise ValueError(f"time_s must be a finite positive number of seconds, got {time_s!r}")
    moved = bytes_moved(kernel, n_elements, ELEMENT_BYTES[dtype], k_ops)
    flop = flop_count(kernel, n_elements, k_ops)
    return {
        "kernel": kernel,
        "dtype": dtype,
        "n_elements": int(n_elements),
        "k_ops": int(k_ops),
        "flop": flop,
        "bytes_moved": moved,
        "time_s": float(time_s),
        "bytes_per_s": moved / time_s,
        "flop_per_s": flop / time_s,
    }


def with_ratio_to_copy(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``rows`` with ``ratio_to_copy``: bytes_per_s over the copy's, same dtype and n_elements.

    Raises ``ValueError`` if a row has no copy row to compare with.
    """
    copy_rate = {(r["dtype"], r["n_elements"]): r["bytes_per_s"] for r in rows if r["kernel"] == "copy"}
    out = []
    for r in rows:
        key = (r["dtype"], r["n_elements"])
        if key not in copy_rate:
            raise ValueError(f"rows has no 'copy' row for dtype {key[0]!r} and n_elements {key[1]!r}")
        out.append({**r, "ratio_to_copy": r["bytes_per_s"] / copy_rate[key]})
    return out


def _check_close(name: str, out, ref64, bound) -> None:
    """Raise RuntimeError unless |out - ref64| <= bound elementwise (CPU tensors; ref64 and bound float64)."""
    err = (out.double() - ref64).abs()
    bad = err > bound
    if bad.any():
        i = int(bad.nonzero()[0, 0])
        raise RuntimeError(
            f"{name}: element {i} is {float(out[i])}, expected {float(ref64[i])} "
            f"(error {float(err[i]):.3g} > bound {float(bound[i]):.3g}; largest error {float(err.max()):.3g})"
        )


def _validated(n_elements, dtypes, k_values, kernels, check_elements):
    n = _check_positive_int("n_elements", n_elements)
    dtypes = tuple(dtypes)
    for d in dtypes:
        _check_dtype_name("dtypes", d)
    k_values = tuple(k_values)
    kernels = tuple(kernels)
    for kernel in kernels:
        _check_kernel(kernel)
    from gpuperf.kernels.elementwise import MAX_K_OPS

    for k in k_values:
        if _check_positive_int("k_values", k) > MAX_K_OPS:
            raise ValueError(f"k_values must be at most {MAX_K_OPS}, got {k!r}")
    m = _check_positive_int("check_elements", check_elements)
    return n, dtypes, k_values, kernels, m


def elementwise_cases(
    n_elements: int = 2**28,
    dtypes: Sequence[str] = ("fp32", "fp16", "bf16"),
    k_values: Sequence[int] = (1, 2, 4, 8, 16),
    kernels: Sequence[str] = KERNELS,
    check_elements: int = 2**20,
    retime: Sequence[str] = ("copy", "triton_add"),
):
    """The elementwise cases for :func:`gpuperf.benchmark.run_cases`, one dtype's tensors at a time.

    Each case's check runs it once on a NaN-poisoned output: every element written, ``triton_add`` equal to
    ``torch.add`` bit for bit, ``torch_add`` and the chains within a rounding bound of a float64 reference on
    the first and last ``check_elements`` elements. Every case is compared with the copy of its dtype
    (``metric="bytes_per_s"``); the kernels named in ``retime`` are timed again at the end (spread).
    Needs a CUDA GPU and compiled kernels (``RuntimeError`` otherwise).
    """
    n, dtypes, k_values, kernels, m = _validated(n_elements, dtypes, k_values, kernels, check_elements)
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("run_elementwise_benchmark needs a CUDA GPU; load the recorded run instead "
                           "(gpuperf.records.load_run('elementwise_h200'))")
    import gpuperf.kernels.elementwise as kernels_module
    from gpuperf.benchmark import Case

    if kernels_module.INTERPRETED:
        raise RuntimeError("run_elementwise_benchmark times compiled kernels, but TRITON_INTERPRET was on when "
                           "gpuperf.kernels.elementwise was imported; unset it and start a new process")
    chains = tuple(kn for kn in kernels if kn in ("torch_chain_unfused", "triton_chain_fused"))
    singles = tuple(kn for kn in kernels if kn not in chains)
    _dtype_cases = _elementwise_dtype_cases(torch, Case, kernels_module, n, m, singles, chains, k_values,
                                            tuple(retime))
    for index, dtype in enumerate(dtypes):
        # One function call per dtype, so that each case's closures keep that dtype's tensors (a case may be
        # timed again after the next dtype's tensors exist: see ``retime``).
        yield from _dtype_cases(index, dtype)


def _elementwise_dtype_cases(torch, Case, kernels_module, n, m, singles, chains, k_values, retime):
    """The cases of one dtype (see :func:`elementwise_cases`)."""
    chain_reference_fp64 = kernels_module.chain_reference_fp64
    chain_reference_unfused = kernels_module.chain_reference_unfused
    fused_chain = kernels_module.fused_chain
    vector_add = kernels_module.vector_add
    torch_dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

    def head_and_tail(t):
        return torch.cat([t[:m], t[-m:]]) if t.numel() > 2 * m else t

    def dtype_cases(index, dtype):
        torch.cuda.empty_cache()
        gen = torch.Generator(device="cuda").manual_seed(1 + index)
        td = torch_dtypes[dtype]
        x = torch.randn(n, device="cuda", dtype=td, generator=gen)
        y = torch.randn(n, device="cuda", dtype=td, generator=gen)
        out = torch.empty_like(x)
        u = UNIT_ROUNDOFF[dtype]
        x_checked = head_and_tail(x)
        magnitude = x_checked.double().abs().clamp(min=1.0).cpu()
        copy_label = f"copy {dtype} n={n}"
        cases = [(kn, 1) for kn in singles] + [(kn, k) for k in k_values for kn in chains]
        for kernel, k in cases:
            label = copy_label if kernel == "copy" else f"{kernel} {dtype} k={k} n={n}"

            def check(kernel=kernel, k=k, label=label):
                out.fill_(float("nan"))
                if kernel == "copy":
                    out.copy_(x)
                    if not torch.equal(out, x):
                        raise RuntimeError(f"{label}: dst differs from src")
                elif kernel == "torch_add":
                    torch.add(x, y, out=out)
                    check_all_written(label, out)
                    ref = (x_checked.double() + head_and_tail(y).double()).cpu()
                    _check_close(label, head_and_tail(out).cpu(), ref, u * ref.abs())  # |error| <= u |sum|
                elif kernel == "triton_add":
                    vector_add(x, y, out=out)
                    if not torch.equal(out, torch.add(x, y)):  # NaN (never written) equals nothing
                        raise RuntimeError(f"{label}: differs from torch.add")
                elif kernel == "triton_chain_fused":
                    fused_chain(x, k, out=out)
                    check_all_written(label, out)
                    ref = chain_reference_fp64(x_checked, k)
                    # k fp32 roundings of values <= max(|x|, 1), then one rounding to the storage dtype
                    _check_close(label, head_and_tail(out).cpu(), ref,
                                 2 * u * ref.abs() + 4 * k * UNIT_ROUNDOFF["fp32"] * magnitude)
                else:  # torch_chain_unfused: one rounding per op of values <= max(|x|, 1), doubled for headroom
                    result = chain_reference_unfused(x, k)
                    ref = chain_reference_fp64(x_checked, k)
                    _check_close(label, head_and_tail(result).cpu(), ref, 2 * (k + 1) * u * magnitude)
                torch.cuda.synchronize()

            fn = {
                "copy": lambda: out.copy_(x),
                "torch_add": lambda: torch.add(x, y, out=out),
                "triton_add": lambda: vector_add(x, y, out=out),
                "triton_chain_fused": lambda k=k: fused_chain(x, k, out=out),
                "torch_chain_unfused": lambda k=k: chain_reference_unfused(x, k),
            }[kernel]
            yield Case(
                label=label,
                fn=fn,
                flop=flop_count(kernel, n, k),
                bytes_moved=bytes_moved(kernel, n, ELEMENT_BYTES[dtype], k),
                metric="bytes_per_s",
                reference=None if kernel == "copy" else copy_label,
                check=check,
                params={"kernel": kernel, "dtype": dtype, "n_elements": n, "k_ops": k},
                retime=kernel in retime,
            )

    return dtype_cases


def run_elementwise_benchmark(
    n_elements: int = 2**28,
    dtypes: Sequence[str] = ("fp32", "fp16", "bf16"),
    k_values: Sequence[int] = (1, 2, 4, 8, 16),
    progress: bool = True,
    kernels: Sequence[str] = KERNELS,
    warmup_ms: float = 25.0,
    rep_ms: float = 100.0,
    check_elements: int = 2**20,
) -> list[dict[str, Any]]:
    """Measure ``kernels`` on tensors of ``n_elements`` random values, for each dtype and each k, through the
    course's one harness (:func:`gpuperf.benchmark.run_cases` over :func:`elementwise_cases`).

    Returns one row per case with exactly the keys :data:`ROW_KEYS` (the schema of the recorded elementwise
    runs). Times are medians of ``triton.testing.do_bench`` (``warmup_ms``/``rep_ms`` in milliseconds).
    Needs a CUDA GPU and compiled kernels: raises ``RuntimeError`` without a GPU or when ``TRITON_INTERPRET``
    made the kernels interpreted.
    """
    _validated(n_elements, dtypes, k_values, kernels, check_elements)
    for name, value in (("warmup_ms", warmup_ms), ("rep_ms", rep_ms)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number of milliseconds > 0, got {value!r}")
    from gpuperf.benchmark import run_cases

    cases = elementwise_cases(n_elements, dtypes, k_values, kernels, check_elements, retime=())
    rows = run_cases("elementwise", cases, progress=progress, warmup_ms=warmup_ms, rep_ms=rep_ms)
    return [make_row(r["kernel"], r["dtype"], r["n_elements"], r["k_ops"], r["time_s"]) for r in rows]


__all__ = [
    "DESCRIPTION",
    "ELEMENT_BYTES",
    "KERNELS",
    "ROW_KEYS",
    "UNIT_ROUNDOFF",
    "bytes_moved",
    "cases",
    "elementwise_cases",
    "flop_count",
    "make_row",
    "run_elementwise_benchmark",
    "with_ratio_to_copy",
]
