"""gpuperf: the models, simulators and kernels behind "GPU Performance from First Principles".

Importing the package is cheap and side-effect free: it never imports torch or triton and never
queries a device. Modules that need torch (the Triton kernels under ``gpuperf.kernels``) import it
themselves, so ``import gpuperf.roofline`` works on a machine with only numpy and matplotlib.
"""

__version__ = "0.1.0"
