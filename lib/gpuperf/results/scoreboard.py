"""The course's kernel scoreboard: each kernel's target, read from the recorded H200 runs.

Each kernel of the course has a target: a stated fraction of a reference timed *in the same run* (the
device copy, cuBLAS, ``torch.softmax``, ``torch.compile``, SDPA's cuDNN backend, or for the host time of a
small call the PyTorch call it replaces), and its rate is reported as a fraction of the datasheet peak and
of the measured reference rate. This module holds that table as data (:data:`TARGETS`, with one sentence
per target in :data:`REASONS`: why the target is what it is, and what the kernel teaches or why it misses),
says which recorded run each target is read from (:data:`RECORDED_RUNS`, the one place to change when a run
is re-recorded), and scores a target against a run with pure functions:

* :func:`score_target` picks, for every case (shape and dtype) of the target, the kernel's row and the
  reference's row *of the same run* by their ``params`` (never by parsing labels), computes the ratio of
  their rates in the target's metric, the kernel's and the reference's fractions of the datasheet peak
  (:mod:`gpuperf.hardware`), and whether the case meets the target and by how much;
* a case with no row in the run is kept as *not measured*, never dropped;
* a run whose rows contradict themselves (two rows for one case, a recorded ``reference`` that is not the
  row chosen here, a recorded ``ratio_to_reference`` that the rows do not give, another family's rows)
  raises ``ValueError`` naming the argument, the target and the case.

:func:`score_all` loads the runs named in :data:`RECORDED_RUNS` (through :func:`gpuperf.records.load_run`)
and scores every target; :func:`summary_rows` and :func:`case_rows` turn the scores into table rows.
Importing this module does not import torch or triton.
"""

from __future__ import annotations

import math
import numbers
import re
import shlex
import statistics
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping, Sequence

from gpuperf import hardware

#: The rates a target can be scored on (the benchmark rows' columns); ``calls_per_s`` is the inverse of the
#: host time of one call (family ``host``), which has no datasheet peak.
METRICS = ("bytes_per_s", "flop_per_s", "calls_per_s")

#: The runs of the first targets (:data:`FIRST_TARGETS`), by ``run_key`` (``book/data/NAME.json``).
FIRST_RECORDED_RUNS: Mapping[str, str] = MappingProxyType({
    "elementwise": "elementwise_h200",
    "softmax": "softmax_split_sweep_h200",  # 32768 x 4096 vs the copy and torch.softmax (chapter 13 quotes it)
    "softmax_long": "softmax_targets_h200",  # long rows, the default launch (the same run as softmax_shapes)
    "norm": "norm_h200",
    "matmul": "matmul_targets_h200",
    "attention": "attention_targets_h200",
    "attention_backward": "attention_backward_targets_h200",
})

#: The runs :data:`NEW_TARGETS` read, by ``run_key``.
NEW_RECORDED_RUNS: Mapping[str, str] = MappingProxyType({
    "host": "host_h200",  # host time of one call at small shapes, ours vs PyTorch's
    "softmax_shapes": "softmax_targets_h200",  # vocabulary-sized, odd and long rows, the current default launch
    "attention_odd": "attention_odd_h200",  # forward at N not a multiple of 128
})
#: What each target's cases are read from: ``run_key`` of a target -> recorded run (``book/data/NAME.json``),
#: both mappings above. Switching a group of targets to a re-recorded run is the one line of its key; every
#: target of a key reads the same run, and a chapter that quotes the kernel must read it too.
#: :func:`runs_by_target` gives the mapping target by target. ``ALL_RECORDED_RUNS`` is the same mapping.
RECORDED_RUNS: Mapping[str, str] = MappingProxyType({**FIRST_RECORDED_RUNS, **NEW_RECORDED_RUNS})
ALL_RECORDED_RUNS = RECORDED_RUNS

#: In the attention family's first recorded runs the forward wrapper (:func:`gpuperf.kernels.flash_attention.flash_attention_forward`)
#: ran its tensor-descriptor variant from this many keys on and the pointer variant below; the runs of the
#: attention family recorded then (``attention_h200``) are scored on those rows (a fixed fact of those runs,
#: not the kernel's current rule).
ATTENTION_TMA_MIN_KEYS = 8192

#: The statuses a target can have, from :func:`score_target`.
STATUSES = ("met", "missed", "met where measured", "not measured")


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


class _Present:
    """A selector value that matches any value of a param the row has (and no row without the param)."""

    def __repr__(self) -> str:
        return "PRESENT"


#: Selector value: the row has this param, whatever its value (e.g. ``{"variant": PRESENT}``).
PRESENT = _Present()


def _check_selector(name: str, value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping) or not value or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{name} must be a non-empty mapping of param names to values, got {value!r}")
    return _frozen(value)


@dataclass(frozen=True)
class CaseSpec:
    """One case of a target: the ``shape`` params shared by the kernel's row and its reference's row (dtype
    and sizes), and ``kernel``, the params that pick the kernel's row among the rows of that shape.
    ``fallbacks``: selectors tried in order when no row matches ``kernel`` (for runs recorded before a
    family changed how it names its kernels). ``reference_shape``: shape params that replace the case's
    own in selecting the reference row (a strided case scored against the contiguous copy of the same
    bytes, since a copy of a strided view is itself slow)."""

    shape: Mapping[str, Any]
    kernel: Mapping[str, Any]
    fallbacks: tuple[Mapping[str, Any], ...] = ()
    reference_shape: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", _check_selector("shape", self.shape))
        object.__setattr__(self, "kernel", _check_selector("kernel", self.kernel))
        if isinstance(self.fallbacks, (str, Mapping)) or not isinstance(self.fallbacks, Iterable):
            raise ValueError(f"fallbacks must be a sequence of selector mappings, got {self.fallbacks!r}")
        object.__setattr__(self, "fallbacks", tuple(_check_selector("fallbacks", f) for f in self.fallbacks))
        if not isinstance(self.reference_shape, Mapping):
            raise ValueError(f"reference_shape must be a mapping, got {self.reference_shape!r}")
        object.__setattr__(self, "reference_shape", _frozen(self.reference_shape))


@dataclass(frozen=True)
class Target:
    """One target: the kernel's cases, the same-run reference and the ratio to reach.

    ``target_id``: short unique name. ``kernel``: what is measured, as a reader names it. ``issue_row``: the
    kernel and shapes the target is stated for, in words. ``family``: the benchmark family whose rows it
    reads (rows with a ``family`` column must match). ``run_key``: key of :data:`RECORDED_RUNS`.
    ``metric``: one of :data:`METRICS`. ``cases``: the shapes and dtypes the target names.
    ``reference``: the reference's name; ``reference_params``: the params that pick its row among the rows
    of a case's shape. ``min_ratio``: the case meets the target when kernel rate / reference rate >=
    ``min_ratio``. ``case_format``: ``str.format`` template of a case's name from its shape params.
    ``chapter``: the book page (doc name) where the kernel is built and measured. ``note``: which of the
    kernel's rows is scored, when there is a choice. ``quoted_in``: other pages that quote the target's
    ratios (they must read the same run; ``tests/test_scoreboard.py`` checks it). ``max_time_s``: when
    set, a case also needs the kernel's row to take at most this many seconds (the host-time targets:
    a ratio to PyTorch's call and an absolute bound). ``read_by_chapter``: the chapter loads the target's
    run and quotes it (``tests/test_scoreboard.py`` checks that it loads the same run); False for a target
    that only this scoreboard shows so far. ``copy_target``: the id of the target that scores the same
    kernel rows against the device copy in the same run, so that :func:`reference_of_copy` can say how
    fast the reference itself is (for a speed-up over a library call). ``rows_metric``: the metric the
    kernel's rows were recorded on when the target scores another of their columns (``matmul-decode-copy``:
    rows compared on FLOP/s against cuBLAS, scored on bytes/s against a copy of the weight); empty otherwise.
    """

    target_id: str
    kernel: str
    issue_row: str
    family: str
    run_key: str
    metric: str
    cases: tuple[CaseSpec, ...]
    reference: str
    reference_params: Mapping[str, Any]
    min_ratio: float
    case_format: str
    chapter: str
    note: str = ""
    quoted_in: tuple[str, ...] = ()
    max_time_s: float | None = None
    read_by_chapter: bool = True
    copy_target: str = ""
    rows_metric: str = ""

    def __post_init__(self) -> None:
        for name in ("target_id", "kernel", "issue_row", "family", "run_key", "reference", "case_format",
                     "chapter"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"{name} must be a non-empty string, got {getattr(self, name)!r}")
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")
        if self.rows_metric and self.rows_metric not in METRICS:
            raise ValueError(f"rows_metric must be empty or one of {METRICS}, got {self.rows_metric!r}")
        cases = tuple(self.cases) if not isinstance(self.cases, (str, Mapping)) else None
        if not cases or not all(isinstance(c, CaseSpec) for c in cases):
            raise ValueError(f"cases must be a non-empty sequence of CaseSpec, got {self.cases!r}")
        object.__setattr__(self, "cases", cases)
        quoted = tuple(self.quoted_in) if not isinstance(self.quoted_in, str) else None
        if quoted is None or not all(isinstance(q, str) and q for q in quoted):
            raise ValueError(f"quoted_in must be a sequence of page names, got {self.quoted_in!r}")
        object.__setattr__(self, "quoted_in", quoted)
        if not isinstance(self.reference_params, Mapping) or not self.reference_params:
            raise ValueError(f"reference_params must be a non-empty mapping, got {self.reference_params!r}")
        object.__setattr__(self, "reference_params", _frozen(self.reference_params))
        if (isinstance(self.min_ratio, bool) or not isinstance(self.min_ratio, numbers.Real)
                or not (math.isfinite(self.min_ratio) and self.min_ratio > 0)):
            raise ValueError(f"min_ratio must be a finite number > 0, got {self.min_ratio!r}")
        if self.max_time_s is not None and (
                isinstance(self.max_time_s, bool) or not isinstance(self.max_time_s, numbers.Real)
                or not (math.isfinite(self.max_time_s) and self.max_time_s > 0)):
            raise ValueError(f"max_time_s must be None or a finite number > 0, got {self.max_time_s!r}")
        names = [self.describe_case(c) for c in cases]
        if len(set(names)) != len(names):
            raise ValueError(f"cases must be distinct; target {self.target_id!r} repeats one of {names}")

    def describe_case(self, case: CaseSpec) -> str:
        """The case's name, e.g. ``"bf16 32768x4096"``."""
        try:
            return self.case_format.format(**case.shape)
        except (KeyError, IndexError) as exc:
            raise ValueError(f"case_format {self.case_format!r} needs shape param {exc}, "
                             f"shape has {sorted(case.shape)}") from None


