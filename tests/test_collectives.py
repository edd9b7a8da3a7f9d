"""The collectives benchmark's CPU path: the same code as on GPUs, over gloo with two processes (torchrun)."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(sys.platform != "linux", reason="torchrun's gloo rendezvous is tested on Linux")
def test_two_gloo_processes_measure_every_collective(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib"), "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr",
           "127.0.0.1", "--master_port", str(_free_port()), str(ROOT / "bench" / "collectives.py"),
           "--quick", "--iters", "2", "--out-dir", str(tmp_path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    run = json.loads((tmp_path / "collectives_2xcpu_quick.json").read_text())
    rows = run["results"]
    assert {r["collective"] for r in rows} == {"all_reduce", "all_gather", "reduce_scatter"}
    assert all(r["correct"] and r["n_ranks"] == 2 and r["backend"] == "gloo" for r in rows)
    for r in rows:
        factor = 1.0 if r["collective"] == "all_reduce" else 0.5  # 2 (p - 1) / p, (p - 1) / p at p = 2
        assert r["bus_bytes_per_s"] == pytest.approx(r["n_bytes"] / r["time_s"] * factor)
    assert run["provenance"]["NCCL_NVLS_ENABLE"] == "0" and run["provenance"]["backend"] == "gloo"


def test_multicast_switched_on_is_refused(monkeypatch):
    pytest.importorskip("torch")
    from gpuperf.benchmark import collectives as coll

    monkeypatch.setenv("NCCL_NVLS_ENABLE", "1")
    with pytest.raises(RuntimeError, match="NVLink multicast must stay off"):
        coll.init()


def test_a_buffer_not_split_evenly_is_refused():
    pytest.importorskip("torch")
    from gpuperf.benchmark import collectives as coll

    with pytest.raises(ValueError, match="n_bytes"):
        coll._buffers("all_gather", 4 * 3, 2, 0, "cpu")
