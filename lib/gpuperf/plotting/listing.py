"""Show a kernel's own source on a page, so the listing cannot drift from the code that was measured.

A chapter that teaches a kernel reads its core straight from the library with :func:`source_region`
(pure: returns text) and renders it with :func:`show_source` (a highlighted ``IPython.display.Code``,
which Jupyter, Colab and the static site all render). A region is delimited in the module by two
comment lines::

    # listing: inner-loop
    ...the lines a chapter shows...
    # end listing: inner-loop

The marker lines themselves are never shown. Works on plain functions and on ``@triton.jit`` kernels
(whose ``.fn`` is the Python function), and on files: :func:`bench_file` names a CUDA C file of the
repository's ``bench/`` folder (or a script whose kernels are CUDA source in a string), whose regions are
delimited the C way::

    // listing: stream_read
    extern "C" __global__ void stream_read(...) { ... }
    // end listing: stream_read

and shown highlighted as ``cuda``. ``bench/`` is not part of the installed package: where it is absent (a
``pip install`` from git, as on Colab) :func:`show_source` says so and links the file in the repository
instead of failing. Importing this module imports neither torch nor triton.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

_START = re.compile(r"^\s*(?P<mark>#|//)\s*listing:\s*(?P<name>[\w.-]+)\s*$")
_END = re.compile(r"^\s*(?P<mark>#|//)\s*end listing:\s*(?P<name>[\w.-]+)\s*$")

#: The repository's ``bench/`` folder (present in a clone or an editable install, absent from a wheel).
BENCH_DIR = Path(__file__).resolve().parents[3] / "bench"

#: Where the course's repository is browsed (``repository.url`` and ``branch`` of ``_config.yml``; a test
#: checks both): a listing of a bench file that is not installed links there.
REPOSITORY_URL = "https://github.com/gpuperf-course/gpu-performance-first-principles"
REPOSITORY_BRANCH = "main"

#: File suffixes whose regions are shown highlighted as CUDA C.
_CUDA_SUFFIXES = (".cu", ".cuh")


@dataclass(frozen=True)
class BenchFile:
    """A file of the repository's ``bench/`` folder, named relative to it (``"part1_kernels.cu"``)."""

    name: str

    @property
    def path(self) -> Path:
        return BENCH_DIR / self.name

    @property
    def url(self) -> str:
        return f"{REPOSITORY_URL}/blob/{REPOSITORY_BRANCH}/bench/{self.name}"


def bench_file(name: str) -> BenchFile:
    """Name a file of ``bench/`` for :func:`source_region` / :func:`show_source` (``"part1_kernels.cu"``).

    Raises ValueError for a name that is empty, absolute or leaves the folder; the file itself need not be
    present (see :func:`show_source`)."""
    if not isinstance(name, str) or not name or Path(name).is_absolute() or ".." in Path(name).parts:
        raise ValueError(f"name must be a file name inside bench/, got {name!r}")
    return BenchFile(name)


def _regions_of_lines(lines: list[str], region: str | None, where: str) -> tuple[list[str], str | None]:
    """The lines of one region (markers of every region dropped) and the marker style it used."""
    mark = None
    if region is not None:
        starts = [i for i, line in enumerate(lines) if (m := _START.match(line)) and m["name"] == region]
        ends = [i for i, line in enumerate(lines) if (m := _END.match(line)) and m["name"] == region]
        if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
            raise ValueError(
                f"region: {region!r} needs exactly one 'listing: {region}' line followed by one "
                f"'end listing: {region}' line (after '#' or '//') in {where} "
                f"(found {len(starts)} start and {len(ends)} end markers)")
        mark = _START.match(lines[starts[0]])["mark"]
        lines = lines[starts[0] + 1:ends[0]]
    kept = [line for line in lines if not (_START.match(line) or _END.match(line))]
    return kept, mark


def _python_function(obj):
    """The plain Python object behind a Triton JITFunction (``.fn``), or the object itself."""
    inner = getattr(obj, "fn", None)
    return inner if inner is not None and (inspect.isfunction(inner) or inspect.ismethod(inner)) else obj


