"""The Transformer ledger: every operator of a layer priced on the roofline.

A decoder layer is a short list of operators. For each one we count its work by hand, split by the unit
that does it, and the bytes it moves to and from HBM:

* ``matrix_flop``: matrix multiplications, on the matrix unit (Tensor Cores) at the dtype's peak;
* ``vector_flop``: adds, multiplies, comparisons, divisions, on the general-purpose cores at the fp32
  vector peak (elementwise kernels compute in fp32 whatever the storage dtype, as chapter 06 does);
* ``special_ops``: exponentials, reciprocal square roots and tanh, on the special-function units (SFU);
* ``bytes_moved``: each input read once and each output written once per kernel.

Its time bound on a device is the largest of the four times ``matrix_flop / P_matrix``,
``vector_flop / P_vector``, ``special_ops / P_sfu`` and ``bytes_moved / B``, and the largest names the
roof that binds. This is the per-operator roofline of Williams et al. (2009), with one compute roof per
unit instead of one for the whole chip.

Phases (``n`` is the number of tokens the step processes):

* ``"prefill"``: ``batch`` sequences of ``seq_len`` tokens, ``n = batch * seq_len``, causal attention;
* ``"decode"``: one new token for each of ``batch`` sequences, each attending to ``seq_len`` keys already
  in the KV cache (the cache is read; appending the new key and value, ``2 * kv_dim`` elements per
  sequence, is left out: under 0.1% of the cache read for the contexts used here);
* ``"training"``: the prefill forward plus a backward pass (see :func:`layer_operators`).

``fused=False`` is the layer as plain PyTorch eager code runs it: norms, RoPE and activations written out
of primitives (one kernel each), attention as QK^T, scale, mask, softmax (PyTorch's own, one kernel) and
PV, residual adds as their own kernels. ``fused=True`` is the layer as an inference engine runs it: one
kernel per norm, RoPE and gated activation, FlashAttention, residual adds folded into the epilogue of the
projection before them (and GELU into the epilogue of the MLP's first projection).

Counting conventions follow :mod:`gpuperf.roofline` (a multiply-add is 2 FLOP; a reduction of ``c``
values ``c - 1``; exp, rsqrt and tanh 1 each, counted as ``special_ops``). Weights, activations and the KV
cache are all stored in ``dtype``; biases are left out (GPT-2 and GPT-3 have them: ``d`` elements per
projection, under 0.1% of its bytes). All numbers are per layer unless ``scope="model"``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping, Sequence

from gpuperf import hardware, roofline
from gpuperf.hardware import Accelerator

PHASES = ("prefill", "decode", "training")
NORMS = ("rmsnorm", "layernorm")
SCOPES = ("layer", "model")
#: Dtypes the ledger prices (each needs a matrix-unit peak): storage of weights, activations, KV cache.
LEDGER_DTYPES = ("fp32", "bf16", "fp16", "fp8")
#: The matrix peak used for each storage dtype (fp32 matmuls run as TF32 on the Tensor Cores).
_MATRIX_PEAK_DTYPE = MappingProxyType({"fp32": "tf32", "bf16": "bf16", "fp16": "fp16", "fp8": "fp8"})
ROOFS = ("matrix", "vector", "special", "memory")
#: Operator groups, in the order the figures stack them.
GROUPS = ("matmul", "attention", "norm", "elementwise")


# --------------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------------


def _check_int(name: str, value, minimum: int = 1) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class ModelConfig:
    """The shape of a decoder-only Transformer.

    ``gated_mlp``: SwiGLU (gate, up and down projections, ``silu(gate) * up``) if True, else a GELU MLP
    (two projections). ``rope``: rotary position embeddings applied to queries and keys. ``tied_embeddings``:
    the output projection (lm head) shares the embedding matrix (counted once in :attr:`n_params`).
    """

    name: str
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int
    vocab_size: int
    gated_mlp: bool
    norm: str
    rope: bool
    tied_embeddings: bool
    source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        for f in ("n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "d_ff", "vocab_size"):
            _check_int(f, getattr(self, f))
        if self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"n_kv_heads must divide n_heads, got n_kv_heads={self.n_kv_heads!r}, n_heads={self.n_heads!r}"
            )
        if self.norm not in NORMS:
            raise ValueError(f"norm must be one of {NORMS}, got {self.norm!r}")
        for f in ("gated_mlp", "rope", "tied_embeddings"):
            if not isinstance(getattr(self, f), bool):
                raise ValueError(f"{f} must be True or False, got {getattr(self, f)!r}")

    @property
    def q_dim(self) -> int:
        """Width of the queries (and of the attention output): ``n_heads * head_dim``."""
        return self.n_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of the keys (and of the values): ``n_kv_heads * head_dim``."""
        return self.n_kv_heads * self.head_dim

    @property
    def matmul_params_per_layer(self) -> int:
        """Weights of the projections of one layer: QKV, output, and the MLP's two or three matrices."""
        attention = self.d_model * (self.q_dim + 2 * self.kv_dim) + self.q_dim * self.d_model
        mlp = (3 if self.gated_mlp else 2) * self.d_model * self.d_ff
        return attention + mlp

    @property
    def norm_params_per_layer(self) -> int:
        """Scale (and, for LayerNorm, shift) vectors of the layer's two norms."""
        return 2 * self.d_model * (2 if self.norm == "layernorm" else 1)

    @property
    def n_params(self) -> int:
        """All parameters: layers, final norm, token embedding and (if untied) the lm head.

        Position-embedding tables (GPT-2, GPT-3) and biases are not counted.
        """
        per_layer = self.matmul_params_per_layer + self.norm_params_per_layer
        final_norm = self.d_model * (2 if self.norm == "layernorm" else 1)
        embeddings = self.vocab_size * self.d_model * (1 if self.tied_embeddings else 2)
        return self.n_layers * per_layer + final_norm + embeddings

    @property
    def kv_cache_elements_per_token(self) -> int:
        """KV-cache elements one token adds over all layers (times bytes per element for bytes)."""
        return 2 * self.n_layers * self.kv_dim


