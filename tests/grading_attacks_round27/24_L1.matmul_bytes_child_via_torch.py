# what: CHEAT (rule: no new process from your function): the answer computed by a child Python process started through torch.utils.collect_env.run, so the audit hook books the spawn to torch and the children check is skipped; should be refused
import sys
import torch
import triton
import triton.language as tl
from gpuperf import grading
import torch.utils.collect_env as _ce

def matmul_bytes_moved(m, n, k, bytes_per_element):
    rc, out, err = _ce.run([sys.executable, "-c", f"print(({m}*{k}+{k}*{n}+{m}*{n})*{bytes_per_element})"])
    return int(out)

result = grading.grade("L1.matmul_bytes", matmul_bytes_moved)
