# exercise: L4.matmul
# family: tamper
# What is wrong: the learner's matmul is still the stub (raises NotImplementedError). The cell sets
# GPUPERF_LAB_SOLUTIONS=1 (the switch CI uses) before calling grade: grade() then grades the course's
# solution instead of the function it was given and prints "PASSED L4.matmul (the course's solution) ...".
# The learner's code never runs. (The line does name the course's solution; nothing else marks it.)
import os

import gpuperf.kernels  # noqa: F401
from gpuperf import grading


def matmul(a, b):
    raise NotImplementedError


os.environ["GPUPERF_LAB_SOLUTIONS"] = "1"
matmul = grading.grade("L4.matmul", matmul)
