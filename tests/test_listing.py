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

def test_bench_cuda_region_is_read_and_highlighted_as_cuda():
    f = listing.bench_file("part1_kernels.cu")
    text = listing.source_region(f, "stream_read")
    assert text.startswith('extern "C" __global__ void stream_read(')
    assert text.rstrip().endswith("}") and "listing" not in text
    assert listing.source_language(f, "stream_read") == "cuda"
    assert listing.show_source(f, "stream_read").data == listing.wrap_listing(text, "cuda")


def test_cuda_held_in_a_python_string_is_highlighted_as_cuda():
    f = listing.bench_file("memory_gpu.py")
    text = listing.source_region(f, "coalesce")
    assert "__global__" in text and "listing" not in text
    assert listing.source_language(f, "coalesce") == "cuda"


def test_every_bench_region_of_the_chapters_starts_at_a_signature():
    f = listing.bench_file("part1_kernels.cu")
    for name in ("stream_read", "div_branch", "div_nested", "div_loop", "chase_global"):
        assert listing.source_region(f, name).startswith('extern "C" __global__ void '), name


def test_a_missing_bench_region_names_it():
    with pytest.raises(ValueError, match="'nope'"):
        listing.source_region(listing.bench_file("part1_kernels.cu"), "nope")


def test_bench_file_names_stay_inside_bench():
    for bad in ("", "../lib/x.py", "/etc/passwd"):
        with pytest.raises(ValueError, match="name"):
            listing.bench_file(bad)


def test_without_bench_the_listing_links_the_repository(monkeypatch, tmp_path):
    """A pip install (Colab) has no bench/: the cell shows a note with a link, not an error."""
    monkeypatch.setattr(listing, "BENCH_DIR", tmp_path / "absent")
    f = listing.bench_file("part1_kernels.cu")
    with pytest.raises(FileNotFoundError, match="part1_kernels.cu"):
        listing.source_region(f, "stream_read")
    note = listing.show_source(f, "stream_read")
    assert type(note).__name__ == "Markdown"
    assert f"{listing.REPOSITORY_URL}/blob/main/bench/part1_kernels.cu" in note.data
    assert "`stream_read`" in note.data


def test_the_repository_url_is_the_sites():
    import re
    from pathlib import Path

    config = (Path(__file__).resolve().parents[1] / "_config.yml").read_text()
    assert re.search(rf"^\s*url:\s*{re.escape(listing.REPOSITORY_URL)}\s*$", config, re.M)
    assert re.search(rf"^\s*branch:\s*{listing.REPOSITORY_BRANCH}\s*$", config, re.M)


def test_wrap_listing_keeps_every_line_within_the_page():
    from gpuperf.plotting.listing import wrap_listing

    long_code = "x = aaaa + bbbb + cccc + dddd + eeee + ffff + gggg + hhhh + iiii + jjjj + kkkk + llll"
    wrapped = wrap_listing(long_code, "python", 40)
    assert all(len(line) <= 40 for line in wrapped.splitlines())
    assert wrapped.splitlines()[0].endswith("\\")  # no bracket open: a continuation backslash
    call = "f(aaaa, bbbb, cccc, dddd, eeee, ffff, gggg, hhhh, iiii, jjjj, kkkk, llll, mmmm)"
    assert not any(line.endswith("\\") for line in wrap_listing(call, "python", 40).splitlines())
    comment = "    # " + "word " * 30
    assert all(line.startswith("    # ") for line in wrap_listing(comment, "python", 40).splitlines())
    cuda = "int x = 1;  // " + "note " * 20
    lines = wrap_listing(cuda, "cuda", 40).splitlines()
    assert lines[-1] == "int x = 1;" and all(l.startswith("// ") for l in lines[:-1])
    assert wrap_listing("short", "python") == "short"
