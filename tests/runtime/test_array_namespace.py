"""Generated NumPy-backend modules and the reference helpers run on CuPy arrays (a fake CuPy here,
tests/runtime/fakecupy.py): results stay device arrays and equal the NumPy results."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "transforms"))

import fakecupy  # noqa: E402
import test_scientific_corpus as corpus  # noqa: E402

import transpile as tp  # noqa: E402

# Corpus functions whose own code builds host arrays (np.zeros(n), np.eye(n), np.ones(2)) and mixes them with
# their arguments: on CuPy arrays they fail as the plain call does, whatever the helpers do.
USER_CODE_ON_HOST = {
    "conv1d": "np.zeros(n) then out[i] = ...: a host array written with device values",
    "gp_log_marginal": "np.eye(n) added to a device array",
    "pairwise_energy": "np.eye(n) added to a device array",
    "stack_and_concat": "np.ones(2) multiplied by a device array",
}

CASES = [c for c in corpus.CASES if c[0].__name__ not in USER_CODE_ON_HOST]


@pytest.fixture
def cupy():
    with fakecupy.installed() as module:
        yield module


def host(tree):
    """A result tree with device arrays copied back, checking that every array leaf is a device array."""
    if isinstance(tree, fakecupy.ndarray):
        return tree.get()
    if isinstance(tree, np.ndarray):
        raise AssertionError(f"a host array in the result: {tree!r}")
    if isinstance(tree, (tuple, list)):
        return type(tree)(host(t) for t in tree)
    if isinstance(tree, dict):
        return {k: host(v) for k, v in tree.items()}
    return tree


def assert_same(got, want):
    """`got` (from device inputs) holds device arrays where `want` (from host inputs) holds arrays, same values."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, dict):
        assert got.keys() == want.keys()
        for k in want:
            assert_same(got[k], want[k])
    else:
        if isinstance(want, np.ndarray):
            assert isinstance(got, fakecupy.ndarray), f"a {type(got).__name__} where NumPy inputs give an array"
        np.testing.assert_allclose(host(got), want, rtol=1e-12, atol=1e-14)


def _tangents(args):
    """Tangents of ones with the structure of `args` (a device array's on the device)."""
    if isinstance(args, (tuple, list)):
        return type(args)(_tangents(a) for a in args)
    return np.ones_like(args) if isinstance(args, np.ndarray) else 1.0


def _pull_ones(out, vjp_fn):
    """The pullback of a cotangent of ones in the output's library (a Python 1.0 for a CuPy output stays a host
    number, which some rules' np.expand_dims would make a host array)."""
    return vjp_fn(np.ones_like(out))


TRANSFORMS = {
    "grad": lambda f, args, argnums: tp.grad(f, argnums=argnums)(*args),
    "value_and_grad": lambda f, args, argnums: tp.value_and_grad(f, argnums=argnums)(*args),
    "vjp": lambda f, args, argnums: _pull_ones(*tp.vjp(f, *args)),
    "jvp": lambda f, args, argnums: tp.jvp(f, args, _tangents(args)),
    "jacrev": lambda f, args, argnums: tp.jacrev(f, argnums=argnums)(*args),
}


