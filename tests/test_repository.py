"""Hygiene of the repository: notebooks, table of contents, install cells, import-time dependencies."""

from __future__ import annotations

import json
import pkgutil
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
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())


def _ids(paths):
    return [str(p.relative_to(ROOT)) for p in paths]


def _toc_files(node) -> list[str]:
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("file", "root"):
                found.append(value)
            else:
                found.extend(_toc_files(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_toc_files(item))
    return found


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


def test_every_toc_entry_exists():
    missing = [entry for entry in _toc_files(TOC) if _resolve(entry) is None]
    assert not missing, f"_toc.yml lists files that do not exist: {missing}"


def test_every_page_is_in_the_toc():
    listed = {_resolve(entry) for entry in _toc_files(TOC)}
    unlisted = [str(p.relative_to(ROOT)) for p in [*NOTEBOOKS, *PAGES] if p not in listed]
    assert not unlisted, f"pages missing from _toc.yml: {unlisted}"


def test_toc_has_no_duplicates():
    entries = _toc_files(TOC)
    assert len(entries) == len(set(entries)), f"duplicate _toc.yml entries in {entries}"


def _install_url() -> str:
    url = CONFIG["repository"]["url"].rstrip("/")
    branch = CONFIG["repository"]["branch"]
    assert url.startswith("https://github.com/"), f"repository.url must be a GitHub URL, got {url!r}"
    return f"gpuperf @ git+{url}@{branch}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_install_cell_matches_the_repository(path):
    nb = json.loads(path.read_text())
    first = nb["cells"][0]
    source = "".join(first["source"])
    assert first["cell_type"] == "code", f"{path.name}: cell 1 must be the install cell"
    assert "remove-cell" in first.get("metadata", {}).get("tags", []), f"{path.name}: tag cell 1 remove-cell"
    urls = re.findall(r'"(gpuperf @ git\+[^"]+)"', source)
    assert urls == [_install_url()], f"{path.name}: install cell installs {urls}, expected [{_install_url()!r}]"
    assert 'find_spec("gpuperf") is None' in source, f"{path.name}: install only when gpuperf is missing"


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
    if path.name.startswith("appendix"):
        return
    for heading in ("What you will learn", "Summary", "References", "Exercises"):
        assert re.search(rf"^#+ .*{heading}", markdown, re.M), f"{path.name}: missing section {heading!r}"


def _gpuperf_modules() -> list[str]:
    import gpuperf

    names = ["gpuperf"]
    for info in pkgutil.walk_packages(gpuperf.__path__, prefix="gpuperf."):
        names.append(info.name)
    return sorted(names)


# Modules allowed to import torch or triton when imported: the Triton kernels need both.
NEEDS_TORCH = re.compile(r"^gpuperf\.kernels(\.|$)")


@pytest.mark.parametrize("module", [m for m in _gpuperf_modules() if not NEEDS_TORCH.match(m)])
def test_module_does_not_import_torch_or_triton_at_import_time(module):
    code = (
        f"import sys, importlib; importlib.import_module({module!r}); "
        "heavy = sorted(m for m in ('torch', 'triton') if m in sys.modules); print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"importing {module} pulled in {out.stdout.strip()}"


def test_recorded_runs_carry_provenance():
    from gpuperf.recorded import DATA_DIR, load_run

    for path in sorted(DATA_DIR.glob("*.json")):
        run = load_run(path.stem)
        assert run["results"], f"{path.name} has no results"


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in readme and "make book" in readme
    commands = [l.strip() for l in ci.splitlines() if l.strip() and not l.lstrip().startswith(("#", "set ", "cd "))]
    assert commands == ["make test"], f".ci/run must run only `make test`, runs {commands}"


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
