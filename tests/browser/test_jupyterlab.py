"""The labs as a learner opens them in JupyterLab (issue 30): every hint and solution arrives collapsed, and no
MyST-only markup shows as raw text.

JupyterLab renders plain Markdown and HTML only, so a `:class: dropdown` admonition would show its whole
solution right under the exercise; the labs use `<details><summary>` instead. This opens each lab in a real
JupyterLab server (the course environment's, `make lab`) in headless Chromium and reads the rendered page.
Skipped without Chromium or JupyterLab.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LABS = sorted((ROOT / "labs").glob("L*.ipynb"))
RAW_MYST = re.compile(r"\{(term|doc|ref|admonition|dropdown)\}|:class: dropdown|```\{")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (make env installs it)")
    port = _free_port()
    home = tmp_path_factory.mktemp("jupyter")
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"))
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.token=",
           "--ServerApp.password=", f"--ServerApp.root_dir={ROOT}", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while True:
        try:
            urllib.request.urlopen(f"{url}/api", timeout=2)
            break
        except OSError:
            if server.poll() is not None or time.time() > deadline:
                server.kill()
                pytest.fail("JupyterLab did not start within 120 s")
            time.sleep(0.5)
    yield url
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()


def _details_in_source(path: Path) -> int:
    nb = json.loads(path.read_text())
    return sum("".join(c["source"]).count("<details>") for c in nb["cells"] if c["cell_type"] == "markdown")


@pytest.mark.parametrize("lab", LABS, ids=[p.stem for p in LABS])
def test_lab_hints_and_solutions_arrive_collapsed_in_jupyterlab(browser, lab_server, lab):
    expected = _details_in_source(lab)
    assert expected > 0, f"{lab.name} has no <details> hint or solution"
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        # a workspace of its own, reset: no tab of an earlier lab stays open beside it
        page.goto(f"{lab_server}/lab/workspaces/{lab.stem}/tree/labs/{lab.name}?reset")
        page.wait_for_selector(".jp-RenderedMarkdown details", state="attached", timeout=120_000)
        page.wait_for_timeout(2000)  # the rest of the notebook's Markdown renders
        details = page.locator(".jp-RenderedMarkdown details")
        assert details.count() == expected, (
            f"{lab.name}: {details.count()} <details> rendered, {expected} in the notebook")
        assert page.locator(".jp-RenderedMarkdown details[open]").count() == 0, f"{lab.name}: a hint opens itself"
        shown = page.locator(".jp-RenderedMarkdown details pre").evaluate_all(
            "els => els.filter(e => e.checkVisibility()).length")
        assert shown == 0, f"{lab.name}: {shown} code block(s) inside a closed hint or solution are visible"
        raw = [t for t in page.locator(".jp-RenderedMarkdown").all_inner_texts() if RAW_MYST.search(t)]
        assert not raw, f"{lab.name}: MyST-only markup shows as raw text: {raw[0][:200]!r}"
    finally:
        page.close()
