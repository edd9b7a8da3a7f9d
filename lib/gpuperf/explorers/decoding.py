"""The split-KV decoding explorer (chapter 16): batch, context length and number of KV splits -> the modelled
attention time of one decode step on an H200, the programs launched, the share of SMs they occupy and the
extra traffic of the partial states.

Model: :func:`gpuperf.decoding.decode_time_model` (a roofline-style estimate: the KV cache streams at the HBM
bandwidth times the fraction of SMs with a program; the partial states are merged at full bandwidth), for a
model with 8 KV heads of dimension 128 and 4 query heads per KV head (grouped-query attention), 16-bit cache.
"""

from __future__ import annotations

import html

from matplotlib.figure import Figure

from gpuperf import decoding, hardware
from gpuperf.explorers.core import View, explorer, slider
from gpuperf.plotting.style import PALETTE, use_book_style

BATCHES = (1, 4, 16, 32)
CONTEXTS = (8192, 32768, 131072)
SPLITS = (1, 2, 4, 8, 16, 32, 64)
KV_HEADS = 8
HEAD_DIM = 128
QUERIES_PER_KV_HEAD = 4
DEVICE = "H200 SXM"


def decode_state(batch: int, context: int, n_splits: int) -> decoding.DecodeTime:
    """The model's estimate for one state (see the module docstring)."""
    acc = hardware.get_accelerator(DEVICE)
    return decoding.decode_time_model(batch, KV_HEADS, context, HEAD_DIM, n_splits,
                                      queries_per_kv_head=QUERIES_PER_KV_HEAD, sm_count=acc.sm_count,
                                      hbm_bytes_per_s=acc.hbm_bytes_per_s)


def cache_floor_s(batch: int, context: int) -> float:
    """Time to read the KV cache once at the full HBM bandwidth (the bound no split count can beat)."""
    acc = hardware.get_accelerator(DEVICE)
    return batch * KV_HEADS * 2 * context * HEAD_DIM * 2 / acc.hbm_bytes_per_s


def decode_view(batch: int, context: int, n_splits: int) -> View:
    """Time vs splits for the chosen batch and context, the chosen split marked, and the numbers."""
    state = decode_state(batch, context, n_splits)
    floor = cache_floor_s(batch, context)
    use_book_style()
    fig = Figure(figsize=(5.6, 3.3))
    fig.subplots_adjust(left=0.14, right=0.97, bottom=0.16, top=0.92)
    ax = fig.add_subplot()
    times = [decode_state(batch, context, s).time_s * 1e6 for s in SPLITS]
    ax.plot(SPLITS, times, "-o", ms=4, color=PALETTE[0], label="model")
    ax.plot([n_splits], [state.time_s * 1e6], "o", ms=10, color=PALETTE[1], label="your choice")
    ax.axhline(floor * 1e6, color="0.5", ls=":", lw=1, label="cache bytes / HBM bandwidth")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("KV splits per (sequence, KV head)")
    ax.set_ylabel("attention time per step (us)")
    ax.legend(fontsize=8, loc="upper right")
    sms = hardware.get_accelerator(DEVICE).sm_count
    extra = state.bytes_moved / (batch * KV_HEADS * 2 * context * HEAD_DIM * 2) - 1
    text = (
        f"{html.escape(DEVICE)}: batch {batch} x {KV_HEADS} KV heads x {state.n_splits} split(s) = "
        f"<b>{state.programs} programs</b> for {sms} SMs ({state.busy_fraction:.0%} busy). "
        f"Modelled time <b>{state.time_s * 1e6:.0f} us</b>, {state.time_s / floor:.2f}x the "
        f"{floor * 1e6:.0f} us it takes to read the {context:,}-token cache once; the partial states add "
        f"{extra:.2%} to the traffic."
    )
    return View(figure=fig, html=text)


def decode_explorer(mode: str | None = None):
    """The split-KV decoding explorer (live widget in Jupyter, precomputed figure on the site)."""
    controls = [
        slider("batch", BATCHES, default=1, label="batch"),
        slider("context", CONTEXTS, default=131072, label="context", fmt=lambda n: f"{n // 1024}K"),
        slider("n_splits", SPLITS, default=1, label="KV splits"),
    ]
    return explorer(decode_view, controls, title="Split-KV decoding", mode=mode)
