"""Fixtures shared by the tests in this folder (the subfolders keep their own conftest.py as well)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import yaml

import kernel_start

# Triton's interpreter is switched on (on a machine without a CUDA GPU) when gpuperf.kernels is imported, and
# Triton reads the switch when it is first imported: import it before any test module imports triton, so a test
# file run alone behaves as it does in the whole suite.
import gpuperf.kernels  # noqa: E402, F401, I001
# The grader's front end keeps triton.language as it was when gpuperf.grading was imported, before the
# interpreter patches it (a lab imports the grader in its first cell): import it before any test runs a kernel,
# or a worker that ran kernel tests first grades with the front end's checks off (found 2026-12-07: the 32-bit
# loop-sum tests of rounds 22 and 23 passed wrong files after tests/kernels/test_matmul_splitk.py).
import gpuperf.grading  # noqa: E402, F401, I001

# A notebook's kernel that never answers nbval is replaced by a fresh one (tests/kernel_start.py).
kernel_start.install()

ROOT = Path(__file__).resolve().parents[1]

try:  # no property test may fail because the machine is busy (issue: a test suite that never flakes)
    from hypothesis import HealthCheck, settings

    # Hypothesis's defaults fail an example that runs over 200 ms (deadline) and a strategy that is slow to
    # draw (HealthCheck.too_slow): both are wall-clock timings, which a loaded 2-core CI machine or a
    # compiling GPU run can exceed. The course's profile turns both off for every test; a test's own
    # @settings(...) inherits it.
    settings.register_profile("course", deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("course")
except ImportError:  # hypothesis is in requirements.txt; the tests that use it import it themselves
    pass


@pytest.fixture(autouse=True)
def _release_cuda_memory(request):
    """After each test, a process that used CUDA hands its cached GPU memory back (``empty_cache``), so a
    worker that once needed a large buffer does not keep it from the notebooks and tests running beside it
    (on 2026-12-01 six notebook cells of a `make test-gpu` run failed for lack of GPU memory while two other
    processes held 65.6 GiB each). With ``GPUPERF_CUDA_MEMLOG=<file>`` each test whose peak reserved memory
    passed 1 GiB is appended to that file (GiB, test id), to find the test that needs the most."""
    yield
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return
    log = os.environ.get("GPUPERF_CUDA_MEMLOG")
    peak = torch.cuda.max_memory_reserved()
    if log and peak > 2**30:
        with open(log, "a") as f:
            f.write(f"{peak / 2**30:.1f}\t{request.node.nodeid}\n")
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.empty_cache()


def _toc_entries(node) -> list[str]:
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("file", "root"):
                found.append(value)
            else:
                found.extend(_toc_entries(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_toc_entries(item))
    return found


@pytest.fixture(scope="session")
def toc_files() -> list[str]:
    """Every page `_toc.yml` lists (its `root` and each `file`), in order, duplicates kept."""
    return _toc_entries(yaml.safe_load((ROOT / "_toc.yml").read_text()))


def _check_every_control_changes_the_text(live, names) -> None:
    """Each named control of a live explorer, stepped to its next option, changes the text from the default
    state, and stepping it back restores that text exactly."""
    before = live.text.value
    for name in names:
        widget = live.controls[name]
        old = widget.value
        widget.value = (old + 1) % len(widget.options)
        assert live.text.value != before, name
        widget.value = old
        assert live.text.value == before


@pytest.fixture
def every_control_changes_the_text():
    """The check above, as a function a test calls with ``(live_explorer, control_names)``."""
    return _check_every_control_changes_the_text



@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: unknown (and unused) without it
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` (make test-gpu) hands the tests to the workers one by one, so that a file of
    kernel tests, each compiling its kernels, spreads over every worker; a notebook's cells (nbval) share
    one kernel and stay together on one worker, in order. (pytest-xdist's own loadgroup needs an
    ``xdist_group`` mark on each cell and, with pytest 9.2, no longer applies it.) Notebooks, the units
    with the most items, are handed out first (xdist's default ``--loadscope-reorder``)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    return notebooks_together_scheduler()(config, log)


def notebooks_together_scheduler():
    """pytest-xdist's loadgroup scheduler, with every notebook one group (imported only under xdist)."""
    from xdist.scheduler import LoadGroupScheduling

    class NotebooksTogether(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path.endswith(".ipynb") else super()._split_scope(nodeid)

    return NotebooksTogether


#: Tests that add nothing where a CUDA GPU runs the kernels compiled, by path or node id prefix: marked
#: redundant_on_gpu here (make test-gpu deselects them; make test runs them). Files whose owners mark their
#: tests themselves need no entry.
REDUNDANT_ON_GPU = (
    # compiles the Part IV kernels for sm_90 on a CPU; on a GPU the kernel tests compile and run them
    "tests/kernels/test_compile_sm90.py",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(REDUNDANT_ON_GPU):
            item.add_marker(pytest.mark.redundant_on_gpu)
