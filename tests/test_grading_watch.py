"""The watch of the labs' graders (gpuperf.grading.watch), door by door: every cheating solution below does
its work where a torch mode cannot see it (a custom operator, a Python callback run inside torch, a kernel
that is not a JIT launch of the reader's own, raw memory) or tampers with the grader, and is rejected with
a message that says what was refused. A correct solution that uses ordinary torch calls in its wrapper
passes. GPU-only doors (CUDA DLPack, ``__cuda_array_interface__`` on a CUDA tensor, ahead-of-time compiled
launches) are skipped on a CPU."""

from __future__ import annotations

import ctypes
import gc
import inspect
import sys
from pathlib import Path

import pytest

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before the kernels below are defined)
import torch
import triton
import triton.language as tl

from attack_files import find_attack, load_attack
from gpuperf import grading
from gpuperf.grading import watch

ON_GPU = torch.cuda.is_available() and not gpuperf.kernels.interpreter_enabled()
#: The name of the watch's state, built at run time: the static read of a function's code would refuse the
#: tampering tests below before they run, and these test the checks made while the function runs.
_ACTIVE_NAME = "".join(("_", "ACT", "IVE"))
_WATCH_MODULE = ".".join(("gpuperf", "grading", "watch"))
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="a CUDA door: needs a GPU")


def _rejected(key, fn, *needles, seed=3):
    report = grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True)
    text = report.text()
    print(text)
    assert not report.passed, f"{key}: a cheating solution passed:\n{text}"
    for needle in needles:
        assert needle in text, f"{key}: the report does not say {needle!r}:\n{text}"
    return text


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def _launch(x, y, out):
    _add_kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
    return out


# ---- a learner's own correct solution passes ----------------------------------------------------------


def test_a_correct_solution_with_ordinary_wrapper_calls_passes():
    def add(x, y, out):
        flat_x, flat_y = x.view(-1), y.reshape(-1)
        tmp = torch.empty_like(out)  # allocations, views and a copy: allowed
        scratch = torch.empty(x.numel(), dtype=x.dtype, device=x.device)
        del scratch
        _add_kernel[(triton.cdiv(flat_x.numel(), 128),)](flat_x, flat_y, tmp.view(-1), flat_x.numel(), BLOCK=128)
        out.copy_(tmp)
        return out

    report = grading.grade_report("L2.add", add, seed=5)
    assert report.passed, report.text()


# ---- operators by identity ------------------------------------------------------------------------------