def _cases(shapes: Iterable[Mapping[str, Any]], kernel: Mapping[str, Any],
           fallbacks: Callable[[Mapping[str, Any]], tuple] | None = None) -> tuple[CaseSpec, ...]:
    return tuple(CaseSpec(s, kernel, fallbacks(s) if fallbacks else ()) for s in shapes)


def _attention_forward_before_dec_2026(shape: Mapping[str, Any]) -> tuple[dict[str, str]]:
    """In runs of the attention family recorded before 2026-12-01 each Triton variant was forced and had its
    own ``kernel`` value; the wrapper's default was the pointer kernel (``"triton"``) below
    :data:`ATTENTION_TMA_MIN_KEYS` keys and the tensor-descriptor one (``"triton-tma"``) from there on."""
    return ({"kernel": "triton-tma" if shape["n_seq"] >= ATTENTION_TMA_MIN_KEYS else "triton"},)


#: The attention family since 2026-12-01 times the wrapper's default launch as ``kernel="triton"`` and
#: records which kernel ran as ``variant``; older runs have no ``variant`` param.
_ATTENTION_FORWARD_DEFAULT = {"kernel": "triton", "variant": PRESENT}


_ATTENTION_NOTE = ("the launch the wrapper runs by default (in runs before 2026-12-01: the pointer kernel "
                   f"below N = {ATTENTION_TMA_MIN_KEYS}, tensor descriptors from there)")
_ATTENTION_N = (1024, 2048, 4096, 8192, 16384)
_HALF = ("fp16", "bf16")
_SOFTMAX_LONG = ((2048, 65536), (1024, 131072), (512, 262144))


def _attention_shapes(head_dim: int) -> list[dict[str, Any]]:
    return [{"dtype": dt, "head_dim": head_dim, "mask": mask, "n_seq": n}
            for dt in _HALF for mask in ("full", "causal") for n in _ATTENTION_N]


_FUSED_SOFTMAX = {"kernel": "triton", "method": "auto"}
_SOFTMAX_NOTE = "the default launch (method 'auto'), not the best of the sweep"
_SOFTMAX_LONG_NOTE = ("the default launch (method 'auto'), the same rows that softmax-long-rows holds to the "
                      "production bar of 0.85")

#: The first targets, one per (kernel, reference) pair; the attention forward's d = 64 shapes carry
#: the stricter target (>= 1.0) and d = 128 the general one (>= 0.90).
FIRST_TARGETS: tuple[Target, ...] = (
    Target("vector-add", "vector add (Triton)", "vector add, 2^28 elements (fp32/fp16/bf16)", "elementwise",
           "elementwise", "bytes_per_s",
           _cases(({"dtype": dt, "n_elements": 2**28} for dt in ("fp32", "fp16", "bf16")),
                  {"kernel": "triton_add", "k_ops": 1}),
           "device copy", {"kernel": "copy"}, 0.95, "{dtype} 2^28", "09-fusion-and-recomputation"),
    Target("softmax-copy", "fused softmax", "fused softmax, 32768 x 4096 fp16 and bf16", "softmax", "softmax",
           "bytes_per_s", _cases(({"dtype": dt, "rows": 32768, "n": 4096} for dt in _HALF), _FUSED_SOFTMAX),
           "device copy", {"kernel": "copy"}, 0.95, "{dtype} {rows}x{n}", "13-online-softmax",
           _SOFTMAX_NOTE),
    Target("softmax-torch", "fused softmax", "fused softmax, 32768 x 4096 fp16 and bf16", "softmax",
           "softmax", "bytes_per_s",
           _cases(({"dtype": dt, "rows": 32768, "n": 4096} for dt in _HALF), _FUSED_SOFTMAX),
           "torch.softmax", {"kernel": "torch"}, 3.0, "{dtype} {rows}x{n}", "13-online-softmax",
           _SOFTMAX_NOTE, copy_target="softmax-copy"),
    Target("softmax-long", "softmax, long rows", "softmax with rows of 65536-262144", "softmax",
           "softmax_long", "bytes_per_s",
           _cases(({"dtype": dt, "rows": r, "n": n} for dt in _HALF for r, n in _SOFTMAX_LONG),
                  _FUSED_SOFTMAX),
           "device copy", {"kernel": "copy"}, 0.80, "{dtype} {rows}x{n}", "13-online-softmax",
           _SOFTMAX_LONG_NOTE),
    Target("norm-copy", "residual-add + RMSNorm", "fused residual-add + RMSNorm, 32768 x 4096 bf16", "norm",
           "norm", "bytes_per_s", _cases([{"dtype": "bf16", "rows": 32768, "n": 4096}], {"kernel": "triton"}),
           "device copy", {"kernel": "copy"}, 0.90, "{dtype} {rows}x{n}", "09-fusion-and-recomputation"),
    Target("norm-compile", "residual-add + RMSNorm", "fused residual-add + RMSNorm, 32768 x 4096 bf16", "norm",
           "norm", "bytes_per_s", _cases([{"dtype": "bf16", "rows": 32768, "n": 4096}], {"kernel": "triton"}),
           "torch.compile", {"kernel": "torch.compile"}, 1.0, "{dtype} {rows}x{n}",
           "09-fusion-and-recomputation", "'faster than compile', scored as >= 1.0"),
    Target("matmul-4096", "tiled matmul, 4096\u00b3", "tiled matmul, 4096^3 / 8192^3, bf16 and fp16", "matmul",
           "matmul", "flop_per_s",
           _cases(({"dtype": dt, "m": 4096, "n": 4096, "k": 4096} for dt in ("bf16", "fp16")),
                  {"kernel": "triton-auto"}),
           "cuBLAS (torch.matmul)", {"kernel": "cublas"}, 0.95, "{dtype} {m}\u00b3", "08-tiling-and-shapes",
           "the default backend ('auto')"),
    Target("matmul-8192", "tiled matmul, 8192\u00b3", "tiled matmul, 4096^3 / 8192^3, bf16 and fp16", "matmul",
           "matmul", "flop_per_s",
           _cases(({"dtype": dt, "m": 8192, "n": 8192, "k": 8192} for dt in ("bf16", "fp16")),
                  {"kernel": "triton-auto"}),
           "cuBLAS (torch.matmul)", {"kernel": "cublas"}, 1.0, "{dtype} {m}\u00b3", "08-tiling-and-shapes",
           "the default backend ('auto')"),
    Target("attention-fwd-d64", "FlashAttention forward, d = 64",
           "FlashAttention forward, d = 64 and 128, N = 1K-16K, causal and full, bf16/fp16", "attention",
           "attention", "flop_per_s",
           _cases(_attention_shapes(64), _ATTENTION_FORWARD_DEFAULT, _attention_forward_before_dec_2026),
           "SDPA cuDNN", {"kernel": "sdpa-cudnn"}, 1.0, "{dtype} d={head_dim} {mask} N={n_seq}",
           "14-flashattention-forward",
           _ATTENTION_NOTE),
    Target("attention-fwd-d128", "FlashAttention forward, d = 128",
           "FlashAttention forward, d = 64 and 128, N = 1K-16K, causal and full, bf16/fp16", "attention",
           "attention", "flop_per_s",
           _cases(_attention_shapes(128), _ATTENTION_FORWARD_DEFAULT, _attention_forward_before_dec_2026),
           "SDPA cuDNN", {"kernel": "sdpa-cudnn"}, 0.90, "{dtype} d={head_dim} {mask} N={n_seq}",
           "14-flashattention-forward",
           _ATTENTION_NOTE),
    Target("attention-bwd", "FlashAttention backward", "FlashAttention backward, same shapes",
           "attention_backward", "attention_backward", "flop_per_s",
           _cases(({**s, "pass": "bwd"} for d in (64, 128) for s in _attention_shapes(d)), {"impl": "triton"}),
           "SDPA cuDNN", {"impl": "sdpa-cudnn"}, 0.85, "{dtype} d={head_dim} {mask} N={n_seq}",
           "15-flash-attention-backward", "the backward pass alone (pass 'bwd')",
           ("16-flash-attention-in-practice",)),
)


