"""The graders of the labs (gpuperf.grading): the course's solutions pass, plausible wrong solutions and
cheats are rejected with a message that says what is wrong (and never shows the solution)."""

from __future__ import annotations

import math

import pytest

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before the kernels below are defined)
import torch
import triton
import triton.language as tl

from gpuperf import grading

SEEDS = (0, 1, 12345)


def _report(key, fn, seed=7):
    return grading.grade_report(key, fn, seed=seed)


#: Kernels run compiled (a GPU): out-of-bounds accesses are not bound-checked one by one as under the
#: interpreter; a stray store lands in the guard band around the buffer, a stray load reads the band's NaN.
ON_GPU = torch.cuda.is_available() and not gpuperf.kernels.interpreter_enabled()
#: What the interpreter's report says -> what a compiled run's report says for the same mistake.
GPU_WORDING = {
    "wrote past the end of": ("past the end",),
    "past the end of": ("past the end",),
    "read past the end of": ("NaN comes from memory", "is NaN", "first wrong element"),
    "loaded": ("NaN comes from memory", "launched with a block"),
}


def _says(text, needle):
    if ON_GPU and needle in GPU_WORDING:
        return any(alt in text for alt in GPU_WORDING[needle])
    return needle in text


def _interpreter_only(what):
    """Skip on a GPU a check that only the interpreter can make (it sees every load and its offsets)."""
    if ON_GPU:
        pytest.skip(f"{what}: checked through the Triton interpreter only (the CPU run of this test)")


def _assert_rejected(key, fn, *needles, seed=7, only=None, every_case=False):
    """Grade a wrong ``fn``; by default only up to its first failing case (the tests stay fast)."""
    report = grading.grade_report(key, fn, seed=seed, only=only, stop_at_first_failure=not every_case)
    text = report.text()
    print(text)
    assert not report.passed, f"{key}: a wrong solution passed:\n{text}"
    assert text.startswith("NOT YET")
    for needle in needles:
        assert _says(text, needle), f"{key}: the report does not say {needle!r}:\n{text}"
    # never the solution: no kernel code in the report
    for code in ("tl.", "def ", "program_id"):
        assert code not in text, f"{key}: the report shows code ({code!r}):\n{text}"
    return report


def _learner_copy(name):
    """The course's lab module ``name`` compiled anew from its text under a file name of the tests: a learner
    who pasted the printed solution into a cell (its kernels are the learner's own to the grader, which
    allows the course's kernels only inside the exercise's solution itself)."""
    import linecache
    import sys
    from pathlib import Path

    module_name = f"learner_copy_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    text = (Path(grading.__file__).parents[1] / "kernels" / "labs" / f"{name}.py").read_text()
    filename = str(Path(__file__).with_name(f"<{module_name}>.py"))
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)  # for Triton's getsource
    module = type(sys)(module_name)
    module.__file__ = filename
    sys.modules[module_name] = module  # Triton's interpreter looks a kernel's module up by name
    exec(compile(text, filename, "exec"), module.__dict__)
    return module


# --------------------------------------------------------------------------------------------------------
# The machinery.
# --------------------------------------------------------------------------------------------------------


#: Exercises whose grader runs long under the interpreter: one seed each here (the labs run them again).
_HEAVY = ("L3.online", "L4.matmul", "L5.tiled", "L5.forward", "L5.causal", "L6.backward", "L6.autograd")
_SOLUTION_RUNS = [(key, seed) for key in sorted(grading.EXERCISES)
                  for seed in ((sum(map(ord, key)) % 1000,) if key in _HEAVY else SEEDS)]


@pytest.mark.parametrize("key,seed", _SOLUTION_RUNS)
def test_the_course_solutions_pass(key, seed):
    report = grading.grade_report(key, grading.solution(key), seed=seed)
    assert report.passed, report.text()
    assert report.text().startswith("PASSED")


#: The exercises whose solution is one of the course's lab modules (gpuperf.kernels.labs.l2 to l6).
_LAB_MODULE_EXERCISES = sorted(key for key, ex in grading.EXERCISES.items()
                               if ex.solution.startswith("gpuperf.kernels.labs."))


@pytest.mark.parametrize("key", _LAB_MODULE_EXERCISES)
def test_the_course_solutions_pass_as_a_learners_own_code(key):
    """Round 8's ah02: the course's L4 matmul pasted into the lab's cell was refused (its GROUP_M taken for a
    stride), while graded as the course's module it passed. Each solution, compiled anew from its text under
    a file name of the tests, is the learner's code to the grader: it must pass too (one case each, to stay
    cheap: the checks of a kernel's code, such as the 32-bit offsets, fail every case)."""
    module, _, name = grading.EXERCISES[key].solution.partition(":")
    fn = getattr(_learner_copy(module.rsplit(".", 1)[1]), name)
    first: list = []

    def one_case(label):
        first.append(label) if not first else None
        return label == first[0]

    assert not grading._is_solution(grading.EXERCISES[key], fn)  # the learner's, not the course's
    report = grading.grade_report(key, fn, seed=sum(map(ord, key)) % 1000, only=one_case)
    assert report.passed, report.text()


def test_compare_names_the_first_wrong_index_and_the_largest_error():
    expected = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4) + 1.0
    yours = expected.clone().float()
    yours[1, 0, 2] += 0.5
    yours[1, 2, 3] += 3.0
    tol = grading.Tolerance(0.0, 1e-6, "test")
    r = grading.compare("case", "y", yours, expected, tol)
    assert not r.passed
    assert r.first_wrong_index == (1, 0, 2)
    assert r.yours == pytest.approx(expected[1, 0, 2].item() + 0.5)
    assert r.expected == expected[1, 0, 2].item()
    assert r.max_abs_error == pytest.approx(3.0)
    assert r.n_wrong == 2 and r.n_elements == 24


def test_compare_rejects_nan_wrong_shapes_and_non_tensors():
    expected = torch.ones(5, dtype=torch.float64)
    tol = grading.Tolerance(1e-3, 1e-3, "test")
    yours = torch.ones(5)
    yours[3] = float("nan")
    r = grading.compare("c", "y", yours, expected, tol)
    assert not r.passed and r.first_wrong_index == (3,) and "NaN" in r.message
    assert not grading.compare("c", "y", torch.ones(4), expected, tol).passed
    assert "shape" in grading.compare("c", "y", torch.ones(4), expected, tol).message
    assert "torch.Tensor" in grading.compare("c", "y", [1.0] * 5, expected, tol).message
    assert grading.compare("c", "y", torch.ones(5) * (1 + 5e-4), expected, tol).passed


def test_compare_says_when_every_wrong_element_is_off_by_one_factor():
    expected = torch.rand(100, dtype=torch.float64) + 0.5
    r = grading.compare("c", "y", (expected * 1.25).float(), expected, grading.Tolerance(0, 1e-6, "t"))
    assert "same factor" in r.message and "1.25" in r.message


def test_tolerances_follow_the_formats():
    u32, u16 = 2.0**-24, 2.0**-11
    assert grading.elementwise_tolerance("fp32", 1).rtol == pytest.approx(4 * u32)
    assert grading.elementwise_tolerance(torch.float16, 1).rtol == pytest.approx(2 * u16 + 2 * u32)
    assert grading.reduction_tolerance("fp32", 1000).rtol == pytest.approx(4 * u32 + 1008 * u32)
    mm = grading.matmul_tolerance("fp32", 512)
    assert mm.rtol == pytest.approx(2 * u32 + 2 * 514 * u32)
    assert mm.rtol < 2.0**-11, "TF32 products must fail the fp32 matmul tolerance"
    assert "TF32" in mm.reason and "|A| |B|" in mm.describe()
    assert "bf16" in grading.normwise_tolerance("bf16", 100).reason
    for bad in (("fp8", 1), ("fp32", 0), ("fp32", 1.5), ("fp32", True)):
        with pytest.raises(ValueError):
            grading.elementwise_tolerance(*bad)
    with pytest.raises(ValueError, match="n_terms"):
        grading.reduction_tolerance("fp16", -1)
    with pytest.raises(ValueError, match="k must"):
        grading.matmul_tolerance("fp16", 0)


def test_bad_arguments_raise_value_errors_naming_them():
    with pytest.raises(ValueError, match="exercise"):
        grading.grade_report("L9.nothing", lambda: None)
    with pytest.raises(ValueError, match="fn must be callable"):
        grading.grade_report("L2.add", 3)
    with pytest.raises(ValueError, match="seed"):
        grading.grade_report("L2.add", lambda *a: None, seed=-1)
    with pytest.raises(ValueError, match="device"):
        grading.grade_report("L2.add", lambda *a: None, device="tpu")
    with pytest.raises(ValueError, match="dtype"):
        grading.dtype_name("int8")


def test_the_seed_draws_the_inputs():
    seen = []

    def spy(x, y, out):
        seen.append(x.to("cpu", copy=True))  # (tolist is refused: data taken out of torch)
        _add_masked[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)
        return out

    grading.grade_report("L2.add", spy, seed=3)
    grading.grade_report("L2.add", spy, seed=3)
    half = len(seen) // 2
    assert all(torch.equal(a, b) for a, b in zip(seen[:half], seen[half:]))
    grading.grade_report("L2.add", spy, seed=4)
    assert not torch.equal(seen[-1], seen[half - 1])


def test_grade_returns_the_readers_function_once_it_passes(capsys, monkeypatch):
    monkeypatch.delenv(grading.SOLUTIONS_ENV_VAR, raising=False)
    def mine(x, y, out):
        _add_masked[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)
        return out

    assert grading.grade("L2.add", mine) is mine
    assert capsys.readouterr().out.startswith("PASSED")


