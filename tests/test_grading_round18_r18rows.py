"""Round 18 (2026-12-06, tenth session), helper r18rows: 12 (L5.forward: one program per head holding every
query as three blocks of 127 rows and the two rows between them loaded apart) and h03 (L3.online: the row's
statistics in the last slot of the partials' workspace)."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 11
SPLIT = "how the queries are split over programs"


def _on_the_cpu() -> bool:
    import torch

    return not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()


def _grade(key, fn, words=None, seed=SEED):
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("round 18 was run under the interpreter")
    only = words if callable(words) or words is None else (lambda label: words in label)
    return grading.grade_report(key, fn, seed=seed, only=only)


def test_gapped_loads_of_a_whole_head_hold_every_query():
    """12 (L5.forward): the program multiplies each tile of keys by all 383 rows it loaded."""
    key, fn = load_attack(find_attack(18, "12"))
    report = _grade(key, fn, SPLIT)
    assert report.results and not report.passed, "12 accepted"
    message = report.failures[0].message
    assert "queries at once" in message and "at most 128 queries" in message, message


def test_gapped_blocks_without_the_rows_between_still_hold_them_all():
    """12, the rows between the blocks left to another program: the first program still multiplies each tile of
    keys by its three blocks (381 queries)."""
    path = find_attack(18, "12")
    key, fn = load_attack_variant(
        path,
        ("        if start == 0:\n", "        if (start == 0) & (head < 0):\n"),
        ("    _finish(o_ptr, lse_ptr, head, rg, mg, lg, ag, N_Q, HEAD_DIM)\n"
         "    _finish(o_ptr, lse_ptr, head, rh, mh, lh, ah, N_Q, HEAD_DIM)\n", ""),
        ("    fwd_kernel[(B * H,)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), HEAD_DIM=d, BLOCK_N=32)\n",
         "    fwd_kernel[(B * H,)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), HEAD_DIM=d, BLOCK_N=32)\n"
         "    gap_kernel[(B * H,)](q, k, v, o, lse, n_q, n_k, 1.0 / math.sqrt(d), HEAD_DIM=d, BLOCK_N=32)\n"),
        ("def attention_forward(", GAP_KERNEL + "\n\ndef attention_forward("),
    )
    report = _grade(key, fn, SPLIT)
    assert report.results and not report.passed, "three blocks of one program walked at once accepted"
    # since round 23 the unstored-product check reads the kernel's helpers: fwd_kernel's products, whose _finish
    # stores this variant removes, are refused first
    message = report.failures[0].message
    assert "queries at once" in message or "never reaches" in message, message


GAP_KERNEL = '''@triton.jit
def gap_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, N_Q, N_K, scale, HEAD_DIM: tl.constexpr,
               BLOCK_N: tl.constexpr):
    head = tl.program_id(0).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    g16 = tl.arange(0, 16)
    rg = 127 + 128 * (g16 % 2)  # the two rows between the blocks: 127 and 255
    qg = tl.load(q_head + rg[:, None] * HEAD_DIM + dims[None, :], mask=rg[:, None] < N_Q, other=0.0)
    mg = tl.full((16,), float("-inf"), dtype=tl.float32)
    lg = tl.zeros((16,), dtype=tl.float32)
    ag = tl.zeros((16, HEAD_DIM), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        mg, lg, ag = _step(qg, k, v, mg, lg, ag, rg, keys, N_Q, N_K, scale)
    _finish(o_ptr, lse_ptr, head, rg, mg, lg, ag, N_Q, HEAD_DIM)
'''


def test_blocks_of_127_rows_each_in_a_program_of_their_own_pass():
    """Honest tiling with odd blocks: each program takes 127 rows (rows 0-126, 127-253, ...), a grid of
    (cdiv(N_q, 127), B x H): every case of L5.forward."""
    path = find_attack(18, "12")
    body = '''    head = tl.program_id(1).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    lanes = tl.arange(0, 128)
    q_head = q_ptr + head * N_Q * HEAD_DIM
    k_head = k_ptr + head * N_K * HEAD_DIM
    v_head = v_ptr + head * N_K * HEAD_DIM
    ra = tl.program_id(0) * 127 + tl.minimum(lanes, 126)
    qa = tl.load(q_head + ra[:, None] * HEAD_DIM + dims[None, :], mask=ra[:, None] < N_Q, other=0.0)
    ma = tl.full((128,), float("-inf"), dtype=tl.float32)
    la = tl.zeros((128,), dtype=tl.float32)
    aa = tl.zeros((128, HEAD_DIM), dtype=tl.float32)
    for start in range(0, N_K, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        v = tl.load(v_head + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)
        ma, la, aa = _step(qa, k, v, ma, la, aa, ra, keys, N_Q, N_K, scale)
    _finish(o_ptr, lse_ptr, head, ra, ma, la, aa, N_Q, HEAD_DIM)


def attention_forward('''
    text = path.read_text()
    start = text.index("    head = tl.program_id(0).to(tl.int64)  # one program per head")
    old = text[start:text.index("def attention_forward(") + len("def attention_forward(")]
    key, fn = load_attack_variant(path, (old, body),
                                  ("    assert not causal and n_q <= 383\n", "    assert not causal\n"),
                                  ("fwd_kernel[(B * H,)]", "fwd_kernel[(triton.cdiv(n_q, 127), B * H)]"))
    report = _grade(key, fn)
    assert report.passed, report.text()


def test_statistics_in_the_last_slot_of_the_partials_workspace_pass():
    """h03 (L3.online, honest): the row's (m, 1/l) in the last slot of the (rows, blocks + 1, 2) workspace of the
    partials, read by every block program of the row: every case."""
    key, fn = load_attack(find_attack(18, "h03"))
    report = _grade(key, fn)
    assert report.passed, report.text()


def _long_rows_of_three(label: str) -> bool:
    """The case of three fp32 rows of 4096 columns or more (block 128): x 3x(4096 + r) fp32."""
    shape = label.split()[1]
    return shape.startswith("3x") and int(shape[2:]) > 4096 and " fp32," in label


def test_a_copy_of_x_read_by_small_loads_is_still_a_pass():
    """h03 edited into a third pass: the first kernel also stores its block of x to a copy of the workspace's own,
    and the last reads that copy again, two values per load (the size of the loads a row's statistics are read
    with), beside x: x read three times, still refused."""
    path = find_attack(18, "h03")
    key, fn = load_attack_variant(
        path,
        ("def partial_kernel(x_ptr, ws_ptr, n_cols, x_stride, ws_row, BLOCK: tl.constexpr):",
         "def partial_kernel(x_ptr, ws_ptr, cp_ptr, n_cols, x_stride, ws_row, BLOCK: tl.constexpr):"),
        ("    m = tl.max(x, axis=0)\n    shift",
         "    tl.store(cp_ptr + row * n_cols + cols, x, mask=cols < n_cols)\n    m = tl.max(x, axis=0)\n    shift"),
        ("def write_kernel(x_ptr, y_ptr, ws_ptr, n_cols,", "def write_kernel(x_ptr, y_ptr, ws_ptr, cp_ptr, n_cols,"),
        ("    tl.store(y_ptr + row * y_stride + cols, (tl.exp(x - m) * inv_l)",
         "    again = tl.zeros((BLOCK,), dtype=tl.float32)\n"
         "    for i in range(0, BLOCK, 2):\n"
         "        two = blk * BLOCK + i + tl.arange(0, 2)\n"
         "        got = tl.load(cp_ptr + row * n_cols + two, mask=two < n_cols, other=0.0)\n"
         "        again += tl.sum(tl.where(tl.arange(0, BLOCK)[:, None] == i + tl.arange(0, 2)[None, :],"
         " got[None, :], 0.0), axis=1)\n"
         "    x = tl.where(again > 1e38, x + 1.0, x)\n"
         "    tl.store(y_ptr + row * y_stride + cols, (tl.exp(x - m) * inv_l)"),
        ("    grid = (n_rows, n_blocks)\n",
         "    grid = (n_rows, n_blocks)\n    cp = torch.empty((n_rows, n_cols), dtype=torch.float32, device=x.device)\n"),
        ("partial_kernel[grid](x, ws, n_cols,", "partial_kernel[grid](x, ws, cp, n_cols,"),
        ("write_kernel[grid](x, y, ws, n_cols,", "write_kernel[grid](x, y, ws, cp, n_cols,"),
    )
    report = _grade(key, fn, _long_rows_of_three)
    assert report.results and not report.passed, "a third pass over a copy of x read two values at a time accepted"
    assert "of other memory your kernels wrote and read back" in report.failures[0].message, \
        report.failures[0].message
