"""Reading recorded runs of the attention benchmark families against their same-run references and
targets (chapters 14 and 15).

Pure functions over the rows the families write (one dict per case, no torch, no GPU):

* ``attention`` (:mod:`gpuperf.benchmark.family.attention`, the forward pass; rows with ``kernel``,
  ``dtype``, ``head_dim``, ``mask``, ``n_seq`` and ``flop_per_s``, among others): :func:`speed_ratios`, the
  Triton kernel's speed over a library kernel's at each shape, :func:`ratio_table_rows`, those ratios as
  table rows, and :data:`TARGET_OVER_CUDNN`, the target each head dimension is held to;
* ``attention_backward`` (:mod:`gpuperf.benchmark.family.attention_backward`; rows with ``impl`` and
  ``pass``): :func:`comparison_rows`, the three implementations' rates and ratios at each shape.
"""

from __future__ import annotations

from gpuperf.benchmark.family.attention import HEAD_DIMS  # the rows' schema, from their producer
from gpuperf.results.scoreboard import get_target

#: Issue 15's targets for the Triton forward pass over SDPA's cuDNN backend, by head dim (read from the
#: scoreboard's table, :data:`gpuperf.results.scoreboard.TARGETS`, which holds every target once).
TARGET_OVER_CUDNN = {d: get_target(f"attention-fwd-d{d}").min_ratio for d in HEAD_DIMS}


def speed_ratios(rows, kernel: str = "triton", reference: str = "sdpa-cudnn") -> dict:
    """``{(dtype, head_dim, mask, n_seq): rate of kernel / rate of reference}`` over the shapes of a recorded
    or live run of this family that have both (pure; FLOP/s ratios, so equal to the time ratio inverted)."""
    rate = {(r["kernel"], r["dtype"], r["head_dim"], r["mask"], r["n_seq"]): r["flop_per_s"] for r in rows}
    return {key[1:]: rate[key] / rate[(reference, *key[1:])] for key in sorted(rate, key=str)
            if key[0] == kernel and (reference, *key[1:]) in rate}


def ratio_table_rows(ratios: dict) -> list[dict]:
    """One row per (dtype, head dim, mask) with a column ``N<n>`` per sequence length (for
    :func:`gpuperf.plotting.tables.format_table_html`), plus the worst ratio and the issue's target for that head dim."""
    out = {}
    for (dtype, d, mask, n), value in sorted(ratios.items()):
        row = out.setdefault((dtype, d, mask), {"case": f"{dtype}, d = {d}, {mask}",
                                                "target": TARGET_OVER_CUDNN.get(d)})
        row[f"N{n}"] = value
    for row in out.values():
        row["worst"] = min(v for k, v in row.items() if k.startswith("N"))
    return list(out.values())


def comparison_rows(rows, pass_name: str = "bwd", dtype: str = "fp16") -> list[dict]:
    """One dict per (head_dim, mask, n_seq) of a recorded ``attention_backward`` run: the TFLOP/s of
    ``triton``, ``sdpa-flash`` and ``sdpa-cudnn`` for ``pass_name`` ("bwd" or "fwd+bwd"), and the ratios
    ``vs_flash`` = triton / sdpa-flash and ``vs_cudnn`` = triton / sdpa-cudnn (speed ratios: same work).

    Sorted by head_dim, mask ("full" first) and n_seq. Raises ``ValueError`` if a shape lacks an
    implementation.
    """
    if pass_name not in ("bwd", "fwd+bwd"):
        raise ValueError(f"pass_name must be 'bwd' or 'fwd+bwd', got {pass_name!r}")
    table: dict[tuple, dict] = {}
    for r in rows:
        if r.get("pass") != pass_name or r.get("dtype") != dtype:
            continue
        key = (r["head_dim"], r["mask"], r["n_seq"])
        table.setdefault(key, {})[r["impl"]] = r["flop_per_s"] / 1e12
    out = []
    for (head_dim, mask, n_seq), rates in sorted(table.items(),
                                                 key=lambda kv: (kv[0][0], kv[0][1] != "full", kv[0][2])):
        missing = {"triton", "sdpa-flash", "sdpa-cudnn"} - set(rates)
        if missing:
            raise ValueError(f"rows: shape d={head_dim} {mask} N={n_seq} lacks {sorted(missing)}")
        out.append({"head_dim": head_dim, "mask": mask, "n_seq": n_seq, "triton": rates["triton"],
                    "flash": rates["sdpa-flash"], "cudnn": rates["sdpa-cudnn"],
                    "vs_flash": rates["triton"] / rates["sdpa-flash"],
                    "vs_cudnn": rates["triton"] / rates["sdpa-cudnn"]})
    return out


__all__ = ["TARGET_OVER_CUDNN", "comparison_rows", "ratio_table_rows", "speed_ratios"]
