"""Reading recorded runs and scoring them.

Everything that reads a run recorded on a GPU (``book/data/*.json``, shipped as ``gpuperf/data``) lives
here (the record format itself, loading and saving a run with its provenance, is :mod:`gpuperf.records`,
below both this package and :mod:`gpuperf.benchmark`); :mod:`~gpuperf.results.elementwise`,
:mod:`~gpuperf.results.matmul` and :mod:`~gpuperf.results.attention` read the elementwise, matmul_roof and attention families' rows;
:mod:`~gpuperf.results.latency` reads the pointer chase's latencies; :mod:`~gpuperf.results.matmul_targets`
reads the matmul targets' rounds; :mod:`~gpuperf.results.scoreboard` scores every kernel against its target
on the recorded runs.
The models and simulators a chapter teaches stay at the package root; measuring lives in
:mod:`gpuperf.benchmark`. Importing this subpackage imports none of its modules.
"""
