"""The region of the fused add + RMSNorm kernel that chapter 09 shows: present, whole, and narrow enough."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

import gpuperf.kernels  # noqa: E402,F401  (sets the interpreter mode before the kernel module is imported)
from gpuperf.kernels import norm  # noqa: E402
from gpuperf.plotting.listing import longest_line, source_region  # noqa: E402


def test_chapter_09_listing_shows_the_whole_kernel_within_88_columns():
    text = source_region(norm, "add-rms-norm")
    assert text.startswith("@triton.jit\ndef _add_rms_norm_kernel(")
    for line in ("h = (x + r).to(h_ptr.dtype.element_ty)", "tl.store(y_ptr + row * y_stride + cols, y)"):
        assert line in text
    assert longest_line(text) <= 88