_SOFTMAX_VOCAB = ((4096, 32000), (2048, 50257), (1024, 128256), (32768, 3000), (32768, 5000), (32768, 6144))


_HOST_CASES = (("softmax", "fp16", "32x1024"), ("add_rms_norm", "bf16", "32x4096"), ("matmul", "bf16", "256^3"),
               ("attention_forward", "fp16", "1x16x1024x64 causal"),
               ("attention_backward", "fp16", "1x16x1024x64 causal"))
_ODD_N = (1000, 1500, 3000, 4000)
_SMALL_MATMULS = ((1000, 1000, 1000), (777, 4096, 4096), (2048, 2048, 2048), (1536, 1536, 1536),
                  (1000, 1000, 8192))


def _decode_matmuls():
    return ({"dtype": dt, "m": m, "n": n, "k": k} for dt in ("bf16", "fp16") for m in (1, 16, 64)
            for k, n in ((4096, 4096), (4096, 14336), (14336, 4096)))

#: Targets added after the first table (recorded 2026-12-01): host time per call, softmax on
#: vocabulary-sized, odd and long rows at 0.85 of the copy, the forward at N not a multiple of 128. No
#: chapter quotes their runs yet (``read_by_chapter=False``). Issue 33's targets (:data:`ISSUE_33_TARGETS`,
#: first recorded 2026-12-06) are appended below.
NEW_TARGETS: tuple[Target, ...] = (
    Target("host-call", "one call from Python (host time)", "host time of one call (wrapper + launch), small "
           "shapes", "host", "host", "calls_per_s",
           tuple(CaseSpec({"kernel": k, "dtype": dt, "shape": sh}, {"impl": "gpuperf"}) for k, dt, sh in _HOST_CASES),
           "the PyTorch call", {"impl": "torch"}, 1 / 1.5, "{kernel} {dtype} {shape}", "09-fusion-and-recomputation",
           "within 1.5x of PyTorch's call (ratio >= 0.67) and at most 25 \u00b5s per call",
           max_time_s=25e-6, read_by_chapter=False),
    Target("softmax-vocab", "softmax, vocabulary-sized and odd rows",
           "softmax with rows not a power of two (vocabularies, a few thousand columns)", "softmax",
           "softmax_shapes", "bytes_per_s",
           tuple(CaseSpec({"dtype": dt, "rows": r, "n": n}, _FUSED_SOFTMAX)
                 for dt in _HALF for r, n in _SOFTMAX_VOCAB),
           "device copy", {"kernel": "copy"}, 0.85, "{dtype} {rows}x{n}", "13-online-softmax",
           "the launch method 'auto' makes (on the H200: the Gluon kernel at 32000 columns, Triton's elsewhere)",
           read_by_chapter=False),
    Target("softmax-long-rows", "softmax, long rows (default launch)", "softmax with rows of "
           "65536-262144 (the default launch, no prefetch)", "softmax", "softmax_shapes", "bytes_per_s",
           _cases(({"dtype": dt, "rows": r, "n": n} for dt in _HALF for r, n in _SOFTMAX_LONG), _FUSED_SOFTMAX),
           "device copy", {"kernel": "copy"}, 0.85, "{dtype} {rows}x{n}", "13-online-softmax",
           "method 'auto' (the Gluon kernel at 65536 columns, the split kernel beyond)", read_by_chapter=False),
    Target("attention-fwd-odd", "FlashAttention forward, N not a multiple of 128",
           "FlashAttention forward, N not a multiple of the block", "attention", "attention_odd", "flop_per_s",
           _cases(({"dtype": dt, "head_dim": d, "mask": mask, "n_seq": n} for dt in _HALF for d in (64, 128)
                   for mask in ("full", "causal") for n in _ODD_N), _ATTENTION_FORWARD_DEFAULT),
           "SDPA cuDNN", {"kernel": "sdpa-cudnn"}, 0.90, "{dtype} d={head_dim} {mask} N={n_seq}",
           "14-flashattention-forward", "the launch the wrapper runs by default", read_by_chapter=False),
)

#: Every target, in the page's order: :data:`FIRST_TARGETS` then :data:`NEW_TARGETS` (``ALL_TARGETS`` is
#: the same tuple).
TARGETS: tuple[Target, ...] = FIRST_TARGETS + NEW_TARGETS
ALL_TARGETS = TARGETS

#: Issue 33's decoding targets (family ``decode``, chapter 16; run ``decode_h200``): one decoding step, one query
#: row per head, d = 128, fp16, as (batch, H_q, H_kv, N_k). Part of :data:`ISSUE_33_TARGETS`, hence of
#: :data:`TARGETS`; alone: ``score_all(DECODE_TARGETS, DECODE_RECORDED_RUNS)``. Reasons: :data:`DECODE_REASONS`.
DECODE_RECORDED_RUNS: Mapping[str, str] = MappingProxyType({"decode": "decode_h200"})
_DECODE_LONG = ((1, 8, 8, 8192), (1, 8, 8, 32768), (1, 8, 8, 131072), (1, 32, 8, 131072), (8, 32, 32, 8192),
                (8, 32, 8, 32768), (16, 64, 8, 32768), (64, 32, 8, 8192), (64, 32, 32, 8192))
_DECODE_SHORT = ((8, 32, 32, 1024), (8, 32, 8, 2048), (32, 32, 8, 4096), (64, 32, 8, 1024))
_DECODE_PAGED = ((1, 8, 8, 131072), (8, 32, 8, 32768), (64, 32, 8, 8192))


def _decode_cases(shapes, kernel) -> tuple[CaseSpec, ...]:
    return _cases(({"dtype": "fp16", "batch": b, "h_q": hq, "h_kv": hkv, "n_k": n} for b, hq, hkv, n in shapes),
                  kernel)


_DECODE_FORMAT = "B={batch} Hq={h_q} Hkv={h_kv} N_k={n_k}"
_DECODE_ROW = "one decoding step, 1 query row per head, d = 128 fp16"
DECODE_TARGETS: tuple[Target, ...] = (
    Target("decode-copy", "Flash-Decoding (split KV)", f"{_DECODE_ROW}, 8K-128K keys, batch 1-64", "decode",
           "decode", "bytes_per_s", _decode_cases(_DECODE_LONG, {"impl": "triton"}), "device copy",
           {"impl": "copy"}, 0.85, _DECODE_FORMAT, "16-flash-attention-in-practice",
           "the default split count; bytes of K and V read per second against the copy's traffic per second"),
    Target("decode-cudnn", "Flash-Decoding (split KV)", f"{_DECODE_ROW}, 8K-128K keys, where cuDNN takes the "
           "shape", "decode", "decode", "bytes_per_s", _decode_cases(_DECODE_LONG, {"impl": "triton"}),
           "SDPA cuDNN", {"impl": "sdpa-cudnn"}, 1.0, _DECODE_FORMAT, "16-flash-attention-in-practice",
           "GQA through enable_gqa=True, or heads expanded where cuDNN refuses it (row param gqa)"),
    Target("decode-cudnn-short", "Flash-Decoding (split KV), short caches", f"{_DECODE_ROW}, 1K-4K keys",
           "decode", "decode", "bytes_per_s", _decode_cases(_DECODE_SHORT, {"impl": "triton"}), "SDPA cuDNN",
           {"impl": "sdpa-cudnn"}, 0.90, _DECODE_FORMAT, "16-flash-attention-in-practice"),
    Target("decode-paged", "Flash-Decoding over a paged cache", f"{_DECODE_ROW}, pages of 16 tokens",
           "decode", "decode", "bytes_per_s", _decode_cases(_DECODE_PAGED, {"impl": "triton-paged",
                                                                             "page_size": 16}),
           "device copy", {"impl": "copy"}, 0.85, _DECODE_FORMAT, "16-flash-attention-in-practice",
           "vLLM's default page of 16 tokens (the run also has pages of 256)"),
)

