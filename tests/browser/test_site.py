"""Every page of the built site, opened in headless Chromium over a plain static server, with every request
that leaves the site blocked.

A page fails on: a console error or uncaught exception, a failed request (HTTP >= 400 or network error), a
request leaving the site, a formula MathJax did not render, an image that did not load, an explorer whose
figure or numbers do not change when a control moves, an internal link to a missing page or anchor, a
launch (Colab) or repository link to a notebook that is not in the repository. Light and dark screenshots
of every page go to `_build/screenshots/` (beside the site; JPEG, the first 16,000 pixels) for review.

A page also fails `test_page_reads_clean` when, in a 1280-pixel-wide window, a code cell, an output or a
code block scrolls sideways (or spills out of the column), or when it shows a warning, stderr output or a
traceback; the message names each block (its notebook cell and first line) so that the author can fix it.

The pages are found in the built site (every .html outside `_`-folders), and every `_toc.yml` entry must
have one, so new chapters are covered without editing this file.
"""

from __future__ import annotations

import html as _html
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("GPUPERF_SITE", ROOT / "_build" / "html")).resolve()  # as in conftest.py
SKIP_DIRS = {"reports"}  # myst-nb's execution reports (only when a notebook failed)


def _pages() -> list[str]:
    if not SITE.is_dir():
        return []
    found = []
    for path in sorted(SITE.rglob("*.html")):
        rel = path.relative_to(SITE)
        if any(part.startswith("_") or part in SKIP_DIRS for part in rel.parts[:-1]):
            continue
        found.append(rel.as_posix())
    return found


PAGES = _pages()
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
REPO_URL = CONFIG["repository"]["url"].rstrip("/")
REPO_PATH = urlsplit(REPO_URL).path.strip("/")  # ORG/REPO


def test_every_toc_entry_has_a_page(toc_files):
    if not PAGES:
        pytest.skip(f"no built site at {SITE}: run `make book` first (make test does)")
    missing = [f for f in toc_files if f"{f}.html" not in PAGES]
    assert not missing, f"toc entries without a built page: {missing}"


_ids_cache: dict[Path, set[str]] = {}


def _ids_in(path: Path) -> set[str]:
    if path not in _ids_cache:
        text = path.read_text(errors="replace")
        _ids_cache[path] = set(re.findall(r'\bid="([^"]+)"', text)) | set(re.findall(r'\bname="([^"]+)"', text))
    return _ids_cache[path]


def _check_link(href: str, page_url: str, origin: str) -> str | None:
    """A problem with one link, or None."""
    if not href or href.startswith(("mailto:", "javascript:", "data:")):
        return None
    parts = urlsplit(href)
    if href.startswith(origin) or (not parts.scheme and not parts.netloc):
        from urllib.parse import urljoin

        target = urlsplit(urljoin(page_url, href))
        rel = unquote(target.path).lstrip("/")
        path = SITE / rel
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file():
            return f"broken internal link {href!r} (no {path.relative_to(SITE) if SITE in path.parents else path})"
        if target.fragment and path.suffix == ".html" and unquote(target.fragment) not in _ids_in(path):
            return f"internal link {href!r}: no anchor #{target.fragment} in {path.relative_to(SITE)}"
        return None
    # launch and repository links: the notebook or file they name must exist in this repository
    m = re.search(rf"{re.escape(REPO_PATH)}/(?:blob|edit|tree|raw)/[^/]+/(.+)$", parts.path)
    if m and ("colab.research.google.com" in parts.netloc or "github.com" in parts.netloc):
        rel = unquote(m.group(1))
        if not (ROOT / rel).exists():
            return f"launch/repository link {href!r} names {rel}, which is not in the repository"
    return None


