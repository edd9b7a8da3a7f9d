"""gpuperf: the models, simulators and kernels behind "GPU Performance from First Principles".

Importing the package is cheap and side-effect free: it never imports torch or triton and never
queries a device. Modules that need torch (the Triton kernels under ``gpuperf.kernels``) import it
themselves, so ``import gpuperf.roofline`` works on a machine with only numpy and matplotlib.

The layout (CONTRIBUTING.md, "The package"): the models and simulators a chapter teaches at the root, one
concept a module; the Triton kernels in ``gpuperf.kernels``; every measurement in ``gpuperf.benchmark``;
reading recorded runs and scoring them in ``gpuperf.results``; figures and tables in ``gpuperf.plotting``.
"""

__version__ = "0.1.0"
