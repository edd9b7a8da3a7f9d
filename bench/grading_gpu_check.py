"""Grade the course's solutions and the graders' set of wrong and right solutions on this machine's GPU
(compiled), and print accepted / rejected for each: the GPU side of tests/test_grading_domain.py.

Usage, from the repository root on a GPU machine:
    PYTHONPATH=$PWD/lib python3 bench/grading_gpu_check.py [OUT_DIR] [--seed N] [--only SUBSTRING]

Every exercise's course solution must pass all its cases (the GPU cases, the case past 2^31 elements when
the GPU has the memory, and the cases whose kernels run through Triton's interpreter on the CPU to count
blocks, passes and races); every solution in ``WRONG`` of tests/grading_domain_solutions.py must be
rejected and every one in ``RIGHT`` accepted (all cases, not the CPU tests' subsets). Prints one line per
solution and the first lines of each surprise's report; writes the same to OUT_DIR/grading_gpu_check.txt
when OUT_DIR is given. Exit status 1 on any surprise. The seed is printed: replay one with
``grading.grade_report(key, fn, seed=SEED)``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import secrets
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _solutions_module():
    spec = importlib.util.spec_from_file_location("grading_domain_solutions",
                                                  ROOT / "tests" / "grading_domain_solutions.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton looks a kernel's module up by name
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", nargs="?", default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--only", default="")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "lib"))
    import gpuperf.kernels  # noqa: F401  (before any @triton.jit)
    import torch

    from gpuperf import grading

    seed = args.seed if args.seed is not None else secrets.randbits(31)
    device = "cuda" if torch.cuda.is_available() and not gpuperf.kernels.interpreter_enabled() else "cpu"
    lines = [f"grading check on {torch.cuda.get_device_name() if device == 'cuda' else 'CPU'}, seed {seed}"]
    print(lines[0], flush=True)
    S = _solutions_module()
    runs = [(f"course {key}", key, grading.solution(key), True, True) for key in grading.EXERCISES]
    runs += [(f"wrong {name}", key, fn, False, False) for name, (key, fn, _) in sorted(S.WRONG.items())]
    runs += [(f"right {name}", key, fn, True, False) for name, (key, fn, _) in sorted(S.RIGHT.items())]
    surprises = 0
    for label, key, fn, should_pass, course in runs:
        if args.only and args.only not in label:
            continue
        start = time.perf_counter()
        report = grading.grade_report(key, fn, seed=seed, device=device,
                                      graded="the course's solution" if course else "yours",
                                      stop_at_first_failure=not should_pass)
        verdict = "accepted" if report.passed else "rejected"
        ok = report.passed == should_pass
        surprises += not ok
        line = (f"{'ok      ' if ok else 'SURPRISE'} {label:42s} {key:12s} {verdict} "
                f"({time.perf_counter() - start:.1f} s)")
        print(line, flush=True)
        lines.append(line)
        if not ok or (not report.passed and not should_pass):
            detail = report.text().splitlines()[2:8]
            lines += ["    " + d for d in detail]
            if not ok:
                print("\n".join("    " + d for d in detail), flush=True)
    summary = f"{surprises} surprise(s); replay: grading.grade_report(KEY, FN, seed={seed})"
    print(summary)
    lines.append(summary)
    if args.out_dir:
        out = Path(args.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "grading_gpu_check.txt").write_text("\n".join(lines) + "\n")
    return 1 if surprises else 0


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.exit(main(sys.argv[1:]))
