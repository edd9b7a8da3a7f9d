"""Hygiene of the repository: notebooks, table of contents, install cells, import-time dependencies, build config.

Each test names what it protects. To check that a test can fail, break a copy of the repository (e.g. in a
`git clone` under /tmp) the way its docstring or message describes and run this file there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("book/*.ipynb"), *ROOT.glob("labs/*.ipynb")])
PAGES = sorted(ROOT.glob("book/*.md"))
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())


def _ids(paths):
    return [str(p.relative_to(ROOT)) for p in paths]


def _resolve(entry: str) -> Path | None:
    for suffix in ("", ".ipynb", ".md"):
        path = ROOT / f"{entry}{suffix}"
        if path.is_file():
            return path
    return None


def test_there_is_something_to_check():
    assert NOTEBOOKS, "no notebooks found under book/ or labs/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_committed_without_outputs(path):
    nb = json.loads(path.read_text())
    dirty = [
        i for i, cell in enumerate(nb["cells"])
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)
    ]
    assert not dirty, f"{path.name}: code cells {dirty} carry outputs or execution counts; clear them"
    # Saved widget state (often megabytes) and per-cell execution timestamps are outputs too.
    assert "widgets" not in nb.get("metadata", {}), f"{path.name}: notebook metadata holds saved widget state"
    timed = [i for i, cell in enumerate(nb["cells"]) if "execution" in cell.get("metadata", {})]
    assert not timed, f"{path.name}: cells {timed} carry execution timestamps in their metadata"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_valid_nbformat(path):
    """A hand-edited notebook that nbformat rejects breaks nbval, Jupyter Book and Colab alike."""
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)


def test_no_jupytext_twins():
    """The .ipynb is the source: a paired .py/.md twin of a notebook (jupytext) must not be committed."""
    twins = [
        str(p.relative_to(ROOT))
        for folder in ("book", "labs")
        for p in sorted((ROOT / folder).glob("*"))
        if p.suffix in (".py", ".md") and (p.with_suffix(".ipynb").exists() or "jupytext" in p.read_text()[:500])
    ]
    assert not twins, f"notebook twins committed beside the notebooks: {twins}"


def test_every_toc_entry_exists(toc_files):
    missing = [entry for entry in toc_files if _resolve(entry) is None]
    assert not missing, f"_toc.yml lists files that do not exist: {missing}"


def test_every_page_is_in_the_toc(toc_files):
    listed = {_resolve(entry) for entry in toc_files}
    unlisted = [str(p.relative_to(ROOT)) for p in [*NOTEBOOKS, *PAGES] if p not in listed]
    assert not unlisted, f"pages missing from _toc.yml: {unlisted}"


def test_toc_has_no_duplicates(toc_files):
    entries = toc_files
    assert len(entries) == len(set(entries)), f"duplicate _toc.yml entries in {entries}"


def _install_url() -> str:
    url = CONFIG["repository"]["url"].rstrip("/")
    branch = CONFIG["repository"]["branch"]
    assert url.startswith("https://github.com/"), f"repository.url must be a GitHub URL, got {url!r}"
    return f"gpuperf @ git+{url}@{branch}"


def _install_cell_source() -> str:
    """The install cell every notebook opens with (CONTRIBUTING.md), for the repository in _config.yml."""
    return (
        "# Install the course package when it is missing (e.g. on Colab); a local `make book` already has it.\n"
        "import importlib.util, subprocess, sys\n"
        'if importlib.util.find_spec("gpuperf") is None:\n'
        '    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q",\n'
        f'                           "{_install_url()}"])'
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_install_cell_matches_the_repository(path):
    nb = json.loads(path.read_text())
    first = nb["cells"][0]
    source = "".join(first["source"])
    assert first["cell_type"] == "code", f"{path.name}: cell 1 must be the install cell"
    assert "remove-cell" in first.get("metadata", {}).get("tags", []), f"{path.name}: tag cell 1 remove-cell"
    urls = re.findall(r'"(gpuperf @ git\+[^"]+)"', source)
    assert urls == [_install_url()], f"{path.name}: install cell installs {urls}, expected [{_install_url()!r}]"
    # Exactly the agreed cell, nothing more (it installs only when gpuperf is missing, and nothing else).
    assert source.strip() == _install_cell_source(), (
        f"{path.name}: cell 1 differs from the install cell in CONTRIBUTING.md:\n{source}"
    )


#: Pages with a chapter's structure but no exercises: the kernel scoreboard reports measurements.
PAGES_WITHOUT_EXERCISES = {"kernel-scoreboard.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_follows_the_chapter_structure(path):
    nb = json.loads(path.read_text())
    markdown = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    second = nb["cells"][1]
    # The page opens with its title: the install cell is hidden on the site, the imports come after.
    assert second["cell_type"] == "markdown" and "".join(second["source"]).startswith("# "), (
        f"{path.name}: cell 2 must be the title (a markdown cell starting with '# ')"
    )
    assert nb.get("metadata", {}).get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernel"
    third = nb["cells"][2]
    assert third["cell_type"] == "code" and "use_book_style()" in "".join(third["source"]), (
        f"{path.name}: cell 3 must be the imports, calling use_book_style()"
    )
    if path.name.startswith("appendix"):
        return
    for heading in ("What you will learn", "Summary", "References", "Exercises"):
        if heading == "Exercises" and path.name in PAGES_WITHOUT_EXERCISES:
            return
        assert re.search(rf"^#+ .*{heading}", markdown, re.M), f"{path.name}: missing section {heading!r}"
    # Solutions stay collapsed until the reader opens them, on the site, in Colab and in JupyterLab alike:
    # <details><summary>Solution</summary> (a MyST dropdown shows in plain sight in the notebook apps).
    solutions = [c for c in nb["cells"] if c["cell_type"] == "markdown" and "<summary>Solution" in "".join(c["source"])]
    open_ones = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"
                 and re.search(r"\{admonition\}\s*Solution|^#+\s*Solution", "".join(c["source"]), re.M)]
    assert not open_ones, f"{path.name}: cells {open_ones} hold a solution outside <details><summary>Solution</summary>"
    # The code cell that computes a solution hides its output too, or the answer shows under the closed
    # dropdown: `hide-cell`, not `hide-input`.
    cells = nb["cells"]
    leaking = [
        i for i, c in enumerate(cells[:-1])
        if c["cell_type"] == "markdown" and "<summary>Solution" in "".join(c["source"])
        and cells[i + 1]["cell_type"] == "code"
        and "hide-cell" not in cells[i + 1].get("metadata", {}).get("tags", [])
    ]
    assert not leaking, f"{path.name}: the code cells after the solutions in cells {leaking} must be tagged hide-cell"
    assert solutions, f"{path.name}: no exercise solutions"


def _gpuperf_modules() -> list[str]:
    """Every module of the package, found from the files (pkgutil.walk_packages would import the
    subpackages, gpuperf.kernels among them, and so torch, into this process while collecting)."""
    package = ROOT / "lib" / "gpuperf"
    names = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return sorted(names)


# Modules allowed to import torch or triton when imported: the Triton kernels need both.
NEEDS_TORCH = re.compile(r"^gpuperf\.kernels(\.|$)")


@pytest.mark.parametrize("module", [m for m in _gpuperf_modules() if not NEEDS_TORCH.match(m)])
def test_module_does_not_import_torch_or_triton_at_import_time(module):
    code = (
        f"import sys, importlib; importlib.import_module({module!r}); "
        "heavy = sorted(m for m in ('torch', 'triton') if m in sys.modules); print(','.join(heavy))"
    )
    # The package of this checkout, even where the environment has another one installed (a clone).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "lib"), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"importing {module} pulled in {out.stdout.strip()}"


def test_recorded_runs_carry_provenance():
    from gpuperf.records import load_run

    data_dir = ROOT / "book" / "data"
    for path in sorted(data_dir.glob("*.json")):
        run = load_run(path.stem, data_dir=data_dir)  # raises if a provenance field is missing
        assert run["results"], f"{path.name} has no results"


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme and "make book" in readme
    commands = [l.strip() for l in ci.splitlines() if l.strip() and not l.lstrip().startswith(("#", "set ", "cd "))]
    assert commands[-1] == "make test", f".ci/run must end with `make test`, runs {commands}"
    others = [c for c in commands[:-1] if re.search(r"\b(make|pytest|jupyter-book)\b", c)]
    assert not others, f".ci/run must test only through `make test` (it may install Chromium first): {others}"
    # the browser tests need Chromium: CI installs Debian's package when it is missing
    assert "apt-get install" in ci and "chromium" in ci


def test_device_figures_live_only_in_hardware_py():
    """A literal equal to a peak FLOP/s or bandwidth of the hardware table (e.g. 989.4e12) in lib/ or bench/
    outside gpuperf/hardware.py is a copy that will drift; use gpuperf.hardware. (Tests may state figures.)"""
    import ast

    from gpuperf.hardware import ACCELERATORS

    figures = {
        float(value)
        for acc in ACCELERATORS
        for value in (*acc.matrix_flop_per_s.values(), *acc.vector_flop_per_s.values(), acc.hbm_bytes_per_s)
    }
    found = []
    for path in sorted([*(ROOT / "lib").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]):
        if path == ROOT / "lib" / "gpuperf" / "hardware.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            value = getattr(node, "value", None) if isinstance(node, ast.Constant) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1e11:
                if any(abs(value - f) <= 1e-9 * f for f in figures):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {value!r}")
    assert not found, f"device figures outside hardware.py: {found}"


def test_pyproject_lists_every_package_and_ships_the_recorded_runs():
    """pyproject.toml lists the packages by hand (to map book/data to gpuperf.data); a subpackage missing
    from the list would be missing from every `pip install` (Colab) while an editable install still works."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(ROOT / "lib").parts) for p in (ROOT / "lib" / "gpuperf").rglob("__init__.py")}
    assert set(config["packages"]) == on_disk | {"gpuperf.data"}, f"pyproject packages {config['packages']} vs {on_disk}"
    assert config["package-dir"] == {"": "lib", "gpuperf.data": "book/data"}
    assert "*.json" in config["package-data"]["gpuperf.data"]


