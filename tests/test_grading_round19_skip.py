"""r19skip (2026-12-06, eleventh session): round 18's 05 and what the same idea closes.

05 (L5.causal) skips no block of keys: the tiles past the diagonal are read from a kernel copy of K stored as
``k * (1 + 2^-20 + z) + (1e-30 + z)``, ``z = 0 * tl.sum(k, 0)``: a factor computed from the data, so no lane is a
copy (``_carry_lanes`` keeps a lane's origin through constants only, ``_carry_equal_lanes`` where a lane stays
bit-equal), the buffer was no image of K and its loads were no visits. Now every value computed lane by lane from
loaded elements keeps where each lane was derived from, whatever the other operands are
(``algorithm._carry_derived``, ``Launch.derived``), and the causal skip checks (forward and backward) read memory
a kernel filled with such values as the rows it was derived from (``exercises._derived_images``,
``_with_derived``). Variants: an offset, a loaded scalar, ``tl.exp``, moved by two transposes, many decoy loads in
the same lane, K and V both, Q and K in a backward, the same through autograd. Controls: K scaled by a softmax
scale loaded from memory into a buffer, then a walk that stops at the diagonal, passes every case."""

from __future__ import annotations

import pytest

from attack_files import find_attack, load_attack, load_attack_variant

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 11
SKIP_CASES = {"L5.causal": "the key blocks it visits",
              "L6.backward": "the blocks of queries and keys the backward visits",
              "L6.autograd": "the blocks they visit"}
VISITED = {"L5.causal": "visited key blocks that no query of the program's block can see",
           "L6.backward": "in which every key comes after every query",
           "L6.autograd": "visited key blocks that no query of the program's block can see"}


def _on_the_cpu() -> bool:
    import torch

    return not torch.cuda.is_available() or gpuperf.kernels.interpreter_enabled()


def _grade(key, fn, only=None, seed=SEED):
    from gpuperf import grading

    if not _on_the_cpu():
        pytest.skip("the skip checks run under the interpreter")
    report = grading.grade_report(key, fn, seed=seed, only=only)
    assert report.results, f"{key}: no case graded"
    return report


def _refused_by_the_skip_check(key, fn, seed=SEED):
    report = _grade(key, fn, only=lambda label: SKIP_CASES[key] in label, seed=seed)
    assert not report.passed, f"accepted by {key}:\n{report.text()}"
    message = report.failures[0].message
    assert VISITED[key] in message, message
    return message


# ------------------------------------------------------------------------------------------------------------
# 05 and its variants (L5.causal)

F05 = ("05", "    kk = k * (1.0 + 0.00000095367431640625 + s0) + (1e-30 + s0)  # zeros nudged to 1e-30 too\n")
COPY_ARGS = "](k, kc, n_k, HEAD_DIM=d, BLOCK=32)"


def _z_buffer(body):
    """The copy kernel given a buffer of zeros ``z_ptr`` (loads of memory that is none of the grader's)."""
    return [("def copy_kernel(k_ptr, kc_ptr, N_K,", "def copy_kernel(k_ptr, kc_ptr, z_ptr, N_K,"),
            (COPY_ARGS, "](k, kc, torch.zeros_like(k), n_k, HEAD_DIM=d, BLOCK=32)"), (F05[1], body)]