def test_an_unfinished_exercise_is_reported_not_raised(capsys, monkeypatch):
    monkeypatch.delenv(grading.SOLUTIONS_ENV_VAR, raising=False)

    def stub(x, y, out):
        raise NotImplementedError

    used = grading.grade("L2.add", stub)
    out = capsys.readouterr().out
    assert "not written yet" in out and "course's solution" in out
    assert used is grading.solution("L2.add")
    assert grading.grade("L2.add", None) is grading.solution("L2.add")
    assert "nothing to grade" in capsys.readouterr().out
    # a later exercise handed the stand-in solution says so instead of blaming the reader
    assert grading.grade("L5.causal", grading.solution("L5.forward")) is grading.solution("L5.causal")
    assert "standing in" in capsys.readouterr().out


def test_solutions_mode_grades_the_course_solution_and_raises_if_it_fails(capsys, monkeypatch):
    monkeypatch.setenv(grading.SOLUTIONS_ENV_VAR, "1")
    assert grading.solutions_requested()

    def stub(*args):
        raise NotImplementedError

    # the switch is read when the grader is imported: set in a cell later, it grades the reader's stub
    if grading.SOLUTIONS_MODE:
        pytest.skip("this process was started in solutions mode")
    assert grading.grade("L2.add", stub) is grading.solution("L2.add")
    assert capsys.readouterr().out.startswith("NOT YET L2.add (yours)")
    # solutions mode (make lab): the course's solution, reported as such, never as PASSED
    assert grading._grade_solution("L3.softmax") is grading.solution("L3.softmax")
    out = capsys.readouterr().out
    assert out.startswith(grading.SOLUTION_PASSED + " L3.softmax (the course's solution, not yours")
    assert not out.startswith("PASSED")
    broken = grading.Exercise("L2.add", "t", "gpuperf.kernels.labs.l2:chain", grading.EXERCISES["L2.add"].cases)
    monkeypatch.setitem(grading.EXERCISES, "L2.add", broken)
    with pytest.raises(AssertionError, match="fails its grader"):
        grading._grade_solution("L2.add")
    monkeypatch.setenv(grading.SOLUTIONS_ENV_VAR, "0")
    assert not grading.solutions_requested()


# --------------------------------------------------------------------------------------------------------
# L1: plain arithmetic.
# --------------------------------------------------------------------------------------------------------


def test_l1_time_rejects_wrong_formulas():
    _assert_rejected("L1.time", lambda f, b, p, w: f / p + b / w, "yours", "expected")  # no overlap
    _assert_rejected("L1.time", lambda f, b, p, w: min(f / p, b / w))  # the faster roof
    _assert_rejected("L1.time", lambda f, b, p, w: max(f / w, b / p))  # units swapped
    _assert_rejected("L1.time", lambda f, b, p, w: "fast", "expected a number")


def test_l1_bytes_rejects_wrong_counts():
    _assert_rejected("L1.matmul_bytes", lambda m, n, k, b: (m * k + k * n) * b, "yours / expected")  # no C
    _assert_rejected("L1.matmul_bytes", lambda m, n, k, b: (m * k + k * n + 2 * m * n) * b)  # C read too
    _assert_rejected("L1.matmul_bytes", lambda m, n, k, b: 2 * m * n * k * b)  # the FLOP count


# --------------------------------------------------------------------------------------------------------
# L2: vector add and fused chain.
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _add_no_mask(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))


