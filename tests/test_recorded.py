"""gpuperf.recorded: saving and loading recorded GPU runs with their provenance."""

import json

import pytest

from gpuperf.recorded import describe_provenance, load_run, save_run

PROV = {"device": "NVIDIA H200", "driver": "580.1", "cuda": "13.0", "torch": "2.11.0", "triton": "3.6.0",
        "python": "3.12.3", "date": "2026-11-30", "command": "make bench"}


def test_round_trip(tmp_path):
    rows = [{"kernel": "copy", "time_s": 1.5e-3}]
    path = save_run("demo", rows, PROV, data_dir=tmp_path)
    assert json.loads(path.read_text())["results"] == rows
    run = load_run("demo", data_dir=tmp_path)
    assert run["provenance"]["device"] == "NVIDIA H200"
    text = describe_provenance(run)
    for piece in ("NVIDIA H200", "580.1", "2.11.0", "3.6.0", "2026-11-30"):
        assert piece in text


def test_missing_run_lists_known_runs(tmp_path):
    save_run("present", [{"x": 1}], PROV, data_dir=tmp_path)
    with pytest.raises(ValueError, match=r"'absent'.*present"):
        load_run("absent", data_dir=tmp_path)


def test_provenance_is_required(tmp_path):
    bad = dict(PROV, driver="")
    with pytest.raises(ValueError, match="driver"):
        save_run("x", [], bad, data_dir=tmp_path)
    (tmp_path / "old.json").write_text(json.dumps({"name": "old", "provenance": {"device": "x"}, "results": []}))
    with pytest.raises(ValueError, match="lacks provenance"):
        load_run("old", data_dir=tmp_path)


def test_name_must_be_plain(tmp_path):
    with pytest.raises(ValueError, match="name"):
        save_run("a/b", [], PROV, data_dir=tmp_path)