VARIANTS = {
    # K plus an offset computed from the data (every lane differs)
    "offset": [(F05[1], "    kk = k + (0.5 + s0)\n")],
    # K times a scalar loaded from memory of the function's own
    "loaded_scalar": [("def copy_kernel(k_ptr, kc_ptr, N_K,", "def copy_kernel(k_ptr, kc_ptr, f_ptr, N_K,"),
                      (F05[1], "    kk = k * tl.load(f_ptr)\n"),
                      (COPY_ARGS, "](k, kc, torch.full((1,), 1.0 + 2.0 ** -20, device=k.device), n_k, "
                                  "HEAD_DIM=d, BLOCK=32)")],
    # K through exp, after the data factor
    "exp": [(F05[1], "    kk = tl.exp(k * (1.0 + 0.00000095367431640625 + s0))\n")],
    # the derived tile moved by two transposes before it is stored
    "transposed_twice": [(F05[1], "    kk = tl.trans(tl.trans(k * (1.0 + 0.00000095367431640625 + s0)))\n")],
    # five loads of a buffer of zeros in each lane beside K's (more origins than a copy keeps)
    "five_decoys": _z_buffer(
        "    low = rows[:, None] < N_K - 1\n"
        "    kk = (tl.load(z_ptr + at, mask=low, other=0.0) + tl.load(z_ptr + at + 1, mask=low, other=0.0)"
        " + tl.load(z_ptr + at + 2, mask=low, other=0.0) + tl.load(z_ptr + at + 3, mask=low, other=0.0)"
        " + tl.load(z_ptr + at + 4, mask=low, other=0.0)) * (1.0 + s0) + k * (1.0 + 0.00000095367431640625 + s0)\n"),
    # seventeen decoy loads added after K's (past the most a lane keeps: the grader's tensors are kept first)
    "seventeen_decoys": _z_buffer(
        "    low = rows[:, None] < N_K - 1\n"
        "    kk = k * (1.0 + 0.00000095367431640625 + s0)\n"
        "    for j in tl.static_range(17):\n"
        "        kk = kk + tl.load(z_ptr + at + j % 2, mask=low, other=0.0)\n"),
    # V's far tiles from a derived copy of V as well
    "k_and_v": [
        ("def fwd_kernel(q_ptr, k_ptr, kc_ptr, v_ptr,", "def fwd_kernel(q_ptr, k_ptr, kc_ptr, v_ptr, vc_ptr,"),
        ("        v = tl.load(v_head + at[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K, other=0.0)\n",
         "        if CAUSAL and start > last_q:\n"
         "            v = tl.load(vc_ptr + head * N_K * HEAD_DIM + at[:, None] * HEAD_DIM + dims[None, :],\n"
         "                        mask=keys[:, None] < N_K, other=0.0)\n"
         "        else:\n"
         "            v = tl.load(v_head + at[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < N_K,"
         " other=0.0)\n"),
        ("    kc = k\n", "    kc, vc = k, v\n"),
        (COPY_ARGS, COPY_ARGS + "\n        vc = torch.empty_like(v)\n"
                    "        copy_kernel[(triton.cdiv(n_k, 32), batch * heads)](v, vc, n_k, HEAD_DIM=d, BLOCK=32)"),
        ("fwd_kernel[grid](q, k, kc, v, o, lse,", "fwd_kernel[grid](q, k, kc, v, vc, o, lse,")],
}


def test_05_a_copy_of_k_scaled_by_a_data_factor_is_k():
    """05 itself, both seeds of round 18 (on seed 12 a first version was refused by the pass check only)."""
    key, fn = load_attack(find_attack(18, "05"))
    for seed in (11, 12):
        message = _refused_by_the_skip_check(key, fn, seed=seed)
        assert "fwd_kernel" in message, message


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_values_derived_lane_by_lane_from_k_are_k(name):
    """Each variant stores into the far tiles' buffer a value computed lane by lane from K with other operands
    computed from loads (before r19skip, offset, loaded_scalar, exp, transposed_twice, five_decoys and
    seventeen_decoys were accepted: checked against main at 924a24a)."""
    key, fn = load_attack_variant(find_attack(18, "05"), *VARIANTS[name])
    _refused_by_the_skip_check(key, fn)


# ------------------------------------------------------------------------------------------------------------
# the backward: far blocks of Q (dK, dV walk) and of K (dQ walk) read from derived copies (round 17's 15 and 14)

SCALED_COPY = '''
@triton.jit
def scaled_copy(src_ptr, dst_ptr, N, HEAD_DIM: tl.constexpr, BLOCK: tl.constexpr):
    block = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64)
    rows = block * BLOCK + tl.arange(0, BLOCK)
    dims = tl.arange(0, HEAD_DIM)
    at = head * N * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :]
    x = tl.load(src_ptr + at, mask=rows[:, None] < N, other=0.0)
    s0 = 0.0 * tl.sum(x, axis=0)[None, :]
    tl.store(dst_ptr + at, x * (1.0 + 0.00000095367431640625 + s0) + (1e-30 + s0), mask=rows[:, None] < N)


'''

