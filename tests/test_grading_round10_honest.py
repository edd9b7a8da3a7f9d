"""Round 10 (2026-12-05): correct solutions the graders refused, kept in tests/grading_attacks_round10 (README.md
there lists them). Closed in r10b:

- h26 (L6.backward): the dQ kernel, launched first, computes D = rowsum(dO * O) and stores it for the dK/dV
  kernel. The passes check charged each dK/dV program with every K load of the dQ programs whose D it read;
  it now follows a link through memory only where what was read was computed from K (the lineage of stored
  values, :attr:`gpuperf.grading.algorithm.Launch.read_lineage`).
- h35, h36 (L3.online): statistics m and l stored to two fp32 vectors, then a normalising pass. On the 1 x 1
  input the pass count took the loads of m and l for loads of x; a row's statistics (memory outside x and y of
  at most two elements per row) no longer count.
"""

from __future__ import annotations

import pytest

from attack_files import attack_folder, find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

ATTACKS_10 = attack_folder(10)
SEED = 20261205
#: L6.backward's case that counts the passes over K (the interpreted causal skip case).
PASSES_CASE = "the blocks of queries and keys the backward visits"


def _interpreted_here() -> bool:
    import torch

    from gpuperf import grading

    return not torch.cuda.is_available() or grading.INTERPRET_ON_GPU


@pytest.mark.parametrize("path", sorted(ATTACKS_10.glob("h[0-9]*.py")), ids=lambda p: p.stem)
def test_honest_solution_of_round_10_passes(path):
    if not _interpreted_here():
        pytest.skip("round 10 was run under the interpreter only")
    key, fn = load_attack(path)
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED)
    assert report.passed, f"{path.name} refused by {key} (seed {SEED}):\n{report.text()}"


def test_a_row_value_computed_from_k_still_hands_its_kernels_loads_over():
    """h26 with the D it stores made to depend on K (a term 0 * max(S), after the dQ kernel's walk over the keys):
    each dK/dV program that reads it is charged the loads of K of every dQ program it read from, as a row max
    rebuilt from K in a kernel of its own is, and the message names the kernel it read from."""
    if not _interpreted_here():
        pytest.skip("the passes are counted by the interpreter")
    key, fn = load_attack_variant(
        find_attack(10, "h26"),
        ("    tl.store(delta_ptr + head * N_Q + rows, delta, mask=rows < N_Q)\n    dq = tl.zeros((BLOCK_M, HEAD_DIM), "
         "dtype=tl.float32)\n",
         "    dq = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)\n"
         "    seen = tl.zeros((BLOCK_M,), dtype=tl.float32)\n"),
        ("        dq += tl.dot(ds.to(k.dtype), k, input_precision=PRECISION)\n",
         "        dq += tl.dot(ds.to(k.dtype), k, input_precision=PRECISION)\n"
         "        seen += 0.0 * tl.max(s, axis=1)\n"),
        ("    tl.store(dq_ptr + q_offsets, (dq * scale)",
         "    tl.store(delta_ptr + head * N_Q + rows, delta + seen, mask=rows < N_Q)\n"
         "    tl.store(dq_ptr + q_offsets, (dq * scale)"))
    from gpuperf import grading

    report = grading.grade_report(key, fn, seed=SEED, only=lambda label: PASSES_CASE in label)
    assert not report.passed, f"h26 variant accepted (seed {SEED}):\n{report.text()}"
    message = report.failures[0].message
    assert "of dkdv_kernel" in message and "the programs of dq_kernel" in message, message
