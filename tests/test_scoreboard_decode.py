"""The decoding targets of issue 33 (gpuperf.results.scoreboard.DECODE_TARGETS) on a hand-built run of the
``decode`` family's rows, on its recorded run where book/data has it, and the reader
gpuperf.results.decode."""

from __future__ import annotations

import pytest

from gpuperf import records
from gpuperf.benchmark.family import decode as family
from gpuperf.results import decode as dr
from gpuperf.results import scoreboard as sb

PROV = {"device": "NVIDIA H200", "driver": "x", "torch": "2.11", "triton": "3.6.0", "date": "2026-12-04"}


def _rows(triton_s=1.0, cudnn_s=1.1, copy_s=1.8, cudnn_missing=()):
    rows = []
    for b, hq, hkv, n_k, paged in family.SHAPES:
        shape = {"batch": b, "h_q": hq, "h_kv": hkv, "n_k": n_k, "n_q": 1, "head_dim": 128, "dtype": "fp16"}
        kv = 4.0 * b * hkv * n_k * 128
        copy = f"copy {b} {hq} {hkv} {n_k}"
        rows.append({**shape, "impl": "copy", "family": "decode", "label": copy, "time_s": copy_s,
                     "bytes_per_s": 2 * kv / copy_s, "metric": "bytes_per_s", "reference": None})
        impls = [("triton", triton_s, {}), ("triton-unsplit", 5.0, {})]
        if (b, hq, hkv, n_k) not in cudnn_missing:
            impls.append(("sdpa-cudnn", cudnn_s, {"gqa": "native"}))
        if paged:
            impls += [("triton-paged", triton_s, {"page_size": p}) for p in family.PAGE_SIZES]
        for impl, t, extra in impls:
            rows.append({**shape, **extra, "impl": impl, "family": "decode", "metric": "bytes_per_s",
                         "label": f"{impl} {extra} {b} {hq} {hkv} {n_k}", "time_s": t, "bytes_per_s": kv / t,
                         "reference": copy, "ratio_to_reference": (kv / t) / (2 * kv / copy_s)})
    return {"name": "synthetic", "provenance": dict(PROV), "results": rows}


def test_the_targets_cover_the_family_and_the_issue():
    by_id = {t.target_id: t for t in sb.DECODE_TARGETS}
    assert set(by_id) == set(sb.DECODE_REASONS)
    assert (by_id["decode-copy"].min_ratio, by_id["decode-cudnn"].min_ratio,
            by_id["decode-cudnn-short"].min_ratio) == (0.85, 1.0, 0.90)
    shapes = {(b, hq, hkv, n) for b, hq, hkv, n, _ in family.SHAPES}
    long_ = {(c.shape["batch"], c.shape["h_q"], c.shape["h_kv"], c.shape["n_k"]) for c in by_id["decode-copy"].cases}
    short = {(c.shape["batch"], c.shape["h_q"], c.shape["h_kv"], c.shape["n_k"])
             for c in by_id["decode-cudnn-short"].cases}
    assert long_ | short == shapes and all(s[3] >= 8192 for s in long_) and all(s[3] <= 4096 for s in short)
    assert any(s[1] != s[2] for s in long_) and {s[0] for s in long_} == {1, 8, 16, 64}  # GQA, batch 1-64


def test_scored_by_the_worst_case():
    run = _rows(triton_s=1.0, cudnn_s=1.1, copy_s=1.8)  # ours: 0.9 of the copy, 1.1x cuDNN
    scores = sb.score_all(sb.DECODE_TARGETS, sb.DECODE_RECORDED_RUNS, loaded={"decode_h200": run})
    by_id = {s.target.target_id: s for s in scores}
    assert by_id["decode-copy"].status == "met" and by_id["decode-copy"].worst == pytest.approx(0.9)
    assert by_id["decode-cudnn"].worst == pytest.approx(1.1)
    slow = _rows(triton_s=1.0, cudnn_s=0.95, copy_s=1.8, cudnn_missing={(1, 8, 8, 8192)})
    s = sb.score_target(sb.DECODE_TARGETS[1], slow)
    assert s.status == "missed" and s.n_missing == 1 and s.worst == pytest.approx(0.95)


def test_the_reader_gives_ratios_per_shape():
    shapes = dr.shape_rows(_rows(triton_s=1.0, cudnn_s=1.1, copy_s=1.8)["results"])
    assert len(shapes) == len(family.SHAPES)
    first = shapes[0]
    assert first["triton_vs_copy"] == pytest.approx(0.9) and first["triton_vs_sdpa-cudnn"] == pytest.approx(1.1)
    assert first["triton_vs_triton-unsplit"] == pytest.approx(5.0) and first["triton_vs_sdpa-flash"] is None


def test_the_recorded_run_when_present():
    try:
        run = records.load_run(dr.RUN_NAME)
    except ValueError:
        pytest.skip(f"{dr.RUN_NAME} is not recorded in book/data yet")
    scores = sb.score_all(sb.DECODE_TARGETS, sb.DECODE_RECORDED_RUNS, loaded={dr.RUN_NAME: run})
    assert all(s.provenance["device"] == "NVIDIA H200" for s in scores)
    assert scores[0].n_missing == 0 and scores[-1].n_missing == 0