@triton.jit
def _add_no_pid(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)  # every program does block 0
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _add_masked(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def test_l2_add_rejects_a_missing_tail_mask():
    def fn(x, y, out):
        _add_no_mask[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)
        return out

    _assert_rejected("L2.add", fn, "past the end of")


def test_l2_add_rejects_a_kernel_without_the_program_id():
    def fn(x, y, out):
        _add_no_pid[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64)
        return out

    # every program stores to the first block: a race between programs (under the interpreter)
    _assert_rejected("L2.add", fn, *(("first wrong element at index [64]", "NaN") if ON_GPU else
                                     ("a race in your kernel", "program 0 and program 1")))


def test_l2_add_rejects_a_grid_that_drops_the_tail():
    def fn(x, y, out):
        _add_masked[(max(1, x.numel() // 64),)](x, y, out, x.numel(), BLOCK=64)  # floor, not ceil
        return out

    _assert_rejected("L2.add", fn, "first wrong element", "yours nan")


def test_l2_add_rejects_a_new_tensor_instead_of_out():
    def fn(x, y, out):
        fresh = torch.empty_like(x)
        _add_masked[(triton.cdiv(x.numel(), 64),)](x, y, fresh, x.numel(), BLOCK=64)
        return fresh

    _assert_rejected("L2.add", fn, "must write into `out`")


def test_l2_add_rejects_cheats():
    _assert_rejected("L2.add", lambda x, y, out: out.copy_(x + y), "ran torch's operator aten.add", "Triton kernel")
    _assert_rejected("L2.add", lambda x, y, out: torch.add(x, y, out=out), "aten.add")
    from gpuperf.kernels.elementwise import vector_add

    _assert_rejected("L2.add", lambda x, y, out: vector_add(x, y, out), "course's own kernel")


@triton.jit
def _chain_wrong(x_ptr, out_ptr, n, scale, shift, K_OPS: tl.constexpr, BLOCK: tl.constexpr, MODE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    for j in tl.static_range(K_OPS - 1 if MODE == 0 else K_OPS):  # MODE 0: one op short
        if (j % 2 == 0) == (MODE != 1):  # MODE 1: shift first
            y = y * scale
        else:
            y = y + shift if MODE != 2 else y  # MODE 2: never shifts
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_l2_chain_rejects_wrong_chains(mode):
    def fn(x, k_ops, scale, shift):
        out = torch.empty_like(x)
        _chain_wrong[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), scale, shift, K_OPS=k_ops, BLOCK=128,
                                                      MODE=mode)
        return out

    _assert_rejected("L2.chain", fn, "first wrong element", "tolerance")


def test_l2_chain_rejects_a_torch_loop():
    def fn(x, k_ops, scale, shift):
        y = x.float()
        for j in range(k_ops):
            y = y * scale if j % 2 == 0 else y + shift
        return y.to(x.dtype)

    _assert_rejected("L2.chain", fn, "ran torch's operator")


# --------------------------------------------------------------------------------------------------------
# L3: softmax.
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _softmax_wrong(x_ptr, y_ptr, n_cols, sx, sy, BLOCK: tl.constexpr, MODE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    if MODE == 0:  # padding lanes read 0, not -inf
        x = tl.load(x_ptr + row * sx + cols, mask=mask, other=0.0).to(tl.float32)
    elif MODE == 1:  # rows assumed adjacent: n_cols instead of the row stride
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf")).to(tl.float32)
    else:
        x = tl.load(x_ptr + row * sx + cols, mask=mask, other=float("-inf")).to(tl.float32)
    if MODE != 2:  # MODE 2: the max is not subtracted
        x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * sy + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("mode,needle", [(0, "first wrong element"), (1, "first wrong element"), (2, "NaN")])
def test_l3_softmax_rejects_wrong_kernels(mode, needle):
    def fn(x):
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        _softmax_wrong[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0),
                                      BLOCK=triton.next_power_of_2(x.shape[1]), MODE=mode)
        return y

    _assert_rejected("L3.softmax", fn, needle)


def test_l3_softmax_reports_a_kernel_that_does_not_compile():
    def fn(x):  # a block that is not a power of two
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        _softmax_wrong[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0), BLOCK=x.shape[1] + 3, MODE=3)
        return y

    # Triton's front end refuses it before the interpreter runs it (on a GPU, the compiler itself)
    _assert_rejected("L3.softmax", fn, "does not compile with Triton")


def test_l3_softmax_rejects_cheats():
    _assert_rejected("L3.softmax", lambda x: torch.softmax(x.float(), -1).to(x.dtype), "aten._softmax")
    _assert_rejected("L3.softmax", lambda x: x.float().softmax(-1).to(x.dtype), "ran torch's operator")
    _assert_rejected("L3.softmax", lambda x: (x.float() - x.float().amax(-1, keepdim=True)).exp(), "aten.amax")
    from gpuperf.kernels.softmax import softmax

    _assert_rejected("L3.softmax", lambda x: softmax(x.contiguous()), "course's own kernel")


@triton.jit
def _online_wrong(x_ptr, y_ptr, n_cols, sx, sy, BLOCK: tl.constexpr, MODE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * sx
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    l = tl.sum(tl.exp(x - m), axis=0)
    for start in range(BLOCK, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        if MODE == 0:  # the running sum is not rescaled when the max grows
            l = l + tl.sum(tl.exp(x - m_new), axis=0)
        else:
            l = l * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        if MODE == 1:  # pass 2 normalises each block by its own max
            y = tl.exp(x - tl.max(x, axis=0)) / l
        elif MODE == 2:  # the last, partial block is not written
            y = tl.exp(x - m) / l
            mask = start + cols < (n_cols // BLOCK) * BLOCK
        else:
            y = tl.exp(x - m) / l
        tl.store(y_ptr + row * sy + start + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("mode,needle", [(0, "first wrong element"), (1, "first wrong element"),
                                         (2, "wrote nothing")])  # mode 2 stores nothing for a row of 1
def test_l3_online_rejects_wrong_kernels(mode, needle):
    def fn(x, block=1024):
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        _online_wrong[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0), BLOCK=block, MODE=mode)
        return y

    _assert_rejected("L3.online", fn, needle)


def test_l3_softmax_rejects_a_cheat_through_numpy():
    import numpy as np

    def via_numpy(x):
        a = x.float().cpu().numpy()
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        return torch.from_numpy(e / e.sum(axis=-1, keepdims=True)).to(x.dtype).to(x.device)

    def via_asarray(x):
        a = np.asarray(x.float().cpu()).astype(np.float64)
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        return torch.tensor(e / e.sum(axis=-1, keepdims=True), dtype=x.dtype, device=x.device)

    _assert_rejected("L3.softmax", via_numpy, "took data out of torch ('numpy')")
    _assert_rejected("L3.softmax", via_asarray, "took data out of torch")


def test_l3_online_rejects_cheats():
    _assert_rejected("L3.online", lambda x, block: torch.nn.functional.softmax(x, dim=-1), "aten._softmax")
    _assert_rejected("L3.online", lambda x, block: torch.exp(x.float() - torch.logsumexp(x.float(), -1,
                                                                                           keepdim=True)),
                     "ran torch's operator")


# --------------------------------------------------------------------------------------------------------
# L4: matmul.
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _matmul_wrong(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr, MODE: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        if MODE == 0:  # no mask along K: the last K block reads past the row
            a = tl.load(a_ptr + rows[:, None] * sam + (k0 + ks)[None, :] * sak, mask=rows[:, None] < M, other=0.0)
        elif MODE == 1:  # rows of A assumed K apart (contiguous), not stride_am
            a = tl.load(a_ptr + rows[:, None] * K + (k0 + ks)[None, :] * sak,
                        mask=(rows[:, None] < M) & ((k0 + ks)[None, :] < K), other=0.0)
        else:
            a = tl.load(a_ptr + rows[:, None] * sam + (k0 + ks)[None, :] * sak,
                        mask=(rows[:, None] < M) & ((k0 + ks)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * sbk + cols[None, :] * sbn,
                    mask=((k0 + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        if MODE == 2:  # fp32 products at TF32 precision (10-bit significands), emulated by truncation
            a = (a.to(tl.int32, bitcast=True) & -8192).to(tl.float32, bitcast=True)
            b = (b.to(tl.int32, bitcast=True) & -8192).to(tl.float32, bitcast=True)
            acc = tl.dot(a, b, acc, input_precision="ieee")
        elif MODE == 3:  # the plain tl.dot the reader is most likely to write: TF32 for fp32 inputs
            acc = tl.dot(a, b, acc)
        else:
            acc = tl.dot(a, b, acc, input_precision="ieee" if a.dtype == tl.float32 else "tf32")
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@pytest.mark.parametrize("mode,needle", [(0, "read past the end of"), (1, "read past the end of"),
                                         (2, "TF32"), (3, "TF32")])  # 1: A transposed is read as rows
def test_l4_matmul_rejects_wrong_kernels(mode, needle):
    if mode == 3 and torch.cuda.is_available() and torch.cuda.get_device_capability()[0] < 8:
        pytest.skip("no TF32 before sm_80: Triton's fp32 dot is exact fp32 there")

    def fn(a, b):
        if mode == 2 and a.dtype != torch.float32:
            a, b = a.float(), b.float()
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), dtype=a.dtype, device=a.device)
        _matmul_wrong[(triton.cdiv(M, 32), triton.cdiv(N, 32))](
            a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BM=32, BN=32, BK=32, MODE=mode)
        return c

    report = _assert_rejected("L4.matmul", fn, needle)
    if mode in (2, 3):
        bad = report.failures[0]
        assert "fp32" in bad.case and bad.tolerance is not None and "TF32" in bad.tolerance.reason


@triton.jit
def _dot_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr, IEEE: tl.constexpr):
    idx = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    a, b = tl.load(a_ptr + idx), tl.load(b_ptr + idx)
    c = tl.dot(a, b, input_precision="ieee") if IEEE else tl.dot(a, b)
    tl.store(c_ptr + idx, c)


@pytest.mark.skipif(not gpuperf.kernels.interpreter_enabled(), reason="the interpreter's dot")
def test_the_interpreters_dot_rounds_to_tf32_while_grading_as_a_gpu_would():
    """The interpreter ignores input_precision; the grader makes a TF32 dot round its fp32 operands to 10
    significand bits (2^-11), so a forgotten input_precision="ieee" fails on a CPU as on an A100 or H200."""
    a = torch.randn(16, 16) + 1 / 3
    b = torch.randn(16, 16) - 1 / 7
    exact = a.double() @ b.double()
    scale = a.double().abs() @ b.double().abs()

    def err(ieee, active):
        c = torch.empty(16, 16)
        with grading.interpreter_dot_as_on_gpu(active):
            _dot_kernel[(1,)](a, b, c, N=16, IEEE=ieee)
        return float(((c.double() - exact).abs() / scale).max())

    assert err(ieee=False, active=False) < 16 * 2.0**-24  # the interpreter alone: fp32
    assert err(ieee=True, active=True) < 16 * 2.0**-24  # "ieee" is left alone
    assert 2.0**-14 < err(ieee=False, active=True) < 2 * 2.0**-11  # TF32: about 2^-11
    assert err(ieee=False, active=False) < 16 * 2.0**-24  # and the interpreter is restored after


def test_l4_matmul_rejects_cheats():
    _assert_rejected("L4.matmul", lambda a, b: a @ b, "aten.mm")
    _assert_rejected("L4.matmul", lambda a, b: torch.mm(a, b), "aten.mm")
    _assert_rejected("L4.matmul", lambda a, b: torch.einsum("mk,kn->mn", a, b), "ran torch's operator")
    _assert_rejected("L4.matmul", lambda a, b: (a.float()[:, :, None] * b.float()[None]).sum(1).to(a.dtype),
                     "aten.mul")  # a product by broadcasting
    from gpuperf.kernels.matmul import matmul

    _assert_rejected("L4.matmul", lambda a, b: matmul(a.contiguous(), b, input_precision="ieee"),
                     "course's own kernel")


def test_every_exercise_has_at_least_three_rejected_wrong_solutions_here():
    """The issue's bar: for every exercise, >= 3 plausible wrong solutions (cheats included) are rejected by
    the tests of this file; a parametrized test counts once per parameter."""
    import inspect
    import re
    import sys

    counts = dict.fromkeys(grading.EXERCISES, 0)
    for name, fn in vars(sys.modules[__name__]).items():
        if not name.startswith("test_") or not callable(fn):
            continue
        n_params = 1
        for mark in getattr(fn, "pytestmark", []):
            if mark.name == "parametrize":
                n_params *= len(mark.args[1])
        for key in re.findall(r'_assert_rejected\(\s*"([^"]+)"', inspect.getsource(fn)):
            counts[key] += n_params
    short = {key: n for key, n in counts.items() if n < 3}
    assert not short, f"exercises with fewer than 3 rejected wrong solutions: {short}"


def test_l1_guard_is_plain_arithmetic():
    assert grading.EXERCISES["L1.time"].needs_torch is False
    assert math.isclose(grading.solution("L1.time")(1e12, 1e9, 1e15, 1e12), 1e-3)


# --------------------------------------------------------------------------------------------------------
# L5: FlashAttention forward.
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _fwd_wrong(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr, D: tl.constexpr,
               BM: tl.constexpr, BN: tl.constexpr, MODE: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    for start in range(0, N_K, BN):
        keys = start + tl.arange(0, BN)
        k = tl.load(k_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        if MODE == 5:  # the plain tl.dot: TF32 products for fp32 inputs on a GPU
            s = tl.dot(q, tl.trans(k))
        else:
            s = tl.dot(q, tl.trans(k), input_precision="ieee")
        if MODE != 1:  # MODE 1: the softmax scale is left out
            s = s * scale
        visible = keys[None, :] < N_K
        if MODE == 6:  # no tail mask on the scores: keys past N_K (loaded as 0) get weight exp(0 - m)
            visible = keys[None, :] >= 0
        if CAUSAL:
            if MODE == 2:  # off by one: query i also sees key i + 1
                visible = visible & (keys[None, :] <= rows[:, None] + 1)
            else:
                visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        if MODE == 0:  # the accumulated output is not rescaled when the max grows
            acc = acc + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        else:
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    lse = m + tl.log(l) if MODE != 3 else tl.log(l)  # MODE 3: the max left out of the log-sum-exp
    tl.store(lse_ptr + head * N_Q + rows, lse, mask=rows < N_Q)


def _fwd_wrong_fn(mode):
    def fn(q, k, v, causal=False):
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()  # heads may be interleaved
        b, h, n_q, d = q.shape
        o = torch.empty_like(q)
        lse = torch.empty((b, h, n_q), dtype=torch.float32, device=q.device)
        _fwd_wrong[(triton.cdiv(n_q, 32), b * h)](q, k, v, o, lse, n_q, k.shape[2], 1 / math.sqrt(d),
                                                  CAUSAL=causal, D=d, BM=32, BN=32, MODE=mode)
        return o, lse

    return fn


@pytest.mark.parametrize("mode,needle", [(0, "output o"), (1, "first wrong element"), (3, "output lse"),
                                         (5, "TF32"), (6, "first wrong element")])
def test_l5_forward_rejects_wrong_kernels(mode, needle):
    if mode == 5 and torch.cuda.is_available() and torch.cuda.get_device_capability()[0] < 8:
        pytest.skip("no TF32 before sm_80")
    report = _assert_rejected("L5.forward", _fwd_wrong_fn(mode), needle, every_case=mode == 5,
                              only=(lambda label: "q = 0" not in label) if mode == 5 else None)
    if mode == 5:  # only the fp32 cases fail: fp16 products are exact in fp32 whatever the precision
        assert all("fp32" in r.case for r in report.failures), report.text()


def test_l5_causal_rejects_an_off_by_one_mask_and_a_kernel_that_visits_every_block():
    _assert_rejected("L5.causal", _fwd_wrong_fn(2), "causal", "first wrong element")
    # MODE 4 makes no mistake in the values, but visits every key block: only block skipping fails
    _interpreter_only("block skipping (counted key blocks; a GPU only reports the causal/full time)")
    report = grading.grade_report("L5.causal", _fwd_wrong_fn(4), seed=3,
                                  only=lambda label: "blocks it visits" in label or "N_q=97" in label)
    assert [r.case for r in report.failures] and all("blocks it visits" in r.case for r in report.failures)


def test_l5_rejects_cheats():
    import torch.nn.functional as F

    def sdpa(q, k, v, causal=False):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return o, torch.zeros(q.shape[:3])

    _assert_rejected("L5.forward", sdpa, "ran torch's operator")
    _assert_rejected("L5.forward", lambda q, k, v, causal=False: (torch.softmax(q @ k.transpose(-1, -2), -1) @ v,
                                                                  None), "ran torch's operator")
    from gpuperf.kernels.flash_attention import flash_attention_forward

    _assert_rejected("L5.causal", lambda q, k, v, causal=False: flash_attention_forward(
        q.contiguous(), k.contiguous(), v.contiguous(), causal), "course's own kernel")


# --------------------------------------------------------------------------------------------------------
# L6: FlashAttention backward. The wrong kernels hold a whole head in one program, so these tests run under
# the interpreter only; their values fail first (one tile of a whole head is itself refused where N >= 256).
# --------------------------------------------------------------------------------------------------------


@triton.jit
def _bwd_wrong(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, do_ptr, dq_ptr, dk_ptr, dv_ptr, N_Q, N_K, scale,
               CAUSAL: tl.constexpr, D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, MODE: tl.constexpr):
    head = tl.program_id(0).to(tl.int64)
    rows = tl.arange(0, BQ)
    keys = tl.arange(0, BK)
    dims = tl.arange(0, D)
    q_off = head * N_Q * D + rows[:, None] * D + dims[None, :]
    k_off = head * N_K * D + keys[:, None] * D + dims[None, :]
    q = tl.load(q_ptr + q_off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    o = tl.load(o_ptr + q_off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + q_off, mask=rows[:, None] < N_Q, other=0.0).to(tl.float32)
    k = tl.load(k_ptr + k_off, mask=keys[:, None] < N_K, other=0.0).to(tl.float32)
    v = tl.load(v_ptr + k_off, mask=keys[:, None] < N_K, other=0.0).to(tl.float32)
    lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
    if MODE == 5:  # the plain tl.dot when recomputing S: TF32 products for fp32 inputs on a GPU
        s = tl.dot(q, tl.trans(k))
    else:
        s = tl.dot(q, tl.trans(k), input_precision="ieee")
    if MODE != 1:  # MODE 1: P recomputed without the softmax scale
        s = s * scale
    visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
    if CAUSAL and MODE == 6:  # off by one: the diagonal hidden (query i sees keys j < i only)
        visible = visible & (keys[None, :] < rows[:, None])
    elif CAUSAL and MODE != 3:  # MODE 3: the causal mask forgotten in the backward
        visible = visible & (keys[None, :] <= rows[:, None])
    p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
    dv = tl.dot(tl.trans(p), do, input_precision="ieee")
    dp = tl.dot(do, tl.trans(v), input_precision="ieee")
    delta = tl.sum(o * do, axis=1)
    ds = p * dp if MODE == 0 else p * (dp - delta[:, None])  # MODE 0: D_i not subtracted
    dq = tl.dot(ds, k, input_precision="ieee") * scale
    dk = tl.dot(tl.trans(ds), q, input_precision="ieee")
    if MODE != 2:  # MODE 2: dK without the softmax scale
        dk = dk * scale
    tl.store(dq_ptr + q_off, dq.to(dq_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
    tl.store(dk_ptr + k_off, dk.to(dk_ptr.dtype.element_ty), mask=keys[:, None] < N_K)
    tl.store(dv_ptr + k_off, dv.to(dv_ptr.dtype.element_ty), mask=keys[:, None] < N_K)


def _bwd_wrong_fn(mode):
    def fn(q, k, v, o, lse, do, causal=False):
        q, k, v, o, do = (t.contiguous() for t in (q, k, v, o, do))  # heads may be interleaved
        b, h, n_q, d = q.shape
        n_k = k.shape[2]
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        _bwd_wrong[(b * h,)](q, k, v, o, lse, do, dq, dk, dv, n_q, n_k, 1 / math.sqrt(d), CAUSAL=causal, D=d,
                             BQ=max(16, triton.next_power_of_2(n_q)), BK=max(16, triton.next_power_of_2(n_k)),
                             MODE=mode)
        return dq, dk, dv

    return fn


_cpu_only = pytest.mark.skipif(not gpuperf.kernels.interpreter_enabled(), reason="whole-head kernels: CPU cases")


@_cpu_only
@pytest.mark.parametrize("mode,needle", [(0, "output dq"), (1, "first wrong element"), (2, "output dk"),
                                         (3, "causal"), (5, "TF32"), (6, "causal")])
def test_l6_backward_rejects_wrong_kernels(mode, needle):
    _assert_rejected("L6.backward", _bwd_wrong_fn(mode), needle)


@_cpu_only
def test_l6_backward_rejects_the_whole_head_kernel_without_mistakes():
    # right values, but every query and every key in one tile: P and dS of N_q x N_k on chip (round 4, 51)
    _assert_rejected("L6.backward", _bwd_wrong_fn(4), "fewer than all of them")


def test_l6_rejects_cheats():
    import torch.nn.functional as F

    def autograd(q, k, v, o, lse, do, causal=False):
        qq, kk, vv = (t.detach().requires_grad_(True) for t in (q, k, v))
        F.scaled_dot_product_attention(qq, kk, vv, is_causal=causal).backward(do)
        return qq.grad, kk.grad, vv.grad

    _assert_rejected("L6.backward", autograd, "ran torch's operator")
    from gpuperf.kernels.flash_attention_bwd import flash_attention_backward

    _assert_rejected("L6.backward", lambda q, k, v, o, lse, do, causal=False: flash_attention_backward(
        q, k, v, o, lse, do, causal), "course's own kernel")
    _assert_rejected("L6.backward", lambda *a, **kw: (None, None, None), "expected a torch.Tensor")


def test_a_module_named_triton_gets_no_exemption():
    """The old denylist let any code whose module was named ``triton.*`` through; the watch exempts only
    Triton's own launches (by entry point), so code exec'd in such a module is refused like any other."""
    import types

    fake = types.ModuleType("triton._fake_statistics")
    exec("def summarise(t):\n    return t.tolist(), float(t.mean())\n", fake.__dict__)
    with grading.forbid(("mean",), "L4.matmul"):
        with pytest.raises(grading.ForbiddenCall, match="took data out of torch"):
            fake.summarise(torch.ones(3))
        with pytest.raises(grading.ForbiddenCall, match="'mean'"):
            torch.ones(3).mean()

    def add_in_triton_module(x, y, out):
        fake.out, fake.x, fake.y = out, x, y
        exec("out.copy_(x + y)", fake.__dict__)
        return out

    _assert_rejected("L2.add", add_in_triton_module, "aten.add")


# ========================================================================================================
# Issue 19: one wrong solution per hole class and exercise. Classes: (1) torch under other names and ways to
# switch the watch off, (2) the reference within reach, (3) inputs only the taught algorithm survives,
# (4) 16-bit accumulation, (5) out-of-bounds memory, (6) block skipping, output dtype, 64-bit offsets,
# TF32 without TF32 hardware, L1's case labels.
# ========================================================================================================


def _add_launch(x, y, out, kernel=None, block=64):
    (kernel or _add_masked)[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block)
    return out


# ---- (1) torch under other names, and switching the watch off ------------------------------------------


@pytest.mark.parametrize("cheat", ["subtract", "nansum", "addcdiv", "aten_add_out", "set_"])
def test_1_l2_add_rejects_torch_under_other_names(cheat):
    def fn(x, y, out):
        if cheat == "subtract":
            return torch.subtract(x, y, alpha=-1, out=out)
        if cheat == "nansum":
            return out.copy_(torch.nansum(torch.stack([x, y]), 0))
        if cheat == "addcdiv":
            return torch.addcdiv(x, y, torch.ones_like(y), out=out)
        if cheat == "aten_add_out":
            return torch.ops.aten.add.out(x, y, out=out)
        return out.set_(x)

    _assert_rejected("L2.add", fn, "ran torch's operator")


def test_1_l4_and_l5_reject_aliases_of_matmul_and_softmax():
    import torch.nn.functional as F

    _assert_rejected("L4.matmul", lambda a, b: torch.linalg.matmul(a, b), "aten.mm")
    _assert_rejected("L4.matmul", lambda a, b: torch.ops.aten.mm.default(a, b), "aten.mm")
    _assert_rejected("L3.softmax", lambda x: torch.special.softmax(x, -1), "aten._softmax")
    _assert_rejected("L3.softmax", lambda x: F.softmin(-x, -1), "ran torch's operator")

    def alias_attention(q, k, v, causal=False):
        s = torch.linalg.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        return torch.linalg.matmul(torch.special.softmax(s, -1), v), torch.special.logsumexp(s, -1)

    _assert_rejected("L5.forward", alias_attention, "ran torch's operator")

    def float64_backward(q, k, v, o, lse, do, causal=False):
        q64, k64 = q.double(), k.double()
        p = torch.expm1(torch.linalg.matmul(q64, k64.transpose(-1, -2)) - lse.double()[..., None]) + 1
        return torch.linalg.matmul(p, k64).to(q.dtype), k, v

    _assert_rejected("L6.backward", float64_backward, "ran torch's operator")


def test_1_l4_outer_rejects_broadcasting_and_torch_outer():
    _assert_rejected("L4.outer", lambda x, y: x[:, None] * y[None, :], "aten.mul")
    _assert_rejected("L4.outer", lambda x, y: torch.outer(x, y), "ran torch's operator")
    _assert_rejected("L4.outer", lambda x, y: torch.einsum("i,j->ij", x, y), "ran torch's operator")


@pytest.mark.parametrize("how", ["DisableTorchFunction", "pop_dispatch_mode", "disable_current_modes",
                                 "DisableTorchDispatch", "swallow"])
def test_1_switching_the_watch_off_is_refused(how):
    import torch.utils._python_dispatch as pd

    def fn(x, y, out):
        if how == "DisableTorchFunction":
            with torch._C.DisableTorchFunction():
                a = x.numpy()
            return out.copy_(torch.from_numpy(a + y.numpy()))
        if how == "pop_dispatch_mode":
            mode = torch._C._pop_torch_dispatch_mode()
            out.copy_(x + y)
            torch._C._push_on_torch_dispatch_stack(mode)
            return out
        if how == "disable_current_modes":
            with pd._disable_current_modes():
                return out.copy_(x + y)
        if how == "DisableTorchDispatch":
            with torch._C._DisableTorchDispatch():
                return out.copy_(x + y)
        try:  # "swallow": the refusal caught and ignored
            out.copy_(x + y)
        except Exception:
            pass
        return out

    _assert_rejected("L2.add", fn, "NOT YET")


def test_1_a_disabling_guard_left_entered_is_seen_after_the_call():
    captured = torch._C._DisableTorchDispatch  # taken before grading, so the watch cannot refuse the call

    def fn(x, y, out):
        guard = captured()
        guard.__enter__()  # never left: the dispatch mode stays off
        try:
            return _add_launch(x, y, out)
        finally:
            guard.__exit__(None, None, None)

    report = grading.grade_report("L2.add", fn, seed=1)
    assert not report.passed and "switched off" in report.text(), report.text()


def test_1_the_course_kernels_are_refused_by_what_runs_not_by_name():
    import types

    from gpuperf.kernels.labs import l2

    rejitted = triton.jit(l2.add_kernel.fn)
    copied = triton.jit(types.FunctionType(l2.add_kernel.fn.__code__, l2.add_kernel.fn.__globals__,
                                           "add_kernel"))
    for kernel in (rejitted, copied):
        _assert_rejected("L2.add", lambda x, y, out, kernel=kernel: _add_launch(x, y, out, kernel),
                         "course's own kernel")


def test_1_data_from_numpy_cannot_come_back():
    import numpy as np

    def from_numpy(x, y, out):
        return torch.from_numpy(np.zeros(x.shape, dtype=np.float32)).to(x.dtype)

    _assert_rejected("L2.add", from_numpy, "NOT YET")


def test_1_l5_tiled_refuses_softmax_and_the_full_score_matrix():
    def with_softmax(q, k, v, br, bc):
        return torch.cat([torch.softmax(q[i:i + br] @ k.T / math.sqrt(q.shape[1]), -1) @ v
                          for i in range(0, q.shape[0], br)])

    def whole_rows(q, k, v, br, bc):  # every query block against all keys: a block_rows x N_k matrix
        outs = []
        for i in range(0, q.shape[0], br):
            s = q[i:i + br] @ k.T / math.sqrt(q.shape[1])
            p = torch.exp(s - s.amax(1, keepdim=True))
            outs.append((p @ v) / p.sum(1, keepdim=True))
        return torch.cat(outs)

    def sdpa(q, k, v, br, bc):
        return torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None])[0]

    _assert_rejected("L5.tiled", with_softmax, "softmax")
    _assert_rejected("L5.tiled", whole_rows, "more than the")
    _assert_rejected("L5.tiled", sdpa, "NOT YET")


def _flash_reference_function():
    """An autograd.Function whose backward is autograd of a torch reference (the cheat)."""

    class Cheat(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal=False):
            o, lse = grading.solution("L5.forward")(q, k, v, causal)
            ctx.save_for_backward(q, k, v)
            ctx.causal = causal
            return o

        @staticmethod
        def backward(ctx, do):
            q, k, v = (t.detach().requires_grad_(True) for t in ctx.saved_tensors)
            with torch.enable_grad():
                o = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=ctx.causal)
                dq, dk, dv = torch.autograd.grad(o, (q, k, v), do)
            return dq, dk, dv, None

    return Cheat


def test_1_l6_autograd_rejects_a_backward_through_torch_autograd_and_missing_gradients():
    from gpuperf.kernels.labs import l5

    l6 = _learner_copy("l6")
    # the course's forward is the exercise's own (its Policy hands it to the reader): what is refused is the
    # backward
    _assert_rejected("L6.autograd", _flash_reference_function(), "ran torch's operator")

    class NoGrads(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal=False):
            return l5.attention_forward(q, k, v, causal)[0]

        @staticmethod
        def backward(ctx, do):
            return None, None, None, None

    class WrongShape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal=False):
            o, lse = l5.attention_forward(q, k, v, causal)
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.causal = causal
            return o

        @staticmethod
        def backward(ctx, do):
            q, k, v, o, lse = ctx.saved_tensors
            dq, dk, dv = l6.attention_backward(q, k, v, o, lse, do, ctx.causal)
            return dq[..., :1, :], dk, dv, None

    _assert_rejected("L6.autograd", NoGrads, "is None")
    _assert_rejected("L6.autograd", WrongShape, "your function raised")


# ---- (2) the reference out of reach; inputs read-only ---------------------------------------------------


def test_2_the_reference_does_not_exist_while_the_readers_function_runs():
    import sys

    found = []

    def snoop(x, y, out):
        frame = sys._getframe(1)
        while frame is not None:
            for value in frame.f_locals.values():
                if isinstance(value, torch.Tensor) and value.dtype == torch.float64:
                    found.append(value)
            frame = frame.f_back
        return _add_launch(x, y, out)

    # reading the grader's frames is now refused outright (grading.watch's audit hook, or the static read
    # of the function's code when it names _getframe)
    report = grading.grade_report("L2.add", snoop, seed=0)
    assert not report.passed and "_getframe" in report.text(), report.text()
    assert not found, "a float64 tensor (the reference?) was reachable from the reader's function"


@triton.jit
def _chain_writes_input(x_ptr, out_ptr, n, scale, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    tl.store(x_ptr + offs, tl.zeros_like(y).to(x_ptr.dtype.element_ty), mask=mask)  # scribbles on the input
    tl.store(out_ptr + offs, (y * scale).to(out_ptr.dtype.element_ty), mask=mask)


def test_2_changing_an_input_is_rejected():
    def fn(x, k_ops, scale, shift):
        out = torch.empty_like(x)
        _chain_writes_input[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), scale, shift, BLOCK=128)
        return out

    _assert_rejected("L2.chain", fn, "changed its input x")


# ---- (3) inputs only the taught algorithm survives -------------------------------------------------------


@triton.jit
def _softmax_shifted(x_ptr, y_ptr, n_cols, sx, sy, BLOCK: tl.constexpr, MODE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * sx + cols, mask=mask, other=float("-inf")).to(tl.float32)
    if MODE == 0:  # shift by the row's first element
        shift = tl.sum(tl.where(cols == 0, x, 0.0), axis=0)
    elif MODE == 1:  # shift by the row's mean
        shift = tl.sum(tl.where(mask, x, 0.0), axis=0) / n_cols
    else:  # no shift, in fp64
        shift = 0.0
    if MODE == 2:
        e = tl.exp(x.to(tl.float64))
    else:
        e = tl.exp(x - shift)
    tl.store(y_ptr + row * sy + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_3_l3_softmax_rejects_shifts_other_than_the_max(mode):
    def fn(x):
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        _softmax_shifted[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0),
                                        BLOCK=triton.next_power_of_2(x.shape[1]), MODE=mode)
        return y

    _assert_rejected("L3.softmax", fn, "first wrong element")


@triton.jit
def _online_fixed_shift(x_ptr, y_ptr, n_cols, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x0 = tl.load(x_ptr + row * sx)  # a fixed shift (the first element) instead of a running max
    l = 0.0
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_ptr + row * sx + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        l += tl.sum(tl.exp(x.to(tl.float32) - x0), axis=0)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_ptr + row * sx + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_ptr + row * sy + start + cols, (tl.exp(x - x0) / l).to(y_ptr.dtype.element_ty), mask=mask)


def test_3_l3_online_rejects_a_fixed_shift_and_the_fused_kernel_in_disguise():
    def fixed(x, block=1024):
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        _online_fixed_shift[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0), BLOCK=block)
        return y

    def fused(x, block=1024):  # ignores the block it is given: the fused kernel, one block per row
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        _softmax_wrong[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0),
                                      BLOCK=triton.next_power_of_2(x.shape[1]), MODE=3)
        return y

    _assert_rejected("L3.online", fixed, "first wrong element")
    _assert_rejected("L3.online", fused, "loaded")


@triton.jit
def _fwd_variant(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr, D: tl.constexpr,
                 BM: tl.constexpr, BN: tl.constexpr, MODE: tl.constexpr):
    # MODE 0: correct; 1: no running max (p = exp(s)); 2: the running output kept in fp16;
    # 3: causal without block skipping; 4: causal "skipping" by masked loads (the dots still run);
    # 5: K and V loads unmasked; 6: o stored as fp32 whatever the output type (wrong dtype: see the wrapper);
    # 7: causal skipping in every other block of rows only; 8: MODE 4, with every score product run twice
    # without the mask (the full run inflated, so the causal/full ratio looks right)
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    end = N_K
    if CAUSAL and MODE != 3 and MODE != 4 and MODE != 8 and (MODE != 7 or block_m % 2 == 0):
        end = tl.minimum(N_K, (block_m + 1) * BM)
    for start in range(0, end, BN):
        keys = start + tl.arange(0, BN)
        kmask = keys[:, None] < N_K
        if (MODE == 4 or MODE == 8) and CAUSAL:
            kmask = kmask & (keys[:, None] < (block_m + 1) * BM)
        if MODE == 5:
            k = tl.load(k_ptr + head * N_K * D + keys[:, None] * D + dims[None, :])
            v = tl.load(v_ptr + head * N_K * D + keys[:, None] * D + dims[None, :])
        else:
            k = tl.load(k_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=kmask, other=0.0)
            v = tl.load(v_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=kmask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        if MODE == 8 and not CAUSAL:
            s = s + 0.0 * tl.dot(q, tl.trans(k), input_precision="ieee")
        visible = keys[None, :] < N_K
        if CAUSAL:
            visible = visible & (keys[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        if MODE == 1:
            p = tl.exp(s)
            l = l + tl.sum(p, axis=1)
            acc = acc + tl.dot(p.to(v.dtype), v, input_precision="ieee")
            m = tl.zeros((BM,), dtype=tl.float32)
        else:
            m_new = tl.maximum(m, tl.max(s, axis=1))
            alpha = tl.exp(m - m_new)
            p = tl.exp(s - m_new[:, None])
            l = l * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
            if MODE == 2:
                acc = acc.to(tl.float16).to(tl.float32)
            m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def _fwd_variant_fn(mode):
    def fn(q, k, v, causal=False):
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()  # heads may be interleaved
        b, h, n_q, d = q.shape
        o = torch.empty(q.shape, dtype=torch.float32 if mode == 6 else q.dtype, device=q.device)
        lse = torch.empty((b, h, n_q), dtype=torch.float32, device=q.device)
        _fwd_variant[(triton.cdiv(n_q, 32), b * h)](q, k, v, o, lse, n_q, k.shape[2], 1 / math.sqrt(d),
                                                    CAUSAL=causal, D=d, BM=32, BN=32, MODE=mode)
        return o, lse

    return fn


def test_3_l5_rejects_a_forward_without_the_running_max():
    _assert_rejected("L5.forward", _fwd_variant_fn(1), "first wrong element")
    _assert_rejected("L5.causal", _fwd_variant_fn(1), "first wrong element")


def _tiled_variant(no_max):
    def fn(q, k, v, br, bc):
        o = torch.empty_like(q)
        scale = 1 / math.sqrt(q.shape[1])
        for r in range(0, q.shape[0], br):
            m = torch.full((min(br, q.shape[0] - r), 1), float("-inf"))
            l = torch.zeros_like(m)
            acc = torch.zeros(m.shape[0], q.shape[1])
            for c in range(0, k.shape[0], bc):
                s = q[r:r + br] @ k[c:c + bc].T * scale
                if no_max:
                    p = torch.exp(s)
                    l, acc = l + p.sum(1, keepdim=True), acc + p @ v[c:c + bc]
                else:  # a max per block, but the old sums are not rescaled
                    m = torch.maximum(m, s.amax(1, keepdim=True))
                    p = torch.exp(s - m)
                    l, acc = l + p.sum(1, keepdim=True), acc + p @ v[c:c + bc]
            o[r:r + br] = acc / l
        return o

    return fn


def test_3_l5_tiled_rejects_no_running_max_and_no_rescaling():
    _assert_rejected("L5.tiled", _tiled_variant(True), "first wrong element")
    _assert_rejected("L5.tiled", _tiled_variant(False), "first wrong element")


# ---- (4) 16-bit accumulation ---------------------------------------------------------------------------


@triton.jit
def _mm_acc16(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
              BK: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)
    cols = tl.program_id(1).to(tl.int64) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * sam + (k0 + ks)[None, :] * sak,
                    mask=(rows[:, None] < M) & ((k0 + ks)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + ks)[:, None] * sbk + cols[None, :] * sbn,
                    mask=((k0 + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        prec: tl.constexpr = "ieee" if a.dtype == tl.float32 else "tf32"
        acc = (acc.to(tl.float32) + tl.dot(a, b, input_precision=prec)).to(tl.float16)
    tl.store(c_ptr + rows[:, None] * scm + cols[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


def test_4_l4_rejects_a_16_bit_accumulator_in_fp16_cases_too():
    def fn(a, b):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), dtype=a.dtype, device=a.device)
        _mm_acc16[(triton.cdiv(M, 32), triton.cdiv(N, 32))](a, b, c, M, N, K, a.stride(0), a.stride(1),
                                                            b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                                                            BM=32, BN=32, BK=32)
        return c

    _assert_rejected("L4.matmul", fn, "first wrong element")
    # fp16 inputs with entries in [0, 1) and K = 2048: |A||B| = |C|, the bound is about 1.5e-3 |C|
    report = _assert_rejected("L4.matmul", fn, "first wrong element", only=lambda label: "fp16" in label
                              and "[0, 1)" in label)
    assert report.failures


def test_4_l5_rejects_a_16_bit_running_output():
    report = _assert_rejected("L5.forward", _fwd_variant_fn(2), "first wrong element",
                              only=lambda label: "fp16" in label and "q = 0" in label)
    assert report.failures


@triton.jit
def _bwd_dv_acc16(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, dv_ptr, N_Q, N_K, scale, D: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr):
    head = tl.program_id(1).to(tl.int64)
    keys = tl.program_id(0) * BN + tl.arange(0, BN)
    dims = tl.arange(0, D)
    k = tl.load(k_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
    dv = tl.zeros((BN, D), dtype=tl.float16)
    for m0 in range(0, N_Q, BM):
        rows = m0 + tl.arange(0, BM)
        q = tl.load(q_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q,
                    other=0.0)
        do = tl.load(do_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q,
                     other=0.0)
        lse = tl.load(lse_ptr + head * N_Q + rows, mask=rows < N_Q, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        visible = (rows[:, None] < N_Q) & (keys[None, :] < N_K)
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dv = (dv.to(tl.float32) + tl.dot(tl.trans(p.to(do.dtype)), do, input_precision="ieee")).to(tl.float16)
    tl.store(dv_ptr + head * N_K * D + keys[:, None] * D + dims[None, :], dv.to(dv_ptr.dtype.element_ty),
             mask=keys[:, None] < N_K)


def test_4_l6_rejects_a_16_bit_dv_accumulator():
    l6 = _learner_copy("l6")

    def fn(q, k, v, o, lse, do, causal=False):
        dq, dk, dv = l6.attention_backward(q, k, v, o, lse, do, causal)
        if causal:
            return dq, dk, dv
        b, h, n_q, d = q.shape
        n_k = k.shape[2]
        dv16 = torch.empty_like(v)
        _bwd_dv_acc16[(triton.cdiv(n_k, 32), b * h)](q, k, v, do, lse, dv16, n_q, n_k, 1 / math.sqrt(d), D=d,
                                                     BM=32, BN=32)
        return dq, dk, dv16

    report = _assert_rejected("L6.backward", fn, "output dv",
                              only=lambda label: "fp16" in label and "q = 0" in label)
    assert report.failures


# ---- (5) out-of-bounds memory -----------------------------------------------------------------------------


@triton.jit
def _add_variants(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, MODE: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if MODE == 0:  # unmasked loads, masked store
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs), mask=mask)
    elif MODE == 1:  # masked loads, unmasked store
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask))
    else:  # 32-bit offsets
        o32 = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m32 = o32 < n
        tl.store(out_ptr + o32, tl.load(x_ptr + o32, mask=m32) + tl.load(y_ptr + o32, mask=m32), mask=m32)


@pytest.mark.parametrize("mode", [0, 1])
def test_5_l2_add_out_of_bounds_with_the_labs_block_of_1024_is_a_clear_failure(mode):
    if mode == 0:  # an unmasked load whose lanes are never stored changes no output on a GPU
        _interpreter_only("a stray load that reaches no output")

    def fn(x, y, out):
        _add_variants[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024, MODE=mode)
        return out

    kind = "read" if mode == 0 else "wrote"
    _assert_rejected("L2.add", fn, f"your kernel {kind} past the end of")


@triton.jit
def _chain_unmasked_store(x_ptr, out_ptr, n, scale, shift, K_OPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(x_ptr + offs, mask=offs < n).to(tl.float32)
    for j in tl.static_range(K_OPS):
        y = y * scale if j % 2 == 0 else y + shift
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty))


def test_5_l2_chain_rejects_an_unmasked_store():
    def fn(x, k_ops, scale, shift):
        out = torch.empty_like(x)
        _chain_unmasked_store[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), scale, shift, K_OPS=k_ops,
                                                                BLOCK=1024)
        return out

    _assert_rejected("L2.chain", fn, "wrote past the end of")


@triton.jit
def _softmax_unmasked_store(x_ptr, y_ptr, n_cols, sx, sy, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * sx + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * sy + cols, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty))


def test_5_l3_rejects_an_unmasked_store():
    def fn(x):
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        _softmax_unmasked_store[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0),
                                               BLOCK=triton.next_power_of_2(x.shape[1]))
        return y

    _assert_rejected("L3.softmax", fn, "wrote past the end of")


@triton.jit
def _outer_variant(x_ptr, y_ptr, out_ptr, M, N, som, BM: tl.constexpr, BN: tl.constexpr, MODE: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM)
    cols = tl.program_id(1).to(tl.int64) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
    if MODE == 0:  # masked along the rows only
        mask = (rows[:, None] < M) & (cols[None, :] >= 0)
    else:
        mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * som + cols[None, :], x[:, None] * y[None, :], mask=mask)


@triton.jit
def _outer_rows(x_ptr, y_ptr, out_ptr, M, N, som, BN: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # one row per program: 1-D blocks
    cols = tl.program_id(1).to(tl.int64) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + row)
    y = tl.load(y_ptr + cols, mask=cols < N, other=0.0)
    tl.store(out_ptr + row * som + cols, x * y, mask=cols < N)


def test_5_l4_outer_rejects_a_mask_in_one_dimension_and_1d_blocks():
    def one_mask(x, y):
        out = torch.empty((x.shape[0], y.shape[0]), dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(x.shape[0], 32), triton.cdiv(y.shape[0], 64))
        _outer_variant[grid](x, y, out, x.shape[0], y.shape[0], out.stride(0), BM=32, BN=64, MODE=0)
        return out

    def rows(x, y):
        out = torch.empty((x.shape[0], y.shape[0]), dtype=x.dtype, device=x.device)
        _outer_rows[(x.shape[0], triton.cdiv(y.shape[0], 64))](x, y, out, x.shape[0], y.shape[0], out.stride(0),
                                                               BN=64)
        return out

    _assert_rejected("L4.outer", one_mask, "wrote past the end of")
    _interpreter_only("the shape of the stored tiles (the interpreter sees each store)")
    _assert_rejected("L4.outer", rows, "2-D tiles")


def test_5_l5_rejects_unmasked_key_loads():
    _assert_rejected("L5.forward", _fwd_variant_fn(5), "read past the end of")


def test_5_guard_bands_see_a_write_past_the_end():
    from gpuperf.grading.watch import band_damage, banded_empty

    view, alloc = banded_empty((10,), (1,), torch.float32, "cpu", 64)
    assert torch.isnan(view).all() and band_damage(alloc) == ""
    alloc.buffer[64 + 10 + 3] = 1.0
    assert "element 3 past the end" in band_damage(alloc)
    view2, alloc2 = banded_empty((4, 5), (5, 1), torch.float16, "cpu", 16)
    alloc2.buffer[15] = 0.0
    assert "before the start" in band_damage(alloc2)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled(), reason="a GPU")
def test_5_on_a_gpu_an_unmasked_store_lands_in_the_guard_band():
    def fn(x, y, out):
        _add_variants[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024, MODE=1)
        return out

    _assert_rejected("L2.add", fn, "wrote past the end")


# ---- (6) block skipping, output dtype, 64-bit offsets, TF32, L1's labels --------------------------------


@pytest.mark.parametrize("mode", [3, 4])
def test_6_l5_causal_rejects_a_kernel_that_does_not_skip_hidden_blocks(mode):
    _interpreter_only("block skipping (counted key blocks; a GPU only reports the causal/full time)")
    report = _assert_rejected("L5.causal", _fwd_variant_fn(mode), "key blocks",
                              only=lambda label: "blocks it visits" in label)
    assert report.failures


def test_6_the_output_dtype_is_checked():
    """An fp32 output for fp16 inputs is refused. Only the fp16 cases are graded: the fp32 ones pass with an fp32
    output, and run through the interpreter they took 90 s (L2.chain's kernel below has a program per element)."""
    fp16 = lambda label: "fp16" in label  # noqa: E731
    _assert_rejected("L5.forward", _fwd_variant_fn(6), "has dtype float32, expected float16", only=fp16)

    def chain_fp32(x, k_ops, scale, shift):
        out = torch.empty(x.shape, dtype=torch.float32, device=x.device)
        _chain_unmasked_store[(triton.cdiv(x.numel(), 1),)](x, out, x.numel(), scale, shift, K_OPS=k_ops, BLOCK=1)
        return out

    _assert_rejected("L2.chain", chain_fp32, "expected float16", only=fp16)


def test_6_l2_add_rejects_32_bit_offsets():
    _interpreter_only("the width of the offsets (a GPU shows it only past 2^31 elements)")

    def fn(x, y, out):
        _add_variants[(triton.cdiv(x.numel(), 64),)](x, y, out, x.numel(), BLOCK=64, MODE=2)
        return out

    _assert_rejected("L2.add", fn, "32-bit offsets")


def test_6_l1_time_memory_term_alone_fails_every_seed():
    for seed in range(40):
        report = grading.grade_report("L1.time", lambda f, b, p, w: b / w, seed=seed)
        assert not report.passed, f"seed {seed}: the memory term alone passed"
        report = grading.grade_report("L1.time", lambda f, b, p, w: f / p, seed=seed)
        assert not report.passed, f"seed {seed}: the compute term alone passed"


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()
                    or torch.cuda.get_device_capability()[0] >= 8, reason="a GPU without TF32 (sm < 80)")
def test_6_tf32_is_caught_on_a_gpu_without_tf32():
    def fn(a, b):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), dtype=a.dtype, device=a.device)
        _matmul_wrong[(triton.cdiv(M, 32), triton.cdiv(N, 32))](
            a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BM=32, BN=32, BK=32, MODE=3)
        return c

    _assert_rejected("L4.matmul", fn, "TF32")


def _dot16(a_ptr, b_ptr, c_ptr, N: tl.constexpr):  # compiled below as a JITFunction, as on a GPU
    idx = tl.arange(0, N)[:, None] * N + tl.arange(0, N)[None, :]
    a, b = tl.load(a_ptr + idx), tl.load(b_ptr + idx)
    tl.store(c_ptr + idx, tl.dot(a, b))


def test_6_on_a_gpu_without_tf32_the_fp32_cases_run_through_the_interpreter_with_tf32():
    """A T4 (sm_75) computes an fp32 tl.dot exactly whatever input_precision says; the grader runs the fp32
    cases of L4-L6 there through Triton's interpreter, whose dot it makes round to TF32 when asked. Checked
    here with a compiled-style JITFunction launched on the CPU."""
    from triton.runtime.jit import JITFunction

    from gpuperf.grading.exercises import interpreted_launches

    kernel = JITFunction(_dot16)
    a, b = torch.randn(16, 16) + 1 / 3, torch.randn(16, 16) - 1 / 7
    c = torch.empty(16, 16)
    with interpreted_launches():
        kernel[(1,)](a, b, c, N=16)
    err = float(((c.double() - a.double() @ b.double()).abs() / (a.double().abs() @ b.double().abs())).max())
    assert 2.0**-14 < err < 2 * 2.0**-11


def test_1_work_in_another_thread_raw_addresses_printing_and_course_helpers_are_refused():
    import threading

    def in_a_thread(x, y, out):
        worker = threading.Thread(target=lambda: out.copy_(x + y))
        worker.start()
        worker.join()
        return out

    def through_ctypes(x, y, out):
        import ctypes

        import numpy as np

        n = x.numel()
        as_np = [np.ctypeslib.as_array((ctypes.c_float * n).from_address(t.data_ptr())) for t in (x, y, out)]
        as_np[2][:] = as_np[0] + as_np[1]
        return out

    def printing(x, y, out):
        print(x)
        return _add_launch(x, y, out)

    def python_constants(x, y, out):
        return out.copy_(torch.tensor([1.0] * x.numel(), dtype=x.dtype))

    _assert_rejected("L2.add", in_a_thread, "started a thread")
    _assert_rejected("L2.add", through_ctypes, "raw address")
    _assert_rejected("L2.add", printing, "printed a tensor")
    _assert_rejected("L2.add", python_constants, "ran torch's operator")


def test_1_a_kernel_that_calls_a_course_device_function_is_refused():
    from gpuperf.grading.watch import _course_helper_used
    from gpuperf.kernels import elementwise

    assert _course_helper_used(_add_masked.fn) == ""
    namespace = {"tl": tl, "triton": triton, "helper": elementwise._add_tile}
    exec("def mine(x_ptr, y_ptr, out_ptr, n, BLOCK):\n    return helper(x_ptr, y_ptr, out_ptr, 0, 0)\n",
         namespace)
    assert "_add_tile" in _course_helper_used(namespace["mine"])


# --------------------------------------------------------------------------------------------------------
# Red-team round 2 (r19): holes found by attacking the graders, each closed or marked.
# --------------------------------------------------------------------------------------------------------


def test_7_rewriting_the_grader_or_torch_fails_the_case_and_is_undone():
    import gpuperf.grading.core as core
    import gpuperf.grading.exercises as ex

    compare0, written0, passed0 = ex.compare, ex.Runner.written_check, core.GradeReport.passed

    def patch_compare(x, y, out):  # a compare that always passes, and no written check
        ex.compare = lambda case, output, *a, **k: core.CaseResult(case, output, True)
        ex.Runner.written_check = lambda *a, **k: []
        return out

    def patch_report(x, y, out):  # every report passes
        core.GradeReport.passed = property(lambda self: True)
        return out

    def patch_torch(x, y, out):  # compare's own arithmetic made blind
        torch.Tensor.sum = lambda self, *a, **k: torch.zeros(())
        return _add_launch(x, y, out)

    # a function whose code names the grader's modules is refused before it runs (grading.watch.reaches_grader)
    for fn, needle in ((patch_compare, "names 'gpuperf.grading."),
                       (patch_report, "names 'gpuperf.grading.core'"), (patch_torch, "changed the grader or torch")):
        _assert_rejected("L2.add", fn, needle)
        assert (ex.compare, ex.Runner.written_check, core.GradeReport.passed) == (compare0, written0, passed0)
    assert "sum" not in vars(torch.Tensor)


def test_7_pausing_the_watch_from_inside_the_call_is_refused():
    # closed: the function's code names the watch's state (and, named otherwise, the paused flag is checked
    # against the call stack: tests/test_grading_watch.py)
    import gpuperf.grading.watch as watch

    def pause(x, y, out):
        out.zero_()  # a torch fill: marks every element written
        watch._ACTIVE.paused = True
        out.copy_(x + y)
        watch._ACTIVE.paused = False
        return out

    _assert_rejected("L2.add", pause, "NOT YET")


def test_7_l5_causal_rejects_skipping_in_some_programs_only_and_an_inflated_full_run():
    _interpreter_only("block skipping (counted tile products; a GPU only reports the causal/full time)")
    # 32 x 32 blocks at N = 256: skipping everywhere visits 36 of 64 tile pairs (56%), skipping in every
    # other block of rows 48 (75%), under the old flat limit of 80%
    for mode in (7, 8):
        _assert_rejected("L5.causal", _fwd_variant_fn(mode), "key blocks that no query",
                         only=lambda label: "blocks it visits" in label)
    report = grading.grade_report("L5.causal", _fwd_variant_fn(0), seed=7,
                                  only=lambda label: "blocks it visits" in label)
    assert report.passed, report.text()


@triton.jit
def _three_pass_softmax_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK: tl.constexpr):
    # blocked, but not online: a pass for the max, one for the sum, one to write (the row read three times)
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    cols = tl.arange(0, BLOCK)
    m = tl.max(tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32), axis=0)
    for start in range(BLOCK, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, tl.max(x, axis=0))
    l = tl.sum(tl.exp(tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32) - m),
               axis=0)
    for start in range(BLOCK, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf")).to(tl.float32)
        l = l + tl.sum(tl.exp(x - m), axis=0)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + start + cols, (tl.exp(x - m) / l).to(y_ptr.dtype.element_ty), mask=mask)


