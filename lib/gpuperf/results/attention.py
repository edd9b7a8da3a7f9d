"""Reading a recorded run of the ``attention`` benchmark family (the FlashAttention forward) against its
same-run references and its target (chapter 14).

Pure functions over the rows :mod:`gpuperf.benchmark.family.attention` writes (one dict per case with
``kernel``, ``dtype``, ``head_dim``, ``mask``, ``n_seq`` and ``flop_per_s``, among others): the Triton
kernel's speed over a library kernel's at each shape, those ratios as table rows, and the target each head
dimension is held to. No torch, no GPU.
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


__all__ = ["TARGET_OVER_CUDNN", "ratio_table_rows", "speed_ratios"]
