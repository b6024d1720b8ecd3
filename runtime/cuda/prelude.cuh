// transpile's device helpers, the ones the CuPy backend's table spells elements with (transpile/backends/cupy/kernels.py)
__device__ inline double tp_pow(double x, double y) { return pow(x, y); }
__device__ inline float tp_pow(float x, float y) { return powf(x, y); }
template <class T> __device__ inline T tp_integer_pow(T x, T y) {
    // NumPy raises for a negative exponent of an integer; here it gives 1 / x rounded toward zero
    if (y < 0) return x == 1 ? 1 : (x == -1 ? (y % 2 ? -1 : 1) : 0);
    T r = 1;
    for (; y; y >>= 1, x *= x) if (y & 1) r *= x;
    return r;
}
__device__ inline long long tp_pow(long long x, long long y) { return tp_integer_pow(x, y); }
__device__ inline int tp_pow(int x, int y) { return tp_integer_pow(x, y); }
template <class T> __device__ inline T tp_square(T x) { return x * x; }
__device__ inline double tp_abs(double x) { return fabs(x); }
__device__ inline float tp_abs(float x) { return fabsf(x); }
template <class T> __device__ inline T tp_abs(T x) { return x < 0 ? -x : x; }
template <class T> __device__ inline T tp_sign(T x) { return x > 0 ? T(1) : (x < 0 ? T(-1) : x); }
template <class T> __device__ inline T tp_maximum(T x, T y) { return (x != x || x > y) ? x : y; }
template <class T> __device__ inline T tp_minimum(T x, T y) { return (x != x || x < y) ? x : y; }
template <class T> __device__ inline bool tp_isnan(T x) { return x != x; }
__device__ inline void tp_atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ inline void tp_atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ inline void tp_atomic_add(int* p, int v) { atomicAdd(p, v); }
__device__ inline void tp_atomic_add(long long* p, long long v) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));  // two's complement
}
// A sum over an axis (or an unbroadcast), element by element: each thread adds into the element it has been
// adding up over the loop's turns (`run`, -1 before the first), flushed into the output by one atomicAdd when the
// element changes, and after the loop
template <class T> __device__ inline void tp_run_add(T* out, long long at, T v, long long& run, T& sum) {
    if (at != run) {
        if (run >= 0) tp_atomic_add(&out[run], sum);
        run = at;
        sum = 0;
    }
    sum += v;
}
