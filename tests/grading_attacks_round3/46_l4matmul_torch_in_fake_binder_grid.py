# exercise: L4.matmul
# family: escape
# What is wrong: C = A B is computed by torch (a @ b on the CPU), not by a Triton kernel. The torch work runs
# inside the launch's grid function, where the watch stands aside for Triton's own launch work. The watch
# normally refuses the reader's Python there ("your Python ran torch where the grader's watch stands aside"),
# but its stack walk skips any frame that looks like Triton's generated argument binder: a function named
# `dynamic_func`, compiled from a "<string>" file, whose globals hold Triton's JITCallable and a
# `specialize_impl`. This grid function is exec'd that way. The Triton kernel then only copies C onto
# itself (so every element counts as "stored by a kernel") and runs one 16 x 16 dot of zeros for the tile
# check.
import gpuperf.kernels  # noqa: F401
import torch
import triton
import triton.language as tl
import triton.runtime.jit as _jit

from gpuperf import grading

_BINDER_GLOBALS = {"JITCallable": _jit.JITCallable, "specialize_impl": None, "torch": torch, "triton": triton,
                   "_job": None}
exec(compile('''
def dynamic_func(meta):
    a, b, c, grid = _job
    c.copy_((a.float() @ b.float()).to(c.dtype))  # the whole matmul, by torch, unwatched
    return grid
''', "<string>", "exec"), _BINDER_GLOBALS)
grid_fn = _BINDER_GLOBALS["dynamic_func"]


@triton.jit
def touch_kernel(c_ptr, M, N, scm, scn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    ptrs = c_ptr + rows[:, None] * scm + cols[None, :] * scn
    c = tl.load(ptrs, mask=mask, other=0.0)
    token = tl.dot(tl.zeros((16, 16), dtype=tl.float32), tl.zeros((16, 16), dtype=tl.float32),
                   input_precision="ieee")  # for the "no tiles multiplied with tl.dot" check
    c += tl.sum(tl.sum(token, axis=1), axis=0).to(c.dtype)
    tl.store(ptrs, c, mask=mask)


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    _BINDER_GLOBALS["_job"] = (a, b, c, (triton.cdiv(M, 32), triton.cdiv(N, 32)))
    touch_kernel[grid_fn](c, M, N, c.stride(0), c.stride(1), BLOCK_M=32, BLOCK_N=32)
    return c


matmul = grading.grade("L4.matmul", matmul)
