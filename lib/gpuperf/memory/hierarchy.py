"""The levels of a GPU's memory hierarchy with their capacity and bandwidth, from :mod:`gpuperf.hardware`
(latencies come from a recorded measurement, never from this table)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuperf import hardware

LEVELS = ("registers", "shared memory", "L2", "HBM", "host link")


@dataclass(frozen=True)
class Level:
    """One level: ``capacity_bytes`` over the whole chip (None: not a capacity of the chip, e.g. the host
    link) and ``bytes_per_s`` (None where no figure is published)."""

    name: str
    capacity_bytes: float | None
    bytes_per_s: float | None
    note: str


def hierarchy_levels(device: str) -> list[Level]:
    """Registers, shared memory, L2, HBM and the host link of ``device`` (a GPU with a host-link figure in
    :data:`gpuperf.hardware.HOST_LINK_BYTES_PER_S`)."""
    acc = hardware.get_accelerator(device)
    if acc.name not in hardware.HOST_LINK_BYTES_PER_S:
        raise ValueError(f"device {device!r}: the hierarchy is tabulated for "
                         f"{sorted(hardware.HOST_LINK_BYTES_PER_S)}")
    sms = acc.sm_count
    smem_bw = acc.shared_memory_bytes_per_clock_per_sm * sms * acc.boost_clock_hz
    return [
        Level("registers", acc.registers_per_sm_bytes * sms, None,
              f"{acc.registers_per_sm_bytes / 1024:.0f} KiB per SM x {sms} SMs; bandwidth not published"),
        Level("shared memory", acc.shared_memory_per_sm_bytes * sms, smem_bw,
              f"{acc.shared_memory_per_sm_bytes / 1024:.0f} KiB per SM x {sms} SMs; 128 B/clock per SM "
              "at the boost clock"),
        Level("L2", acc.l2_bytes, acc.l2_bytes_per_s, "one cache shared by all SMs"),
        Level("HBM", acc.hbm_capacity_bytes, acc.hbm_bytes_per_s, acc.memory_type or "HBM"),
        Level("host link", None, hardware.HOST_LINK_BYTES_PER_S[acc.name], "PCIe, both directions together"),
    ]
