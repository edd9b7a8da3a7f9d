"""The fused cross-entropy kernel against float64 ``F.cross_entropy`` (interpreter on the CPU at small sizes,
compiled on a GPU at full size)."""

import pytest
import torch
import torch.nn.functional as F

from gpuperf.kernels import cross_entropy as ce

GPU = torch.cuda.is_available()
DTYPES = [torch.float32, torch.float16] + ([torch.bfloat16] if GPU else [])
# Loss: fp32 accumulation over the row (relative); gradient: one rounding to the storage dtype of a value
# at most 1 in magnitude, and fp32 rounding of softmax.
GRAD_TOL = {torch.float32: 1e-6, torch.float16: 2 ** -10, torch.bfloat16: 2 ** -7}


def _inputs(device, gen, n, v, dtype, n_ignored=1):
    x = (torch.randn(n, v, generator=gen, device=device) * 3).to(dtype)
    t = torch.randint(0, v, (n,), generator=gen, device=device)
    t[:n_ignored] = -100
    return x, t


def _run(x, t, **kw):
    xx = x.clone().requires_grad_(True)
    loss = ce.cross_entropy(xx, t, **kw)
    (loss.sum() if kw.get("reduction") == "none" else loss).backward()
    return loss, xx.grad


def _compare(x, t, seed, **kw):
    ref_loss, ref_g = ce.cross_entropy_reference(x, t, **kw)
    loss, g = _run(x, t, **kw)
    assert torch.allclose(loss.double().cpu(), ref_loss, rtol=1e-5, atol=1e-5, equal_nan=True), \
        f"loss {loss} vs {ref_loss} (seed {seed})"
    err = (g.double().cpu() - ref_g).abs().max().item() if g.numel() else 0.0
    scale = ref_g.abs().max().item() if ref_g.numel() else 0.0
    # 16-bit logits: the kernel's exponentials take their shift in a fused multiply-add, exact to about
    # |max logit| 2^-24 relative, far under a 16-bit rounding; where every gradient is 0 (one column) the
    # target's value, its own term of l over l, may come out a few fp32 ulps off (a GPU divides approximately)
    floor = 1e-9 if x.dtype == torch.float32 else 2 ** -20
    assert err <= GRAD_TOL[x.dtype] * max(scale, 1e-30) * 2 + floor, f"gradient error {err} (seed {seed})"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 1), (5, 17), (3, 300), (2, 50257)])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_matches_float64_cross_entropy(device, gen, dtype, shape, smoothing, reduction):
    if not GPU and shape[1] > 1000 and (smoothing, reduction) != (0.0, "mean"):
        pytest.skip("one wide row case is enough under the interpreter (CI's time)")
    x, t = _inputs(device, gen, *shape, dtype)
    _compare(x, t, gen.initial_seed(), label_smoothing=smoothing, reduction=reduction)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_every_row_ignored(device, gen, reduction):
    x, t = _inputs(device, gen, 3, 17, torch.float32, n_ignored=3)
    _compare(x, t, gen.initial_seed(), reduction=reduction)  # mean: NaN, as F.cross_entropy; gradient 0


def test_the_gradient_overwrites_the_logits_unless_inplace_is_false(device, gen):
    x, t = _inputs(device, gen, 4, 33, torch.float32)
    x0 = x.clone()
    x.requires_grad_(True)
    loss = ce.cross_entropy(x, t)
    loss.backward()
    assert not torch.equal(x.detach(), x0)  # the logits now hold the gradient
    assert torch.equal(x.detach(), x.grad)
    y = x0.clone().requires_grad_(True)
    ce.cross_entropy(y, t, inplace=False).backward()
    assert torch.equal(y.detach(), x0)
    assert torch.allclose(y.grad, x.grad)


