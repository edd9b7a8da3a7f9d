"""The grader's view of a compiled launch, checked on a machine without a GPU.

On a GPU (the labs in Colab), a kernel launch runs Triton's argument binder, a function Triton generates with
``exec`` for each kernel; the binder reads the tensors' addresses, which the watch allows only to Triton's own
code. The watch recognises Triton's binders by identity (the code objects Triton made while the grade ran),
not by their name, which a learner can copy. If it failed to recognise them, every compiled launch would be
refused, and only a GPU would show it. This test takes the compiled path up to the launch itself with a
stand-in driver: Triton binds the arguments and compiles the kernel for sm_90 (no GPU needed), and the
stand-in stops the launch where the CUDA launcher would start. In a subprocess, with the interpreter off.
Checked with Triton 3.9 (this machine) and 3.6 (Colab's and the H200's, with its wheel first on PYTHONPATH)
on 2026-12-04.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

ROOT = Path(__file__).resolve().parents[1]

KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)
'''

SCRIPT = '''
import sys
import torch
import triton
from triton.backends.compiler import GPUTarget

sys.path.insert(0, sys.argv[1])
import probe_kernel_a, probe_kernel_b
from gpuperf.grading import watch


class Stop(Exception):
    pass


class StandInDriver:
    """Enough of a CUDA driver for Triton to bind and compile for sm_90; the launch itself stops."""
    utils = None

    def is_active(self): return True
    def get_current_device(self): return 0
    def set_current_device(self, device): pass
    def get_current_stream(self, device=None): return 0
    def get_current_target(self): return GPUTarget("cuda", 90, 32)
    def get_active_torch_device(self): return torch.device("cpu")
    def get_device_interface(self): return torch.cuda

    @property
    def launcher_cls(self):
        raise Stop("the launch got past the binder and the compile")


triton.runtime.driver.set_active(StandInDriver())
x, y, out = torch.randn(1000), torch.randn(1000), torch.empty(1000)
seen = []


def profile(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "dynamic_func":
        seen.append(watch._triton_binder(frame))


def launch(kernel):
    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        kernel[(4,)](x, y, out, 1000, BLOCK=256)
    except Stop:
        pass
    finally:
        sys.setprofile(previous)


# a kernel first launched while the grader's hooks are on, twice (the second reuses the cached binder)
with watch.triton_hooks():
    launch(probe_kernel_a.add_kernel)
    launch(probe_kernel_a.add_kernel)
print("during", seen)
# a kernel launched before grading (its binder made without the hooks): replaced before a graded launch
launch(probe_kernel_b.add_kernel)
seen.clear()
with watch.triton_hooks():
    watch._own_binders(probe_kernel_b.add_kernel)
    launch(probe_kernel_b.add_kernel)
print("before", seen)
print("triton", triton.__version__)
print("ok")
'''


def test_the_watch_recognises_tritons_binder_on_the_compiled_path(tmp_path):
    for name in ("probe_kernel_a", "probe_kernel_b"):
        (tmp_path / f"{name}.py").write_text(KERNEL)
    path = os.pathsep.join(p for p in (str(ROOT / "lib"), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": path}
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=600)
    if out.returncode != 0 and "ptxas" in out.stderr and "not found" in out.stderr:
        pytest.skip("this Triton build has no ptxas")
    if out.returncode != 0 and ("set_active" in out.stderr or "GPUTarget" in out.stderr):
        pytest.skip(f"this Triton's driver layout differs: {out.stderr.strip().splitlines()[-1]}")
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    assert lines["during"] == "[True, True]", out.stdout
    assert lines["before"] == "[True]", out.stdout
