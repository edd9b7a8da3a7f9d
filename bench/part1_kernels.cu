// CUDA kernels for the measurements of Part I (chapters 02 and 03), built at run time by CuPy
// (bench/part1_gpu.py). Compile-time constants come in as -D options:
//   BODY       instructions in each branch body of the divergence kernels (default 512)
//   LOOP_BODY  instructions in the loop body of div_loop (default 64)
//   ILP        independent 16-byte loads in flight per thread in stream_read (default 1)

#ifndef BODY
#define BODY 512
#endif
#ifndef LOOP_BODY
#define LOOP_BODY 64
#endif
#ifndef ILP
#define ILP 1
#endif

// ---------------------------------------------------------------------------------------------
// Chapter 02: pointer chasing, the one latency method of the course (chapters 02, 04, 05).
// One thread follows next[] for `steps` dependent loads; every load's address is the previous load's
// value, so nothing overlaps and cycles/steps is the load latency. The first pass (`warm` loads) is
// timed too: cycles[1] covers it, cycles[0] the second pass. With warm = the whole cycle, the second
// pass revisits only lines the first pass touched (what a cache level holds once it is warm); the first
// pass pays first touches (lines this SM has not read yet).
// The pointer is deliberately not __restrict__/const-qualified, so the loads take the ordinary
// global path (LDG through L1 and L2), not the read-only path.
// ---------------------------------------------------------------------------------------------
// listing: chase_global
extern "C" __global__ void chase_global(unsigned int* next, unsigned int start, int warm, int steps,
                                        unsigned int* out, long long* cycles) {
    unsigned int j = start;
    long long w0 = clock64();
    for (int s = 0; s < warm; ++s) j = next[j];
    out[1] = j;                 // a use of j: the first pass has completed before t0
    long long t0 = clock64();
    for (int s = 0; s < steps; ++s) j = next[j];
    out[0] = j;                 // the store needs j, so the last load has completed before t1
    long long t1 = clock64();
    cycles[0] = t1 - t0;
    cycles[1] = t0 - w0;
}
// end listing: chase_global

// The same chase in shared memory: the block copies the chain in, then thread 0 follows it.
extern "C" __global__ void chase_shared(const unsigned int* next, int n, unsigned int start, int steps,
                                        unsigned int* out, long long* cycles) {
    extern __shared__ unsigned int chain[];
    for (int i = threadIdx.x; i < n; i += blockDim.x) chain[i] = next[i];
    __syncthreads();
    if (threadIdx.x != 0) return;
    unsigned int j = start;
    for (int s = 0; s < 64; ++s) j = chain[j];
    long long t0 = clock64();
    for (int s = 0; s < steps; ++s) j = chain[j];
    out[0] = j;
    long long t1 = clock64();
    cycles[0] = t1 - t0;
}

// Spin for `target` SM cycles: timed with events on the host, it gives the SM clock during the run.
extern "C" __global__ void spin_cycles(long long target, long long* out) {
    long long t0 = clock64();
    long long t = t0;
    while (t - t0 < target) t = clock64();
    out[0] = t - t0;
}

// ---------------------------------------------------------------------------------------------
// Chapter 02: bandwidth against bytes in flight. Each thread issues ILP independent 16-byte loads,
// then uses them (the first use stalls the warp until they arrive), then moves on: at most
// ILP x 16 bytes per thread are in flight. The host launches one or two blocks per SM (large dynamic
// shared memory keeps any more from fitting), so resident warps per SM = blocks x blockDim / 32.
// Reads HBM: ILP * 16 bytes per thread per iteration, coalesced (consecutive threads, consecutive
// 16-byte words). Writes one int4 per thread at the end (negligible).
// ---------------------------------------------------------------------------------------------
// listing: stream_read
extern "C" __global__ void stream_read(const int4* __restrict__ src, long long n_iters,
                                       int4* __restrict__ sink, unsigned int* __restrict__ smid_out) {
    extern __shared__ int pad[];  // unused: it only limits how many blocks fit on an SM
    const long long block_stride = (long long)blockDim.x * ILP;
    const long long grid_stride = block_stride * gridDim.x;
    long long base = (long long)blockIdx.x * block_stride + threadIdx.x;
    int4 acc = make_int4(0, 0, 0, 0);
#pragma unroll 1
    for (long long it = 0; it < n_iters; ++it) {
        int4 v[ILP];
#pragma unroll
        for (int k = 0; k < ILP; ++k) v[k] = src[base + (long long)k * blockDim.x];
#pragma unroll
        for (int k = 0; k < ILP; ++k) {
            acc.x ^= v[k].x; acc.y ^= v[k].y; acc.z ^= v[k].z; acc.w ^= v[k].w;
        }
        base += grid_stride;
    }
    sink[(long long)blockIdx.x * blockDim.x + threadIdx.x] = acc;
    if (threadIdx.x == 0) {
        unsigned int smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        smid_out[blockIdx.x] = smid;
    }
}
// end listing: stream_read

// ---------------------------------------------------------------------------------------------
// Chapter 03: divergence. Branch bodies are long chains of one instruction each (FFMA in one path,
// FMUL in the other, different opcodes so the compiler cannot merge the two paths into one with
// selected operands), so nearly every issued instruction belongs to a body and the count matches
// gpuperf.simt's programs: two_way_program, nested_program, loop_program.
// ---------------------------------------------------------------------------------------------
// listing: chains
__device__ __forceinline__ float fma_chain(float x, float a, float b) {
#pragma unroll
    for (int j = 0; j < BODY; ++j) x = fmaf(x, a, b);
    return x;
}

__device__ __forceinline__ float mul_chain(float x, float m) {
#pragma unroll
    for (int j = 0; j < BODY; ++j) x = x * m;
    return x;
}
// end listing: chains

__device__ __forceinline__ float start_value(int i) { return (float)(i & 1023) * 0.0009765625f; }

// if (c) x = A(x) else x = B(x)
// listing: div_branch
extern "C" __global__ void div_branch(const unsigned char* __restrict__ cond, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = start_value(i);
    if (cond[i]) {
        x = fma_chain(x, 0.9990234375f, 0.0009765625f);
    } else {
        x = mul_chain(x, 1.0009765625f);
    }
    out[i] = x;
}
// end listing: div_branch

// if (c1) { x = A(x); if (c2) x = B(x); else x = C(x); } else { x = D(x); }
// listing: div_nested
extern "C" __global__ void div_nested(const unsigned char* __restrict__ c1, const unsigned char* __restrict__ c2,
                                      float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = start_value(i);
    if (c1[i]) {
        x = fma_chain(x, 0.9990234375f, 0.0009765625f);
        if (c2[i]) {
            x = fma_chain(x, 0.998046875f, 0.001953125f);
        } else {
            x = mul_chain(x, 1.0009765625f);
        }
    } else {
        x = mul_chain(x, 0.9990234375f);
    }
    out[i] = x;
}
// end listing: div_nested

// for (t = 0; t < trips[i]; ++t) x = body(x), body = LOOP_BODY FFMA
// listing: div_loop
extern "C" __global__ void div_loop(const int* __restrict__ trips, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = start_value(i);
    int t_end = trips[i];
#pragma unroll 1  // one body per trip, as in the simulator's Loop
    for (int t = 0; t < t_end; ++t) {
#pragma unroll
        for (int j = 0; j < LOOP_BODY; ++j) x = fmaf(x, 0.9990234375f, 0.0009765625f);
    }
    out[i] = x;
}
// end listing: div_loop