_EXPLORER_JS = """
async (root) => {
  const problems = [];
  const snap = () => {
    const img = root.querySelector('img.gx-figure');
    return [img ? img.getAttribute('src') + '|' + img.style.display : '',
            root.querySelector('.gx-html').innerHTML];
  };
  const controls = Array.from(root.querySelectorAll('[data-gx-control]'));
  if (!controls.length) { problems.push('no controls'); }
  for (const el of controls) {
    const name = el.getAttribute('data-gx-control');
    const before = snap();
    const old = el.type === 'checkbox' ? el.checked : el.value;
    if (el.type === 'checkbox') { el.checked = !el.checked; }
    else if (el.tagName === 'SELECT') { el.value = String((parseInt(el.value, 10) + 1) % el.options.length); }
    else { const max = parseInt(el.max, 10); const v = parseInt(el.value, 10);
           el.value = String(v < max ? v + 1 : v - 1); }
    el.dispatchEvent(new Event('input', {bubbles: true}));
    el.dispatchEvent(new Event('change', {bubbles: true}));
    const after = snap();
    if (after[0] === before[0] && after[1] === before[1]) {
      problems.push('moving control ' + name + ' changed neither the figure nor the numbers');
    }
    if (el.type === 'checkbox') { el.checked = old; } else { el.value = old; }
    el.dispatchEvent(new Event('change', {bubbles: true}));
  }
  const img = root.querySelector('img.gx-figure');
  if (img && img.style.display !== 'none' && !(img.complete && img.naturalWidth > 0)) {
    problems.push('the explorer figure did not load');
  }
  return problems;
}
"""

_BITS_JS = """
(root) => {
  const problems = [];
  const bits = root.querySelectorAll('button.gb-bit');
  if (!bits.length) { return ['no bit buttons']; }
  const explanation = root.querySelector('.gb-explanation'), table = root.querySelector('.gb-table');
  const before = [explanation.innerHTML, table.innerHTML];
  bits[bits.length - 1].click();
  if (explanation.innerHTML === before[0] || table.innerHTML === before[1]) {
    problems.push('clicking a bit changed neither the explanation nor the table');
  }
  bits[bits.length - 1].click();
  return problems;
}
"""


def test_link_checker_catches_what_it_should():
    """The checks of test_page can fail: a launch link to a notebook that is not in the repository, and an
    internal link to a missing page."""
    colab = f"https://colab.research.google.com/github/{REPO_PATH}/blob/main/book/99-missing.ipynb"
    assert "not in the repository" in _check_link(colab, "http://x/book/a.html", "http://x")
    present = f"https://colab.research.google.com/github/{REPO_PATH}/blob/main/_config.yml"
    assert _check_link(present, "http://x/book/a.html", "http://x") is None
    assert "broken internal link" in _check_link("no-such-page.html", "http://x/book/a.html", "http://x")
    assert _check_link("https://example.org/elsewhere", "http://x/book/a.html", "http://x") is None


SCREENSHOTS = os.environ.get("GPUPERF_SCREENSHOTS", "1") != "0"  # 0: skip them (a quicker local run)


