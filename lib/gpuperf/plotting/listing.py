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


def _drop_docstring(text: str) -> list[str]:
    """The lines of `text` (one function's dedented source) without the function's docstring."""
    import ast

    lines = text.splitlines()
    try:
        tree = ast.parse(text)
    except SyntaxError:  # a region that is not a whole statement: keep it as it is
        return lines
    func = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is None or ast.get_docstring(func) is None:
        return lines
    doc = func.body[0]
    return lines[:doc.lineno - 1] + lines[doc.end_lineno:]


def source_diff(old, new, old_region: str | None = None, new_region: str | None = None,
                docstrings: bool = False) -> str:
    """The lines in which two functions' sources (or regions, :func:`source_region`) differ, as a
    unified diff without context lines: ``-`` lines of `old`, ``+`` lines of `new`, an ``@@`` line
    before each change. Docstrings are left out unless `docstrings`. Pure: returns text."""
    import difflib

    a, b = source_region(old, old_region), source_region(new, new_region)
    a, b = (a.splitlines(), b.splitlines()) if docstrings else (_drop_docstring(a), _drop_docstring(b))
    diff = difflib.unified_diff(a, b, n=0, lineterm="")
    return "\n".join(line for line in diff if not line.startswith(("---", "+++")))


def show_diff(old, new, old_region: str | None = None, new_region: str | None = None):
    """A highlighted :func:`source_diff` for a notebook cell (``IPython.display.Code``, diff syntax)."""
    from IPython.display import Code

    return Code(source_diff(old, new, old_region, new_region), language="diff")
