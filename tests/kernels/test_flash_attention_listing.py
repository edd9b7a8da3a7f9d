"""The forward pass's listings on chapter 14's page (the reference loop, the portable kernel, the Hopper
kernel's differences) fit the page's code column and start at the signature."""

import pytest

pytest.importorskip("triton")

from gpuperf.kernels import flash_attention as fa  # noqa: E402
from gpuperf.plotting.listing import longest_line, source_diff, source_region  # noqa: E402


@pytest.mark.parametrize("fn", [fa.attention_tiled_torch, fa._fwd_block, fa._fwd_kernel])
def test_listed_functions_fit_and_start_at_the_signature(fn):
    text = source_region(fn)
    assert longest_line(text) <= 88
    first = text.splitlines()[0]
    assert first.startswith(("def ", "@triton.jit"))


def test_hopper_differences_fit_and_name_even_k_and_ragged_q():
    for old, new in ((fa._fwd_block, fa._fwd_block_tma), (fa._fwd_kernel, fa._fwd_kernel_desc)):
        assert longest_line(source_diff(old, new)) <= 91  # plus the sign column of a diff
    program = source_diff(fa._fwd_kernel, fa._fwd_kernel_desc)
    assert "+    if not EVEN_K:" in program and "RAGGED_Q" in program
