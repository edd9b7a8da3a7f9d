"""gpuperf.plotting.listing: a region read from a module's source, markers dropped, errors that name the region."""

import pytest

from gpuperf.plotting import listing


def _sample(x):
    y = x + 1
    # listing: core
    z = y * 2
    if z > 3:
        z -= 1
    # end listing: core
    return z


class _Jitted:
    """Stands in for a Triton JITFunction: the Python function sits in .fn."""

    def __init__(self, fn):
        self.fn = fn


def test_region_is_dedented_and_markers_dropped():
    text = listing.source_region(_sample, "core")
    assert text.splitlines() == ["z = y * 2", "if z > 3:", "    z -= 1"]


def test_whole_function_drops_markers_and_reads_through_fn():
    text = listing.source_region(_Jitted(_sample))
    assert text.startswith("def _sample(x):")
    assert "listing" not in text
    assert listing.longest_line(text) == len("def _sample(x):")


def test_missing_region_names_it():
    with pytest.raises(ValueError, match="'nope'"):
        listing.source_region(_sample, "nope")


def test_no_source_is_a_value_error():
    with pytest.raises(ValueError, match="obj"):
        listing.source_region(len)


def test_show_source_returns_a_code_display():
    code = listing.show_source(_sample, "core")
    assert "z = y * 2" in code.data


def _older(x):
    """Doc of the older one."""
    y = x + 1
    return y


def _newer(x):
    """Another doc, not compared."""
    y = x + 2
    return y


def test_source_diff_keeps_only_changed_lines_without_docstrings():
    text = listing.source_diff(_older, _newer)
    changed = [line for line in text.splitlines() if not line.startswith("@@")]
    assert changed == ["-def _older(x):", "-    y = x + 1", "+def _newer(x):", "+    y = x + 2"]
    assert "doc" not in text.lower()


def test_source_diff_can_keep_docstrings_and_show_diff_is_code():
    assert "Doc of the older one" in listing.source_diff(_older, _newer, docstrings=True)
    assert "+    y = x + 2" in listing.show_diff(_older, _newer).data