#: Why each decoding target is what it is (:data:`REASONS`' counterpart for :data:`DECODE_TARGETS`).
DECODE_REASONS: Mapping[str, str] = MappingProxyType({
    "decode-copy": "a decoding step reads each cached key and value once and does little arithmetic on it, "
                   "so a copy of the same bytes is its bar",
    "decode-cudnn": "cuDNN's attention is what PyTorch runs for this step on Hopper, and it splits the keys "
                    "too, so it is the bar where it takes the shape",
    "decode-cudnn-short": "at 1K-4K keys a step moves a few megabytes and launches decide, so the bar is "
                          "set below cuDNN's",
    "decode-paged": "a page table adds one small read per tile; with pages of 16 tokens the tile spans "
                    "pages and each key's page is looked up",
})

#: Issue 33's small and ragged matmuls (family ``matmul_small``, chapter 08; run ``matmul_small_h200``).
MATMUL_SMALL_RECORDED_RUNS: Mapping[str, str] = MappingProxyType({
    "matmul_small": "matmul_small_h200",  # small/ragged matmuls and decoding steps, the dispatch
})
MATMUL_SMALL_TARGETS: tuple[Target, ...] = (
    Target("matmul-small", "matmul dispatch, small and ragged shapes", "matmul 1000^3 / 777 x 4096 x 4096 / "
           "2048^3 and similar, bf16 and fp16", "matmul_small", "matmul_small", "flop_per_s",
           _cases(({"dtype": dt, "m": m, "n": n, "k": k} for dt in ("bf16", "fp16")
                   for m, n, k in _SMALL_MATMULS), {"kernel": "triton-auto"}),
           "cuBLAS (torch.matmul)", {"kernel": "cublas"}, 0.95, "{dtype} {m}x{n}x{k}", "08-tiling-and-shapes",
           "matmul_auto: split-K, stream-K or the TMA kernel by shape"),
    Target("matmul-decode", "matmul dispatch, decoding step", "matmul m = 1-64 against 4096 x 4096 and "
           "4096 x 14336 weights", "matmul_small", "matmul_small", "flop_per_s",
           _cases(_decode_matmuls(), {"kernel": "triton-auto"}),
           "cuBLAS (torch.matmul)", {"kernel": "cublas"}, 0.95, "{dtype} {m}x{n}x{k}", "08-tiling-and-shapes",
           "matmul_auto (split-K over the weight)", copy_target="matmul-decode-copy"),
    Target("matmul-decode-copy", "matmul dispatch, decoding step", "matmul m = 1-64 against 4096 x 4096 and "
           "4096 x 14336 weights, bytes per second", "matmul_small", "matmul_small", "bytes_per_s",
           _cases(_decode_matmuls(), {"kernel": "triton-auto"}),
           "device copy of the weight", {"kernel": "copy"}, 0.85, "{dtype} {m}x{n}x{k}", "08-tiling-and-shapes",
           "matmul_auto (split-K over the weight); the operands' bytes per second (weight dominated) against "
           "the copy's traffic (read and write) per second", rows_metric="flop_per_s"),
)
#: Why each small-matmul target is what it is.
MATMUL_SMALL_REASONS: Mapping[str, str] = MappingProxyType({
    "matmul-small": "products with fewer large tiles than SMs, or ragged edges, leave SMs idle; splitting "
                    "k (split-K) or dealing all k steps evenly (stream-K) refills them, and cuBLAS does the "
                    "same, so 0.95 of it is the bar",
    "matmul-decode": "with 1-64 rows the product reads the whole weight for very little arithmetic, so "
                     "cuBLAS's GEMV-like kernels are the bar and k must be split over many programs",
    "matmul-decode-copy": "the weight is read once and nothing else is large, so a copy of the weight "
                          "is the bandwidth bar; 0.85 leaves room for the reduction of the k slices, and is above what "
                          "cuBLAS itself reaches on the H200 (0.56 to 0.77 of the copy)",
})


#: Issue 33's fused cross-entropy (family ``cross_entropy``, chapter 13; run ``cross_entropy_h200``): forward and
#: backward over bf16 logits, the byte bound a copy of the logits (one read, one write of their gradient).
CROSS_ENTROPY_RECORDED_RUNS: Mapping[str, str] = MappingProxyType({"cross_entropy": "cross_entropy_h200"})
_CROSS_ENTROPY = ((32768, 32000), (8192, 32000), (4096, 50257), (4096, 128256), (4096, 151936))
_CE_ROW = "fused cross-entropy forward + backward, 4096-32768 tokens x 32000-151936, bf16 logits"
CROSS_ENTROPY_TARGETS: tuple[Target, ...] = (
    Target("cross-entropy-copy", "fused cross-entropy (forward + backward)", _CE_ROW, "cross_entropy",
           "cross_entropy", "bytes_per_s",
           _cases(({"dtype": "bf16", "rows": r, "n": n} for r, n in _CROSS_ENTROPY), {"kernel": "gpuperf"}),
           "device copy of the logits", {"kernel": "copy"}, 0.85, "{dtype} {rows}x{n}", "13-online-softmax",
           "the loss and the gradient written in place of the logits, no label smoothing"),
    Target("cross-entropy-compile", "fused cross-entropy (forward + backward)", _CE_ROW, "cross_entropy",
           "cross_entropy", "bytes_per_s",
           _cases(({"dtype": "bf16", "rows": r, "n": n} for r, n in _CROSS_ENTROPY), {"kernel": "gpuperf"}),
           "torch.compile", {"kernel": "torch.compile"}, 1.0, "{dtype} {rows}x{n}", "13-online-softmax",
           "'faster than torch.compile of F.cross_entropy', scored as >= 1.0",
           copy_target="cross-entropy-copy"),
)
CROSS_ENTROPY_REASONS: Mapping[str, str] = MappingProxyType({
    "cross-entropy-copy": "the loss needs one read of the logits and the gradient one write of the same size, "
                          "so a copy of the logits is the byte bound; the online softmax gives both in one "
                          "pass over each row",
    "cross-entropy-compile": "torch.compile of F.cross_entropy is what a reader would use instead, and it "
                             "does not write the gradient in place of the logits",
})

#: Issue 33's softmax over vocabularies (family ``softmax``, ``vocab=True``, chapter 13; run
#: ``softmax_vocab_h200``): rows of 32000-262144 columns, contiguous at any offset or with a row stride, at 0.85
#: of the copy and 1.5x torch.softmax; rows of 1000-12288 columns at 0.90 of the copy.
SOFTMAX_VOCAB_RECORDED_RUNS: Mapping[str, str] = MappingProxyType({"softmax_vocab": "softmax_vocab_h200"})
_VOCAB_LONG = ((4096, 32000, 32000), (4096, 50257, 50257), (4096, 50257, 50304), (2048, 128256, 128256),
               (2048, 151936, 151936), (1024, 262144, 262144))
_VOCAB_SHORT = ((32768, 1000, 1000), (32768, 3000, 3000), (32768, 5000, 5000), (8192, 12288, 12288))


def _vocab_cases(shapes, contiguous_reference: bool = False) -> tuple[CaseSpec, ...]:
    """With ``contiguous_reference``, a strided case is scored against the contiguous copy of the same
    ``rows x n`` bytes: torch's copy of the strided view runs at about 0.43 of it on the H200."""
    return tuple(CaseSpec({"dtype": dt, "rows": r, "n": n, "row_stride": st}, _FUSED_SOFTMAX,
                          reference_shape={"row_stride": n} if contiguous_reference and st != n else {})
                 for dt in _HALF for r, n, st in shapes)


