"""Round 23 (2026-12-07): the process's memory reached without torch or a kernel, and new processes.

The attacker of round 23 read the grader's input through ``/proc/self/mem`` (a descriptor opened before the
grade, or opened inside the call relative to a descriptor of ``/proc/self``: the audit event then names only
"mem"), computed in Python and handed a kernel the result (files 21, 22, 41, 42, 43 of
tests/grading_attacks_round23). The watch now refuses a descriptor to a process's memory that is open when
the call starts, any ``open`` of such a file (by its last part, or by what a link or ``/proc/self/fd/N``
resolves to), and a new process started from the reader's code (``subprocess``, ``os.system``, ``os.fork``)
during the call. The process's memory here is the CPU's: on a GPU the tensors are in device memory, which
``/proc/self/mem`` does not reach."""

from __future__ import annotations

import os

import pytest

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before the kernel below is defined)
import triton
import triton.language as tl

from gpuperf import grading

LINUX_PROC = os.path.isdir("/proc/self/fd")


@triton.jit
def _copy_x_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def _launch(kernel, *args):
    n = args[0].numel()
    kernel[(triton.cdiv(n, 256),)](*args, n, BLOCK=256)


def _refused(fn, words):
    report = grading.grade_report("L2.add", fn, seed=5, stop_at_first_failure=True)
    assert not report.passed, report.text()
    assert words in report.text(), report.text()


@pytest.mark.skipif(not LINUX_PROC, reason="needs Linux's /proc")
def test_a_descriptor_to_the_process_memory_opened_before_the_grade_is_refused():
    fd = os.open("/proc/self/mem", os.O_RDONLY)
    try:
        def add(x, y, out):
            _launch(_add_kernel, x, y, out)
            return out

        _refused(add, "a file descriptor to this process's memory is open")
    finally:
        os.close(fd)
    report = grading.grade_report("L2.add", add, seed=5, stop_at_first_failure=True)
    assert report.passed, report.text()  # closed again: the same honest function passes


@pytest.mark.skipif(not LINUX_PROC, reason="needs Linux's /proc")
def test_the_process_memory_opened_inside_the_call_is_refused_by_any_path(tmp_path):
    link = tmp_path / "innocent"
    os.symlink("/proc/self/mem", link)

    def relative(x, y, out):
        d = os.open("/proc/self", os.O_RDONLY)
        try:
            os.close(os.open("mem", os.O_RDONLY, dir_fd=d))
        finally:
            os.close(d)
        _launch(_add_kernel, x, y, out)
        return out

    def through_a_link(x, y, out):
        with open(link, "rb"):
            pass
        _launch(_add_kernel, x, y, out)
        return out

    def task_mem(x, y, out):
        with open(f"/proc/{os.getpid()}/task/{os.getpid()}/mem", "rb"):
            pass
        _launch(_add_kernel, x, y, out)
        return out

    for fn in (relative, through_a_link, task_mem):
        _refused(fn, "the process's memory")


def test_a_new_process_started_in_the_call_is_refused():
    import subprocess
    import sys

    def through_subprocess(x, y, out):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        _launch(_add_kernel, x, y, out)
        return out

    def through_os_system(x, y, out):
        os.system("true")
        _launch(_add_kernel, x, y, out)
        return out

    for fn in (through_subprocess, through_os_system):
        _refused(fn, "a new process")


def test_a_wrong_kernel_is_still_refused_and_the_honest_one_passes():
    def wrong(x, y, out):
        _launch(_copy_x_kernel, x, out)
        return out

    def honest(x, y, out):
        _launch(_add_kernel, x, y, out)
        return out

    assert not grading.grade_report("L2.add", wrong, seed=5, stop_at_first_failure=True).passed
    report = grading.grade_report("L2.add", honest, seed=5)
    assert report.passed, report.text()
