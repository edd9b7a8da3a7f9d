"""Launching compiled Triton kernels with little host time (private to the kernel wrappers).

``kernel[grid](*args, **options)`` makes Triton bind the arguments to the kernel's parameters, build a
specialisation key (a string) from every argument and look the compiled kernel up, on every call: about
10-15 us of Python per launch on Triton 3.6, more than a small kernel runs. :func:`launch` does that work
once per *launch key* and then calls the compiled kernel's own launcher (``CompiledKernel[grid](*args)``,
the path Triton itself ends in).

The launch key must never be coarser than Triton's specialisation, or a kernel compiled for one argument
set would run on another it is wrong for: Triton specialises an integer on whether it equals 1, is a
multiple of 16 and fits 32 bits, a tensor on its dtype and the 16-byte alignment of its address, a tensor
descriptor on its dtype and block shape. The key holds the *exact* value of every integer, float, bool and
string argument, the dtype and alignment of every tensor, the dtype, block shape, rank and padding of every
descriptor, the launch options and the current device: always finer than Triton's, so a key maps to one
compiled kernel. Its cost: one cache entry per distinct integer value seen (shapes), and a first call per
entry through Triton's own path. An argument of any other type takes Triton's path every time.

Under the Triton interpreter (an ``InterpretedFunction``, not a ``JITFunction``) every launch takes
Triton's path; the interpreter has no launcher to call.

A cached launch goes one step further than ``CompiledKernel[grid](*args)``: that call builds a closure,
asks for launch metadata (only profilers' hooks use it) and lets the launcher object allocate scratch
memory before it calls the C function that launches. A :class:`Launcher` calls that C function directly
when no launch hook is installed and the kernel needs no scratch memory, and the launcher object otherwise
(on the H200, Triton 3.6: 6.3 us for the C call against 12.3 us for ``CompiledKernel[grid]``,
``bench/profiles/host_probe_h200.json``). On a Triton whose compiled kernels lack those attributes it falls
back to ``CompiledKernel[grid]``.
"""

from __future__ import annotations

import torch
import triton

try:  # the calls Triton's own launch makes for the current device and stream (torch's C bindings)
    _current_device = torch._C._cuda_getDevice
    _current_stream = torch._C._cuda_getCurrentRawStream
except AttributeError:  # pragma: no cover - a torch without them
    _current_device = None
    _current_stream = None

#: Launch key -> compiled kernel. Cleared when it grows past :data:`MAX_ENTRIES` (a new shape per call
#: would otherwise grow it without bound).
_CACHE: dict = {}
MAX_ENTRIES = 4096

_JIT_TYPES: tuple = ()

#: The Triton versions whose launcher signatures this module was written against and tested with (the C
#: launch's arguments, ``CudaLauncher``'s attributes, ``wrap_handle_tensordesc``'s closure: Triton 3.6's
#: ``backends/nvidia/driver.py``). On any other version a :class:`Launcher` takes the compiled kernel's own
#: call, which every version keeps.
VERIFIED_TRITON = ("3.6",)
_SIGNATURES_VERIFIED = ".".join(triton.__version__.split(".")[:2]) in VERIFIED_TRITON

#: Triton's runtime knobs: a launch hook installed there (a profiler such as Proton) sends every launch
#: through Triton's own call, which passes the hooks their metadata.
_RUNTIME = triton.knobs.runtime if hasattr(triton, "knobs") else type("_NoKnobs", (), {
    "launch_enter_hook": None, "launch_exit_hook": None})


def _jit_types() -> tuple:
    global _JIT_TYPES
    if not _JIT_TYPES:
        from triton.runtime.jit import JITFunction

        _JIT_TYPES = (JITFunction,)
    return _JIT_TYPES


def _compiled_type():
    from triton.compiler import CompiledKernel

    return CompiledKernel


class _Unkeyable(Exception):
    pass


