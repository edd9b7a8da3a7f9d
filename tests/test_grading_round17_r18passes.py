"""Round 17's open finding, closed in the tenth session (r18passes): the causal pass count reads a program's
blocks of queries from the rows of q that reach each walk's tl.dot (``_query_walks``), not from the order of its
loads. 01, 02 and 16 (two walks for one block of queries: keys loaded before q, or a row more in the first walk)
and h01 (two blocks loaded first, walked in turn) are in ``test_grading_round17*.py``; here the honest kernel
that refused the ninth session's rule (``attention_paired_blocks_kt``: blocks p and last-p, each two halves of
16 rows sharing every tile of keys, walked in turn; the middle pair's blocks touch), a block as two halves,
and a decoy: 01 with its second walk's keys also multiplied with a far block of q (times 0), which must not make the
second walk a walk of another block (nor ``q + 0 * far`` in its product), and an honest persistent kernel
whose running max is reset from the previous block's (its lineage carries every block held before)."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)
import math

import torch
import triton
import triton.language as tl

CASE = "the key blocks it visits"


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


def _grade(key, fn, seed):
    if not _interpreted_here():
        pytest.skip("passes are counted by the interpreter")
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=seed, only=lambda label: CASE in label)
    assert report.results, f"{key}: no case says {CASE!r}"
    return report


@pytest.mark.parametrize("name", ["attention_paired_blocks_kt", "attention_halves_skip"])
@pytest.mark.parametrize("seed", [11, 12])
def test_paired_and_halved_blocks_pass_the_causal_pass_count(name, seed):
    import grading_domain_solutions as solutions

    report = _grade("L5.causal", getattr(solutions, name), seed)
    assert report.passed, f"{name} refused (seed {seed}):\n{report.text()}"


DECOY = ("        s = tl.dot(q, tl.trans(k), input_precision=\"ieee\") * scale\n"
         "        visible = keys[None, :] < N_K\n",
         "        far = N_Q - 1 - tl.arange(0, BLOCK_M)\n"
         "        qf = tl.load(q_head + far[:, None] * HEAD_DIM + dims[None, :])\n"
         "        s = tl.dot(q, tl.trans(k), input_precision=\"ieee\") * scale\n"
         "        s = s + 0.0 * tl.sum(tl.dot(qf, tl.trans(k), input_precision=\"ieee\"), axis=0)[None, :]\n"
         "        visible = keys[None, :] < N_K\n")


def test_a_decoy_product_with_a_far_block_makes_no_block_of_its_own():
    key, fn = load_attack_variant(find_attack(17, "01"), DECOY)
    report = _grade(key, fn, 11)
    assert not report.passed, f"01 with a decoy product accepted by {key}:\n{report.text()}"
    assert "reads K twice" in report.failures[0].message, report.failures[0].message


DECOY_IN_Q = (DECOY[0], "        far = N_Q - 1 - tl.arange(0, BLOCK_M)\n"
              "        qf = tl.load(q_head + far[:, None] * HEAD_DIM + dims[None, :])\n"
              "        s = tl.dot(q + 0.0 * qf, tl.trans(k), input_precision=\"ieee\") * scale\n"
              "        visible = keys[None, :] < N_K\n")


def test_a_far_block_added_to_q_in_the_product_makes_no_block_of_its_own():
    key, fn = load_attack_variant(find_attack(17, "01"), DECOY_IN_Q)
    report = _grade(key, fn, 11)
    assert not report.passed, f"01 with q + 0 * far accepted by {key}:\n{report.text()}"
    assert "reads K twice" in report.failures[0].message, report.failures[0].message


# an honest persistent causal forward: 2 programs a head, each walking blocks pid, pid + 2, ... in turn, its
# running max reset from the previous block's (so the max's lineage carries every block of q held before)
@triton.jit
def _persistent_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, P, CAUSAL: tl.constexpr,
               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    m = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for block_m in range(pid, tl.cdiv(N_Q, BLOCK_M), P):
        rows = block_m * BLOCK_M + tl.arange(0, BLOCK_M)
        q = tl.load(q_head + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
        m = tl.where(m == m, float("-inf"), m)
        l = l * 0.0
        acc = acc * 0.0
        end = N_K
        if CAUSAL:
            end = tl.minimum(N_K, (block_m + 1) * BLOCK_M)
        for start in range(0, end, BLOCK_N):
            keys = start + tl.arange(0, BLOCK_N)
            k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
            v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
            s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
            visible = keys[None, :] < N_K
            if CAUSAL:
                visible = visible & (keys[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, axis=1))
            shift = tl.where(m_new == float("-inf"), 0.0, m_new)
            alpha = tl.exp(m - shift)
            p = tl.exp(s - shift[:, None])
            l = l * alpha + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
            m = m_new
        tl.store(o_ptr + head * N_Q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
                 (acc / l[:, None]).to(o_ptr.dtype.element_ty), mask=rows[:, None] < N_Q)
        tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def persistent_carry(q, k, v, causal=False):
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    lse = torch.empty((batch, heads, n_q), dtype=torch.float32, device=q.device)
    _persistent_kernel[(2, batch * heads)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), 2, CAUSAL=causal,
                                   HEAD_DIM=d, BLOCK_M=32, BLOCK_N=32)
    return o, lse


@pytest.mark.parametrize("seed", [11, 12])
def test_a_persistent_kernel_with_a_carried_running_max_passes(seed):
    report = _grade("L5.causal", persistent_carry, seed)
    assert report.passed, f"persistent kernel refused (seed {seed}):\n{report.text()}"