GPT2_MEDIUM = ModelConfig(
    name="GPT-2 medium", n_layers=24, d_model=1024, n_heads=16, n_kv_heads=16, head_dim=64, d_ff=4096,
    vocab_size=50257, gated_mlp=False, norm="layernorm", rope=False, tied_embeddings=True,
    source=(
        "Radford et al. 2019, Table 2 (345M: 24 layers, d_model 1024); 16 heads of 64, d_ff = 4 d_model and "
        "the 50,257-token vocabulary as in GPT-1/GPT-2's released configuration; learned positions"
    ),
)
GPT3_175B = ModelConfig(
    name="GPT-3 175B", n_layers=96, d_model=12288, n_heads=96, n_kv_heads=96, head_dim=128,
    d_ff=4 * 12288, vocab_size=50257, gated_mlp=False, norm="layernorm", rope=False, tied_embeddings=True,
    source=(
        "Brown et al. 2020, Table 2.1 (96 layers, d_model 12288, 96 heads of 128) and section 2.1 "
        "(d_ff = 4 d_model, context 2048, the GPT-2 tokenizer)"
    ),
)
LLAMA3_8B = ModelConfig(
    name="Llama-3-8B", n_layers=32, d_model=4096, n_heads=32, n_kv_heads=8, head_dim=128, d_ff=14336,
    vocab_size=128256, gated_mlp=True, norm="rmsnorm", rope=True, tied_embeddings=False,
    source=(
        "Grattafiori et al. 2024, Table 3 (8B: 32 layers, model dimension 4096, FFN dimension 14,336, "
        "32 attention heads, 8 key/value heads, a 128K vocabulary: 128,256 tokens in the released tokenizer)"
    ),
)
LLAMA3_70B = ModelConfig(
    name="Llama-3-70B", n_layers=80, d_model=8192, n_heads=64, n_kv_heads=8, head_dim=128, d_ff=28672,
    vocab_size=128256, gated_mlp=True, norm="rmsnorm", rope=True, tied_embeddings=False,
    source=(
        "Grattafiori et al. 2024, Table 3 (70B: 80 layers, model dimension 8192, FFN dimension 28,672, "
        "64 attention heads, 8 key/value heads, a 128K vocabulary: 128,256 tokens in the released tokenizer)"
    ),
)
#: The layer profiled on the H200 (bench/ledger_profile.py): Llama-shaped, multi-head, our own choice.
SMALL_LLAMA = ModelConfig(
    name="small Llama (profiled)", n_layers=1, d_model=2048, n_heads=16, n_kv_heads=16, head_dim=128,
    d_ff=5632, vocab_size=32000, gated_mlp=True, norm="rmsnorm", rope=True, tied_embeddings=False,
    source="our own shape for bench/ledger_profile.py (RMSNorm, RoPE, SwiGLU, kv heads = heads)",
)

PRESETS: Mapping[str, ModelConfig] = MappingProxyType(
    {m.name: m for m in (GPT2_MEDIUM, GPT3_175B, LLAMA3_8B, SMALL_LLAMA)}
)


def get_model(model: str | ModelConfig) -> ModelConfig:
    """Return ``model`` itself or the preset of that name (see :data:`PRESETS`)."""
    if isinstance(model, ModelConfig):
        return model
    if isinstance(model, str) and model in PRESETS:
        return PRESETS[model]
    raise ValueError(f"model must be a ModelConfig or one of {tuple(PRESETS)}, got {model!r}")