def _arg_key(a):
    cls = a.__class__
    if cls is int or cls is str:
        return a
    if cls is bool:  # True == 1 and hashes alike, but Triton types them apart
        return (bool, a)
    if cls is float:
        return (float, a)  # 1.0 and 1 compile differently: keep the type with the value
    if cls is torch.Tensor or isinstance(a, torch.Tensor):
        return (a.dtype, a.data_ptr() % 16 == 0)
    if a is None:
        return None
    block = getattr(a, "block_shape", None)
    if block is not None and hasattr(a, "base"):  # triton.tools.tensor_descriptor.TensorDescriptor
        return ("desc", a.base.dtype, tuple(block), len(a.shape), getattr(a, "padding", None))
    if cls is torch.dtype:
        return a
    raise _Unkeyable


def launch_key(kernel, args: tuple, options: tuple):
    """The cache key of one launch (see the module docstring); None when an argument cannot be keyed."""
    try:
        return (kernel, _current_device(), options, *[_arg_key(a) for a in args])
    except _Unkeyable:
        return None


class Launcher:
    """One compiled kernel and the cheapest way to launch it again: ``launcher(grid3, stream, args)``.

    ``grid3`` is a 3-tuple, ``stream`` the raw CUDA stream (``torch.cuda.current_stream().cuda_stream``),
    ``args`` every parameter of the kernel in order, as for :func:`launch`. ``compiled`` is Triton's
    compiled kernel (``n_regs``, ``n_spills``, ``metadata``)."""

    __slots__ = ("compiled", "_c_launch", "_run", "_function", "_coop", "_pdl", "_meta", "_direct", "_raw",
                 "_desc_idx", "_desc_meta", "_desc_cache", "_make_desc_arg")

    def __init__(self, compiled):
        self.compiled = compiled
        self._direct = False
        self._run = None
        try:  # Triton 3.6 (python/triton/backends/nvidia/driver.py, CudaLauncher)
            if not _SIGNATURES_VERIFIED:
                raise AttributeError("a Triton whose launcher this module has not been checked against")
            run = compiled.run
            self._function = compiled.function
            self._meta = compiled.packed_metadata
            self._c_launch = run.launch
            self._coop = run.launch_cooperative_grid
            self._pdl = run.launch_pdl
            self._run = run
            self._direct = run.global_scratch_size == 0 and run.profile_scratch_size == 0
        except AttributeError:  # another Triton: its own compiled-kernel call
            self._run = None
        self._raw = None
        self._desc_cache = {}
        if self._direct:
            self._find_raw_launch()

    def _find_raw_launch(self) -> None:
        """For a kernel with host tensor descriptors, Triton 3.6 wraps the C launch in a function that turns
        each descriptor into its encoded tensor map (``wrap_handle_tensordesc``); find the C launch inside it
        and how each descriptor is encoded, so :meth:`launch_described` can encode each once per address."""
        wrapped = self._c_launch
        code = getattr(wrapped, "__code__", None)
        if code is None or not wrapped.__closure__:
            return
        cells = {name: cell.cell_contents for name, cell in zip(code.co_freevars, wrapped.__closure__)}
        try:
            from triton.backends.nvidia.driver import make_tensordesc_arg
        except ImportError:  # pragma: no cover - another Triton
            return
        if {"launcher", "tensordesc_indices", "tensordesc_meta"} <= set(cells):
            self._raw = cells["launcher"]
            self._desc_idx = frozenset(cells["tensordesc_indices"])
            self._desc_meta = list(cells["tensordesc_meta"])
            self._make_desc_arg = make_tensordesc_arg

    def launch_described(self, grid3: tuple, stream, args: tuple) -> None:
        """Launch a kernel that takes host tensor descriptors, each given in ``args`` as a :class:`Desc`.

        A descriptor's encoding (its CUDA tensor map: about 1 us, plus Triton's Python around it) is kept per
        (position, address, shape, strides), so a call on the same tensors, or on a fresh output that the
        caching allocator placed where the last one was, reuses it; anything else encodes as Triton does."""
        if self._raw is None or not (_no_hook(_RUNTIME.launch_enter_hook)
                                     and _no_hook(_RUNTIME.launch_exit_hook)):
            self(grid3, stream, tuple(a.descriptor() if a.__class__ is Desc else a for a in args))
            return
        flat = []
        j = 0
        cache = self._desc_cache
        for i, a in enumerate(args):
            if i in self._desc_idx:
                meta = self._desc_meta[j]
                if meta is None:  # not lowered to a tensor map: the pointer itself goes in (never cached)
                    flat.extend(self._make_desc_arg(a.listed(), meta))
                else:
                    key = (j, a.base.data_ptr(), a.shape, a.strides)
                    enc = cache.get(key)
                    if enc is None:  # the encoding holds the address, shape and strides, not the tensor
                        if len(cache) >= 256:
                            cache.clear()
                        enc = cache[key] = tuple(self._make_desc_arg(a.listed(), meta))
                    flat.extend(enc)
                j += 1
            else:
                flat.append(a)
        self._raw(grid3[0], grid3[1], grid3[2], stream, self._function, self._coop, self._pdl, None, None,
                  self._meta, None, None, None, *flat)

    # listing: launcher-call
    def __call__(self, grid3: tuple, stream, args: tuple) -> None:
        runtime = _RUNTIME
        if _no_hook(runtime.launch_enter_hook) and _no_hook(runtime.launch_exit_hook):
            if self._direct:
                self._c_launch(grid3[0], grid3[1], grid3[2], stream, self._function,
                               self._coop, self._pdl, None, None, self._meta,
                               None, None, None, *args)
                return
            if self._run is not None:
                # the launcher object allocates the kernel's scratch memory
                self._run(grid3[0], grid3[1], grid3[2], stream, self._function,
                          self._meta, None, None, None, *args)
                return
        # hooks installed (a profiler): Triton's own call, which passes them metadata
        self.compiled[grid3](*args, stream=stream)
    # end listing: launcher-call


