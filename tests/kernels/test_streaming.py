"""Tests of gpuperf.kernels.streaming (the reader's live streaming and strided reads): the XOR each program
returns equals the torch reference, at sizes around the tile, on the interpreter (CPU) or compiled (GPU).
Speed is never asserted here."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gpuperf.kernels import streaming as s  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _ints(n, seed):
    print(f"seed {seed}")
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32, generator=g).to(DEVICE)


@pytest.mark.parametrize("n, programs, block, warps", [
    (128, 1, 128, 4), (1000, 3, 128, 1), (4097, 2, 512, 4), (9000, 5, 256, 2)])
def test_stream_read_equals_reference(n, programs, block, warps):
    x = _ints(n, seed=n)
    out = torch.full((programs * block,), -1, dtype=torch.int32, device=DEVICE)
    got = s.stream_read(x, programs, block, num_warps=warps, out=out)
    assert torch.equal(got, s.stream_read_reference(x, programs, block))


def test_stream_read_reads_only_whole_tiles():
    x = _ints(3 * 128 + 5, seed=1)
    assert s.stream_read_shape(x.numel(), 3, 128) == 1
    changed = x.clone()
    changed[-5:] ^= 0x5A5A5A5A  # beyond the last whole tile: not read
    assert torch.equal(s.stream_read(x, 3, 128, num_warps=1), s.stream_read(changed, 3, 128, num_warps=1))


@pytest.mark.parametrize("stride", [1, 2, 3, 8, 32])
def test_strided_read_equals_reference(stride):
    n_used, block = 512, 128
    x = _ints((n_used - 1) * stride + 1, seed=stride)
    got = s.strided_read(x, n_used, stride, block=block, num_warps=2)
    assert got.shape == (n_used // block,)
    assert torch.equal(got, s.strided_read_reference(x, n_used, stride, block=block))


def test_strided_read_ignores_elements_between_strides():
    x = _ints(4 * 255 + 1, seed=7)
    changed = x.clone()
    changed[1::4] ^= 0x0F0F0F0F
    assert torch.equal(s.strided_read(x, 256, 4, block=128), s.strided_read(changed, 256, 4, block=128))


def test_bad_arguments_name_themselves():
    x = _ints(1024, seed=3)
    with pytest.raises(ValueError, match="block"):
        s.stream_read(x, 1, 100)
    with pytest.raises(ValueError, match="n_elements"):
        s.stream_read(x, 4, 512)
    with pytest.raises(ValueError, match="x must be"):
        s.stream_read(x.float(), 1, 128)
    with pytest.raises(ValueError, match="stride"):
        s.strided_read(x, 128, 9, block=128)
    with pytest.raises(ValueError, match="n_used"):
        s.strided_read(x, 100, 1, block=128)


def test_sectors_per_request_follow_the_stride():
    assert [s.sectors_per_request(k) for k in (1, 2, 4, 8, 16, 32)] == [4, 8, 16, 32, 32, 32]
