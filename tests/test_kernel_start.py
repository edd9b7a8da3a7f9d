"""nbval's kernels start over Unix sockets, and again when one does not answer (tests/kernel_start.py)."""

import os
import queue

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
    assert kernel_start.install()  # a second install keeps the one wrapper
    assert getattr(nbval_kernel.start_new_kernel, "retries_kernel_start", False)


def test_socket_paths_are_fresh_and_short(tmp_path):
    first, second = kernel_start.ipc_address(str(tmp_path)), kernel_start.ipc_address(str(tmp_path))
    assert first != second and first.startswith(str(tmp_path)) and len(first) + 3 <= 104
    with pytest.raises(ValueError, match="104"):
        kernel_start.ipc_address("/" + "d" * 100)


@pytest.mark.skipif(os.name == "nt", reason="ZeroMQ has no Unix-domain sockets on Windows")
def test_a_kernel_started_over_unix_sockets_runs_code_and_leaves_no_socket_files():
    pytest.importorskip("nbval.kernel")
    from nbval.kernel import CURRENT_ENV_KERNEL_NAME

    manager, client = kernel_start.start_new_kernel(startup_timeout=120, kernel_name=CURRENT_ENV_KERNEL_NAME,
                                                    stderr=open(os.devnull, "w"))
    try:
        assert manager.transport == "ipc"
        sockets = [f"{manager.ip}-{port}" for port in (manager.shell_port, manager.iopub_port,
                                                        manager.stdin_port, manager.control_port,
                                                        manager.hb_port)]
        assert all(os.path.exists(path) for path in sockets)
        reply = client.execute_interactive("x = 6 * 7", timeout=120)
        assert reply["content"]["status"] == "ok"
        client.execute("print(x)")
        printed = ""
        while "42" not in printed:
            try:
                message = client.get_iopub_msg(timeout=60)
            except queue.Empty:
                break
            if message["msg_type"] == "stream":
                printed += message["content"]["text"]
        assert printed.strip() == "42"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert not any(os.path.exists(path) for path in sockets)