_VOCAB_FORMAT = "{dtype} {rows}x{n} stride {row_stride}"
_VOCAB_ROW = "softmax with rows of 32000-262144 (odd widths, a row stride)"
SOFTMAX_VOCAB_TARGETS: tuple[Target, ...] = (
    Target("softmax-vocab-rows", "softmax over a vocabulary", _VOCAB_ROW, "softmax", "softmax_vocab",
           "bytes_per_s", _vocab_cases(_VOCAB_LONG, True), "device copy", {"kernel": "copy"}, 0.85, _VOCAB_FORMAT,
           "13-online-softmax", _SOFTMAX_NOTE, read_by_chapter=False),
    Target("softmax-vocab-torch", "softmax over a vocabulary", _VOCAB_ROW, "softmax", "softmax_vocab",
           "bytes_per_s", _vocab_cases(_VOCAB_LONG), "torch.softmax", {"kernel": "torch"}, 1.5, _VOCAB_FORMAT,
           "13-online-softmax", _SOFTMAX_NOTE, read_by_chapter=False, copy_target="softmax-vocab-rows"),
    Target("softmax-vocab-short", "softmax, rows of 1000-12288", "softmax with rows of 1000-12288", "softmax",
           "softmax_vocab", "bytes_per_s", _vocab_cases(_VOCAB_SHORT), "device copy", {"kernel": "copy"}, 0.90,
           _VOCAB_FORMAT, "13-online-softmax", _SOFTMAX_NOTE, read_by_chapter=False),
)
SOFTMAX_VOCAB_REASONS: Mapping[str, str] = MappingProxyType({
    "softmax-vocab-rows": "a row of a vocabulary is read once and written once, so the copy is the bar; rows "
                          "of odd width start at 2-byte offsets and rows too long for one program are split",
    "softmax-vocab-torch": "torch.softmax is what a reader runs on logits; at vocabulary widths it reaches "
                           "about half a copy, so 1.5x of it is the bar",
    "softmax-vocab-short": "rows of a few thousand values fit one program, so the fused kernel should stay "
                           "close to the copy",
})

#: Issue 33's targets, scored with the others since their first H200 run (2026-12-06).
ISSUE_33_RECORDED_RUNS: Mapping[str, str] = MappingProxyType({
    **DECODE_RECORDED_RUNS, **CROSS_ENTROPY_RECORDED_RUNS, **SOFTMAX_VOCAB_RECORDED_RUNS,
    **MATMUL_SMALL_RECORDED_RUNS})
ISSUE_33_TARGETS: tuple[Target, ...] = (DECODE_TARGETS + CROSS_ENTROPY_TARGETS + SOFTMAX_VOCAB_TARGETS
                                        + MATMUL_SMALL_TARGETS)
ISSUE_33_REASONS: Mapping[str, str] = MappingProxyType({
    **DECODE_REASONS, **CROSS_ENTROPY_REASONS, **SOFTMAX_VOCAB_REASONS, **MATMUL_SMALL_REASONS})
NEW_RECORDED_RUNS = MappingProxyType({**NEW_RECORDED_RUNS, **ISSUE_33_RECORDED_RUNS})
NEW_TARGETS = NEW_TARGETS + ISSUE_33_TARGETS
# Every target and run, now with issue 33's (the names above, re-bound before any function takes them as
# defaults).
TARGETS = FIRST_TARGETS + NEW_TARGETS
ALL_TARGETS = TARGETS
RECORDED_RUNS = MappingProxyType({**FIRST_RECORDED_RUNS, **NEW_RECORDED_RUNS})
ALL_RECORDED_RUNS = RECORDED_RUNS

#: Targets whose family has no recorded run yet (its first H200 run is pending; bench/NOTES.md says which
#: command makes it). They are not scored or shown; once ``book/data/NAME.json`` of
#: :data:`PENDING_RECORDED_RUNS` exists, they move to :data:`NEW_TARGETS`, their run key to
#: :data:`NEW_RECORDED_RUNS` and their reasons to :data:`REASONS`. None waits now.
PENDING_RECORDED_RUNS: Mapping[str, str] = MappingProxyType({})
PENDING_TARGETS: tuple[Target, ...] = ()
PENDING_REASONS: Mapping[str, str] = MappingProxyType({})


#: Per target: why the target is what it is, and what the kernel teaches or why it misses (one sentence
#: each, read by :func:`verdicts`; the facts are those of the chapters named in each target's ``chapter``).
REASONS: Mapping[str, str] = MappingProxyType({
    "vector-add": "a streaming kernel has no reuse to exploit, so the copy is its bar; matching it shows "
                  "that a few lines of Triton move bytes as fast as the copy does",
    "softmax-copy": "a row of 4096 values fits on chip, so one read and one write per element are enough "
                    "and the copy is the bar; fusion reaches it",
    "softmax-torch": "the speed-up measures PyTorch's kernel choice at this shape as much as ours (see its "
                     "fraction of the copy), so it is a bar set for this shape, not a general one",
    "softmax-long": "rows too long to hold in one program's registers need the online softmax and more "
                    "than one program per row, so the first bar was set below the copy's; 65536 values fit "
                    "the Gluon kernel's shared memory and pass it, but longer rows take the split kernel, "
                    "which keeps too few bytes in flight per SM to approach the copy",
    "norm-copy": "like the softmax, the fused add and norm reads each input once and writes each output "
                 "once, so the copy is the bar",
    "norm-compile": "torch.compile generates the same fusion, so matching it shows that a hand-written "
                    "kernel has nothing left to gain here",
    "matmul-4096": "cuBLAS is the tuned library a reader uses every day; at 4096 a few waves of tiles "
                   "cover the chip, so the last partial wave matters and 0.95 leaves room for it",
    "matmul-8192": "at 8192 the tiles fill many waves and tile shape dominates, so a well-tiled Triton "
                   "kernel can match cuBLAS",
    "attention-fwd-d64": "cuDNN's attention is what PyTorch runs on Hopper, so it is the bar; no case "
                         "reaches it and the worst falls about a tenth short (the median only a few "
                         "percent): the rest is scheduling (overlapping loads, matrix multiplies and "
                         "softmax) that Triton leaves to its compiler",
    "attention-fwd-d128": "at d = 128 the accumulators take twice the registers, leaving less room to "
                          "overlap the softmax with the next block's matrix multiplies, so the bar is 0.90",
    "attention-bwd": "the backward does 2.5 times the forward's matrix work with more tiles alive at once, "
                     "so its bar is lower; at d = 128 the kernel runs out of registers (255 per thread, "
                     "spilling)",
    "host-call": "at small shapes a call's host time decides, so our call should cost about what "
                 "PyTorch's does; a Triton launch from Python alone costs more than PyTorch's whole call",
    "softmax-vocab": "real vocabularies (32000, 50257, 128256 tokens) are not powers of two; on Hopper, "
                     "aligned 16-bit rows of 16385-102400 values go to the Gluon kernel (32000 meets the "
                     "bar); the others (50257: unaligned rows; 128256: too long) still hold too few bytes "
                     "in flight, and rows of 5000 values fall just short of the bar. At 2048 x 50257 in "
                     "fp16 torch.softmax is faster than this default launch (0.56 of the copy against "
                     "0.53)",
    "softmax-long-rows": "the same long rows on the default launch, at the 0.85 a production softmax needs: "
                         "65536 values fit the Gluon kernel's shared memory, longer rows take the split "
                         "kernel, which keeps too few bytes in flight per SM",
    "attention-fwd-odd": "real sequence lengths are rarely multiples of 128; the masked last block costs "
                         "little, and every miss is at d = 128, as at lengths that are multiples of 128",
})
REASONS = MappingProxyType({**REASONS, **ISSUE_33_REASONS})


def target_ids() -> tuple[str, ...]:
    """The ids of :data:`TARGETS`, in table order."""
    return tuple(t.target_id for t in TARGETS)


def get_target(target_id: str) -> Target:
    """The target of :data:`ALL_TARGETS` named ``target_id``; ``ValueError`` listing the ids otherwise."""
    for t in ALL_TARGETS:
        if t.target_id == target_id:
            return t
    raise ValueError(f"target_id must be one of {tuple(t.target_id for t in ALL_TARGETS)}, got {target_id!r}")


def run_name(target: Target, runs: Mapping[str, str] = RECORDED_RUNS) -> str:
    """The recorded run ``target`` is read from (``runs[target.run_key]``)."""
    if not isinstance(target, Target):
        raise ValueError(f"target must be a Target, got {target!r}")
    if not isinstance(runs, Mapping) or target.run_key not in runs:
        raise ValueError(f"runs must map run_key {target.run_key!r} (of target {target.target_id!r}) to a "
                         f"recorded run name, got {runs!r}")
    return runs[target.run_key]


def runs_by_target(runs: Mapping[str, str] = RECORDED_RUNS) -> dict[str, str]:
    """``{target_id: recorded run name}`` for every target of :data:`TARGETS` (what :data:`RECORDED_RUNS`
    says, target by target)."""
    return {t.target_id: run_name(t, runs) for t in TARGETS}


