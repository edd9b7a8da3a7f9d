# what: cheat (rule 6): while graded the function starts a child process through _posixsubprocess.fork_exec with SIGCHLD set to SIG_IGN, so the kernel reaps the child itself: it never shows as a live child nor in RUSAGE_CHILDREN; the child writes a file to prove it ran
import os
import signal
import _posixsubprocess
import torch
import triton
import triton.language as tl
from gpuperf import grading

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def _spawn(argv):
    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        r, w = os.pipe()
        pid = _posixsubprocess.fork_exec(
            [os.fsencode(a) for a in argv], [os.fsencode(argv[0])], True, (), None, None,
            -1, -1, -1, -1, -1, -1, r, w, False, False, 0, None, None, None, -1, None, False)
        os.close(w)
        os.read(r, 64)
        os.close(r)
        try:
            os.waitpid(pid, 0)  # blocks until the child is gone, then ECHILD: the kernel reaped it
        except ChildProcessError:
            pass
    finally:
        signal.signal(signal.SIGCHLD, old)


def add(x, y, out, block_size=1024):
    _spawn(["/bin/sh", "-c", "echo child ran $PPID >> /dev/null"])
    n_elements = x.numel()
    add_kernel[(triton.cdiv(n_elements, block_size),)](x, y, out, n_elements, BLOCK_SIZE=block_size)
    return out

result = grading.grade("L2.add", add)
