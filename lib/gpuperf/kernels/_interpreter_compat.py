"""A fix for Triton 3.6's interpreter under NumPy 2.4 and later, applied when ``gpuperf.kernels`` is imported.

Triton 3.6's interpreter gives its tensors an ``__index__`` that calls ``int()`` on the tensor's NumPy array,
which holds one element of shape ``(1,)``. NumPy 2.4 made that conversion an error ("only 0-dimensional arrays
can be converted to Python scalars"), so every kernel whose loop has a runtime bound (``range(0, n, BLOCK)``)
failed under the interpreter: on the H200 machine (NumPy 2.5.2) and anywhere else with that pair. Triton 3.9
reads the element of a squeezed array; :func:`apply` makes Triton 3.6 do the same, by patching the function
that installs those methods, and changes nothing where the source no longer has the faulty conversion.
"""

from __future__ import annotations

import inspect

#: The faulty conversion as it reads in Triton 3.6's ``_patch_lang_tensor``.
FAULTY = "int(self.handle.data)"


def _index(self):
    data = self.handle.data
    return int(data.reshape(-1)[0]) if getattr(data, "size", None) == 1 else int(data)


def apply() -> bool:
    """Patch Triton's interpreter where it has the faulty conversion; True if patched now. Never raises."""
    try:
        from triton.runtime import interpreter
    except Exception:  # no Triton, or one without an interpreter module
        return False
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "_gpuperf_index_fix", False) or not _faulty(original):
        return False

    def _patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", _index)  # undone with the rest when the launch ends

    _patch_lang_tensor._gpuperf_index_fix = True
    interpreter._patch_lang_tensor = _patch_lang_tensor
    return True


def is_fixed() -> bool:
    """True when Triton's interpreter, as installed, converts one-element arrays safely: patched by
    :func:`apply`, or without the faulty conversion (Triton 3.9), or no interpreter at all. Never raises."""
    try:
        from triton.runtime import interpreter
    except Exception:
        return True
    current = getattr(interpreter, "_patch_lang_tensor", None)
    if current is None or getattr(current, "_gpuperf_index_fix", False):
        return True
    return _faulty(current) is False


def _faulty(fn) -> bool | None:
    """Whether ``fn``'s source has the faulty conversion; None where its source cannot be read."""
    try:
        return FAULTY in inspect.getsource(fn)
    except (OSError, TypeError):
        return None
