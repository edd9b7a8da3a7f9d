"""Tests of gpuperf.kernels.elementwise (vector add, fused chain) and the benchmark's bookkeeping.

Every kernel result is compared with an independent float64 reference and, where one exists, a closed form,
within a bound set by the storage dtype's unit roundoff u. Outputs are poisoned with NaN before each run, so
an element the kernel never wrote fails. Without a CUDA GPU the kernels run through the Triton interpreter
(fp32 and fp16); bf16 and the compiled path are tested on a GPU only. Speed is never asserted here.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from gpuperf.kernels import interpreter_enabled  # noqa: E402
from gpuperf.kernels import elementwise as ew  # noqa: E402
from gpuperf.benchmark.family import elementwise as eb  # noqa: E402

HAS_CUDA = torch.cuda.is_available()
gpu_only = [pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")]
cpu_only = pytest.mark.skipif(HAS_CUDA, reason="checks the CPU (interpreter) path")

#: Unit roundoff of each storage dtype (half the spacing just above 1): the tolerances follow from it.
U = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
U_FP32 = 2.0**-24

DTYPES = [torch.float32, torch.float16, pytest.param(torch.bfloat16, marks=gpu_only, id="torch.bfloat16")]
# Around and across BLOCK_SIZE = 1024: full blocks take the unmasked path, the last partial block the masked
# one; 2048 has no partial block, 2047 a partial block one element short.
SIZES = [1, 97, 1000, 1025, 2047, 2048, 4097, 65537]
K_VALUES = [1, 2, 3, 8, 16]


def poisoned(like: torch.Tensor) -> torch.Tensor:
    return torch.full_like(like, float("nan"))


def assert_within(out: torch.Tensor, ref64: torch.Tensor, bound: torch.Tensor, what: str) -> None:
    """Every element written (no NaN left) and |out - ref64| <= bound; otherwise report the first offender."""
    out64 = out.detach().cpu().double().flatten()
    ref64 = ref64.detach().cpu().double().flatten()
    bound = torch.as_tensor(bound, dtype=torch.float64).cpu().expand_as(ref64)
    unwritten = torch.isnan(out64)
    assert not unwritten.any(), f"{what}: {int(unwritten.sum())} elements never written, first at {int(unwritten.nonzero()[0, 0])}"
    err = (out64 - ref64).abs()
    bad = err > bound
    if bad.any():
        i = int(bad.nonzero()[0, 0])
        pytest.fail(f"{what}: first mismatch at {i}: got {out64[i].item()!r}, expected {ref64[i].item()!r}; "
                    f"error {err[i].item():.3g} > tolerance {bound[i].item():.3g}; largest error {err.max().item():.3g}")


def chain_closed_form(x64: torch.Tensor, k_ops: int, scale: float, shift: float) -> torch.Tensor:
    """y after k ops in closed form: m = k // 2 pairs give scale^m x + shift (1 - scale^m) / (1 - scale),
    and an odd k multiplies once more by scale."""
    m = k_ops // 2
    y = scale**m * x64 + shift * (1 - scale**m) / (1 - scale)
    return y * scale if k_ops % 2 else y


# ----------------------------------------------------------------------------------------------------------
# vector_add
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_vector_add_is_correctly_rounded_and_equals_torch(n, dtype, device, gen):
    x = torch.randn(n, generator=gen, device=device).to(dtype)
    y = torch.randn(n, generator=gen, device=device).to(dtype)
    out = poisoned(x)
    returned = ew.vector_add(x, y, out=out)
    assert returned is out
    exact = x.double() + y.double()
    # round to nearest: |error| <= u |exact|; the eager torch.add rounds the same fp32 sum, so bit-equal
    assert_within(out, exact, U[dtype] * exact.abs().cpu(), f"vector_add n={n} {dtype} seed={gen.initial_seed()}")
    assert torch.equal(out, ew.add_reference(x, y))


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_add_closed_forms(dtype, device, gen):
    x = torch.randn(4097, generator=gen, device=device).to(dtype)
    seed = f"seed={gen.initial_seed()}"
    assert torch.equal(ew.vector_add(x, -x), torch.zeros_like(x)), seed  # x + (-x) = 0 exactly
    assert torch.equal(ew.vector_add(x, x), 2 * x), seed  # doubling is exact


@pytest.mark.parametrize("kernel", ["vector_add", "fused_chain"])
@pytest.mark.parametrize("n", [1, 1023, 1025, 2047, 4097])
def test_kernels_write_nothing_past_the_end(kernel, n, device, gen):
    x = torch.randn(n, generator=gen, device=device)
    y = torch.randn(n, generator=gen, device=device)
    buffer = torch.full((n + 2048,), float("nan"), device=device)
    if kernel == "vector_add":
        ew.vector_add(x, y, out=buffer[:n])
    else:
        ew.fused_chain(x, 3, out=buffer[:n])
    assert not torch.isnan(buffer[:n]).any()
    assert torch.isnan(buffer[n:]).all(), f"{kernel} stored past n_elements (mask missing)"


def test_in_place_is_allowed(device, gen):
    """out may be an input itself: each element is read and then written by the same program."""
    x = torch.randn(3001, generator=gen, device=device)
    y = torch.randn(3001, generator=gen, device=device)
    expected_sum, expected_chain = x + y, ew.fused_chain(y, 4)
    assert ew.vector_add(x, y, out=x) is x
    assert torch.equal(x, expected_sum), f"seed={gen.initial_seed()}"
    assert ew.fused_chain(y, 4, out=y) is y
    assert torch.equal(y, expected_chain), f"seed={gen.initial_seed()}"


@pytest.mark.parametrize("shift_elements", [1, -1, 1000, -2999])
def test_partly_overlapping_out_is_refused(shift_elements, device):
    buffer = torch.zeros(9000, device=device)
    x, y = buffer[3000:6000], torch.zeros(3000, device=device)
    out = buffer[3000 + shift_elements: 6000 + shift_elements]
    offset = re.escape(f"{4 * shift_elements:+d}")  # bytes: fp32
    with pytest.raises(ValueError, match=rf"^out must be x itself or not overlap it, got out {offset} bytes from x"):
        ew.vector_add(x, y, out=out)
    with pytest.raises(ValueError, match=r"^out must be y itself or not overlap it"):
        ew.vector_add(y, x, out=out)
    with pytest.raises(ValueError, match=r"^out must be x itself or not overlap it"):
        ew.fused_chain(x, 2, out=out)


def test_adjacent_out_is_not_an_overlap(device, gen):
    buffer = torch.full((2 * 1025,), float("nan"), device=device)
    x, out = buffer[:1025], buffer[1025:]
    x.copy_(torch.randn(1025, generator=gen, device=device))
    assert torch.equal(ew.vector_add(x, x, out=out), 2 * x)


def test_vector_add_keeps_shape_and_allocates(device, gen):
    x = torch.randn(37, 29, generator=gen, device=device).half()
    y = torch.randn(37, 29, generator=gen, device=device).half()
    out = ew.vector_add(x, y)
    assert out.shape == (37, 29) and out.dtype == torch.float16 and out.device == x.device
    assert torch.equal(out, x + y)


def test_zero_dimensional_tensors(device):
    x = torch.tensor(1.5, device=device)
    assert ew.vector_add(x, x).shape == () and ew.vector_add(x, x).item() == 3.0
    assert ew.fused_chain(x, 2).item() == 1.5 * ew.CHAIN_SCALE + ew.CHAIN_SHIFT  # exact in fp32


def test_numpy_integer_k_ops_is_accepted(device):
    np = pytest.importorskip("numpy")
    x = torch.full((5,), 2.0, device=device)
    assert torch.equal(ew.fused_chain(x, np.int64(3)), ew.fused_chain(x, 3))


def test_empty_tensors_are_returned_untouched(device):
    x = torch.empty(0, device=device)
    assert ew.vector_add(x, x).numel() == 0
    assert ew.fused_chain(x, 3).numel() == 0


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 3000), half=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_vector_add_any_size(n, half, seed):
    device = "cuda" if HAS_CUDA else "cpu"
    dtype = torch.float16 if half else torch.float32
    g = torch.Generator(device=device).manual_seed(seed)
    x = (torch.randn(n, generator=g, device=device) * 100).to(dtype)
    y = torch.randn(n, generator=g, device=device).to(dtype)
    out = poisoned(x)
    ew.vector_add(x, y, out=out)
    exact = x.double() + y.double()
    assert_within(out, exact, U[dtype] * exact.abs().cpu(), f"vector_add n={n} {dtype} seed={seed}")


# ----------------------------------------------------------------------------------------------------------
# fused_chain and its references
# ----------------------------------------------------------------------------------------------------------


def fused_bound(ref64: torch.Tensor, x: torch.Tensor, k_ops: int, dtype) -> torch.Tensor:
    """k fp32 roundings on values of size <= max(|x|, 1), then one rounding to the storage dtype."""
    magnitude = x.detach().cpu().double().abs().clamp(min=1.0)
    return 2 * U[dtype] * ref64.abs() + 4 * k_ops * U_FP32 * magnitude


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k_ops", K_VALUES)
@pytest.mark.parametrize("n", SIZES)
def test_fused_chain_against_float64_and_closed_form(n, k_ops, dtype, device, gen):
    x = (torch.randn(n, generator=gen, device=device) * 3).to(dtype)
    out = poisoned(x)
    assert ew.fused_chain(x, k_ops, out=out) is out
    ref = ew.chain_reference_fp64(x, k_ops)
    closed = chain_closed_form(x.cpu().double(), k_ops, ew.CHAIN_SCALE, ew.CHAIN_SHIFT)
    torch.testing.assert_close(ref, closed, rtol=1e-14, atol=1e-14)  # the loop reference is the formula
    assert_within(out, closed, fused_bound(closed, x, k_ops, dtype),
                  f"fused_chain n={n} k={k_ops} {dtype} seed={gen.initial_seed()}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k_ops", K_VALUES)
def test_unfused_torch_chain_rounds_once_per_op(k_ops, dtype, device, gen):
    x = (torch.randn(4097, generator=gen, device=device) * 3).to(dtype)
    unfused = ew.chain_reference_unfused(x, k_ops)
    assert unfused.dtype == dtype and unfused.device == x.device
    ref = chain_closed_form(x.cpu().double(), k_ops, ew.CHAIN_SCALE, ew.CHAIN_SHIFT)
    magnitude = x.cpu().double().abs().clamp(min=1.0)
    # each of the k eager ops rounds to the storage dtype (|error| <= u |value| <= u max(|x|, 1))
    assert_within(unfused, ref, 2 * (k_ops + 1) * U[dtype] * magnitude,
                  f"unfused k={k_ops} {dtype} seed={gen.initial_seed()}")


def test_fused_chain_rounds_once_so_it_beats_unfused_fp16(device, gen):
    """The fused kernel rounds once, the eager chain 16 times: in fp16 its worst error is clearly smaller."""
    x = (torch.randn(65537, generator=gen, device=device) * 3).half()
    ref = ew.chain_reference_fp64(x, 16)
    fused_err = (ew.fused_chain(x, 16).cpu().double() - ref).abs().max()
    unfused_err = (ew.chain_reference_unfused(x, 16).cpu().double() - ref).abs().max()
    assert fused_err < unfused_err, f"seed={gen.initial_seed()}"


@pytest.mark.parametrize("scale, shift, k_ops", [(-1.5, 0.25, 5), (0.5, -3.0, 7), (1.0 / 3.0, 0.1, 4)])
def test_fused_chain_custom_constants(scale, shift, k_ops, device, gen):
    x = torch.randn(1025, generator=gen, device=device)
    out = ew.fused_chain(x, k_ops, scale=scale, shift=shift)
    ref = chain_closed_form(x.cpu().double(), k_ops, scale, shift)
    torch.testing.assert_close(ew.chain_reference_fp64(x, k_ops, scale, shift), ref, rtol=1e-13, atol=1e-13)
    # the constants themselves are rounded to fp32 (1/3, 0.1), so allow fp32-sized relative error
    magnitude = x.cpu().double().abs().clamp(min=1.0) * max(abs(scale), 1.0) ** k_ops * (1 + abs(shift))
    assert_within(out, ref, 8 * k_ops * U_FP32 * magnitude,
                  f"fused_chain scale={scale} shift={shift} seed={gen.initial_seed()}")


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 2500), k_ops=st.integers(1, 12), half=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_fused_chain_any_size_and_k(n, k_ops, half, seed):
    device = "cuda" if HAS_CUDA else "cpu"
    dtype = torch.float16 if half else torch.float32
    g = torch.Generator(device=device).manual_seed(seed)
    x = (torch.randn(n, generator=g, device=device) * 10).to(dtype)
    out = poisoned(x)
    ew.fused_chain(x, k_ops, out=out)
    ref = ew.chain_reference_fp64(x, k_ops)
    assert_within(out, ref, fused_bound(ref, x, k_ops, dtype), f"fused_chain n={n} k={k_ops} {dtype} seed={seed}")


# ----------------------------------------------------------------------------------------------------------
# Argument checks: ValueError naming the argument
# ----------------------------------------------------------------------------------------------------------


def test_non_contiguous_inputs_are_refused(device):
    x = torch.randn(64, device=device)
    strided = torch.randn(128, device=device)[::2]
    with pytest.raises(ValueError, match=r"^x must be contiguous"):
        ew.vector_add(strided, x)
    with pytest.raises(ValueError, match=r"^y must be contiguous"):
        ew.vector_add(x, strided)
    with pytest.raises(ValueError, match=r"^out must be contiguous"):
        ew.vector_add(x, x, out=strided)
    with pytest.raises(ValueError, match=r"^x must be contiguous"):
        ew.fused_chain(torch.randn(8, 8, device=device).t(), 2)


def test_mismatched_shape_dtype_and_bad_dtype_are_refused(device):
    x = torch.randn(64, device=device)
    with pytest.raises(ValueError, match=r"^y\.shape must equal x\.shape \(64,\), got \(65,\)"):
        ew.vector_add(x, torch.randn(65, device=device))
    with pytest.raises(ValueError, match=r"^y\.dtype must equal x\.dtype"):
        ew.vector_add(x, x.half())
    with pytest.raises(ValueError, match=r"^out\.shape"):
        ew.fused_chain(x, 2, out=torch.empty(8, 8, device=device))
    with pytest.raises(ValueError, match=r"^x\.dtype must be one of .*got torch\.float64"):
        ew.vector_add(x.double(), x.double())
    with pytest.raises(ValueError, match=r"^x\.dtype must be one of .*got torch\.int32"):
        ew.fused_chain(torch.arange(5, dtype=torch.int32, device=device), 1)
    with pytest.raises(ValueError, match=r"^x must be a torch\.Tensor, got list"):
        ew.vector_add([1.0], x)


def test_wrong_device_is_refused():
    if HAS_CUDA:
        x, expected = torch.randn(8), r"^x must be on a CUDA device.*got device cpu"
    else:
        x, expected = torch.empty(8, device="meta"), r"^x must be on the CPU.*got device meta"
    with pytest.raises(ValueError, match=expected):
        ew.vector_add(x, x)
    with pytest.raises(ValueError, match=expected):
        ew.fused_chain(x, 1)


@pytest.mark.parametrize("k_ops", [0, -1, 1.5, True, "2", ew.MAX_K_OPS + 1, None])
def test_bad_k_ops_is_refused(k_ops, device):
    with pytest.raises(ValueError, match=r"^k_ops must be an integer"):
        ew.fused_chain(torch.randn(8, device=device), k_ops)


@pytest.mark.parametrize("name", ["scale", "shift"])
@pytest.mark.parametrize("value", [math.nan, math.inf, "1", None])
def test_bad_constants_are_refused(name, value, device):
    with pytest.raises(ValueError, match=rf"^{name} must be a finite real number"):
        ew.fused_chain(torch.randn(8, device=device), 2, **{name: value})


@cpu_only
def test_interpreter_refuses_bf16_it_would_round_wrongly():
    x = torch.randn(8).bfloat16()
    with pytest.raises(ValueError, match=r"^x\.dtype torch\.bfloat16 is not supported by the Triton interpreter"):
        ew.vector_add(x, x)
    with pytest.raises(ValueError, match=r"^x\.dtype torch\.bfloat16"):
        ew.fused_chain(x, 2)


# ----------------------------------------------------------------------------------------------------------
# The interpreter switch and the compiled path
# ----------------------------------------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]


def run_process(args: list[str], env_interpret: str | None) -> subprocess.CompletedProcess:
    """Run ``python *args`` in the repository with TRITON_INTERPRET set to ``env_interpret`` (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if env_interpret is not None:
        env["TRITON_INTERPRET"] = env_interpret
    return subprocess.run([sys.executable, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=120)


def run_python(code: str, env_interpret: str | None) -> str:
    done = run_process(["-c", code], env_interpret)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_kernels_package_switches_the_interpreter_before_kernels_are_defined():
    code = (
        "import os, sys, gpuperf\n"
        "assert 'gpuperf.kernels' not in sys.modules and 'torch' not in sys.modules\n"
        "import torch\n"
        "from gpuperf.kernels import elementwise as ew\n"
        "print(os.environ.get('TRITON_INTERPRET'))\n"
        "dev = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "x = torch.arange(1, 2000, dtype=torch.float32, device=dev)\n"
        "assert torch.equal(ew.vector_add(x, x), 2 * x)\n"
    )
    assert run_python(code, None) == ("None" if HAS_CUDA else "1")


def test_kernels_package_keeps_the_users_setting():
    code = "import os\nimport gpuperf.kernels as k\nprint(os.environ['TRITON_INTERPRET'], k.interpreter_enabled())"
    assert run_python(code, "0") == "0 False"
    assert run_python(code, "1") == "1 True"


def test_interpreter_switch_reads_the_variable_as_triton_does():
    """For spellings Triton accepts and ones it does not, interpreter_enabled() and INTERPRETED agree with the
    kind of kernel Triton actually built (one process: the kernel module is imported afresh under each value)."""
    code = (
        "import importlib, os, sys\n"
        "import gpuperf.kernels as k\n"
        "for value in ['1', 'true', 'ON', 'yes', ' 1', '0', '']:\n"
        "    os.environ['TRITON_INTERPRET'] = value\n"
        "    sys.modules.pop('gpuperf.kernels.elementwise', None)\n"
        "    ew = importlib.import_module('gpuperf.kernels.elementwise')\n"
        "    built = type(ew._add_kernel).__name__ == 'InterpretedFunction'\n"
        "    print(repr(value), built, k.interpreter_enabled(), ew.INTERPRETED)\n"
    )
    lines = run_python(code, "1").splitlines()
    assert len(lines) == 7
    for line in lines:
        value, built, enabled, recorded = line.rsplit(" ", 3)
        assert built == enabled == recorded, line
        if value in ("'1'", "'true'", "'ON'", "'0'", "''"):  # the same in every Triton version
            assert built == str(value in ("'1'", "'true'", "'ON'")), line


@cpu_only
def test_wrappers_follow_the_mode_the_kernels_were_defined_in(monkeypatch):
    """Turning the variable off after import must not make the wrappers demand CUDA tensors: the kernels
    were defined for the interpreter and stay so."""
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    x = torch.arange(1, 2000, dtype=torch.float32)
    assert torch.equal(ew.vector_add(x, x), 2 * x)
    assert ew.INTERPRETED


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
def test_compiled_path_on_gpu(dtype):
    """On a GPU the kernels are compiled (not interpreted) and load from global memory in PTX."""
    import triton

    assert not interpreter_enabled() and not ew.INTERPRETED
    n = 1 << 20
    x = torch.randn(n, device="cuda", dtype=dtype)
    out = poisoned(x)
    grid = (triton.cdiv(n, ew.BLOCK_SIZE),)
    compiled = ew._add_kernel[grid](x, x, out, n, BLOCK_SIZE=ew.BLOCK_SIZE)
    assert "ptx" in compiled.asm and "ld.global" in compiled.asm["ptx"]
    assert torch.equal(out, x + x)
    # n not a multiple of 16: the full blocks still load and store 16 bytes at a time (unmasked path)
    odd = n - 3
    compiled = ew._add_kernel[grid](x, x, out, odd, BLOCK_SIZE=ew.BLOCK_SIZE)
    assert "ld.global.v4" in compiled.asm["ptx"] and "st.global.v4" in compiled.asm["ptx"]
    compiled = ew._chain_kernel[grid](x, out, n, ew.CHAIN_SCALE, ew.CHAIN_SHIFT, K_OPS=4, BLOCK_SIZE=ew.BLOCK_SIZE)
    assert "st.global" in compiled.asm["ptx"]


@pytest.mark.slow
@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
def test_offsets_past_2_31_elements_on_gpu():
    """Past 2**31 elements a 32-bit offset (program_id * BLOCK_SIZE) wraps around; the kernels use 64-bit ones.
    Three fp16 tensors of 2**31 + 1500 elements (4.3 GB each); the tail is checked against the closed form."""
    n = 2**31 + 1500
    if torch.cuda.mem_get_info()[0] < 3 * 2 * n + 2**30:
        pytest.skip("needs about 14 GB of free GPU memory")
    tail = 4096
    x = torch.zeros(n, dtype=torch.float16, device="cuda")
    x[-tail:] = torch.arange(tail, device="cuda", dtype=torch.float16) / 8  # exact in fp16 (< 2048 / 4)
    out = poisoned(x)
    ew.vector_add(x, torch.ones_like(x), out=out)
    assert not torch.isnan(out).any(), "vector_add left elements unwritten past 2**31"
    assert torch.equal(out[-tail:], x[-tail:] + 1) and bool((out[:4096] == 1).all())
    out.fill_(float("nan"))
    ew.fused_chain(x, 2, out=out)
    assert not torch.isnan(out).any(), "fused_chain left elements unwritten past 2**31"
    expected = (x[-tail:].double() * ew.CHAIN_SCALE + ew.CHAIN_SHIFT).half()  # both ops exact in fp32
    assert torch.equal(out[-tail:], expected)


# ----------------------------------------------------------------------------------------------------------
# Benchmark bookkeeping (pure) and the benchmark itself (GPU)
# ----------------------------------------------------------------------------------------------------------


def test_bytes_and_flop_counts_follow_the_closed_forms():
    n, b, k = 1_000_003, 2, 7
    assert eb.bytes_moved("copy", n, b) == 2 * n * b
    assert eb.bytes_moved("torch_add", n, b) == eb.bytes_moved("triton_add", n, b) == 3 * n * b
    assert eb.bytes_moved("triton_chain_fused", n, b, k) == 2 * n * b
    assert eb.bytes_moved("torch_chain_unfused", n, b, k) == 2 * k * n * b
    assert eb.flop_count("copy", n) == 0
    assert eb.flop_count("triton_add", n) == n
    assert eb.flop_count("triton_chain_fused", n, k) == eb.flop_count("torch_chain_unfused", n, k) == k * n


def test_dtype_tables_follow_the_formats():
    assert eb.ELEMENT_BYTES == {name: torch.empty(0, dtype=d).element_size() for d, name in ew.DTYPE_NAMES.items()}
    assert eb.UNIT_ROUNDOFF == {name: U[d] for d, name in ew.DTYPE_NAMES.items()}


@pytest.mark.parametrize("k", [1, 2, 7])
@pytest.mark.parametrize("fused", [True, False])
def test_chain_counts_agree_with_the_roofline_model(k, fused):
    from gpuperf import roofline as rl

    n, kernel = 1_000_003, "triton_chain_fused" if fused else "torch_chain_unfused"
    model = rl.elementwise_chain(n, k, "fp16", fused=fused)
    assert eb.bytes_moved(kernel, n, 2, k) == model.bytes_moved
    assert eb.flop_count(kernel, n, k) == model.flop


def test_make_row_and_ratio_to_copy():
    n = 3 * 2**20
    rows = [eb.make_row("copy", "fp32", n, 1, 2.0e-3), eb.make_row("torch_chain_unfused", "fp32", n, 4, 9.0e-3),
            eb.make_row("triton_chain_fused", "fp32", n, 4, 2.5e-3)]
    assert tuple(rows[0]) == eb.ROW_KEYS
    assert rows[0]["bytes_per_s"] == pytest.approx(2 * n * 4 / 2.0e-3, rel=1e-15)
    assert rows[1]["flop_per_s"] == pytest.approx(4 * n / 9.0e-3, rel=1e-15)
    ratios = [r["ratio_to_copy"] for r in eb.with_ratio_to_copy(rows)]
    assert ratios == pytest.approx([1.0, (2 * 4 * n * 4 / 9.0e-3) / (2 * n * 4 / 2.0e-3), 2.0e-3 / 2.5e-3])
    with pytest.raises(ValueError, match=r"rows has no 'copy' row for dtype 'fp32'"):
        eb.with_ratio_to_copy(rows[1:])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: eb.bytes_moved("memset", 10, 4), r"^kernel must be one of"),
        (lambda: eb.bytes_moved("copy", 0, 4), r"^n_elements must be a positive integer, got 0"),
        (lambda: eb.bytes_moved("copy", 10, 2.5), r"^element_bytes must be a positive integer"),
        (lambda: eb.flop_count("triton_chain_fused", 10, 0), r"^k_ops must be a positive integer, got 0"),
        (lambda: eb.make_row("copy", "fp64", 10, 1, 1.0), r"^dtype must be one of"),
        (lambda: eb.make_row("copy", "fp32", 10, 2, 1.0), r"^k_ops must be 1 for kernel 'copy'"),
        (lambda: eb.make_row("copy", "fp32", 10, 1, 0.0), r"^time_s must be a finite positive"),
        (lambda: eb.make_row("copy", "fp32", 10, 1, math.nan), r"^time_s must be a finite positive"),
        (lambda: eb.run_elementwise_benchmark(n_elements=0), r"^n_elements must be a positive integer"),
        (lambda: eb.run_elementwise_benchmark(dtypes=("fp8",)), r"^dtypes must be one of"),
        (lambda: eb.run_elementwise_benchmark(k_values=(0,)), r"^k_values must be a positive integer"),
        (lambda: eb.run_elementwise_benchmark(k_values=(10**6,)), r"^k_values must be at most"),
        (lambda: eb.run_elementwise_benchmark(kernels=("cublas",)), r"^kernel must be one of"),
        (lambda: eb.run_elementwise_benchmark(warmup_ms=0), r"^warmup_ms must be a finite number"),
        (lambda: eb.run_elementwise_benchmark(rep_ms=math.nan), r"^rep_ms must be a finite number"),
        (lambda: eb.run_elementwise_benchmark(rep_ms=True), r"^rep_ms must be a finite number"),
    ],
)
def test_benchmark_bookkeeping_refuses_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@cpu_only
def test_benchmark_needs_a_gpu():
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        eb.run_elementwise_benchmark(n_elements=1000, progress=False)