def test_every_module_is_found():
    modules = _gpuperf_modules()
    assert {"gpuperf", "gpuperf.roofline", "gpuperf.kernels", "gpuperf.kernels.elementwise"} <= set(modules)
    assert not any("__" in m for m in modules), modules


def _gpuperf_import_graph(function_level: bool = True) -> dict[str, set[str]]:
    """``{module: {gpuperf modules it imports}}`` read from the source with ast (nothing is imported).

    Module-level imports, and with ``function_level`` those inside functions too (the lazy imports that keep
    torch out of import time). ``from a.b import c`` counts as importing ``a.b.c`` when that is a module,
    else ``a.b``; a package's implicit import of its parent packages is not an edge."""
    import ast

    package = ROOT / "lib" / "gpuperf"
    paths = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in paths}

    def resolve(name: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            here = name.split(".") if is_package else name.split(".")[:-1]
            here = here[: len(here) - (node.level - 1)]
            base = ".".join(here + ([base] if base else []))
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]

    for name, path in paths.items():
        def visit(node: ast.AST, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)) and (function_level or not in_function):
                    for target in resolve(name, path.name == "__init__.py", child):
                        while target and target not in paths:
                            target = target.rpartition(".")[0]
                        if target and target != name:
                            graph[name].add(target)
                visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

        visit(ast.parse(path.read_text()), False)
    return graph