def test_7_l3_online_rejects_a_three_pass_softmax():
    _interpreter_only("the number of times a row is loaded (counted by the interpreter)")
    def three_pass(x, block=1024):
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        _three_pass_softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0), BLOCK=block)
        return y

    _assert_rejected("L3.online", three_pass, "NOT YET")


def test_7_l5_tiled_rejects_one_query_at_a_time_a_max_pass_and_blocks_of_its_own():
    def per_query(q, k, v, br, bc):  # each score row (1 x N_k) is under the block limit
        outs = []
        for i in range(q.shape[0]):
            s = (q[i:i + 1] @ k.T) / math.sqrt(q.shape[1])
            p = torch.exp(s - s.amax())
            outs.append((p @ v) / p.sum())
        return torch.cat(outs)

    def two_pass(q, k, v, br, bc, own=None):  # exact, blocked, but a first pass over the keys for the max
        br, bc = own or (br, bc)
        scale, outs = 1 / math.sqrt(q.shape[1]), []
        for i in range(0, q.shape[0], br):
            qb = q[i:i + br]
            m = torch.full((qb.shape[0], 1), float("-inf"))
            for j in range(0, k.shape[0], bc):
                m = torch.maximum(m, (qb @ k[j:j + bc].T * scale).amax(1, keepdim=True))
            l, acc = torch.zeros_like(m), torch.zeros(qb.shape[0], v.shape[1])
            for j in range(0, k.shape[0], bc):
                p = torch.exp(qb @ k[j:j + bc].T * scale - m)
                l, acc = l + p.sum(1, keepdim=True), acc + p @ v[j:j + bc]
            outs.append(acc / l)
        return torch.cat(outs)

    # k and v read more than once per block of queries (the read count comes before the product count)
    _assert_rejected("L5.tiled", per_query, "rows of k (or of a copy made from it) at once")
    _assert_rejected("L5.tiled", two_pass, "read each element of k")
    _assert_rejected("L5.tiled", lambda q, k, v, br, bc: two_pass(q, k, v, br, bc, own=(4, 8)),
                     "block of")