@cpu_only
def test_bench_script_fails_clearly_without_a_gpu(tmp_path):
    done = run_process(["bench/run.py", "elementwise", "--out-dir", str(tmp_path)], None)
    assert done.returncode == 2 and "needs a CUDA GPU" in done.stderr, done.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
def test_benchmark_refuses_interpreted_kernels_on_gpu(tmp_path):
    done = run_process(["bench/run.py", "elementwise", "--out-dir", str(tmp_path)], "1")
    assert done.returncode == 2 and "TRITON_INTERPRET is on" in done.stderr, done.stderr
    code = ("import gpuperf.benchmark.family.elementwise as eb\n"
            "try:\n    eb.run_elementwise_benchmark(n_elements=1000, progress=False)\n"
            "except RuntimeError as e:\n    print(e)\n")
    assert "TRITON_INTERPRET was on" in run_python(code, "1")


def test_elementwise_family_is_registered_with_the_harness():
    from gpuperf import benchmark

    assert "elementwise" in benchmark.families()
    assert callable(benchmark.load_family("elementwise").cases)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")
def test_small_benchmark_run_on_gpu():
    n = (1 << 20) + 3
    rows = eb.run_elementwise_benchmark(n_elements=n, dtypes=("fp16", "bf16"), k_values=(1, 3),
                                        progress=False, warmup_ms=2, rep_ms=5, check_elements=1000)
    assert len(rows) == 2 * (3 + 2 * 2)
    for r in rows:
        assert tuple(r) == eb.ROW_KEYS and r["n_elements"] == n
        assert r["bytes_per_s"] == pytest.approx(r["bytes_moved"] / r["time_s"])
    kinds = [(r["kernel"], r["k_ops"]) for r in rows[:7]]
    assert kinds == [("copy", 1), ("torch_add", 1), ("triton_add", 1), ("torch_chain_unfused", 1),
                     ("triton_chain_fused", 1), ("torch_chain_unfused", 3), ("triton_chain_fused", 3)]