def _import_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def walk(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (cycle := walk(target)):
                return cycle
        state[module] = 2
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state and (cycle := walk(module)):
            return cycle
    return None


def test_import_graph_reads_lazy_imports():
    """The graph the next tests check sees function-level imports (a check that missed them would pass
    vacuously): gpuperf.benchmark imports its families only inside load_family/families."""
    assert "gpuperf.benchmark.family" in _gpuperf_import_graph()["gpuperf.benchmark"]
    assert "gpuperf.benchmark.family" not in _gpuperf_import_graph(function_level=False)["gpuperf.benchmark"]
    assert _import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_package_has_no_import_cycle():
    """No cycle among gpuperf's modules, counting module-level and function-level imports alike (issue 24:
    a lazy import that closes a cycle hides an arrow pointing the wrong way; the layers are the models at the
    root, gpuperf.kernels, gpuperf.benchmark (measuring), gpuperf.results (reading recorded runs) and
    gpuperf.plotting / gpuperf.explorers (presentation))."""
    cycle = _import_cycle(_gpuperf_import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_kernels_import_neither_the_harness_nor_the_readers():
    """gpuperf.kernels holds the kernels only: a benchmark family's cases and counting live in
    gpuperf.benchmark.family, the reading of recorded runs in gpuperf.results (no arrow back up)."""
    graph = _gpuperf_import_graph()
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items() if re.match(r"gpuperf\.kernels(\.|$)", module)
        for target in targets if re.match(r"gpuperf\.(benchmark|results)(\.|$)", target)
    )
    assert not upward, upward


def test_the_harness_reads_no_recorded_run_but_stores_them():
    """gpuperf.benchmark measures and imports nothing of gpuperf.results: it stores runs through
    gpuperf.records (the record format: provenance, save_run, load_run, cuda_available), which sits below both.
    Reading a run, its ratios and its targets is gpuperf.results' work, which imports the families (their rows'
    schema), never the other way round."""
    graph = _gpuperf_import_graph()
    readers = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items() if re.match(r"gpuperf\.benchmark(\.|$)", module)
        for target in targets
        if re.match(r"gpuperf\.results(\.|$)", target)
    )
    assert not readers, readers


