// The launcher and the atomics of shim.h (C++20: std::barrier), compiled once into a library the kernels use.
#include "shim.h"

#include <barrier>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

thread_local dim3 threadIdx = {0, 0, 0}, blockIdx = {0, 0, 0};
dim3 blockDim = {1, 1, 1}, gridDim = {1, 1, 1};

namespace {
std::barrier<>* block_barrier = nullptr;
std::mutex atomics;

template <class T> T atomic_add(T* p, T v) {
    std::lock_guard<std::mutex> hold(atomics);
    T old = *p;
    *p = old + v;
    return old;
}
}  // namespace

double __longlong_as_double(long long bits) {
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}
float __int_as_float(int bits) {
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}
void __syncthreads() { block_barrier->arrive_and_wait(); }
float atomicAdd(float* p, float v) { return atomic_add(p, v); }
double atomicAdd(double* p, double v) { return atomic_add(p, v); }
int atomicAdd(int* p, int v) { return atomic_add(p, v); }
unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return atomic_add(p, v); }

void tp_shim::launch(unsigned grid, unsigned threads, void (*body)(void*), void* context) {
    gridDim = {grid, 1, 1};
    blockDim = {threads, 1, 1};
    for (unsigned b = 0; b < grid; ++b) {
        std::barrier<> barrier(threads);
        block_barrier = &barrier;
        std::vector<std::thread> team;
        for (unsigned t = 0; t < threads; ++t)
            team.emplace_back([=] {
                blockIdx = {b, 0, 0};
                threadIdx = {t, 0, 0};
                body(context);
            });
        for (auto& thread : team) thread.join();
    }
}