@pytest.mark.parametrize("name, dtype", [("fp16", torch.float16), ("bf16", torch.bfloat16),
                                         ("fp32", torch.float32)])
def test_the_stored_error_bounds_storing_any_value_in_the_format(name, dtype):
    """Half of ``_stored_error`` bounds the rounding of a value stored in the output format, down into the
    subnormals, where the relative term u |x| alone does not (without it an H200 run of L6 refused the
    course's own solution: a dV whose exact value is -1.52e-8 came back as fp16's smallest subnormal)."""
    from gpuperf.grading.exercises import _stored_error

    gen = torch.Generator().manual_seed(20)
    tiny = torch.finfo(dtype).tiny
    x = torch.cat([torch.randn(4000, generator=gen, dtype=torch.float64) * 10.0 ** torch.randint(
        -12, 4, (4000,), generator=gen).double(),
        torch.rand(4000, generator=gen, dtype=torch.float64) * 4 * tiny,  # the subnormals and just above
        torch.tensor([0.0, -1.52355e-8, 2.0**-25, 3 * 2.0**-26, tiny, -tiny / 3], dtype=torch.float64)])
    stored = x.to(dtype).double()
    assert ((stored - x).abs() <= _stored_error(x, name) / 2).all()
    # and no looser: at zero the bound is the subnormal spacing (twice half of it), not more
    finfo = torch.finfo(dtype)
    assert float(_stored_error(torch.zeros(1, dtype=torch.float64), name)) == finfo.tiny * finfo.eps