def test_the_record_format_imports_neither_the_harness_nor_the_readers():
    """gpuperf.records is the bottom layer both gpuperf.benchmark and gpuperf.results build on (issue 33)."""
    targets = _gpuperf_import_graph().get("gpuperf.records", set())
    assert not [t for t in targets if re.match(r"gpuperf\.(benchmark|results|kernels)(\.|$)", t)], targets


def _module_file(dotted: str) -> Path | None:
    base = ROOT / "lib" / Path(*dotted.split("."))
    return next((f for f in (base.with_suffix(".py"), base / "__init__.py") if f.is_file()), None)


def _top_level_names(path: Path) -> set[str]:
    import ast

    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


#: Placeholders the docs write inside dotted paths (``gpuperf.kernels.labs.lN``: the lab's number).
DOC_PLACEHOLDERS = {"lN"}


@pytest.mark.parametrize("doc", ["CONTRIBUTING.md", "README.md", "labs/README.md",
                                 *_ids(PAGES)])
def test_docs_name_only_modules_and_functions_that_exist(doc):
    """A dotted path ``gpuperf.a.b.name`` in the docs names a module of lib/ and, after it, a name that
    module defines or imports (a path left behind by a move, as issue 24's, fails here)."""
    stale = []
    for dotted in sorted(set(re.findall(r"(?<![\w/.])gpuperf(?:\.\w+)+", (ROOT / doc).read_text()))):
        parts = dotted.split(".")
        if DOC_PLACEHOLDERS & set(parts):
            continue
        k = next(k for k in range(len(parts), 0, -1) if _module_file(".".join(parts[:k])))
        rest = parts[k:]
        if rest and rest[0] not in _top_level_names(_module_file(".".join(parts[:k]))):
            stale.append(dotted)
    assert not stale, f"{doc} names {stale}, which lib/ does not define"


