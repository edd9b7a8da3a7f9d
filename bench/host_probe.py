"""Where the host time of one small Triton call goes (H200, Triton 3.6): a probe, not a benchmark family.

Times, with :func:`gpuperf.benchmark.time_host_callable` (calls back to back, no synchronisation between
them, median per call), the pieces of one call of the fused softmax at fp16 32 x 1024:

* ``torch.softmax`` (the whole PyTorch call) and ``torch.empty_like`` alone;
* Triton's own ``kernel[grid](...)`` and our cached ``CompiledKernel[grid](...)`` (``gpuperf.kernels._launch``);
* the compiled kernel's launcher object (``CudaLauncher``) called with no hooks and no launch metadata;
* the C ``launch`` function of the launcher alone (what every path ends in);
* one replay of a CUDA graph holding the same launch;
* ``fill_tma_descriptor`` (one tensor map, as a host-descriptor launch encodes four per call).

Usage: ``python bench/host_probe.py [--out FILE.json]``. Prints a table; GPU only. The private Triton
attributes it reads (``CompiledKernel.run``, ``CudaLauncher.launch``, ``launch_cooperative_grid``,
``launch_pdl``, ``packed_metadata``) are those of Triton 3.6 (python/triton/backends/nvidia/driver.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="write the times (seconds) as JSON here")
    args = parser.parse_args(argv)
    import torch

    from gpuperf.benchmark import time_host_callable
    from gpuperf.kernels import _launch
    from gpuperf.kernels import softmax as sm

    x = (torch.randn(32, 1024, device="cuda") * 3).half()
    y = torch.empty_like(x)
    kargs = (x, y, 1024, 1024, 1024, 1024, True)
    compiled = sm._fused_kernel[(32,)](*kargs, num_warps=4)
    torch.cuda.synchronize()
    stream = torch.cuda.current_stream().cuda_stream
    launcher = compiled.run
    c_launch = launcher.launch
    meta = compiled.packed_metadata
    coop, pdl = launcher.launch_cooperative_grid, launcher.launch_pdl
    ref = torch.softmax(x.float(), -1).half()

    def direct():
        c_launch(32, 1, 1, stream, compiled.function, coop, pdl, None, None, meta, None, None, None, *kargs)

    direct()
    torch.cuda.synchronize()
    if not torch.allclose(y.float(), ref.float(), atol=1e-3):
        raise RuntimeError("the direct C launch computed a wrong softmax")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        sm._fused_kernel[(32,)](*kargs, num_warps=4)
    pieces = {
        "torch.softmax": lambda: torch.softmax(x, dim=-1),
        "torch.empty_like": lambda: torch.empty_like(x),
        "gpuperf softmax": lambda: sm.softmax(x),
        "triton kernel[grid]": lambda: sm._fused_kernel[(32,)](*kargs, num_warps=4),
        "gpuperf _launch.launch": lambda: _launch.launch(sm._fused_kernel, (32,), kargs, (("num_warps", 4),)),
        "CompiledKernel[grid]": lambda: compiled[(32, 1, 1)](*kargs, stream=stream),
        "CudaLauncher, no hooks": lambda: launcher(32, 1, 1, stream, compiled.function, meta, None, None, None,
                                                   *kargs),
        "C launch alone": direct,
        "CUDA graph replay": graph.replay,
    }
    try:
        import triton
        from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401

        utils = triton.runtime.driver.active.utils
        q = torch.randn(16 * 1024, 64, device="cuda").half()
        pieces["fill_tma_descriptor"] = lambda: utils.fill_tma_descriptor(q.data_ptr(), 128, 2, 6, [128, 64],
                                                                          [16 * 1024, 64], [64, 1], 0)
        pieces["fill_tma_descriptor"]()
    except Exception as exc:  # noqa: BLE001 - a Triton whose signature differs: report and go on
        print(f"fill_tma_descriptor not timed: {type(exc).__name__}: {exc}")
    times = {}
    for name, fn in pieces.items():
        try:
            times[name] = time_host_callable(fn)
        except Exception as exc:  # noqa: BLE001 - one piece that fails to run is reported, the rest timed
            print(f"{name} not timed: {type(exc).__name__}: {str(exc).splitlines()[0]}")
    for name, t in times.items():
        print(f"{name:<28} {t * 1e6:8.2f} us")
    if args.out is not None:
        args.out.write_text(json.dumps(times, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
