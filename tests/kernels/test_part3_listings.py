"""The kernels chapters 06-08 list: each listing starts at its signature, holds the lines the walk-throughs
read, carries no interpreter workaround and fits the page's 88 columns."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

import gpuperf.kernels  # noqa: E402,F401  (sets the interpreter mode before the kernel modules are imported)
from gpuperf.kernels import elementwise as ew  # noqa: E402
from gpuperf.kernels import matmul as mm  # noqa: E402
from gpuperf.plotting.listing import longest_line, source_region  # noqa: E402

LISTINGS = {
    "ch06 fused chain": ((ew, "fused-chain"), ("tl.program_id(0)", "tl.arange(0, BLOCK_SIZE)",
                                               "offsets < n_elements", "tl.load(", "tl.store(",
                                               "tl.static_range(K_OPS)", "_chain_kernel[grid](")),
    "ch07 vector add": ((ew, "vector-add"), ("tl.program_id(0)", "tl.load(", "tl.store(")),
    "ch08 grouped tile": ((mm._grouped_tile, None), ("group_rows",)),
    "ch08 tile kernel": ((mm._matmul_kernel, None), ("rows[:, None] * stride_am", "tl.store(c_ptrs")),
    "ch08 k loop": ((mm._k_loop, None), ("tl.dot(a, b, acc", "other=0.0")),
    "ch08 TMA kernel": ((mm._matmul_tma_kernel, None), ("tl.make_tensor_descriptor", "tl.range(",
                                                        "a_desc.load(", "c_desc.store(")),
}


@pytest.mark.parametrize("name", sorted(LISTINGS))
def test_listing_starts_at_the_signature_and_fits(name):
    (obj, region), lines = LISTINGS[name]
    text = source_region(obj, region)
    assert text.startswith("@triton.jit\ndef ")
    for line in lines:
        assert line in text, (name, line)
    assert "norm._add" not in text and "interpret" not in text.lower()
    assert longest_line(text) <= 88


def test_the_chain_launch_runs_the_listed_kernel():
    import torch

    device = "cpu" if ew.INTERPRETED else "cuda"
    x = torch.linspace(-2, 2, 2051, device=device)  # two full blocks and a partial one
    out = ew.fused_chain(x, 5)
    ref = ew.chain_reference_fp64(x, 5)
    assert torch.allclose(out.double().cpu(), ref, rtol=1e-6, atol=1e-6)
