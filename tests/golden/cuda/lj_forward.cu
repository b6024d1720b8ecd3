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

// a fused block: _t2, _t3 -> diff, _t5, _t4
extern "C" __global__ void tp_fused_8793664127b47ab6(
    const long long n0,
    const long long n1,
    const long long n2,
    const unsigned m1,
    const unsigned s1,
    const unsigned m2,
    const unsigned s2,
    const bool narrow,
    const double* __restrict__ p__t2,
    const long long p__t2_s0,
    const long long p__t2_s1,
    const long long p__t2_s2,
    const double* __restrict__ p__t3,
    const long long p__t3_s0,
    const long long p__t3_s1,
    const long long p__t3_s2,
    double* __restrict__ o_diff,
    const long long o_diff_s0,
    const long long o_diff_s1,
    const long long o_diff_s2,
    double* __restrict__ o__t4,
    const long long o__t4_s0,
    const long long o__t4_s1,
    const long long o__t4_s2,
    const int o__t4_how
) {
    const long long size = n0 * n1 * n2;
    long long r__t4 = -1;  // the element of _t4 this thread adds up
    double r__t4_sum = 0;
    const long long step = (long long)blockDim.x * gridDim.x;
    const bool flat = n0 == 1 && n1 == 1;  // the host passes a contiguous space as its last axis
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < size; i += step) {
        long long f_p__t2, f_p__t3, f_o__t4, f_o_diff;
        long long i2 = i, i0 = 0, i1 = 0;
        if (!flat && narrow) {  // q = i / n by a multiply and a shift
            unsigned rest = i;
            const unsigned q2 = (__umulhi(rest, m2) + rest) >> s2;
            i2 = rest - q2 * (unsigned)n2;
            rest = q2;
            const unsigned q1 = (__umulhi(rest, m1) + rest) >> s1;
            i1 = rest - q1 * (unsigned)n1;
            rest = q1;
            i0 = rest;
            f_p__t2 = (int)i0 * (int)p__t2_s0 + (int)i1 * (int)p__t2_s1 + (int)i2 * (int)p__t2_s2;
            f_p__t3 = (int)i0 * (int)p__t3_s0 + (int)i1 * (int)p__t3_s1 + (int)i2 * (int)p__t3_s2;
            f_o__t4 = (int)i0 * (int)o__t4_s0 + (int)i1 * (int)o__t4_s1 + (int)i2 * (int)o__t4_s2;
            f_o_diff = (int)i0 * (int)o_diff_s0 + (int)i1 * (int)o_diff_s1 + (int)i2 * (int)o_diff_s2;
        } else {
            if (!flat) {
                long long rest = i;
                i2 = rest % n2;
                rest /= n2;
                i1 = rest % n1;
                rest /= n1;
                i0 = rest;
            }
            f_p__t2 = i0 * p__t2_s0 + i1 * p__t2_s1 + i2 * p__t2_s2;
            f_p__t3 = i0 * p__t3_s0 + i1 * p__t3_s1 + i2 * p__t3_s2;
            f_o__t4 = i0 * o__t4_s0 + i1 * o__t4_s1 + i2 * o__t4_s2;
            f_o_diff = i0 * o_diff_s0 + i1 * o_diff_s1 + i2 * o_diff_s2;
        }
        const double v__t2 = p__t2[f_p__t2];
        const double v__t3 = p__t3[f_p__t3];
        // diff = _t2 - _t3
        const double v_diff = (v__t2 - v__t3);
        // _t5 = diff ** 2
        const double v__t5 = tp_square(v_diff);
        // _t4 = jt.sum(_t5, axis=-1, keepdims=False)
        if (o__t4_how == 2) tp_run_add(o__t4, f_o__t4, v__t5, r__t4, r__t4_sum);
        else if (o__t4_how == 1) o__t4[f_o__t4] = v__t5;
        // the values read after the block
        o_diff[f_o_diff] = v_diff;
    }
    if (r__t4 >= 0) tp_atomic_add(&o__t4[r__t4], r__t4_sum);  // the last element's sum
}
