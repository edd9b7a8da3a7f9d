"""Rewrite notebook Markdown that only Jupyter Book understands into Markdown every notebook app renders.

Colab and JupyterLab (without the jupyterlab-myst extension) render a notebook's Markdown as CommonMark
plus HTML. There, a MyST dropdown (```` ```{admonition} Solution ```` + ``:class: dropdown``) shows as a raw
code block with the whole solution in sight, and the roles ``{term}`HBM``` and ``{doc}`chapter 06 <06-roofline>```
show as raw text. This tool rewrites them into forms that read the same in Colab, JupyterLab and on the site:

- a dropdown admonition becomes ``<details><summary>Title</summary>`` + blank line + the body + blank line
  + ``</details>`` (collapsed in all three);
- ``{term}`text <Term>``` becomes a Markdown link to the glossary entry, ``[text](glossary.md#term-Term)``
  (``../book/glossary.md`` from a lab); Sphinx names a glossary entry's anchor ``term-`` + the term with
  spaces as hyphens;
- ``{doc}`text <target>``` becomes ``[text](target.ipynb)``; without a text, the target's file name.

Citations (``{cite:p}``) are left as they are: they need the site's bibliography.

Usage: ``python tools/portable_markdown.py [NOTEBOOK ...]`` (default: every notebook in book/ and labs/);
``--check`` only lists what would change and exits 1 if anything would. ``tests/test_repository.py``
fails on a notebook that still holds a dropdown admonition, ``{term}`` or ``{doc}``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# An admonition fenced by three or more backticks or colons, whose options include ``:class: dropdown``.
_ADMONITION = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{admonition\}[ \t]*(?P<title>[^\n]*)\n"
    r"(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)"
    r"(?P<body>.*?)\n?"
    r"^(?P=fence)[ \t]*$",
    re.M | re.S,
)
_ROLE = re.compile(r"\{(?P<role>term|doc)\}`(?P<content>[^`]+)`")
_EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)


def glossary_terms(path: Path = ROOT / "book" / "glossary.md") -> dict[str, str]:
    """The entries of the glossary, keyed by their lower-case spelling (Sphinx matches terms that way)."""
    text = path.read_text()
    body = text.split("```{glossary}", 1)[1].split("\n```", 1)[0]
    terms = [line.strip() for line in body.splitlines() if line.strip() and not line[0].isspace()
             and not line.startswith(":")]
    return {term.lower(): term for term in terms}


def term_anchor(term: str, terms: dict[str, str] | None = None) -> str:
    """The HTML anchor Sphinx gives the glossary entry `term` (matched case-insensitively, as Sphinx does):
    ``term-`` and the entry as spelled in the glossary, each run of other characters than letters, digits,
    ``.`` and ``_`` as one hyphen (``sphinx.util.nodes._make_id``). Raises KeyError for a term the glossary
    lacks."""
    terms = glossary_terms() if terms is None else terms
    entry = terms[" ".join(term.split()).lower()]
    return "term-" + re.sub(r"^[-0-9._]+|-+$", "", re.sub(r"[^a-zA-Z0-9._]+", "-", entry))


def _convert_admonition(match: re.Match) -> str:
    options = match["options"]
    if not re.search(r"^\s*:class:.*\bdropdown\b", options, re.M):
        return match[0]
    title = match["title"].strip() or "Details"
    body = match["body"].strip("\n")
    return f"<details>\n<summary>{title}</summary>\n\n{body}\n\n</details>"


def _convert_role(match: re.Match, glossary: str) -> str:
    content = match["content"]
    explicit = _EXPLICIT.match(content)
    text, target = (explicit["text"], explicit["target"]) if explicit else (content, content)
    if match["role"] == "term":
        return f"[{text}]({glossary}#{term_anchor(target, _TERMS)})"
    if not explicit:
        text = target.rsplit("/", 1)[-1]
    return f"[{text}]({target}.ipynb)"


_TERMS: dict[str, str] = {}


def convert_markdown(text: str, glossary: str = "glossary.md") -> str:
    """`text` with dropdown admonitions as ``<details>`` and ``{term}``/``{doc}`` roles as links."""
    if not _TERMS:
        _TERMS.update(glossary_terms())
    previous = None
    while previous != text:  # nested admonitions: convert from the inside out
        previous = text
        text = _ADMONITION.sub(_convert_admonition, text)
    return _ROLE.sub(lambda m: _convert_role(m, glossary), text)


def leftovers(text: str) -> list[str]:
    """What in `text` only Jupyter Book renders: dropdown admonitions and ``{term}``/``{doc}`` roles."""
    found = [m[0] for m in _ROLE.finditer(text)]
    found += [m[0].splitlines()[0] for m in _ADMONITION.finditer(text)
              if re.search(r"^\s*:class:.*\bdropdown\b", m["options"], re.M)]
    return found


def convert_notebook(path: Path) -> bool:
    """Rewrite `path` in place; True when something changed."""
    nb = json.loads(path.read_text())
    glossary = "glossary.md" if path.parent.name == "book" else "../book/glossary.md"
    changed = False
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        source = "".join(cell["source"])
        new = convert_markdown(source, glossary)
        if new != source:
            cell["source"] = new.splitlines(keepends=True)
            changed = True
    if changed:
        path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true", help="list what would change; exit 1 if anything")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted([*ROOT.glob("book/*.ipynb"), *ROOT.glob("labs/*.ipynb")])
    dirty = []
    for path in paths:
        if args.check:
            nb = json.loads(path.read_text())
            for cell in nb["cells"]:
                if cell["cell_type"] == "markdown" and leftovers("".join(cell["source"])):
                    dirty.append(path)
                    break
        elif convert_notebook(path):
            dirty.append(path)
    for path in dirty:
        print(("needs converting: " if args.check else "converted: ") + str(path))
    return 1 if (args.check and dirty) else 0


if __name__ == "__main__":
    sys.exit(main())
