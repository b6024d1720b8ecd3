// The CUDA of transpile's generated kernels as C++ for g++, to run them on the CPU (runtime/cuda/shim.py).
// __global__ and __device__ are defined away; threadIdx and blockIdx are thread_local; __shared__ storage is a
// function's static storage, which is per block since the launcher (shim.cpp) runs the grid's blocks one after
// the other, each as blockDim.x threads, with __syncthreads a barrier among them; atomicAdd holds a mutex; the
// warp functions meet at a barrier of their warp's threads (the kernels call them in every lane at once).
// Only declarations here, so that each kernel compiles quickly; shim.cpp is compiled once.
#pragma once
#include <math.h>

#define __global__
#define __device__
#define __shared__ static

struct dim3 {
    unsigned x, y, z;
};
extern thread_local dim3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

double __longlong_as_double(long long bits);
float __int_as_float(int bits);
void __syncthreads();
float atomicAdd(float* p, float v);
double atomicAdd(double* p, double v);
int atomicAdd(int* p, int v);
unsigned long long atomicAdd(unsigned long long* p, unsigned long long v);
// a warp's lanes (32 threads of the block) exchange through shared slots, between barriers of the warp's threads
unsigned __match_any_sync(unsigned mask, unsigned long long key);
float __shfl_sync(unsigned mask, float v, int lane);
double __shfl_sync(unsigned mask, double v, int lane);
int __shfl_sync(unsigned mask, int v, int lane);
long long __shfl_sync(unsigned mask, long long v, int lane);
int __shfl_xor_sync(unsigned mask, int v, int lane_mask);
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline unsigned __umulhi(unsigned a, unsigned b) { return static_cast<unsigned>((1ULL * a * b) >> 32); }

namespace tp_shim {
// Runs body(context) in each thread of a grid of `grid` blocks of `threads` threads.
void launch(unsigned grid, unsigned threads, void (*body)(void*), void* context);
}  // namespace tp_shim
