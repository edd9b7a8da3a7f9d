"""The small-matmul dispatch's launches compile for an H100/H200 (sm_90) on a machine without a GPU.

The interpreter runs the kernels' arithmetic but compiles nothing, so it cannot say whether a launch spills
registers, fits its shared memory, or (for stream-K, whose programs wait for each other) lets one program
per SM be resident. ``bench/matmul_small_compile.py`` compiles a launch with this machine's Triton as a
launch would specialise it and reads ``ptxas -v``; this test runs it (the ``compiled_check`` fixture: a
subprocess with the interpreter off) on one launch of each kind the dispatch takes.
"""

import json

import pytest

pytest.importorskip("triton")

SCRIPT = r'''
import json, sys
sys.path.insert(0, "bench")
import matmul_small_compile as c
from gpuperf.kernels import matmul_splitk as mks
out = []
for m, n, k in ((1, 4096, 4096), (64, 14336, 4096), (1000, 1000, 1000), (777, 4096, 4096)):
    # 777 rows take the TMA kernel (half a wave of its tiles); without it, stream-K, the launch compiled here
    plan = mks.plan_matmul(m, n, k, 132, tma_ok=m != 777)
    out.append(c.compile_plan(plan, m, n, k, "bf16"))
print(json.dumps(out))
print("ok")
'''


@pytest.mark.redundant_on_gpu
def test_dispatch_launches_compile_without_spills_and_fit_the_sm(compiled_check):
    rows = json.loads(compiled_check(SCRIPT).strip().splitlines()[-2])
    assert [r["kernel"] for r in rows] == ["splitk", "splitk", "splitk", "streamk"]
    for r in rows:
        assert r["spill_bytes"] == 0 and r["registers"] <= 255, r
        assert r["tma_loads"], r  # the dispatch's plans load through TMA
        assert r["blocks_per_sm"] >= 2, r  # two programs per SM; stream-K needs one resident per SM
    assert rows[0]["split_k"] == 8 and not rows[0]["wgmma"]  # 16 rows: mma.sync, 8 slices of k
    assert rows[2]["wgmma"] and rows[3]["wgmma"]
