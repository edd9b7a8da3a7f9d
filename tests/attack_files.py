"""The attack files of the graders' tests (``tests/grading_attacks_round<N>/``), loaded without grading them.

Each attack file is a learner's cell: it defines a function (and its kernels) and ends with one line
``result = grading.grade("KEY", fn)``. The tests run the file up to that line, in a module of its own, and
grade ``fn`` themselves (with their seed, ``only=``, ``stop_at_first_failure=``)::

    from attack_files import find_attack, load_attack

    key, fn = load_attack(find_attack(8, "a27"))          # tests/grading_attacks_round8/a27_*.py
    report = grading.grade_report(key, fn, seed=SEED)

- :func:`attack_folder` ``(round_number)``: the folder of one round (``tests/grading_attacks_round8``).
- :func:`find_attack` ``(round_number, tag)``: the file of that round whose name starts with ``tag + "_"``.
- :func:`load_attack` ``(path, text=None)``: ``(key, fn)``; ``text`` replaces the file's text (an edited
  copy, compiled under the file's own name).
- :func:`load_attack_variant` ``(path, *edits)``: ``(key, fn)`` of the file with each ``(old, new)`` replaced
  once, compiled under a name of its own that ``inspect.getsource`` (and so Triton) reads the edited text from.

Importing this module imports nothing of the course (an attack that patches something before the grader is
imported can be loaded first). Only the standard library."""

from __future__ import annotations

import linecache
import os
import re
import sys
from pathlib import Path
from typing import Callable

TESTS = Path(__file__).resolve().parent
#: The last line of every attack file: ``name = grading.grade("KEY", fn)``.
GRADE_LINE = re.compile(r'^(\w+) = grading\.grade\("([^"]+)", (\w+)\)\s*$', re.M)


def attack_folder(round_number: int) -> Path:
    """``tests/grading_attacks_round<round_number>``."""
    return TESTS / f"grading_attacks_round{round_number}"


def find_attack(round_number: int, tag: str) -> Path:
    """The attack file of round ``round_number`` whose name starts with ``tag`` and an underscore (``"a27"``,
    ``"45"``, ``"h06"``); the first in sorted order if several do."""
    found = sorted(attack_folder(round_number).glob(f"{tag}_*.py"))
    assert found, f"no file {tag}_*.py in {attack_folder(round_number)}"
    return found[0]


def load_attack(path: Path, text: str | None = None) -> tuple[str, Callable]:
    """``(key, fn)`` of attack file ``path``: its code (or ``text``, an edited copy) run up to its
    ``grading.grade(...)`` line in a module ``attack_<stem>``, and the exercise key and function that line
    names. ``$ATTACK_REPO`` is set to this repository if unset, and a folder with helper modules of its own
    (``_*.py``, round 1) goes on ``sys.path``, as the files expect when run as scripts."""
    path = Path(path)
    if any(path.parent.glob("_*.py")) and str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    return _run_to_grade_line(path.read_text() if text is None else text, str(path), f"attack_{path.stem}")


def load_attack_variant(path: Path, *edits: tuple[str, str]) -> tuple[str, Callable]:
    """``(key, fn)`` of attack file ``path`` with each ``(old, new)`` of ``edits`` replaced (each ``old`` must
    occur exactly once), run as :func:`load_attack` runs a file, under a file name of its own
    (``<variant_...>.py`` beside the file, in ``linecache``: Triton reads a kernel's source from there)."""
    path = Path(path)
    text = path.read_text()
    for old, new in edits:
        assert text.count(old) == 1, f"{path.name}: {old!r} found {text.count(old)} times"
        text = text.replace(old, new)
    name = f"variant_{path.stem.split('_')[0]}_{abs(hash(edits))}"
    filename = str(path.with_name(f"<{name}>.py"))
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    return _run_to_grade_line(text, filename, name)


def _run_to_grade_line(text: str, filename: str, module_name: str) -> tuple[str, Callable]:
    m = GRADE_LINE.search(text)
    assert m, f"{Path(filename).name}: no grading.grade line"
    os.environ.setdefault("ATTACK_REPO", str(TESTS.parent))
    module = type(sys)(module_name)
    module.__file__ = filename
    sys.modules[module_name] = module  # Triton's interpreter looks a kernel's module up by name
    exec(compile(text[:m.start()], filename, "exec"), module.__dict__)
    return m.group(2), module.__dict__[m.group(3)]