def test_upstream_gradient_other_than_one_scales_each_row(device, gen):
    x, t = _inputs(device, gen, 5, 40, torch.float32)
    w = torch.arange(5.0, device=device)
    xx = x.clone().requires_grad_(True)
    (ce.cross_entropy(xx, t, reduction="none") * w).sum().backward()
    xr = x.detach().cpu().double().requires_grad_(True)
    (F.cross_entropy(xr, t.cpu(), reduction="none") * w.cpu().double()).sum().backward()
    assert torch.allclose(xx.grad.double().cpu(), xr.grad, atol=1e-6)
    xx = x.clone().requires_grad_(True)
    (3 * ce.cross_entropy(xx, t)).backward()
    xr = x.detach().cpu().double().requires_grad_(True)
    (3 * F.cross_entropy(xr, t.cpu())).backward()
    assert torch.allclose(xx.grad.double().cpu(), xr.grad, atol=1e-6)


def test_rows_with_a_stride_and_at_odd_offsets(device, gen):
    # A slice of wider logits, starting 3 elements into its storage: every row starts at another offset
    # modulo 16 bytes, and the gradient lands in the slice only.
    wide = (torch.randn(6, 120, generator=gen, device=device) * 3).half()
    x = wide[:, 3:100]
    t = torch.randint(0, 97, (6,), generator=gen, device=device)
    ref_loss, ref_g = ce.cross_entropy_reference(x, t, label_smoothing=0.1)
    before = wide.clone()
    xs = x.detach().requires_grad_(True)
    loss = ce.cross_entropy(xs, t, label_smoothing=0.1)
    loss.backward()
    assert torch.allclose(loss.double().cpu(), ref_loss, rtol=1e-5)
    assert (xs.grad.double().cpu() - ref_g).abs().max().item() < 2e-3
    assert torch.equal(wide[:, :3], before[:, :3]) and torch.equal(wide[:, 100:], before[:, 100:])


def test_without_a_gradient_the_logits_stay(device, gen):
    x, t = _inputs(device, gen, 3, 50, torch.float16)
    x0 = x.clone()
    with torch.no_grad():
        loss = ce.cross_entropy(x, t)
    assert torch.equal(x, x0)
    assert torch.allclose(loss.double().cpu(), ce.cross_entropy_reference(x, t)[0], rtol=1e-5)


def test_the_online_reference_matches_float64():
    x = torch.randn(4, 3000) * 5
    t = torch.randint(0, 3000, (4,))
    loss, lse = ce.cross_entropy_online_torch(x, t, block=256)
    ref = F.cross_entropy(x.double(), t, reduction="none")
    assert torch.allclose(loss.double(), ref, atol=1e-4)
    assert torch.allclose(lse.double(), torch.logsumexp(x.double(), 1), atol=1e-4)


