"""Round 12 (2026-12-05): a fresh attacker's files against L1, L2, L3.softmax/online, L4.outer/matmul and L5.forward,
in tests/grading_attacks_round12 (README.md there says what each does; REPORT.md is the attacker's report).
Closed here: the public tolerance table a graded function could rewrite (10: the tables are read-only now), an
exact Fraction answer refused (h03: any real number of the standard library's or numpy's types is accepted), a
byte count kept in int32 (02: a case whose count passes 2^32), a roofline rule that switches roofs at half the
ridge (03: intensities drawn just below and just above the ridge), a 1-D kernel's blocks on the grid's axis 1
(05: refused in L2.add and L2.chain), and a 32-bit product of the program id in a mask (08: the TTIR rule of
L2's addresses followed into masks). 01 and 04 (a -inf read as 0) were closed on main by the softmax bound; 06,
07 and 09 were refused already. Each wrong file is graded on the cases that refuse it (``only=``), each honest
file on all of its cases."""

from __future__ import annotations

import re

import pytest

from attack_files import attack_folder, find_attack, load_attack

import gpuperf.kernels  # noqa: F401  (the interpreter switch, before any attack file defines a kernel)

SEED = 20261205


def _size_above(limit):
    """An ``only=`` predicate: the cases whose first ``n=`` (L2) or ``m=`` (L1.matmul_bytes) is above ``limit``."""

    def only(label):
        m = re.match(r"[nm]=(\d+)", label)
        return bool(m) and int(m.group(1)) > limit

    return only


#: tag: (the cases it is graded on, words its first failure's message or case says)
WRONG = {
    "01": (lambda label: "-inf" in label and "fp32" in label, ""),
    "02": (_size_above(30_000), "2^32"),
    "03": (lambda label: "ridge point (" in label, "just"),
    "04": (lambda label: "-inf" in label and "fp32" in label, ""),
    "05": (_size_above(4096), "65,535"),
    "06": (lambda label: label.startswith("x (1,) y (1,) fp32"), "tolist"),
    "07": (lambda label: label.startswith("x (1,) y (1,) fp32"), "printed"),
    "08": (_size_above(4096), "masks are computed with 32-bit"),
    "09": (lambda label: "fp32" in label and "-inf" not in label, ""),
    "10": (lambda label: label.startswith("x 1x1 fp32"), "does not support item assignment"),
}
HONEST = ["h02", "h03", "h04", "h05", "h06", "h08", "h09"]


def _grade(tag, only=None, seed=SEED):
    from gpuperf import grading

    key, fn = load_attack(find_attack(12, tag))
    report = grading.grade_report(key, fn, seed=seed, only=only)
    assert report.results, f"{tag} ({key}): no case graded"
    return key, report


def test_every_file_of_round_12_is_tested():
    tags = {path.name.split("_")[0] for path in attack_folder(12).glob("*.py")}
    assert tags == set(WRONG) | set(HONEST)


@pytest.mark.parametrize("tag", sorted(WRONG))
def test_wrong_file_of_round_12_is_refused(tag):
    only, words = WRONG[tag]
    key, report = _grade(tag, only)
    assert not report.passed, f"{tag} accepted by {key} (seed {SEED}):\n{report.text()}"
    first = report.failures[0]
    assert words in first.message + first.case, f"{tag} ({key}): {first.case}: {first.message}"


@pytest.mark.parametrize("tag", HONEST)
def test_honest_file_of_round_12_passes(tag):
    key, report = _grade(tag)
    assert report.passed, f"{tag} refused by {key} (seed {SEED}):\n{report.text()}"


# ---- the fixes, on their own -----------------------------------------------------------------------------


def test_the_tolerance_tables_are_read_only():
    """10 wrote ``grading.UNIT_ROUNDOFF["fp32"] = 1.0`` inside the graded function: every tolerance computed after
    the call was 2^24 times looser (and stayed so for the session). The tables are read-only views now."""
    from gpuperf import grading
    from gpuperf.grading import core, exercises

    for table in (grading.UNIT_ROUNDOFF, core._TINY, core._MIN_NORMAL, exercises.ETA):
        with pytest.raises(TypeError):
            table["fp32"] = 1.0
        with pytest.raises(AttributeError):
            table.update(fp32=1.0)
    assert grading.UNIT_ROUNDOFF["fp32"] == 2.0**-24