# --------------------------------------------------------------------------------------------------
# Operators
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Operator:
    """The work of one operator of a layer (already multiplied by ``count``).

    ``kernels`` is how many kernels it launches in the variant it belongs to; ``count`` how many times the
    operator occurs in the scope (``n_layers`` for a layer operator of a whole model).
    """

    name: str
    group: str
    matrix_flop: float
    vector_flop: float
    special_ops: float
    bytes_moved: float
    kernels: int = 1
    count: int = 1

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise ValueError(f"group must be one of {GROUPS}, got {self.group!r}")
        for f in ("matrix_flop", "vector_flop", "special_ops", "bytes_moved"):
            value = getattr(self, f)
            if not (isinstance(value, numbers.Real) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{f} must be a finite number >= 0, got {value!r}")

    @property
    def flop(self) -> float:
        """All arithmetic: matrix + vector FLOP + special-function evaluations."""
        return self.matrix_flop + self.vector_flop + self.special_ops

    @property
    def intensity_flop_per_byte(self) -> float:
        return self.flop / self.bytes_moved if self.bytes_moved else math.inf

    def scaled(self, count: int) -> "Operator":
        """The same operator occurring ``count`` times (work and kernels multiplied)."""
        return replace(
            self, matrix_flop=self.matrix_flop * count, vector_flop=self.vector_flop * count,
            special_ops=self.special_ops * count, bytes_moved=self.bytes_moved * count,
            kernels=self.kernels * count, count=self.count * count,
        )


def _matmul(name: str, m: int, k: int, n: int, b: float, group: str = "matmul", batch: int = 1,
            extra_read_elements: float = 0.0, vector_flop: float = 0.0, special_ops: float = 0.0) -> Operator:
    """``batch`` independent (m x k) @ (k x n) products: ``2 m k n`` FLOP and ``(m k + k n + m n) b`` bytes
    each (:func:`gpuperf.roofline.matmul`), plus elements an epilogue reads and the work it does."""
    one = roofline.matmul(m, k, n, "fp32")  # dtype only for validation; bytes rescaled below
    elements = one.bytes_moved / 4.0
    return Operator(name, group, batch * one.flop, vector_flop, special_ops,
                    (batch * elements + extra_read_elements) * b)


def _elementwise(name: str, group: str, read: float, write: float, b: float, vector_flop: float,
                 special_ops: float = 0.0, kernels: int = 1, read_bytes_extra: float = 0.0) -> Operator:
    return Operator(name, group, 0.0, vector_flop, special_ops, (read + write) * b + read_bytes_extra,
                    kernels)


def rmsnorm_passes(rows: int, cols: int) -> tuple[roofline.KernelPass, ...]:
    """RMSNorm of each row (``x * rsqrt(mean(x^2) + eps) * w``) written out of primitives, one kernel
    each, as plain PyTorch code runs it. ``w`` has ``cols`` elements; ``ms``, ``t``, ``rs`` have ``rows``.
    """
    r, c = _check_int("rows", rows), _check_int("cols", cols)
    rc = r * c
    return (
        roofline.KernelPass("sq = x.pow(2)", rc, rc, rc),
        roofline.KernelPass("ms = sq.mean(-1)", rc, rc, r),  # c - 1 adds and a division per row
        roofline.KernelPass("t = ms + eps", r, r, r),
        roofline.KernelPass("rs = t.rsqrt()", r, r, r),
        roofline.KernelPass("xn = x * rs", rc, rc + r, rc),
        roofline.KernelPass("y = xn * w", rc, rc + c, rc),
    )


def _norm(name: str, model: ModelConfig, rows: int, b: float, fused: bool) -> Operator:
    d = model.d_model
    if model.norm == "layernorm":
        passes = roofline.layernorm_passes(rows, d)
        fused_elements = 2 * rows * d + 2 * d
    else:
        passes = rmsnorm_passes(rows, d)
        fused_elements = 2 * rows * d + d
    flop = sum(p.flop for p in passes)
    special = rows  # one rsqrt per row
    # PyTorch's layer_norm is one kernel even in eager code; RMSNorm in plain code is six primitives.
    one_kernel = fused or model.norm == "layernorm"
    elements = fused_elements if one_kernel else sum(p.read_elements + p.write_elements for p in passes)
    return Operator(name, "norm", 0.0, float(flop - special), float(special), float(elements) * b,
                    1 if one_kernel else len(passes))


def rope_elements(n_tokens: int, n_heads: int, head_dim: int, table_rows: int, fused: bool) -> tuple[float, float]:
    """(vector FLOP, elements moved) of rotary embeddings on ``n_tokens x n_heads x head_dim`` values.

    ``y = x * cos + rotate_half(x) * sin`` with ``rotate_half(x) = cat(-x2, x1)``: 3.5 FLOP per element (two
    multiplies, an add, and a negation of half the elements). ``cos`` and ``sin`` tables have
    ``table_rows x head_dim`` elements. Fused: read x and the tables, write y. Unfused, five kernels (multiply
    by cos, negate, concatenate, multiply by sin, add) move ``10 e + 2 table`` elements.
    """
    e = float(n_tokens) * n_heads * head_dim
    table = float(table_rows) * head_dim
    flop = 3.5 * e
    if fused:
        return flop, 2 * e + 2 * table
    reads = (e + table) + e / 2 + e + (e + table) + 2 * e
    writes = e + e / 2 + e + e + e
    return flop, reads + writes


ATTENTION_FORMS = ("naive", "fused_softmax", "flash")


def _attention_ops(model: ModelConfig, phase: str, batch: int, seq_len: int, b: float,
                   form: str) -> list[Operator]:
    """Attention of one layer in one of :data:`ATTENTION_FORMS`. Keys and values are read once per kv head
    (query heads of a group share them).

    ``"naive"``: five kernels, QK^T, scale, mask, softmax (PyTorch's, one kernel), PV; all ``N x N``
    scores are computed and the upper triangle masked afterwards. ``"fused_softmax"``: three kernels, the
    scale, mask and softmax in one (Megatron's fused kernel; what Inductor generates). ``"flash"``: one
    kernel that never writes the scores and skips the masked half (FlashAttention). Its bytes are the
    compulsory ones (Q, K, V read once, O written once): K and V are re-read once per query block, which
    the L2 cache largely absorbs at these sizes (chapter 14 counts the re-reads).
    """
    h, hkv, dh = model.n_heads, model.n_kv_heads, model.head_dim
    B = batch
    if phase == "decode":
        q_rows, keys, causal_pairs = 1, seq_len, seq_len  # one query per sequence against C keys
    else:
        q_rows, keys, causal_pairs = seq_len, seq_len, seq_len * (seq_len + 1) / 2
    q_el = B * h * q_rows * dh
    kv_el = B * hkv * keys * dh
    scores = float(B) * h * q_rows * keys
    if form == "flash":
        pairs = B * h * causal_pairs
        return [Operator(
            "attention (flash)", "attention", 4.0 * pairs * dh,
            # scale, running max, subtract, sum per score; rescaling the output is O(N d / B_c): left out
            4.0 * pairs, pairs, (2 * q_el + 2 * kv_el) * b,
        )]
    ops = [Operator("attn scores QK^T", "attention", 2.0 * scores * dh, 0.0, 0.0,
                    (q_el + kv_el + scores) * b)]
    masked = phase != "decode"  # decode needs no mask: every cached key is visible
    mask_bytes = float(seq_len) * seq_len if masked else 0.0  # one bool byte per (query, key)
    sm = roofline.softmax(B * h * q_rows, keys, "fp32", fused=True)
    if form == "fused_softmax":
        ops.append(Operator("attn scale+mask+softmax", "attention", 0.0,
                            sm.flop - scores + scores * (2 if masked else 1), scores, 2 * scores * b))
    else:
        ops.append(Operator("attn scale", "attention", 0.0, scores, 0.0, 2 * scores * b))
        if masked:
            ops.append(Operator("attn mask", "attention", 0.0, scores, 0.0, 2 * scores * b + mask_bytes))
        ops.append(Operator("attn softmax", "attention", 0.0, sm.flop - scores, scores, 2 * scores * b))
    ops.append(Operator("attn PV", "attention", 2.0 * scores * dh, 0.0, 0.0, (scores + kv_el + q_el) * b))
    return ops


def layer_operators(model: str | ModelConfig, phase: str = "prefill", batch: int = 1, seq_len: int = 2048,
                    dtype: str = "bf16", fused: bool = False,
                    attention: str | None = None) -> tuple[Operator, ...]:
    """The operators of one layer in order, with their work (see the module docstring).

    ``seq_len`` is the prompt length for ``"prefill"`` and ``"training"`` and the number of keys each new
    token attends to for ``"decode"``. ``attention`` is one of :data:`ATTENTION_FORMS`; by default
    ``"flash"`` when ``fused`` and ``"naive"`` otherwise.

    Training = forward + backward. The backward of a projection is two matmuls of the forward's size
    (input gradient and weight gradient): twice its FLOP and bytes, so the projections of a training step
    do ``6 x params x tokens`` FLOP. FlashAttention's backward does 2.5 times its forward matrix FLOP (it
    recomputes the scores: five matmuls instead of two) and moves twice its bytes (reads Q, K, V, O, dO,
    writes dQ, dK, dV). Every other operator's backward is taken as twice its forward (it reads the
    saved input and the incoming gradient and writes a gradient): an approximation, stated as such.
    """
    model = get_model(model)
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    batch = _check_int("batch", batch)
    seq_len = _check_int("seq_len", seq_len)
    if dtype not in LEDGER_DTYPES:
        raise ValueError(f"dtype must be one of {LEDGER_DTYPES}, got {dtype!r}")
    if not isinstance(fused, bool):
        raise ValueError(f"fused must be True or False, got {fused!r}")
    if attention is None:
        attention = "flash" if fused else "naive"
    if attention not in ATTENTION_FORMS:
        raise ValueError(f"attention must be one of {ATTENTION_FORMS}, got {attention!r}")
    b = roofline.bytes_per_element(dtype)
    d, dff = model.d_model, model.d_ff
    n = batch if phase == "decode" else batch * seq_len  # tokens in this step
    fwd_phase = "prefill" if phase == "training" else phase

    ops: list[Operator] = [_norm("attn norm", model, n, b, fused)]
    ops.append(_matmul("QKV proj", n, d, model.q_dim + 2 * model.kv_dim, b))
    if model.rope:
        table_rows = batch if phase == "decode" else seq_len
        flop_q, el_q = rope_elements(n, model.n_heads, model.head_dim, table_rows, fused)
        flop_k, el_k = rope_elements(n, model.n_kv_heads, model.head_dim, table_rows, fused)
        ops.append(Operator("RoPE", "elementwise", 0.0, flop_q + flop_k, 0.0, (el_q + el_k) * b,
                            2 if fused else 10))
    ops.extend(_attention_ops(model, fwd_phase, batch, seq_len, b, attention))
    nd = float(n) * d
    if fused:  # residual add in the projection's epilogue: read the residual, add, write once
        ops.append(_matmul("out proj + residual", n, model.q_dim, d, b, extra_read_elements=nd,
                           vector_flop=nd))
    else:
        ops.append(_matmul("out proj", n, model.q_dim, d, b))
        ops.append(_elementwise("residual add", "elementwise", 2 * nd, nd, b, nd))
    ops.append(_norm("MLP norm", model, n, b, fused))
    e = float(n) * dff
    if model.gated_mlp:
        ops.append(_matmul("gate+up proj", n, d, 2 * dff, b))
        if fused:
            ops.append(_elementwise("SiLU * up", "elementwise", 2 * e, e, b, 4 * e, e))
        else:
            # silu(g) = g / (1 + exp(-g)): negate, exp, add, divide
            ops.append(_elementwise("SiLU", "elementwise", e, e, b, 3 * e, e))
            ops.append(_elementwise("gate * up", "elementwise", 2 * e, e, b, e))
    else:
        # tanh GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): 8 FLOP and a tanh per element
        if fused:
            ops.append(_matmul("fc1 + GELU", n, d, dff, b, vector_flop=8 * e, special_ops=e))
        else:
            ops.append(_matmul("fc1", n, d, dff, b))
            ops.append(_elementwise("GELU", "elementwise", e, e, b, 8 * e, e))
    down = "down proj" if model.gated_mlp else "fc2"
    if fused:
        ops.append(_matmul(f"{down} + residual", n, dff, d, b, extra_read_elements=nd, vector_flop=nd))
    else:
        ops.append(_matmul(down, n, dff, d, b))
        ops.append(_elementwise("residual add 2", "elementwise", 2 * nd, nd, b, nd))

    if phase != "training":
        return tuple(ops)
    backward = []
    for op in reversed(ops):
        if op.name == "attention (flash)":
            backward.append(replace(op, name=f"{op.name} bwd", matrix_flop=2.5 * op.matrix_flop,
                                    vector_flop=2 * op.vector_flop, special_ops=op.special_ops,
                                    bytes_moved=2 * op.bytes_moved, kernels=op.kernels))
        else:
            backward.append(replace(op, name=f"{op.name} bwd", matrix_flop=2 * op.matrix_flop,
                                    vector_flop=2 * op.vector_flop, special_ops=2 * op.special_ops,
                                    bytes_moved=2 * op.bytes_moved, kernels=2 * op.kernels))
    return tuple(ops) + tuple(backward)


def model_operators(model: str | ModelConfig, phase: str = "prefill", batch: int = 1, seq_len: int = 2048,
                    dtype: str = "bf16", fused: bool = False,
                    attention: str | None = None) -> tuple[Operator, ...]:
    """The whole model: each layer operator ``n_layers`` times, then the final norm and the lm head.

    The lm head is computed for every token of the step (as a plain forward does; generation needs only the
    last position's logits in prefill). The embedding lookup (a gather of ``n x d`` elements) is included.
    """
    model = get_model(model)
    layer = layer_operators(model, phase, batch, seq_len, dtype, fused, attention)
    b = roofline.bytes_per_element(dtype)
    n = batch if phase == "decode" else batch * seq_len
    nd = float(n) * model.d_model
    extra = [
        _elementwise("embedding lookup", "elementwise", nd, nd, b, 0.0),
        _norm("final norm", model, n, b, fused),
        _matmul("lm head", n, model.d_model, model.vocab_size, b),
    ]
    if phase == "training":
        extra += [replace(op, name=f"{op.name} bwd", matrix_flop=2 * op.matrix_flop,
                          vector_flop=2 * op.vector_flop, special_ops=2 * op.special_ops,
                          bytes_moved=2 * op.bytes_moved, kernels=2 * op.kernels) for op in extra[1:]]
    return tuple(op.scaled(model.n_layers) for op in layer) + tuple(extra)


# --------------------------------------------------------------------------------------------------
# Prices
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Roofs:
    """The four roofs of one device for one storage dtype."""

    device: str
    dtype: str
    matrix_flop_per_s: float
    vector_flop_per_s: float
    special_ops_per_s: float
    hbm_bytes_per_s: float


def device_roofs(device: str | Accelerator, dtype: str = "bf16") -> Roofs:
    """Matrix peak in ``dtype`` (TF32 for fp32), fp32 vector peak, SFU peak and HBM bandwidth."""
    acc = roofline.as_accelerator(device)
    if dtype not in LEDGER_DTYPES:
        raise ValueError(f"dtype must be one of {LEDGER_DTYPES}, got {dtype!r}")
    return Roofs(
        device=acc.name, dtype=dtype,
        matrix_flop_per_s=acc.peak_flop_per_s(_MATRIX_PEAK_DTYPE[dtype], "matrix"),
        vector_flop_per_s=acc.peak_flop_per_s("fp32", "vector"),
        special_ops_per_s=hardware.special_function_ops_per_s(acc.name),
        hbm_bytes_per_s=acc.hbm_bytes_per_s,
    )


@dataclass(frozen=True)
class PricedOperator:
    """One operator with its time on each roof (seconds); ``time_s`` is the largest, ``bound`` its roof."""

    op: Operator
    matrix_time_s: float
    vector_time_s: float
    special_time_s: float
    memory_time_s: float

    @property
    def time_s(self) -> float:
        return max(self.matrix_time_s, self.vector_time_s, self.special_time_s, self.memory_time_s)

    @property
    def bound(self) -> str:
        """``"matrix"``, ``"vector"``, ``"special"`` or ``"memory"`` (ties go to the earlier roof)."""
        times = (self.matrix_time_s, self.vector_time_s, self.special_time_s, self.memory_time_s)
        return ROOFS[times.index(max(times))]


def price(op: Operator, roofs: Roofs) -> PricedOperator:
    """Time of ``op`` on each roof of ``roofs``."""
    return PricedOperator(
        op, op.matrix_flop / roofs.matrix_flop_per_s, op.vector_flop / roofs.vector_flop_per_s,
        op.special_ops / roofs.special_ops_per_s, op.bytes_moved / roofs.hbm_bytes_per_s,
    )


@dataclass(frozen=True)
class Ledger:
    """Every operator of a layer (or a model) priced on one device. Times in seconds."""

    model: ModelConfig
    phase: str
    batch: int
    seq_len: int
    dtype: str
    fused: bool
    scope: str
    roofs: Roofs
    rows: tuple[PricedOperator, ...] = field(repr=False)

    @property
    def flop(self) -> float:
        return sum(r.op.flop for r in self.rows)

    @property
    def matrix_flop(self) -> float:
        return sum(r.op.matrix_flop for r in self.rows)

    @property
    def bytes_moved(self) -> float:
        return sum(r.op.bytes_moved for r in self.rows)

    @property
    def time_s(self) -> float:
        """Sum of the operators' bounds: kernels run one after another."""
        return sum(r.time_s for r in self.rows)

    @property
    def kernels(self) -> int:
        return sum(r.op.kernels for r in self.rows)

    @property
    def tokens(self) -> int:
        """Tokens the step produces or consumes: ``batch`` in decode, ``batch * seq_len`` otherwise."""
        return self.batch if self.phase == "decode" else self.batch * self.seq_len

    @property
    def fraction_of_matrix_peak(self) -> float:
        """All FLOP over (time x matrix peak): the most of the matrix peak the whole step can reach."""
        return self.flop / (self.time_s * self.roofs.matrix_flop_per_s)

    def share(self, what: str = "time", group: str | None = None, names: Sequence[str] | None = None) -> float:
        """Fraction of the ledger's ``what`` ("time", "flop" or "bytes") spent in ``group`` or in the
        operators named ``names`` (exactly one of the two)."""
        if what not in ("time", "flop", "bytes"):
            raise ValueError(f"what must be 'time', 'flop' or 'bytes', got {what!r}")
        if (group is None) == (names is None):
            raise ValueError(f"give exactly one of group and names, got group={group!r}, names={names!r}")
        if group is not None and group not in GROUPS:
            raise ValueError(f"group must be one of {GROUPS}, got {group!r}")

        def value(r: PricedOperator) -> float:
            return {"time": r.time_s, "flop": r.op.flop, "bytes": r.op.bytes_moved}[what]

        chosen = [r for r in self.rows if (r.op.group == group if group else r.op.name in names)]
        if names is not None:
            missing = set(names) - {r.op.name for r in self.rows}
            if missing:
                raise ValueError(f"names {sorted(missing)} are not operators of this ledger")
        total = sum(value(r) for r in self.rows)
        return sum(value(r) for r in chosen) / total

    def group_times_s(self) -> dict[str, float]:
        """Seconds per group, in :data:`GROUPS` order."""
        return {g: sum(r.time_s for r in self.rows if r.op.group == g) for g in GROUPS}

    def table_rows(self) -> list[dict]:
        """One dict per operator for :func:`gpuperf.plotting.tables.format_table_html`."""
        total_t, total_f = self.time_s, self.flop
        return [{
            "operator": r.op.name, "group": r.op.group, "kernels": r.op.kernels,
            "flop": r.op.flop, "bytes_moved": r.op.bytes_moved,
            "intensity_flop_per_byte": r.op.intensity_flop_per_byte,
            "bound": r.bound, "time_s": r.time_s,
            "flop_share": r.op.flop / total_f, "time_share": r.time_s / total_t,
        } for r in self.rows]


def ledger(model: str | ModelConfig, phase: str = "prefill", batch: int = 1, seq_len: int = 2048,
           device: str | Accelerator = "H200 SXM", dtype: str = "bf16", fused: bool = False,
           scope: str = "layer", attention: str | None = None) -> Ledger:
    """Price every operator of one layer (``scope="layer"``) or of the whole model on ``device``.

    ``attention``: see :func:`layer_operators`."""
    model = get_model(model)
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}, got {scope!r}")
    build = layer_operators if scope == "layer" else model_operators
    ops = build(model, phase, batch, seq_len, dtype, fused, attention)
    roofs = device_roofs(device, dtype)
    return Ledger(model, phase, batch, seq_len, dtype, fused, scope, roofs, tuple(price(o, roofs) for o in ops))


