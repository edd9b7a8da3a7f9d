"""The one H200 sheet of numbers to remember (gpuperf.results.sheet) and its box."""

import pytest

from gpuperf.plotting.tables import format_numbers_box_html
from gpuperf.results import sheet


def test_every_number_names_how_it_was_obtained_and_who_quotes_it():
    numbers = sheet.h200_sheet()
    assert numbers and len({n.key for n in numbers}) == len(numbers)
    for n in numbers:
        assert n.how and n.unit is not None and n.label and n.chapters, n.key
        assert all(len(c) == 2 and c.isdigit() for c in n.chapters), n.key
        assert n.value == n.value and n.value > 0, n.key  # not NaN, positive


def test_the_sheet_reads_the_hardware_table_and_the_recorded_chase():
    from gpuperf import hardware
    from gpuperf.results.latency import recorded_latency_levels

    assert sheet.sheet_value("hbm_bytes_per_s") == hardware.get_accelerator("H200 SXM").hbm_bytes_per_s
    assert sheet.sheet_value("hbm_cycles") == recorded_latency_levels()[0].hbm_cycles
    with pytest.raises(KeyError, match="not on the H200 sheet"):
        sheet.sheet_value("no such number")


def test_a_chapter_box_shows_its_numbers_in_human_units():
    html = format_numbers_box_html(sheet.numbers_to_remember("05"))
    assert "Numbers to remember" in html and "0.45 TB/s" in html and "38.9 ms" in html
    with pytest.raises(ValueError, match="nothing to show"):
        format_numbers_box_html([])