def test_a_custom_operator_named_like_an_allowed_one_is_refused():
    @torch.library.custom_op("gpuperf_test_learner::clone", mutates_args=())
    def clone(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y  # the answer, computed inside a Python kernel

    def fn(x, y, out):
        out.copy_(torch.ops.gpuperf_test_learner.clone(x, y))
        return out

    _rejected("L2.add", fn, "gpuperf_test_learner::clone", "not one of torch's own (aten)")


def test_an_aten_operator_given_a_python_kernel_is_refused():
    lib = torch.library.Library("aten", "IMPL")
    secret = {}

    def alias_kernel(x):  # runs with the watch off: computes the sum behind it
        secret["sum"] = secret["x"].numpy() + secret["y"].numpy()
        return torch.ops.aten.alias.default.redispatch(torch._C.DispatchKeySet("CPU"), x) \
            if False else x.view_as(x)

    lib.impl("alias", alias_kernel, "CPU")
    try:
        def fn(x, y, out):
            secret.update(x=x, y=y)
            torch.ops.aten.alias.default(out)
            return _launch(x, y, out)

        _rejected("L2.add", fn, "aten::alias", "registered from Python")
    finally:
        lib._destroy()


# ---- Python callbacks run inside torch --------------------------------------------------------------------


def test_a_tensor_hook_is_refused():
    def fn(x, y, out):
        t = torch.zeros(1, requires_grad=True)
        t.register_hook(lambda g: g)
        return _launch(x, y, out)

    _rejected("L2.add", fn, "register_hook")


def test_a_hook_on_a_grad_fn_runs_under_the_watch():
    def fn(x, y, out):
        t = torch.zeros(1, requires_grad=True)
        u = t.clone()

        def hook(grad_inputs, grad_outputs):
            out.numpy()[:] = x.numpy() + y.numpy()  # inside the backward: still watched

        u.grad_fn.register_hook(hook)
        u.backward(torch.ones(1))
        return out

    _rejected("L2.add", fn, "'numpy'")


class _CheatingFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t.clone()

    @staticmethod
    def backward(ctx, g):
        x, y, out = _CheatingFunction.tensors
        out.numpy()[:] = x.numpy() + y.numpy()  # the backward runs Python the watch must see
        return g


def test_an_autograd_functions_backward_runs_under_the_watch():
    def fn(x, y, out):
        _CheatingFunction.tensors = (x, y, out)
        t = torch.zeros(1, requires_grad=True)
        _CheatingFunction.apply(t).backward(torch.ones(1))
        return out

    _rejected("L2.add", fn, "'numpy'")


def test_a_tensor_subclass_with_torch_function_is_refused():
    class Sneaky(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    def fn(x, y, out):
        torch._C.TensorBase.as_subclass(x, Sneaky).view(-1)
        return _launch(x, y, out)

    _rejected("L2.add", fn, "subclass")

    def fn2(x, y, out):
        s = x.as_subclass(Sneaky)
        return _launch(s, y, out)

    _rejected("L2.add", fn2, "subclass")

    def fn3(x, y, out):
        s = torch.Tensor._make_subclass(Sneaky, x)
        out.copy_(s)
        return _launch(x, y, out)

    _rejected("L2.add", fn3, "subclass")


def test_a_tensor_subclass_made_before_the_call_is_refused():
    class Sneaky(torch.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    sneaky = torch.Tensor._make_subclass(Sneaky, torch.zeros(4))

    def fn(x, y, out):
        sneaky.view(-1)
        return _launch(x, y, out)

    _rejected("L2.add", fn, "subclass")


@pytest.mark.parametrize("method", ["apply_", "map_"])
def test_per_element_python_callbacks_are_refused(method):
    def fn(x, y, out):
        out.copy_(x)
        if method == "apply_":
            out.apply_(lambda v: v)
        else:
            out.map_(y, lambda a, b: a + b)
        return out

    _rejected("L2.add", fn, repr(method))


# ---- only the reader's own JIT launches are kernels --------------------------------------------------------


def test_jiterator_is_refused_even_on_a_cpu():
    from torch.cuda import jiterator

    add = jiterator._create_jit_fn("template <typename T> T add(T x, T y) { return x + y; }")

    def fn(x, y, out):
        out.copy_(add(x, y))
        return out

    _rejected("L2.add", fn, "jiterator")


def test_a_kernel_defined_in_a_librarys_file_is_refused():
    from triton.language import standard

    def fn(x, y, out):
        standard.cdiv[(1,)](x, y)  # a @triton.jit function of Triton's own package
        return _launch(x, y, out)

    _rejected("L2.add", fn, "a kernel defined in a library's file")

    from gpuperf.kernels import elementwise  # the course's, not an exercise's solution

    def course(x, y, out):
        elementwise._add_kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK_SIZE=256)
        return out

    _rejected("L2.add", course, "the course's own kernel")


@pytest.mark.skipif(not ON_GPU, reason="ahead-of-time compiled launches exist only on a GPU")
def test_an_ahead_of_time_compiled_launch_is_refused():
    x = torch.ones(1024, device="cuda")
    compiled = _add_kernel.warmup(x, x, x, x.numel(), BLOCK=256, grid=(4,))

    def fn(x, y, out):
        compiled[(triton.cdiv(x.numel(), 256), 1, 1)](x, y, out, x.numel())
        return out

    _rejected("L2.add", fn, "compiled kernel")


# ---- raw memory -------------------------------------------------------------------------------------------


def test_dlpack_through_torch_utils_is_refused():
    def fn(x, y, out):
        torch.utils.dlpack.to_dlpack(x)
        return _launch(x, y, out)

    _rejected("L2.add", fn, "DLPack")


def test_dlpack_through_the_dunder_is_refused():
    def fn(x, y, out):
        x.__dlpack__()
        return _launch(x, y, out)

    _rejected("L2.add", fn, "__dlpack__")


def test_cuda_array_interface_is_refused_on_any_device():
    def fn(x, y, out):
        x.__cuda_array_interface__
        return _launch(x, y, out)

    _rejected("L2.add", fn, "__cuda_array_interface__")


@CUDA
def test_cuda_dlpack_and_array_interface_on_a_gpu_are_refused():
    for door in (lambda t: t.__cuda_array_interface__, lambda t: torch.utils.dlpack.to_dlpack(t),
                 lambda t: t.__dlpack__()):
        def fn(x, y, out, door=door):
            door(x)
            return _launch(x, y, out)

        _rejected("L2.add", fn, "NOT YET")


def test_numpy_and_the_array_interface_are_refused():
    import numpy as np

    def fn(x, y, out):
        np.asarray(x)
        return _launch(x, y, out)

    _rejected("L2.add", fn, "took data out of torch")


def test_from_numpy_is_refused():
    import numpy as np

    def fn(x, y, out):
        torch.from_numpy(np.zeros(4, dtype=np.float32))
        return _launch(x, y, out)

    _rejected("L2.add", fn, "from_numpy")


def test_untyped_storage_and_data_ptr_are_refused():
    def storage(x, y, out):
        x.untyped_storage()
        return _launch(x, y, out)

    def pointer(x, y, out):
        return _launch(x, y, out) if (x.data_ptr() + 4) else out

    _rejected("L2.add", storage, "untyped_storage")
    _rejected("L2.add", pointer, "data_ptr")


def test_a_triton_wrappers_data_pointer_is_refused():
    def fn(x, y, out):
        triton.reinterpret(x, tl.float32).data_ptr()
        return _launch(x, y, out)

    _rejected("L2.add", fn, "data_ptr")


def test_ctypes_is_refused():
    def fn(x, y, out):
        ctypes.string_at(id(x), 8)
        return _launch(x, y, out)

    _rejected("L2.add", fn, "ctypes")


# ---- L1: the expected value is not in reach ------------------------------------------------------------------


def _name(*parts):
    """An attribute name built at run time: the static read of a function's code does not see it, so these
    tests reach the checks made while the function runs (the audit hook)."""
    return "".join(parts)


def _frame_readers():
    def getframe(flop, bytes_moved, peak, bw):
        frame = getattr(sys, _name("_get", "frame"))(1)
        return getattr(frame, _name("f_lo", "cals")).get("expected")

    def via_inspect(flop, bytes_moved, peak, bw):
        frame = getattr(inspect.currentframe(), _name("f_", "back"))
        return getattr(frame, _name("f_lo", "cals")).get("expected")

    def via_traceback(flop, bytes_moved, peak, bw):
        try:
            raise ValueError
        except ValueError as e:
            frame = getattr(getattr(e.__traceback__, _name("tb_", "frame")), _name("f_", "back"))
            return getattr(frame, _name("f_lo", "cals")).get("expected")

    def via_gc(flop, bytes_moved, peak, bw):
        for ref in getattr(gc, _name("get_ref", "errers"))(flop):
            if isinstance(ref, dict) and "expected" in ref:
                return ref["expected"]
        return 0.0

    return getframe, via_inspect, via_traceback, via_gc


@pytest.mark.parametrize("reader", _frame_readers(), ids=lambda f: f.__name__)
def test_l1_cannot_read_the_expected_value_from_its_callers_frame(reader):
    report = grading.grade_report("L1.time", reader, seed=4)
    text = report.text()
    assert not report.passed, text
    assert "a frame" in text or "garbage collector" in text, text


def test_l1_code_that_names_frames_is_not_graded():
    def fn(flop, bytes_moved, peak, bw):
        return sys._getframe(1).f_locals["expected"]

    report = grading.grade_report("L1.time", fn, seed=4)
    assert not report.passed and "'_getframe'" in report.text(), report.text()


def test_a_forged_file_name_does_not_make_code_torchs():
    import os

    source = "def off(fn):\n    import torch\n    with torch._C.DisableTorchFunction():\n        return fn()\n"
    namespace = {}
    exec(compile(source, os.path.join(os.path.dirname(torch.__file__), "_forged.py"), "exec"), namespace)
    off = namespace["off"]

    def fn(x, y, out):
        off(lambda: out.copy_(x))
        return _launch(x, y, out)

    _rejected("L2.add", fn, "DisableTorchFunction")


@pytest.mark.parametrize("how", ["threading", "_thread"])
def test_a_thread_started_before_grading_is_caught(how):
    """A thread of the reader's that ``threading`` lists refuses the grade before any case (grading._hooks_set);
    one started with ``_thread.start_new_thread``, which it does not list, is caught by what it writes."""
    import _thread
    import queue
    import threading

    jobs, done = queue.Queue(), queue.Queue()

    def worker():
        while True:
            job = jobs.get()
            if job is None:
                done.put(False)
                return
            x, y, out = job
            out.copy_(x + y)
            done.put(True)

    if how == "threading":
        threading.Thread(target=worker, daemon=True).start()
    else:
        _thread.start_new_thread(worker, ())

    def fn(x, y, out):
        out.zero_()
        jobs.put((x, y, out))
        done.get()
        return out

    try:
        _rejected("L2.add", fn, "a thread of your own code is running" if how == "threading" else
                  "without a kernel launch or a watched torch operation")
    finally:
        jobs.put(None)  # the worker ends, so that no later grade of this process sees it
        done.get(timeout=30)


# ---- tampering ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["paused", "internal", "active"])
def test_flipping_the_watchs_flags_from_inside_is_refused(flag):
    def fn(x, y, out):
        module = sys.modules[_WATCH_MODULE]
        w = getattr(module, _ACTIVE_NAME)  # hides the name from the static read
        setattr(w, flag, flag != "active")
        out.copy_(x + y)
        setattr(w, flag, flag == "active")
        return out

    _rejected("L2.add", fn, "NOT YET")


def test_replacing_the_active_watch_is_refused():
    def fn(x, y, out):
        module = sys.modules[_WATCH_MODULE]
        saved = getattr(module, _ACTIVE_NAME)
        setattr(module, _ACTIVE_NAME, None)
        out.copy_(x + y)
        setattr(module, _ACTIVE_NAME, saved)
        return out

    _rejected("L2.add", fn, "switched off or replaced")


def test_leaving_the_watch_from_inside_is_refused():
    def fn(x, y, out):
        module = sys.modules[_WATCH_MODULE]
        getattr(module, _ACTIVE_NAME).__exit__(None, None, None)
        return _launch(x, y, out)

    _rejected("L2.add", fn, "left the grader's watch")


def test_code_that_names_the_watchs_state_is_not_graded():
    def fn(x, y, out):
        watch._ACTIVE.paused = True
        return _launch(x, y, out)

    _rejected("L2.add", fn, "_ACTIVE", "before any case")


def test_a_patch_of_the_grader_before_grading_fails_the_grade():
    import gpuperf.grading.core as core

    original = core.compare
    core.compare = lambda case, output, *a, **k: core.CaseResult(case, output, True)
    try:
        _rejected("L2.add", _launch, "changed after gpuperf.grading was imported", "gpuperf.grading.core.compare")
    finally:
        core.compare = original
    assert grading.grade_report("L2.add", _launch, seed=2, stop_at_first_failure=True).passed


def test_a_patch_of_torch_before_grading_fails_the_grade():
    torch.Tensor.sum = lambda self, *a, **k: torch.zeros(())  # shadows TensorBase's
    try:
        _rejected("L2.add", _launch, "Tensor.sum")
    finally:
        del torch.Tensor.sum
    assert not watch.changed_since_import()


# ---- attacks of round 1 (/work/attacks/round1, accepted by the graders before this watch) ------------------


def _softmax_answer(x):
    return torch.softmax(x.double(), dim=-1)


def test_attack_c04_disable_guards_held_from_before_grading():
    from torch._C import DisableTorchFunction as held_function_off
    from torch._C import _DisableTorchDispatch as held_dispatch_off

    def softmax_rows(x):
        y = torch.zeros_like(x)
        with held_function_off(), held_dispatch_off():
            y.copy_(_softmax_answer(x))
        return y

    _rejected("L3.softmax", softmax_rows, "without a kernel launch or a watched torch operation")


@triton.jit
def _nothing(x_ptr, BLOCK: tl.constexpr):
    pass


def test_attack_c08_torch_inside_a_grid_callable():
    def softmax_rows(x):
        y = torch.zeros_like(x)

        def grid(meta):
            y.copy_(_softmax_answer(x))
            return (1,)

        _nothing[grid](x, BLOCK=16)
        return y

    _rejected("L3.softmax", softmax_rows, "outside a kernel")


def test_attack_c09_torch_inside_an_autotune_pre_hook():
    def hook(nargs):
        nargs["y_ptr"].copy_(_softmax_answer(nargs["x_ptr"]))

    @triton.autotune(configs=[triton.Config({}, pre_hook=hook)], key=[])
    @triton.jit
    def kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
        pass

    def online_softmax(x, block=1024):
        y = torch.zeros_like(x)
        kernel[(1,)](x, y, x.shape[1], BLOCK=block)
        return y

    _rejected("L3.online", online_softmax, "outside a kernel")


def test_attack_c10_torch_inside_a_heuristic():
    def softmax_rows(x):
        y = torch.zeros_like(x)

        def answer(args):
            args["y_ptr"].copy_(_softmax_answer(args["x_ptr"]))
            return 16

        kernel = triton.heuristics({"B": answer})(_nothing_xy)
        kernel[(1,)](x, y)
        return y

    _rejected("L3.softmax", softmax_rows, "outside a kernel")


@triton.jit
def _nothing_xy(x_ptr, y_ptr, B: tl.constexpr):
    pass


def test_attack_c12_a_policy_swapped_before_grading():
    import dataclasses

    from gpuperf.grading import exercises

    original = exercises.EXERCISES["L3.softmax"]
    policy = dataclasses.replace(original.get_policy(), allowed=None, refused=frozenset())
    exercises.EXERCISES["L3.softmax"] = dataclasses.replace(original, policy=policy)
    try:
        _rejected("L3.softmax", lambda x: _softmax_answer(x).to(x.dtype), "EXERCISES")
    finally:
        exercises.EXERCISES["L3.softmax"] = original
    assert not watch.changed_since_import()


def test_attack_c13_the_policy_replaced_from_inside():
    import dataclasses

    def matmul(a, b):
        w = getattr(sys.modules[_WATCH_MODULE], _ACTIVE_NAME)
        w.policy = dataclasses.replace(w.policy, allowed=None)
        return (a.double() @ b.double()).to(a.dtype)

    _rejected("L4.matmul", matmul, "switched off or replaced")


def test_attack_c17_the_course_kernel_under_another_file_name():
    import linecache
    import types

    from gpuperf.kernels.labs import l3

    original = l3.softmax_row_kernel.fn
    source = inspect.getsource(original)
    fake = __file__ + ".copied.py"
    linecache.cache[fake] = (len(source), None, source.splitlines(True), fake)
    code = original.__code__.replace(co_filename=fake, co_firstlineno=1)
    copy = types.FunctionType(code, original.__globals__, original.__name__, original.__defaults__,
                              original.__closure__)
    copy.__annotations__ = dict(original.__annotations__)
    kernel = triton.jit(copy)

    def softmax_rows(x):
        y = torch.empty_like(x)
        kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0),
                              BLOCK=triton.next_power_of_2(x.shape[1]))
        return y

    _rejected("L3.softmax", softmax_rows, "the course's own kernel")


