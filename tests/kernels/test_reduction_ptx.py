"""A fresh compile of the fused softmax for sm_90 still reduces a row with butterfly shuffles inside each
warp and a shared-memory exchange between warps, and still predicates its masked loads (chapter 03 shows
the recorded excerpt, book/data/reduction_ptx_sm90.json, written by bench/reduction_ptx.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[2]


def test_fresh_compile_has_the_shuffles_and_the_shared_memory_exchange():
    script = ("import json, sys; sys.path.insert(0, 'bench'); import reduction_ptx; "
              "from gpuperf import simt; "
              "whole = simt.ptx_instructions(reduction_ptx.compile_ptx(True)); "
              "print(json.dumps(reduction_ptx.cases() + [whole]))")
    env = {**os.environ, "TRITON_INTERPRET": "0", "TRITON_DEFAULT_FP_FUSION": "1",
           "PYTHONPATH": str(ROOT / "lib")}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    reduction, masked, whole = json.loads(done.stdout.splitlines()[-1])
    assert any(line.startswith("shfl.sync.bfly") for line in reduction["excerpt"])
    # five steps inside a warp (16, 8, 4, 2, 1); Triton 3.9 then combines the 4 warps' partials with two
    # more shuffles (2, 1), Triton 3.6 (the H200's) without them: the in-warp butterfly is what both share
    assert reduction["shuffle_offsets"][:5] == [16, 8, 4, 2, 1]
    # then the warps exchange their partials through shared memory. Read over the whole kernel: in Triton
    # 3.6's code (the H200's, 2026-12-01) the excerpt's window closes before the store
    from gpuperf import simt

    counts = simt.ptx_counts(whole)
    assert counts["st_shared"] >= 1 and counts["bar_sync"] >= 1 and counts["ld_shared"] >= 1
    ops = [simt._opcode(line) for line in whole]
    first_shuffle = next(i for i, o in enumerate(ops) if o.startswith("shfl.sync.bfly"))
    first_store = next(i for i, o in enumerate(ops) if o.startswith("st.shared"))
    assert first_shuffle < first_store  # in-warp first, then shared memory
    assert sum(o.startswith("shfl") for o in ops[first_shuffle:first_store]) >= 5
    # the masked load is predicated, and the kernel has no branch at all
    assert masked["excerpt"][-1].startswith("@%p") and "ld.global" in masked["excerpt"][-1]
    assert masked["kernel_counts"]["branches"] == 0 and masked["kernel_counts"]["predicated"] > 0
    # the recorded excerpt (chapter 03) has the same structure as a fresh compile by the same Triton
    run = json.loads((ROOT / "book" / "data" / "reduction_ptx_sm90.json").read_text())
    import triton

    if run["provenance"]["triton"] == triton.__version__:
        assert run["results"][0]["shuffle_offsets"] == reduction["shuffle_offsets"] == [16, 8, 4, 2, 1, 2, 1]
        assert run["results"][0]["counts"] == reduction["counts"]
        assert reduction["counts"]["st_shared"] >= 1 and reduction["counts"]["bar_sync"] >= 1
