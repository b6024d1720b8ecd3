// The CUDA of transpile's generated kernels as C++20 for g++, to run them on the CPU (runtime/cuda/shim.py).
// __global__ and __device__ are defined away; threadIdx and blockIdx are thread_local; the launcher runs the grid's
// blocks one after the other, each as blockDim.x std::threads, with __syncthreads a barrier among them; __shared__
// storage is a function's static storage, which is per block since blocks run one at a time; atomicAdd holds a mutex.
#pragma once
#include <barrier>
#include <functional>
#include <math.h>
#include <mutex>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __shared__ static

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};
inline thread_local dim3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

namespace tp_shim {
inline std::barrier<>* block_barrier = nullptr;
inline std::mutex atomics;

template <class T> T atomic_add(T* p, T v) {
    std::lock_guard<std::mutex> hold(atomics);
    T old = *p;
    *p = old + v;
    return old;
}

// Runs `kernel` on a grid of `grid` blocks of `threads` threads.
inline void launch(unsigned grid, unsigned threads, const std::function<void()>& kernel) {
    gridDim.x = grid;
    blockDim.x = threads;
    for (unsigned b = 0; b < grid; ++b) {
        std::barrier<> barrier(threads);
        block_barrier = &barrier;
        std::vector<std::thread> team;
        for (unsigned t = 0; t < threads; ++t)
            team.emplace_back([&, b, t] {
                blockIdx.x = b;
                threadIdx.x = t;
                kernel();
            });
        for (auto& thread : team) thread.join();
    }
}
}  // namespace tp_shim

inline void __syncthreads() { tp_shim::block_barrier->arrive_and_wait(); }
inline float atomicAdd(float* p, float v) { return tp_shim::atomic_add(p, v); }
inline double atomicAdd(double* p, double v) { return tp_shim::atomic_add(p, v); }
inline int atomicAdd(int* p, int v) { return tp_shim::atomic_add(p, v); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return tp_shim::atomic_add(p, v); }
