"""The bytes-in-flight explorer (chapter 02): pick resident warps per SM, independent 16-byte loads in
flight per thread and a GPU, and see where that puts the GPU on its Little's-law curve
(:func:`gpuperf.littles_law.bandwidth_from_bytes_in_flight`), with the bandwidth and the share of the SM's
warp slots it takes.

The latency is the H200's HBM latency measured by pointer chasing (``book/data/pointer_chase_h200.json``);
for the other GPUs it is an assumption (their latencies were not measured here), and the text says so.
"""

from __future__ import annotations

import functools

import numpy as np
from matplotlib.figure import Figure

from gpuperf import hardware, littles_law
from gpuperf.explorers.core import View, dropdown, explorer, slider
from gpuperf.plotting.style import PALETTE, use_book_style
from gpuperf.results.latency import recorded_latency_levels

WARPS = (1, 4, 16, 32, 64)
LOADS = (1, 2, 4, 8)
DEVICES = ("H200 SXM", "A100 80GB SXM")
BYTES_PER_LOAD = 16


@functools.lru_cache(maxsize=1)
def measured_hbm_latency_s() -> float:
    """HBM latency of the H200 from the recorded pointer chase (seconds)."""
    return recorded_latency_levels()[0].seconds("hbm")


def in_flight_view(warps_per_sm: int, loads_per_thread: int, device: str) -> View:
    """One state: the device's model curve, the chosen point, and the numbers."""
    latency_s = measured_hbm_latency_s()
    req = littles_law.in_flight_requirement(device, latency_s, BYTES_PER_LOAD, loads_per_thread)
    per_sm = float(littles_law.bytes_in_flight_per_sm(warps_per_sm, loads_per_thread, BYTES_PER_LOAD))
    bw = float(littles_law.bandwidth_from_bytes_in_flight(per_sm * req.sm_count, latency_s, req.hbm_bytes_per_s))
    use_book_style()
    fig = Figure(figsize=(5.6, 3.3))
    fig.subplots_adjust(left=0.13, right=0.97, bottom=0.16, top=0.92)
    ax = fig.add_subplot()
    xs = np.geomspace(256, 2**20, 120)
    curve = littles_law.bandwidth_from_bytes_in_flight(xs * req.sm_count, latency_s, req.hbm_bytes_per_s)
    ax.plot(xs / 1024, curve / 1e12, color=PALETTE[0], label=f"{req.accelerator}: min(B, in flight / latency)")
    ax.axvline(req.bytes_in_flight_per_sm / 1024, color="0.5", ls=":", lw=1)
    ax.plot([per_sm / 1024], [bw / 1e12], "o", ms=9, color=PALETTE[1], label="your kernel")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes in flight per SM (KiB)")
    ax.set_ylabel("HBM bandwidth (TB/s)")
    ax.set_ylim(0, 5.2)
    ax.legend(loc="upper left", fontsize=8)
    limits = hardware.get_sm_limits(req.accelerator)
    slots = warps_per_sm / limits.max_warps_per_sm
    note = "measured on the H200" if req.accelerator == "H200 SXM" else "the H200's, assumed"
    text = (
        f"<b>{req.accelerator}</b>: {warps_per_sm} warp(s) per SM x 32 threads x {loads_per_thread} load(s) "
        f"x {BYTES_PER_LOAD} B = <b>{per_sm / 1024:.1f} KiB</b> in flight per SM "
        f"({slots:.0%} of the SM's {limits.max_warps_per_sm} warp slots). "
        f"Little's law at {latency_s * 1e9:.0f} ns ({note}) needs {req.bytes_in_flight_per_sm / 1024:.1f} KiB "
        f"per SM for {req.hbm_bytes_per_s / 1e12:.2f} TB/s. Model: <b>{bw / 1e12:.2f} TB/s</b> "
        f"= {bw / req.hbm_bytes_per_s:.0%} of the peak."
    )
    return View(figure=fig, html=text)


def bytes_in_flight_explorer(device: str = "H200 SXM", mode: str | None = None):
    """The bytes-in-flight explorer (live widget in Jupyter, precomputed figure on the site)."""
    controls = [
        slider("warps_per_sm", WARPS, default=16, label="warps per SM"),
        slider("loads_per_thread", LOADS, default=1, label="loads per thread"),
        dropdown("device", DEVICES, default=device),
    ]
    return explorer(in_flight_view, controls, title="Bytes in flight and bandwidth", mode=mode)
