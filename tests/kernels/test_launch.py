"""The cached launch path of the kernel wrappers (gpuperf.kernels._launch): its key is never coarser than
Triton's specialisation, and anything it cannot key, or the interpreter, takes Triton's own path."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from gpuperf.kernels import _launch  # noqa: E402


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setattr(_launch, "_current_device", lambda: 0)
    return lambda *args, options=(): _launch.launch_key("kernel", args, options)


def test_the_key_tells_apart_whatever_triton_specialises_on(key):
    buf = torch.empty(64, dtype=torch.float16)
    aligned, off = buf[:32], buf[1:33]  # 16-byte aligned start, and 2 bytes past it
    assert aligned.data_ptr() % 16 == 0 and off.data_ptr() % 16 == 2
    assert key(aligned) != key(off)  # pointer alignment
    assert key(aligned) != key(aligned.float())  # dtype
    assert key(aligned) == key(torch.empty(8, dtype=torch.float16))  # same dtype, aligned: one kernel
    ints = [1, 2, 16, 17, 2**31 - 1, 2**31, 2**63]
    assert len({key(i) for i in ints}) == len(ints)  # every integer value its own key (finer than Triton)
    assert key(1) != key(1.0) and key(2.0) != key(3.0)  # 1 and 1.0 compile differently
    assert key(True) != key(False) and key(True) != key(1) and key(False) != key(0)
    assert key(1, options=(("num_warps", 4),)) != key(1, options=(("num_warps", 8),))
    assert key("ieee") != key("tf32")


def test_an_argument_it_cannot_key_gives_no_key(key):
    assert key(object()) is None
    assert key([1, 2]) is None


def test_the_interpreter_and_unkeyable_calls_take_tritons_path(monkeypatch):
    calls = []

    class Fake:  # not a JITFunction (as the interpreter's InterpretedFunction is not)
        def __getitem__(self, grid):
            return lambda *args, **options: calls.append((grid, args, options)) or "ran"

    assert _launch.launch(Fake(), (4,), (1, 2), (("num_warps", 4),)) == "ran"
    assert calls == [((4,), (1, 2), {"num_warps": 4})]


def test_descriptors_key_on_dtype_block_rank_and_padding(key):
    from triton.tools.tensor_descriptor import TensorDescriptor

    t = torch.empty(256, 64, dtype=torch.float16)
    a = TensorDescriptor.from_tensor(t, [64, 64])
    assert key(a) == key(TensorDescriptor.from_tensor(torch.empty(512, 64, dtype=torch.float16), [64, 64]))
    assert key(a) != key(TensorDescriptor.from_tensor(t, [128, 64]))
    assert key(a) != key(TensorDescriptor.from_tensor(t.float(), [64, 64]))


def test_scratch_allocator_without_a_gpu_gives_host_memory():
    if torch.cuda.is_available():
        pytest.skip("CPU behaviour")
    buf = _launch.scratch_allocator(1000, 128, None)
    assert buf.numel() >= 1000 and buf.dtype == torch.int8


def test_an_empty_hook_chain_counts_as_no_hook():
    class HookChain:  # Triton's own name: the check reads the class name and its calls
        def __init__(self, calls):
            self.calls = calls

    assert _launch._no_hook(None) and _launch._no_hook(HookChain([]))
    assert not _launch._no_hook(HookChain([print])) and not _launch._no_hook(print)


def test_a_desc_lists_its_shape_for_the_encoder_and_makes_tritons_descriptor():
    t = torch.empty(256, 64, dtype=torch.float16)
    d = _launch.Desc(t, (256, 64), (64, 1), [64, 64])
    listed = d.listed()
    assert listed.shape == [256, 64] and listed.strides == [64, 1] and listed.base is t
    real = d.descriptor()
    assert list(real.shape) == [256, 64] and list(real.block_shape) == [64, 64] and d.padding == "zero"


def _wrapper_calls():
    """Each kernel's default call, its inputs and a float64 reference of its first output."""
    import torch.nn.functional as F

    from gpuperf.kernels import flash_attention as fa
    from gpuperf.kernels import flash_attention_bwd as fab
    from gpuperf.kernels import matmul as mm
    from gpuperf.kernels import norm as nm
    from gpuperf.kernels import softmax as sm

    gen = torch.Generator(device="cuda").manual_seed(1234)
    print("seed 1234")

    def rand(*shape, dtype=torch.float16):
        return torch.randn(*shape, device="cuda", generator=gen).to(dtype)

    def attention_ref(q, k, v):
        return F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)

    def backward_ref(q, k, v, o, lse, do):
        qd, kd, vd = (t.double().requires_grad_(True) for t in (q, k, v))
        od = F.scaled_dot_product_attention(qd, kd, vd, is_causal=True)
        return torch.autograd.grad(od, (qd, kd, vd), do.double())[0]

    def backward_inputs():
        q, k, v, do = (rand(1, 4, 200, 64) for _ in range(4))
        o, lse = fa.flash_attention_forward(q, k, v, causal=True)
        return q, k, v, o, lse, do

    return [
        ("softmax", lambda x: sm.softmax(x), lambda: (rand(33, 3000),),
         lambda x: torch.softmax(x.double(), -1), 2e-3),
        ("add_rms_norm", lambda x, r, w: nm.add_rms_norm(x, r, w)[0],
         lambda: (rand(17, 1000), rand(17, 1000), rand(1000)),
         lambda x, r, w: nm.add_rms_norm_reference_fp64(x, r, w)[0], 2e-2),
        ("matmul", lambda a, b: mm.matmul(a, b), lambda: (rand(200, 256), rand(256, 136)),
         lambda a, b: a.double() @ b.double(), 2e-2),
        ("attention forward", lambda q, k, v: fa.flash_attention_forward(q, k, v, causal=True)[0],
         lambda: tuple(rand(1, 4, 200, 64) for _ in range(3)), attention_ref, 2e-2),
        ("attention backward", lambda *t: fab.flash_attention_backward(*t, causal=True)[0], backward_inputs,
         backward_ref, 5e-2),
    ]