@pytest.mark.parametrize("bad, match", [
    (lambda x, t: (x[0], t), "2-D"),
    (lambda x, t: (x.t(), t[:1].expand(x.shape[1])), "contiguous rows"),
    (lambda x, t: (x, t.float()), "int64"),
    (lambda x, t: (x, t[:2]), "int64"),
])
def test_clear_errors(device, bad, match):
    x = torch.randn(3, 8, device=device)
    t = torch.zeros(3, dtype=torch.int64, device=device)
    with pytest.raises(ValueError, match=match):
        ce.cross_entropy(*bad(x, t))
    with pytest.raises(ValueError, match="reduction"):
        ce.cross_entropy(x, t, reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        ce.cross_entropy(x, t, label_smoothing=1.5)


@pytest.mark.skipif(GPU, reason="the range check runs on the CPU only")
def test_a_target_out_of_range_is_refused_on_the_cpu():
    with pytest.raises(ValueError, match="target values"):
        ce.cross_entropy(torch.randn(2, 5), torch.tensor([1, 5]))


@pytest.mark.skipif(not GPU, reason="full sizes need a GPU")
@pytest.mark.parametrize("shape", [(4096, 32000), (1024, 50257), (512, 151936)])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_full_size_on_a_gpu(gen, shape, dtype):
    x, t = _inputs("cuda", gen, *shape, dtype, n_ignored=7)
    rows = torch.arange(0, shape[0], max(1, shape[0] // 64), device="cuda")  # check 64 rows in float64
    g_ref = ce.cross_entropy_reference(x[rows], t[rows], label_smoothing=0.1, reduction="sum")[1]
    loss_ref = F.cross_entropy(x.float(), t, label_smoothing=0.1)
    xx = x.clone().requires_grad_(True)
    loss = ce.cross_entropy(xx, t, label_smoothing=0.1)
    loss.backward()
    assert torch.allclose(loss.float(), loss_ref, rtol=1e-4), (loss.item(), loss_ref.item())
    n_valid = (t != -100).sum().item()
    err = (xx.grad[rows].double().cpu() * n_valid - g_ref).abs().max().item()
    assert err < GRAD_TOL[dtype] * 4 * max(1.0, 1.0), f"gradient error {err} (seed {gen.initial_seed()})"


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("shape, start", [((6, 3001), 3), ((3, 4096), 0), ((5, 100), 1)])
def test_a_row_over_cooperating_programs(device, gen, shape, start, smoothing):
    # On a GPU one launch whose programs meet at a barrier; under the interpreter the same kernel as two
    # launches (before and after the barrier). In place, at odd offsets.
    wide = (torch.randn(shape[0], shape[1] + 8, generator=gen, device=device) * 3).half()
    x = wide[:, start:start + shape[1]]
    t = torch.randint(0, shape[1], (shape[0],), generator=gen, device=device)
    t[0] = -100
    t[-1] = shape[1] - 1  # a target in the row's tail
    ref_loss, ref_g = ce.cross_entropy_reference(x, t, label_smoothing=smoothing)
    xs = x.detach()
    loss, lse, g = ce.cross_entropy_forward(xs, t, label_smoothing=smoothing,
                                            block_cols=64 if device == "cpu" else 256, chunk_cols=1024)
    assert g is xs
    assert torch.allclose(loss.double().cpu(), ref_loss, rtol=1e-5), (loss.item(), ref_loss.item())
    err = (g.double().cpu() - ref_g).abs().max().item()
    assert err <= GRAD_TOL[torch.float16] * 2 * ref_g.abs().max().item() + 1e-9, err


def test_rows_starting_at_every_offset_modulo_16_bytes(device, gen):
    # In place, on views that start 0-7 fp16 values past a 16-byte boundary (no copy that would realign).
    t = torch.randint(0, 61, (3,), generator=gen, device=device)
    for start in range(8):
        buf = (torch.randn(8 + 3 * 61, generator=gen, device=device) * 3).half()
        x = buf[start:start + 3 * 61].view(3, 61)
        ref_loss, ref_g = ce.cross_entropy_reference(x, t, label_smoothing=0.1)
        xs = x.detach().requires_grad_(True)
        loss = ce.cross_entropy(xs, t, label_smoothing=0.1)
        loss.backward()
        assert xs.grad.data_ptr() == x.data_ptr()  # written over the logits, at their odd address
        assert torch.allclose(loss.double().cpu(), ref_loss, rtol=1e-5)
        assert (xs.grad.double().cpu() - ref_g).abs().max().item() <= 2 ** -10 * 2 * ref_g.abs().max().item()


def test_an_operator_that_saved_the_logits_is_told_they_were_overwritten(device, gen):
    z = torch.randn(4, 33, generator=gen, device=device, requires_grad=True)
    t = torch.randint(0, 33, (4,), generator=gen, device=device)
    logits = torch.tanh(z)  # tanh keeps its output for the backward: the logits themselves
    loss = ce.cross_entropy(logits, t)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    z2 = z.detach().clone().requires_grad_(True)
    ce.cross_entropy(torch.tanh(z2), t, inplace=False).backward()  # a copy of the gradient: fine
    zr = z.detach().cpu().double().requires_grad_(True)
    F.cross_entropy(torch.tanh(zr), t.cpu()).backward()
    assert torch.allclose(z2.grad.double().cpu(), zr.grad, atol=1e-6)


def test_overlapping_rows_are_refused_in_place(device, gen):
    base = torch.randn(1, 40, generator=gen, device=device).requires_grad_(True)
    x = base.expand(4, 40)  # rows of stride 0: one memory row
    t = torch.zeros(4, dtype=torch.int64, device=device)
    with pytest.raises(ValueError, match="overlap"):
        ce.cross_entropy(x, t)
    ce.cross_entropy(x, t, inplace=False).backward()
    ref = base.detach().expand(4, 40).clone().requires_grad_(True)
    F.cross_entropy(ref, t).backward()
    assert torch.allclose(base.grad, ref.grad.sum(0, keepdim=True), atol=1e-6)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
def test_no_grad_mode_leaves_the_logits_alone(device, gen, mode):
    x, t = _inputs(device, gen, 4, 33, torch.float32)
    x.requires_grad_(True)
    x0 = x.detach().clone()
    with (torch.no_grad() if mode == "no_grad" else torch.inference_mode()):
        loss = ce.cross_entropy(x, t)
    assert torch.equal(x.detach(), x0)
    assert torch.allclose(loss.cpu().double(), ce.cross_entropy_reference(x0, t)[0], atol=1e-5)


def test_a_change_to_the_logits_before_backward_raises(device, gen):
    x, t = _inputs(device, gen, 3, 20, torch.float32)
    w = x.clone().requires_grad_(True)
    logits = w * 1.0
    loss = ce.cross_entropy(logits, t, inplace=False)
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="once"):
        loss.backward()
    logits = w * 1.0
    loss = ce.cross_entropy(logits, t)
    with torch.no_grad():
        logits.mul_(2)
    with pytest.raises(RuntimeError):
        loss.backward()


def test_peak_live_bytes_counts_eager_tensors(device):
    if device != "cpu":
        pytest.skip("a CPU count")
    gen = torch.Generator().manual_seed(0)
    w = torch.randn(4, 500, generator=gen, requires_grad=True)
    h, t = torch.randn(128, 4, generator=gen), torch.randint(0, 500, (128,), generator=gen)

    def step(fn):
        logits = h @ w
        fn(logits, t).backward()

    size = 128 * 500 * 4
    assert round(ce.peak_live_bytes(lambda: step(F.cross_entropy)) / size, 1) == 4.0
    assert ce.peak_live_bytes(lambda: step(ce.cross_entropy)) / size < 1.1  # + the weight gradient


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_confident_targets_gradient_keeps_its_digits(device, dtype):
    """p_t - 1 for a target far above the rest (p_t within 1e-5 of 1): the kernel divides the target's own term of
    l by l, so the difference cancels as exactly as fp32 allows. (Its first 16-bit version used e^(x_t - c) against
    an l summed with base-2 exponentials shifted by a rounded c log2 e: off by |c| 2^-24 in p_t, 20 % of this
    gradient in bf16.) The floor: l's lanes are summed by a tree, and the lane that holds the target's 1 rounds
    each partial sum added to it to an fp32 ulp of 1, up to half an ulp a level (12 levels at 4096 lanes)."""
    c = 12.0 if dtype == torch.float16 else 20.0  # fp16: the gradient stays a normal number
    x = torch.zeros(1, 4000, dtype=dtype, device=device)
    x[0, 7] = c
    t = torch.tensor([7], device=device)
    _, ref_g = ce.cross_entropy_reference(x, t, reduction="sum")
    _, g = _run(x, t, reduction="sum")
    want, got = ref_g[0, 7].item(), g[0, 7].double().item()
    assert want < 0 and abs(got - want) <= GRAD_TOL[dtype] * abs(want) + 12 * 2 ** -24, (got, want)