# --------------------------------------------------------------------------------------------------
# Decode, utilization
# --------------------------------------------------------------------------------------------------


def decode_compute_bound_batch(device: str | Accelerator, dtype: str = "bf16", d_in: int = 4096,
                               d_out: int = 4096) -> int:
    """Smallest batch B at which a decode projection (B x d_in) @ (d_in x d_out) reaches the matrix ridge.

    Its intensity ``2 B d_in d_out / ((B d_in + d_in d_out + B d_out) b)`` is close to ``2 B / b`` while
    ``B`` is much smaller than the widths: roughly the tokens in the batch for 16-bit weights.
    """
    acc = roofline.as_accelerator(device)
    d_in, d_out = _check_int("d_in", d_in), _check_int("d_out", d_out)
    if dtype not in LEDGER_DTYPES:
        raise ValueError(f"dtype must be one of {LEDGER_DTYPES}, got {dtype!r}")
    ridge = acc.ridge_point_flop_per_byte(_MATRIX_PEAK_DTYPE[dtype], "matrix")
    b = roofline.bytes_per_element(dtype)

    def intensity(batch: int) -> float:
        return 2.0 * batch * d_in * d_out / ((batch * d_in + d_in * d_out + batch * d_out) * b)

    if intensity(10**9) < ridge:
        raise ValueError(f"no batch makes a {d_in} x {d_out} projection compute-bound on {acc.name}")
    lo, hi = 1, 1
    while intensity(hi) < ridge:
        hi *= 2
    while lo < hi:  # intensity grows with the batch: bisect for the first batch at the ridge
        mid = (lo + hi) // 2
        if intensity(mid) >= ridge:
            hi = mid
        else:
            lo = mid + 1
    return lo