def _rel_error(got, want):
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    return ((got - want).norm() / want.norm()).item()


@pytest.mark.gpu
@pytest.mark.parametrize("case", range(5))
def test_repeated_calls_through_the_plans_compute_what_the_checked_call_does(case):
    """The first call of a shape takes the checks and records a plan; later calls launch through it (with
    the launcher, tensor maps cached by address): every call, on new inputs and new outputs, is right."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    name, call, inputs, reference, tol = _wrapper_calls()[case]
    for i in range(4):  # a fresh set of inputs every time (a new address for some, reused for others)
        args = inputs()
        got = call(*args)
        torch.cuda.synchronize()
        err = _rel_error(got, reference(*args))
        assert err < tol, f"{name}, call {i}: relative error {err:.2e}"


@pytest.mark.gpu
@pytest.mark.parametrize("case", range(5))
def test_a_launch_hook_sends_the_plans_through_tritons_own_call(case):
    """A profiler's launch hook must see every launch, the plans' ones included."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    import triton

    runtime = triton.knobs.runtime
    seen = []

    def hook(metadata):
        seen.append(metadata)

    name, call, inputs, reference, tol = _wrapper_calls()[case]
    args = inputs()
    call(*args), call(*args)  # the plan exists
    chain = runtime.launch_enter_hook
    if chain.__class__.__name__ == "HookChain":
        chain.add(hook)
    else:
        runtime.launch_enter_hook = hook
    try:
        got = call(*args)
        torch.cuda.synchronize()
    finally:
        if chain.__class__.__name__ == "HookChain":
            chain.remove(hook)
        else:
            runtime.launch_enter_hook = chain
    assert seen, f"{name}: the hook saw no launch"
    assert _rel_error(got, reference(*args)) < tol


def test_a_launcher_calls_the_c_launch_directly_and_falls_back_with_a_hook(monkeypatch):
    """With Triton 3.6's attributes (faked here), a launch is one call of the C function with no hooks,
    no metadata and no scratch; with a hook installed it is the compiled kernel's own call."""
    calls = []

    class Run:
        global_scratch_size = profile_scratch_size = 0
        launch_cooperative_grid, launch_pdl = False, True

        @staticmethod
        def launch(*args):
            calls.append(("c", args))

    class Compiled:
        run, function, packed_metadata = Run(), 7, "meta"

        def __getitem__(self, grid):
            return lambda *args, stream=None: calls.append(("triton", grid, args, stream))

    runtime = type("Runtime", (), {"launch_enter_hook": None, "launch_exit_hook": None})
    monkeypatch.setattr(_launch, "_RUNTIME", runtime)
    monkeypatch.setattr(_launch, "_SIGNATURES_VERIFIED", True)
    launcher = _launch.Launcher(Compiled())
    launcher((3, 1, 1), 99, ("x", 5))
    assert calls == [("c", (3, 1, 1, 99, 7, False, True, None, None, "meta", None, None, None, "x", 5))]
    runtime.launch_enter_hook = print
    launcher((3, 1, 1), 99, ("x", 5))
    assert calls[-1] == ("triton", (3, 1, 1), ("x", 5), 99)


def test_on_an_unchecked_triton_a_launcher_takes_the_compiled_kernels_own_call(monkeypatch):
    calls = []

    class Compiled:
        run = function = packed_metadata = None

        def __getitem__(self, grid):
            return lambda *args, stream=None: calls.append((grid, args, stream))

    monkeypatch.setattr(_launch, "_SIGNATURES_VERIFIED", False)
    _launch.Launcher(Compiled())((2, 1, 1), 5, ("x",))
    assert calls == [((2, 1, 1), ("x",), 5)]


def test_the_first_launch_of_a_key_goes_through_triton_and_the_next_through_its_launcher(monkeypatch):
    """The cache path of launch/launcher with Triton's types faked: first call compiles (Triton's call),
    second call of the same key reuses the Launcher; an unkeyable argument never caches."""
    calls = []

    class Compiled:
        def __getitem__(self, grid):
            return lambda *args, stream=None: calls.append(("launcher", grid, args, stream))

    class Jit:
        def __getitem__(self, grid):
            def run(*args, **options):
                calls.append(("triton", grid, args, options))
                return Compiled()
            return run

    monkeypatch.setattr(_launch, "_jit_types", lambda: (Jit,))
    monkeypatch.setattr(_launch, "_compiled_type", lambda: Compiled)
    monkeypatch.setattr(_launch, "_current_device", lambda: 0)
    monkeypatch.setattr(_launch, "_current_stream", lambda device: 42)
    monkeypatch.setattr(_launch, "_SIGNATURES_VERIFIED", False)  # the Launcher takes Compiled's own call
    monkeypatch.setattr(_launch, "_CACHE", {})
    kernel = Jit()
    first = _launch.launcher(kernel, (4,), (1, 2), (("num_warps", 4),))
    assert isinstance(first, _launch.Launcher) and calls[-1][0] == "triton"
    compiled = _launch.launch(kernel, (4,), (1, 2), (("num_warps", 4),))
    assert compiled is first.compiled and calls[-1] == ("launcher", (4, 1, 1), (1, 2), 42)
    assert _launch.launcher(kernel, (4,), (object(),)) is None and calls[-1][0] == "triton"
    assert len(_launch._CACHE) == 1