def test_attack_c25_dlpack_through_a_held_c_function():
    import numpy as np

    held_to_dlpack = torch._C._to_dlpack

    class Capsule:
        def __init__(self, t):
            self.capsule = held_to_dlpack(t)

        def __dlpack__(self, stream=None, **kw):
            return self.capsule

        def __dlpack_device__(self):
            return (1, 0)

    def softmax_rows(x):
        y = torch.zeros_like(x)
        a = np.from_dlpack(Capsule(x)).astype(np.float64)
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        view = np.from_dlpack(Capsule(y))
        view.setflags(write=True) if view.flags.writeable else None
        address = view.__array_interface__["data"][0]
        target = np.frombuffer((ctypes.c_char * view.nbytes).from_address(address), dtype=view.dtype)
        target[...] = (e / e.sum(axis=-1, keepdims=True)).astype(view.dtype).reshape(-1)
        return y

    _rejected("L3.softmax", softmax_rows, "NOT YET")


def test_attack_c27_the_python_dispatch_key_excluded_through_a_held_switch():
    held_exclude = torch._C._dispatch_tls_set_dispatch_key_excluded
    python_key = torch._C.DispatchKey.Python

    def softmax_rows(x):
        y = torch.zeros_like(x)
        held_exclude(python_key, True)
        try:
            y.copy_(_softmax_answer(x))
        finally:
            held_exclude(python_key, False)
        return y

    _rejected("L3.softmax", softmax_rows, "without a kernel launch or a watched torch operation")

    def named(x):  # the switch taken inside the call is refused by name
        y = torch.zeros_like(x)
        torch._C._dispatch_tls_set_dispatch_key_excluded(python_key, True)
        y.copy_(_softmax_answer(x))
        torch._C._dispatch_tls_set_dispatch_key_excluded(python_key, False)
        return y

    _rejected("L3.softmax", named, "_dispatch_tls_set_dispatch_key_excluded")