def _screenshots_dir() -> Path:
    out = SITE.parent / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def context(browser, site_server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    ctx.outside = []  # requests that tried to leave the site
    # Playwright's waits are hang detectors here, not speed limits: a loaded CI machine is slow, not broken.
    ctx.set_default_timeout(120_000)
    ctx.set_default_navigation_timeout(120_000)

    def route(r):
        url = r.request.url
        if url.startswith(site_server + "/") or url.startswith(("data:", "blob:", "about:")):
            r.continue_()
        else:
            ctx.outside.append(url)
            r.abort("blockedbyclient")

    ctx.route("**/*", route)
    yield ctx
    ctx.close()


@pytest.mark.parametrize("rel", PAGES or ["(no built site)"])
def test_page(context, site_server, rel):
    if not PAGES:
        pytest.skip(f"no built site at {SITE}: run `make book` first (make test does)")
    problems: list[str] = []
    page = context.new_page()
    context.outside.clear()
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})")
            if r.url.startswith(site_server) else None)
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    url = f"{site_server}/{rel}"
    source = (SITE / rel).read_text(errors="replace")
    refresh = re.search(r'http-equiv="Refresh" content="0; url=([^"]+)"', source, re.I)
    if refresh:  # a redirect page (index.html -> the landing page): its target must exist
        page.close()
        assert (SITE / rel).parent.joinpath(refresh.group(1)).is_file(), f"{rel} redirects to a missing page"
        return
    page.goto(url, wait_until="load")
    # MathJax: every formula typeset, none in error
    has_math = page.evaluate("() => document.querySelectorAll('.math').length")
    if has_math:
        ready = page.evaluate("""async () => {
            if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) { return false; }
            await MathJax.startup.promise; return true; }""")
        if not ready:
            problems.append(f"{has_math} formulas but MathJax did not load")
        else:
            bad = page.evaluate("""() => Array.from(document.querySelectorAll('.math'))
                .filter(e => !e.querySelector('mjx-container') || e.querySelector('mjx-merror'))
                .map(e => e.textContent.slice(0, 60))""")
            if bad:
                problems.append(f"{len(bad)} formulas not rendered by MathJax, e.g. {bad[:3]}")
    # images
    page.evaluate("() => document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; })")
    page.wait_for_function("() => Array.from(document.images).every(i => i.complete)", timeout=120_000)
    broken = page.evaluate("""() => Array.from(document.images)
        .filter(i => i.style.display !== 'none' && i.offsetParent !== null && !(i.naturalWidth > 0))
        .map(i => (i.getAttribute('src') || '').slice(0, 80))""")
    if broken:
        problems.append(f"images that did not load: {broken}")
    # links
    for href in page.evaluate("() => Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"):
        problem = _check_link(href, url, site_server)
        if problem and problem not in problems:
            problems.append(problem)
    # code and outputs that scroll sideways, warnings and stderr: test_page_reads_clean
    # a bare ipywidget has no kernel on the site and shows nothing: explorers go through gpuperf.explorers.core
    widgets = page.evaluate(
        "() => document.querySelectorAll('script[type=\"application/vnd.jupyter.widget-view+json\"]').length")
    if widgets:
        problems.append(f"{widgets} ipywidgets outputs, dead on the static site: use gpuperf.explorers.core")
    # explorers
    for i, root in enumerate(page.query_selector_all(".gpuperf-explorer")):
        for p in root.evaluate(_EXPLORER_JS):
            problems.append(f"explorer {i}: {p}")
    for i, root in enumerate(page.query_selector_all(".gpuperf-bits")):
        for p in root.evaluate(_BITS_JS):
            problems.append(f"bit explorer {i}: {p}")
    # screenshots, light and dark
    out = _screenshots_dir()
    modes = ("light", "dark") if SCREENSHOTS else ()
    stem = rel.removesuffix(".html").replace("/", "__")
    for mode in modes:
        page.evaluate(f"() => {{ document.documentElement.dataset.theme = '{mode}'; "
                      f"document.documentElement.dataset.mode = '{mode}'; }}")
        height = page.evaluate("() => document.documentElement.scrollHeight")
        page.screenshot(path=str(out / f"{stem}-{mode}.jpg"), full_page=True, type="jpeg", quality=70,
                        clip=None if height <= 16000 else {"x": 0, "y": 0, "width": 1280, "height": 16000})
    page.close()
    problems += [f"request leaving the site (blocked): {u}" for u in context.outside]
    assert not problems, f"{rel}:\n  " + "\n  ".join(_html.unescape(p) for p in problems)


