"""Reading recorded runs and scoring them.

Everything that reads a run recorded on a GPU (``book/data/*.json``, shipped as ``gpuperf/data``) lives
here: :mod:`~gpuperf.results.recorded` loads and saves a run with its provenance, and says whether a GPU is
here to measure live; :mod:`~gpuperf.results.elementwise`, :mod:`~gpuperf.results.matmul` and
:mod:`~gpuperf.results.attention` read the elementwise, matmul_roof and attention families' rows;
:mod:`~gpuperf.results.latency` reads the pointer chase's latencies; :mod:`~gpuperf.results.matmul_targets`
reads the matmul targets' rounds; :mod:`~gpuperf.results.scoreboard` scores every kernel against its target
on the recorded runs.
The models and simulators a chapter teaches stay at the package root; measuring lives in
:mod:`gpuperf.benchmark`. Importing this subpackage imports none of its modules.
"""