def test_a_notebook_host_rebinding_input_is_not_tampering():
    """ipykernel swaps builtins.input on every cell it runs: a learner's correct lab must still pass there."""
    import builtins

    from gpuperf.grading import watch

    watch.take_baseline()
    original = builtins.input
    try:
        builtins.input = lambda prompt="": ""  # what ipykernel does before each cell
        assert not [c for c in watch.changed_since_import() if c.startswith("builtins.input")]
        builtins.print = builtins.print  # the same object: not a change either
    finally:
        builtins.input = original


# ---- round 3 (issue 30): the launch binder by identity, callbacks watched, references out of a cell's reach --


def test_a_grid_callable_is_watched_not_refused():
    """Triton calls the reader's grid function inside its launch: torch in it is watched like the wrapper (a
    size read is fine, arithmetic is refused by the allow-list)."""
    def add(x, y, out):
        grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)  # noqa: E731
        _add_kernel[grid](x, y, out, x.numel(), BLOCK=256)
        return out

    report = grading.grade_report("L2.add", add, seed=3, only=lambda label: "n=1 " in label or "4097" in label)
    assert report.passed, report.text()

    def add_in_grid(x, y, out):
        def grid(meta):
            out.copy_(x + y)
            return (1,)

        _nothing[grid](x, BLOCK=16)
        return out

    _rejected("L2.add", add_in_grid, "aten.add", "outside a kernel")


