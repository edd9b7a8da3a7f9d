"""Reading the ``decode`` family's recorded runs: per shape, the Flash-Decoding kernel's bandwidth and its
ratios to the same run's copy and SDPA backends (the family: :mod:`gpuperf.benchmark.family.decode`).

Rates are bytes of K and V per second (the copy's: bytes read and written per second, the same HBM
traffic); a ratio to a backend is that backend's time over ours (>= 1: ours is faster).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

#: The recorded run chapter 16 reads (``book/data/decode_h200.json``).
RUN_NAME = "decode_h200"

SHAPE_KEYS = ("batch", "h_q", "h_kv", "n_k")


def _key(row: Mapping[str, Any]) -> tuple:
    return tuple(row[k] for k in SHAPE_KEYS)


def shape_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One dict per shape (in the run's order): ``batch, h_q, h_kv, n_k``, ``copy_tb_s``, ``triton_tb_s``,
    ``n_splits``, and for each of ``triton``, ``triton-unsplit``, ``triton-paged page=P``, ``sdpa-cudnn``,
    ``sdpa-flash``: ``<impl>_vs_copy`` (rate / copy's rate); ``triton_vs_<backend>`` (backend's time /
    ours) for the two SDPA backends and the unsplit kernel, with ``<backend>_gqa`` saying how SDPA took
    GQA. Missing rows give None."""
    shapes: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        if row.get("metric") != "bytes_per_s" or "n_k" not in row:
            continue
        out = shapes.setdefault(_key(row), {k: row[k] for k in SHAPE_KEYS})
        impl = row["impl"] + (f" page={row['page_size']}" if row.get("page_size") else "")
        out[f"{impl}_time_s"] = row["time_s"]
        out[f"{impl}_tb_s"] = row["bytes_per_s"] / 1e12
        if "gqa" in row and row["impl"].startswith("sdpa"):
            out[f"{row['impl']}_gqa"] = row["gqa"]
        if row["impl"] == "triton":
            out["n_splits"] = row.get("n_splits")
    result = []
    for out in shapes.values():
        copy = out.get("copy_tb_s")
        for name in [k[:-5] for k in out if k.endswith("_tb_s")]:
            out[f"{name}_vs_copy"] = out[f"{name}_tb_s"] / copy if copy else None
        ours = out.get("triton_time_s")
        for other in ("sdpa-cudnn", "sdpa-flash", "triton-unsplit"):
            theirs = out.get(f"{other}_time_s")
            out[f"triton_vs_{other}"] = theirs / ours if (theirs and ours) else None
        result.append(out)
    return result


def host_times(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Host time per call (s) of ``host-sdpa`` and ``host-triton``, where recorded."""
    return {row["impl"]: row["time_s"] for row in rows if str(row.get("impl", "")).startswith("host-")}


def report_shapes(rows: Sequence[Mapping[str, Any]]) -> None:
    """Print one line per shape: our TB/s and ratios to the copy, cuDNN, flash, and split vs unsplit."""
    def f(x, spec=".2f"):
        return "  -  " if x is None else format(x, spec)

    print(f"{'B':>3} {'Hq':>3} {'Hkv':>3} {'N_k':>7} {'S':>3} {'TB/s':>5} {'/copy':>5} {'/cuDNN':>6} "
          f"{'/flash':>6} {'/S=1':>5} {'cuDNN/copy':>10} {'paged16/copy':>12} {'paged256/copy':>13}")
    for s in shape_rows(rows):
        print(f"{s['batch']:>3} {s['h_q']:>3} {s['h_kv']:>3} {s['n_k']:>7} {str(s.get('n_splits')):>3} "
              f"{f(s.get('triton_tb_s')):>5} {f(s.get('triton_vs_copy')):>5} "
              f"{f(s.get('triton_vs_sdpa-cudnn')):>6} {f(s.get('triton_vs_sdpa-flash')):>6} "
              f"{f(s.get('triton_vs_triton-unsplit')):>5} {f(s.get('sdpa-cudnn_vs_copy')):>10} "
              f"{f(s.get('triton-paged page=16_vs_copy')):>12} {f(s.get('triton-paged page=256_vs_copy')):>13}")
    host = host_times(rows)
    if host:
        print("host time per call: " + ", ".join(f"{k} {v * 1e6:.1f} us" for k, v in host.items()))
