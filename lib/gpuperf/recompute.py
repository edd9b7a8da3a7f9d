"""Recomputation: activation checkpointing counted, and the activations a backward pass keeps, measured.

Training keeps every layer's activations from the forward pass until the backward pass uses them. With
*checkpointing* {Chen et al., "Training Deep Nets with Sublinear Memory Cost", 2016} a network of L layers
is cut into segments; only the input of each segment is kept, and during the backward pass each segment's
forward is run again to rebuild its activations just before they are needed. In units of one layer's
activations, with segments of s layers (the last may be shorter):

* kept after the forward pass: one input per segment but the last, plus the last segment's activations, which
  are used first (this is what ``torch.utils.checkpoint.checkpoint_sequential`` does, the last segment being
  run without checkpointing): ``ceil(L / s) - 1 + last``;
* peak during the backward pass: the checkpoints still waiting plus the activations of the segment being
  rebuilt; for s dividing L it is ``L / s + s``, smallest at s = sqrt(L), where it is 2 sqrt(L);
* extra compute: every segment but the last is run forward twice: ``L - last`` layer forwards.

:func:`checkpoint_schedule` counts these by simulating the schedule; :func:`saved_activation_bytes` measures
what PyTorch's autograd actually keeps (torch imported inside). This module imports neither torch nor triton.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class CheckpointSchedule:
    """Memory (in layer-activation units) and extra layer forwards of checkpointing L layers in segments of s."""

    n_layers: int
    segment: int
    segments: int
    kept_after_forward: int
    peak_backward: int
    extra_layer_forwards: int


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def checkpoint_schedule(n_layers: int, segment: int, tensors_per_layer: int = 1) -> CheckpointSchedule:
    """Simulate the schedule: segments of ``segment`` layers (the last one shorter if it must); the last
    segment is not checkpointed (its activations are kept, as it is the first to run backward).

    Memory is counted in tensors of one activation's size: a checkpoint is one, a layer saves
    ``tensors_per_layer`` (a Linear + GELU layer saves two: the Linear's input and the GELU's).
    ``segment >= n_layers`` is no checkpointing: L tensors_per_layer kept, no extra work.
    """
    L = _check_int("n_layers", n_layers)
    s = min(_check_int("segment", segment), L)
    a = _check_int("tensors_per_layer", tensors_per_layer)
    sizes = [min(s, L - start) for start in range(0, L, s)]
    n_seg = len(sizes)
    kept = (n_seg - 1) + a * sizes[-1]  # a checkpoint per earlier segment + the last segment's activations
    peak = kept
    waiting = n_seg - 1  # checkpoints still held
    for size in reversed(sizes[:-1]):  # backward through the earlier segments, last first
        peak = max(peak, waiting + a * size)  # its checkpoint (still counted) + its rebuilt activations
        waiting -= 1
    return CheckpointSchedule(L, s, n_seg, kept, peak, L - sizes[-1])


def best_segment(n_layers: int) -> int:
    """The segment length with the smallest backward peak (the smallest such length on ties)."""
    L = _check_int("n_layers", n_layers)
    return min(range(1, L + 1), key=lambda s: (checkpoint_schedule(L, s).peak_backward, s))


def sqrt_peak(n_layers: int) -> float:
    """The closed form of the smallest peak for segments dividing L: 2 sqrt(L) (at s = sqrt(L))."""
    return 2 * math.sqrt(_check_int("n_layers", n_layers))


def saved_activation_bytes(fn: Callable[[], object], parameters=()) -> int:
    """Bytes of the distinct storages autograd saves for the backward pass while ``fn()`` runs, excluding
    the storages of ``parameters`` (and of any leaf that requires grad; a Linear saves a transposed *view* of
    its weight, which only the storage reveals): the activation memory a backward pass will need.

    Counts what is packed through ``torch.autograd.graph.saved_tensors_hooks``; a reentrant checkpoint
    (``use_reentrant=True``) saves only its inputs there and runs its segment without saving anything, so the
    count is what checkpointing keeps.
    """
    import torch

    seen: dict[int, int] = {}
    skip = {p.untyped_storage().data_ptr() for p in parameters}

    def pack(t):
        if not (t.is_leaf and t.requires_grad) and t.untyped_storage().data_ptr() not in skip:
            storage = t.untyped_storage()
            seen[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return sum(seen.values())


__all__ = ["CheckpointSchedule", "best_segment", "checkpoint_schedule", "saved_activation_bytes", "sqrt_peak"]