def _binder_frame(binder, *args, **kwargs):
    """The frame a binder ran in (a profiling hook sees it)."""
    frames = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is binder.__code__:
            frames.append(frame)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        binder(*args, **kwargs)
    finally:
        sys.setprofile(previous)
    return frames[0]


def test_the_launch_binder_is_recognised_by_what_triton_made_not_by_its_name():
    from gpuperf.grading import watch

    jit_module = pytest.importorskip("triton.runtime.jit")
    backend = getattr(pytest.importorskip("triton.backends.compiler"), "BaseBackend", None)
    if not hasattr(jit_module, "create_function_from_signature") or backend is None:
        pytest.skip("this Triton makes its launch binders differently")

    def kernel(x_ptr, n, BLOCK: tl.constexpr):
        pass

    jitted = jit_module.JITFunction(kernel)
    with watch.triton_hooks():  # the hooks record the binders Triton makes while a grade runs
        binder = jit_module.create_function_from_signature(jitted.signature, jitted.params, backend)
    assert watch._triton_binder(_binder_frame(binder, 7, 4, BLOCK=16))
    # the same name, file name and globals, compiled by someone else: not Triton's
    namespace = dict(binder.__globals__)
    exec(compile("def dynamic_func(x_ptr, n, BLOCK, **options):\n    return x_ptr\n", "<string>", "exec"),
         namespace)
    assert not watch._triton_binder(_binder_frame(namespace["dynamic_func"], 7, 4, BLOCK=16))
    # Triton's binder whose globals were changed afterwards: not trusted either
    binder.__globals__["backend"] = object()
    assert not watch._triton_binder(_binder_frame(binder, 7, 4, BLOCK=16))
    # a binder made from parameters whose annotation would write code into its source is never recorded
    bad = jit_module.JITFunction(kernel)
    bad.params[1].__dict__["annotation_type"] = 'i32", print("x"), "'
    with watch.triton_hooks():
        made = jit_module.create_function_from_signature(bad.signature, bad.params, backend)
    assert made.__code__ not in watch._BINDERS


