"""Tests of gpuperf.recompute: the checkpoint schedule against closed forms, and the measured saved bytes of a
small network against the schedule (CPU)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import recompute as rc


@settings(max_examples=200, deadline=None)
@given(q=st.integers(1, 30), s=st.integers(1, 30), a=st.integers(1, 4))
def test_divisible_schedule_closed_forms(q, s, a):
    sched = rc.checkpoint_schedule(q * s, s, a)
    assert sched.segments == q
    assert sched.kept_after_forward == (q - 1) + a * s
    assert sched.peak_backward == (q - 1) + a * s  # every segment is as long as the last
    assert sched.extra_layer_forwards == (q - 1) * s


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 400), s=st.integers(1, 400))
def test_schedule_bounds(n, s):
    sched = rc.checkpoint_schedule(n, s)
    assert sched.segments == math.ceil(n / min(s, n))
    assert sched.peak_backward >= sched.kept_after_forward
    assert sched.peak_backward <= sched.segments + min(s, n)
    assert 0 <= sched.extra_layer_forwards < n


def test_no_checkpointing_and_sqrt_rule():
    assert rc.checkpoint_schedule(16, 16).kept_after_forward == 16
    assert rc.checkpoint_schedule(16, 100).extra_layer_forwards == 0
    for n in (16, 64, 100, 400):
        best = rc.best_segment(n)
        assert best == math.isqrt(n)
        assert rc.checkpoint_schedule(n, best).peak_backward == pytest.approx(rc.sqrt_peak(n), abs=1)


def test_measured_saved_bytes_match_the_schedule():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint_sequential

    torch.manual_seed(0)
    layers, d, batch = 8, 32, 16
    model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.GELU())
                                  for _ in range(layers)])
    x = torch.randn(batch, d, requires_grad=True)
    unit = batch * d * 4
    plain = rc.saved_activation_bytes(lambda: model(x).square().mean(), model.parameters())
    # x is a leaf (not counted), the loss saves the output y: the two cancel against the schedule's count.
    assert plain == rc.checkpoint_schedule(layers, layers, 2).kept_after_forward * unit
    for segments in (2, 4, 8):
        saved = rc.saved_activation_bytes(
            lambda: checkpoint_sequential(model, segments, x, use_reentrant=True).square().mean(),
            model.parameters())
        assert saved == rc.checkpoint_schedule(layers, layers // segments, 2).kept_after_forward * unit


def test_bad_inputs():
    with pytest.raises(ValueError, match="n_layers"):
        rc.checkpoint_schedule(0, 1)
    with pytest.raises(ValueError, match="segment"):
        rc.checkpoint_schedule(4, 0)
    with pytest.raises(ValueError, match="tensors_per_layer"):
        rc.checkpoint_schedule(4, 2, 0)
