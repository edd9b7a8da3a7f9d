"""The course's solutions to the labs' Triton exercises (``labs/L*.ipynb``), one module per lab.

Each lab notebook shows these functions, character for character, inside its collapsed solutions (the
notebook's solution cells are checked against this source by ``tests/test_labs.py``), and its exercise cells
hold stubs with the same signatures. :func:`gpuperf.grading.grade` falls back to them until the reader's own
function passes, and grades them instead of the reader's cells when ``GPUPERF_LAB_SOLUTIONS=1``.
"""