def test_softmax_bound_covers_the_exponents_rounding():
    """The course's L3.softmax was refused at seed 1544469536 (a row offset by hundreds: exp(x - m) of an x - m
    near -70, rounded in fp32, off by 4.4e-6 relative against a bound of 2.5e-6). The bound now carries the
    exponent's rounding, and a softmax computed in fp32 from rows offset by up to 800 meets it, through exp or
    through exp2 of pre-multiplied arguments; one computed in fp16 does not."""
    import torch

    gen = torch.Generator().manual_seed(1544469536)
    x = torch.randn(64, 30, generator=gen, dtype=torch.float64) * 12
    x += torch.empty(64, 1, dtype=torch.float64).uniform_(-800, 800, generator=gen)
    x = x.float()
    tol, bound = grading.softmax_bound(x, torch.float32, 30)
    expected = torch.softmax(x.double(), dim=-1)
    m = x.amax(dim=-1, keepdim=True)
    by_exp = torch.exp(x - m)
    log2e = torch.tensor(1.4426950408889634, dtype=torch.float32)
    by_exp2 = torch.exp2(x * log2e - m * log2e)
    for e in (by_exp, by_exp2):
        y = e / e.sum(dim=-1, keepdim=True)
        assert grading.compare("c", "y", y, expected, tol, scale=bound).passed
    assert grading.reduction_tolerance("fp32", 30).rtol < float((bound / expected.abs()).min())
    e16 = torch.exp((x - m).half().float())
    y16 = e16 / e16.sum(dim=-1, keepdim=True)
    assert not grading.compare("c", "y", y16, expected, tol, scale=bound).passed