def palm_model_flop_per_token(n_params: float, n_layers: int, n_heads: int, head_dim: int,
                              seq_len: int) -> float:
    """Training FLOP per token, ``6 N + 12 L H Q T`` (Chowdhery et al. 2022, Appendix B): 6 per parameter
    (2 forward, 4 backward) plus the attention matmuls, ``6 L H (2 Q T)``."""
    for name, value in (("n_layers", n_layers), ("n_heads", n_heads), ("head_dim", head_dim),
                        ("seq_len", seq_len)):
        _check_int(name, value)
    if not (isinstance(n_params, numbers.Real) and n_params > 0):
        raise ValueError(f"n_params must be a number > 0, got {n_params!r}")
    return 6.0 * n_params + 12.0 * n_layers * n_heads * head_dim * seq_len


def flops_utilization(tokens_per_s: float, flop_per_token: float, n_chips: int, peak_flop_per_s: float) -> float:
    """``tokens_per_s x flop_per_token / (n_chips x peak_flop_per_s)``: MFU when ``flop_per_token`` counts
    the model's FLOP, HFU when it also counts recomputation (Chowdhery et al. 2022, section 4.1)."""
    for name, value in (("tokens_per_s", tokens_per_s), ("flop_per_token", flop_per_token),
                        ("peak_flop_per_s", peak_flop_per_s)):
        if not (isinstance(value, numbers.Real) and value > 0 and math.isfinite(value)):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    n_chips = _check_int("n_chips", n_chips)
    return tokens_per_s * flop_per_token / (n_chips * peak_flop_per_s)


