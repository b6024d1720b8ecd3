"""Memory of reverse mode through a long integration, with and without checkpoint (remat).

The adjoint of a 1,000-step RK4 integration of a 10,000-element state (float64).  Without
checkpoint the forward sweep keeps every step's intermediate stages for the adjoint sweep;
with `tp.checkpoint(rk4_step)` it keeps only each step's input and recomputes the stages
while sweeping back.  Peak memory is measured with tracemalloc (NumPy reports its buffers to
it) during one gradient call; times are the median of a few calls, in the same process.

Run it with `make bench` (or `.venv/bin/python bench/bench_remat.py --steps 1000`).
"""

import argparse
import gc
import statistics
import time
import tracemalloc

import numpy as np

import transpile as tp


def dynamics(y):
    return -0.5 * y + 0.3 * np.sin(y)


def rk4_step(y, dt):
    k1 = dynamics(y)
    k2 = dynamics(y + 0.5 * dt * k1)
    k3 = dynamics(y + 0.5 * dt * k2)
    k4 = dynamics(y + dt * k3)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


rk4_step_remat = tp.checkpoint(rk4_step)


def final_energy(y0, steps):
    y = y0
    for _ in range(steps):
        y = rk4_step(y, 0.01)
    return np.sum(y * y)


def final_energy_remat(y0, steps):
    y = y0
    for _ in range(steps):
        y = rk4_step_remat(y, 0.01)
    return np.sum(y * y)


def measure(fn, args, repeats):
    fn(*args)  # generate and import the module first
    gc.collect()
    tracemalloc.start()
    fn(*args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return peak, statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    y0 = np.random.default_rng(0).normal(size=args.size)
    plain = tp.grad(final_energy)
    remat = tp.grad(final_energy_remat)
    np.testing.assert_allclose(plain(y0, args.steps), remat(y0, args.steps), rtol=1e-12)
    peak_plain, time_plain = measure(plain, (y0, args.steps), args.repeats)
    peak_remat, time_remat = measure(remat, (y0, args.steps), args.repeats)
    state = y0.nbytes / 2**20
    print(f"adjoint of {args.steps} RK4 steps, state of {args.size} float64 ({state:.2f} MiB)")
    print(f"{'':22} {'peak MiB':>10} {'time s':>9}")
    print(f"{'grad':22} {peak_plain / 2**20:10.1f} {time_plain:9.3f}")
    print(f"{'grad with checkpoint':22} {peak_remat / 2**20:10.1f} {time_remat:9.3f}")
    print(
        f"memory {peak_plain / peak_remat:.1f}x less (goal: at least 5x), "
        f"time {time_remat / time_plain:.2f}x (goal: at most 2x)"
    )


if __name__ == "__main__":
    main()
