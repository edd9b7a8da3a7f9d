"""The small-matmul dispatch's launches compile for an H100/H200 (sm_90) on a machine without a GPU.

The interpreter runs the kernels' arithmetic but compiles nothing, so it cannot say whether a launch spills
registers, fits its shared memory, or (for stream-K, whose programs wait for each other) lets one program
per SM be resident. ``bench/matmul_small_compile.py`` compiles a launch with this machine's Triton as a
launch would specialise it and reads ``ptxas -v``; this test runs it, in a subprocess with the interpreter
off, on one launch of each kind the dispatch takes.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

SCRIPT = r'''
import json, sys
sys.path.insert(0, "bench")
import matmul_small_compile as c
from gpuperf.kernels import matmul_splitk as mks
out = []
for m, n, k in ((1, 4096, 4096), (64, 14336, 4096), (1000, 1000, 1000), (777, 4096, 4096)):
    plan = mks.plan_matmul(m, n, k, 132)
    out.append(c.compile_plan(plan, m, n, k, "bf16"))
print(json.dumps(out))
'''


@pytest.mark.redundant_on_gpu
def test_dispatch_launches_compile_without_spills_and_fit_the_sm():
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": str(root / "lib")}
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                         cwd=root, timeout=600)
    if out.returncode != 0 and "ptxas" in out.stderr and "not found" in out.stderr:
        pytest.skip("this Triton build has no ptxas")
    assert out.returncode == 0, out.stderr[-3000:]
    rows = json.loads(out.stdout.strip().splitlines()[-1])
    assert [r["kernel"] for r in rows] == ["splitk", "splitk", "splitk", "streamk"]
    for r in rows:
        assert r["spill_bytes"] == 0 and r["registers"] <= 255, r
        assert r["tma_loads"], r  # the dispatch's plans load through TMA
        assert r["blocks_per_sm"] >= 2, r  # two programs per SM; stream-K needs one resident per SM
    assert rows[0]["split_k"] == 8 and not rows[0]["wgmma"]  # 16 rows: mma.sync, 8 slices of k
    assert rows[2]["wgmma"] and rows[3]["wgmma"]