def _attack_3(name: str):
    """The exercise and the function of a round-3 attack file, its module run up to its grade() line."""
    return load_attack(find_attack(3, name))


@pytest.mark.parametrize("name", ["46", "47", "48"])
def test_attack_of_round_3_torch_in_a_forged_binder_grid_is_refused(name):
    """46-48: the grid function, exec'd as a `dynamic_func` of "<string>" with Triton's names in its globals,
    runs the whole matmul/attention in torch: it is the reader's code, watched."""
    key, fn = _attack_3(name)
    _rejected(key, fn, "outside a kernel")


@pytest.mark.parametrize("name, rebound", [("38", "math.sqrt"),
                                           ("39", "torch.nn.functional.scaled_dot_product_attention")])
def test_attack_of_round_3_a_patched_reference_is_tampering(name, rebound):
    """38, 39: math.sqrt and F.scaled_dot_product_attention rebound so that the references drop the scale."""
    import math

    import torch.nn.functional as F

    saved = math.sqrt, F.scaled_dot_product_attention
    try:
        key, fn = _attack_3(name)
        _rejected(key, fn, "changed after gpuperf.grading was imported", rebound)
    finally:
        math.sqrt, F.scaled_dot_product_attention = saved


def test_round_3_references_do_not_call_functions_a_cell_could_rebind():
    """The scale of the references and bounds is computed with operators: a rebound math.sqrt inside the
    call (restored before the reference runs) or before it changes nothing."""
    import math

    from gpuperf.grading import exercises

    q = torch.randn(1, 1, 3, 16)
    saved = math.sqrt
    try:
        math.sqrt = lambda x: 1.0
        o, lse, p, s, a = exercises._attention_reference(q, q, q, False)
    finally:
        math.sqrt = saved
    expected = (q.double() @ q.double().transpose(-1, -2)) / 4.0
    assert torch.allclose(s, expected)


