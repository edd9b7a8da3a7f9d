"""Ask the CUDA occupancy API on the GPU at hand and compare it with :func:`gpuperf.memory.sm_occupancy`.

Needs CuPy (preinstalled on Colab; ``pip install cupy-cuda12x`` elsewhere) and a CUDA GPU whose compute
capability :func:`gpuperf.hardware.get_sm_limits` knows (7.5, 8.0, 9.0). CuPy is imported inside the
functions, never at import time. ``bench/memory_gpu.py`` runs the full grid recorded for the book.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuperf.hardware import get_sm_limits
from gpuperf.memory.occupancy import sm_occupancy

#: CUDA C++ device template ``hungry<N>``: each thread keeps ``N`` floats live across four dependent passes,
#: so the compiler needs about ``N`` registers per thread (``bench/memory_gpu.py`` instantiates it too).
REGISTER_HUNGRY_SOURCE = r"""
template <int N>
__device__ void hungry(const float* __restrict__ in, float* __restrict__ out, int n) {
    float acc[N];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    #pragma unroll
    for (int j = 0; j < N; ++j) acc[j] = in[(i + j * 977) % n];
    #pragma unroll
    for (int r = 0; r < 4; ++r) {
        #pragma unroll
        for (int j = 0; j < N; ++j) acc[j] = acc[j] * acc[(j + r + 1) % N] + 1.0f;
    }
    float s = 0.0f;
    #pragma unroll
    for (int j = 0; j < N; ++j) s += acc[j];
    out[i] = s;
}"""
_SOURCE = REGISTER_HUNGRY_SOURCE + r"""
extern "C" __global__ void live_regs_8(const float* in, float* out, int n) { hungry<8>(in, out, n); }
extern "C" __global__ void live_regs_64(const float* in, float* out, int n) { hungry<64>(in, out, n); }
extern "C" __global__ void live_smem_12288(const float* in, float* out, int n) {
    __shared__ float buf[3072];
    for (int k = threadIdx.x; k < 3072; k += blockDim.x) buf[k] = in[k % n];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = buf[(threadIdx.x * 7) % 3072];
}
"""
KERNELS = ("live_regs_8", "live_regs_64", "live_smem_12288")
BLOCK_SIZES = (64, 128, 256, 512, 1024)
DYNAMIC_BYTES = (0, 8192, 40000, 100000)


@dataclass(frozen=True)
class LiveComparison:
    """One query: the kernel's registers and static shared memory, the launch, and both answers."""

    kernel: str
    registers_per_thread: int
    static_shared_bytes: int
    threads_per_block: int
    dynamic_shared_bytes: int
    api_blocks_per_sm: int
    calculator_blocks_per_sm: int

    @property
    def agrees(self) -> bool:
        return self.api_blocks_per_sm == self.calculator_blocks_per_sm


def cupy_gpu_available() -> bool:
    """True when CuPy imports and sees a CUDA device."""
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, no device
        return False


def compute_capability() -> str:
    """The current device's compute capability as ``"major.minor"`` (needs CuPy)."""
    import cupy

    dev = cupy.cuda.Device()
    major, minor = dev.compute_capability[:-1], dev.compute_capability[-1]
    return f"{major}.{minor}"


def compare_occupancy() -> list[LiveComparison]:
    """Compile three small kernels, query the CUDA occupancy API over a small grid of block sizes and dynamic
    shared-memory sizes (opted in to the device's per-block maximum), and compute the same with
    :func:`sm_occupancy` for the device's compute capability. Raises ``ValueError`` naming the compute
    capability if ``gpuperf.hardware`` has no limits for it."""
    import cupy

    cc = compute_capability()
    get_sm_limits(cc)  # raises ValueError naming the compute capability when it is not tabulated
    optin = cupy.cuda.runtime.deviceGetAttribute(97, cupy.cuda.Device().id)  # MaxSharedMemoryPerBlockOptin
    module = cupy.RawModule(code=_SOURCE, options=("--std=c++17",))
    out = []
    for name in KERNELS:
        k = module.get_function(name)
        regs = int(k.attributes["num_regs"])
        static = int(k.attributes["shared_size_bytes"])
        k.max_dynamic_shared_size_bytes = optin - static
        for block in BLOCK_SIZES:
            for dyn in DYNAMIC_BYTES:
                if static + dyn > optin:
                    continue
                api = int(cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(k.kernel.ptr, block, dyn))
                try:
                    mine = sm_occupancy(cc, block, regs, static + dyn).blocks_per_sm
                except ValueError:  # a launch the calculator refuses; the API answers 0
                    mine = 0
                out.append(LiveComparison(name, regs, static, block, dyn, api, mine))
    return out
