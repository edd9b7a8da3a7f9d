"""Browser tests: headless Chromium (the system's, Debian's `chromium` package) driven by Playwright (PyPI).

`make test` runs them after the strict site build (`make book`); `.ci/run` installs Chromium when it is
missing. On a machine without Chromium they are skipped with the command that installs it. Playwright's
own browser download (`playwright install`) is never used.

Environment: ``CHROMIUM`` (the browser binary; default: `chromium` on PATH), ``GPUPERF_SITE`` (the built
site; default `_build/html` of this checkout).
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL_HINT = ("install Chromium to run the browser tests: `sudo apt-get install -y chromium` (Debian/Ubuntu), "
                "or point CHROMIUM at a Chromium binary")


def chromium_path() -> str | None:
    candidates = [os.environ.get("CHROMIUM"), shutil.which("chromium"), shutil.which("chromium-browser")]
    return next((c for c in candidates if c and Path(c).is_file()), None)


def site_dir() -> Path:
    return Path(os.environ.get("GPUPERF_SITE", ROOT / "_build" / "html")).resolve()


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        pytest.skip(f"no Chromium found: {INSTALL_HINT}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed: `.venv/bin/pip install -r requirements.txt`")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=path, args=["--disable-gpu", "--no-sandbox"])
        yield b
        b.close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture(scope="session")
def site_server():
    """A plain static file server over the built site, on a free local port: its origin URL."""
    site = site_dir()
    if not (site / "index.html").is_file():
        pytest.skip(f"no built site at {site}: run `make book` first (make test does)")
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