class Desc:
    """A host tensor descriptor as :meth:`Launcher.launch_described` takes it: ``base`` (a contiguous
    tensor), ``shape`` and ``strides`` (tuples, in elements), ``block_shape``; what Triton's encoder reads
    (``padding`` "zero"). :meth:`descriptor` makes Triton's own ``TensorDescriptor`` of it."""

    __slots__ = ("base", "shape", "strides", "block_shape")
    padding = "zero"

    def __init__(self, base, shape: tuple, strides: tuple, block_shape: list):
        self.base, self.shape, self.strides, self.block_shape = base, shape, strides, block_shape

    def listed(self) -> "Desc":
        """The same descriptor with list shape and strides (what Triton's encoder was written for)."""
        return Desc(self.base, list(self.shape), list(self.strides), list(self.block_shape))

    def descriptor(self):
        from triton.tools.tensor_descriptor import TensorDescriptor

        return TensorDescriptor(self.base, list(self.shape), list(self.strides), list(self.block_shape))


def _no_hook(hook) -> bool:
    """True when ``hook`` calls nothing: None, or Triton's empty ``HookChain`` (its default since 3.5)."""
    return hook is None or (hook.__class__.__name__ == "HookChain" and not hook.calls)


def _grid3(grid: tuple) -> tuple:
    if len(grid) == 3:
        return grid
    return (grid[0], grid[1] if len(grid) > 1 else 1, grid[2] if len(grid) > 2 else 1)


def _launch_cached(kernel, grid: tuple, args: tuple, options: tuple):
    """Launch once, through the cached :class:`Launcher` of the launch key when there is one, else through
    Triton's own call (which compiles or looks up the kernel); returns ``(launcher or None, what Triton's
    launch returned)``. The launcher is None under the interpreter or for arguments that cannot be keyed."""
    if _current_stream is None or not isinstance(kernel, _jit_types()):
        return None, kernel[grid](*args, **dict(options))
    key = launch_key(kernel, args, options)
    entry = _CACHE.get(key) if key is not None else None
    if entry is None:
        compiled = kernel[grid](*args, **dict(options))
        if key is None or not isinstance(compiled, _compiled_type()):
            return None, compiled
        if len(_CACHE) >= MAX_ENTRIES:
            _CACHE.clear()
        entry = _CACHE[key] = Launcher(compiled)
        return entry, compiled
    entry(_grid3(grid), _current_stream(key[1]), args)
    return entry, entry.compiled


def launcher(kernel, grid: tuple, args: tuple, options: tuple = ()):
    """Launch like :func:`launch` and return the :class:`Launcher` that relaunches the same compiled kernel
    (None under the interpreter or when the arguments cannot be keyed).

    A wrapper that keeps it per shape (its *plan*) may call it again with new tensors of the same dtype
    and 16-byte alignment and the same values of every other argument: the launch key would be the same."""
    return _launch_cached(kernel, grid, args, options)[0]