def test_attack_of_round_3_the_solutions_switch_set_in_a_cell_grades_yours(capsys, monkeypatch):
    """40: GPUPERF_LAB_SOLUTIONS=1 set after the grader was imported grades the learner's stub, not the
    course's solution; in solutions mode the report never starts with PASSED."""
    import os

    if grading.SOLUTIONS_MODE:
        pytest.skip("this process was started in solutions mode")
    monkeypatch.setenv("GPUPERF_LAB_SOLUTIONS", os.environ.get("GPUPERF_LAB_SOLUTIONS", "0"))
    key, fn = _attack_3("40")
    assert os.environ["GPUPERF_LAB_SOLUTIONS"] == "1"
    grading.grade(key, fn)
    out = capsys.readouterr().out
    assert out.startswith(f"NOT YET {key} (yours)") and "PASSED" not in out


def test_a_forged_binder_is_the_readers_code_for_the_audit_hook_too():
    """The audit hook's exemption for Triton's binder is by identity as well: a `dynamic_func` of "<string>"
    with Triton's names in its globals that reads a frame is refused."""
    import triton.runtime.jit as jit_module

    namespace = {"JITCallable": getattr(jit_module, "JITCallable", None), "specialize_impl": None, "sys": sys}
    exec(compile("def dynamic_func(meta):\n    getattr(sys, ''.join(['_get', 'frame']))(0)\n    return (1,)\n",
                 "<string>", "exec"), namespace)
    grid = namespace["dynamic_func"]

    def add(x, y, out):
        _nothing[grid](x, BLOCK=16)
        return out

    _rejected("L2.add", add, "a frame")


# ---- attacks of round 4 -----------------------------------------------------------------------------------

