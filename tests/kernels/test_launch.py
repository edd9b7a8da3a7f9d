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