#: Launch key (:func:`launch_key`, read from the :class:`Desc` arguments) -> the :class:`Launcher` of a launch
#: with host descriptors (:func:`launch_described`).
_DESC_LAUNCHERS: dict = {}


def launch_described(kernel, grid: tuple, args: tuple, options: tuple = ()) -> None:
    """:func:`launch` for a kernel whose ``args`` may hold :class:`Desc` host descriptors: the first launch of a
    key through Triton (each ``Desc`` as Triton's ``TensorDescriptor``), later ones through the launcher's
    :meth:`Launcher.launch_described`, which encodes a descriptor's tensor map once per address. Triton's own
    encoding on every call cost about 100 us of host time a launch on an H100 (bench/NOTES.md, the fifteenth
    session's probe of the split-K matmul): more than a small kernel runs."""
    if not any(a.__class__ is Desc for a in args):  # no descriptors: the usual cached launch
        _launch_cached(kernel, grid, args, options)
        return
    interpreted = _current_stream is None or not isinstance(kernel, _jit_types())
    key = None if interpreted else launch_key(kernel, args, options)
    entry = _DESC_LAUNCHERS.get(key) if key is not None else None
    if entry is not None:
        entry.launch_described(_grid3(grid), _current_stream(key[1]), args)
        return
    plain = tuple(a.descriptor() if a.__class__ is Desc else a for a in args)
    entry = _launch_cached(kernel, grid, plain, options)[0]
    if entry is not None and key is not None:
        if len(_DESC_LAUNCHERS) >= MAX_ENTRIES:
            _DESC_LAUNCHERS.clear()
        _DESC_LAUNCHERS[key] = entry


def launch(kernel, grid: tuple, args: tuple, options: tuple = ()):
    """``kernel[grid](*args, **dict(options))`` with Triton's per-call work done once per launch key.

    ``args`` holds every parameter of the kernel in order, ``tl.constexpr`` ones included (positionally, as
    Triton's launcher takes them); ``options`` is a tuple of ``(name, value)`` launch options
    (``num_warps``, ``num_stages``, ``maxnreg``, ...), in the same order at every call site. Returns
    Triton's compiled kernel (``n_regs``, ``n_spills``, ``metadata``), or under the interpreter whatever
    Triton's launch returns.
    """
    return _launch_cached(kernel, grid, args, options)[1]


def current_stream(device_index: int):
    """The raw CUDA stream current on ``device_index`` (what Triton's own launch asks torch for)."""
    return _current_stream(device_index)


def clear() -> None:
    """Forget every cached launch (the next launch of each key takes Triton's path again)."""
    _CACHE.clear()


_SCRATCH: dict = {}


def scratch_allocator(size: int, alignment: int, stream):
    """Triton's allocator for the global scratch memory of in-kernel tensor descriptors: one buffer per
    (device, stream), grown when a launch needs more, instead of a fresh ``torch.empty`` per launch.

    Safe because launches on one stream run one after another: the next launch that reuses the buffer
    starts after the last one that wrote its descriptors there has finished (the same reuse torch's caching
    allocator makes of a buffer freed after the launch)."""
    try:
        device = _current_device()
    except Exception:  # noqa: BLE001 - a CPU build of torch, or a CUDA build on a machine without a GPU
        device = None
    key = (device, stream)
    buf = _SCRATCH.get(key)
    if buf is not None and buf.numel() >= size:  # the usual call: the buffer is there and large enough
        return buf
    if device is None or not torch.cuda.is_available():  # the interpreter: host memory
        return torch.empty(size, dtype=torch.int8)
    if buf is None or buf.numel() < size:
        buf = torch.empty(max(size, 1 << 16), dtype=torch.int8, device=f"cuda:{device}")
        _SCRATCH[key] = buf
    return buf


_ALLOCATOR_SET = False


def ensure_scratch_allocator() -> None:
    """Install :func:`scratch_allocator` as Triton's allocator (once)."""
    global _ALLOCATOR_SET
    if not _ALLOCATOR_SET:
        triton.set_allocator(scratch_allocator)
        _ALLOCATOR_SET = True
