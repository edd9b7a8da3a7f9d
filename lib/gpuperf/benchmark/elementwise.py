"""Benchmark family ``elementwise``: copy, vector add (torch and Triton) and a chain of k elementwise ops
(unfused torch vs one fused Triton kernel), each against the device-to-device copy of its dtype in the same
run. The cases and their checks live with the kernels (:func:`gpuperf.kernels.elementwise_bench.elementwise_cases`);
the rows keep the schema of :mod:`gpuperf.elementwise_results`, which the book reads.
"""

from __future__ import annotations

DESCRIPTION = "copy, add and k-op chains (unfused torch vs fused Triton) vs the same-run device copy"


def cases(quick: bool = False, n_elements: int | None = None, k_max: int = 16):
    """Every dtype (fp32, fp16, bf16) at 2**28 elements (2**24 when ``quick``), chains of k = 1, 2, 4, ...,
    ``k_max`` (powers of two)."""
    from gpuperf.kernels.elementwise_bench import elementwise_cases

    n = int(n_elements) if n_elements is not None else (2**24 if quick else 2**28)
    k_values = [1]
    while k_values[-1] * 2 <= int(k_max):
        k_values.append(k_values[-1] * 2)
    return elementwise_cases(n_elements=n, k_values=tuple(k_values))
