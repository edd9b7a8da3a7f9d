# what: cheat (evidence; 07b with 64-bit staging offsets): while graded, a child started through _posixsubprocess.fork_exec reads x and y from the parent's memory through /proc/<ppid>/mem and logs their sums to a file; out is then written by an honest kernel (nothing refused although raw memory was read)
import os
import sys
import random
import array
import _posixsubprocess
import torch
import triton
import triton.language as tl
from gpuperf import grading

@triton.jit
def stage_kernel(x_ptr, y_ptr, si_ptr, sf_ptr, n, h0, h1, h2, h3, h4, h5, h6, h7, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(sf_ptr + (offs + 16), tl.load(x_ptr + offs, mask=mask).to(tl.float32), mask=mask)
    tl.store(sf_ptr + (offs + n + 16), tl.load(y_ptr + offs, mask=mask).to(tl.float32), mask=mask)
    if pid == 0:
        idx = tl.arange(0, 16).to(tl.int64)
        vals = tl.where(idx == 0, h0, tl.where(idx == 1, h1, tl.where(idx == 2, h2, tl.where(idx == 3, h3,
               tl.where(idx == 4, h4, tl.where(idx == 5, h5, tl.where(idx == 6, h6, tl.where(idx == 7, h7,
               tl.where(idx == 8, n, 0)))))))))
        tl.store(si_ptr + idx, vals)


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def copy_kernel(sf_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(sf_ptr + (offs + 16), mask=mask).to(out_ptr.dtype.element_ty), mask=mask)


CHILD = r'''
import sys, struct, array
pid = int(sys.argv[1]); hdr = bytes.fromhex(sys.argv[2])
maps = open("/proc/%d/maps" % pid).read().splitlines()
f = open("/proc/%d/mem" % pid, "r+b", buffering=0)
for line in maps:
    rng, perm = line.split()[:2]
    if not perm.startswith("rw"):
        continue
    lo, hi = (int(v, 16) for v in rng.split("-"))
    try:
        f.seek(lo); data = f.read(hi - lo)
    except OSError:
        continue
    i = data.find(hdr)
    while i >= 0:
        if i % 4 == 0:
            n = struct.unpack_from("<i", data, i + 32)[0]
            base = lo + i
            f.seek(base + 64); xs = array.array("f"); xs.frombytes(f.read(4 * n))
            ys = array.array("f"); ys.frombytes(f.read(4 * n))
            out = array.array("f", [a + b for a, b in zip(xs, ys)])
            open("/dev/null", "a").write("n=%d first sums %s\n" % (n, list(out[:3])))
            sys.exit(0)
        i = data.find(hdr, i + 1)
sys.exit(1)
'''


def _run_child(argv):
    r, w = os.pipe()
    c2p_r, c2p_w = os.pipe()
    pid = _posixsubprocess.fork_exec(
        [os.fsencode(a) for a in argv], [os.fsencode(argv[0])], True, (), None, None,
        -1, -1, -1, c2p_w, -1, -1, r, w, False, False, 0, None, None, None, -1, None, False)
    os.close(w)
    os.close(c2p_w)
    os.read(r, 64)
    os.close(r)
    chunks = []
    while True:
        b = os.read(c2p_r, 1 << 20)
        if not b:
            break
        chunks.append(b)
    os.close(c2p_r)
    os.waitpid(pid, 0)
    return b"".join(chunks)


def add(x, y, out, block_size=1024):
    n = x.numel()
    s = torch.empty(16 + 2 * n, dtype=torch.int32, device=x.device)
    sf = s.view(torch.float32)
    h = [random.randrange(1 << 20, 1 << 30) for _ in range(8)]
    grid = (triton.cdiv(n, block_size),)
    stage_kernel[grid](x, y, s, sf, n, *h, BLOCK=block_size)
    hdr = b"".join(v.to_bytes(4, "little") for v in h).hex()
    _run_child([sys.executable, "-c", CHILD, str(os.getpid()), hdr])
    add_kernel[grid](x, y, out, n, BLOCK=block_size)
    return out

result = grading.grade("L2.add", add)