def _run(name, f, args, argnums, on_device):
    args = fakecupy.device(args) if on_device else args
    return TRANSFORMS[name](f, args, argnums)


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("f, make_args, argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_corpus_on_device(cupy, transform, f, make_args, argnums):
    args = make_args()
    if transform == "jvp" and any(isinstance(a, int) for a in args):
        pytest.skip("an integer argument takes no float tangent")
    want = _run(transform, f, args, argnums, on_device=False)
    got = _run(transform, f, args, argnums, on_device=True)
    assert_same(got, want)


# More NumPy functions whose rules call the reference helpers: one small function each, written as code for CuPy
# arrays is (no host constructors: np.ones_like(x) where NumPy code says np.ones(n)).
def take_repeat(x):
    twice = np.repeat(x, 2)
    return np.sum(np.take(x, [0, 2, 2]) ** 2) + np.sum(twice * np.cumsum(np.ones_like(twice)))


def scatter_rows(x):
    y = x * 1.0
    y[[0, 1, 0]] = x[1:4] ** 2
    return np.sum(y**2)


def sorted_cumulative(x):
    return np.sum(np.sort(x) * np.cumsum(x)) + np.sum(np.diff(x, n=2) ** 2)


def signals(a, v):
    return np.sum(np.convolve(a, v) ** 2) + np.sum(np.correlate(a, v, "same"))


def interpolated(fp, x):
    xp = np.cumsum(np.ones_like(fp)) / fp.shape[0]
    return np.sum(np.interp(x, xp, fp) ** 2) + np.trapezoid(fp**2)


def spectral(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2) + np.sum(np.fft.irfft(np.fft.rfft(x), n=x.shape[0]) ** 3)


def decompositions(a):
    s = a @ a.T + np.diag(np.ones_like(a[:, 0]))
    w, v = np.linalg.eigh(s)
    q, r = np.linalg.qr(a)
    return np.sum(w**2) + np.sum(v[:, 0] ** 4) + np.sum(np.abs(np.linalg.svd(a, compute_uv=False))) + np.sum(r**2)


def products(a, b):
    return np.sum(np.cross(a[:3], b[:3]) ** 2) + np.sum(np.outer(a, b) ** 2) + np.sum(np.kron(a, b) ** 2)


def padded(x):
    return np.sum(np.pad(x, (2, 1), mode="reflect") ** 2) + np.sum(np.pad(x, 1) * 2.0)


def selections(x):
    return np.sum(np.select([x > 0.5, x < -0.5], [x**2, -x], default=np.sin(x))) + np.sum(np.maximum(x, 0.1) ** 2)


def norms(a):
    return np.linalg.norm(a) + np.linalg.norm(a, ord=1) + np.linalg.det(a @ a.T + np.diag(np.ones_like(a[0])))


def stacked(a, b):
    return np.sum(np.stack([a, b]) ** 2) + np.sum(np.concatenate([a, b * 2.0]) ** 3) + np.sum(np.split(a, 2)[1])


def filled(a, b):
    return np.sum(np.full_like(b, a[0]) * b) + np.sum(np.zeros_like(a) + a**2)


def contractions(a, b):
    m = a.reshape(2, 3)
    products = np.tensordot(m, b.reshape(3, 2), axes=1).sum() + np.vdot(a, b) + np.inner(a, b)
    return products + np.sum(np.diagonal(m @ m.T))


def determinants(a):
    s = a @ a.T + np.diag(np.ones_like(a[0]))
    sign, logdet = np.linalg.slogdet(s)
    return logdet + np.sum(np.linalg.lstsq(s, a[:, 0], rcond=None)[0] ** 2) + np.sum(np.tril(s) ** 2)


def sampled(a, b):
    line = np.linspace(a[0], a[1], 5)
    return np.sum(line**2) + np.sum(np.gradient(b) ** 2) + np.sum(np.einsum("ii->i", b.reshape(2, 2)) ** 2)


def branches(x):
    total = x[0] * 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            total = total + x[i] ** 2
        else:
            total = total - np.sin(x[i])
    return total


def containers(x):
    d = {"a": x[:2], "b": x[2:] * 2.0}
    parts = [v for v in d.values()]
    return np.sum(parts[0] ** 2) + np.sum(parts[1] ** 3) + x[1].item() * np.sum(x)


def edges(x):
    padded = np.sum(np.pad(x, 2, mode="mean") ** 2) + np.sum(np.pad(x, (1, 2), mode="edge") ** 3)
    return padded + np.sum(np.roll(x, 2) * x)


def grids(a, b):
    rows, cols = np.meshgrid(a, b)
    return np.sum(rows * cols**2) + np.sum(np.einsum("ij,jk,kl->il", np.outer(a, a), np.outer(a, a), np.outer(a, a)))


def periodic(fp, x):
    xp = np.cumsum(np.ones_like(fp)) / fp.shape[0]
    wrapped = np.interp(x, xp, fp, period=1.0)
    return np.sum(wrapped**2) + np.sum(np.interp(x, xp, fp, left=2.0 * fp[0], right=fp[1]) ** 2)


def binned(fp, x):  # sorted rows, bins and counts of each example under vmap: runtime/binning.py's helpers
    xp = np.cumsum(np.abs(fp) + 0.1)
    i = np.clip(np.searchsorted(xp, x * xp[-1], side="right"), 1, len(xp) - 1)
    sums = np.bincount(i, x * fp[i], minlength=len(fp)) + np.bincount(np.digitize(x, xp / xp[-1]), x, len(fp) + 1)[1:]
    return np.sum(fp[i - 1] * x) + np.sum(sums**2) * np.count_nonzero(x > 0.5)


MORE = [
    (edges, lambda: (rng.normal(size=5),), (0,)),
    (grids, lambda: (rng.normal(size=3), rng.normal(size=4)), (0, 1)),
    (periodic, lambda: (rng.normal(size=5), rng.uniform(-0.5, 1.5, size=7)), (0,)),
    (contractions, lambda: (rng.normal(size=6), rng.normal(size=6)), (0, 1)),
    (determinants, lambda: (rng.normal(size=(3, 3)),), (0,)),
    (sampled, lambda: (rng.normal(size=2), rng.normal(size=4)), (0, 1)),
    (branches, lambda: (rng.normal(size=5),), (0,)),
    (containers, lambda: (rng.normal(size=5),), (0,)),
    (filled, lambda: (rng.normal(size=3), rng.normal(size=(2, 3))), (0, 1)),
    (take_repeat, lambda: (rng.normal(size=5),), (0,)),
    (scatter_rows, lambda: (rng.normal(size=5),), (0,)),
    (sorted_cumulative, lambda: (rng.normal(size=6),), (0,)),
    (signals, lambda: (rng.normal(size=6), rng.normal(size=3)), (0, 1)),
    (interpolated, lambda: (rng.normal(size=5), rng.uniform(size=7)), (0,)),
    (spectral, lambda: (rng.normal(size=8),), (0,)),
    (decompositions, lambda: (rng.normal(size=(4, 3)),), (0,)),
    (products, lambda: (rng.normal(size=4), rng.normal(size=4)), (0, 1)),
    (padded, lambda: (rng.normal(size=5),), (0,)),
    (selections, lambda: (rng.normal(size=6),), (0,)),
    (norms, lambda: (rng.normal(size=(3, 3)),), (0,)),
    (stacked, lambda: (rng.normal(size=4), rng.normal(size=4)), (0, 1)),
    (binned, lambda: (rng.normal(size=5), rng.uniform(size=7)), (0,)),
]

rng = np.random.default_rng(5)

REFUSED_ON_NUMPY = {
    ("spectral", "hessian"): "the second derivative of np.abs of complex values is refused on NumPy arrays too",
}

# What vmap and hessian add: batched helpers and forward-over-reverse.
BATCHED = {
    "vmap": lambda f, args, argnums: tp.vmap(f, in_axes=(0,) + (None,) * (len(args) - 1))(*args),
    "per_example_grad": lambda f, args, argnums: tp.vmap(tp.grad(f), in_axes=(0,) + (None,) * (len(args) - 1))(*args),
    "hessian": lambda f, args, argnums: tp.hessian(f)(*args),
}


@pytest.mark.parametrize("transform", ["grad", "jvp", "vjp"])
@pytest.mark.parametrize("f, make_args, argnums", MORE, ids=[c[0].__name__ for c in MORE])
def test_more_functions_on_device(cupy, transform, f, make_args, argnums):
    args = make_args()
    want = _run(transform, f, args, argnums, on_device=False)
    got = _run(transform, f, args, argnums, on_device=True)
    assert_same(got, want)


def _batched_args(args):
    """The first argument stacked three times (vmap's examples), the others as they are."""
    first = args[0]
    return (np.stack([first, 0.5 * first, first + 0.25]),) + tuple(args[1:])


@pytest.mark.parametrize("transform", sorted(BATCHED))
@pytest.mark.parametrize("f, make_args, argnums", CASES + MORE, ids=[c[0].__name__ for c in CASES + MORE])
def test_batched_and_second_order_on_device(cupy, transform, f, make_args, argnums):
    args = make_args()
    if not isinstance(args[0], np.ndarray) or any(isinstance(a, int) for a in args):
        pytest.skip("vmap and hessian here take an array first argument, and no step count")
    if (f.__name__, transform) in REFUSED_ON_NUMPY:
        pytest.skip(REFUSED_ON_NUMPY[f.__name__, transform])
    if transform != "hessian":
        args = _batched_args(args)
    want = BATCHED[transform](f, args, argnums)
    got = BATCHED[transform](f, fakecupy.device(args), argnums)
    assert_same(got, want)


# Every reference helper builds its arrays in its arguments' library.  What gives a host array whatever the
# arguments are: NumPy's constructors and conversions, ufunc methods (np.add.at), and np.ndarray checks (a CuPy
# array is no np.ndarray).  A function that must use one lists it here, with the reason.
HOST_BY_DESIGN = {
    ("namespace.py", "is_ndarray"): "the check itself: a NumPy array, or a CuPy one by its type's module",
    ("devices.py", "exchange"): "CPU devices are threads of this process: their values meet in host memory",
    ("processes.py", "_spanning"): "the processes' slice counts travel between processes as a host buffer (MPI)",
    **{
        ("mpi.py", name): "MPI sends host buffers between processes (GPUs exchange through NCCL)"
        for name in ["_agree", "_description", "allgather", "allreduce", "alltoall", "permute", "reduce_scatter"]
    },
    **{
        ("nccl.py", name): "the GPUs' collectives agree on the host first, and their unique id travels there"
        for name in ["<module>", "exchange", "_communicator", "_unique_id", "_unique_id_values"]
    },
    **{
        ("random.py", name): "tp.random's keys and threefry bits are host uint32 arrays (no device version yet)"
        for name in ["_check_key", "_elementwise", "_erfinv", "_hash", "_seed_words", "bernoulli", "categorical"]
        + ["choice", "normal", "permutation", "randint", "random_bits", "split", "threefry2x32", "truncated_normal"]
        + ["uniform", "wrapper"]
    },
}
_HOST_ONLY = re.compile(
    r"(?<![\w.])np\.(zeros|ones|empty|full|eye|arange|identity|tri|indices|linspace|asarray|array|ascontiguousarray|"
    r"asanyarray|\w+\.at|\w+\.outer|\w+\.reduceat|\w+\.accumulate)\b|isinstance\([^)]*np\.ndarray"
)
RUNTIME = Path(__file__).parents[2] / "runtime"


def _host_only_uses():
    """(file, function) of each line of runtime/*.py (not runtime/numba/) that makes a host array or asks for one."""
    found = set()
    for path in sorted(RUNTIME.glob("*.py")):
        text = path.read_text()
        functions = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef)]
        for lineno, line in enumerate(text.splitlines(), 1):
            if _HOST_ONLY.search(line.split("#")[0]) and '"""' not in line:
                inner = [f for f in functions if f.lineno <= lineno <= f.end_lineno]
                name = min(inner, key=lambda f: f.end_lineno - f.lineno).name if inner else "<module>"
                found.add((path.name, name))
    return found


def test_helpers_make_no_host_arrays_but_those_listed():
    assert _host_only_uses() == set(HOST_BY_DESIGN)