_BUILT_IN_SWAPS = '''
import sys

sys.path.insert(0, "tests")
from attack_files import find_attack, load_attack

key, fn = load_attack(find_attack(4, "38"))  # the swap, then the grader's import
import functools, math
import torch
from gpuperf import grading
saved_sqrt = math.sqrt
from gpuperf.grading import watch

report = grading.grade_report(key, fn, stop_at_first_failure=True)
print("38", report.passed, report.text().splitlines()[3].strip())
del torch.Tensor.abs  # (the baseline keeps the swap: the family is checked by the function itself)
print("restored", watch._builtins_under_other_names())
for patch, undo in (
        ("torch.Tensor.__abs__ = torch.Tensor.zero_", "torch.Tensor.__abs__ = torch._C.TensorBase.abs"),
        ("torch.Tensor.abs = functools.partialmethod(torch.Tensor.zero_)", "del torch.Tensor.abs"),
        ("torch.isfinite = torch.isnan", "torch.isfinite = torch._C._VariableFunctions.isfinite"),
        ("math.sqrt = math.floor", "math.sqrt = saved_sqrt")):
    exec(patch)
    print("swap", watch._builtins_under_other_names())
    exec(undo)
print("clean", watch._builtins_under_other_names())
'''


def test_attack_of_round_4_a_built_in_swapped_before_the_grader_is_imported_is_tampering():
    """38: torch.Tensor.abs set to zero_ before gpuperf.grading is imported (the baseline holds the swap), and
    the family around it: a dunder, a partialmethod, a function of torch or of math put in another's place.
    Each is named whenever the grader checks. In a subprocess: the swaps would stay in this one."""
    import os
    import subprocess

    root = Path(__file__).resolve().parents[1]
    path = os.pathsep.join(p for p in (str(root / "lib"), os.environ.get("PYTHONPATH", "")) if p)
    out = subprocess.run([sys.executable, "-c", _BUILT_IN_SWAPS],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path}, cwd=root,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[0].startswith("38 False") and "torch.Tensor.abs (is zero_, not torch's abs)" in lines[0]
    assert lines[1] == "restored []"
    swaps = [line for line in lines if line.startswith("swap")]
    assert swaps == ["swap [\"torch.Tensor.__abs__ (is zero_, not torch's __abs__)\"]",
                     "swap [\"torch.Tensor.abs (a partialmethod, not one of torch's methods)\"]",
                     "swap ['torch.isfinite (is torch.isnan)']", "swap ['math.sqrt (is math.floor)']"], out.stdout
    assert lines[-1] == "clean []"


def test_a_grade_stopped_midway_forgets_its_calls():
    """A learner who stops a long grade (KeyboardInterrupt) must not leave the watch keeping buffers for it."""

    def stopped(x, y, out, block_size=1024):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        grading.grade_report("L2.add", stopped, seed=1)
    assert not watch._EARLIER_CALLS.get("grading")


def test_a_watch_that_fails_to_enter_leaves_nothing_switched_on():
    """On an H100 of 80 GB the L2.add case past 2^31 elements ran out of memory while the watch copied the
    buffers it handed out (its shadows), inside ``__enter__``; ``with`` then calls no ``__exit__``, and the
    watch's modes stayed on: the next exercise graded in the process was refused for a watch "switched off"
    (2026-12-05). Entering that fails now leaves nothing on."""
    import torch
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    from gpuperf.grading import watch as watch_module
    from gpuperf.grading.exercises import EXERCISES

    class NoMemory:
        @property
        def buffer(self):
            raise MemoryError("no memory for the shadow copy")

    before = (len(_get_current_function_mode_stack()), len(_get_current_dispatch_mode_stack()),
              watch_module._ACTIVE)
    w = watch_module.Watch(EXERCISES["L2.add"].get_policy(), "cpu")
    w.allocs.append(NoMemory())
    with pytest.raises(MemoryError):
        with w:
            pass  # pragma: no cover - entering fails
    after = (len(_get_current_function_mode_stack()), len(_get_current_dispatch_mode_stack()),
             watch_module._ACTIVE)
    assert after == before
    assert float(torch.ones(2).sum()) == 2.0  # torch runs unwatched again
