"""Round 22 (fourteenth session): 9 wrong files ran their own code after the grader's watch had closed, through
Python's method lookup on the objects the grader reads after the call:

- 38, 39: the result was a tuple subclass whose ``__iter__`` (run when the grader unpacked it) overwrote the
  outputs with torch's exact values;
- 40, 41, 43, 44, 45: an instance attribute ``detach`` on a plain tensor handed back (or on the grader's own
  ``out``, or on the gradients a backward returned): ``compare()``'s ``yours.detach()`` ran it;
- 51, 52: the same on an input (``y.double``, ``q.detach``), which changed the float64 reference built after the
  call.

Now ``Runner.call`` looks, right after the reader's code and before any method of what it can reach is called,
at types and instance dictionaries only: every tensor handed over (and its gradient, and its storage object)
and every tensor returned must carry no instance attribute, and a result must be a plain tensor, a plain
``tuple``/``list`` of them, ``None`` or a number (``_attribute_problems``, ``_result_problems``). ``compare()`` and
the float64 references call ``detach``/``double``/``to`` through ``torch._C.TensorBase`` as well."""
from __future__ import annotations

from pathlib import Path

import pytest

import gpuperf.kernels  # noqa: F401, I001  (the interpreter switch first, before triton is imported)

from attack_files import load_attack

FOLDER = Path(__file__).resolve().parent / "grading_attacks_round22"
WATCH_FILES = sorted(p for p in FOLDER.glob("[0-9]*.py") if p.stem[:2] in ("38", "39", "40", "41", "43", "44",
                                                                           "45", "51", "52"))
SAID = {"38": "a subclass of tuple", "39": "a subclass of tuple", "51": "attribute `double`"}


def test_every_watch_file_is_here():
    assert len(WATCH_FILES) == 9, [p.name for p in WATCH_FILES]


@pytest.mark.parametrize("path", WATCH_FILES, ids=lambda p: p.stem)
def test_code_run_after_the_watch_is_refused_at_the_first_case(path):
    from gpuperf import grading

    key, fn = load_attack(path)
    report = grading.grade_report(key, fn, seed=1, stop_at_first_failure=True)
    assert not report.passed, report.text()
    failed = report.failures[0]
    assert failed is report.results[0] or report.results.index(failed) <= 1, report.text()
    assert SAID.get(path.stem[:2], "attribute `detach`") in failed.message, report.text()


def test_a_plain_tensor_has_no_instance_attributes_of_torchs():
    import torch

    from gpuperf.grading.exercises import _attribute_problems, _result_problems

    x = torch.randn(3, requires_grad=True)
    y = (x * 2).sum()
    y.backward()
    p = torch.nn.Parameter(torch.randn(2))
    assert _attribute_problems([("x", x), ("y", y), ("p", p)]) == []
    assert _result_problems((x * 2, None, 1, [x]), "your function returned") == []
    x.grad.double = lambda: None
    assert "attribute `double` on its gradient (x)" in _attribute_problems([("x", x)])[0]
    z = torch.zeros(2)
    torch.Tensor.untyped_storage(z).data_ptr = lambda: 0
    assert "`untyped_storage().data_ptr`" in _attribute_problems([("z", z)])[0]


def test_a_result_that_poses_as_a_tuple_or_a_tensor_is_refused():
    import torch

    from gpuperf.grading.exercises import _result_problems

    class Posing:
        @property
        def __class__(self):
            raise AssertionError("the grader read __class__")

    class Pair(tuple):
        pass

    class Sub(torch.Tensor):
        pass

    assert "an object of type" in _result_problems(Posing(), "your function returned")[0]
    assert "a subclass of tuple" in _result_problems(Pair((1, 2)), "your function returned")[0]
    assert "a subclass of tuple" in _result_problems((Pair(()),), "your function returned")[0]
    assert "subclass Sub" in _result_problems(torch.zeros(1).as_subclass(Sub), "your function returned")[0]


def test_compare_reads_the_tensor_through_torchs_own_detach():
    import torch

    from gpuperf.grading.core import Tolerance, compare

    yours = torch.zeros(3)
    yours.detach = lambda: torch.ones(3, dtype=torch.float64)
    r = compare("c", "out", yours, torch.ones(3, dtype=torch.float64), Tolerance(0.0, 0.0, "exact"))
    assert not r.passed


@pytest.mark.parametrize("key", ["L2.add", "L3.online", "L4.matmul", "L5.tiled", "L5.forward", "L6.backward",
                                 "L6.autograd"])
def test_the_course_solution_still_passes_its_first_cases(key):
    from gpuperf import grading
    from gpuperf.grading.exercises import EXERCISES

    fn = EXERCISES[key].load_solution()
    first = []

    def only(label):
        first.append(label)
        return len(first) <= 2

    report = grading.grade_report(key, fn, seed=1, stop_at_first_failure=True, only=only)
    assert report.passed, report.text()


def test_the_watch_reads_a_storage_address_through_torchs_classes():
    """Found while closing round 22: the watch's ``_storage_ptr`` called ``t.untyped_storage().data_ptr()`` with
    the watch standing aside, so an instance attribute ``untyped_storage`` set on an input inside the function ran
    the reader's code unwatched (an L5.tiled that returned zeros passed: the attribute wrote torch's attention
    into the output and was deleted before returning). Now no instance attribute is called there."""
    import torch

    from gpuperf.grading.watch import _raw_storage_ptr, _storage_ptr

    t = torch.zeros(4)
    called = []
    t.untyped_storage = lambda: called.append(1)
    torch._C.TensorBase.untyped_storage(t).data_ptr = lambda: called.append(2)
    assert _storage_ptr(t) == _raw_storage_ptr(t) == torch._C.TensorBase.data_ptr(t)
    assert called == []


def test_an_attribute_set_and_deleted_inside_the_call_runs_nothing_unwatched():
    """The L5.tiled of the test above, graded: zeros, with torch's attention written by the attribute."""
    import torch
    import torch.nn.functional as F

    from gpuperf import grading

    ran = []

    def tiled(q, k, v, br, bc):
        o = torch.zeros_like(q)
        real = torch._C.TensorBase.untyped_storage

        def exact(q=q, k=k, v=v, o=o):
            if not ran:
                ran.append(1)
                with torch.no_grad():
                    torch._C.TensorBase.copy_(o, F.scaled_dot_product_attention(q, k, v))
            return real(q)

        q.untyped_storage = exact
        try:
            q.view(-1), q[..., :1, :].clone(), q.contiguous() + 1
        finally:
            del q.untyped_storage
        return o

    report = grading.grade_report("L5.tiled", tiled, seed=1, stop_at_first_failure=True)
    assert not report.passed, report.text()
    assert ran == [], report.text()
