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

// a fused block: a, b -> y, s
extern "C" __global__ void tp_fused_40232f2ea3a417ce(
    const long long n0,
    const long long n1,
    const unsigned m1,
    const unsigned s1,
    const bool narrow,
    const float* __restrict__ p_a,
    const long long p_a_s0,
    const long long p_a_s1,
    const float* __restrict__ p_b,
    const long long p_b_s0,
    const long long p_b_s1,
    float* __restrict__ o_y,
    const long long o_y_s0,
    const long long o_y_s1,
    double* __restrict__ o_s
) {
    const long long size = n0 * n1;
    double t_s = 0;  // this thread's part of s
    const long long step = (long long)blockDim.x * gridDim.x;
    const bool flat = n0 == 1;  // the host passes a contiguous space as its last axis
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < size; i += step) {
        long long f_p_a, f_p_b, f_o_y;
        long long i1 = i, i0 = 0;
        if (!flat && narrow) {  // q = i / n by a multiply and a shift
            unsigned rest = i;
            const unsigned q1 = (__umulhi(rest, m1) + rest) >> s1;
            i1 = rest - q1 * (unsigned)n1;
            rest = q1;
            i0 = rest;
            f_p_a = (int)i0 * (int)p_a_s0 + (int)i1 * (int)p_a_s1;
            f_p_b = (int)i0 * (int)p_b_s0 + (int)i1 * (int)p_b_s1;
            f_o_y = (int)i0 * (int)o_y_s0 + (int)i1 * (int)o_y_s1;
        } else {
            if (!flat) {
                long long rest = i;
                i1 = rest % n1;
                rest /= n1;
                i0 = rest;
            }
            f_p_a = i0 * p_a_s0 + i1 * p_a_s1;
            f_p_b = i0 * p_b_s0 + i1 * p_b_s1;
            f_o_y = i0 * o_y_s0 + i1 * o_y_s1;
        }
        const float v_a = p_a[f_p_a];
        const float v_b = p_b[f_p_b];
        // m = a > jt.weak(0.0, a)
        const bool v_m = (v_a > 0.0f);
        // y = np.where(m, np.tanh(a), b * jt.weak(0.5, b))
        const float v_y = (v_m ? tanh(v_a) : (v_b * 0.5f));
        // s = jt.sum(y, None, False)
        t_s += v_y;
        // the values read after the block
        o_y[f_o_y] = v_y;
    }
    // the sum of everything s: the block's threads in shared memory, then one atomicAdd
    __shared__ double r_s[256];
    r_s[threadIdx.x] = t_s;
    __syncthreads();
    for (unsigned w = 128; w > 0; w /= 2) {
        if (threadIdx.x < w) r_s[threadIdx.x] += r_s[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) tp_atomic_add(o_s, r_s[0]);
}
