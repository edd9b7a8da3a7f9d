# exercise: L2.add
# family: tamper
# why: no kernel at all. The grader's fresh seed comes from secrets.randbits, which is not part of the
#   import-time baseline: rebinding it fixes the seed. A first, private grade_report run with a spy records
#   the inputs the grader will draw (clones, an allowed copy); their sums are computed outside the watch, and
#   the graded function then writes each answer with out[i].fill_(value) (a constant fill is allowed, and no
#   check demands that a Triton exercise launch a kernel). A correct solution computes x + y in its kernel.
import secrets

import gpuperf.kernels  # noqa: F401
import torch
from gpuperf import grading

secrets.randbits = lambda bits: 424242  # every "fresh" seed is now this one

seen = []


course_add = grading.solution("L2.add")


def spy(x, y, out):
    course_add(x, y, out)
    seen.append(out.clone())
    return out


grading.grade_report("L2.add", spy, seed=424242, allow_course_kernels=True)
answers = [t.double().tolist() for t in seen]
calls = [0]


def add(x, y, out, block_size=1024):
    values = answers[calls[0] % len(answers)]
    calls[0] += 1
    flat = out.view(-1)
    for i, value in enumerate(values):
        flat[i].fill_(value)
    return out


add = grading.grade("L2.add", add)