@pytest.mark.parametrize("rel", PAGES or ["(no built site)"])
def test_page_from_file_url(browser, rel):
    """The site also works opened from disk (file://): no console error, every formula typeset."""
    if not PAGES:
        pytest.skip(f"no built site at {SITE}: run `make book` first (make test does)")
    if re.search(r'http-equiv="Refresh"', (SITE / rel).read_text(errors="replace"), re.I):
        return  # the redirect page, checked in test_page
    problems: list[str] = []
    page = browser.new_page()
    page.set_default_timeout(120_000)  # a hang detector, not a speed limit
    page.route(re.compile(r"^(?!file:|data:|blob:|about:)"), lambda r: (problems.append(
        f"request leaving the site (blocked): {r.request.url}"), r.abort("blockedbyclient")))
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    page.goto((SITE / rel).as_uri(), wait_until="load")
    if page.evaluate("() => document.querySelectorAll('.math').length"):
        rendered = page.evaluate("""async () => { if (!window.MathJax || !MathJax.startup) { return -1; }
            await MathJax.startup.promise;
            return Array.from(document.querySelectorAll('.math')).filter(e => !e.querySelector('mjx-container')).length; }""")
        if rendered != 0:
            problems.append("MathJax did not load" if rendered < 0 else f"{rendered} formulas not rendered")
    page.close()
    assert not problems, f"{rel} (file://):\n  " + "\n  ".join(problems)


#: The code column at 1280 px holds 92 characters of the 12 px monospace font (measured: 684 px of
#: 7.22 px characters, 16 px padding); tests/test_repository.py keeps visible code lines to 88.
CODE_WIDTH = 88

_READS_CLEAN_JS = r"""
async () => {
  await document.fonts.ready;
  const root = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  // shown on load: laid out, not inside a closed <details> (hide-input cells, dropdowns) or a hidden toggle
  const visible = e => e.offsetParent !== null && e.getClientRects().length > 0
    && (e.checkVisibility ? e.checkVisibility({contentVisibilityAuto: false, visibilityProperty: true}) : true)
    && !e.closest('details:not([open])');
  const firstLine = t => (t || '').split('\n').map(l => l.trim()).find(l => l.length) || '';
  const longest = t => Math.max(0, ...(t || '').split('\n').map(l => l.length));
  const cells = Array.from(root.querySelectorAll('div.cell'));
  const describe = el => {
    const cell = el.closest('div.cell');
    const input = cell ? cell.querySelector('div.cell_input') : null;
    const inOutput = !!el.closest('div.cell_output');
    return {
      cell: cell ? cells.indexOf(cell) : -1,
      kind: cell ? (inOutput ? 'output' : 'code') : 'code block in the text',
      input: input ? firstLine(input.innerText) : '',
      first: firstLine(el.innerText).slice(0, 70),
    };
  };
  const wide = [];
  const seen = new Set();
  const blocks = root.querySelectorAll(
    'div.cell_input, div.cell_output, div.output, div.highlight, pre, div.cell_output table');
  for (const el of blocks) {
    if (!visible(el) || el.scrollWidth <= el.clientWidth + 1) { continue; }
    // report the innermost block that is too wide, once per cell part
    const inner = Array.from(el.querySelectorAll('div.output, div.highlight, pre, table'))
      .some(c => visible(c) && c.scrollWidth > c.clientWidth + 1);
    if (inner) { continue; }
    const d = describe(el);
    const key = d.cell + '|' + d.kind + '|' + (d.cell < 0 ? d.first : '');
    if (seen.has(key)) { continue; }
    seen.add(key);
    d.excess_px = el.scrollWidth - el.clientWidth;
    d.longest = longest(el.innerText);
    wide.push(d);
  }
  const noisy = [];
  const warning = /\b[A-Z]\w*Warning: |\/tmp\/ipykernel_|ipykernel_\d+\/|Traceback \(most recent call last\)/;
  for (const el of root.querySelectorAll('div.cell_output div.output')) {
    const cls = el.className;
    const reason = /\bstderr\b/.test(cls) ? 'stderr output'
      : /\b(error|traceback)\b/.test(cls) ? 'an error'
      : warning.test(el.innerText) ? 'a warning' : '';
    if (reason) {
      const d = describe(el);
      const line = el.innerText.split('\n').find(l => warning.test(l)) || firstLine(el.innerText);
      d.reason = reason;
      d.first = line.trim().slice(0, 110);
      noisy.push(d);
    }
  }
  return {wide, noisy, cells: cells.length};
}
"""


