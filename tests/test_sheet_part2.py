"""The H200 sheet of numbers to remember: chapters 06-08's entries, read from the hardware table and records."""

import math

import pytest

from gpuperf import hardware
from gpuperf.plotting.tables import format_numbers_box_html
from gpuperf.results import sheet


def test_every_key_once_and_every_entry_says_how_it_was_obtained():
    numbers = sheet.h200_sheet()
    assert len({n.key for n in numbers}) == len(numbers)
    assert all(n.how and n.chapters and math.isfinite(n.value) for n in numbers)


@pytest.mark.parametrize("chapter", ["06", "07", "08"])
def test_part2_chapters_have_a_box(chapter):
    numbers = sheet.numbers_to_remember(chapter)
    assert len(numbers) >= 4
    html = format_numbers_box_html(numbers)
    assert html.count("<li>") == len(numbers)


def test_part2_values_match_their_sources():
    h200 = hardware.get_accelerator("H200 SXM")
    assert sheet.sheet_value("bf16_ridge") == h200.ridge_point_flop_per_byte("bf16")
    assert sheet.sheet_value("bf16_matrix_peak") == h200.peak_flop_per_s("bf16")
    assert round(sheet.sheet_value("launch_eager_s"), 1) == 9.4  # overhead_h200.json, microseconds
    assert round(sheet.sheet_value("graph_replay_s"), 1) == 1.0
    assert round(sheet.sheet_value("triton_matmul_host_s"), 1) == 20.7  # host_h200.json
    assert round(sheet.sheet_value("torch_matmul_host_s"), 1) == 16.2
    assert round(sheet.sheet_value("copy_bytes_per_s") / 1e12, 2) == 4.18
    assert round(sheet.sheet_value("tile_128x256_intensity")) == 84
    assert round(sheet.sheet_value("triton_over_cublas_4096"), 2) == 0.96
    # every timed number says how it was timed
    for key in ("copy_bytes_per_s", "triton_over_cublas_4096"):
        assert "do_bench" in next(n for n in sheet.h200_sheet() if n.key == key).how
    for key in ("launch_eager_s", "triton_matmul_host_s", "torch_matmul_host_s"):
        assert "wall clock" in next(n for n in sheet.h200_sheet() if n.key == key).how
