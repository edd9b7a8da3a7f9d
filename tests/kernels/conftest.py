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