def source_region(obj, region: str | None = None) -> str:
    """The dedented source of `obj` (a function, jitted kernel, module or :func:`bench_file`), or of one
    named region in it.

    Marker lines (``# listing: NAME`` / ``# end listing: NAME``, or the same after ``//``) of any region
    are dropped from the text. Raises ValueError naming the region when it is missing, unclosed or given
    twice, and FileNotFoundError naming the file when a bench file is not here.
    """
    if isinstance(obj, BenchFile):
        if not obj.path.is_file():
            raise FileNotFoundError(f"bench/{obj.name} is not here (bench/ is not installed with the package; "
                                    f"it is in the repository: {obj.url})")
        lines, _mark = _regions_of_lines(obj.path.read_text().splitlines(), region, f"bench/{obj.name}")
        return textwrap.dedent("\n".join(lines)).strip("\n")
    target = _python_function(obj)
    try:
        lines = inspect.getsource(target).splitlines()
    except (TypeError, OSError) as exc:
        raise ValueError(f"obj: no Python source for {obj!r} ({exc})") from None
    lines, _mark = _regions_of_lines(lines, region, repr(getattr(target, "__qualname__", target)))
    return textwrap.dedent("\n".join(lines)).strip("\n")


def source_language(obj, region: str | None = None) -> str:
    """How :func:`show_source` highlights `obj`'s listing: ``"cuda"`` for a ``.cu`` file, or for a region
    delimited with ``//`` markers (CUDA source held in a Python string); ``"python"`` otherwise."""
    if isinstance(obj, BenchFile):
        if Path(obj.name).suffix in _CUDA_SUFFIXES:
            return "cuda"
        if region is not None and obj.path.is_file():
            _lines, mark = _regions_of_lines(obj.path.read_text().splitlines(), region, f"bench/{obj.name}")
            return "cuda" if mark == "//" else "python"
    return "python"


def longest_line(text: str) -> int:
    """Characters in the longest line of `text` (a page's code column holds about 90)."""
    return max((len(line) for line in text.splitlines()), default=0)


def show_source(obj, region: str | None = None):
    """A highlighted listing of :func:`source_region` for a notebook cell (``IPython.display.Code``).

    For a bench file that is not here (``bench/`` is not installed with the package: Colab), a Markdown
    note that names the file and region and links it in the repository, rather than an error."""
    from IPython.display import Code, Markdown

    if isinstance(obj, BenchFile) and not obj.path.is_file():
        what = f"`{region}` in " if region else ""
        return Markdown(f"*This listing shows {what}`bench/{obj.name}`, a file of the course's repository "
                        f"that the installed package does not include. Read it on GitHub: "
                        f"[bench/{obj.name}]({obj.url}).*")
    language = source_language(obj, region)
    return Code(wrap_listing(source_region(obj, region), language), language=language)


#: The widest line a listing shows: the site's code column holds 88 characters (tests/test_repository.py).
LISTING_WIDTH = 88


def wrap_listing(text: str, language: str = "python", width: int = LISTING_WIDTH) -> str:
    """`text` with every line longer than `width` broken for the page: a comment line continues as a
    comment, a trailing comment moves above its code, and code breaks at the last space before `width`
    with a deeper indent (and a backslash in Python where no bracket is open). Pure: returns text; the
    library's source is untouched."""
    import textwrap as _tw

    marker = "//" if language in ("cuda", "c", "cpp", "c++") else "#"
    out: list[str] = []
    depth = 0  # brackets open at the start of the line (a rough count: strings are not parsed)

    def opened(code: str) -> int:
        code = code.split(marker, 1)[0]
        return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")

    for line in text.splitlines():
        start_depth, depth = depth, depth + opened(line)
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[:len(line) - len(line.lstrip())]
        body = line.strip()
        if body.startswith(marker):
            words = body[len(marker):].strip()
            out += [f"{indent}{marker} {part}" for part in _tw.wrap(words, width - len(indent) - len(marker) - 1)]
            continue
        code, sep, comment = body.partition(f"  {marker} ")
        if sep and len(indent) + len(code) <= width:
            out += [f"{indent}{marker} {part}" for part in _tw.wrap(comment, width - len(indent) - len(marker) - 1)]
            out.append(indent + code)
            continue
        rest, first, running = body, True, start_depth
        while len(indent) + len(rest) + (0 if first else 4) > width:
            room = width - len(indent) - (0 if first else 4) - 2
            cut = rest.rfind(" ", 0, room)
            if cut <= 0:
                break
            head, rest = rest[:cut], rest[cut + 1:]
            running += opened(head)
            cont = " \\" if language == "python" and running <= 0 else ""
            out.append(f"{indent}{'' if first else '    '}{head}{cont}")
            first = False
        out.append(f"{indent}{'' if first else '    '}{rest}")
    return "\n".join(out)


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
