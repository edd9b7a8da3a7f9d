# exercise: L5.forward
# family: ordinary
# why: One key block covering all keys (BLOCK_N = next power of two of N_k): the whole score row lives on chip, which is not FlashAttention and cannot run at N_k = 16k on a GPU (registers/shared memory). A correct solution loops over key blocks of a fixed size.
# expect: ACCEPTED if the forward's grader does not look at the key block
import _common; _common.setup()
import triton
from gpuperf import grading
import _attn


def attention_forward(q, k, v, causal=False):
    return _attn.forward(q, k, v, causal, block_n=max(16, triton.next_power_of_2(k.shape[2])), block_m=16)


attention_forward = grading.grade("L5.forward", attention_forward)
