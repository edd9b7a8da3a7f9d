"""Interactive explorers (ipywidgets 7 and 8) that call the models in ``gpuperf`` and draw with ``gpuperf.plotting``."""
