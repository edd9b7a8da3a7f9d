"""Fixtures shared by the tests in this folder (the subfolders keep their own conftest.py as well)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

try:  # no property test may fail because the machine is busy (issue: a test suite that never flakes)
    from hypothesis import HealthCheck, settings

    # Hypothesis's defaults fail an example that runs over 200 ms (deadline) and a strategy that is slow to
    # draw (HealthCheck.too_slow): both are wall-clock timings, which a loaded 2-core CI machine or a
    # compiling GPU run can exceed. The course's profile turns both off for every test; a test's own
    # @settings(...) inherits it.
    settings.register_profile("course", deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("course")
except ImportError:  # hypothesis is in requirements.txt; the tests that use it import it themselves
    pass


def _toc_entries(node) -> list[str]:
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("file", "root"):
                found.append(value)
            else:
                found.extend(_toc_entries(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_toc_entries(item))
    return found


@pytest.fixture(scope="session")
def toc_files() -> list[str]:
    """Every page `_toc.yml` lists (its `root` and each `file`), in order, duplicates kept."""
    return _toc_entries(yaml.safe_load((ROOT / "_toc.yml").read_text()))


def _check_every_control_changes_the_text(live, names) -> None:
    """Each named control of a live explorer, stepped to its next option, changes the text from the default
    state, and stepping it back restores that text exactly."""
    before = live.text.value
    for name in names:
        widget = live.controls[name]
        old = widget.value
        widget.value = (old + 1) % len(widget.options)
        assert live.text.value != before, name
        widget.value = old
        assert live.text.value == before


@pytest.fixture
def every_control_changes_the_text():
    """The check above, as a function a test calls with ``(live_explorer, control_names)``."""
    return _check_every_control_changes_the_text
