"""nbval's kernel start is retried when a kernel does not answer (tests/kernel_start.py)."""

import pytest

import kernel_start


def test_a_start_that_fails_twice_is_retried_and_returns_the_third():
    calls = []

    def start(*args, **kwargs):
        calls.append((args, kwargs))
        if len(calls) < 3:
            raise RuntimeError("Kernel didn't respond in 60 seconds")
        return "km", "kc"

    wrapped = kernel_start.retrying(start, attempts=3)
    assert wrapped(startup_timeout=60, kernel_name="k") == ("km", "kc")
    assert calls == [((), {"startup_timeout": 60, "kernel_name": "k"})] * 3


def test_the_last_error_is_raised_and_other_errors_are_not_retried():
    calls = []

    def silent(**kwargs):
        calls.append(kwargs)
        raise RuntimeError("Kernel didn't respond in 60 seconds")

    with pytest.raises(RuntimeError, match="respond"):
        kernel_start.retrying(silent, attempts=2)()
    assert len(calls) == 2

    def broken(**kwargs):
        calls.append(kwargs)
        raise ValueError("no such kernel")

    calls.clear()
    with pytest.raises(ValueError):
        kernel_start.retrying(broken)()
    assert len(calls) == 1


def test_wrapping_twice_wraps_once_and_attempts_must_be_positive():
    wrapped = kernel_start.retrying(lambda: 1)
    assert kernel_start.retrying(wrapped) is wrapped
    with pytest.raises(ValueError, match="attempts"):
        kernel_start.retrying(lambda: 1, attempts=0)


def test_this_run_wraps_nbvals_kernel_start():
    nbval_kernel = pytest.importorskip("nbval.kernel")
    assert getattr(nbval_kernel.start_new_kernel, "retries_kernel_start", False)
