"""One rule for "installed code" in the grader: the watch's checks (a library's kernel, frames of a package,
a patch's origin) and the hook and thread checks agree on packages installed with ``pip install --target``."""

import os
import sys

from gpuperf import grading
from gpuperf.grading import watch


def _target_folder(tmp_path):
    site = tmp_path / "target"
    (site / "somepkg-1.0.dist-info").mkdir(parents=True)
    (site / "somepkg").mkdir()
    module = site / "somepkg" / "__init__.py"
    module.write_text("x = 1\n")
    return site, str(module)


def test_a_target_install_on_sys_path_counts_as_installed_in_both_checks(tmp_path, monkeypatch):
    site, module = _target_folder(tmp_path)
    assert not watch._installed_path(module)
    monkeypatch.syspath_prepend(str(site))
    assert watch._installed_path(module)
    assert grading._installed_file(module)
    assert not watch._foreign(module, "/nowhere/")


def test_the_working_folder_never_counts_as_installed(tmp_path, monkeypatch):
    site, module = _target_folder(tmp_path)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(site)
    assert not watch._installed_path(module)
    assert not grading._installed_file(module)


def test_a_folder_without_metadata_is_the_readers(tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "helper.py").write_text("y = 2\n")
    monkeypatch.syspath_prepend(str(mine))
    assert not watch._installed_path(str(mine / "helper.py"))
    assert watch._foreign(str(mine / "helper.py"), "/nowhere/")


def test_site_packages_by_name_still_counts():
    assert watch._installed_path(os.sep + os.path.join("x", "site-packages", "p", "m.py"))
    assert watch._installed_path(os.sep + os.path.join("x", "dist-packages", "p", "m.py"))
    assert sys.path  # the rule reads sys.path as it is at each call