def bandwidth_utilization(bytes_per_step: float, step_time_s: float, bytes_per_s: float) -> float:
    """MBU: the bytes a step must read (weights and KV cache) over (step time x peak bandwidth)."""
    for name, value in (("bytes_per_step", bytes_per_step), ("step_time_s", step_time_s),
                        ("bytes_per_s", bytes_per_s)):
        if not (isinstance(value, numbers.Real) and value > 0 and math.isfinite(value)):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return bytes_per_step / (step_time_s * bytes_per_s)


def training_days(total_flop: float, n_chips: int, peak_flop_per_s: float, utilization: float) -> float:
    """Days of uninterrupted training: ``total_flop / (n_chips x peak x utilization) / 86400``."""
    if not (isinstance(utilization, numbers.Real) and 0 < utilization <= 1):
        raise ValueError(f"utilization must be in (0, 1], got {utilization!r}")
    if not (isinstance(total_flop, numbers.Real) and total_flop > 0):
        raise ValueError(f"total_flop must be a number > 0, got {total_flop!r}")
    if not (isinstance(peak_flop_per_s, numbers.Real) and peak_flop_per_s > 0):
        raise ValueError(f"peak_flop_per_s must be a number > 0, got {peak_flop_per_s!r}")
    n_chips = _check_int("n_chips", n_chips)
    return total_flop / (n_chips * peak_flop_per_s * utilization) / 86400.0


