"""Fixtures for the kernel tests: the device the kernels run on and fresh random inputs.

Without a CUDA GPU, ``gpuperf.kernels`` switches on the Triton interpreter and the kernels take CPU tensors;
with one, every test here runs the compiled kernels on the GPU.
"""

import secrets

import pytest

torch = pytest.importorskip("torch")
# gpuperf.kernels must decide the interpreter switch before anything imports triton: Triton's own
# @triton.jit helpers (tl.max, tl.sum, ...) read TRITON_INTERPRET when triton is imported, and a kernel that
# calls them fails under the interpreter ("Cannot call @triton.jit'd outside of the scope of a kernel")
# if triton was imported first with the variable unset.
pytest.importorskip("gpuperf.kernels")
pytest.importorskip("triton")


@pytest.fixture(scope="session")
def device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture
def gen(device):
    """A generator with a fresh seed for every test (inputs differ between runs); failure messages quote
    ``gen.initial_seed()`` so a failing input can be rebuilt."""
    return torch.Generator(device=device).manual_seed(secrets.randbits(31))


@pytest.fixture(scope="session")
def compiled_check():
    """Run a compile-only check script, as a GPU build would, on any machine: a fresh Python with the
    interpreter off (a kernel module fixes its mode when it is imported, so the test process's interpreted
    kernels cannot be reused) and lib/ on the path. The script compiles with ``triton.compile`` for a
    ``GPUTarget`` (no GPU needed), asserts what it reads in the result, and prints "ok" last. Skips where this
    Triton build has no ptxas; fails with the script's stderr otherwise."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]

    def run(script: str, *, timeout_s: int = 600, fp_fusion: bool = False, what: str = "compiling") -> str:
        env = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": str(root / "lib")}
        if fp_fusion:
            env["TRITON_DEFAULT_FP_FUSION"] = "1"
        try:
            out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                                 cwd=root, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{what} took more than {timeout_s} s")
        if out.returncode != 0 and "ptxas" in out.stderr and "not found" in out.stderr:
            pytest.skip("this Triton build has no ptxas")
        assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
        return out.stdout

    return run