# --------------------------------------------------------------------------------------------------
# Scores (plain data)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseScore:
    """One case of a target in one run.

    ``measured`` is False when the run lacks the kernel's row or the reference's (``missing`` says which);
    every number is then None. ``ratio``: kernel rate / reference rate in the target's metric (the fraction
    of the measured reference rate). ``ratio_retimed``: the same ratio from each re-timing both rows have
    (``time_s_repeat``, interleaved rounds), the spread to read ``ratio`` against. ``margin``: ratio minus
    the target (negative when missed); ``relative_margin``: ratio / target - 1. ``fraction_of_peak`` and
    ``reference_fraction_of_peak``: the rates over ``peak`` (datasheet HBM bandwidth for bytes/s, dense
    Tensor Core peak of the case's dtype for FLOP/s, both from :mod:`gpuperf.hardware`).
    """

    case: str
    shape: Mapping[str, Any]
    measured: bool
    missing: str | None = None
    label: str | None = None
    reference_label: str | None = None
    rate: float | None = None
    reference_rate: float | None = None
    ratio: float | None = None
    ratio_retimed: tuple[float, ...] = ()
    met: bool | None = None
    margin: float | None = None
    relative_margin: float | None = None
    peak: float | None = None
    fraction_of_peak: float | None = None
    reference_fraction_of_peak: float | None = None


@dataclass(frozen=True)
class TargetScore:
    """A target scored on one recorded run: every case (measured or not) and the summary.

    ``worst``/``median``/``best``: over the measured cases' ratios (None when none is measured);
    ``worst_case``: the case of ``worst``. ``status``: one of :data:`STATUSES`: ``"met"`` (every case
    measured and met), ``"missed"`` (a measured case below the target), ``"met where measured"`` (the
    measured cases meet it, some cases have no rows), ``"not measured"``. ``margin``: worst - target;
    ``relative_margin``: worst / target - 1. ``fraction_of_peak`` and ``reference_fraction_of_peak``:
    (lowest, highest) over the measured cases. ``peak_name``: what the peak is.
    """

    target: Target
    run_name: str
    provenance: Mapping[str, Any]
    cases: tuple[CaseScore, ...]
    n_measured: int
    n_missing: int
    worst: float | None
    median: float | None
    best: float | None
    worst_case: str | None
    status: str
    margin: float | None
    relative_margin: float | None
    fraction_of_peak: tuple[float, float] | None
    reference_fraction_of_peak: tuple[float, float] | None
    peak_name: str
    missed_cases: tuple[str, ...] = field(default=())


_ABSENT = object()


def _matches(row: Mapping[str, Any], selector: Mapping[str, Any]) -> bool:
    return all(k in row if v is PRESENT else row.get(k, _ABSENT) == v for k, v in selector.items())


def _check_run(run: object, name: str) -> tuple[list[Mapping[str, Any]], Mapping[str, Any]]:
    if not isinstance(run, Mapping):
        raise ValueError(f"run must be a recorded run (a dict with 'results' and 'provenance'), got "
                         f"{type(run).__name__}")
    rows, prov = run.get("results"), run.get("provenance")
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        raise ValueError(f"run {name!r} must have 'results', a list of row dicts, got {type(rows).__name__}")
    if not isinstance(prov, Mapping) or not isinstance(prov.get("device"), str):
        raise ValueError(f"run {name!r} must have 'provenance' with a 'device' name, got {prov!r}")
    return rows, prov