BACKWARD_EDITS = [
    ("def dkdv_kernel(q_ptr, k_ptr, v_ptr,", "def dkdv_kernel(q_ptr, qc_ptr, k_ptr, v_ptr,"),
    ("            q = tl.load(q_ptr + head * N_Q * HEAD_DIM + at[:, None] * HEAD_DIM + cols)\n",
     "            q = tl.load(qc_ptr + q_offsets, mask=live[:, None], other=0.0)\n"),
    ("def dq_kernel(q_ptr, k_ptr, v_ptr,", "def dq_kernel(q_ptr, k_ptr, kc_ptr, v_ptr,"),
    ("            k = tl.load(k_ptr + head * N_K * HEAD_DIM + at[:, None] * HEAD_DIM + cols)\n",
     "            k = tl.load(kc_ptr + kv_offsets, mask=live[:, None], other=0.0)\n"),
    ("dkdv_kernel[(triton.cdiv(n_k, block), heads_total)](q, k,",
     "dkdv_kernel[(triton.cdiv(n_k, block), heads_total)](q, qc, k,"),
    ("dq_kernel[(triton.cdiv(n_q, block), heads_total)](q, k,",
     "dq_kernel[(triton.cdiv(n_q, block), heads_total)](q, k, kc,"),
    ("    row_dot_kernel[(",
     "    qc, kc = torch.empty_like(q), torch.empty_like(k)\n"
     "    scaled_copy[(triton.cdiv(n_q, block), heads_total)](q, qc, n_q, HEAD_DIM=head_dim, BLOCK=block)\n"
     "    scaled_copy[(triton.cdiv(n_k, block), heads_total)](k, kc, n_k, HEAD_DIM=head_dim, BLOCK=block)\n"
     "    row_dot_kernel[("),
    ("def attention_backward(", SCALED_COPY.lstrip("\n") + "def attention_backward("),
]


def test_a_backward_reading_its_far_blocks_from_derived_copies_of_q_and_k():
    """Round 17's 15 (L6.backward, no block skipped by either walk) with the far blocks read whole from copies of
    q and k scaled by a factor computed from the data, each a kernel's own."""
    key, fn = load_attack_variant(find_attack(17, "15"), *BACKWARD_EDITS)
    _refused_by_the_skip_check(key, fn)


def test_an_autograd_forward_reading_its_far_tiles_from_a_derived_copy():
    """Round 17's 14 (L6.autograd, the forward skips no block) with the far tiles read whole from a copy of k
    scaled by a factor computed from the data (the copy made in the forward, judged in the forward's part)."""
    edits = [
        ("def fwd_kernel(q_ptr, k_ptr, v_ptr,", "def fwd_kernel(q_ptr, k_ptr, kc_ptr, v_ptr,"),
        ("            k = tl.load(k_head + tl.minimum(rows_at, N_K - 1)[:, None] * HEAD_DIM + cols)\n",
         "            k = tl.load(kc_ptr + head * N_K * HEAD_DIM + at[:, None] * HEAD_DIM + dims[None, :],\n"
         "                        mask=keys[:, None] < N_K, other=0.0)\n"),
        ("    fwd_kernel[grid](q, k, v,",
         "    kc = torch.empty_like(k)\n"
         "    scaled_copy[(triton.cdiv(n_k, 32), batch * heads)](k, kc, n_k, HEAD_DIM=d, BLOCK=32)\n"
         "    fwd_kernel[grid](q, k, kc, v,"),
        ("def attention_forward(", SCALED_COPY.lstrip("\n") + "def attention_forward("),
    ]
    key, fn = load_attack_variant(find_attack(17, "14"), *edits)
    _refused_by_the_skip_check(key, fn)


