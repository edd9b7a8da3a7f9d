"""Round 9 of issue 30 (2026-12-05): a fresh attacker on all six labs, against 94301db. Its files were lost; the
ones the graders accepted, and the correct solution they refused, are written again from bench/NOTES.md in
tests/grading_attacks_round9 (README.md there says what each does). Closed in r9fix: the causal skip checks
have no slack (a walk one or two blocks past the diagonal, 05 and 06), and each skip case takes one shape with
fewer queries than keys and one with more (a loop bound shifted by N_k - N_q beside a top-left mask, 23-25)."""

from __future__ import annotations

import re

import pytest

from attack_files import attack_folder, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

ATTACKS_9 = attack_folder(9)
SEED = 20261205

#: The case of each exercise that counts the blocks a causal kernel visits (a wrong file is graded on it alone).
SKIP_CASES = {"L5.causal": "the key blocks it visits",
              "L6.backward": "the blocks of queries and keys the backward visits",
              "L6.autograd": "the blocks they visit"}


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


@pytest.mark.parametrize("path", sorted(ATTACKS_9.glob("[0-9]*.py")), ids=lambda p: p.stem)
def test_attack_of_round_9_is_refused_for_the_blocks_it_visits(path):
    """Each wrong file computes the right values; only the blocks its loops visit are wrong: refused on the skip
    case, with a message that says to skip them."""
    if not _interpreted_here():
        pytest.skip("the blocks a kernel visits are counted by the interpreter")
    key, fn = load_attack(path)
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=lambda label: SKIP_CASES[key] in label)
    assert not report.passed, f"{path.name} accepted by {key} (seed {SEED}):\n{report.text()}"
    message = report.failures[0].message
    assert "Skip them" in message and "visited" in message, f"{path.name} ({key}): {message}"
    if path.stem.startswith(("23", "24", "25")):  # told where a shifted bound goes wrong
        assert "fewer queries than keys" in message and "N_k - N_q" in message, f"{path.name}: {message}"


@pytest.mark.parametrize("path", sorted(ATTACKS_9.glob("h[0-9]*.py")), ids=lambda p: p.stem)
def test_honest_solution_of_round_9_passes(path):
    if not _interpreted_here():
        pytest.skip("round 9 was run under the interpreter only")
    key, fn = load_attack(path)
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED)
    assert report.passed, f"{path.name} refused by {key} (seed {SEED}):\n{report.text()}"


def test_each_skip_case_takes_fewer_and_more_queries_than_keys():
    """A loop bound shifted by N_k - N_q is exact on square shapes: each skip case runs one shape with N_q < N_k
    (N_q a multiple of 128, so no block of queries ends in masked-off rows) and one with N_q > N_k."""
    import torch

    from gpuperf import grading

    for key, needle in SKIP_CASES.items():
        for seed in (1, 2, SEED):
            cases = grading.EXERCISES[key].cases(torch.Generator().manual_seed(seed), "cpu")
            labels = [case.label for case in cases if needle in case.label]
            assert len(labels) == 1, (key, seed, labels)
            sizes = [tuple(map(int, pair)) for pair in re.findall(r"N_q=(\d+) N_k=(\d+)", labels[0])]
            assert len(sizes) == 2 and sizes[0][0] < sizes[0][1] and sizes[1][0] > sizes[1][1], labels[0]
            assert sizes[0][0] % 128 == 0, labels[0]


