"""Round 22 (2026-12-06, fourteenth session): wrong files the twenty-second attacker got accepted
(tests/grading_attacks_round22; its REPORT.md), closed in the r23cases session.

- 13 (L5.tiled): results cached across calls, keyed on the tensors' identity. L5.tiled had no case that calls
  the function twice on the same tensors with new values in them (L2 to L5.forward had one); it has now.
- 21 (L5.tiled): the learner's function calls the course's own ``attention_tiled_torch``. The course's
  Triton kernels were refused by what runs; a torch operator called (directly or not) from a file of the
  course's package outside the grader is refused now too, unless the function graded is the course's
  solution or the exercise hands the reader that module's kernels (L6.autograd's L5 forward).
- 17 (L3.softmax), 36 (L5.forward): a 32-bit row or head offset added up by a loop whose trip count is the
  program id (``for i in range(row): off += stride``). The 32-bit rule reads what such a loop hands on as the
  product it spells out (:func:`gpuperf.grading.frontend.wrapping_offsets`).
- 12 (L4.matmul, row-major tiles) and 35 (L5.tiled, float32 buffers whatever q's dtype) are limits
  (labs/README.md): the exercises ask for neither."""

from __future__ import annotations

from attack_files import find_attack, load_attack, load_attack_variant


def _grade(key, fn, seed=11, only=None):
    import gpuperf.kernels  # noqa: F401  (the course's kernels, as a learner's notebook has them)
    from gpuperf import grading

    return grading.grade_report(key, fn, seed=seed, stop_at_first_failure=True, only=only)


def _first_case():
    first: list = []

    def only(label):
        if not first:
            first.append(label)
        return label == first[0]

    return only


def _twice(label):
    return "called twice" in label


def _refused(report, words):
    assert not report.passed
    text = " ".join(r.message for r in report.failures)
    assert words in text, text


def test_13_tiled_cache_is_refused_by_the_second_call():
    key, fn = load_attack(find_attack(22, "13"))
    _refused(_grade(key, fn, only=_twice), "earlier call")


def test_13_tiled_cache_of_copies_is_refused_by_the_second_call():
    """The cache hands back a copy (new memory each call): the second call's values are wrong."""
    key, fn = load_attack_variant(find_attack(22, "13"),
                                  ("        return _CACHE[key]\n", "        return _CACHE[key].clone()\n"))
    report = _grade(key, fn, only=_twice)
    assert not report.passed
    assert any("second call" in r.output for r in report.failures), report.text()


def test_tiled_has_a_called_twice_case_and_the_solution_passes_it():
    from gpuperf import grading

    report = _grade("L5.tiled", grading.solution("L5.tiled"), only=_twice)
    assert report.passed, report.text()
    assert any("called twice" in r.case for r in report.results)


def test_21_course_attention_tiled_torch_is_refused():
    key, fn = load_attack(find_attack(22, "21"))
    _refused(_grade(key, fn, only=_first_case()), "course's own kernel or function")


def test_21_course_function_inside_an_autograd_function_is_refused():
    """The same call from inside an autograd Function's forward, where only the dispatch mode watches."""
    key, fn = load_attack_variant(find_attack(22, "21"), (
        "def tiled_attention(q, k, v, block_rows, block_cols):\n"
        "    o, _ = _lib(q, k, v, block_rows=block_rows, block_cols=block_cols)\n"
        "    return o\n",
        "class _F(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, q, k, v, br, bc):\n"
        "        return _lib(q, k, v, block_rows=br, block_cols=bc)[0]\n\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return None, None, None, None, None\n\n\n"
        "def tiled_attention(q, k, v, block_rows, block_cols):\n"
        "    return _F.apply(q, k, v, block_rows, block_cols)\n"))
    _refused(_grade(key, fn, only=_first_case()), "course's own kernel or function")


def test_17_softmax_row_offset_summed_by_a_loop_is_refused():
    key, fn = load_attack(find_attack(22, "17"))
    _refused(_grade(key, fn, only=_first_case()), "32-bit product")


def test_17_softmax_row_offset_summed_in_64_bits_passes():
    """The same loop with 64-bit sums: no wrap (the honest form of 17)."""
    key, fn = load_attack_variant(find_attack(22, "17"),
                                  ("    xo = 0\n    yo = 0\n",
                                   "    xo = tl.cast(0, tl.int64)\n    yo = tl.cast(0, tl.int64)\n"))
    report = _grade(key, fn, only=_first_case())
    assert report.passed, report.text()


def test_36_forward_head_offset_summed_by_a_loop_is_refused():
    key, fn = load_attack(find_attack(22, "36"))
    _refused(_grade(key, fn, only=_first_case()), "32-bit product")


def test_loop_sum_rule_reads_the_ttir():
    """The rule on its own: a 32-bit sum handed on by a loop bounded by the program id counts; the same sum
    in 64 bits, a sum in a loop of a run-time length (not the program id's), and a sum used only inside a
    loop bounded by the program id (a causal loop's keys) do not."""
    from gpuperf.grading.frontend import wrapping_offsets

    head = ("  tt.func public @k(%x_ptr: !tt.ptr<f32>, %n: i32, %stride: i32) {\n"
            "    %pid = tt.get_program_id x : i32\n"
            "    %c0 = arith.constant 0 : i32\n"
            "    %c1 = arith.constant 1 : i32\n")

    def kernel(bound, kind="i32", after=True):
        inside = "      %p = tt.addptr %x_ptr, %o : !tt.ptr<f32>, i32\n" if not after else ""
        add = (f"      %o = arith.addi %acc, %stride : i32\n" if kind == "i32" else
               "      %s64 = arith.extsi %stride : i32 to i64\n      %o = arith.addi %acc, %s64 : i64\n")
        init = "%c0" if kind == "i32" else "%z"
        zero = "    %z = arith.constant 0 : i64\n" if kind == "i64" else ""
        use = f"    %q = tt.addptr %x_ptr, %r : !tt.ptr<f32>, {kind}\n" if after else ""
        return ("module {\n" + head + zero +
                f"    %r = scf.for %i = %c0 to {bound} step %c1 iter_args(%acc = {init}) -> ({kind})  : i32 {{\n"
                + add + inside + f"      scf.yield %o : {kind}\n    }}\n" + use + "    tt.return\n  }\n}\n")

    assert wrapping_offsets(kernel("%pid"))
    assert wrapping_offsets(kernel("%pid"), within_head=True)
    assert not wrapping_offsets(kernel("%pid", kind="i64"))
    assert not wrapping_offsets(kernel("%n"))
    assert not wrapping_offsets(kernel("%pid", after=False), within_head=True)