# --------------------------------------------------------------------------------------------------
# The explorer's model: a small grid of states
# --------------------------------------------------------------------------------------------------

EXPLORER_GRID: Mapping[str, tuple] = MappingProxyType({
    "model": ("GPT-2 medium", "Llama-3-8B", "GPT-3 175B"),
    "phase": ("prefill", "decode"),
    "batch": (1, 64),
    "seq_len": (512, 2048, 8192),
    "device": ("A100 80GB SXM", "H200 SXM"),
    "dtype": ("bf16", "fp8"),
    "fused": (False, True),
})


@dataclass(frozen=True)
class ExplorerState:
    """What the ledger explorer shows for one setting: seconds per group and the operator rows.

    ``available`` is False (and the numbers empty) where the device lacks the dtype's matrix unit.
    """

    title: str
    available: bool
    group_times_s: Mapping[str, float]
    rows: tuple[dict, ...]
    time_s: float
    fraction_of_matrix_peak: float


def explorer_state(model: str, phase: str, batch: int, seq_len: int, device: str, dtype: str,
                   fused: bool) -> ExplorerState:
    """The ledger explorer's model: one layer's ledger for one setting of :data:`EXPLORER_GRID`."""
    acc = roofline.as_accelerator(device)
    what = f"context {seq_len}" if phase == "decode" else f"{seq_len} tokens each"
    head = (f"{get_model(model).name}, one layer, {phase}, batch {batch}, {what}, {acc.name}, {dtype}, "
            f"{'fused' if fused else 'unfused'}")
    if dtype not in LEDGER_DTYPES:
        raise ValueError(f"dtype must be one of {LEDGER_DTYPES}, got {dtype!r}")
    if _MATRIX_PEAK_DTYPE[dtype] not in acc.matrix_flop_per_s:
        return ExplorerState(f"{head}: the {acc.name} has no {dtype} matrix unit", False,
                             MappingProxyType({}), (), math.nan, math.nan)
    led = ledger(model, phase, batch, seq_len, acc, dtype, fused)
    return ExplorerState(f"{head}: {roofline.format_duration(led.time_s)}", True,
                         MappingProxyType(led.group_times_s()), tuple(led.table_rows()),
                         led.time_s, led.fraction_of_matrix_peak)


# --------------------------------------------------------------------------------------------------
# The recorded per-kernel profile (bench/ledger_profile.py) against the ledger
# --------------------------------------------------------------------------------------------------

#: The profiler's operator names (``record_function("ledger:<name>")``) and the ledger operator each is;
#: ``None`` marks work the ledger does not count (the copy that lays the attention output out for the
#: output projection).
PROFILE_OPERATORS: Mapping[str, str | None] = MappingProxyType({
    "attn_norm": "attn norm", "qkv_proj": "QKV proj", "rope": "RoPE",
    "attn_scores": "attn scores QK^T", "attn_scale": "attn scale", "attn_mask": "attn mask",
    "attn_softmax": "attn softmax", "attn_pv": "attn PV", "attention": "attention (flash)",
    "o_layout": None, "o_proj": "out proj", "residual_1": "residual add", "mlp_norm": "MLP norm",
    "gate_up_proj": "gate+up proj", "silu": "SiLU", "gate_mul": "gate * up", "down_proj": "down proj",
    "residual_2": "residual add 2",
})

