"""The labs (labs/L*.ipynb): solutions shown = solutions graded, stubs with the solutions' signatures, and
every lab run top to bottom with the solutions in place (GPUPERF_LAB_SOLUTIONS=1), every grader passing.

The labs as shipped (stubs unfinished) run under nbval in `make test` like the chapters; an unfinished
exercise is reported by its grader, not raised."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LABS = sorted((ROOT / "labs").glob("L*.ipynb"))
_spec = importlib.util.spec_from_file_location("lab_solutions", ROOT / "tools" / "lab_solutions.py")
lab_solutions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lab_solutions)


def _ids(paths):
    return [p.name for p in paths]


def _graded_keys(nb) -> list[str]:
    keys = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            keys += re.findall(r'grading\.grade\("([^"]+)"', "".join(cell["source"]))
    return keys


def test_there_are_labs():
    assert LABS, "no labs/L*.ipynb"


@pytest.mark.parametrize("path", LABS, ids=_ids(LABS))
def test_solutions_and_stubs_match_the_package(path):
    problems = lab_solutions.problems(path, fix=False)
    assert not problems, "\n".join(problems) + "\n(run: python tools/lab_solutions.py)"


@pytest.mark.parametrize("path", LABS, ids=_ids(LABS))
def test_every_exercise_is_graded_with_hints_before_its_solution(path):
    from gpuperf import grading

    nb = json.loads(path.read_text())
    keys = _graded_keys(nb)
    assert keys, f"{path.name}: no grading.grade(...) cell"
    unknown = [k for k in keys if k not in grading.EXERCISES]
    assert not unknown, f"{path.name}: graded exercises not in gpuperf.grading.EXERCISES: {unknown}"
    assert len(keys) == len(set(keys)), f"{path.name}: an exercise is graded twice"
    cells = nb["cells"]
    for i, cell in enumerate(cells):
        if cell.get("metadata", {}).get("gpuperf", {}).get("solution_source"):
            before = "".join("".join(c["source"]) for c in cells[max(0, i - 3):i] if c["cell_type"] == "markdown")
            assert "<summary>Hint 1" in before, f"{path.name} cell {i}: no collapsed hint before the solution"
    hints = [c for c in cells if c["cell_type"] == "markdown" and "<summary>Hint" in "".join(c["source"])]
    assert hints and all("".join(c["source"]).lstrip().startswith("<details>") for c in hints), (
        f"{path.name}: a hint is not collapsed in a <details> block")


@pytest.mark.parametrize("path", LABS, ids=_ids(LABS))
def test_the_lab_opens_with_the_environment_report(path):
    nb = json.loads(path.read_text())
    third = "".join(nb["cells"][2]["source"])
    assert "import gpuperf.kernels" in third.split("import torch")[0], (
        f"{path.name}: import gpuperf.kernels before torch/triton (the interpreter switch)")
    assert "labs.show_environment(" in third, f"{path.name}: cell 3 must show the environment report"


@pytest.mark.parametrize("path", LABS, ids=_ids(LABS))
def test_the_lab_runs_with_the_solutions_and_every_grader_passes(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("GPUPERF_LAB_SOLUTIONS", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(str(path), as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    keys = _graded_keys(json.loads(path.read_text()))
    passed = re.findall(r"^SOLUTION OK (\S+) .*the course's solution", text, re.M)
    assert sorted(passed) == sorted(keys), f"{path.name}: graders passed {passed}, expected {keys}:\n{text}"
    assert "NOT YET" not in text and not re.search(r"^PASSED ", text, re.M)


def test_run_lab_runs_a_lab_without_jupyter():
    """tools/run_lab.py, the way to run the labs on a GPU machine without Jupyter, runs a lab with the
    solutions and checks its graders passed."""
    # its own process: the switch is read when gpuperf.grading is imported, which this process has done
    env = dict(os.environ, GPUPERF_LAB_SOLUTIONS="1", MPLBACKEND="Agg",
               PYTHONPATH=str(ROOT / "lib") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "run_lab.py"),
                           str(ROOT / "labs" / "L2-first-triton-kernels.ipynb")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "SOLUTION OK L2.add" in out and "SOLUTION OK L2.chain" in out and "ok in" in out


def test_the_environment_report_says_where_the_kernels_run(monkeypatch):
    from gpuperf import labs

    versions = {"python": "3.12", "torch": "2.11.0", "triton": "3.6.0", "numpy": "2.1", "ipywidgets": "7.7.1"}
    gpu = labs.environment_html("L2", labs.Environment("Tesla T4", True, False, versions))
    assert "compiled on the Tesla T4" in gpu and "Change runtime type" not in gpu
    assert all(v in gpu for v in versions.values()) and "tested: NVIDIA H200" in gpu
    monkeypatch.setattr(labs, "_cuda_available", lambda: False)
    cpu = labs.environment_html("L2", labs.Environment("CPU (Triton interpreter)", False, True, versions))
    assert "No GPU here" in cpu and "Change runtime type" in cpu and "T4 GPU" in cpu
    monkeypatch.setattr(labs, "_cuda_available", lambda: True)
    forced = labs.environment_html("L2", labs.Environment("CPU (Triton interpreter)", False, True, versions))
    assert "TRITON_INTERPRET is set" in forced and "No GPU here" not in forced


def test_the_environment_report_warns_of_tritons_interpreter_with_numpy_2_4(monkeypatch):
    """Triton 3.6's interpreter fails with NumPy 2.4 or later (checked 2026-12-04: every lab passes with
    NumPy 2.2.6 and fails from L3 on with 2.4.6); the report says so and how to fix it, only where the
    interpreter runs."""
    from gpuperf import labs

    assert labs.interpreter_numpy_conflict("3.6.0", "2.4.6") and "numpy<2.4" in labs.interpreter_numpy_conflict(
        "3.6.0", "2.5.2")
    for triton, numpy in (("3.6.0", "2.2.6"), ("3.6.0", "2.1"), ("3.9.0", "2.4.6"), ("?", "2.4"), ("3.6", "")):
        assert labs.interpreter_numpy_conflict(triton, numpy) is None, (triton, numpy)
    versions = {"python": "3.12", "torch": "2.11.0", "triton": "3.6.0", "numpy": "2.4.6", "ipywidgets": "8.1"}
    monkeypatch.setattr(labs, "_cuda_available", lambda: False)
    monkeypatch.setattr(labs, "_interpreter_fixed", lambda: True)  # the course's fix took: nothing to warn of
    cpu = labs.environment_html("L3", labs.Environment("CPU (Triton interpreter)", False, True, versions))
    assert "Warning" not in cpu
    monkeypatch.setattr(labs, "_interpreter_fixed", lambda: False)
    cpu = labs.environment_html("L3", labs.Environment("CPU (Triton interpreter)", False, True, versions))
    assert "Warning" in cpu and "numpy&lt;2.4" in cpu
    gpu = labs.environment_html("L3", labs.Environment("Tesla T4", True, False, versions))
    assert "Warning" not in gpu
