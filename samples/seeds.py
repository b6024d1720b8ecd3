"""The small examples from the seeds (the JAX README and a PyCon AU talk), with the numbers they print.

    grad(tanh)(1.0)                 -> 0.4199743
    grad(grad(grad(tanh)))(1.0)     -> 0.62162673   (JAX, float32; see `third_derivative_of_tanh`)
    grad(abs_val)(1.0), (-1.0)      -> 1.0, -1.0    (Python `if` on the argument's value)
    grad(f)(3.0), f = 2x² + 3x + 3  -> 15.0         (the talk's quadratic: 4x + 3 at 3)

Run it with `.venv/bin/python samples/seeds.py`.
"""

import numpy as np

import transpile as tp


def tanh(x):  # Define a function
    y = np.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)


def abs_val(x):
    if x > 0:
        return x
    else:
        return -x


def quadratic(x):
    return 2 * x**2 + 3 * x + 3


def derivative_of_tanh():
    # JAX computes in float32 by default; pass a float32 scalar to get the same arithmetic.
    return tp.grad(tanh)(np.float32(1.0))


def third_derivative_of_tanh():
    # Computed in float64: 0.62162668077... The seed's 0.62162673 is JAX's float32 result, whose
    # rounding errors leave it about one float32 ulp (6e-8 near 0.62) above the exact value, so the
    # shortest repr of that float32 needs an 8th digit. Seven significant digits agree: 0.6216267.
    return tp.grad(tp.grad(tp.grad(tanh)))(1.0)


def main():
    print(f"grad(tanh)(1.0) = {derivative_of_tanh()!s}")
    print(f"grad(grad(grad(tanh)))(1.0) = {third_derivative_of_tanh():.7g}")
    abs_val_grad = tp.grad(abs_val)
    print(f"grad(abs_val)(1.0) = {abs_val_grad(1.0)}")
    print(f"grad(abs_val)(-1.0) = {abs_val_grad(-1.0)}")
    print(f"grad(2x**2 + 3x + 3)(3.0) = {tp.grad(quadratic)(3.0)}")


if __name__ == "__main__":
    main()
