"""Show a kernel's own source on a page, so the listing cannot drift from the code that was measured.

A chapter that teaches a kernel reads its core straight from the library with :func:`source_region`
(pure: returns text) and renders it with :func:`show_source` (a highlighted ``IPython.display.Code``,
which Jupyter, Colab and the static site all render). A region is delimited in the module by two
comment lines::

    # listing: inner-loop
    ...the lines a chapter shows...
    # end listing: inner-loop

The marker lines themselves are never shown. Works on plain functions and on ``@triton.jit`` kernels
(whose ``.fn`` is the Python function). Importing this module imports neither torch nor triton.
"""

from __future__ import annotations

import inspect
import re
import textwrap

_START = re.compile(r"^\s*#\s*listing:\s*(?P<name>[\w.-]+)\s*$")
_END = re.compile(r"^\s*#\s*end listing:\s*(?P<name>[\w.-]+)\s*$")


def _python_function(obj):
    """The plain Python object behind a Triton JITFunction (``.fn``), or the object itself."""
    inner = getattr(obj, "fn", None)
    return inner if inner is not None and (inspect.isfunction(inner) or inspect.ismethod(inner)) else obj


def source_region(obj, region: str | None = None) -> str:
    """The dedented source of `obj` (a function, jitted kernel or module), or of one named region in it.

    Marker lines (``# listing: NAME`` / ``# end listing: NAME``) of any region are dropped from the text.
    Raises ValueError naming the region when it is missing, unclosed or given twice.
    """
    target = _python_function(obj)
    try:
        lines = inspect.getsource(target).splitlines()
    except (TypeError, OSError) as exc:
        raise ValueError(f"obj: no Python source for {obj!r} ({exc})") from None
    if region is not None:
        starts = [i for i, line in enumerate(lines) if (m := _START.match(line)) and m["name"] == region]
        ends = [i for i, line in enumerate(lines) if (m := _END.match(line)) and m["name"] == region]
        if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
            raise ValueError(
                f"region: {region!r} needs exactly one '# listing: {region}' line followed by one "
                f"'# end listing: {region}' line in {getattr(target, '__qualname__', target)!r} "
                f"(found {len(starts)} start and {len(ends)} end markers)")
        lines = lines[starts[0] + 1:ends[0]]
    kept = [line for line in lines if not (_START.match(line) or _END.match(line))]
    return textwrap.dedent("\n".join(kept)).strip("\n")


def longest_line(text: str) -> int:
    """Characters in the longest line of `text` (a page's code column holds about 90)."""
    return max((len(line) for line in text.splitlines()), default=0)


def show_source(obj, region: str | None = None):
    """A highlighted listing of :func:`source_region` for a notebook cell (``IPython.display.Code``)."""
    from IPython.display import Code

    return Code(source_region(obj, region), language="python")
