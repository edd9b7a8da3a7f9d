# exercise: L6.backward
# family: ordinary
# why: Accumulates dQ from every key-block program with a plain load-add-store (no tl.atomic_add): programs of different key blocks race on the same dQ rows on a GPU. A correct solution uses atomics or a separate dQ kernel over query blocks.
# expect: ACCEPTED on the CPU (the interpreter runs programs in order, so the race is hidden); on a GPU the lost updates should show
import _common; _common.setup()
from gpuperf import grading
import _bwd


def attention_backward(q, k, v, o, lse, do, causal=False):
    return _bwd.backward(q, k, v, o, lse, do, causal, dq_race=True)


attention_backward = grading.grade("L6.backward", attention_backward)
