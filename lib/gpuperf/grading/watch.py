"""What the reader's function may do while it is graded, enforced below torch's Python API.

A :class:`Watch` is entered around every call of the reader's function. It stacks two torch modes:

* a :class:`torch.utils._python_dispatch.TorchDispatchMode`, which sees every ATen operator that runs, whatever
  Python name called it (``torch.linalg.matmul``, ``torch.ops.aten.mm.default``, ``F.softmin`` and ``a @ b``
  all arrive as ``aten.mm`` / ``aten._softmax``), and checks it against the exercise's **allow-list**;
* a :class:`torch.overrides.TorchFunctionMode`, which refuses the few Tensor methods that hand torch's memory
  to code torch cannot see (``numpy``, ``__array__``, ``tolist``, ``untyped_storage``, ``__dlpack__``):
  the allow-list would be worthless if the data could leave torch and come back; ``data_ptr`` outside
  Triton's own launch code (directly or through ``triton.reinterpret``) and per-element Python callbacks
  (``apply_``, ``map_``) and tensor hooks too.

**By identity, not by name.** An operator must be one of ATen's own (namespace ``aten``; the messages give
the full name, ``aten::add.Tensor``) with no kernel registered from Python (``torch.library``), on plain
tensors (a subclass's ``__torch_function__``/``__torch_dispatch__`` would run outside the watch). A
backward (``Tensor.backward``, ``torch.autograd.grad``) runs with both modes on, so hooks and an autograd
Function's backward are watched like the rest. Only launches of the reader's own ``@triton.jit`` functions
count: a kernel from a library's file (torch, Triton, an installed package, the course's package) is
refused, and so are ``torch.cuda.jiterator``, compiled extensions, DLPack, ``from_numpy``/``frombuffer``
and a compiled kernel launched other than through a JIT launch (:func:`_close_doors`). A Python audit
hook (installed once at import, not removable) refuses ``ctypes``, frames (``sys._getframe``, a
traceback's or a generator's frame, through ``inspect`` too), ``gc``'s object graph and tracing hooks
from the reader's code while a watch or :class:`PlainGuard` (L1) is on. A frame counts as torch's,
Triton's or the grader's only when its code comes from the module file it names.

**Memory shadows.** For a Triton exercise, every buffer the watch handed out or adopted must hold, before
each launch and each watched torch operation and at return, what it held after the last launch or
watched write: a write by another thread, with the modes switched off, or through a raw address fails.

**Tampering.** The watch's ``paused``/``internal`` flags are checked against the call stack (only the
launch hooks and the grader's own bookkeeping may set them), the watch may not be replaced, left or
re-entered, nor its policy swapped. :func:`take_baseline` records the grader, torch, numpy and Triton when
:mod:`gpuperf.grading` is imported; :func:`changed_since_import` (run before grading) reports what a later
cell rebound or recompiled, and :func:`reaches_grader` reads the reader's code for names of the watch's
state. What stays out of reach is listed in ``labs/README.md`` ("What the grader cannot see").

The allow-list of a Triton exercise (:data:`TRITON_OPS`) holds what a wrapper needs to set up a kernel and
nothing that computes: allocation (``empty``, ``zeros``, ``full``, ... and ``fill_``/``zero_`` with a
constant), views (``view``, ``slice``, ``select``, ``t``, ``transpose``, ``permute``, ``unsqueeze``,
``expand``, ``split``, ``detach``, ``alias``) and copies (``clone``, which ``.contiguous()`` runs,
``copy_``, and ``_to_copy``, which ``.to(dtype)``/``.float()`` run). Copies move values without combining
them, so they cannot compute a sum, a product or an exponential; a dtype conversion rounds, which the
tolerances already judge. Left out on purpose: ``as_strided`` (a view of any memory of a storage, guard bands
included), ``set_`` (makes one tensor point at another's memory), ``item``/``_local_scalar_dense`` (data out
of torch) and every arithmetic or reduction operator. A refused operator fails the case with a message
naming it.

**Kernel launches.** A Triton launch on a GPU runs no torch operator of the reader's; Triton's own launcher
and autotuner call ``data_ptr``, allocate, and time with torch. Under the interpreter a launch copies its
tensors' storages to the host and back with torch operators of its own, while the kernel body itself is
plain Python that could call torch. The watch therefore pauses exactly around Triton's own work: the
whole of ``JITFunction.run``/``Autotuner.run`` on a GPU (no Python of the reader's runs inside), and under
the interpreter the launch minus the kernel body: paused from ``InterpretedFunction.run`` until the first
program starts, watched while programs run, paused again for the copy back. These entry points are patched
on Triton's classes for the duration of a grade (not looked up by module name). "Triton's own work" is
decided by the stack: frames of torch's and Triton's files, and the argument binder Triton generates for a
kernel, recognised by the code object and globals Triton's maker produced (recorded when it made them), not
by a name. Python of the reader's that Triton calls back while paused (a grid function, a pre-run or
autotuner hook, a heuristic, ``launch_metadata``) is watched like the rest of the reader's code.

**Tamper checks.** The Python switches that turn modes off (``torch._C.DisableTorchFunction``,
``_DisableTorchDispatch``, popping or pushing modes, ``_disable_current_modes``) raise
:class:`ForbiddenCall` when called from outside torch and Triton while the watch is on. At every kernel
launch and after the reader's function returns, a probe operator must reach both modes: a mode that was
popped, or a disabling guard left entered, fails the case.

**The course's own kernels** are refused by what runs, not by name: a launch whose Python function was
compiled from a file of ``gpuperf/kernels`` (re-jitting ``kernel.fn`` or copying its code object keeps
that file) fails unless the function graded is the exercise's solution itself (by identity: a wrapper
around it is the reader's function), or the exercise's :class:`Policy` hands that kernel to the reader.

**Memory.** Every allocation the reader makes is served from a larger buffer whose bands before and after
hold a NaN with a payload of the grader's (:data:`BAND_ELEMENTS` each side, wider than any Triton block:
Triton caps a block at 2^20 elements); an ``empty`` tensor starts as NaN, so an element never written is
seen. After the call the bands must be unchanged. Under the interpreter, every load and store of a kernel
is checked against the tensors of its launch (:class:`OutOfBounds` names the lane, the address and the
nearest tensor), so a stray store is a clear failure instead of a corrupted heap, and an unmasked load is
caught even where its value is never stored. Tensors the reader's code hands to torch or to a kernel must
come from the grader or from torch inside the call (not, say, ``torch.from_numpy``), and so must the
outputs; under the interpreter every element of an output must have been written by a kernel's store or a
torch fill/copy, not behind torch's back.

This is a guard for a learner's shortcuts and accidents, not a sandbox: code in the same process can always
rewrite the grader itself. The solution is printed under every exercise anyway.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

#: Guard band, in elements, on each side of every allocation made while a reader's function runs: wider than
#: any Triton block (at most 2^20 elements), so an unmasked store of one block cannot jump over it.
BAND_ELEMENTS = {"cpu": 1 << 16, "cuda": 1 << 20}

#: Allocation operators: served from a banded buffer.
ALLOCATIONS = frozenset(("empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros",
                         "zeros_like", "new_zeros", "full", "full_like", "new_full", "ones", "ones_like",
                         "new_ones"))
#: Views and metadata: alias an existing tensor, compute nothing.
VIEWS = frozenset(("view", "_unsafe_view", "slice", "select", "t", "transpose", "permute", "unsqueeze",
                   "squeeze", "expand", "split", "split_with_sizes", "unbind", "chunk", "detach", "alias",
                   "_reshape_alias", "narrow", "record_stream", "is_same_size",
                   "_has_compatible_shallow_copy_type"))
#: Copies and constant fills: move or set values, combine none.
COPIES = frozenset(("clone", "copy_", "_to_copy", "fill_", "zero_"))
#: Everything a Triton exercise's wrapper may run outside its kernels.
TRITON_OPS = ALLOCATIONS | VIEWS | COPIES
#: Softmax- and attention-like operators (ATen names) refused even where arithmetic is allowed (L5.tiled).
SOFTMAX_LIKE_OPS = frozenset((
    "_softmax", "softmax", "_log_softmax", "log_softmax", "_safe_softmax", "logsumexp", "special_logsumexp",
    "_softmax_backward_data", "scaled_dot_product_attention", "_scaled_dot_product_attention_math",
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_fused_attention_overrideable", "_flash_attention_forward",
    "_efficient_attention_forward", "_native_multi_head_attention", "_transformer_encoder_layer_fwd",
    "_masked_softmax"))
#: The same by Python name (the torch-function level sees the name the reader typed).
SOFTMAX_LIKE_NAMES = frozenset((
    "softmax", "log_softmax", "softmin", "logsumexp", "special_softmax", "special_log_softmax",
    "special_logsumexp", "scaled_dot_product_attention", "multi_head_attention_forward", "gumbel_softmax"))
#: Tensor methods that hand torch's memory to code torch cannot see.
LEAVES_TORCH = frozenset(("numpy", "__array__", "tolist", "untyped_storage", "storage",
                          "_typed_storage", "__dlpack__", "__array_wrap__", "__reduce_ex__", "item",
                          "__cuda_array_interface__", "__array_interface__", "_cdata", "_view_func",
                          "_make_subclass", "_make_wrapper_subclass", "as_subclass"))
#: Tensor methods that run a Python callable of the reader's per element, or later from inside torch: refused
#: (a per-element callback computes outside torch; a hook runs inside the autograd engine).
CALLBACKS = frozenset(("apply_", "map_", "map2_", "register_hook", "register_post_accumulate_grad_hook",
                       "_register_hook_dict", "register_multi_grad_hook", "_register_access_hook"))
#: Printing a tensor turns its values into text the program can read back: refused with its own message.
PRINTING = frozenset(("__repr__", "__str__", "__format__"))

#: torch functions that run Python of the reader's (an autograd.Function's forward and backward): a torch
#: function mode is popped while its handler runs (and cannot re-enter: the call would come back to it), so
#: inside them only the dispatch mode watches (allow-list, known tensors, launches, bands).
_RUNS_PYTHON = frozenset(("apply", "backward", "grad", "_make_grads", "run_backward"))

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _installed_path(filename: str) -> bool:
    """Whether ``filename`` (absolute) lies in an installed package: under a ``site-packages`` or
    ``dist-packages`` folder, or in a ``sys.path`` folder that holds a distribution's metadata (packages
    installed with ``pip install --target`` or put on ``PYTHONPATH``; the working directory excepted).
    :func:`gpuperf.grading._installed_file` answers the same question for the hook and thread checks."""
    if "site-packages" in filename or "dist-packages" in filename:
        return True
    folders = _distribution_folders(tuple(sys.path), os.getcwd())
    return bool(folders) and any(filename.startswith(root + os.sep) for root in folders)


@functools.lru_cache(maxsize=8)
def _distribution_folders(path: tuple, cwd: str) -> frozenset:
    """The folders of ``sys.path`` (``path``) that hold an installed distribution's metadata (a ``.dist-info``
    or ``.egg-info`` folder), less the working directory, where the reader's own files are: packages installed
    with ``pip install --target`` or put on ``PYTHONPATH`` count as installed, as in site-packages (found on a
    GPU machine whose ipykernel was installed so: its IOPub thread was taken for the reader's)."""
    found = set()
    here = os.path.realpath(cwd)
    for entry in path:
        if not isinstance(entry, str) or not entry:
            continue
        real = os.path.realpath(entry)
        if real == here or not os.path.isdir(real):
            continue
        try:
            names = os.listdir(real)
        except OSError:  # pragma: no cover - a folder we may not read
            continue
        if any(name.endswith((".dist-info", ".egg-info")) for name in names):
            found.add(real)
            if real != os.path.abspath(entry):
                found.add(os.path.abspath(entry))
    return frozenset(found)
_COURSE_KERNELS_DIR = os.path.join(_PACKAGE_DIR, "kernels") + os.sep
_GRADER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class ForbiddenCall(RuntimeError):
    """The reader's function did something the exercise asks them not to (an operator that computes the
    answer, data taken out of torch, the course's own kernel, the grader's watch switched off)."""


class OutOfBounds(RuntimeError):
    """A kernel run by the Triton interpreter loaded or stored outside every tensor of its launch."""


@dataclass(frozen=True)
class Policy:
    """What one exercise allows. ``allowed``: ATen operator names (overload packets) allowed outside kernel
    launches, or None for any operator not in ``refused``; ``max_numel``: no operator may create a tensor of
    more elements; ``kernels``: the exercise is a Triton one (launches are watched, outputs must be memory
    the grader or torch gave out inside the call)."""

    exercise: str
    allowed: frozenset | None = TRITON_OPS
    refused: frozenset = frozenset()
    refused_names: frozenset = frozenset()
    max_numel: int | None = None
    kernels: bool = True
    why: str = "asks for a Triton kernel that does the work itself"
    int64_offsets: bool = False  # under the interpreter: every store's addresses must come from 64-bit offsets
    #: under the interpreter: no address may multiply a program id by a size or stride in 32 bits
    wide_offsets: bool = False
    #: attention: a block's rows (or a loop's keys) times a stride stays inside one head, where the address
    #: adds a head offset computed in 64 bits (see :func:`gpuperf.grading.frontend.wrapping_offsets`)
    within_head: bool = False
    #: course kernels the exercise itself hands the reader (L6.autograd uses the L5 forward of the course)
    course_kernels: frozenset = frozenset()


@dataclass
class _Alloc:
    """A buffer the watch handed out: ``tensor`` the whole buffer, the reader's elements from ``start`` to
    ``stop`` (in elements), guard bands outside them holding ``pattern``."""

    buffer: Any
    start: int
    stop: int
    band_bits: Any = None  # copy of the bands' bits, to compare afterwards
    written: Any = None  # numpy bool per element of [start, stop): stored by a kernel, a fill or a copy
    base: int = 0  # address of element ``start``
    element_size: int = 1
    shadow: Any = None  # bits of [start, stop) after the last watched write (kernel launch, torch copy/fill)

    def measure(self) -> "_Alloc":
        """Its addresses, read from the buffer (called by :func:`banded_empty`, not from a dataclass's generated
        ``__init__``: that frame is no file of the grader's, and where autograd runs with the watch's function
        mode on, a torch call made from it looked like the reader's: round 25's h12)."""
        self.element_size = self.buffer.element_size()
        self.base = self.buffer.data_ptr() + self.start * self.element_size
        self.storage = self.buffer.untyped_storage().data_ptr()
        return self


@dataclass
class Counters:
    """What the kernels did under the interpreter (all launches of one call)."""

    launches: int = 0
    dots: int = 0
    loaded_elements: int = 0
    widest_load: int = 0
    stores_2d: int = 0
    stores: int = 0
    narrow_offsets: int = 0  # stores whose addresses were computed from 32-bit offsets only
    narrow_descriptors: int = 0  # of those, stores through a 1-D tensor descriptor's 32-bit coordinates
    widest_block: int = 0  # on a GPU: the largest integer constexpr of a launch
    most_programs: int = 0  # on a GPU: the most programs one launch's grid ran
    dot_shapes: dict = field(default_factory=dict)  # under the interpreter: (M, K, N) of each tl.dot: count
    kernels: list = field(default_factory=list)
    #: kernels whose addresses multiply a program id by a size or stride in 32 bits (read from their TTIR)
    wrapping_kernels: list = field(default_factory=list)
    #: kernels whose addresses come from a 32-bit product of the program id with anything (L2's rule), read
    #: from the TTIR, so that a tl.where or a cast between the product and the address hides nothing
    narrow_kernels: list = field(default_factory=list)
    #: kernels whose load or store masks compare a 32-bit product of the program id (L2, from the TTIR)
    narrow_masks: list = field(default_factory=list)
    #: kernels whose load or store masks come from a 32-bit product of a program id's value and a size given at
    #: run time (L3 to L6, from the TTIR: :func:`gpuperf.grading.frontend.wrapping_masks`)
    wrapping_masks: list = field(default_factory=list)
    #: masked loads without ``other=`` whose masked-out lanes were filled with NaN: (kernel, tensor, line)
    poisoned: list = field(default_factory=list)
    #: accumulating atomics (add, max, ...) onto elements nothing had written in this call (memory from
    #: torch.empty, NaN here): (kernel, tensor, line); under the interpreter
    unset_atomics: list = field(default_factory=list)
    #: kernels with an accumulating atomic, read from their TTIR (a GPU too)
    atomic_kernels: list = field(default_factory=list)
    #: (kernel, (x, y, z)): the grid of each launch (interpreted or compiled, where it can be read)
    grids: list = field(default_factory=list)


_ACTIVE: "Watch | None" = None

#: The banded buffers torch made inside the calls of the grade in progress, by storage address, so that a
#: later call of the same grade may use one it kept (a workspace cache: see ``Watch._carry_over``); emptied
#: when a grade starts and ends (:func:`forget_earlier_calls`). At most ``limit`` bytes of small buffers and as
#: many of large ones are kept alive (:func:`_remember_for_later_calls`).
_EARLIER_CALLS: dict = {"allocs": {}, "large": {}, "bytes": 0, "small_bytes": 0, "limit": 256 << 20,
                        "small": 1 << 20, "grading": False, "returned": set()}


def _remember_for_later_calls(alloc) -> None:
    """Keep ``alloc`` for the grade's later calls. Buffers of at most ``small`` bytes are kept, up to ``limit``
    bytes of them (a workspace of row statistics made in an early case and reused cases later: an H100 refused
    one); larger ones up to ``limit`` bytes in all, those used longest ago let go first (a GPU grade allocates
    gigabytes over its cases: keeping only the first 256 MiB refused an honest workspace made in a late case and
    reused by the next call)."""
    size = alloc.buffer.numel() * alloc.buffer.element_size()
    if not _EARLIER_CALLS["grading"] or size > _EARLIER_CALLS["limit"]:
        return
    allocs, large = _EARLIER_CALLS["allocs"], _EARLIER_CALLS["large"]
    if size > _EARLIER_CALLS["small"]:
        while large and _EARLIER_CALLS["bytes"] + size > _EARLIER_CALLS["limit"]:
            oldest = next(iter(large))
            _EARLIER_CALLS["bytes"] -= large.pop(oldest)
            allocs.pop(oldest, None)
        large[alloc.storage] = size
        _EARLIER_CALLS["bytes"] += size
    elif _EARLIER_CALLS["small_bytes"] + size > _EARLIER_CALLS["limit"]:
        return  # (a grade of thousands of small buffers: the first ones stay)
    else:
        _EARLIER_CALLS["small_bytes"] += size
    allocs[alloc.storage] = alloc


def forget_earlier_calls(grading: bool = False) -> None:
    """Start (``grading``) or end a grade: no buffer of an earlier grade's calls may be used; buffers are
    remembered only while a grade runs (not in a :func:`gpuperf.grading.forbid` block)."""
    _EARLIER_CALLS["allocs"] = {}
    _EARLIER_CALLS["large"] = {}
    _EARLIER_CALLS["bytes"] = 0
    _EARLIER_CALLS["small_bytes"] = 0
    _EARLIER_CALLS["grading"] = grading
    _EARLIER_CALLS["returned"] = set()  # storages of the outputs earlier calls returned


def _nan_pattern(dtype):
    """A NaN with a payload of the grader's, as the integer dtype of the same width and its bit value."""
    import torch

    bits = {torch.float32: (torch.int32, 0x7FC0BEEF), torch.float16: (torch.int16, 0x7E5B),
            torch.bfloat16: (torch.int16, 0x7FDB), torch.float64: (torch.int64, 0x7FF8DEADBEEF0001)}
    if dtype in bits:
        return bits[dtype]
    size = torch.empty((), dtype=dtype).element_size()
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    return ints[size], 0x5B


def banded_empty(shape, stride, dtype, device, band: int):
    """A tensor of ``shape``/``stride`` inside a buffer with ``band`` elements of payload NaN before and after
    it; returns ``(view, alloc)``. The view's own elements are plain NaN (never written = NaN)."""
    import torch

    shape, stride = tuple(shape), tuple(stride)
    span = 1 + sum((s - 1) * st for s, st in zip(shape, stride)) if all(s > 0 for s in shape) else 0
    itype, pattern = _nan_pattern(dtype)
    buf = torch.empty(span + 2 * band, dtype=dtype, device=device)
    buf.view(itype).fill_(pattern)
    view = buf.as_strided(shape, stride, band)
    if dtype.is_floating_point:
        buf[band: band + span].fill_(float("nan"))
    alloc = _Alloc(buf, band, band + span).measure()
    alloc.band_bits = (buf[:band].view(itype).clone(), buf[band + span:].view(itype).clone())
    return view, alloc


def band_damage(alloc: _Alloc) -> str:
    """"" when the guard bands of ``alloc`` are intact, else where the first changed element lies."""
    import torch

    before, after = alloc.band_bits
    itype = before.dtype
    buf = alloc.buffer
    now_before = buf[: alloc.start].view(itype)
    now_after = buf[alloc.stop:].view(itype)
    if not torch.equal(now_after, after):
        first = int((now_after != after).nonzero()[0])
        return f"element {first} past the end (buffer index {alloc.stop + first})"
    if not torch.equal(now_before, before):
        last = int((now_before != before).nonzero()[-1])
        return f"element {alloc.start - last} before the start"
    return ""


class Watch:
    """Enter around one call of the reader's function (see the module docstring)."""

    def __init__(self, policy: Policy, device: str, allow_course_kernels: bool = False):
        self.policy = policy
        self.device = device
        self.allow_course_kernels = allow_course_kernels
        self.band = BAND_ELEMENTS["cpu" if device == "cpu" else "cuda"]
        self.paused = False
        self.internal = False
        self.active = False
        self.ops: list[str] = []
        self.allocs: list[_Alloc] = []
        self.known: set[int] = set()  # storage addresses the grader or torch gave out
        self.carried: set[int] = set()  # storages adopted from an earlier call (workspaces; never an output)
        self.grader_tensors: list = []
        self.counters = Counters()
        self.violation: BaseException | None = None
        self._probe = None
        self._probe_seen = [False, False]
        self._python_inside = 0
        self._python_kernels: dict = {}  # operator -> where a Python kernel of it was registered ("" if none)
        self._entered = self._exited = False
        self._policy0 = policy  # the policy may not be replaced while the watch is on
        self._stack = None

    # ---- bookkeeping ------------------------------------------------------------------------------------

    def know(self, *tensors) -> None:
        """Register tensors the grader hands to the reader's function (inputs, a given output buffer)."""
        for t in tensors:
            self.known.add(_storage_ptr(t))
            self.grader_tensors.append(t)

    def adopt(self, alloc: _Alloc) -> None:
        """Register a banded buffer the grader made (a given output): its bands are checked afterwards."""
        self.allocs.append(alloc)
        self.known.add(alloc.storage)

    def shadows(self, where: str | None, allocs=None) -> None:
        """Memory the watch handed out (or adopted) changes only through what it watches: a kernel launch or
        a watched torch write. ``where`` given: every buffer must still hold what it held after the last of
        those (else something wrote it unseen: another thread, a switched-off watch, raw memory); ``None``:
        record what ``allocs`` (default all) hold now. Triton exercises only."""
        if not self.policy.kernels:
            return
        import torch

        saved, self.internal = self.internal, True
        try:
            for a in (self.allocs if allocs is None else allocs):
                itype = _nan_pattern(a.buffer.dtype)[0]
                now = a.buffer[a.start:a.stop].view(itype)
                if where is None:
                    a.shadow = now.clone()
                elif a.shadow is not None and not torch.equal(now, a.shadow):
                    first = int((now != a.shadow).nonzero()[0])
                    self.internal = saved
                    self._refuse(f"memory your function was given or allocated changed {where} without a kernel "
                                 f"launch or a watched torch operation writing it (element {first}): written "
                                 "by another thread, with the watch switched off, or through a raw address; "
                                 f"{self.policy.exercise} {self.policy.why}")
        finally:
            self.internal = saved

    def _refuse(self, message: str):
        exc = ForbiddenCall(message)
        if self.violation is None:
            self.violation = exc
        raise exc

    def _is_known(self, t) -> bool:
        ptr = _storage_ptr(t)
        if ptr in self.known:
            return True
        alloc = _EARLIER_CALLS["allocs"].get(ptr)
        if alloc is None or not self.policy.kernels:
            return False
        large = _EARLIER_CALLS["large"]
        if ptr in large:
            large[ptr] = large.pop(ptr)  # used again: let go of it last
        self._carry_over(alloc)
        return True

    def _carry_over(self, alloc: _Alloc) -> None:
        """A buffer torch made inside an earlier call of this grade (a workspace the reader's function keeps
        between calls): adopted, its bands checked after this call like the call's own buffers, and filled
        anew as a fresh allocation is (NaN), so that nothing computed in an earlier call, for other inputs,
        can be read back: a workspace must be written in each call before it is read."""
        saved, self.internal = self.internal, True
        try:
            itype, pattern = _nan_pattern(alloc.buffer.dtype)
            inside = alloc.buffer[alloc.start:alloc.stop]
            inside.view(itype).fill_(pattern)
            if alloc.buffer.dtype.is_floating_point:
                inside.fill_(float("nan"))
            alloc.written = None
        finally:
            self.internal = saved
        self.allocs.append(alloc)
        self.known.add(alloc.storage)
        self.carried.add(alloc.storage)
        self.shadows(None, [alloc])

    # ---- the modes --------------------------------------------------------------------------------------

    def _dispatch(self, func, args, kwargs):
        if self._stands_aside():
            return func(*args, **kwargs)
        if self._probe is not None and args and args[0] is self._probe:
            self._probe_seen[1] = True
            return func(*args, **kwargs)
        name = func.overloadpacket.__name__
        self.ops.append(name)
        p = self.policy
        self._check_identity(func, args, kwargs)
        if not self.allow_course_kernels:
            course = _course_code_running(_given_files(p.course_kernels))
            if course:
                self._refuse(f"your function ran the course's own kernel or function {course} (torch's "
                             f"aten.{name} called from the course's code): {p.exercise} asks you to write it "
                             "yourself; the course's implementations are there to read and to compare with, "
                             "not to call from the function graded")
        if name in p.refused or (p.allowed is not None and name not in p.allowed):
            kind = _op_kind(name)
            self._refuse(f"your function ran torch's operator aten.{name} ({kind}) outside a kernel: "
                         f"{p.exercise} {p.why}")
        tensors = _tensors_in(args, kwargs)
        if p.kernels:
            for t in tensors:
                if not self._is_known(t):
                    self._refuse(f"your function passed aten.{name} a tensor that neither the grader gave it "
                                 "nor torch made inside it (made from numpy or from a raw address?): "
                                 f"{p.exercise} {p.why}")
        self.shadows(f"before aten.{name}")
        if name in ALLOCATIONS:
            return self._allocate(func, args, kwargs)
        out = func(*args, **kwargs)
        for t in _tensors_in((out,), {}):
            ptr = _storage_ptr(t)
            if ptr in self.known:
                if name in COPIES:
                    self._mark_written(t)
                    self.shadows(None, [a for a in self.allocs if a.storage == ptr])
                continue
            if p.max_numel is not None and t.numel() > p.max_numel:
                self._refuse(f"aten.{name} made a tensor of shape {tuple(t.shape)} ({t.numel()} elements), "
                             f"more than the {p.max_numel} a block of this exercise holds: {p.exercise} "
                             f"{p.why}")
            self.known.add(ptr)
        return out

    def _allocate(self, func, args, kwargs):
        import torch

        self.internal = True
        try:
            template = func(*args, **kwargs)
            if not template.is_floating_point() and template.dtype not in (torch.int32, torch.int64):
                self.known.add(_storage_ptr(template))
                return template
            view, alloc = banded_empty(template.shape, template.stride(), template.dtype, template.device,
                                       self.band)
            name = func.overloadpacket.__name__
            if not name.startswith(("empty", "new_empty")):
                view.copy_(template)
                alloc.written = True
            if self.policy.max_numel is not None and template.numel() > self.policy.max_numel:
                self._refuse(f"aten.{name} allocated a tensor of shape {tuple(template.shape)} "
                             f"({template.numel()} elements), more than the {self.policy.max_numel} a block of "
                             f"this exercise holds: {self.policy.exercise} {self.policy.why}")
            self.allocs.append(alloc)
            self.known.add(alloc.storage)
            self.shadows(None, [alloc])
            _remember_for_later_calls(alloc)
            return view
        finally:
            self.internal = False

    def _stands_aside(self) -> bool:
        """True where the watch lets an operator or a torch function through unchecked: inside Triton's own
        launch code (``paused``) or the grader's own bookkeeping (``internal``). Both flags are checked
        against the call stack: the reader's Python that Triton calls back while the watch is paused (a grid
        function, a hook, a heuristic) is watched, and a flipped ``internal`` flag is refused, not obeyed; so
        is a watch switched off (``active``) or replaced (``_ACTIVE``) while its modes still run."""
        if not self.active or not _is_active(self) or self.policy is not self._policy0:
            self._refuse("the grader's watch was switched off or replaced from inside your function: "
                         f"{self.policy.exercise} is graded with it on")
        if not (self.paused or self.internal):
            return False
        if _stack_holds(_PAUSE_CODES if self.paused and not self.internal else _INTERNAL_CODES | _PAUSE_CODES):
            return True
        if self.paused and not self.internal:
            # the reader's Python that Triton calls back inside its launch (a grid function, a pre-run or
            # autotuner hook, a heuristic, launch_metadata): the reader's code, watched like the rest
            return False
        self.paused = self.internal = False
        self._refuse("your Python ran torch where the grader's watch stands aside (its own bookkeeping), or "
                     f"changed the watch's paused/internal flags: {self.policy.exercise} is graded with the "
                     "watch on")
        return False  # pragma: no cover - _refuse raises

    def watching(self) -> bool:
        """True where the torch operator that just ran was the reader's, watched (:meth:`_stands_aside` said
        no): its own code, or a callback of the reader's that Triton runs while the watch is paused (a grid
        function). Refuses nothing: the operator itself went through :meth:`_stands_aside`."""
        if not self.active:
            return False
        if not (self.paused or self.internal):
            return True
        return not _stack_holds(_PAUSE_CODES if self.paused and not self.internal else
                                _INTERNAL_CODES | _PAUSE_CODES)

    def _check_identity(self, func, args, kwargs) -> None:
        """Operators by identity: ATen's own (namespace ``aten``), with no kernel registered from Python
        outside torch (a ``torch.library`` implementation runs the reader's Python with the watch off), on
        plain tensors (a subclass's ``__torch_dispatch__`` would run outside the watch too)."""
        import torch

        qualified = _qualified_name(func)
        if func.namespace != "aten":
            self._refuse(f"your function ran the operator {qualified}, which is not one of torch's own (aten) "
                         "operators: a custom operator runs Python the grader cannot watch; "
                         f"{self.policy.exercise} {self.policy.why}")
        python = self._python_kernels.get(func)
        if python is None:
            python = self._python_kernels[func] = _python_registration(func)
        if python:
            self._refuse(f"your function ran {qualified}, which has a kernel registered from Python "
                         f"({python}): torch.library implementations run outside the grader's watch; "
                         f"{self.policy.exercise} {self.policy.why}")
        for t in _tensors_in(args, kwargs):
            if type(t) is not torch.Tensor and type(t) is not torch.nn.Parameter:
                self._refuse(f"your function passed {qualified} a tensor of the subclass "
                             f"{type(t).__qualname__}: a subclass's __torch_dispatch__/__torch_function__ runs "
                             f"Python outside the grader's watch; {self.policy.exercise} {self.policy.why}")

    def _function(self, func, args, kwargs, types=()):
        if self._stands_aside():
            return func(*args, **kwargs)
        if self._probe is not None and args and args[0] is self._probe:
            self._probe_seen[0] = True
            return func(*args, **kwargs)
        name = _function_name(func)
        import torch

        for t in types:
            if t is not torch.Tensor and t is not torch.nn.Parameter:
                self._refuse(f"your function used a tensor of the subclass {getattr(t, '__qualname__', t)} "
                             f"({name}): a subclass's __torch_function__/__torch_dispatch__ runs Python outside "
                             f"the grader's watch; {self.policy.exercise} {self.policy.why}")
        if name in PRINTING:
            self._refuse("your function printed a tensor while it was graded (printing takes the values out "
                         "of torch, as text): print outside the graded function, or print shapes and dtypes")
        if name == "data_ptr" and not _stack_holds(_PAUSE_CODES) and not _course_wrapper_calls():
            self._refuse("your function read a tensor's raw address (data_ptr, directly or through a wrapper "
                         "such as triton.reinterpret): memory reached through it is out of the grader's "
                         f"sight; {self.policy.exercise} {self.policy.why}")
        if name in LEAVES_TORCH:
            self._refuse(f"your function took data out of torch ({name!r}): the grader can only see what "
                         f"torch does; {self.policy.exercise} {self.policy.why}")
        if name in CALLBACKS:
            self._refuse(f"your function gave torch a Python callback ({name!r}): it would run where the "
                         f"grader cannot watch it; {self.policy.exercise} {self.policy.why}")
        if name in self.policy.refused_names:
            self._refuse(f"your function called {name!r}, which computes the answer for you: "
                         f"{self.policy.exercise} {self.policy.why}")
        if name in ("backward", "grad"):
            # the autograd engine runs hooks and Function.backward with the state of the modes at this call, and
            # this mode is popped while its handler runs: put it back on around the engine, so that every
            # Python callback of the backward is watched by both modes
            return self._with_functions_on(func, args, kwargs)
        return func(*args, **kwargs)

    def _with_functions_on(self, func, args, kwargs):
        import torch.autograd as autograd

        original = getattr(autograd, "_engine_run_backward", None)
        if original is None:  # pragma: no cover - another torch: the dispatch mode still watches
            return func(*args, **kwargs)
        mode = self._modes[0]

        def run_backward(*a, **k):
            mode.__enter__()
            try:
                return original(*a, **k)
            finally:
                mode.__exit__(None, None, None)

        autograd._engine_run_backward = run_backward
        try:
            return func(*args, **kwargs)
        finally:
            autograd._engine_run_backward = original

    def _mark_written(self, t) -> None:
        ptr = _storage_ptr(t)
        for a in self.allocs:
            if a.storage == ptr:
                a.written = True

    # ---- probes -----------------------------------------------------------------------------------------

    def check_alive(self, where: str) -> None:
        """Raise :class:`ForbiddenCall` unless both modes are on top of their stacks and see a probe."""
        from torch.overrides import _get_current_function_mode_stack
        from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

        dispatch_stack = _get_current_dispatch_mode_stack()
        function_stack = _get_current_function_mode_stack()
        functions_on = not self._python_inside
        ok = (dispatch_stack and dispatch_stack[-1] is self._modes[1]
              and (not functions_on or (function_stack and function_stack[-1] is self._modes[0])))
        self._probe_seen = [not functions_on, False]
        saved, self.paused = self.paused, False
        try:
            self._probe.view(-1)
        finally:
            self.paused = saved
        if not (ok and all(self._probe_seen)):
            self._refuse(f"the grader's watch was switched off inside your function ({where}): "
                         f"{self.policy.exercise} is graded with it on")

    # ---- entering and leaving ---------------------------------------------------------------------------

    def __enter__(self):
        import torch
        from torch.overrides import TorchFunctionMode
        from torch.utils._python_dispatch import TorchDispatchMode

        watch = self

        class _Functions(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return watch._function(func, args, kwargs or {}, types)

        class _Dispatch(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return watch._dispatch(func, args, kwargs or {})

        global _ACTIVE
        if self._entered:
            self._refuse("the grader's watch was entered a second time from inside your function: "
                         f"{self.policy.exercise} is graded with it on")
        _Audit.check_descriptors(self)  # before anything is switched on
        # the children's accounting, under the interpreter only: on an H100 the grading tests failed by the
        # hundred with it on in compiled calls, causes not captured (bench/NOTES.md, sixteenth session)
        self._children = _Audit.children() if self.device == "cpu" else None
        self._entered = True
        self._previous = _ACTIVE
        self.internal = True
        _ACTIVE = self
        self.active = True
        self._switches, self._modes = [], None
        try:
            self._probe = torch.zeros(1)
            self._modes = (_Functions(), _Dispatch())
            self._modes[0].__enter__()
            self._modes[1].__enter__()
            self._switches = _block_switches(self)
            self._switches = self._switches + _close_doors(self)
            self.shadows(None)
        except BaseException:
            # entering failed (no memory for the shadow copies of a huge case, say): `with` calls no __exit__,
            # so leave nothing switched on, or every later torch call in the process is refused
            self.active = False
            _ACTIVE = self._previous
            _restore(self._switches)
            if self._modes is not None:
                _unwind_modes(self._modes)
            raise
        finally:
            self.internal = False
        _AUDIT.arm(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        global _ACTIVE
        caller = sys._getframe(1)
        if not (caller.f_code.co_filename.startswith(_GRADER_DIR) and _genuine(caller)) or self._exited:
            # the reader's code left the watch itself: keep it on and fail the case
            self._refuse("your function left the grader's watch (called its __exit__): "
                         f"{self.policy.exercise} is graded with it on")
        self._exited = True
        _AUDIT.disarm(self)
        try:
            if exc_type is None and self.violation is None:
                _Audit.children_check(self, getattr(self, "_children", None))
                self.check_alive("after it returned")
                self.shadows("by the time your function returned")
                if _ACTIVE is not self or not self.active or self.paused or self.internal:
                    self._refuse("the grader's watch was switched off or replaced from inside your function: "
                                 f"{self.policy.exercise} is graded with it on")
        finally:
            self.internal = True
            self.active = False
            _ACTIVE = self._previous
            _restore(self._switches)
            # leave the modes even if the reader's code left others on top of them
            _unwind_modes(self._modes)
            self.internal = False
        return False


def _is_active(watch: Watch) -> bool:
    """``watch`` is the active watch, or one an active inner watch was entered inside."""
    w, seen = _ACTIVE, 0
    while w is not None and seen < 8:
        if w is watch:
            return True
        w, seen = getattr(w, "_previous", None), seen + 1
    return False


def _unwind_modes(modes) -> None:
    import torch

    fmode, dmode = modes
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    while _get_current_dispatch_mode_stack() and dmode in _get_current_dispatch_mode_stack():
        top = _get_current_dispatch_mode_stack()[-1]
        if top is dmode:
            dmode.__exit__(None, None, None)
            break
        torch._C._pop_torch_dispatch_mode()
    while _get_current_function_mode_stack() and fmode in _get_current_function_mode_stack():
        top = _get_current_function_mode_stack()[-1]
        if top is fmode:
            fmode.__exit__(None, None, None)
            break
        torch._C._pop_torch_function_stack()


def _raw_storage_ptr(t) -> int:
    """The address of ``t``'s storage, through torch's methods of the classes: ``t.untyped_storage()`` would
    call an instance attribute ``untyped_storage`` the reader set on the tensor (or ``data_ptr`` on its storage
    object, which torch keeps), here with the watch standing aside (round 22's door, on this side of the call)."""
    import torch

    return torch._C.StorageBase.data_ptr(torch._C.TensorBase.untyped_storage(t))


def _storage_ptr(t) -> int:
    w = _ACTIVE
    if w is None:
        return _raw_storage_ptr(t)
    saved, w.internal = w.internal, True
    try:
        return _raw_storage_ptr(t)
    finally:
        w.internal = saved


def _tensors_in(args, kwargs) -> list:
    import torch

    # a loop, not a recursive closure: a closure that calls itself is a reference cycle, which would keep
    # every operator's tensors alive until the garbage collector runs (the memory L5.tiled measures)
    out, todo = [], [kwargs, args]
    while todo:
        x = todo.pop()
        if isinstance(x, torch.Tensor):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            todo.extend(reversed(x))
        elif isinstance(x, dict):
            todo.extend(reversed(list(x.values())))
    return out


def _qualified_name(func) -> str:
    """``aten::add.Tensor``: an operator's namespace, name and overload."""
    try:
        return func.name() + (".default" if func._overloadname == "default" else "")
    except AttributeError:  # pragma: no cover
        return str(func)


def _python_registration(func) -> str:
    """Where a kernel of ``func`` was registered from a Python file outside torch (``torch.library``), or "".
    Kernels compiled into torch say ``registered at <file>.cpp:<line>``."""
    import torch

    try:
        dump = torch._C._dispatch_dump(func.name())
    except (RuntimeError, AttributeError):  # pragma: no cover
        return ""
    torch_dir = _trusted_dirs()[0]
    for line in dump.splitlines():
        if "registered at " not in line:
            continue
        where = line.split("registered at ", 1)[1].split(" :: ", 1)[0].strip()
        source = where.rsplit(":", 1)[0]
        if source.endswith((".cpp", ".cc", ".cu", ".h", ".hpp")) or source.startswith(torch_dir):
            continue
        return where
    return ""


def _function_name(func) -> str:
    """The name a torch function mode sees, with a property's getter named by the property."""
    name = getattr(func, "__name__", "")
    if name in ("__get__", "__set__"):
        owner = getattr(func, "__self__", None)
        fget = getattr(owner, "fget", None)
        name = getattr(fget, "__name__", name)
    return name


def _code_objects(*functions) -> frozenset:
    """The code objects of ``functions`` and of every function nested in them."""
    found = set()

    def walk(code):
        found.add(code)
        for const in code.co_consts:
            if hasattr(const, "co_code"):
                walk(const)

    for f in functions:
        walk(f.__code__)
    return frozenset(found)


def _stack_holds(codes, depth: int = 64) -> bool:
    """True when, walking up from the caller past torch's, Triton's, the standard library's and the grader's
    own frames, the first frame that is not one of those runs one of ``codes`` (a frame of the reader's code
    found first means False)."""
    frame = sys._getframe(1)
    grader = _GRADER_DIR
    for _ in range(depth):
        if frame is None:
            return False
        code = frame.f_code
        if code in codes:
            return True
        filename = code.co_filename
        if not ((filename.startswith(grader) or _is_trusted_file(filename)) and _genuine(frame)) and \
                not _triton_binder(frame):
            return False
        frame = frame.f_back
    return False


def _given_files(names) -> frozenset:
    """The files of the course's modules whose kernels an exercise hands the reader (``Policy.course_kernels``):
    their Python wrappers may run inside the reader's function (L6.autograd calls the L5 forward)."""
    files = set()
    for full in names:
        module = sys.modules.get(full.rpartition(".")[0])
        path = getattr(module, "__file__", None)
        if path:
            files.add(os.path.abspath(path))
    return frozenset(files)


_COURSE_FILES: dict = {}


def _course_file(filename: str) -> str:
    """The module name of a file of the course's package outside the grader (``gpuperf.kernels.flash_attention``),
    or "" for any other file."""
    found = _COURSE_FILES.get(filename)
    if found is None:
        path = os.path.abspath(filename)
        found = ""
        if path.startswith(_PACKAGE_DIR + os.sep) and not path.startswith(_GRADER_DIR) and path.endswith(".py"):
            found = "gpuperf." + os.path.relpath(path, _PACKAGE_DIR)[:-3].replace(os.sep, ".")
            found = found[:-len(".__init__")] if found.endswith(".__init__") else found
        _COURSE_FILES[filename] = found
    return found


def _course_code_running(given: frozenset = frozenset(), depth: int = 96) -> str:
    """Whether the torch operator that reached the watch was called, directly or through other code, by a
    function of the course's package outside the grader (``gpuperf.kernels.flash_attention.
    attention_tiled_torch``, the course's kernels' wrappers): its name, else "". Walks up from the operator
    past the watch's own and torch's frames, then through the reader's code (and whatever it called) up to the
    grader's frame that called the reader's function. A frame counts as the course's by its file name, genuine
    or not (code compiled under a course file's name claims to be the course's); files in ``given`` (the
    modules of the kernels an exercise hands the reader) are not counted."""
    frame = sys._getframe(2)
    inside = False
    for _ in range(depth):
        if frame is None:
            return ""
        filename = frame.f_code.co_filename
        grader = filename.startswith(_GRADER_DIR) and _genuine(frame)
        if grader or (_is_trusted_file(filename) and _genuine(frame)):
            if grader and inside:
                return ""  # the grader's frame that called the reader's function (or a launch hook of its own)
            frame = frame.f_back
            continue
        inside = True
        module = _course_file(filename)
        if module and os.path.abspath(filename) not in given:
            return f"{module}.{getattr(frame.f_code, 'co_qualname', frame.f_code.co_name)}"
        frame = frame.f_back
    return ""


def _course_wrapper_calls() -> bool:
    """The first frame up the stack that is not torch's, Triton's, the standard library's or the grader's is
    a wrapper of the course's kernels (they check ``data_ptr`` alignment; their launches are refused)."""
    frame = sys._getframe(2)
    for _ in range(64):
        if frame is None:
            return False
        filename = frame.f_code.co_filename
        if not _genuine(frame):
            return False
        if not (filename.startswith(_GRADER_DIR) or _is_trusted_file(filename)):
            return os.path.abspath(filename).startswith(_COURSE_KERNELS_DIR)
        frame = frame.f_back
    return False


_GENUINE: dict = {}


def _genuine(frame) -> bool:
    """The frame runs code of a module imported from its file: ``co_filename`` is that module's ``__file__``,
    which exists, and the frame's globals are that module's. Code compiled with a file name it does not
    come from (``compile(src, torch_dir + "/x.py", "exec")``) is not torch's, whatever it claims."""
    code = frame.f_code
    ok = _GENUINE.get(code)
    if ok is None:
        name = frame.f_globals.get("__name__")
        module = sys.modules.get(name) if isinstance(name, str) else None
        path = getattr(module, "__file__", None)
        ok = bool(module is not None and getattr(module, "__dict__", None) is frame.f_globals and path and
                  os.path.realpath(path) == os.path.realpath(code.co_filename) and os.path.exists(path))
        _GENUINE[code] = ok
    return ok


def _triton_binder(frame) -> bool:
    """The frame runs an argument binder that Triton's JIT generated (``create_function_from_signature``
    ``exec``'s one per kernel: no file of its own) and the grader recorded when Triton made it
    (:func:`_recording_binders`): recognised by its code object and its globals dict, which must hold what
    they held then. A function compiled elsewhere under the same name, file name and globals is not one."""
    return _binder_intact(frame.f_code, frame.f_globals)


def _binder_intact(code, glb) -> bool:
    entry = _BINDERS.get(code)
    if entry is None:
        return False
    namespace, items = entry
    return glb is namespace and len(glb) == len(items) and all(glb.get(k, _BINDERS) is v for k, v in items)


#: Argument binders Triton made while a grade ran (or the grader made for a launch from Triton's own
#: function): code object -> (its globals dict, that dict's items when it was made).
_BINDERS: dict = {}
#: Triton's ``create_function_from_signature``, as found when the launch hooks were first installed.
_BINDER_MAKER: dict = {}


def _clean_binder_inputs(sig, kparams, backend) -> bool:
    """What Triton writes into a binder's source (the parameters' names and annotation types) holds no code,
    and the backend is Triton's own: a binder made from these is Triton's template, nothing else."""
    import keyword
    import re

    try:
        names = list(sig.parameters.keys())
        if not all(isinstance(n, str) and n.isidentifier() and not keyword.iskeyword(n) for n in names):
            return False
        for kp in kparams:
            kind = getattr(kp, "annotation_type", "")
            if kind and not (isinstance(kind, str) and re.fullmatch(r"\*?k?[A-Za-z0-9_]+", kind)):
                return False
    except Exception:  # pragma: no cover - another Triton's parameter objects
        return False
    if backend is None:
        return True
    code_file = getattr(sys.modules.get(type(backend).__module__), "__file__", "") or ""
    return _is_trusted_file(os.path.abspath(code_file))


def _record_binder(binder) -> None:
    code, namespace = getattr(binder, "__code__", None), getattr(binder, "__globals__", None)
    if code is not None and isinstance(namespace, dict):
        _BINDERS[code] = (namespace, tuple(namespace.items()))


def _recording_binders(make):
    """Triton's binder maker, wrapped: every binder it makes from clean inputs is recorded (what
    :func:`_triton_binder` recognises)."""
    def create_function_from_signature(sig, kparams, backend, *args, **kwargs):
        binder = make(sig, kparams, backend, *args, **kwargs)
        if _clean_binder_inputs(sig, kparams, backend):
            _record_binder(binder)
        return binder

    return create_function_from_signature


def _own_binders(jit_function) -> None:
    """Before a compiled launch: every binder cached on the JIT function must be one the grader recorded; one
    made before the grade (or put there by other code) is replaced by a binder made anew by Triton's own
    maker (the cache's layout: a tuple per device, ending with the backend and the binder)."""
    make = _BINDER_MAKER.get("make")
    caches = getattr(jit_function, "device_caches", None)
    if make is None or not isinstance(caches, dict):
        return
    for device, entry in list(caches.items()):
        if not (isinstance(entry, tuple) and len(entry) >= 2 and callable(entry[-1])):
            continue
        binder = entry[-1]
        if _binder_intact(getattr(binder, "__code__", None), getattr(binder, "__globals__", None)):
            continue
        try:
            fresh = _recording_binders(make)(jit_function.signature, jit_function.params, entry[-2])
        except Exception:  # pragma: no cover - another Triton's layout: its binder stays unrecognised
            continue
        caches[device] = entry[:-1] + (fresh,)


def _op_kind(name: str) -> str:
    if name in SOFTMAX_LIKE_OPS:
        return "a softmax or attention operator"
    if name in ("as_strided", "set_", "resize_", "_local_scalar_dense"):
        return "it reaches memory or values behind the grader's back"
    return "arithmetic or a reduction: it computes values"


def _from_outside(depth: int = 1, course_trusted: bool = False) -> bool:
    """True when the frame ``depth`` levels above the caller is not torch's or Triton's own code (nor, with
    ``course_trusted``, the course's kernels' wrappers, whose launches are refused anyway)."""
    frame = sys._getframe(depth + 1)
    filename = os.path.abspath(frame.f_code.co_filename)
    if course_trusted and filename.startswith(_COURSE_KERNELS_DIR) and _genuine(frame):
        return False
    return not (_is_trusted_file(filename) and _genuine(frame))


_TRUSTED: list[str] = []


def _is_trusted_file(filename: str) -> bool:
    """torch's, Triton's or the standard library's own file (not a third-party package installed beside
    the standard library, as conda does)."""
    dirs = _trusted_dirs()
    if filename.startswith(dirs[2]):
        return "site-packages" not in filename and "dist-packages" not in filename
    return filename.startswith((dirs[0], dirs[1]))


def _trusted_dirs() -> list[str]:
    if not _TRUSTED:
        import torch

        dirs = [os.path.dirname(os.path.abspath(torch.__file__)) + os.sep]
        try:
            import triton

            dirs.append(os.path.dirname(os.path.abspath(triton.__file__)) + os.sep)
        except ImportError:  # pragma: no cover
            dirs.append(dirs[0])
        dirs.append(os.path.dirname(os.path.abspath(contextlib.__file__)) + os.sep)  # the standard library
        dirs.append("")  # marks the list as complete
        _TRUSTED.extend(dirs)
    return _TRUSTED


def _block_switches(watch: Watch) -> list:
    """Replace the Python-level switches that turn torch modes off with ones that refuse the reader's code."""
    import torch
    import torch.overrides
    import torch.utils._python_dispatch as pd

    import _thread
    import threading

    targets = [(threading.Thread, "start"), (_thread, "start_new_thread"), (_thread, "start_joinable_thread"),
               (torch._C, "DisableTorchFunction"), (torch._C, "DisableTorchFunctionSubclass"),
               (torch._C, "_DisableTorchDispatch"), (torch._C, "_pop_torch_dispatch_mode"),
               (torch._C, "_pop_torch_function_stack"), (torch._C, "_push_on_torch_dispatch_stack"),
               (torch._C, "_push_on_torch_function_stack"), (torch._C, "_set_dispatch_mode"),
               (torch._C, "_unset_dispatch_mode"), (torch._C, "_ExcludeDispatchKeyGuard"),
               (torch._C, "_DisablePythonDispatcher"), (torch._C, "_DisableFuncTorch"),
               (torch._C, "_dispatch_tls_set_dispatch_key_excluded"),
               (torch._C, "_dispatch_tls_set_dispatch_key_included"), (torch._C, "_EnablePythonDispatcher"),
               (torch._C, "_IncludeDispatchKeyGuard"), (torch._C, "_set_torch_function_mode"),
               (pd, "_disable_current_modes"), (pd, "_pop_mode_temporarily"), (pd, "_pop_mode"),
               (pd, "_push_mode"), (torch.overrides, "_pop_mode_temporarily"), (torch.overrides, "_pop_mode"),
               (torch.overrides, "_push_mode")]
    saved = []
    for owner, name in targets:
        if not hasattr(owner, name):
            continue
        original = getattr(owner, name)

        def guard(*args, _original=original, _name=name, **kwargs):
            if watch.active and not watch.internal and _from_outside(1) and \
                    not (watch.paused and _stack_holds(_PAUSE_CODES)):  # a callback of the reader's: refused
                if "thread" in _name.lower() or _name == "start":
                    watch._refuse("your function started a thread: torch's modes are per thread, so work done "
                                  f"there is out of the grader's sight; {watch.policy.exercise} is graded in "
                                  "one thread")
                watch._refuse(f"your function called {_name}, which switches the grader's watch off: "
                              f"{watch.policy.exercise} is graded with it on")
            return _original(*args, **kwargs)

        saved.append((owner, name, original))
        setattr(owner, name, guard)
    return saved


def _restore(saved) -> None:
    for owner, name, original in reversed(saved):
        setattr(owner, name, original)


# --------------------------------------------------------------------------------------------------------
# Triton: launches, and the interpreter's loads, stores and dots.
# --------------------------------------------------------------------------------------------------------


def _course_kernel_name(fn) -> str:
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    filename = os.path.abspath(code.co_filename)
    if filename.startswith(_COURSE_KERNELS_DIR):
        module = os.path.relpath(filename, _PACKAGE_DIR)[:-3].replace(os.sep, ".")
        return f"gpuperf.{module}.{code.co_name}"
    return _course_kernel_copied(fn, code)


def _course_kernel_copied(fn, code) -> str:
    """A course kernel under another file name: a function whose globals are a course module's, or whose
    code shares its names and constants with a course kernel's (``code.replace(co_filename=...)`` keeps
    them; code compiled anew from the same text, as a learner who copies the printed solution does, does
    not)."""
    glb = getattr(fn, "__globals__", None)
    name = glb.get("__name__") if isinstance(glb, dict) else None
    module = sys.modules.get(name) if isinstance(name, str) else None
    if module is not None and name.startswith("gpuperf.kernels") and getattr(module, "__dict__", None) is glb:
        return f"{name}.{code.co_name}"
    for mname, m in list(sys.modules.items()):
        if m is None or not mname.startswith("gpuperf.kernels"):
            continue
        for value in list(vars(m).values()):
            other = getattr(getattr(value, "fn", value), "__code__", None)
            if other is None or other is code or not isinstance(other, type(code)):
                continue
            if (code.co_names and code.co_names is other.co_names) or \
                    (len(code.co_consts) > 1 and code.co_consts is other.co_consts):
                return f"{mname}.{other.co_name}"
    return ""


def _library_kernel_file(fn) -> str:
    """The file of a launched kernel's Python function when it is a library's (torch, Triton, an installed
    package, the course's package), else "": only kernels of the reader's own code count."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return "<no Python source>"
    filename = os.path.abspath(code.co_filename)
    if filename.startswith(_PACKAGE_DIR) or _is_trusted_file(filename) or _installed_path(filename):
        return filename
    return ""


#: id of a kernel rewritten by :func:`_wide_loops`: (the rewrite, the kernel's own Python function)
_REWRITES: dict = {}


def _given_kernel(fn, names) -> bool:
    """Whether ``fn`` is one of the course's kernels named in ``names`` (an exercise hands them to the reader),
    known by identity: the very function of that name in its module, made from that module's globals. A name
    and a file name can be given to any code (``code.replace(co_name=..., co_filename=...)``)."""
    for full in names:
        module_name, _, attr = full.rpartition(".")
        module = sys.modules.get(module_name)
        kernel = getattr(module, attr, None)
        given = getattr(kernel, "fn", None)
        if given is None or getattr(fn, "__globals__", None) is not vars(module):
            continue
        # Triton's interpreter runs a copy of the function it rewrote, kept in a table keyed by the original;
        # under a watch the copy is the grader's (_wide_loops)
        rewritten = getattr(kernel, "rewritten_fn", None)
        ours = _REWRITES.get(id(fn), (None, None))
        if fn is given or (isinstance(rewritten, dict) and fn is rewritten.get(given)) or \
                (ours[0] is fn and ours[1] is given):
            return True
    return False


def _check_kernel(watch: Watch, fn) -> None:
    """Refuse a launch of one of the course's kernels, or of a kernel that calls one of the course's
    ``@triton.jit`` functions (found through the names its code uses)."""
    if _given_kernel(fn, watch.policy.course_kernels):
        return  # a kernel the exercise gives the reader
    if not watch.allow_course_kernels:
        name = _course_kernel_name(fn)
        if name:
            watch._refuse(f"your function launched the course's own kernel {name}: {watch.policy.exercise} "
                          "asks you to write the kernel yourself")
    library = _library_kernel_file(fn)
    if library and not (watch.allow_course_kernels and library.startswith(_PACKAGE_DIR)):
        watch._refuse(f"your function launched a kernel defined in a library's file ({library}), not in your "
                      f"own code: {watch.policy.exercise} counts only launches of your own @triton.jit "
                      "functions")
    if watch.allow_course_kernels:
        return
    helper = _course_helper_used(fn)
    if helper:
        watch._refuse(f"your kernel calls the course's own {helper}: {watch.policy.exercise} asks you to "
                      "write the kernel yourself")


def _course_helper_used(fn, depth: int = 3) -> str:
    """The name of a course ``@triton.jit`` function that ``fn``'s code refers to (directly, through a
    module attribute, or through the learner's own helpers, ``depth`` levels down), or ""."""
    import types

    code = getattr(fn, "__code__", None)
    glb = getattr(fn, "__globals__", {})
    if code is None or depth == 0:
        return ""
    for name in code.co_names:
        value = glb.get(name)
        candidates = [value]
        if isinstance(value, types.ModuleType):
            candidates = [getattr(value, n, None) for n in code.co_names]
        for cand in candidates:
            inner = getattr(cand, "fn", None)
            if inner is None or not callable(inner):
                continue
            found = _course_kernel_name(inner)
            if found:
                return found
            if inner is not fn:
                deeper = _course_helper_used(inner, depth - 1)
                if deeper:
                    return deeper
    return ""


class _Spans:
    """The memory of one interpreted launch's tensors: sorted, merged intervals of byte addresses."""

    def __init__(self, named_tensors):
        import numpy as np

        spans = []
        self.named = []
        for name, t in named_tensors:
            if t.numel() == 0:
                continue
            es = t.element_size()
            last = sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
            start = t.data_ptr()
            spans.append((start, start + (last + 1) * es))
            self.named.append((name, start, start + (last + 1) * es, es, t.numel()))
        spans.sort()
        merged = []
        for s, e in spans:
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        self.starts = np.array([m[0] for m in merged], dtype=np.uint64)
        self.ends = np.array([m[1] for m in merged], dtype=np.uint64)

    def outside(self, addresses, element_size: int):
        """Boolean mask of the addresses whose element does not lie inside one tensor."""
        import numpy as np

        if self.starts.size == 0:
            return np.ones(addresses.shape, dtype=bool)
        idx = np.searchsorted(self.starts, addresses, side="right").astype(np.int64) - 1
        ok = idx >= 0
        safe = np.where(ok, idx, 0)
        ok &= addresses + np.uint64(element_size) <= self.ends[safe]
        return ~ok

    def describe(self, address: int) -> str:
        best = None
        for name, start, end, es, n in self.named:
            dist = start - address if address < start else address - end + es if address >= end else 0
            if best is None or dist < best[0]:
                best = (dist, name, start, end, es, n)
        if best is None:
            return "the launch has no tensor arguments"
        _, name, start, end, es, n = best
        if address < start:
            return f"{(start - address) // es} element(s) before the start of {name} ({n} elements)"
        return f"element {(address - start) // es} of {name}, which has {n} elements"


def _interpreter_hooks(watch_getter) -> list:
    """Patch the interpreter: pause the watch for Triton's own copies, check every load and store against
    the launch's tensors, count dots and loaded elements."""
    try:
        import numpy as np
        from triton.runtime import interpreter as interp
    except ImportError:  # pragma: no cover
        return []
    saved = []

    def patch(owner, name, new):
        if not hasattr(owner, name):  # another Triton's interpreter: leave that hook out
            return
        saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, new)

    def original(owner, name):
        return getattr(owner, name, None)

    builder = interp.InterpreterBuilder
    run0 = original(interp.InterpretedFunction, "run")
    call0 = original(interp.GridExecutor, "__call__")
    init_args0 = original(interp.GridExecutor, "_init_args_hst")
    restore0 = original(interp.GridExecutor, "_restore_args_dev")
    grid_idx0 = original(builder, "set_grid_idx")
    grid_dim0 = original(builder, "set_grid_dim")
    load0 = original(builder, "create_masked_load")
    store0 = original(builder, "create_masked_store")
    rmw0 = original(builder, "create_atomic_rmw")
    cas0 = original(builder, "create_atomic_cas")
    dot0 = original(builder, "create_dot")
    addptr0 = original(builder, "create_addptr")
    splat0 = original(builder, "create_splat")
    broadcast0 = original(builder, "create_broadcast")
    expand0 = original(builder, "create_expand_dims")
    materialize0 = original(getattr(interp, "TensorDescHandle", None), "materialize_pointers")
    rewrite0 = original(interp.InterpretedFunction, "rewrite")
    loops: dict = {}  # id of a kernel's Python function: (the function, its rewrite by _wide_loops)
    state = {"spans": None}

    def run(self, *args, **kwargs):
        w = watch_getter()
        if w is None:
            return run0(self, *args, **kwargs)
        if w.policy.kernels and not kwargs.get("warmup"):
            grid = _launch_grid(w, self.fn, args, kwargs)
            state["masks"] = _check_compiles(w, self.fn, args, {k: v for k, v in kwargs.items()
                                                                if k not in ("grid", "warmup")}, grid=grid)
            if grid is not None and callable(kwargs.get("grid")):
                # round 23 (60-62, 65): Triton would call the reader's grid function again inside the launch,
                # after the memory check before it; the sizes the grader read are what the launch runs
                kwargs = dict(kwargs, grid=grid)
        saved_pause, w.paused = w.paused, True
        try:
            return run0(self, *args, **kwargs)
        finally:
            w.paused = saved_pause

    def call(self, *args, **kwargs):
        w = watch_getter()
        if w is None:
            return call0(self, *args, **kwargs)
        saved_pause, w.paused = w.paused, True
        previous = state["spans"]
        try:
            _check_kernel(w, self.fn)
            w.check_alive("at a kernel launch")
            w.paused = True
            w.counters.launches += 1
            w.counters.kernels.append(getattr(self.fn, "__name__", "?"))
            w.shadows("before a kernel launch")
            # tl.static_print is Python's print under the interpreter (a block's values, where a GPU prints
            # only its type while compiling): what a kernel prints goes where the reader cannot read it
            with contextlib.redirect_stdout(io.StringIO()):
                result = call0(self, *args, **kwargs)
            w.shadows(None)
            return result
        finally:
            state["spans"] = previous
            w.paused = saved_pause

    def init_args(self, args_dev, kwargs):
        args_hst, kwargs_hst = init_args0(self, args_dev, kwargs)
        w = watch_getter()
        if w is not None:
            pairs = [(self.arg_names[i] if i < len(self.arg_names) else f"argument {i}", dev, hst)
                     for i, (dev, hst) in enumerate(zip(args_dev, args_hst))]
            pairs += [(k, kwargs[k], kwargs_hst[k]) for k in kwargs_hst]
            named = []
            for name, dev, hst in pairs:
                if not hasattr(hst, "data_ptr"):
                    continue
                dev, hst = getattr(dev, "base", dev), getattr(hst, "base", hst)
                if w.policy.kernels and not w._is_known(dev):
                    w._refuse(f"your kernel was given {name}, a tensor that neither the grader gave your "
                              "function nor torch made inside it (made from numpy or a raw address, or kept "
                              "from an earlier grade: allocate scratch buffers inside your function)")
                named.append((name, hst))
            state["spans"] = _Spans(named)
        return args_hst, kwargs_hst

    def restore(self, *args, **kwargs):
        w = watch_getter()
        if w is not None:
            w.paused = True
        return restore0(self, *args, **kwargs)

    def set_grid_idx(self, *args):
        w = watch_getter()
        if w is not None:
            w.paused = False  # the kernel body: the reader's Python, watched
        return grid_idx0(self, *args)

    def set_grid_dim(self, *args):
        w = watch_getter()
        if w is not None:
            kernel = w.counters.kernels[-1] if w.counters.kernels else "?"
            w.counters.grids.append((kernel, tuple(int(n) for n in args[:3])))
            checked, state["masks"] = state.get("masks"), None
            _recheck_masks(w, checked, tuple(int(n) for n in args[:3]))
        return grid_dim0(self, *args)

    def check(kind, ptrs, mask, element_size):
        spans = state["spans"]
        if spans is None:
            return
        addresses = np.asarray(ptrs.data).astype(np.uint64)
        active = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape) if mask is not None \
            else np.ones(addresses.shape, dtype=bool)
        bad = spans.outside(addresses, element_size) & active
        if bad.any():
            lanes = np.argwhere(bad)
            first = tuple(int(i) for i in lanes[0])
            address = int(addresses[first])
            where = spans.describe(address)
            raise OutOfBounds(
                f"your kernel {kind} memory outside the tensors it was given: {int(bad.sum())} active "
                f"lane(s) of a block of shape {list(addresses.shape)}, the first at block index {list(first)}, "
                f"address {address:#x}: {where}. On a GPU this reads or overwrites memory that is not "
                "yours; mask the lanes past the end")
        return addresses, active

    def element_size(ptrs):
        ty = ptrs.get_element_ty()
        return max(1, ty.primitive_bitwidth // 8)

    def load(self, ptrs, mask, other, *rest, **kw):  # (a tensor descriptor's load passes keywords)
        w = watch_getter()
        if w is not None:
            res = check("loaded from", ptrs, mask, element_size(ptrs))
            if res is not None:
                addresses, active = res
                w.counters.loaded_elements += int(active.sum())
                w.counters.widest_load = max(w.counters.widest_load, int(active.size))
                if other is None and mask is not None and not active.all():
                    poison = _poison(ptrs, addresses.shape)
                    if poison is not None:  # the masked-out lanes: undefined on a GPU, NaN here
                        other = poison
                        _note_poisoned(w, state["spans"], addresses, active)
        return load0(self, ptrs, mask, other, *rest, **kw)

    def wide(handle) -> bool:
        return bool(getattr(handle, "_gpuperf_wide", False))

    def addptr(self, ptr, offset):
        res = addptr0(self, ptr, offset)
        if watch_getter() is not None and (wide(ptr) or np.asarray(offset.data).dtype.itemsize >= 8):
            res._gpuperf_wide = True
        return res

    def carry(original):
        def op(self, arg, *args):
            res = original(self, arg, *args)
            if watch_getter() is not None and wide(arg):
                res._gpuperf_wide = True
            return res

        return op

    def rewrite(self):
        # under a watch, the kernel's loops over 64-bit bounds hand their body a 64-bit loop variable, as
        # the compiled kernel's do (see _wide_loops)
        if watch_getter() is None:
            return rewrite0(self)
        return _wide_loops(self, rewrite0, loops)

    def descriptor_pointers(self, offsets):
        # A tensor descriptor's block: the GPU computes its addresses in 64 bits from the base and the
        # block's coordinates (32-bit, one per dimension). One dimension over the whole tensor indexes at
        # most 2^31 elements: the addresses are wide when the base was advanced by a 64-bit offset; with two
        # or more dimensions each coordinate stays far below 2^31.
        res = materialize0(self, offsets)
        if watch_getter() is not None:
            res[0]._gpuperf_descriptor = True
            if wide(self.base) or len(offsets) >= 2:
                res[0]._gpuperf_wide = True
        return res

    def splat(self, ret_ty, arg):
        res = splat0(self, ret_ty, arg)
        if watch_getter() is not None and wide(arg):
            res._gpuperf_wide = True
        return res

    def store(self, ptrs, value, mask, *rest, **kw):
        w = watch_getter()
        if w is not None:
            if not wide(ptrs):
                w.counters.narrow_offsets += 1
                w.counters.narrow_descriptors += bool(getattr(ptrs, "_gpuperf_descriptor", False))
            es = element_size(ptrs)
            res = check("stored to", ptrs, mask, es)
            w.counters.stores += 1
            shape = np.shape(ptrs.data)
            if len(shape) >= 2 and sum(1 for s in shape if s > 1) >= 2:
                w.counters.stores_2d += 1
            if res is not None:
                addresses, active = res
                _mark_stores(w, addresses[active], es)
        return store0(self, ptrs, value, mask, *rest, **kw)

    def atomic_rmw(self, rmwOp, ptr, val, mask, *rest):
        w = watch_getter()
        if w is not None:
            res = check("updated (atomically)", ptr, mask, element_size(ptr))
            if res is not None:
                addresses, active = res
                if "XCHG" not in str(rmwOp).upper() and _unset(w, addresses[active], element_size(ptr)):
                    _note_load(w, w.counters.unset_atomics, state["spans"], addresses, active)
                _mark_stores(w, addresses[active], element_size(ptr))
        return rmw0(self, rmwOp, ptr, val, mask, *rest)

    def atomic_cas(self, ptr, cmp, val, *rest):
        w = watch_getter()
        if w is not None:
            check("updated (atomically)", ptr, None, element_size(ptr))
        return cas0(self, ptr, cmp, val, *rest)

    def dot(self, *args, **kwargs):
        w = watch_getter()
        if w is not None:
            w.counters.dots += 1
            try:
                a, b = (np.shape(t.data) for t in args[:2])
                shape = (int(a[-2]), int(a[-1]), int(b[-1]))
                w.counters.dot_shapes[shape] = w.counters.dot_shapes.get(shape, 0) + 1
            except (AttributeError, IndexError, TypeError):  # pragma: no cover - another layout
                pass
        return dot0(self, *args, **kwargs)

    patch(interp.InterpretedFunction, "run", run)
    patch(interp.GridExecutor, "__call__", call)
    patch(interp.GridExecutor, "_init_args_hst", init_args)
    patch(interp.GridExecutor, "_restore_args_dev", restore)
    patch(interp.InterpreterBuilder, "set_grid_idx", set_grid_idx)
    patch(interp.InterpreterBuilder, "set_grid_dim", set_grid_dim)
    patch(interp.InterpreterBuilder, "create_masked_load", load)
    patch(interp.InterpreterBuilder, "create_masked_store", store)
    patch(interp.InterpreterBuilder, "create_atomic_rmw", atomic_rmw)
    patch(interp.InterpreterBuilder, "create_atomic_cas", atomic_cas)
    patch(interp.InterpreterBuilder, "create_dot", dot)
    patch(interp.InterpreterBuilder, "create_addptr", addptr)
    patch(interp.InterpreterBuilder, "create_splat", splat)
    if materialize0 is not None:
        patch(interp.TensorDescHandle, "materialize_pointers", descriptor_pointers)
    if rewrite0 is not None and hasattr(interp, "FunctionRewriter") and hasattr(interp, "ASTTransformer"):
        patch(interp.InterpretedFunction, "rewrite", rewrite)
    patch(interp.InterpreterBuilder, "create_broadcast", carry(broadcast0))
    patch(interp.InterpreterBuilder, "create_expand_dims", carry(expand0))
    return saved


def _wide_loops(interpreted, rewrite0, cache: dict):
    """The interpreter's rewrite of a kernel whose ``for`` loops over ``range`` (or ``tl.range``) go through
    :func:`_loop_range`. Compiled, a loop's variable has the type of its bounds (promoted: a 64-bit bound makes
    it 64-bit); the interpreter hands the body a Python int, so a grid-stride loop over 64-bit bounds looked
    like 32-bit offsets (round 8's ah06). ``cache`` (one per installation of the hooks, never the
    interpreter's own, which a kernel run before the grade fills) keeps each rewrite. Falls back to the
    interpreter's rewrite where this cannot run. The rewritten kernel finds ``_gpuperf_loop_range`` among its
    module's globals (where the interpreter puts its own names too)."""
    import ast

    fn = interpreted.fn
    cached = cache.get(id(fn))
    if cached is not None and cached[0] is fn:
        return cached[1]
    from triton.runtime import interpreter as interp

    class Loops(interp.ASTTransformer):
        def visit_For(self, node):
            node = self.generic_visit(node)
            it = node.iter
            if isinstance(it, ast.Call) and (isinstance(it.func, ast.Name) and it.func.id == "range"
                                             or isinstance(it.func, ast.Attribute) and it.func.attr == "range"):
                node.iter = ast.copy_location(ast.Call(func=ast.Name(id="_gpuperf_loop_range", ctx=ast.Load()),
                                                       args=[it.func, *it.args], keywords=it.keywords), it)
            return node

    class Rewriter(interp.FunctionRewriter):
        ast_transformer = Loops()

        def _compile_and_exec(self, transformed_ast):
            self.fn.__globals__.setdefault("_gpuperf_loop_range", _loop_range)
            return super()._compile_and_exec(transformed_ast)

    try:
        rewritten = Rewriter(fn, **interpreted.kwargs).rewrite_ast()
        cache[id(fn)] = (fn, rewritten)
        _REWRITES[id(rewritten)] = (rewritten, fn)  # the launch sees the rewrite: _given_kernel maps it back
    except Exception:  # pragma: no cover - another Triton's rewriter: the interpreter's own
        return rewrite0(interpreted)
    return rewritten


def _loop_range(make, *args, **kwargs):
    """``make(*args, **kwargs)`` (``range`` or ``tl.range``), unless a bound is a 64-bit integer tensor: then the
    same values as 64-bit scalar tensors, the loop variable a compiled kernel has."""
    import operator

    import numpy as np
    import triton.language as tl
    from triton.runtime.interpreter import TensorHandle

    wide = [tl.int64, tl.uint64]
    if not any(isinstance(a, tl.tensor) and a.dtype in wide for a in args):
        return make(*args, **kwargs)

    def value(a):
        a = a.value if isinstance(a, tl.constexpr) else a
        if not isinstance(a, tl.tensor):
            return int(a)
        try:  # the interpreter's __index__, which the trace follows: a bound made from the program id after a
            # draw decides the work done for it (gpuperf.grading.algorithm._ticket_race)
            return operator.index(a)
        except TypeError:  # pragma: no cover - a Triton without it
            return int(a.handle.data.item())

    bounds = [value(a) for a in args]
    if len(bounds) == 1:
        bounds = [0] + bounds
    if "step" in kwargs and len(bounds) == 2:
        bounds.append(value(kwargs["step"]))
    return (tl.tensor(TensorHandle(np.array([v], dtype=np.int64), tl.int64), tl.int64) for v in range(*bounds))


def _poison(ptrs, shape):
    """A block of the load's type for the masked-out lanes of a masked load without ``other=``: NaN for
    floats, a large value for integers (an index made from it lands far outside every tensor); None for
    booleans and pointers, left as the interpreter makes them (zeros)."""
    import numpy as np
    from triton.runtime.interpreter import TensorHandle, _get_np_dtype

    try:
        dtype_tt = ptrs.get_element_ty()
        dtype_np = np.dtype(_get_np_dtype(dtype_tt))
    except (AttributeError, TypeError, KeyError):  # pragma: no cover - another Triton layout
        return None
    if dtype_np.kind == "f":
        fill = np.nan
    elif dtype_np.kind in "iu" and dtype_np.itemsize >= 2:
        fill = np.iinfo(dtype_np).max // 2 + 1
    else:
        return None
    return TensorHandle(np.full(shape, fill, dtype=dtype_np), dtype_tt)


def _note_poisoned(w: Watch, spans, addresses, active) -> None:
    """Remember the load whose masked-out lanes were filled (kernel, tensor, the reader's line), to name it
    if an output comes out NaN."""
    _note_load(w, w.counters.poisoned, spans, addresses, active)


def _note_load(w: Watch, notes: list, spans, addresses, active) -> None:
    """Append (kernel, tensor, the reader's line) of the load or atomic being run to ``notes`` (at most 8)."""
    import linecache

    if len(notes) >= 8:
        return
    name = "a tensor"
    if spans is not None:
        lanes = addresses[active] if active.any() else addresses
        a = int(lanes.reshape(-1)[0]) if lanes.size else 0
        name = next((n for n, start, end, _, _ in spans.named if start <= a < end), name)
    line = ""
    frame = sys._getframe(2)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not _is_trusted_file(filename) and os.sep + "grading" + os.sep not in filename:
            text = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
            line = f"line {frame.f_lineno}" + (f": `{text}`" if text else "")
            break
        frame = frame.f_back
    kernel = w.counters.kernels[-1] if w.counters.kernels else "?"
    entry = (kernel, name, line)
    if entry not in notes:
        notes.append(entry)


def _unset(w: Watch, addresses, element_size: int) -> bool:
    """Whether any of ``addresses`` is an element of memory handed out in this call that nothing has written
    yet (a kernel's store or atomic, a torch fill or copy): memory from ``torch.empty``, NaN here."""
    import numpy as np

    if addresses.size == 0:
        return False
    for a in w.allocs:
        if a.written is True:
            continue
        n = a.stop - a.start
        rel = addresses.astype(np.int64) - a.base
        inside = (rel >= 0) & (rel < n * a.element_size)
        if inside.any() and (a.written is None or not a.written[rel[inside] // a.element_size].all()):
            return True
    return False


def unset_atomics_note(unset, atomic_kernels=()) -> str:
    """What to tell a reader whose output has NaN after atomics that added onto memory nothing had written
    (``unset``: (kernel, tensor, line), under the interpreter), or, where only the TTIR says that kernels
    add with atomics (``atomic_kernels``, a GPU), the same as a question."""
    why = ("torch.empty (and empty_like, new_empty) hands out memory as it is, holding whatever was there "
           "before, so the grader fills it with NaN. An atomic reads the value it updates, so memory that "
           "atomics add into must start at zero: allocate it with torch.zeros (zeros_like), or zero it "
           "(.zero_(), or a kernel that stores zeros) before the kernel that adds to it")
    if unset:
        where = "; ".join(f"{name} in {kernel}" + (f" ({line})" if line else "") for kernel, name, line in unset)
        return (f"your kernel adds with an atomic onto memory nothing had written ({where}): {why}")
    kernels = ", ".join(dict.fromkeys(atomic_kernels))
    return (f"your kernel {kernels} adds with an atomic: if it adds onto memory from torch.empty, that is "
            f"the NaN. {why}")


def poisoned_note(poisoned) -> str:
    """What to tell a reader whose output has NaN after loads whose masked-out lanes were filled with NaN."""
    loads = "; ".join(f"{name} in {kernel}" + (f" ({line})" if line else "") for kernel, name, line in poisoned)
    return (f"your kernel loads with a mask but no `other=` ({loads}): on a GPU the masked-out lanes of such a "
            "load are undefined (whatever the registers held), so the grader fills them with NaN. If your "
            "kernel uses those lanes (adds, multiplies or takes a max over the whole block: the tail of a "
            "product's K loop, padded rows or keys), give the load the value they must hold: `other=0.0` "
            "where they are added or multiplied, `other=float(\"-inf\")` where a max is taken")


def _launch_grid(w: Watch, fn, args, kwargs) -> tuple | None:
    """The grid of a launch of kernel ``fn`` (``kwargs["grid"]``, a callable given the arguments by name, as
    Triton calls it, with the watch paused as Triton's call is), as three sizes, or None where it cannot be
    read."""
    import inspect

    grid = kwargs.get("grid")
    saved, w.paused = w.paused, True
    try:
        if callable(grid):
            meta = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
            try:
                bound = inspect.signature(fn).bind_partial(*args, **meta)
                bound.apply_defaults()
                meta = dict(bound.arguments)
            except (TypeError, ValueError):
                pass
            grid = grid(meta)
        grid = (grid,) if isinstance(grid, int) else tuple(grid)
        sizes = tuple(int(n) for n in grid)[:3]
        return sizes + (1,) * (3 - len(sizes))
    except Exception:  # a grid the grader cannot read: the front end's rule without it
        return None
    finally:
        w.paused = saved


#: Exercises whose tile products are graded as tl.dot products (round 24: a broadcast product beside a decoy dot).
_DOT_EXERCISES = frozenset(("L4.matmul", "L5.forward", "L5.causal", "L6.backward", "L6.autograd"))


def _check_compiles(w: Watch, fn, args, kwargs, grid: tuple | None = None):
    """An interpreted kernel must be one Triton can compile (:mod:`gpuperf.grading.frontend`). ``grid``: the
    launch's (three sizes), where known (:func:`gpuperf.grading.frontend.wrapping_masks` reads it). Returns
    what :func:`_recheck_masks` needs, or None."""
    if _library_kernel_file(fn):  # Triton's own or the course's: checked by what may run, not compiled here
        return None
    from gpuperf.grading.dataflow import broadcast_tile_products, unstored_dots
    from gpuperf.grading.frontend import lossy_program_ids, lower, wrapping_masks, wrapping_offsets

    saved, w.internal = w.internal, True  # the grader's own work: torch calls in it are not the reader's
    try:
        problem, ttir = lower(fn, args, kwargs)
        integers = _launch_integers(fn, args, kwargs)
        if ttir and w.policy.wide_offsets:
            _read_wrapping(w, fn, args, kwargs, ttir, grid, _slice_starts(w, grid, integers))
        if ttir and w.policy.int64_offsets and wrapping_offsets(ttir, any_factor=True):  # L2: pid * BLOCK
            w.counters.narrow_kernels.append(getattr(fn, "__name__", "?"))
        elif ttir and w.policy.int64_offsets and wrapping_masks(ttir, any_factor=True):
            w.counters.narrow_masks.append(getattr(fn, "__name__", "?"))  # L2: lanes < n - pid * BLOCK
        name = getattr(fn, "__name__", "?")
        if ttir and name not in w.counters.atomic_kernels and any(op != "exch" for op in _atomic_ops(ttir)):
            w.counters.atomic_kernels.append(name)  # named where an output comes out NaN on a GPU
        unstored = unstored_dots(ttir) if ttir else 0
        lossy = bool(ttir) and lossy_program_ids(ttir)
        zeros = frozenset(name for name, value in integers.items() if value == 0)
        broadcast = bool(ttir) and w.policy.exercise in _DOT_EXERCISES and \
            broadcast_tile_products(ttir, min_dims=2, zero_arguments=zeros,
                                    distinct_tensors=w.policy.exercise in ("L4.matmul", "L5.forward", "L5.causal"))
        prints = bool(ttir) and "tt.print" in ttir
    finally:
        w.internal = saved
    if prints:  # a channel out of the kernel that no check sees: the interpreter's stdout, a GPU's printf
        w._refuse(f"your kernel {name} prints (tl.device_print, or print inside a @triton.jit function): "
                  "remove tl.device_print before grading: its output leaves the kernel by a way the grader "
                  "cannot watch (Python's stdout under the interpreter, the device's printf on a GPU, both "
                  "readable by the code that launched it), so a graded kernel may not print. Print while you "
                  "debug, outside grading.grade, and delete the prints before you grade")
    if lossy:
        w._refuse(f"your kernel {name} narrows the program id (or a value made from it) to an integer of fewer "
                  "than 32 bits, or turns it into a float and back, before it reaches an address: an int16 wraps "
                  "past 32,767 programs, an int8 past 127, and a float32 rounds integers past 2^24 (fp16 past "
                  "2,048), so a large enough grid reads and writes the wrong memory. Keep program ids and offsets "
                  "in integers of 32 bits or more (64 bits once they multiply a size or stride)")
    if unstored:
        w._refuse(f"your kernel {name} computes {unstored} tl.dot product(s) whose result never reaches what it "
                  "stores: the grader counts the tile products a kernel does with tl.dot, so each one must be "
                  "part of the answer (drop a product you do not use, and do the work with the ones you keep)")
    if broadcast:
        w._refuse(f"your kernel {name} multiplies two tiles by broadcasting them against each other and summing "
                  "(a[:, None, :] * b[None, :, :], then tl.sum; or a column times a row, a[:, None] * b[None, :], "
                  "added up one k at a time; a division by a reciprocal, a / (1 / b), an exponential of an outer "
                  "sum of logarithms, tiles of three dimensions multiplied lane by lane, tiles gathered so "
                  "that their product reshaped and summed is a matrix product, or tiles loaded with a stride of "
                  "0 so that each is a broadcast, a column and a row handed together to tl.reduce, a broadcast "
                  "reshaped flat, or in L4 and L5 two whole tiles of two inputs multiplied lane by lane, count the "
                  "same): that is a "
                  "matrix product done element by element, off the tensor cores. Multiply tiles with tl.dot")
    if problem:
        w._refuse(f"your kernel {getattr(fn, '__name__', '?')} does not compile with Triton: {problem}. The "
                  "interpreter runs a kernel's body as Python on NumPy arrays, so code the compiler refuses can "
                  "run there (NumPy, `.handle` or Python on a block's values; a block that is not a power of "
                  "two), but no GPU can run it: compute with Triton's own operations on blocks (loads, dots, "
                  "sums, exponentials) and the shapes the compiler accepts")
    if ttir and w.policy.wide_offsets and name not in w.counters.wrapping_masks:
        return fn, args, kwargs, ttir, grid, integers  # read again with Triton's grid, where it differs
    return None


def _read_wrapping(w: Watch, fn, args, kwargs, ttir: str, grid: tuple | None, exempt: frozenset) -> None:
    """The 32-bit rules of L3 to L6 on a kernel's TTIR (addresses, then masks), on a launch on ``grid`` whose
    slice starts (:func:`_slice_starts`) are ``exempt``: a kernel they refuse is named in the counters."""
    from gpuperf.grading.frontend import wrapping_constexpr_offsets, wrapping_masks, wrapping_offsets

    head, name = w.policy.within_head, getattr(fn, "__name__", "?")
    # a stride given as tl.constexpr is a constant in the IR: lowered once more as a run-time integer
    if wrapping_offsets(ttir, within_head=head, exempt=exempt) or \
            wrapping_constexpr_offsets(fn, args, kwargs, within_head=head, exempt=exempt):
        w.counters.wrapping_kernels.append(name)
    elif wrapping_masks(ttir, grid=grid, exempt=exempt) or wrapping_constexpr_offsets(  # row * n_cols + cols < ...
            fn, args, kwargs, rule=lambda text: wrapping_masks(text, grid=grid, exempt=exempt)):
        w.counters.wrapping_masks.append(name)


def _launch_integers(fn, args, kwargs) -> dict:
    """The integer arguments of a launch of kernel ``fn`` by parameter name (run-time and constexpr ones; not
    bools); {} where the arguments do not bind to its signature."""
    import inspect

    try:
        names = inspect.signature(fn).parameters
        bound = inspect.signature(fn).bind_partial(*args, **{k: v for k, v in kwargs.items() if k in names})
    except (TypeError, ValueError):
        return {}
    return {name: value for name, value in bound.arguments.items()
            if isinstance(value, int) and not isinstance(value, bool)}


def _slice_starts(w: Watch, grid: tuple | None, integers: dict) -> frozenset:
    """:func:`gpuperf.grading.frontend.slice_starts` of a launch on ``grid`` (none where the grid is unknown),
    against the shapes of the tensors the grader handed to the reader's function."""
    from gpuperf.grading.frontend import slice_starts

    if grid is None or not integers:
        return frozenset()
    return slice_starts(tuple(grid), integers, [tuple(t.shape) for t in w.grader_tensors if hasattr(t, "shape")])


def _recheck_masks(w: Watch, checked, grid) -> None:
    """A launch's grid as Triton evaluated it (``grid``, three sizes), against the one the 32-bit rules were
    read with when the kernel was checked (``checked``: the kernel, its arguments, its TTIR, that grid and its
    integer arguments, from :func:`_check_compiles`): where an axis has one program in one and several in the
    other, or where the two grids give other slice starts (a grid function that answered the grader's call
    otherwise), the rules are read again with Triton's."""
    from gpuperf.grading.frontend import wrapping_masks

    if not checked:
        return
    fn, args, kwargs, ttir, used, integers = checked
    exempt = _slice_starts(w, grid, integers)
    if exempt != _slice_starts(w, used, integers):  # slice starts that Triton's grid makes longer (or shorter)
        saved, w.internal = w.internal, True
        try:
            _read_wrapping(w, fn, args, kwargs, ttir, tuple(grid), exempt)
        finally:
            w.internal = saved
        return
    ones = tuple(n == 1 for n in grid[1:3])
    if used is not None and tuple(n == 1 for n in used[1:3]) == ones:
        return
    saved, w.internal = w.internal, True
    try:
        if wrapping_masks(ttir, grid=tuple(grid), exempt=exempt):
            w.counters.wrapping_masks.append(w.counters.kernels[-1] if w.counters.kernels else "?")
    finally:
        w.internal = saved


def _atomic_ops(ttir: str) -> list[str]:
    """The operations of the kernel's atomic read-modify-writes in its TTIR (``fadd``, ``max``, ``exch``)."""
    import re

    return re.findall(r"tt\.atomic_rmw (\w+)", ttir)


def _mark_stores(w: Watch, addresses, element_size: int) -> None:
    import numpy as np

    if addresses.size == 0:
        return
    for a in w.allocs:
        if a.written is True:
            continue
        es, base = a.element_size, a.base
        n = a.stop - a.start
        rel = (addresses.astype(np.int64) - base)
        inside = (rel >= 0) & (rel < n * es)
        if not inside.any():
            continue
        if a.written is None:
            a.written = np.zeros(n, dtype=bool)
        a.written[rel[inside] // es] = True


def _compiled_hooks(watch_getter) -> list:
    """On a GPU: pause the watch for the whole of a compiled launch and of the autotuner (no Python of the
    reader's runs inside them), and refuse the course's own kernels."""
    try:
        from triton.runtime.autotuner import Autotuner, Heuristics
        from triton.runtime.jit import JITFunction
    except ImportError:  # pragma: no cover
        return []
    saved = []
    import triton.runtime.jit as jit_module

    make = _BINDER_MAKER.get("make")
    if make is None:  # Triton's own maker (its code from Triton's file, its globals Triton's module)
        found = getattr(jit_module, "create_function_from_signature", None)
        code = getattr(found, "__code__", None)
        if code is not None and getattr(found, "__globals__", None) is vars(jit_module) and \
                os.path.realpath(code.co_filename) == os.path.realpath(jit_module.__file__):
            make = _BINDER_MAKER["make"] = found
    if make is not None:
        saved.append((jit_module, "create_function_from_signature", jit_module.create_function_from_signature))
        jit_module.create_function_from_signature = _recording_binders(make)

    def wrap(cls, check_fn):
        original = cls.run

        def run(self, *args, **kwargs):
            w = watch_getter()
            if w is None:
                return original(self, *args, **kwargs)
            if check_fn:
                _own_binders(self)
                _check_kernel(w, self.fn)
                w.check_alive("at a kernel launch")
                w.counters.launches += 1
                grid = _check_compiled_args(w, self, args, kwargs)
                checked = None
                if w.policy.kernels and (w.policy.wide_offsets or w.policy.int64_offsets) and \
                        not kwargs.get("warmup"):
                    checked = _check_compiles(w, self.fn, args, {k: v for k, v in kwargs.items()
                                                                 if k not in ("grid", "warmup")}, grid=grid)
                if "grid" in kwargs:
                    kwargs["grid"] = _counting_grid(w, kwargs["grid"], checked)
                w.shadows("before a kernel launch")
            saved_pause, w.paused = w.paused, True
            try:
                result = original(self, *args, **kwargs)
                if check_fn:
                    w.shadows(None)
                return result
            finally:
                w.paused = saved_pause

        saved.append((cls, "run", original))
        cls.run = run

    wrap(JITFunction, True)
    wrap(Autotuner, False)
    wrap(Heuristics, False)
    return saved


def _counting_grid(w: Watch, grid, checked=None):
    """``grid`` as Triton will use it, recording the programs of the launch in ``w.counters.most_programs``
    when Triton evaluates it (a callable grid, the reader's code, is called as it is, once per launch). With
    ``checked`` (from :func:`_check_compiles`), the 32-bit mask rules are read again with the grid Triton
    uses where it differs from the one they were read with (a grid function that answered the grader's own
    call otherwise: round 19's 01, accepted on the H200 where only the interpreter re-read them)."""

    def count(value):
        try:
            dims = [value] if isinstance(value, int) else list(value)[:3]
            programs = 1
            for size in dims:
                programs *= size if isinstance(size, int) and not isinstance(size, bool) else 0
        except TypeError:
            dims, programs = [], 0
        w.counters.most_programs = max(w.counters.most_programs, programs)
        if checked and dims and all(isinstance(n, int) and not isinstance(n, bool) for n in dims):
            _recheck_masks(w, checked, tuple(dims) + (1,) * (3 - len(dims)))
        return value

    if callable(grid):
        return lambda meta: count(grid(meta))
    return count(grid)


def _check_compiled_args(w: Watch, kernel, args, kwargs) -> tuple | None:
    """A compiled launch: its tensors must be memory the grader or torch gave out; its widest constexpr
    (the block size, as far as the grader can see on a GPU) is recorded. Returns the launch's grid (three
    sizes), None where it cannot be read."""
    import torch

    params = getattr(kernel, "params", [])
    values = {p.name: args[i] for i, p in enumerate(params) if i < len(args)}
    values.update(kwargs)
    for name, value in values.items():
        if isinstance(value, torch.Tensor) and w.policy.kernels and not w._is_known(value):
            w._refuse(f"your kernel was given {name}, a tensor that neither the grader gave your function nor "
                      "torch made inside it (made from numpy or a raw address, or kept from an earlier grade: "
                      "allocate scratch buffers inside your function)")
    for p in params:
        value = values.get(p.name)
        if getattr(p, "is_constexpr", False) and isinstance(value, int) and not isinstance(value, bool):
            w.counters.widest_block = max(w.counters.widest_block, value)
    grid = kwargs.get("grid")
    try:
        grid = grid(values) if callable(grid) else grid
        grid = tuple(int(n) for n in grid) + (1,) * (3 - len(grid))
        w.counters.grids.append((getattr(getattr(kernel, "fn", None), "__name__", "?"), grid[:3]))
        return grid[:3]
    except (TypeError, ValueError, KeyError, AttributeError):  # a grid the grader cannot read: not recorded
        return None


@contextlib.contextmanager
def triton_hooks() -> Iterator[None]:
    """Install the launch hooks (interpreter and compiled) for the duration of a grade; they act only while a
    :class:`Watch` is on. A Triton laid out differently loses the hooks it lacks, never the grade."""
    saved = []
    for install in (_interpreter_hooks, _compiled_hooks):
        try:
            saved += install(lambda: _ACTIVE)
        except (AttributeError, ImportError, TypeError):  # pragma: no cover - another Triton layout
            pass
    try:
        yield
    finally:
        _restore(saved)


def unwritten(alloc_or_watch: Watch, tensor) -> int:
    """How many elements of ``tensor`` (memory the watch handed out) no kernel store, fill or copy wrote:
    the first such flat index, or -1 when all were written (or the memory is not tracked)."""
    import numpy as np

    ptr = _storage_ptr(tensor)
    for a in alloc_or_watch.allocs:
        if a.storage != ptr:
            continue
        if a.written is True:
            return -1
        written = a.written if a.written is not None else np.zeros(a.stop - a.start, dtype=bool)
        es = tensor.element_size()
        offset = (tensor.data_ptr() - a.buffer.data_ptr()) // es - a.start
        idx = np.zeros(tuple(tensor.shape), dtype=np.int64) + offset
        for dim, (size, stride) in enumerate(zip(tensor.shape, tensor.stride())):
            shape = [1] * tensor.dim()
            shape[dim] = size
            idx = idx + (np.arange(size) * stride).reshape(shape)
        flat = idx.reshape(-1)
        inside = (flat >= 0) & (flat < written.size)
        missing = ~inside | ~written[np.clip(flat, 0, max(written.size - 1, 0))]
        if missing.any():
            return int(np.argmax(missing))
        return -1
    return -1


# --------------------------------------------------------------------------------------------------------
# Doors that torch's modes do not see, the audit hook, and the code that may pause the watch.
# --------------------------------------------------------------------------------------------------------


def _reader_calls(depth: int = 2, limit: int = 64) -> bool:
    """True when the first frame above ``depth`` that is not torch's, Triton's or the standard library's is
    the reader's (not the grader's)."""
    frame = sys._getframe(depth)
    for _ in range(limit):
        if frame is None:
            return False
        filename = frame.f_code.co_filename
        if _triton_binder(frame):  # Triton's own, recorded when Triton made it
            frame = frame.f_back
            continue
        if not _genuine(frame):
            return True
        if filename.startswith(_GRADER_DIR):
            return False
        if not _is_trusted_file(filename):
            return True
        frame = frame.f_back
    return False


def _close_doors(watch: Watch) -> list:
    """Replace, while the watch is on, the functions that hand memory to code torch cannot see or launch
    work that is not a Triton JIT launch, and that torch's modes do not see: DLPack in and out, numpy and
    raw buffers in, ``torch.cuda.jiterator``, compiled C++/CUDA extensions, and Triton's compiled-kernel
    launcher outside a JIT launch (an ahead-of-time compiled kernel)."""
    import importlib

    import torch

    doors = [("torch", "to_dlpack", "DLPack (to_dlpack)"), ("torch", "from_dlpack", "DLPack (from_dlpack)"),
             ("torch._C", "_to_dlpack", "DLPack (to_dlpack)"), ("torch._C", "_from_dlpack", "DLPack"),
             ("torch.utils.dlpack", "to_dlpack", "DLPack (torch.utils.dlpack.to_dlpack)"),
             ("torch.utils.dlpack", "from_dlpack", "DLPack (torch.utils.dlpack.from_dlpack)"),
             ("torch", "from_numpy", "torch.from_numpy"), ("torch", "frombuffer", "torch.frombuffer"),
             ("torch.cuda.jiterator", "_create_jit_fn", "a kernel of torch.cuda.jiterator"),
             ("torch.cuda.jiterator", "_create_multi_output_jit_fn", "a kernel of torch.cuda.jiterator"),
             ("torch.utils.cpp_extension", "load", "a compiled extension"),
             ("torch.utils.cpp_extension", "load_inline", "a compiled extension"),
             ("torch.ops", "load_library", "a compiled library of operators")]
    saved = []

    def install(owner, name, what):
        original = getattr(owner, name)

        def door(*args, _original=original, _what=what, **kwargs):
            if watch.active and not watch.internal and _reader_calls():  # paused: a callback of the reader's
                watch._refuse(f"your function used {_what}: memory or work reached that way is out of the "
                              f"grader's sight; {watch.policy.exercise} {watch.policy.why}")
            return _original(*args, **kwargs)

        saved.append((owner, name, original))
        setattr(owner, name, door)

    for module, name, what in doors:
        try:
            owner = importlib.import_module(module) if module != "torch.ops" else torch.ops
        except ImportError:  # pragma: no cover
            continue
        if hasattr(owner, name):
            install(owner, name, what)
    try:
        from torch.cuda.jiterator import _JittedFunction

        install(_JittedFunction, "__call__", "a kernel of torch.cuda.jiterator")
    except ImportError:  # pragma: no cover
        pass
    # a compiled Triton kernel launched other than through a JIT function's run (CompiledKernel[grid](...),
    # an ahead-of-time compiled package): refused by the launcher, unless a JIT launch is on the stack
    for module, cls in (("triton.backends.nvidia.driver", "CudaLauncher"),
                        ("triton.backends.amd.driver", "HIPLauncher")):
        try:
            launcher = getattr(importlib.import_module(module), cls)
        except (ImportError, AttributeError):
            continue
        original = launcher.__call__

        def launch(self, *args, _original=original, **kwargs):
            if watch.active and not _stack_holds(_JIT_LAUNCH_CODES):
                watch._refuse("your function launched a compiled kernel that is not a launch of a "
                              "@triton.jit function of yours (an ahead-of-time compiled kernel?): "
                              f"{watch.policy.exercise} counts only your own JIT launches")
            return _original(self, *args, **kwargs)

        saved.append((launcher, "__call__", original))
        launcher.__call__ = launch
    return saved


class _Audit:
    """A Python audit hook (``sys.addaudithook``: installed once, at import, and never removable) that, while
    a watch is armed, refuses what reaches memory or frames from the reader's code: ``ctypes``, frames
    (``sys._getframe``, a traceback's or a generator's frame; ``inspect`` and ``traceback`` use these),
    ``gc``'s object graph, tracing and profiling hooks, rewriting a function's code, ``/proc/*/mem``."""

    FRAME_ATTRIBUTES = frozenset(("tb_frame", "gi_frame", "cr_frame", "ag_frame"))
    #: standard-library modules that hand their caller a frame: the reader's call through them counts
    EXPOSING = ("inspect.py", "traceback.py", os.sep + "logging" + os.sep, "pdb.py", "bdb.py", "trace.py",
                "cgitb.py", "code.py")

    def __init__(self):
        self._armed: list = []
        self._busy = False

    #: Files through which a process's memory is read or written (``/proc/<pid>/mem``, its ``task/<tid>/mem``,
    #: ``pagemap``; ``/dev/mem``): by the last part of the path, so that a name opened relative to a directory
    #: descriptor (``os.open("mem", dir_fd=...)``, whose audit event carries only "mem") counts too.
    MEMORY_FILES = frozenset(("mem", "pagemap", "maps", "kmem", "kcore"))
    #: Audit events that start another process (which could read or write this one's memory, or compute for it).
    SPAWN_EVENTS = frozenset(("subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.exec", "os.fork",
                              "os.forkpty", "pty.spawn", "os.startfile"))

    def arm(self, owner) -> None:
        self._armed.append(owner)

    #: spawn events from torch, Triton or the grader (a compiler run during a launch), counted: while one
    #: happens the children's accounting cannot tell a process of the reader's (see :meth:`children_check`).
    #: One list, counted in place: the integrity check compares the class's attributes by identity, and a
    #: rebound integer would read as a change made by the reader (every compiling case refused on a GPU).
    spawns_allowed = [0]

    @staticmethod
    def children() -> tuple:
        """(what the kernel has accounted for this process's finished and reaped children, the process ids of
        its children still running or not yet reaped): a process started by any door, audited or not
        (``_posixsubprocess.fork_exec`` raises no audit event: round 25's 07), shows in one or the other."""
        import resource

        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        accounted = (usage.ru_utime, usage.ru_stime, usage.ru_minflt, usage.ru_majflt, usage.ru_nvcsw,
                     usage.ru_nivcsw)
        me, live = os.getpid(), set()
        try:
            names = os.listdir("/proc")
        except OSError:  # pragma: no cover - no /proc (not Linux)
            names = []
        for name in names:
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    stat = f.read()
                if int(stat[stat.rindex(b")") + 2:].split()[1]) == me:
                    live.add(int(name))
            except (OSError, ValueError, IndexError):
                continue
        return accounted, frozenset(live), _Audit.spawns_allowed[0]

    @staticmethod
    def children_check(owner, before) -> None:
        """Refuses (``owner._refuse``) when a process was started during the call and no audited spawn of
        torch's or Triton's explains it: a child's time or page faults accounted on its end, or a child
        still there."""
        if before is None:
            return
        accounted, live, allowed = _Audit.children()
        if allowed != before[2]:
            return  # a compiler ran: its children are accounted the same way
        if accounted != before[0] or live - before[1]:
            owner._refuse("your function started a new process while it was graded (by a door the audit "
                          "hook does not see, such as _posixsubprocess.fork_exec): another process can read "
                          "and write this one's memory or compute for it; "
                          f"{owner.policy.exercise} {owner.policy.why}")

    @staticmethod
    def check_descriptors(owner) -> None:
        """Refuses (``owner._refuse``) when a descriptor to a process's memory is already open as the call
        starts (opened before the grade, where the hook does not look)."""
        held = _memory_descriptors()
        if held:
            owner._refuse(f"a file descriptor to this process's memory is open ({held[0]}): the grader's "
                          "inputs and outputs would be readable and writable without torch or a kernel; close "
                          f"it before grading; {owner.policy.exercise} {owner.policy.why}")

    def disarm(self, owner) -> None:
        if owner in self._armed:
            self._armed.remove(owner)

    def hook(self, event: str, args) -> None:
        if not self._armed or self._busy:
            return
        what = self._refused(event, args)
        if not what:
            return
        self._busy = True
        try:
            # a process started through the standard library (subprocess.run, os.popen) is the reader's when
            # the reader called the standard library; one started through torch's helpers too (round 27's 24:
            # torch.utils.collect_env.run): only Triton's own (a compiler run by a launch) is not
            reader = self._spawn_from_reader() if event in self.SPAWN_EVENTS else self._from_reader()
        finally:
            self._busy = False
        if not reader and event in self.SPAWN_EVENTS:
            _Audit.spawns_allowed[0] += 1
        if reader:
            owner = self._armed[-1]
            owner._refuse(f"your function used {what} while it was graded: it reaches the grader's frames, "
                          f"objects or raw memory; {owner.policy.exercise} {owner.policy.why}")

    def _refused(self, event: str, args) -> str:
        if event.startswith("ctypes."):
            return f"ctypes ({event})"
        if event in ("sys._getframe", "sys._current_frames", "sys._current_exceptions"):
            return f"a frame ({event})"
        if event in ("gc.get_objects", "gc.get_referrers", "gc.get_referents"):
            return f"the garbage collector's object graph ({event})"
        if event in ("sys.settrace", "sys.setprofile"):
            return f"a tracing hook ({event})"
        if event == "object.__getattr__" and len(args) > 1 and args[1] in self.FRAME_ATTRIBUTES:
            return f"a frame ({args[1]})"
        if event == "object.__setattr__" and len(args) > 1 and args[1] in ("__code__", "__closure__",
                                                                            "__globals__", "__defaults__",
                                                                            "__kwdefaults__"):
            return f"a rewrite of a function ({args[1]})"
        if event == "open" and args:
            found = _memory_file(args[0])
            if found:
                return f"the process's memory ({found})"
        if event in self.SPAWN_EVENTS:
            return f"a new process ({event})"
        return ""

    def _spawn_from_reader(self) -> bool:
        """A new process was asked for by the reader's code: a frame of the reader's is on the stack before any
        of Triton's own (the compiler a launch runs) or the grader's, whatever torch or the standard library
        frames lie between."""
        triton_dir = _trusted_dirs()[1]
        frame = sys._getframe(2)
        while frame is not None:  # the whole stack: a spawn under many standard-library frames is still seen
            filename = frame.f_code.co_filename
            if _triton_binder(frame):  # Triton's own binder, recorded when Triton made it
                return False
            if not _genuine(frame):  # before the names: code compiled under a grader's file name is the reader's
                return True
            if filename.startswith(_GRADER_DIR):
                return False
            if filename.startswith(triton_dir) and _is_trusted_file(filename):
                return False
            if not _is_trusted_file(filename) and not _installed_path(filename):
                return True
            frame = frame.f_back
        return False

    def _from_reader(self, through_stdlib: bool = False) -> bool:
        """The audited call was made by the reader's code (directly, or through a frame-exposing module of
        the standard library, or any of it with ``through_stdlib``); not by torch, Triton, the rest of the
        standard library or the grader."""
        frame = sys._getframe(2)
        for _ in range(32):
            if frame is None:
                return False
            filename = frame.f_code.co_filename
            if _triton_binder(frame):  # Triton's own binder, recorded when Triton made it
                return False
            if not _genuine(frame):
                return True
            if filename.startswith(_GRADER_DIR):
                return False
            if _is_trusted_file(filename):
                stdlib = filename.startswith(_trusted_dirs()[2]) and not _installed_path(filename)
                if stdlib and (through_stdlib or filename.endswith(self.EXPOSING)) or \
                        (os.sep + "logging" + os.sep) in filename or (os.sep + "ctypes" + os.sep) in filename:
                    frame = frame.f_back
                    continue
                return False
            # a third-party package (typing_extensions reads frames of its own) is not the reader's code
            return not _installed_path(filename)
        return False


def _memory_file(path) -> str:
    """``path`` (what an ``open`` audit event names) when it is a file of a process's memory
    (:attr:`_Audit.MEMORY_FILES`), by its own last part or by what it resolves to (a link to one, or
    ``/proc/self/fd/N`` of a descriptor to one), else ""."""
    try:
        name = os.fsdecode(os.fspath(path))
    except TypeError:  # an integer descriptor (open(3)): its target is read by _memory_descriptors
        return ""
    if os.path.basename(name.rstrip(os.sep)) in _Audit.MEMORY_FILES and (
            not os.path.isabs(name) or name.startswith(("/proc/", "/dev/"))):
        return name
    if name.startswith("/proc/") or os.path.islink(name):
        real = os.path.realpath(name)
        if real.startswith(("/proc/", "/dev/")) and os.path.basename(real) in _Audit.MEMORY_FILES:
            return f"{name} -> {real}"
    return ""


def _memory_descriptors() -> list[str]:
    """``"fd N -> target"`` for each open descriptor of this process to a file of a process's memory (Linux;
    [] where ``/proc/self/fd`` cannot be read)."""
    found = []
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for fd in fds:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(("/proc/", "/dev/")) and os.path.basename(target) in _Audit.MEMORY_FILES:
            found.append(f"fd {fd} -> {target}")
    return found


_AUDIT = _Audit()
sys.addaudithook(_AUDIT.hook)


class PlainGuard:
    """The watch of a plain-Python exercise (L1): no torch to watch, only the audit hook (frames, ``gc``,
    ``ctypes``): the reader's function cannot read the expected value from its caller's frame."""

    def __init__(self, exercise: str):
        self.policy = Policy(exercise, allowed=None, kernels=False, why="asks for the arithmetic, done by your "
                             "function from its arguments")
        self.violation: BaseException | None = None

    def _refuse(self, message: str):
        exc = ForbiddenCall(message)
        if self.violation is None:
            self.violation = exc
        raise exc

    def call(self, fn, *args, **kwargs):
        _Audit.check_descriptors(self)
        before = _Audit.children()
        _AUDIT.arm(self)
        try:
            result = fn(*args, **kwargs)
        finally:
            _AUDIT.disarm(self)
        if self.violation is None:
            try:
                _Audit.children_check(self, before)
            except ForbiddenCall:
                pass
        if self.violation is not None:
            raise self.violation
        return result


def plain_guarded(fn, exercise: str):
    """``fn`` called under a :class:`PlainGuard` (what :func:`gpuperf.grading.grade_report` gives the L1
    cases)."""
    def guarded_fn(*args, **kwargs):
        return PlainGuard(exercise).call(fn, *args, **kwargs)

    guarded_fn.__wrapped__ = fn
    return guarded_fn


def _nested_codes(function, names) -> frozenset:
    """The code objects of the functions called ``names`` nested (at any depth) in ``function``."""
    return frozenset(c for c in _code_objects(function) if c.co_name in names)


#: Code that pauses the watch around Triton's own launch work: the launch hooks' ``run``/``call``/``restore``.
_PAUSE_CODES = _nested_codes(_interpreter_hooks, ("run", "call", "restore")) | \
    _nested_codes(_compiled_hooks, ("run",))
#: The grader's own bookkeeping, which runs torch with the watch standing aside (not the modes' handlers).
_INTERNAL_CODES = frozenset(f.__code__ for f in (Watch._allocate, _storage_ptr, Watch.__enter__, Watch.__exit__,
                                                 Watch.check_alive, Watch.shadows))
#: A compiled launch is legitimate only under the JIT launch hook (``_compiled_hooks``'s ``run``).
_JIT_LAUNCH_CODES = _nested_codes(_compiled_hooks, ("run",))


# --------------------------------------------------------------------------------------------------------
# Tampering: a baseline taken when the grader is imported, and the reader's code read before it runs.
# --------------------------------------------------------------------------------------------------------

#: Names only the grader's machinery uses: code of the reader's that names one reaches into the watch.
GRADER_STATE_NAMES = frozenset((
    "_ACTIVE", "_AUDIT", "_PAUSE_CODES", "_INTERNAL_CODES", "_JIT_LAUNCH_CODES", "_BASELINE", "_python_inside",
    "_probe_seen", "_switches", "_modes", "_python_kernels", "allow_course_kernels", "__closure__",
    "cell_contents", "_getframe", "f_back", "f_locals", "f_globals", "tb_frame", "gi_frame", "cr_frame",
    "get_referrers", "get_referents", "get_objects", "_get_current_dispatch_mode_stack",
    "_get_current_function_mode_stack", "_get_dispatch_stack_at", "_get_function_stack_at",
    "_len_torch_dispatch_stack", "_len_torch_function_stack", "_pop_torch_dispatch_mode",
    "_pop_torch_function_stack", "_set_dispatch_mode", "_unset_dispatch_mode", "_GraderIntegrity",
    "addaudithook", "settrace", "setprofile", "_BINDERS", "_BINDER_MAKER", "_GENUINE", "_record_binder",
    "_COURSE_FILES", "_REWRITES", "_PINNED", "_PINNED_AGAIN", "_PINNED_CODE", "_PINNED_SOURCES", "pin_solutions",
    "monitoring", "use_tool_id", "register_callback", "setitimer", "alarm", "pthread_kill", "SIGALRM", "SIGVTALRM",
    "SIGPROF", "_Audit", "spawns_allowed", "children_check", "SIGCHLD", "SIG_IGN", "_PERTURB", "_dot_site",
    "_products_matter", "_not_readers_dirs"))


def reaches_grader(fn, depth: int = 3) -> str:
    """What in ``fn``'s code (its nested functions, the kernels it launches, the functions and classes of the
    reader's own it refers to, ``depth`` levels down) names the grader's state or a way to reach it
    (frames, closures, ``gc``'s graph, the grader's modules), or ""."""
    import types

    seen: set = set()

    def names_of(code):
        yield from code.co_names
        for const in code.co_consts:
            if isinstance(const, str):
                # a name getattr or importlib could use ("_ACTIVE", "gpuperf.grading.watch"), spaces around it
                # or not; prose (a docstring, a printed sentence that mentions the grader) is no way in
                if not any(c.isspace() for c in const.strip()):
                    yield const.strip()
            elif isinstance(const, types.CodeType):
                yield from names_of(const)

    def check(obj, level):
        if level < 0 or id(obj) in seen:
            return ""
        seen.add(id(obj))
        obj = getattr(obj, "__wrapped__", obj)
        inner = getattr(obj, "fn", None)  # a @triton.jit function
        if inner is not None and hasattr(inner, "__code__"):
            obj = inner
        if isinstance(obj, type):
            for value in vars(obj).values():
                found = check(getattr(value, "__func__", value), level)
                if found:
                    return found
            return ""
        code = getattr(obj, "__code__", None)
        if code is None or _library_kernel_file(obj):
            return ""
        for name in names_of(code):
            if name in GRADER_STATE_NAMES or "gpuperf.grading." in name:
                return name
        glb = getattr(obj, "__globals__", {})
        for name in code.co_names:
            value = glb.get(name)
            if isinstance(value, types.ModuleType):  # the public gpuperf.grading is fine, not its internals
                if value.__name__.startswith("gpuperf.grading."):
                    return value.__name__
                continue
            if callable(value):
                found = check(value, level - 1)
                if found:
                    return found
        for cell in getattr(obj, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, types.ModuleType) and value.__name__.startswith("gpuperf.grading."):
                return value.__name__
            if callable(value):
                found = check(value, level - 1)
                if found:
                    return found
        return ""

    return check(fn, depth)


def _callables_of(owner) -> dict:
    """The callables and properties in ``vars(owner)``, each with what identifies its behaviour (for a Python
    function: its code, defaults and closure contents)."""
    out = {}
    grader = getattr(owner, "__name__", "").startswith("gpuperf.grading") and isinstance(owner, type(sys))
    for name, value in list(vars(owner).items()):
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if grader and name not in _MUTABLE_STATE and not name.startswith("__") and \
                not (callable(value) or isinstance(value, property)):
            out[name] = (value, _contents(value))  # the grader's tables (EXERCISES, allow-lists) too
            continue
        if not (callable(value) or isinstance(value, property)):
            continue
        if isinstance(value, type) and value.__module__ != getattr(owner, "__name__", None):
            ident = (value,)
        else:
            ident = (value, getattr(value, "__code__", None), getattr(value, "__defaults__", None),
                     getattr(value, "__kwdefaults__", None),
                     tuple(id(_cell(c)) for c in (getattr(value, "__closure__", None) or ())))
        out[name] = ident
    return out


#: The grader's module-level state that changes while it runs (not compared with the baseline).
_MUTABLE_STATE = frozenset(("_ACTIVE", "_BASELINE", "_TRUSTED", "_GENUINE", "_COURSE_FILES", "__builtins__", "_PERTURB",
                            "__warningregistry__", "_STATE", "_BINDERS", "_BINDER_MAKER", "_ALIASES", "_EARLIER_CALLS", "_REWRITES"))


def _contents(value, depth: int = 3):
    """What identifies a table of the grader: a dict's items and, for objects in it (an ``Exercise`` and its
    ``Policy``), their fields, ``depth`` levels down."""
    if depth == 0:
        return ()
    if isinstance(value, dict):
        return tuple((k, v, _contents(v, depth - 1)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple((v, _contents(v, depth - 1)) for v in value)
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict) and not isinstance(value, type) and not isinstance(value, type(sys)):
        return tuple((k, v, _contents(v, depth - 1)) for k, v in fields.items())
    return ()


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:
        return None


def _owners() -> list:
    """What the grader relies on: its modules and their classes, and (once imported: importing the grader
    imports neither) torch, ``torch.Tensor``, numpy, builtins and the Triton classes it hooks."""
    import builtins

    owners = [m for name, m in sorted(sys.modules.items())
              if m is not None and (name == "gpuperf.grading" or name.startswith("gpuperf.grading."))]
    owners += [v for m in list(owners) for v in vars(m).values()
               if isinstance(v, type) and getattr(v, "__module__", "").startswith("gpuperf.grading")]
    owners.append(builtins)
    # (the course's solution modules are checked apart, against what each defined: _solutions_rebound)
    torch, numpy = sys.modules.get("torch"), sys.modules.get("numpy")
    if torch is not None and hasattr(torch, "Tensor"):
        owners += [torch, torch.Tensor, torch.autograd]
    if numpy is not None:
        owners.append(numpy)
    # the modules whose functions the float64 references and the bounds call, and the module whose
    # create_function_from_signature makes the launch binders the watch recognises
    owners += [m for m in (sys.modules.get(name) for name in REFERENCE_MODULES + ("triton.runtime.jit",))
               if m is not None]
    for module, names in (("triton.runtime.interpreter", ("InterpretedFunction", "GridExecutor",
                                                          "InterpreterBuilder")),
                          ("triton.runtime.jit", ("JITFunction",)),
                          ("triton.runtime.autotuner", ("Autotuner", "Heuristics"))):
        m = sys.modules.get(module)
        owners += [getattr(m, n) for n in names if m is not None and hasattr(m, n)]
    return owners


#: The course's solution modules (and their package): their functions pinned as each was imported
#: (``gpuperf.labs._PINNED``), a rebinding reported by :func:`_solutions_rebound`.
SOLUTION_MODULES = ("gpuperf.kernels.labs", "gpuperf.labs.solutions")

#: Modules whose functions the grader's references, bounds and reports call (besides torch, torch.Tensor and
#: numpy): in the import-time baseline and in the in-call integrity snapshot.
REFERENCE_MODULES = ("math", "torch.nn.functional", "torch.linalg", "torch.special")

_BASELINE: dict = {}

#: Builtins a notebook host rebinds by itself (ipykernel swaps ``input`` on every cell it runs, so that the
#: kernel can ask the front end; ``sys.displayhook`` sets ``_``; IPython adds ``display``, ``get_ipython``,
#: ``exit``, ``quit``): rebinding them is not tampering, and none of them computes anything graded.
_HOST_BUILTINS = frozenset(("input", "raw_input", "_", "exit", "quit", "help", "display", "get_ipython"))


def take_baseline() -> None:
    """Record what the grader relies on when :mod:`gpuperf.grading` is imported (from its files on disk), and
    add torch, numpy and Triton the first time they are seen imported: a patch applied in a later cell
    cannot become the baseline of :func:`changed_since_import`. A function of torch, numpy or Triton whose
    code comes from another file is reported even when it was patched before the baseline was taken."""
    for owner in _owners():
        if id(owner) not in _BASELINE:
            _BASELINE[id(owner)] = (owner, _callables_of(owner))


def _home(owner) -> str:
    """The directory a torch, numpy or Triton owner's Python functions must come from ("" for no check)."""
    module = owner if isinstance(owner, type(sys)) else sys.modules.get(getattr(owner, "__module__", ""))
    name = getattr(module, "__name__", "")
    if name.split(".")[0] not in ("torch", "numpy", "triton"):
        return ""
    top = sys.modules.get(name.split(".")[0])
    return os.path.dirname(os.path.abspath(getattr(top, "__file__", "") or "")) + os.sep


def _foreign(filename: str, home: str) -> bool:
    """Code of a library's function that comes from neither the library nor an installed package (a
    notebook cell's patch)."""
    filename = os.path.abspath(filename)
    return not (filename.startswith(home) or _is_trusted_file(filename) or _installed_path(filename))


def changed_since_import() -> list[str]:
    """Names the grader relies on that were rebound (or whose code, defaults or closure changed) since
    :func:`take_baseline`, and functions of torch, Triton or numpy replaced by code from another file."""
    take_baseline()
    changed = []
    for owner, before in list(_BASELINE.values()):
        now = _callables_of(owner)
        label = getattr(owner, "__name__", str(owner))
        home = _home(owner)
        for name, ident in before.items():
            if label == "builtins" and name in _HOST_BUILTINS:
                continue
            if name not in now:
                changed.append(f"{label}.{name} (deleted)")
                continue
            code = now[name][1] if len(now[name]) > 1 else None
            if home and code is not None and _foreign(code.co_filename, home):
                changed.append(f"{label}.{name} (code from {code.co_filename})")
                continue
            if label == "math" and code is not None:  # math's functions are all built in
                changed.append(f"math.{name} (code from {code.co_filename})")
                continue
            if now[name][0] is ident[0] and now[name] == ident:
                continue
            if _rewrapped(now[name][0], ident[0]):
                continue
            changed.append(f"{label}.{name}")
        if getattr(owner, "__name__", "").startswith("gpuperf.grading") or (isinstance(owner, type) and home):
            # a name added to a class shadows what the class inherits (torch.Tensor.sum over TensorBase's)
            changed += [f"{label}.{name} (added)" for name in now if name not in before
                        and not name.startswith("__")]
    return changed + _solutions_rebound(changed) + _builtins_under_other_names()


def _solutions_rebound(changed: list[str]) -> list[str]:
    """The course's solution functions rebound in their modules since the modules defined them
    (``gpuperf.labs._PINNED``), whether those modules were imported before the grader or after it, or whose code
    was swapped in place. A reload of an unchanged module (``importlib.reload``, ``%autoreload``) is not a
    rebinding: it pins the functions it defines again, with code equal to the pinned (:func:`gpuperf.labs.
    pin_solutions`); a reload of an edited module pins nothing, and its new functions are reported here."""
    labs = sys.modules.get("gpuperf.labs")
    pinned = getattr(labs, "_PINNED", {})
    out = []
    for key in list(pinned):
        module, _, name = key.partition(":")
        owner = sys.modules.get(module)
        label = f"{module}.{name}"
        if owner is None or label in changed:
            continue
        # a reload of the unchanged module defines the same functions again (gpuperf.labs.pin_solutions)
        if not labs.is_pinned(key, getattr(owner, name, None)) or labs.pinned_code_changed(key):
            out.append(label)
    return out


def _builtins_under_other_names() -> list[str]:
    """Built-ins that are not what their name says, found whenever the grader checks (a swap made before
    :mod:`gpuperf.grading` was imported is in the baseline, where identity cannot see it): a built-in method
    in ``torch.Tensor``'s own namespace must be ``TensorBase``'s method of that name (``TensorBase`` cannot be
    patched) or an alias that torch's own file sets (``__abs__ = _C.TensorBase.abs``); a built-in function of
    torch or of a module the references use (:data:`REFERENCE_MODULES`) may not carry the name of another of
    the module's functions. (``torch.Tensor.abs = torch.Tensor.zero_`` zeroes every ``|x|`` of a tolerance.)"""
    torch = sys.modules.get("torch")
    out = []
    if torch is not None and hasattr(torch, "Tensor"):
        base = getattr(torch._C, "TensorBase", None) or getattr(torch._C, "_TensorBase", None)
        aliases = _tensor_aliases(getattr(sys.modules.get("torch._tensor"), "__file__", None))
        home = _home(torch.Tensor)
        for name, value in list(vars(torch.Tensor).items()):
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            kind = type(value).__name__
            if isinstance(value, property):  # its functions' code must be torch's (a Python function's is
                codes = [getattr(f, "__code__", None) for f in (value.fget, value.fset, value.fdel)]  # checked
                if home and any(c is not None and _foreign(c.co_filename, home) for c in codes):  # elsewhere)
                    out.append(f"torch.Tensor.{name} (a property with code from another file)")
                continue
            if isinstance(value, type) or hasattr(value, "__code__") or kind in _SLOTS or \
                    not (callable(value) or hasattr(type(value), "__get__")):
                continue
            own = getattr(value, "__name__", None)
            if kind not in _BUILT_IN_METHODS:  # a partial, a partialmethod, an object with __call__ or __get__
                out.append(f"torch.Tensor.{name} (a {kind}, not one of torch's methods)")
            elif not ((own == name and base is not None and getattr(base, name, None) is value)
                      or (name, own) in aliases):
                out.append(f"torch.Tensor.{name} (is {own}, not torch's {name})")
    for module in (sys.modules.get(name) for name in ("torch",) + REFERENCE_MODULES):
        namespace = vars(module) if module is not None else {}
        for name, value in list(namespace.items()):
            own = getattr(value, "__name__", None)
            if name.startswith("__") or not callable(value) or isinstance(value, type) or \
                    hasattr(value, "__code__") or not isinstance(own, str) or own.lstrip("_") == name.lstrip("_"):
                continue
            if callable(namespace.get(own)):  # one of the module's own built-ins put in another's place
                out.append(f"{module.__name__}.{name} (is {module.__name__}.{own})")
    return out


_ALIASES: dict = {}
_BUILT_IN_METHODS = frozenset(("method_descriptor", "builtin_function_or_method", "wrapper_descriptor",
                               "method-wrapper", "classmethod_descriptor"))
_SLOTS = frozenset(("getset_descriptor", "member_descriptor"))


def _tensor_aliases(filename) -> frozenset:
    """``(name, method)`` for each line ``name = _C.TensorBase.method`` (or ``_C.method``) of the class body in
    torch's ``_tensor.py``, read from disk once: the built-ins torch itself puts under another name."""
    import re

    if filename not in _ALIASES:
        try:
            with open(filename, encoding="utf-8") as f:
                text = f.read()
        except (OSError, TypeError):
            text = ""
        pattern = r"^\s+(\w+)\s*=\s*_C\.(?:_?TensorBase\.)?(\w+)\s*$"
        _ALIASES[filename] = frozenset(re.findall(pattern, text, re.M))
    return _ALIASES[filename]


def _rewrapped(new, old) -> bool:
    """torch wraps a few of its functions on first use (``functools.wraps``): the same function underneath."""
    for _ in range(8):
        new = getattr(new, "__wrapped__", None)
        if new is None:
            return False
        if new is old:
            code = getattr(new, "__code__", None)
            return code is None or _is_trusted_file(code.co_filename)
    return False
