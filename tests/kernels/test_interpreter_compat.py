"""gpuperf.kernels fixes Triton 3.6's interpreter under NumPy 2.4+ (``int()`` of a one-element array)."""

from __future__ import annotations

import types

import numpy as np
import pytest

from gpuperf.kernels import _interpreter_compat as compat


class _Scope:
    def __init__(self):
        self.changes = []

    def set_attr(self, obj, name, value):
        self.changes.append((obj, name, getattr(obj, name, None)))
        setattr(obj, name, value)


def test_the_index_of_a_one_element_array_is_its_element():
    handle = types.SimpleNamespace(data=np.array([7], dtype=np.int32))
    assert compat._index(types.SimpleNamespace(handle=handle)) == 7
    handle = types.SimpleNamespace(data=np.array(5, dtype=np.int64))
    assert compat._index(types.SimpleNamespace(handle=handle)) == 5


def test_apply_patches_a_faulty_interpreter_once(monkeypatch, tmp_path):
    """A stand-in for Triton 3.6's interpreter module, with the faulty conversion in its source: patched once;
    the patched installer leaves an __index__ that reads a (1,)-shaped array, and the scope can undo it."""
    import importlib.util

    import triton.runtime

    path = tmp_path / "faulty_interpreter.py"
    path.write_text("def _patch_lang_tensor(tensor, scope):\n"
                    "    scope.set_attr(tensor, '__index__', lambda self: int(self.handle.data))\n")
    spec = importlib.util.spec_from_file_location("faulty_interpreter", path)
    fake = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fake)
    monkeypatch.setattr(triton.runtime, "interpreter", fake, raising=False)
    monkeypatch.setitem(__import__("sys").modules, "triton.runtime.interpreter", fake)
    assert not compat.is_fixed()
    assert compat.apply() is True and compat.is_fixed()
    assert compat.apply() is False  # once

    class Tensor:
        def __init__(self, data):
            self.handle = types.SimpleNamespace(data=data)

    scope = _Scope()
    fake._patch_lang_tensor(Tensor, scope)
    assert [name for _, name, _ in scope.changes] == ["__index__", "__index__"]
    assert range(10)[Tensor(np.array([3], dtype=np.int32))] == 3  # int() of the array would raise on NumPy 2.4+


def test_the_installed_interpreter_is_fixed_after_import():
    import gpuperf.kernels  # noqa: F401  (applies the fix)

    assert compat.is_fixed()
    assert compat.apply() is False  # a second call changes nothing