@pytest.mark.parametrize("seed", [1, 2, 3, SEED])
def test_l1_time_refuses_a_threshold_off_the_ridge_and_accepts_any_exact_real(seed):
    """03's rule with its threshold anywhere but the ridge (a relative 1e-6 off is enough) is refused on every seed;
    the answer as a Fraction, a Decimal or a numpy float is accepted (h03), a bool or a class of the reader's
    (whose float() would run the reader's code after the call) is not."""
    import decimal
    import fractions

    import numpy as np

    from gpuperf import grading

    def switching_at(of_ridge):
        def time_s(flop, bytes_moved, peak, bandwidth):
            if bytes_moved == 0 or flop / bytes_moved >= of_ridge * peak / bandwidth:
                return flop / peak
            return bytes_moved / bandwidth

        return time_s

    for of_ridge in (0.5, 1 - 2e-6, 1 + 2e-6, 2.0):
        assert not grading.grade_report("L1.time", switching_at(of_ridge), seed=seed).passed, of_ridge
    assert grading.grade_report("L1.time", switching_at(1.0), seed=seed).passed
    solution = grading.solution("L1.time")
    for kind in (fractions.Fraction, decimal.Decimal, np.float64, float):
        assert grading.grade_report("L1.time", lambda *a, kind=kind: kind(solution(*a)), seed=seed).passed, kind

    class Real(float):
        pass

    for wrong in (lambda *a: True, lambda *a: Real(solution(*a)), lambda *a: complex(solution(*a))):
        report = grading.grade_report("L1.time", wrong, seed=seed)
        assert not report.passed and "expected a number" in report.failures[0].message, report.text()


@pytest.mark.parametrize("seed", [1, 2, 3, SEED])
def test_l1_matmul_bytes_refuses_a_32_bit_count(seed):
    """The case with sizes of 30001 to 60000 counts more than 2^32 bytes on every seed: int32 and uint32 counts
    wrap (told so), float32 rounds; int64 and Python integers pass."""
    import numpy as np

    from gpuperf import grading

    solution = grading.solution("L1.matmul_bytes")
    for kind in (np.int32, np.uint32, np.float32):
        def fn(m, n, k, b, kind=kind):
            with np.errstate(over="ignore"):
                return (kind(m) * kind(k) + kind(k) * kind(n) + kind(m) * kind(n)) * kind(b)

        report = grading.grade_report("L1.matmul_bytes", fn, seed=seed, only=_size_above(30_000))
        assert not report.passed, (kind, report.text())
        if kind is not np.float32:
            assert "2^32" in report.failures[0].message, report.text()
    for kind in (np.int64, int):
        assert grading.grade_report("L1.matmul_bytes", lambda *a, kind=kind: kind(solution(*a)), seed=seed).passed


@pytest.mark.parametrize("key", ["L2.add", "L2.chain"])
def test_l2_course_solution_passes_its_long_cases(key):
    """The blocks-on-axis-0 and mask rules leave the course's solutions alone."""
    from gpuperf import grading

    report = grading.grade_report(key, grading.solution(key), seed=SEED, only=_size_above(4096))
    assert report.results and report.passed, report.text()


def test_the_mask_rule_reads_masks_only():
    """A 32-bit product of the program id in a load's *value* path (stored, never compared to a mask) is no
    position; in its mask it is."""
    from gpuperf.grading.frontend import wrapping_masks, wrapping_offsets

    masked = """
    tt.func public @k(%x: !tt.ptr<f32>, %n: i32) {
      %pid = tt.get_program_id x : i32
      %c = arith.constant 1024 : i32
      %start = arith.muli %pid, %c : i32
      %lanes = tt.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
      %left = arith.subi %n, %start : i32
      %leftb = tt.splat %left : i32 -> tensor<1024xi32>
      %mask = arith.cmpi slt, %lanes, %leftb : tensor<1024xi32>
      %p = tt.splat %x : !tt.ptr<f32> -> tensor<1024x!tt.ptr<f32>>
      %q = tt.addptr %p, %lanes : tensor<1024x!tt.ptr<f32>>, tensor<1024xi32>
      %v = tt.load %q, %mask : tensor<1024x!tt.ptr<f32>>
      tt.return
    }
    """
    assert not wrapping_offsets(masked, any_factor=True)
    assert wrapping_masks(masked, any_factor=True)
    assert not wrapping_masks(masked)  # L3-L6's rule: pid * BLOCK is a row index there
    unmasked = masked.replace("tt.load %q, %mask", "tt.load %q")
    assert not wrapping_masks(unmasked, any_factor=True)