def peak_rate(device: str, metric: str, dtype: str) -> float:
    """The datasheet peak a ``metric`` rate of ``dtype`` on ``device`` is compared with: the HBM bandwidth
    (bytes/s) for ``"bytes_per_s"``, the dense matrix-unit (Tensor Core) peak of ``dtype`` (FLOP/s) for
    ``"flop_per_s"``, both from :mod:`gpuperf.hardware`."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    if metric == "calls_per_s":
        return None  # host time: no datasheet peak
    acc = hardware.get_accelerator(device)
    return acc.hbm_bytes_per_s if metric == "bytes_per_s" else acc.peak_flop_per_s(dtype, "matrix")


def peak_name(device: str, metric: str, dtypes: Sequence[str]) -> str:
    """What :func:`peak_rate` compares with, in words, e.g. ``"H200 SXM HBM, 4.8 TB/s"``."""
    acc = hardware.get_accelerator(device)
    if metric == "calls_per_s":
        return "none (host time per call)"
    if metric == "bytes_per_s":
        return f"{acc.name} HBM, {peak_rate(device, metric, 'bf16') / 1e12:.1f} TB/s"
    dtypes = list(dict.fromkeys(dtypes))
    peaks = {peak_rate(device, metric, d) for d in dtypes}
    text = ", ".join(f"{p / 1e12:.0f}" for p in sorted(peaks))
    return f"{acc.name} dense {'/'.join(dtypes)} Tensor Core, {text} TFLOP/s"


def _rate(row: Mapping[str, Any], metric: str, what: str) -> float:
    value = row.get(metric)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} row {row.get('label', dict(row))!r} has no finite {metric}, got {value!r}")
    return float(value)


def _work(row: Mapping[str, Any], metric: str) -> float | None:
    value = row.get("flop" if metric == "flop_per_s" else "bytes_moved")
    return float(value) if isinstance(value, numbers.Real) and value > 0 else None


def _retimed_ratios(row: Mapping[str, Any], ref: Mapping[str, Any], metric: str) -> tuple[float, ...]:
    """Ratios from the re-timings both rows have: ``time_s_repeat``, then interleaved rounds."""
    w_row, w_ref = _work(row, metric), _work(ref, metric)
    if metric == "calls_per_s":
        w_row = w_ref = 1.0
    if w_row is None or w_ref is None:
        return ()
    pairs = []
    if row.get("time_s_repeat") and ref.get("time_s_repeat"):
        pairs.append((row["time_s_repeat"], ref["time_s_repeat"]))
    rounds, ref_rounds = row.get("time_s_rounds"), ref.get("time_s_rounds")
    if isinstance(rounds, list) and isinstance(ref_rounds, list) and len(rounds) == len(ref_rounds):
        pairs.extend(zip(rounds, ref_rounds))
    return tuple((w_row / t) / (w_ref / t_ref) for t, t_ref in pairs if t and t_ref)


def _one(rows: Sequence[Mapping[str, Any]], selector: Mapping[str, Any], what: str, where: str):
    found = [r for r in rows if _matches(r, selector)]
    if len(found) > 1:
        labels = [r.get("label", "?") for r in found]
        raise ValueError(f"run {where}: {len(found)} rows match the {what} {dict(selector)} "
                         f"({labels}); a case must select exactly one row")
    return found[0] if found else None


def score_case(target: Target, case: CaseSpec, rows: Sequence[Mapping[str, Any]], device: str,
               run_name: str = "run") -> CaseScore:
    """Score one case of ``target`` on the rows of one run measured on ``device``."""
    if not isinstance(target, Target):
        raise ValueError(f"target must be a Target, got {target!r}")
    if not isinstance(case, CaseSpec):
        raise ValueError(f"case must be a CaseSpec, got {case!r}")
    name = target.describe_case(case)
    where = f"{run_name!r}, target {target.target_id!r}, case {name!r}"
    for selector in (case.kernel, *case.fallbacks):
        row = _one(rows, {**case.shape, **selector}, "kernel", where)
        if row is not None:
            break
    ref = _one(rows, {**case.shape, **case.reference_shape, **target.reference_params}, "reference", where)
    for r, allowed in ((row, (target.metric, target.rows_metric)), (ref, (target.metric,))):
        if r is None:
            continue
        if r.get("family", target.family) != target.family:
            raise ValueError(f"run {where}: row {r.get('label')!r} is of family {r['family']!r}, the target "
                             f"reads family {target.family!r}")
        # rows_metric admits the kernel's row only: a reference is always compared on the target's metric
        if r.get("metric") is not None and r["metric"] not in allowed:
            raise ValueError(f"run {where}: row {r.get('label')!r} is compared on {r['metric']!r}, the target "
                             f"on {target.metric!r}")
    # a case with reference_shape scores against another row than the one its kernel's row names
    recorded_ref_label = row.get("reference") if row is not None and not case.reference_shape else None
    if recorded_ref_label is not None:
        recorded_ref = [r for r in rows if r.get("label") == recorded_ref_label]
        if not recorded_ref:
            raise ValueError(f"run {where}: row {row.get('label')!r} names reference {recorded_ref_label!r}, "
                             f"which is not in the same run")
        if _matches(recorded_ref[0], target.reference_params) and recorded_ref[0] is not ref:
            chosen = ref.get("label") if ref is not None else None
            raise ValueError(f"run {where}: row {row.get('label')!r} names reference {recorded_ref_label!r} "
                             f"but the reference of the same shape is {chosen!r} (mismatched same-run "
                             f"reference)")
    if row is None or ref is None:
        missing = "kernel and reference" if row is None and ref is None else ("kernel" if row is None
                                                                              else "reference")
        return CaseScore(name, case.shape, False, missing=f"no {missing} row")
    rate, ref_rate = _rate(row, target.metric, "kernel"), _rate(ref, target.metric, "reference")
    if ref_rate <= 0:
        raise ValueError(f"run {where}: reference row {ref.get('label')!r} has {target.metric} = 0")
    ratio = rate / ref_rate
    recorded_ratio = row.get("ratio_to_reference")
    if (recorded_ref_label is not None and recorded_ref_label == ref.get("label")
            and isinstance(recorded_ratio, numbers.Real) and not math.isclose(recorded_ratio, ratio,
                                                                              rel_tol=1e-9)):
        raise ValueError(f"run {where}: row {row.get('label')!r} records ratio_to_reference "
                         f"{recorded_ratio!r}, its rows give {ratio!r}")
    peak = peak_rate(device, target.metric, case.shape.get("dtype", "bf16"))
    margin = ratio - target.min_ratio
    met = ratio >= target.min_ratio
    if target.max_time_s is not None:
        met = met and isinstance(row.get("time_s"), numbers.Real) and row["time_s"] <= target.max_time_s
    return CaseScore(
        case=name, shape=case.shape, measured=True, label=row.get("label"), reference_label=ref.get("label"),
        rate=rate, reference_rate=ref_rate, ratio=ratio, ratio_retimed=_retimed_ratios(row, ref, target.metric),
        met=met, margin=margin, relative_margin=ratio / target.min_ratio - 1.0,
        peak=peak, fraction_of_peak=rate / peak if peak else None,
        reference_fraction_of_peak=ref_rate / peak if peak else None,
    )


def score_target(target: Target, run: Mapping[str, Any], run_name: str | None = None) -> TargetScore:
    """Score every case of ``target`` on the recorded ``run`` (a dict as :func:`gpuperf.records.load_run`
    returns); ``run_name`` (default: the run's ``name``) is what the score and the errors call it."""
    if not isinstance(target, Target):
        raise ValueError(f"target must be a Target, got {target!r}")
    name = run_name if run_name is not None else (run.get("name", "run") if isinstance(run, Mapping) else "run")
    if not isinstance(name, str):
        raise ValueError(f"run_name must be a string or None, got {run_name!r}")
    rows, prov = _check_run(run, name)
    families = {r["family"] for r in rows if isinstance(r.get("family"), str)}
    if families and target.family not in families:
        raise ValueError(f"run {name!r} holds rows of family {sorted(families)}, target {target.target_id!r} "
                         f"reads family {target.family!r}")
    cases = tuple(score_case(target, c, rows, prov["device"], name) for c in target.cases)
    measured = [c for c in cases if c.measured]
    ratios = [c.ratio for c in measured]
    worst = min(measured, key=lambda c: c.ratio) if measured else None
    if not measured:
        status = "not measured"
    elif any(not c.met for c in measured):
        status = "missed"
    else:
        status = "met" if len(measured) == len(cases) else "met where measured"

    def span(values):
        values = [v for v in values if v is not None]
        return (min(values), max(values)) if values else None

    return TargetScore(
        target=target, run_name=name, provenance=_frozen(prov), cases=cases, n_measured=len(measured),
        n_missing=len(cases) - len(measured), worst=worst.ratio if worst else None,
        median=statistics.median(ratios) if ratios else None, best=max(ratios) if ratios else None,
        worst_case=worst.case if worst else None, status=status,
        margin=worst.ratio - target.min_ratio if worst else None,
        relative_margin=worst.ratio / target.min_ratio - 1.0 if worst else None,
        fraction_of_peak=span([c.fraction_of_peak for c in measured]),
        reference_fraction_of_peak=span([c.reference_fraction_of_peak for c in measured]),
        peak_name=peak_name(prov["device"], target.metric, [c.shape.get("dtype", "bf16") for c in target.cases]),
        missed_cases=tuple(c.case for c in measured if not c.met),
    )


def load_runs(targets: Sequence[Target] = TARGETS, runs: Mapping[str, str] = RECORDED_RUNS,
              loader: Callable[[str], Mapping[str, Any]] | None = None) -> dict[str, Mapping[str, Any]]:
    """``{run name: run}`` for every run the ``targets`` read (each loaded once, by ``loader``, default
    :func:`gpuperf.records.load_run`)."""
    if loader is None:
        from gpuperf.records import load_run as loader
    if not callable(loader):
        raise ValueError(f"loader must be callable (a run name -> run), got {loader!r}")
    names = dict.fromkeys(run_name(t, runs) for t in _check_targets(targets))
    return {n: loader(n) for n in names}


def _check_targets(targets: object) -> tuple[Target, ...]:
    if isinstance(targets, (str, Mapping)) or not isinstance(targets, Iterable):
        raise ValueError(f"targets must be a sequence of Target, got {targets!r}")
    targets = tuple(targets)
    if not targets or not all(isinstance(t, Target) for t in targets):
        raise ValueError(f"targets must be a non-empty sequence of Target, got {targets!r}")
    ids = [t.target_id for t in targets]
    if len(set(ids)) != len(ids):
        raise ValueError(f"targets must have distinct target_id, got {ids}")
    return targets


def score_all(targets: Sequence[Target] = TARGETS, runs: Mapping[str, str] = RECORDED_RUNS,
              loaded: Mapping[str, Mapping[str, Any]] | None = None) -> list[TargetScore]:
    """Score every target on the run :data:`RECORDED_RUNS` names for it. ``loaded`` (run name -> run)
    skips loading; by default the runs are read with :func:`load_runs`."""
    targets = _check_targets(targets)
    if loaded is None:
        loaded = load_runs(targets, runs)
    if not isinstance(loaded, Mapping):
        raise ValueError(f"loaded must map run names to runs, got {type(loaded).__name__}")
    scores = []
    for t in targets:
        name = run_name(t, runs)
        if name not in loaded:
            raise ValueError(f"loaded has no run {name!r} (target {t.target_id!r}); it has {sorted(loaded)}")
        scores.append(score_target(t, loaded[name], name))
    return scores


# --------------------------------------------------------------------------------------------------
# Table rows
# --------------------------------------------------------------------------------------------------


def _span_text(span: tuple[float, float] | None, digits: int = 2) -> str:
    if span is None:
        return "\u2014"
    lo, hi = span
    return f"{lo:.{digits}f}" if round(lo, digits) == round(hi, digits) else f"{lo:.{digits}f}\u2013{hi:.{digits}f}"


def _shapes_text(target: Target) -> str:
    return ", ".join(dict.fromkeys(target.describe_case(c).split(" ", 1)[0] for c in target.cases))


def summary_rows(scores: Sequence[TargetScore]) -> list[dict[str, Any]]:
    """One row per target for :func:`gpuperf.plotting.tables.format_table_html`: kernel, reference, target, cases
    measured, worst/median/best ratio, status and margin, the datasheet peak and the kernel's and the
    reference's fractions of it (lowest-highest over the measured cases)."""
    if isinstance(scores, (str, Mapping)) or not all(isinstance(s, TargetScore) for s in scores):
        raise ValueError(f"scores must be a sequence of TargetScore, got {scores!r}")
    out = []
    for s in scores:
        t = s.target
        if s.status in ("met", "met where measured"):
            verdict = s.status
        elif s.status == "missed" and s.margin >= 0:  # every ratio met; a time bound was not
            verdict = (f"missed: {len(s.missed_cases)} of {s.n_measured} cases over "
                       f"{t.max_time_s * 1e6:.0f} \u00b5s per call")
        elif s.status == "missed":
            verdict = f"missed by {-s.margin:.2f}; {len(s.missed_cases)} of {s.n_measured} cases under"
        else:
            verdict = "not measured"
        out.append({
            "target_id": t.target_id, "kernel": t.kernel, "reference": t.reference, "run": s.run_name,
            "dtypes": _shapes_text(t), "target": f"\u2265 {t.min_ratio:.2f}",
            "measured": f"{s.n_measured} of {len(s.cases)}", "worst": s.worst, "median": s.median,
            "best": s.best, "status": verdict,
            "peak": s.peak_name, "of_peak": _span_text(s.fraction_of_peak),
            "reference_of_peak": _span_text(s.reference_fraction_of_peak),
        })
    return out


def case_rows(scores: Sequence[TargetScore]) -> list[dict[str, Any]]:
    """One row per case of every target (not-measured cases included), for an HTML table."""
    if isinstance(scores, (str, Mapping)) or not all(isinstance(s, TargetScore) for s in scores):
        raise ValueError(f"scores must be a sequence of TargetScore, got {scores!r}")
    unit = {"bytes_per_s": "TB/s", "flop_per_s": "TFLOP/s", "calls_per_s": "\u00b5s per call"}
    out = []
    for s in scores:
        host = s.target.metric == "calls_per_s"  # shown as microseconds per call, in the rate columns' scale
        for c in s.cases:
            rate, ref_rate = c.rate, c.reference_rate
            if host and c.measured:
                rate, ref_rate = 1e18 / rate, 1e18 / ref_rate
            retimed = (min(c.ratio_retimed + (c.ratio,)), max(c.ratio_retimed + (c.ratio,))) \
                if c.measured and c.ratio_retimed else None
            out.append({
                "target_id": s.target.target_id, "kernel": s.target.kernel, "case": c.case,
                "reference": s.target.reference, "unit": unit[s.target.metric],
                "rate": rate, "reference_rate": ref_rate, "ratio": c.ratio,
                "retimed": _span_text(retimed) if retimed else "\u2014",
                "target": f"\u2265 {s.target.min_ratio:.2f}",
                "verdict": (c.missing if not c.measured else "met" if c.met else f"missed by {-c.margin:.2f}"
                            if c.margin < 0 else f"missed: over {s.target.max_time_s * 1e6:.0f} \u00b5s"),
                "of_peak": c.fraction_of_peak, "reference_of_peak": c.reference_fraction_of_peak,
            })
    return out


#: Scripts that recorded a run and have since become a family of ``bench/run.py``, timing the same cases.
SCRIPTS_NOW_FAMILIES: Mapping[str, str] = MappingProxyType({
    "bench/elementwise.py": "elementwise",
    "bench/attention_memory.py": "attention_memory",
    "bench/decode_split_kv.py": "decode_split_kv",
})

_SAFE_ARG = re.compile(r"[\w@%+=:,./-]+")


def _quote(arg: str) -> str:
    if _SAFE_ARG.fullmatch(arg):
        return arg
    if not any(ch in arg for ch in '"\\$`'):
        return f'"{arg}"'
    return shlex.quote(arg)


def rerun_command(run_name: str, command: str) -> str:
    """The command that records ``run_name`` again, run from the repository root: the recorded ``command``
    without the output folder the run was written to (the harness writes ``book/data/`` by default) or
    ``--no-progress``, with ``--name run_name`` so that the file it writes is the one the page reads, and a
    script that has since become a family of ``bench/run.py`` (:data:`SCRIPTS_NOW_FAMILIES`) run as that
    family. A command of another form is returned unchanged."""
    if not isinstance(run_name, str) or not run_name or not isinstance(command, str):
        raise ValueError(f"run_name and command must be strings, got {run_name!r}, {command!r}")
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if words[:1] != ["python"] or len(words) < 2:
        return command
    if words[1] in SCRIPTS_NOW_FAMILIES:
        words = ["python", "bench/run.py", SCRIPTS_NOW_FAMILIES[words[1]], *words[2:]]
    if words[1] != "bench/run.py" or len(words) < 3:
        return command
    kept, i = words[:3], 3
    while i < len(words):
        if words[i] in ("--out-dir", "--name"):
            i += 2
            continue
        if words[i].startswith(("--out-dir=", "--name=")) or words[i] == "--no-progress":
            i += 1
            continue
        kept.append(words[i])
        i += 1
    kept[3:3] = ["--name", run_name]
    return " ".join(_quote(w) for w in kept)


def provenance_rows(scores: Sequence[TargetScore]) -> list[dict[str, Any]]:
    """One row per recorded run the ``scores`` read: its name, the targets read from it, the sentence of
    :func:`gpuperf.records.describe_provenance` and the command that records it again
    (:func:`rerun_command` of the recorded one)."""
    from gpuperf.records import describe_provenance

    if isinstance(scores, (str, Mapping)) or not all(isinstance(s, TargetScore) for s in scores):
        raise ValueError(f"scores must be a sequence of TargetScore, got {scores!r}")
    runs: dict[str, dict[str, Any]] = {}
    for s in scores:
        row = runs.setdefault(s.run_name, {"run": s.run_name, "targets": [],
                                           "provenance": describe_provenance({"provenance": s.provenance}),
                                           "command": rerun_command(s.run_name, s.provenance["command"])
                                           if isinstance(s.provenance.get("command"), str) else "\u2014"})
        row["targets"].append(s.target.target_id)
    return [{**r, "targets": ", ".join(r["targets"])} for r in runs.values()]


def verdicts(scores: Sequence[TargetScore]) -> list[str]:
    """One sentence (Markdown) per target: met or missed on how many cases, the worst case and by how much,
    and the kernel's and the reference's rates as fractions of the datasheet peak."""
    if isinstance(scores, (str, Mapping)) or not all(isinstance(s, TargetScore) for s in scores):
        raise ValueError(f"scores must be a sequence of TargetScore, got {scores!r}")
    out = []
    for s in scores:
        t = s.target
        head = f"**{t.kernel}** vs {t.reference} (target \u2265 {t.min_ratio:.2f})"
        unmeasured = f"; {s.n_missing} of {len(s.cases)} cases not measured" if s.n_missing else ""
        if s.status == "not measured":
            out.append(f"{head}: not measured (no rows in `{s.run_name}`).")
            continue
        if s.status == "missed" and s.margin >= 0:
            verdict = (f"missed on {len(s.missed_cases)} of {s.n_measured} measured cases{unmeasured}, each over "
                       f"{t.max_time_s * 1e6:.0f} \u00b5s per call though within the ratio (worst {s.worst:.3f})")
        elif s.status == "missed":
            verdict = (f"missed on {len(s.missed_cases)} of {s.n_measured} measured cases{unmeasured}; worst "
                       f"{s.worst:.3f} ({s.worst_case}), {-s.margin:.3f} short ({-100 * s.relative_margin:.0f} % "
                       f"under the target)")
        else:
            which = "its one measured case" if s.n_measured == 1 else f"all {s.n_measured} measured cases"
            verdict = f"met on {which}{unmeasured}; worst {s.worst:.3f} ({s.worst_case})"
        if t.metric == "calls_per_s":
            times = [1e6 / c.rate for c in s.cases if c.measured]
            ref_times = [1e6 / c.reference_rate for c in s.cases if c.measured]
            peaks = (f"our calls take {_span_text((min(times), max(times)), 1)} \u00b5s of host time, PyTorch's "
                     f"{_span_text((min(ref_times), max(ref_times)), 1)} \u00b5s")
        else:
            peaks = (f"the kernel runs at {_span_text(s.fraction_of_peak)} of the datasheet peak, the reference "
                     f"at {_span_text(s.reference_fraction_of_peak)}")
        of_copy = reference_of_copy(scores).get(t.target_id)
        if of_copy is not None:
            peaks += (f"; {t.reference} itself runs at {_span_text(of_copy)} of the same run's copy, "
                      "so the speed-up is not a distance from the optimum")
        reason = f" Why: {REASONS[t.target_id]}." if t.target_id in REASONS else ""
        out.append(f"{head}: {verdict}; median {s.median:.3f}, best {s.best:.3f}; {peaks}.{reason}")
    return out


def reference_of_copy(scores: Sequence[TargetScore]) -> dict[str, tuple[float, float]]:
    """``{target_id: (lowest, highest)}``: for a target whose ``copy_target`` is among ``scores`` and read
    from the same run, the reference's rate as a fraction of the same run's copy, case by case (the copy
    target's ratio over this target's ratio: kernel/copy over kernel/reference), lowest and highest."""
    if isinstance(scores, (str, Mapping)) or not all(isinstance(s, TargetScore) for s in scores):
        raise ValueError(f"scores must be a sequence of TargetScore, got {scores!r}")
    by_id = {s.target.target_id: s for s in scores}
    out = {}
    for s in scores:
        copy = by_id.get(s.target.copy_target)
        if copy is None or copy.run_name != s.run_name:
            continue
        copy_ratios = {c.case: c.ratio for c in copy.cases if c.measured}
        fractions = [copy_ratios[c.case] / c.ratio for c in s.cases if c.measured and c.case in copy_ratios]
        if fractions:
            out[s.target.target_id] = (min(fractions), max(fractions))
    return out