# ------------------------------------------------------------------------------------------------------------
# honest: K scaled into a buffer of the function's own by a scale loaded from memory, then a walk that stops at
# the diagonal reading every tile of keys from that buffer

HONEST_FORWARD = [
    ("        end = tl.minimum(N_K, N_Q)  # NO skipping: every block up to N_q is walked\n",
     "        end = tl.minimum(N_K, last_q + 1)\n"),
    ("        if CAUSAL and start > last_q:  # a tile past the diagonal: read from the copy\n", "        if True:\n"),
    ("def copy_kernel(k_ptr, kc_ptr, N_K,", "def copy_kernel(k_ptr, kc_ptr, f_ptr, N_K,"),
    (F05[1], "    kk = k * tl.load(f_ptr)\n"),
    (COPY_ARGS, "](k, kc, torch.full((1,), 1.0 / math.sqrt(d), device=k.device), n_k, HEAD_DIM=d, BLOCK=32)"),
    ("    if causal:  # the tiles past the diagonal are read from a copy of K\n", "    if True:\n"),
    ("1.0 / math.sqrt(d), CAUSAL=causal", "1.0, CAUSAL=causal"),
    # (the scaled keys kept in fp32: rounded to fp16 they would cost the fp16 cases their accuracy)
    ("        kc = torch.empty_like(k)\n", "        kc = torch.empty(k.shape, dtype=torch.float32, device=k.device)\n"),
    ('        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale\n',
     '        s = tl.dot(q.to(tl.float32), tl.trans(k), input_precision="ieee") * scale\n'),
]


SCALE_AS_ARGUMENT = [
    ("def copy_kernel(k_ptr, kc_ptr, f_ptr, N_K,", "def copy_kernel(k_ptr, kc_ptr, f, N_K,"),
    ("    kk = k * tl.load(f_ptr)\n", "    kk = k.to(tl.float32) * f\n"),
    ("torch.full((1,), 1.0 / math.sqrt(d), device=k.device)", "1.0 / math.sqrt(d)"),
]


@pytest.mark.parametrize("scale", ["loaded", "argument"])
def test_k_scaled_by_the_softmax_scale_then_a_walk_that_skips_passes(scale):
    """Every case of L5.causal, seed 11: the buffer holds K's rows times the softmax scale, loaded from memory
    (derived rows: before r19skip refused, its 65536 stores counted as scratch) or given as an argument (a copy
    scaled by a constant), and the walk stops at each block's diagonal."""
    edits = HONEST_FORWARD + (SCALE_AS_ARGUMENT if scale == "argument" else [])  # (applied in order)
    key, fn = load_attack_variant(find_attack(18, "05"), *edits)
    report = _grade(key, fn)
    assert report.passed, report.text()


def test_masked_lanes_of_a_correct_skip_are_no_visits():
    """The honest walk above with the diagonal tile's keys past the block's last query masked off in the load,
    and a copy kernel of 64 rows a program whose tail lanes (past N_k) are masked off and stored as zeros
    (``tl.where``): lanes masked off at the load are derived from nothing. The skip case, both seeds."""
    edits = HONEST_FORWARD[:3] + [
        (F05[1], "    kk = tl.where(rows[:, None] < N_K, k * tl.load(f_ptr), 0.0)\n"),
        (COPY_ARGS, "](k, kc, torch.full((1,), 1.0 / math.sqrt(d), device=k.device), n_k, HEAD_DIM=d, BLOCK=64)"),
        ("copy_kernel[(triton.cdiv(n_k, 32), batch * heads)]", "copy_kernel[(triton.cdiv(n_k, 64), batch * heads)]"),
        ("                        mask=keys[:, None] < N_K, other=0.0)\n        else:",
         "                        mask=(keys[:, None] < N_K) & (keys[:, None] <= last_q), other=0.0)\n        else:"),
    ] + HONEST_FORWARD[5:]
    key, fn = load_attack_variant(find_attack(18, "05"), *edits)
    for seed in (11, 12):
        report = _grade(key, fn, only=lambda label: SKIP_CASES[key] in label, seed=seed)
        assert report.passed, report.text()
