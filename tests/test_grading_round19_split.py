"""Round 19's F4: a split-KV (Flash-Decoding style) forward, h15, stores SPLITS x N_q x (d + 2) fp32 partials that
a second launch merges. ``_scratch_check`` budgeted 1.5 x the outputs + 4096 and blamed N_q x N_k scores.
Now L5's full (not causal) cases also allow the partials of up to 8 splits (8 B H N_q (d + 2)), and the message
says what the stored amount is (a share of the scores, or a multiple of the outputs). The rule is still by size:
kernels that store S or P are refused on the cases where the scores far exceed the budget (L5.forward's
N_q = 16, N_k = 4096 case; L5.causal's causal cases keep the old budget). Review 20: the partials of one split
per 16 keys, at most 32 splits (test_grading_review20_sched.py)."""
import gpuperf.kernels  # noqa: F401  (before triton: the interpreter on a CPU machine)
import pytest

from attack_files import attack_folder, find_attack, load_attack, load_attack_variant
from gpuperf import grading

H15 = find_attack(19, "h15")
H08 = attack_folder(19) / "excluded" / "h08_L5causal_two_stage_loop.py"

#: the CPU's case labels: on a GPU the cases these select are compiled ones (H100, 2026-12-06)
_CPU_CASES = pytest.mark.skipif(__import__("torch").cuda.is_available(),
                                reason="selects the CPU's interpreted cases by label")


def _failures(report):
    return [r for r in report.results if not r.passed]


def test_h15_split_kv_passes_every_case_seed_11():
    key, fn = load_attack(H15)
    report = grading.grade_report(key, fn, seed=11)
    assert not _failures(report), [(r.case, r.message) for r in _failures(report)]


def _h15_storing(store, buffer):
    return load_attack_variant(
        H15,
        ("def partial_kernel(q_ptr, k_ptr, v_ptr, m_ptr,", "def partial_kernel(q_ptr, k_ptr, v_ptr, s_ptr, m_ptr,"),
        ('        s = tl.where(keys[None, :] < hi, s, float("-inf"))\n',
         '        s = tl.where(keys[None, :] < hi, s, float("-inf"))\n' + store),
        ("partial_kernel[(nqb, B * H, splits)](q, k, v, m,", "partial_kernel[(nqb, B * H, splits)](q, k, v, sbuf, m,"),
        ("    o = torch.empty_like(q)\n", buffer + "    o = torch.empty_like(q)\n"))


def _refused_for_scores(key, fn):
    report = grading.grade_report(key, fn, seed=11, only=lambda label: "N_k=4096" in label)
    failed = _failures(report)
    assert failed, "a kernel that stores scores was accepted"
    assert any("B x H x N_q x N_k scores" in r.message and "S or P" in r.message for r in failed), \
        [r.message for r in failed]


@_CPU_CASES
def test_full_scores_stored_are_refused():
    key, fn = _h15_storing(
        "        tl.store(s_ptr + head * N_Q * N_K + rows[:, None] * N_K + keys[None, :], s,\n"
        "                 mask=(rows[:, None] < N_Q) & (keys[None, :] < hi))\n",
        "    sbuf = torch.empty((B * H, n_q, n_k), dtype=torch.float32, device=dev)\n")
    _refused_for_scores(key, fn)


@_CPU_CASES
def test_half_of_p_in_fp16_tile_by_tile_is_refused():
    key, fn = _h15_storing(
        "        p16 = tl.exp(s - tl.max(s, axis=1)[:, None]).to(tl.float16)\n"
        "        tl.store(s_ptr + head * N_Q * N_K + rows[:, None] * N_K + keys[None, :], p16,\n"
        "                 mask=(rows[:, None] < N_Q) & (keys[None, :] < hi) & (keys[None, :] < N_K // 2))\n",
        "    sbuf = torch.empty((B * H, n_q, n_k), dtype=torch.float16, device=dev)\n")
    _refused_for_scores(key, fn)


@pytest.mark.skipif(__import__("torch").cuda.is_available() and not grading.INTERPRET_ON_GPU,
                    reason="what a kernel stores is counted by L5.causal's interpreted case (the key blocks it "
                    "visits), off on a GPU machine (labs/README.md)")
def test_causal_half_of_p_is_refused_in_l5_causal():
    key, fn = load_attack_variant(
        H08,
        ("def _inner(acc, l, m, q, k_head, v_head, rows,", "def _inner(acc, l, m, q, k_head, v_head, p_head, rows,"),
        ("        p = tl.exp2(s - m_new[:, None])\n",
         "        p = tl.exp2(s - m_new[:, None])\n"
         "        tl.store(p_head + rows[:, None] * N_K + keys[None, :], p, mask=vis)\n"),
        ("k_head, v_head, rows, 0, lo_diag,", "k_head, v_head, p_head, rows, 0, lo_diag,"),
        ("k_head, v_head, rows, lo_diag, hi,", "k_head, v_head, p_head, rows, lo_diag, hi,"),
        ("k_head, v_head, rows, 0, N_K, N_K,", "k_head, v_head, p_head, rows, 0, N_K, N_K,"),
        ("def fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q,", "def fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, p_ptr, N_Q,"),
        ("    v_head = v_ptr + head * N_K * D\n",
         "    v_head = v_ptr + head * N_K * D\n    p_head = p_ptr + head * tl.cdiv(N_Q, BM) * BM * N_K\n"),
        ("](q, k, v, o, lse, n_q,", "](q, k, v, o, lse, pbuf, n_q,"),
        ("    prec = ", "    pbuf = torch.empty((B * H, triton.cdiv(n_q, 64) * 64, n_k), dtype=torch.float32,\n"
                      "                       device=q.device)\n    prec = "))
    report = grading.grade_report(key, fn, seed=11, only=lambda label: "the key blocks it visits" in label)
    failed = _failures(report)
    assert failed, "a causal kernel that stores the visible half of P was accepted"
    assert any("visible (causal) part" in r.message for r in failed), [r.message for r in failed]