def test_contributing_maps_every_module_at_the_package_root():
    """CONTRIBUTING.md's map of the package names every module at its root (the models and simulators)
    and every subpackage, so that a newcomer finds a concern's code from it."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    package = ROOT / "lib" / "gpuperf"
    root_modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    subpackages = {f"gpuperf.{p.parent.name}" for p in package.glob("*/__init__.py")}
    missing = sorted(m for m in root_modules if f"`{m}`" not in text)
    missing += sorted(s for s in subpackages if f"`{s}`" not in text)
    # The two homes the issue-24 move made: every module of the harness (its families are one entry,
    # `family/<family>.py`) and of the readers of recorded runs is named in the map's table.
    for sub in ("benchmark", "results"):
        row = next((line for line in text.splitlines() if line.startswith(f"| `gpuperf.{sub}` |")), "")
        names = {p.stem for p in (package / sub).glob("*.py") if p.stem != "__init__"}
        missing += sorted(f"gpuperf.{sub}.{m}" for m in names if f"`{m}`" not in row)
    assert not missing, f"CONTRIBUTING.md's map of the package does not name {missing}"


def test_make_test_keeps_each_notebook_on_one_worker():
    """Under pytest-xdist, nbval needs --dist loadfile: with the default scheduling one notebook's cells
    are spread over several workers (several kernels), and a cell then misses the variables of the ones
    before it."""
    recipe = re.search(r"^test:.*?(?=^\S)", (ROOT / "Makefile").read_text(), re.M | re.S)
    assert recipe, "Makefile has no test target"
    pytest_line = " ".join(recipe.group(0).split("\\\n"))
    assert "--nbval-lax" in pytest_line and " -n " in pytest_line
    assert "--dist loadfile" in pytest_line, "make test runs nbval under xdist without --dist loadfile"


def test_make_test_gpu_runs_everything_but_what_a_gpu_makes_redundant():
    """make test-gpu: the whole suite and every notebook (nbval), browser tests aside, spread test by test
    (--dist loadgroup, whose scheduler in tests/conftest.py keeps a notebook's cells on one worker), the
    redundant_on_gpu tests skipped, a registered marker."""
    recipe = re.search(r"^test-gpu:.*?(?=^\S)", (ROOT / "Makefile").read_text(), re.M | re.S)
    assert recipe, "Makefile has no test-gpu target"
    line = " ".join(recipe.group(0).split("\\\n"))
    assert "--nbval-lax" in line and " -n $(JOBS)" in line and "--dist loadgroup" in line
    assert '-m "not redundant_on_gpu"' in line and "--ignore=tests/browser tests book labs" in line
    assert "torch.cuda.is_available()" in line  # refuses to run without a GPU, instead of testing nothing
    tomllib = pytest.importorskip("tomllib")
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("redundant_on_gpu:") for m in markers)


def test_the_gpu_scheduler_keeps_a_notebook_on_one_worker():
    """tests/conftest.py's xdist scheduler: each notebook is one unit of work, every test its own."""
    pytest.importorskip("xdist")
    # load tests/conftest.py by its path: the module name "conftest" may already be another directory's
    # conftest (tests/kernels/conftest.py) in this worker
    spec = importlib.util.spec_from_file_location("_tests_conftest", ROOT / "tests" / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)

    assert conftest.pytest_xdist_make_scheduler(type("C", (), {"getvalue": lambda self, n: "load"})(), None) is None
    split = object.__new__(conftest.notebooks_together_scheduler())._split_scope
    assert split("book/06-roofline.ipynb::Cell 3") == split("book/06-roofline.ipynb::Cell 40") == "book/06-roofline.ipynb"
    assert split("tests/test_a.py::test_x[1]") != split("tests/test_a.py::test_x[2]")


def test_book_config():
    assert CONFIG["title"] == "GPU Performance from First Principles"
    assert CONFIG["only_build_toc_files"] is True
    execute = CONFIG["execute"]
    assert execute["execute_notebooks"] == "cache" and execute["raise_on_error"] is True
    assert CONFIG["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert CONFIG["repository"]["branch"] == "main"
    # Setting html_theme_options under sphinx.config replaces the options Jupyter Book derives from this
    # file, and the Colab and repository buttons silently disappear.
    assert "html_theme_options" not in CONFIG.get("sphinx", {}).get("config", {})
    assert "book/references.bib" in CONFIG["bibtex_bibfiles"]


#: The widest visible code line: the site's code column shows 88 characters without a scroll bar.
CODE_WIDTH = 88
#: Tags that keep a code cell's source off the page (or collapsed behind a toggle).
HIDDEN_SOURCE_TAGS = {"remove-cell", "remove-input", "hide-input", "hide-cell"}


_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")


def visible_markdown_code(source: str) -> list[tuple[int, str]]:
    """(line number, line) of every line of a markdown cell's code blocks that shows on the page: fenced
    blocks (```python, ```c, ```text, plain ```), outside a collapsed block (``<details>``, or a directive
    with `:class: dropdown`); directive bodies themselves (admonitions, math) are prose, not code."""
    lines = source.splitlines()
    stack: list[tuple[str, bool, bool]] = []  # (fence, is code, collapsed)
    out = []
    details = 0  # depth of <details> blocks: collapsed in every notebook app and on the site
    for n, line in enumerate(lines, 1):
        m = _FENCE.match(line)
        in_code = bool(stack) and stack[-1][1]
        if not in_code and line.strip().startswith("<details"):
            details += 1
        if not in_code and line.strip().startswith("</details>"):
            details = max(0, details - 1)
        if m and stack and m.group(1)[0] == stack[-1][0][0] and len(m.group(1)) >= len(stack[-1][0]) \
                and not m.group(2).strip():
            stack.pop()
            continue
        if m and not in_code:
            info = m.group(2).strip()
            collapsed = details > 0 or any(c for _, _, c in stack)
            if info.startswith("{"):
                options = [l.strip() for l in lines[n:n + 8] if l.strip().startswith(":")]
                collapsed = collapsed or any(o.startswith(":class:") and "dropdown" in o for o in options)
                stack.append((m.group(1), False, collapsed))
            else:
                stack.append((m.group(1), True, collapsed))
            continue
        if in_code and not stack[-1][2]:
            out.append((n, line))
    return out


def test_visible_markdown_code_is_found():
    text = "\n".join([
        "Prose.", "```python", "x = 1", "```",
        "```{admonition} Solution", ":class: dropdown", "```python", "hidden = 1", "```", "```",
        "```{note}", "Some prose in a note.", "```c", "int shown;", "```", "```",
        "~~~text", "```not a fence end inside a tilde block", "~~~",
        "<details>", "<summary>Solution</summary>", "", "```python", "also_hidden = 1", "```", "", "</details>",
    ])
    assert [l for _, l in visible_markdown_code(text)] == ["x = 1", "int shown;",
                                                            "```not a fence end inside a tilde block"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_visible_code_fits_the_column(path):
    """A visible code line wider than the page's code column makes the reader scroll sideways: keep
    visible code cells, and code blocks in the text, to CODE_WIDTH characters (formatting and plumbing go
    into gpuperf or behind hide-input, CONTRIBUTING.md). The column holds 92 characters of the site's 12 px
    code font in a 1280-pixel window (measured on the built site); 88 leaves room for other fonts."""
    nb = json.loads(path.read_text())
    wide = []
    for i, cell in enumerate(nb["cells"]):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            for j, line in visible_markdown_code(source):
                if len(line) > CODE_WIDTH:
                    wide.append(f"cell {i} (id {cell.get('id')}, a code block in the text) line {j} "
                                f"({len(line)} chars): {line.strip()[:50]!r}")
            continue
        if cell["cell_type"] != "code" or HIDDEN_SOURCE_TAGS & set(cell.get("metadata", {}).get("tags", [])):
            continue
        for j, line in enumerate(source.splitlines(), 1):
            if len(line) > CODE_WIDTH:
                wide.append(f"cell {i} (id {cell.get('id')}) line {j} ({len(line)} chars): {line.strip()[:50]!r}")
    assert not wide, f"{path.name}: visible code lines wider than {CODE_WIDTH} characters:\n  " + "\n  ".join(wide)


def test_site_extension_is_configured():
    """tools/sphinxext/gpuperf_site.py makes explorers static, self-hosts MathJax and fixes console errors;
    without it the site silently falls back to CDNs and kernel-less widgets."""
    local = CONFIG.get("sphinx", {}).get("local_extensions", {})
    assert local.get("gpuperf_site") == "tools/sphinxext"
    assert (ROOT / "tools" / "sphinxext" / "gpuperf_site.py").is_file()
    assert "django-static-mathjax==" in (ROOT / "requirements.txt").read_text()


def test_every_glossary_term_has_its_chinese_equivalent():
    """The course is read alongside Chinese lecture notes: each glossary entry ends with `Chinese: ...`."""
    text = (ROOT / "book" / "glossary.md").read_text()
    body = text[text.index("```{glossary}"):]
    missing = []
    for entry in body.split("\n\n"):
        terms = [l for l in entry.splitlines() if l and not l.startswith((" ", "```", ":"))]
        if terms and not re.search(r"Chinese: .*[\u4e00-\u9fff]", entry):
            missing.append(terms[0])
    assert not missing, f"glossary terms without 'Chinese: ...': {missing}"


def test_strip_tool_clears_outputs(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(1)", execution_count=3)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nb.cells = [cell, nbformat.v4.new_markdown_cell("# T")]
    nb.metadata["widgets"] = {"state": {}}
    path = tmp_path / "x.ipynb"
    path.write_text(nbformat.writes(nb))
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "strip_notebooks.py"), str(path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    stripped = nbformat.reads(path.read_text(), as_version=4)
    assert stripped.cells[0].outputs == [] and stripped.cells[0].execution_count is None
    assert "widgets" not in stripped.metadata and stripped.cells[0].source == "print(1)"


def _markdown_cells(path):
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_markdown_renders_in_every_notebook_app(path):
    """Colab and JupyterLab render CommonMark + HTML: a MyST dropdown shows its solution in plain sight there,
    and {term}/{doc} roles show as raw text. `python tools/portable_markdown.py` rewrites them."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import portable_markdown
    finally:
        sys.path.remove(str(ROOT / "tools"))
    left = [found for cell in _markdown_cells(path) for found in portable_markdown.leftovers(cell)]
    assert not left, f"{path.name}: {left[:5]} (run python tools/portable_markdown.py {path.relative_to(ROOT)})"


_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_relative_links_resolve(path):
    """Every relative link of a notebook's Markdown names a file that exists, and a glossary link an entry
    the glossary has (the site build does not check these: _config.yml suppresses myst.xref_missing)."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import portable_markdown
    finally:
        sys.path.remove(str(ROOT / "tools"))
    anchors = {portable_markdown.term_anchor(t) for t in portable_markdown.glossary_terms()}
    broken = []
    for cell in _markdown_cells(path):
        prose = re.sub(r"`[^`]*`", "", re.sub(r"^(`{3,}).*?^\1", "", cell, flags=re.M | re.S))  # code
        for match in _LINK.finditer(prose):
            target = match["target"]
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            file, _, anchor = target.partition("#")
            resolved = (path.parent / file).resolve()
            if not resolved.is_file():
                broken.append(f"{target} (no file)")
            elif resolved.name == "glossary.md" and anchor and anchor not in anchors:
                broken.append(f"{target} (no such glossary entry)")
    assert not broken, f"{path.name}: {broken}"


def test_chapters_keep_to_their_word_budgets():
    """A chapter a newcomer finishes (STYLE.md): each page within its budget of prose words, each part too,
    and no Markdown cell of a chapter over 250 words (tools/course_map.py --words prints the counts)."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import course_map
    finally:
        sys.path.remove(str(ROOT / "tools"))
    rows = course_map.word_report(ROOT)
    over = [f"{r['page']}: {r['words']} > {r['budget']}" for r in rows if r["budget"] and r["words"] > r["budget"]]
    long_cells = [f"{r['page']}: {r['cells_over']} cell(s) over {course_map.CELL_BUDGET} words" for r in rows
                  if r["budget"] and r["cells_over"]]
    parts = course_map.part_words(rows)
    over += [f"chapters {a}-{b}: {n} > {course_map.PART_BUDGETS[(a, b)]}" for (a, b), n in parts.items()
             if n > course_map.PART_BUDGETS[(a, b)]]
    assert not over and not long_cells, "\n".join(over + long_cells)