def test_course_softmax_accepted_at_the_seed_that_refused_it():
    report = grading.grade_report("L3.softmax", grading.solution("L3.softmax"), seed=1544469536)
    assert report.passed, report.text()


def test_softmax_bound_of_rows_with_minus_infinity_stays_tight():
    """Round 12 (01, 04): the bound took |x| of a -inf, so a row holding one had an infinite bound and any
    finite output passed. A -inf adds nothing: its probability is 0 and the rest of its row keeps its bound."""
    import torch

    x = torch.tensor([[0.5, -math.inf, 1.0, 2.0], [-math.inf, -math.inf, -math.inf, 3.0], [1.0, 2.0, 3.0, 4.0]])
    tol, bound = grading.softmax_bound(x, torch.float32, 4)
    assert bool(torch.isfinite(bound).all())
    assert float(bound[0, 1]) < 1e-30 and float(bound[0].max()) < 1e-5  # the -inf's bound is atol alone
    expected = torch.softmax(x.double(), dim=-1)
    wrong = torch.softmax(torch.nan_to_num(x, neginf=0.0), dim=-1)  # -inf read as 0
    assert not grading.compare("c", "y", wrong, expected, tol, scale=bound).passed
    assert grading.compare("c", "y", torch.softmax(x, dim=-1), expected, tol, scale=bound).passed
