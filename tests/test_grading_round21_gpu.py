"""What the H100 run of 2026-12-06 (thirteenth session) found with the interpreted cases on
(``GPUPERF_GRADING_INTERPRET_ON_GPU=1``), reproduced on the CPU with Triton 3.6 and the GPU's path:

- Triton 3.6's ``tl.tuple`` (a broadcast's shape in a masked ``atomic_add``) raises ``ValueError`` for an
  attribute it lacks: the source tracking's ``getattr`` let it through and honest atomic-dQ backwards were
  refused ("'_gpuperf_src' is not in list");
- ipykernel installed outside site-packages (``pip install --target``, a folder on ``PYTHONPATH``): its IOPub
  thread was taken for a thread of the reader's, and every grade in a notebook was refused;
- a grade kept only the first 256 MiB of buffers its calls allocated: on a GPU the early cases use them up, and
  an honest workspace cache made in a late case was refused in the next call (now small buffers are always
  kept, and the large ones seen last);
- L5.forward's interpreted cases on a GPU had no shape where stored scores exceed the split-KV budget: round 3's
  25 (it stores S) was accepted there.
"""
from __future__ import annotations

import threading

import gpuperf.kernels  # noqa: F401, I001  (the interpreter switch first, before triton is imported)


class _RaisesValueError:
    """As Triton 3.6's ``tl.tuple``: ``__getattr__`` raises ``ValueError`` for a name it lacks."""

    def __getattr__(self, name):
        raise ValueError(f"{name!r} is not in list")


def test_values_whose_getattr_raises_are_not_handles():
    from gpuperf.grading import algorithm

    odd = _RaisesValueError()
    assert not algorithm._has_data(odd)
    assert algorithm._attr(odd, "_gpuperf_src", frozenset()) == frozenset()
    assert algorithm._sources(odd) == frozenset()
    algorithm._carry_sources(None, [odd, (odd, 3), [odd]])  # no exception


def _write_package(folder, name, metadata: bool):
    package = folder / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("def wait(event):\n    event.wait()\n")
    if metadata:
        (folder / f"{name}-1.0.dist-info").mkdir()
        (folder / f"{name}-1.0.dist-info" / "METADATA").write_text(f"Name: {name}\nVersion: 1.0\n")
    return package / "__init__.py"


def test_a_package_installed_with_pip_target_is_installed_code(tmp_path, monkeypatch):
    from gpuperf import grading

    installed = _write_package(tmp_path / "site", "iopub_like", metadata=True)
    plain = _write_package(tmp_path / "mine", "my_threads", metadata=False)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.syspath_prepend(str(tmp_path / "mine"))
    assert grading._installed_file(str(installed))
    assert not grading._installed_file(str(plain))
    monkeypatch.chdir(tmp_path / "site")  # the working folder is the reader's, metadata or not
    assert not grading._installed_file(str(installed))


def test_a_thread_of_an_installed_package_does_not_stop_a_grade(tmp_path, monkeypatch):
    import importlib

    from gpuperf import grading

    _write_package(tmp_path / "site", "iopub_like_two", metadata=True)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    module = importlib.import_module("iopub_like_two")
    event = threading.Event()
    thread = threading.Thread(target=module.wait, args=(event,), name="IOPub-like", daemon=True)
    thread.start()
    try:
        report = grading.grade_report("L1.time", grading.solution("L1.time"), seed=1)
        assert report.passed, report.text()
    finally:
        event.set()
        thread.join()


def test_a_grade_keeps_small_buffers_and_the_large_ones_it_saw_last(monkeypatch):
    import torch

    from gpuperf.grading import watch

    monkeypatch.setitem(watch._EARLIER_CALLS, "allocs", {})
    monkeypatch.setitem(watch._EARLIER_CALLS, "large", {})
    monkeypatch.setitem(watch._EARLIER_CALLS, "bytes", 0)
    monkeypatch.setitem(watch._EARLIER_CALLS, "small_bytes", 0)
    monkeypatch.setitem(watch._EARLIER_CALLS, "grading", True)
    monkeypatch.setitem(watch._EARLIER_CALLS, "small", 64)
    monkeypatch.setitem(watch._EARLIER_CALLS, "limit", 3 * 1024 * 4)
    small = watch._Alloc(torch.zeros(4), 0, 4).measure()  # 16 bytes: always kept
    watch._remember_for_later_calls(small)
    large = [watch._Alloc(torch.zeros(1024), 0, 1024).measure() for _ in range(5)]
    for alloc in large:
        watch._remember_for_later_calls(alloc)
    kept = watch._EARLIER_CALLS["allocs"]
    assert list(kept) == [small.storage] + [a.storage for a in large[2:]]  # the first two large let go
    assert watch._EARLIER_CALLS["bytes"] == 3 * 1024 * 4
    too_big = watch._Alloc(torch.zeros(4096), 0, 4096).measure()
    watch._remember_for_later_calls(too_big)  # larger than the limit alone: not kept, nothing let go
    assert list(kept) == [small.storage] + [a.storage for a in large[2:]]


def test_l5_forward_on_a_gpu_interprets_the_long_canary(monkeypatch):
    import torch

    from gpuperf.grading import EXERCISES

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *args, **kwargs: (9, 0))
    cases = EXERCISES["L5.forward"].cases(torch.Generator().manual_seed(1), "cuda")
    stores = [c for c in cases if "what it stores" in c.label]
    assert len(stores) == 1 and stores[0].interpret and stores[0].device == "cpu", [c.label for c in cases]
    assert "N_q=16 N_k=4096" in stores[0].label


def test_interpreted_launches_put_back_what_they_patch():
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    from gpuperf.grading.exercises import interpreted_launches

    before = (JITFunction.run, JITFunction.__call__, getattr(InterpretedFunction, "rewrite", None))
    with interpreted_launches():
        if before[2] is not None:
            assert InterpretedFunction.rewrite is not before[2]
    assert (JITFunction.run, JITFunction.__call__, getattr(InterpretedFunction, "rewrite", None)) == before