# Correct causal forwards written other ways, which a count without slack must not refuse: a block of keys wider
# than the block of queries, K and V loaded in halves before their products, the diagonal block's lanes past the
# program's last query masked off (a block whose loads cover keys no query of the program sees, inside the block
# that holds its last query, is no hidden block).

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def _forward_blocks(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, CAUSAL: tl.constexpr, D: tl.constexpr,
                    BM: tl.constexpr, BN: tl.constexpr, PARTS: tl.constexpr, DIAG_MASK: tl.constexpr):
    block_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block_m * BM + tl.arange(0, BM)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], mask=rows[:, None] < N_Q, other=0.0)
    m = tl.full((BM,), float("-inf"), dtype=tl.float32)
    l = tl.zeros((BM,), dtype=tl.float32)
    acc = tl.zeros((BM, D), dtype=tl.float32)
    end = N_K
    if CAUSAL:
        end = tl.minimum(N_K, (block_m + 1) * BM)
    for start in range(0, end, BN):
        # the block's first part, then (PARTS = 2) its second, both loaded before any product
        ka = start + tl.arange(0, BN // PARTS)
        kb = ka + BN // PARTS
        la = ka < N_K
        lb = (kb < N_K) & (PARTS == 2)
        if DIAG_MASK:
            la = la & (ka < (block_m + 1) * BM)
            lb = lb & (kb < (block_m + 1) * BM)
        k1 = tl.load(k_ptr + head * N_K * D + ka[:, None] * D + dims[None, :], mask=la[:, None], other=0.0)
        v1 = tl.load(v_ptr + head * N_K * D + ka[:, None] * D + dims[None, :], mask=la[:, None], other=0.0)
        if PARTS == 2:
            k2 = tl.load(k_ptr + head * N_K * D + kb[:, None] * D + dims[None, :], mask=lb[:, None], other=0.0)
            v2 = tl.load(v_ptr + head * N_K * D + kb[:, None] * D + dims[None, :], mask=lb[:, None], other=0.0)
        s1 = tl.dot(q, tl.trans(k1), input_precision="ieee") * scale
        s1 = tl.where((ka[None, :] < N_K) & (not CAUSAL or ka[None, :] <= rows[:, None]), s1, float("-inf"))
        m_new = tl.maximum(m, tl.max(s1, axis=1))
        if PARTS == 2:
            s2 = tl.dot(q, tl.trans(k2), input_precision="ieee") * scale
            s2 = tl.where((kb[None, :] < N_K) & (not CAUSAL or kb[None, :] <= rows[:, None]), s2, float("-inf"))
            m_new = tl.maximum(m_new, tl.max(s2, axis=1))
        alpha = tl.exp(m - m_new)
        p1 = tl.exp(s1 - m_new[:, None])
        l = l * alpha + tl.sum(p1, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p1, v1, input_precision="ieee")
        if PARTS == 2:
            p2 = tl.exp(s2 - m_new[:, None])
            l = l + tl.sum(p2, axis=1)
            acc = acc + tl.dot(p2, v2, input_precision="ieee")
        m = m_new
    tl.store(o_ptr + head * N_Q * D + rows[:, None] * D + dims[None, :], (acc / l[:, None]).to(o_ptr.dtype.element_ty),
             mask=rows[:, None] < N_Q)
    tl.store(lse_ptr + head * N_Q + rows, m + tl.log(l), mask=rows < N_Q)


def _forward_of_blocks(bm, bn, parts, diag_mask):
    def attention_forward(q, k, v, causal=False):
        import math

        import torch

        b, h, n_q, d = q.shape
        n_k = k.shape[2]
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        o = torch.empty_like(q)
        lse = torch.empty((b, h, n_q), dtype=torch.float32, device=q.device)
        _forward_blocks[(triton.cdiv(n_q, bm), b * h)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), CAUSAL=causal,
                                                       D=d, BM=bm, BN=bn, PARTS=parts, DIAG_MASK=diag_mask)
        return o, lse

    return attention_forward


@pytest.mark.parametrize("bm,bn,parts,diag_mask", [(16, 64, 1, False), (32, 64, 2, False), (64, 16, 1, True),
                                                   (16, 128, 2, True)])
def test_causal_forwards_written_other_ways_pass_the_skip_check(bm, bn, parts, diag_mask):
    if not _interpreted_here():
        pytest.skip("the blocks a kernel visits are counted by the interpreter")
    from gpuperf import grading

    report = grading.grade_report("L5.causal", _forward_of_blocks(bm, bn, parts, diag_mask), seed=SEED,
                                  only=lambda label: SKIP_CASES["L5.causal"] in label)
    assert report.passed, report.text()