def _notebook_cells(rel: str) -> list[dict]:
    """The code cells of the notebook a page was built from (for naming a block by its cell)."""
    import json

    path = ROOT / Path(rel).with_suffix(".ipynb")
    if not path.is_file():
        return []
    cells = json.loads(path.read_text())["cells"]
    return [{"index": i, "id": c.get("id"), "source": "".join(c["source"]),
             "removed": "remove-cell" in c.get("metadata", {}).get("tags", [])}
            for i, c in enumerate(cells) if c["cell_type"] == "code"]


def _name_block(block: dict, cells: list[dict], page_cells: int) -> str:
    """'notebook cell 12 (id ...)' for a block of a cell, else 'in the text'. The page's cells are the
    notebook's code cells less those tagged remove-cell, in order; where the counts disagree, a cell is
    found by the first line of its input."""
    if block["cell"] < 0:
        return f"in the text, {block['kind']}"
    shown = [c for c in cells if not c["removed"]]
    if len(shown) == page_cells:
        c = shown[block["cell"]]
        return f"notebook cell {c['index']} (id {c['id']}), {block['kind']}"
    where = f"page cell {block['cell']}"
    first = " ".join(block["input"].split())
    if first:
        for c in cells:
            lines = [l.strip() for l in c["source"].splitlines() if l.strip()]
            if lines and " ".join(lines[0].split()) == first:
                where = f"notebook cell {c['index']} (id {c['id']})"
                break
    return f"{where}, {block['kind']}"


@pytest.mark.parametrize("rel", PAGES or ["(no built site)"])
def test_page_reads_clean(context, site_server, rel):
    """In a 1280-pixel window no code cell, output or code block scrolls sideways (or spills out of the
    column: keep visible code lines to 88 characters, wrap or shorten wide output), and no output shows a
    warning, stderr or a traceback (silence the cause, e.g. a matplotlib layout call, not the warning)."""
    if not PAGES:
        pytest.skip(f"no built site at {SITE}: run `make book` first (make test does)")
    source = (SITE / rel).read_text(errors="replace")
    if re.search(r'http-equiv="Refresh"', source, re.I):
        return
    page = context.new_page()
    try:
        page.goto(f"{site_server}/{rel}", wait_until="load")
        found = page.evaluate(_READS_CLEAN_JS)
    finally:
        page.close()
    cells = _notebook_cells(rel)
    problems = []
    for b in found["wide"]:
        css = (" (within 88 characters: the column is narrower than the site's CSS promises)"
               if b["kind"] == "code" and b["longest"] <= CODE_WIDTH else "")
        problems.append(f"scrolls sideways by {b['excess_px']} px, longest line {b['longest']} chars: "
                        f"{_name_block(b, cells, found['cells'])}: {b['first']!r}{css}")
    for b in found["noisy"]:
        problems.append(f"shows {b['reason']}: {_name_block(b, cells, found['cells'])}: {b['first']!r}")
    assert not problems, f"{rel}: {len(problems)} blocks to fix\n  " + "\n  ".join(problems)


def test_reads_clean_check_catches_what_it_should(browser):
    """The checks of test_page_reads_clean can fail: a wide output, a wide code block in the text, a
    stderr output and a warning printed to stdout are found; a narrow cell and a collapsed one are not."""
    wide = "x" * 300
    html = f"""<html><body><article class="bd-article" style="width: 700px">
      <div class="cell"><div class="cell_input"><div class="highlight"><pre>narrow = 1</pre></div></div>
        <div class="cell_output"><div class="output stream"><div class="highlight"><pre>{wide}</pre></div></div></div></div>
      <div class="cell"><details><summary>Show code</summary><div class="cell_input"><div class="highlight">
        <pre>{wide}</pre></div></div></details>
        <div class="cell_output"><div class="output stderr"><pre>oops</pre></div>
        <div class="output stream"><pre>/tmp/ipykernel_1/2.py:3: UserWarning: careful</pre></div></div></div>
      <div class="highlight"><pre>{wide}</pre></div>
    </article></body></html>"""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_content(html)
    found = page.evaluate(_READS_CLEAN_JS)
    page.close()
    assert [(b["cell"], b["kind"]) for b in found["wide"]] == [(0, "output"), (-1, "code block in the text")]
    assert [(b["cell"], b["reason"]) for b in found["noisy"]] == [(1, "stderr output"), (1, "a warning")]
    assert found["cells"] == 2


