// The CUDA of transpile's generated kernels as C++ for g++, to run them on the CPU (runtime/cuda/shim.py).
// __global__ and __device__ are defined away; threadIdx and blockIdx are thread_local; __shared__ storage is a
// function's static storage, which is per block since the launcher (shim.cpp) runs the grid's blocks one after
// the other, each as blockDim.x threads, with __syncthreads a barrier among them; atomicAdd holds a mutex.
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
inline unsigned __umulhi(unsigned a, unsigned b) { return static_cast<unsigned>((1ULL * a * b) >> 32); }

namespace tp_shim {
// Runs body(context) in each thread of a grid of `grid` blocks of `threads` threads.
void launch(unsigned grid, unsigned threads, void (*body)(void*), void* context);
}  // namespace tp_shim
