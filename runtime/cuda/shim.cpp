// The launcher and the atomics of shim.h (C++20: std::barrier), compiled once into a library the kernels use.
// A block's threads are a pool's, started once and kept (starting 256 threads took longer than most kernels run).
#include "shim.h"

#include <unistd.h>

#include <atomic>
#include <barrier>
#include <cstring>
#include <mutex>
#include <semaphore>
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

namespace {
// The block being run: each of its threads runs body(context) as threadIdx t of blockIdx `block`; the last of them
// to finish releases `finished` (not the block's own: the launcher may end the block while release() returns).
struct Block {
    void (*body)(void*);
    void* context;
    unsigned block;
    std::atomic<unsigned> running;
};
std::binary_semaphore finished{0};

// Pool thread t: waits for a block and runs its part.
struct Worker {
    std::binary_semaphore go{0};
    Block* job = nullptr;
};

void work(Worker* self, unsigned t) {
    for (;;) {
        self->go.acquire();
        Block* job = self->job;
        blockIdx = {job->block, 0, 0};
        threadIdx = {t, 0, 0};
        job->body(job->context);
        if (job->running.fetch_sub(1, std::memory_order_acq_rel) == 1) finished.release();
    }
}

// The pool's threads wait for work until the process ends (detached, never destroyed); a forked child, which has
// none of them, starts its own.
std::vector<Worker*>& workers(unsigned threads) {
    static std::vector<Worker*> pool;
    static pid_t owner = getpid();
    if (owner != getpid()) {
        pool.clear();
        owner = getpid();
    }
    while (pool.size() < threads) {
        auto* worker = new Worker;
        std::thread(work, worker, static_cast<unsigned>(pool.size())).detach();
        pool.push_back(worker);
    }
    return pool;
}
}  // namespace

void tp_shim::launch(unsigned grid, unsigned threads, void (*body)(void*), void* context) {
    static std::mutex launching;  // one grid at a time: the pool, blockDim and the barrier are the launch's
    std::lock_guard<std::mutex> hold(launching);
    auto& pool = workers(threads);
    gridDim = {grid, 1, 1};
    blockDim = {threads, 1, 1};
    for (unsigned b = 0; b < grid; ++b) {
        std::barrier<> barrier(threads);
        block_barrier = &barrier;
        Block job{body, context, b, {threads}};
        for (unsigned t = 0; t < threads; ++t) {
            pool[t]->job = &job;
            pool[t]->go.release();
        }
        finished.acquire();
    }
}
