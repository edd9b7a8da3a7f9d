"""Keep the labs' solutions and stubs in step with the one source of the solutions, the package.

A lab's solution is a markdown cell whose metadata names its source,
``{"gpuperf": {"solution_source": "gpuperf.kernels.labs.l2:add_kernel,add"}}``; the cell holds a collapsed
``<details><summary>Solution</summary>`` block (collapsed in Colab, JupyterLab and the site alike) whose one
``python`` code block is exactly those functions' source, read from the
package file (decorators included, in the order named). The exercise cell the reader completes (a code cell
whose metadata has ``{"gpuperf": {"stub_of": "gpuperf.kernels.labs.l2:add_kernel,add"}}``) must define the
same functions with the same ``def`` lines.

Usage:
  python tools/lab_solutions.py            rewrite every lab's solution blocks from the package
  python tools/lab_solutions.py --check    exit 1, naming the cells, if a block or a stub has drifted
``tests/test_labs.py`` runs the check.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
LABS = ROOT / "labs"
BLOCK = re.compile(r"```python\n.*?\n```", re.S)


def _module_path(module: str) -> Path:
    path = ROOT / "lib" / Path(*module.split("."))
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py")
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ValueError(f"module {module!r} not found")
    return Path(spec.origin)


def parse_ref(ref: str) -> tuple[str, list[str]]:
    module, sep, names = ref.partition(":")
    if not sep or not names:
        raise ValueError(f"a solution reference is 'module:name[,name...]', got {ref!r}")
    return module, [n.strip() for n in names.split(",")]


def _functions(path: Path) -> dict[str, ast.FunctionDef | ast.ClassDef]:
    """The top-level functions and classes of a module (a solution may be a class: L6.autograd's
    ``torch.autograd.Function``)."""
    tree = ast.parse(path.read_text())
    return {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def solution_source(ref: str) -> str:
    """The source of the functions ``ref`` names, decorators included, separated by two blank lines."""
    module, names = parse_ref(ref)
    path = _module_path(module)
    lines = path.read_text().splitlines()
    found = _functions(path)
    parts = []
    for name in names:
        if name not in found:
            raise ValueError(f"{module} has no function {name!r}")
        node = found[name]
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        parts.append("\n".join(lines[start - 1: node.end_lineno]))
    return "\n\n\n".join(parts)


def def_lines(source: str) -> dict[str, str]:
    """``name -> its def line(s)`` (the signature up to the colon) of the top-level functions in source; for a
    class, its ``class`` line and, as ``Class.method``, the def lines of its methods."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            end = node.body[0].lineno - 1
            out[node.name] = re.sub(r"\s+", " ", "\n".join(lines[node.lineno - 1: end]).split(":")[0]).strip()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    text = "\n".join(lines[item.lineno - 1: item.body[0].lineno - 1])
                    out[f"{node.name}.{item.name}"] = re.sub(r"\s+", " ", text.split("):")[0] + ")").strip()
            continue
        if isinstance(node, ast.FunctionDef):
            end = node.body[0].lineno - 1
            text = "\n".join(lines[node.lineno - 1: end])
            out[node.name] = re.sub(r"\s+", " ", text.split("):")[0] + ")").strip()
    return out


def _meta(cell) -> dict:
    return cell.get("metadata", {}).get("gpuperf", {})


def problems(path: Path, fix: bool = False) -> list[str]:
    """What has drifted in one lab (an empty list when nothing has); with ``fix``, rewrite the solution
    blocks from the package (stubs are never rewritten: the reader's cells are prose, fix them by hand)."""
    nb = nbformat.read(str(path), as_version=4)
    found, changed = [], False
    solutions = stubs = 0
    for i, cell in enumerate(nb.cells):
        ref = _meta(cell).get("solution_source")
        if ref and cell.cell_type == "markdown":
            solutions += 1
            source = solution_source(ref)
            blocks = BLOCK.findall(cell.source)
            if len(blocks) != 1:
                found.append(f"{path.name} cell {i}: a solution cell must hold exactly one python block")
                continue
            want = f"```python\n{source}\n```"
            if blocks[0] != want:
                if fix:
                    cell.source = cell.source.replace(blocks[0], want)
                    changed = True
                else:
                    found.append(f"{path.name} cell {i}: the solution shown differs from {ref}")
            if not (cell.source.lstrip().startswith("<details>") and "<summary>Solution" in cell.source
                    and cell.source.rstrip().endswith("</details>")):
                found.append(f"{path.name} cell {i}: the solution must be a collapsed "
                             "<details><summary>Solution</summary> block")
        ref = _meta(cell).get("stub_of")
        if ref and cell.cell_type == "code":
            stubs += 1
            want = def_lines(solution_source(ref))
            have = def_lines(cell.source)
            for name, line in want.items():
                if have.get(name) != line:
                    found.append(f"{path.name} cell {i}: the stub's {name} is {have.get(name)!r}, the "
                                 f"solution's {line!r}")
    if solutions == 0 or stubs == 0:
        found.append(f"{path.name}: no solution cells or no stub cells marked in the metadata")
    if changed:
        nbformat.write(nb, str(path))
    return found


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if not a.startswith("--")] or sorted(LABS.glob("*.ipynb"))
    found = [p for path in paths for p in problems(path, fix=not check)]
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