def figure_problems(html: str) -> list[str]:
    """Every image a cell outputs (``<img>`` inside a cell's output) must sit in a ``<figure>`` with a
    non-empty ``<figcaption>`` and carry alt text that says what it shows, not a file name. MyST-NB takes
    both from the cell's metadata (``mystnb.figure.caption``, ``mystnb.image.alt``; tools/figure_cells.py)."""
    problems = []
    # split at each figure or bare image of a cell output; MyST-NB writes <figure ...><img ...><figcaption>
    for match in re.finditer(r"<img\b[^>]*>", html):
        tag = match.group(0)
        src = re.search(r'\bsrc="([^"]*)"', tag)
        src = src.group(1) if src else ""
        if "/_images/" not in f"/{src}" and not src.startswith("_images/") and "../_images/" not in src:
            continue  # logos, badges, icons: not a cell's figure
        alt = re.search(r'\balt="([^"]*)"', tag)
        alt = alt.group(1).strip() if alt else ""
        name = src.rsplit("/", 1)[-1]
        if not alt or alt == name or re.search(r"\.(png|svg|jpe?g)$", alt, re.I) or alt.startswith("../_images"):
            problems.append(f"{name}: no alt text (alt={alt!r})")
        before = html[:match.start()]
        opened, closed = before.rfind("<figure"), before.rfind("</figure>")
        if opened <= closed:
            problems.append(f"{name}: not inside a <figure> (no caption)")
            continue
        after = html[match.end():]
        end = after.find("</figure>")
        caption = re.search(r"<figcaption\b[^>]*>(.*?)</figcaption>", after[:end], re.S)
        if not caption or not re.sub(r"<[^>]+>", "", caption.group(1)).strip():
            problems.append(f"{name}: an empty or missing <figcaption>")
    return problems


def test_figure_check_catches_what_it_should():
    good = ('<figure class="align-default"><img alt="A roofline of the H200" src="../_images/a1.png" />'
            '<figcaption><p>What to see.</p></figcaption></figure>')
    assert figure_problems(good) == []
    assert figure_problems('<img alt="" src="../_images/b2.png" />')[0].startswith("b2.png: no alt text")
    bare = '<img alt="../_images/c3.png" src="../_images/c3.png" />'
    assert [p.split(":", 1)[1].strip() for p in figure_problems(bare)] == [
        "no alt text (alt='../_images/c3.png')", "not inside a <figure> (no caption)"]
    empty = '<figure><img alt="A plot" src="../_images/d4.png" /><figcaption><p> </p></figcaption></figure>'
    assert figure_problems(empty) == ["d4.png: an empty or missing <figcaption>"]
    assert figure_problems('<img alt="logo" src="_static/logo.png" />') == []


@pytest.mark.parametrize("rel", PAGES or ["(no built site)"])
def test_every_figure_has_a_caption_and_alt_text(rel):
    """A screen reader reads a figure's alt text aloud (the file name when there is none), and a caption says
    what to see in it: every figure a cell draws has both (cell metadata, see tools/figure_cells.py)."""
    if not PAGES:
        pytest.skip(f"no built site at {SITE}: run `make book` first (make test does)")
    problems = figure_problems((SITE / rel).read_text(errors="replace"))
    assert not problems, f"{rel}: {len(problems)} figures to fix\n  " + "\n  ".join(problems)
