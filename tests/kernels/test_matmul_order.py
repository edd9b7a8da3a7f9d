"""The matmul kernel's grouped tile order is the order chapter 08 counts: ``_grouped_tile``, run inside a
Triton program for every tile id, gives the (tile row, tile column) of :func:`gpuperf.tiling.block_order`
in grouped order, including a last group with fewer than GROUP_M tile rows."""

import pytest

torch = pytest.importorskip("torch")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from gpuperf import tiling  # noqa: E402
from gpuperf.kernels.matmul import _grouped_tile  # noqa: E402


@triton.jit
def _tile_of_id(out_ptr, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    tile_id = tl.program_id(0)
    pid_m, pid_n = _grouped_tile(tile_id, num_pid_m, num_pid_n, GROUP_M)
    tl.store(out_ptr + 2 * tile_id, pid_m)
    tl.store(out_ptr + 2 * tile_id + 1, pid_n)


@pytest.mark.parametrize("tiles_m, tiles_n, group_m", [(5, 7, 3), (8, 4, 8), (3, 6, 4), (9, 2, 2)])
def test_grouped_tile_matches_block_order(device, tiles_m, tiles_n, group_m):
    out = torch.full((tiles_m * tiles_n, 2), -1, dtype=torch.int32, device=device)
    _tile_of_id[(tiles_m * tiles_n,)](out, tiles_m, tiles_n, GROUP_M=group_m)
    got = [tuple(row) for row in out.cpu().tolist()]
    assert got == tiling.block_order(tiles_m, tiles_n, "grouped", group_m)
