"""gpuperf.matmul_results and the matmul_roof benchmark family's cases (no GPU needed for either)."""

from __future__ import annotations

import pytest

from gpuperf import matmul_results as mr
from gpuperf import roofline as rl
from gpuperf.benchmark import matmul_roof


def _row(kind, m, k, n, time_s, label=None):
    flop = 2.0 * m * k * n if kind != "copy" else 0.0
    moved = 2.0 * (m * k + k * n + m * n) if kind != "copy" else 4.0 * n
    return {"kind": kind, "m": m, "k": k, "n": n, "flop": flop, "bytes_moved": moved, "time_s": time_s,
            "flop_per_s": flop / time_s, "bytes_per_s": moved / time_s, "label": label or f"{kind} {m}x{k}x{n}"}


def _rows():
    rows = [_row("copy", 0, 0, 2**29, 2**31 / 4e12)]
    # squares at a made-up 10 us fixed cost plus 700 TFLOP/s
    for n in (128, 512, 1024, 2048, 4096):
        rows.append(_row("square", n, n, n, 10e-6 + 2 * n**3 / 700e12))
    rows.append(_row("decode", 1, 4096, 4096, 2 * (4096 * 4096) / 3e12))
    return rows


def test_analyze_rows_against_the_roofline():
    results = mr.analyze_rows(_rows(), "H200 SXM")
    assert [r.kind for r in results] == ["square"] * 5 + ["decode"]
    for r in results:
        op = rl.analyze(rl.matmul(r.m, r.k, r.n), "H200 SXM")
        assert r.intensity_flop_per_byte == pytest.approx(op.intensity_flop_per_byte)
        assert r.fraction_of_bound == pytest.approx(r.flop_per_s / op.attainable_flop_per_s)
        assert r.fraction_of_peak == pytest.approx(r.flop_per_s / 989.4e12)
        assert r.bound == op.bound
        assert r.fraction_of_bound <= 1.0  # the made-up rates stay under the roof
    best = mr.best_square(results)
    assert best.n == 4096
    # 10 us + t: half the best rate is reached where the fixed cost is about equal to the arithmetic time
    assert mr.measured_knee(results) == 2048
    assert mr.measured_knee(results, fraction=0.0005) == 128
    assert mr.copy_bytes_per_s(_rows()) == pytest.approx(4e12)
    table = mr.report_table_rows(results)
    assert table[0]["shape"] == "128 x 128 x 128" and table[-1]["bound"] == "memory"


def test_bad_rows_raise():
    with pytest.raises(ValueError, match="rows"):
        mr.analyze_rows("nope", "H200 SXM")
    with pytest.raises(ValueError, match="lacks"):
        mr.analyze_rows([{"kind": "square"}], "H200 SXM")
    with pytest.raises(ValueError, match="kind"):
        mr.rows_of_kind(_rows(), "cube")
    with pytest.raises(ValueError, match="fraction"):
        mr.measured_knee(mr.analyze_rows(_rows(), "H200 SXM"), fraction=0)
    with pytest.raises(ValueError, match="square"):
        mr.best_square([])


def test_matmul_roof_shapes_and_references():
    shapes = matmul_roof.shapes()
    labels = [label for _, label, *_ in shapes]
    assert len(labels) == len(set(labels))
    assert matmul_roof.REFERENCE_LABEL in labels
    squares = [m for kind, _, m, k, n in shapes if kind == "square"]
    assert squares[0] == 128 and squares[-1] == 8192
    assert [m for kind, _, m, k, n in shapes if kind == "decode"] == list(matmul_roof.DECODE_BATCHES)
    quick = matmul_roof.shapes(quick=True)
    assert matmul_roof.REFERENCE_LABEL in [label for _, label, *_ in quick] and len(quick) < len(shapes)
    assert matmul_roof.matmul_bytes(2, 3, 4) == 2 * (6 + 12 + 8) and matmul_roof.matmul_flop(2, 3, 4) == 48