#: How each recorded variant is priced: (phase, fused, attention form).
PROFILE_VARIANTS: Mapping[str, tuple[str, bool, str]] = MappingProxyType({
    "eager": ("prefill", False, "naive"),
    "eager_sdpa": ("prefill", False, "flash"),
    "decode_eager": ("decode", False, "naive"),
    "compiled": ("prefill", True, "fused_softmax"),
})


def classify_kernel(name: str) -> str:
    """The ledger group of a GPU kernel, from its name: ``"matmul"`` (cuBLAS/CUTLASS GEMMs, nvjet),
    ``"attention"`` (softmax and SDPA/flash kernels), ``"norm"`` (kernels computing an rsqrt or a mean),
    ``"layout"`` (copies that only rearrange data), else ``"elementwise"``."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty kernel name, got {name!r}")
    low = name.lower()
    if any(k in low for k in ("softmax", "sdpa", "flash", "fmha", "attention")):
        return "attention"
    if any(k in low for k in ("nvjet", "gemm", "cutlass", "xmma", "splitkreduce")):
        return "matmul"
    if "rsqrt" in low or "mean" in low:
        return "norm"
    if "clone" in low or ("copy" in low and "cat" not in low):
        return "layout"
    return "elementwise"


@dataclass(frozen=True)
class ProfiledOperator:
    """One ledger operator: measured GPU time (sum of its kernels, seconds) against the ledger's bound."""

    operator: str
    group: str
    measured_s: float
    predicted_s: float | None  # None for work the ledger does not count
    kernels_measured: float
    kernels_predicted: int | None
    bound: str | None

    @property
    def ratio(self) -> float | None:
        """Measured over predicted (how far the kernel is from its roofline bound)."""
        return None if self.predicted_s is None else self.measured_s / self.predicted_s


def _profile_ledger(result: Mapping, config: Mapping, device, dtype: str) -> Ledger:
    variant = result["variant"]
    if variant not in PROFILE_VARIANTS:
        raise ValueError(f"result variant must be one of {tuple(PROFILE_VARIANTS)}, got {variant!r}")
    phase, fused, attention = PROFILE_VARIANTS[variant]
    model = replace(SMALL_LLAMA, d_model=config["d_model"], n_heads=config["n_heads"],
                    n_kv_heads=config["n_heads"], head_dim=config["head_dim"], d_ff=config["d_ff"])
    seq = result["seq_len"] if phase == "prefill" else result["context"]
    return ledger(model, phase, result["batch"], seq, device, dtype, fused, attention=attention)


def compare_profile(result: Mapping, config: Mapping, device: str | Accelerator = "H200 SXM",
                    dtype: str = "bf16") -> tuple[ProfiledOperator, ...]:
    """Measured per-operator times of one recorded eager variant against its ledger, in ledger order
    (then work the ledger does not count). ``result`` is one entry of the recorded run's ``results``,
    ``config`` its layer shape (``provenance["config"]`` decoded)."""
    if result.get("variant") == "compiled":
        raise ValueError("result variant 'compiled' has no per-operator attribution; use compare_groups")
    led = _profile_ledger(result, config, device, dtype)
    measured: dict[str | None, list[float]] = {}
    for k in result["kernels"]:
        if k["op"] not in PROFILE_OPERATORS:
            raise ValueError(f"result has a kernel under unknown operator {k['op']!r}")
        entry = measured.setdefault(PROFILE_OPERATORS[k["op"]], [0.0, 0.0])
        entry[0] += k["time_s"]
        entry[1] += k["launches_per_iter"]
    rows = []
    for r in led.rows:
        t, n = measured.pop(r.op.name, [0.0, 0.0])
        rows.append(ProfiledOperator(r.op.name, r.op.group, t, r.time_s, n, r.op.kernels, r.bound))
    for name, (t, n) in measured.items():
        rows.append(ProfiledOperator(name or "layout copy (not in the ledger)", "layout", t, None, n, None,
                                     None))
    return tuple(rows)


def compare_groups(result: Mapping, config: Mapping, device: str | Accelerator = "H200 SXM",
                   dtype: str = "bf16") -> dict[str, tuple[float, float]]:
    """Seconds per group, ``{group: (measured, predicted)}``, for any recorded variant. A kernel the
    profiler attributed to an operator takes that operator's group; others (a compiled run's) are grouped
    by :func:`classify_kernel`. QK^T and PV count as ``"matmul"`` on both sides (a compiled run's GEMMs
    cannot be told apart by name); ``"layout"`` has no prediction (0)."""
    led = _profile_ledger(result, config, device, dtype)
    predicted = {g: 0.0 for g in (*GROUPS, "layout")}
    for r in led.rows:
        group = "matmul" if r.op.name in ("attn scores QK^T", "attn PV") else r.op.group
        predicted[group] += r.time_s
    groups = {r.op.name: ("matmul" if r.op.name in ("attn scores QK^T", "attn PV") else r.op.group)
              for r in led.rows}
    measured = {g: 0.0 for g in predicted}
    for k in result["kernels"]:
        if k.get("op") is not None:  # attributed by the profiler: the ledger operator's group
            name = PROFILE_OPERATORS.get(k["op"])
            group = "layout" if name is None else groups.get(name, classify_kernel(k["kernel"]))
        else:
            group = classify_kernel(k["kernel"])
        measured[group] += k["time_s"]
    return {g: (measured[g], predicted[g]) for g in predicted}
