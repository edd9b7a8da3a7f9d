"""gpuperf.results.sheet, chapters 01-04's entries: read from the hardware table and the records, with the
idle and the loaded bytes in flight both on the sheet and told apart."""

from gpuperf.results import sheet


def test_part1_values():
    v = sheet.sheet_value
    assert round(v("l2_first_read_cycles")) == 330 and round(v("l2_hit_cycles")) == 287
    assert round(v("hbm_cycles")) == 669 and round(v("hbm_latency_s") * 1e9) == 338
    assert round(v("in_flight_idle_per_sm")) == 12 and v("in_flight_measured_per_sm") == 32
    assert round(v("copy_events_bytes_per_s") / 1e12, 2) == 4.25
    assert v("warp_threads") == 32 and v("max_warps_per_sm") == 64 and v("schedulers_per_sm") == 4


def test_every_part1_chapter_has_a_box_and_says_how():
    for chapter in ("01", "02", "03", "04"):
        numbers = sheet.numbers_to_remember(chapter)
        assert numbers and all(n.how for n in numbers), chapter
    labels = {n.key: n.label for n in sheet.h200_sheet()}
    assert "idle" in labels["in_flight_idle_per_sm"] and "loaded" in labels["in_flight_measured_per_sm"]
