"""gpuperf.records: saving and loading recorded GPU runs with their provenance."""

import json

import pytest

from gpuperf.records import describe_provenance, load_run, save_run

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


@pytest.mark.parametrize("bad", ["", "../elementwise_h200", "a\\b", ".hidden", None, 3])
def test_names_that_are_not_plain_stems_are_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="name must be a plain file stem") as err:
        load_run(bad, data_dir=tmp_path)
    assert repr(bad) in str(err.value)
    with pytest.raises(ValueError, match="name must be"):
        save_run(bad, [], PROV, data_dir=tmp_path)


def test_save_run_checks_results_and_prov(tmp_path):
    with pytest.raises(ValueError, match="results must be a list"):
        save_run("x", {"kernel": "copy"}, PROV, data_dir=tmp_path)
    with pytest.raises(ValueError, match="prov must be"):
        save_run("x", [], "NVIDIA H200", data_dir=tmp_path)


def test_load_run_falls_back_to_the_package_data(tmp_path, monkeypatch):
    # An install without the repository (pip from git, on Colab) has no book/data; the package's data folder
    # is looked in next, and the error names both folders when neither has the run.
    import gpuperf.records as recorded

    repo, package = tmp_path / "repo", tmp_path / "package"
    save_run("shipped", [{"kernel": "copy", "time_s": 2e-3}], PROV, data_dir=package)
    monkeypatch.setattr(recorded, "DATA_DIR", repo)  # does not exist
    monkeypatch.setattr(recorded, "PACKAGE_DATA_DIR", package)
    assert recorded.load_run("shipped")["results"] == [{"kernel": "copy", "time_s": 2e-3}]
    save_run("shipped", [{"kernel": "copy", "time_s": 1e-3}], PROV, data_dir=repo)
    assert recorded.load_run("shipped")["results"][0]["time_s"] == 1e-3  # the repository's copy wins
    with pytest.raises(ValueError, match=r"'absent'.*\['shipped'\].*repo.*package"):
        recorded.load_run("absent")


def test_describe_provenance_names_a_run_without_provenance():
    with pytest.raises(ValueError, match="run must be a run whose provenance has"):
        describe_provenance({"results": []})
    with pytest.raises(ValueError, match=r"missing \['driver'\]"):
        describe_provenance({"provenance": {k: v for k, v in PROV.items() if k != "driver"}})
    text = describe_provenance({"provenance": {k: v for k, v in PROV.items() if k != "cuda"}})
    assert "CUDA ?" in text  # optional fields may be absent


def test_the_repository_run_loads_with_its_provenance():
    from gpuperf.records import DATA_DIR

    run = load_run("elementwise_h200")
    assert (DATA_DIR / "elementwise_h200.json").is_file()
    assert describe_provenance(run).startswith("Measured on the NVIDIA H200 (driver ")


def test_live_gpu_available_checks_its_arguments_and_needs_cuda():
    import pytest as _pytest

    from gpuperf import records as _rec

    with _pytest.raises(ValueError, match="^min_capability must be"):
        _rec.live_gpu_available(min_capability=(8,))
    with _pytest.raises(ValueError, match="^min_memory_gb must be"):
        _rec.live_gpu_available(min_memory_gb=-1)
    if not _rec.cuda_available():
        assert _rec.live_gpu_available() is False
    else:  # a GPU with more memory than any made cannot qualify
        assert _rec.live_gpu_available(min_memory_gb=1e6) is False
