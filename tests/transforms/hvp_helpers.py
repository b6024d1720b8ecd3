"""Functions that call transformed functions, for higher-order tests (must live in a file)."""

import numpy as np

import transpile as tp


def gradient_dot(f, v):
    """x -> <grad f(x), v>, whose gradient is the Hessian-vector product H v."""
    df = tp.grad(f)

    def gv(x):
        return np.sum(df(x) * v)

    return gv
