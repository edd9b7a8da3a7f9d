"""The site's own Sphinx extension (listed in ``_config.yml``: ``sphinx: local_extensions``).

What it does, and why (each found by opening the built pages in headless Chromium, ``tests/browser``):

* Sets ``GPUPERF_EXPLORERS=static`` as soon as Sphinx loads it, before any notebook executes, so every
  ``gpuperf.explorers`` call in a book build emits its precomputed, self-contained figure (the kernels
  Jupyter Book starts inherit the variable).
* **Self-hosted MathJax 3.** Copies MathJax 3.2.2 from the pinned PyPI wheel ``django-static-mathjax``
  (the ``mathjax`` package; only the files a page can load: ``tex-chtml.js``, the TeX extensions, the CHTML
  fonts, the menu and accessibility parts) into ``_vendor/mathjax/`` of the site, with its licence, and
  points ``mathjax_path`` there. No CDN: the site works offline and from ``file://``.
* **No widget manager from a CDN.** ``nb_ipywidgets_js`` is emptied: the explorers need no widget manager
  on the static site (they are plain HTML and JavaScript), so require.js and the html-manager are never
  requested.
* **One THEBE_JS_URL.** sphinx-thebe registers its inline ``const THEBE_JS_URL = ...`` script once per
  ``env-before-read-docs``, and Jupyter Book fires that event twice, so every page declared the constant
  twice ("Identifier 'THEBE_JS_URL' has already been declared"): duplicate scripts are dropped from each
  page's script list.
* **Theme mode.** pydata-sphinx-theme reads ``default_mode`` from ``html_context``; unset, the first page
  a reader opens logs "Got invalid theme mode". It is set to ``auto`` (follow the reader's system),
  without touching ``html_theme_options`` (which would drop the launch buttons, CONTRIBUTING.md).
* **Dark mode.** ``_vendor/gpuperf-site.css`` (added to every page) shows figures (notebook outputs and
  explorer frames, drawn on the book style's white background) inverted with hues kept in dark mode.
* **Code width.** The same file sets code cells in 12 px monospace, so that the 88-character lines
  ``tests/test_repository.py`` allows fit the column from a 1280-pixel window up (``tests/browser`` checks).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

EXPLORER_MODE_ENV = "GPUPERF_EXPLORERS"
VENDOR_DIR = "_vendor"
MATHJAX_FILES = ("tex-chtml.js", "input/tex/extensions", "output/chtml", "a11y", "ui", "sre", "adaptors")
MATHJAX_PATH = f"../{VENDOR_DIR}/mathjax/tex-chtml.js"  # Sphinx prefixes _static/

SITE_CSS = """/* gpuperf site (tools/sphinxext/gpuperf_site.py).
   Dark mode: figures (drawn on the book style's white background) are shown inverted with their hues kept,
   so a figure is a dark panel with light text on a dark page, not a light rectangle. */
html[data-theme="dark"] .cell_output img,
html[data-theme="dark"] img.gpuperf-figure {
  filter: invert(0.88) hue-rotate(180deg);
}
/* The theme puts HTML outputs on a light panel in dark mode; the explorers follow the page's colours. */
html[data-theme="dark"] .bd-content div.cell_output .text_html:has(.gpuperf-explorer),
html[data-theme="dark"] .bd-content div.cell_output .text_html:has(.gpuperf-bits) {
  background-color: transparent !important;
  color: inherit !important;
  padding: 0 !important;
}
/* Code cells and code blocks in the text: 88 characters (the limit tests/test_repository.py enforces) fit
   the column from a 1280-pixel-wide window up, with both sidebars shown (14 px monospace fits 77; 12 px
   fits 92, measured). */
.bd-content div.cell div.cell_input pre, .bd-content div.cell div.cell_output pre,
.bd-content div.highlight pre {
  font-size: 12px;
  padding-left: 10px;
  padding-right: 6px;
}
html[data-theme="dark"] .gpuperf-explorer, html[data-theme="dark"] .gpuperf-bits {
  border-color: rgba(200, 200, 200, 0.3);
}
"""


def _mathjax_root() -> Path:
    import mathjax  # the django-static-mathjax wheel (requirements.txt)

    root = Path(mathjax.__file__).parent / "static" / "mathjax"
    if not (root / "es5" / "tex-chtml.js").is_file():
        raise RuntimeError(f"MathJax 3 not found under {root}: pip install django-static-mathjax==3.2.2.1")
    return root


def _config_inited(app, config) -> None:
    config.mathjax_path = MATHJAX_PATH
    config.nb_ipywidgets_js = {}
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context


def _builder_inited(app) -> None:
    _mathjax_root()  # fail early, with the install command, when the wheel is missing
    if app.builder.format == "html":
        app.add_css_file(f"../{VENDOR_DIR}/gpuperf-site.css")


def _dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        attributes = getattr(script, "attributes", {}) or {}
        filename = getattr(script, "filename", script) or ""  # None and "" both mean an inline script
        key = (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key in seen:
            continue
        seen.add(key)
        kept.append(script)
    scripts[:] = kept


def _copy_vendor(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / VENDOR_DIR
    target = out / "mathjax"
    source = _mathjax_root()
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for rel in MATHJAX_FILES:
        src = source / "es5" / rel
        if src.is_dir():
            shutil.copytree(src, target / rel)
        else:
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target / rel)
    shutil.copy2(source / "LICENSE", target / "LICENSE")
    (out / "README.txt").write_text(
        "Files copied here by tools/sphinxext/gpuperf_site.py at build time:\n"
        "mathjax/: MathJax 3.2.2 (Apache License 2.0, mathjax/LICENSE) from the PyPI wheel "
        "django-static-mathjax==3.2.2.1.\n"
    )
    (out / "gpuperf-site.css").write_text(SITE_CSS)


def setup(app):
    os.environ[EXPLORER_MODE_ENV] = "static"
    app.connect("config-inited", _config_inited, priority=100)
    app.connect("builder-inited", _builder_inited)
    app.connect("html-page-context", _dedupe_scripts, priority=100)  # before any handler returning a template (emit_firstresult)
    app.connect("build-finished", _copy_vendor)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

