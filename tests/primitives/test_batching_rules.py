"""Every primitive's batching, from the registry: vmap(f)(xs) equals stacking f over the examples,
for every combination of in_axes 0, 1 and None (at least one mapped), and nested vmap."""

import itertools

import numpy as np
import pytest
from test_registry import TABLE, _draw, _example_module, _inputs, _seed, example_dir  # noqa: F401

import transpile as tp

BATCH = 3


def _stacked(fn, args, axes):
    """The reference: fn on each example, stacked along a new axis 0."""
    outs = []
    for i in range(BATCH):
        outs.append(fn(*[np.take(a, i, axis=ax) if ax is not None else a for a, ax in zip(args, axes)]))
    return np.stack([np.asarray(o) for o in outs])


def _rows():
    rows = []
    for prim, example in (row.values for row in TABLE):
        names = sorted(example.shapes)
        combos = [c for c in itertools.product((0, 1, None), repeat=len(names)) if any(a is not None for a in c)]
        for axes in combos:
            rows.append(pytest.param(prim, example, axes, id=f"{prim.name}:{example.expr}:{axes}"))
    return rows


@pytest.mark.parametrize("prim, example, axes", _rows())
def test_vmap_equals_stacking(prim, example, axes, example_dir):  # noqa: F811
    names, values, _, _ = _inputs(example)
    module = _example_module(example_dir, prim, example, names)
    rng = np.random.default_rng(_seed(example) + 5)
    args = []
    for n, ax in zip(names, axes):
        shape = tuple(example.shapes[n])
        if ax is None:
            args.append(values[n])
            continue
        if ax > len(shape):
            ax = 0
        batched_shape = shape[:ax] + (BATCH,) + shape[ax:]
        args.append(_draw(rng, batched_shape, example.domain))
    axes = tuple(ax if ax is None or ax <= len(example.shapes[n]) else 0 for n, ax in zip(names, axes))
    try:
        want = _stacked(module.raw, args, axes)
    except (ValueError, IndexError, TypeError) as exc:  # the examples depend on shape (e.g. masks)
        pytest.skip(f"not mappable this way: {exc}")
    got = tp.vmap(module.raw, in_axes=axes)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _nested_rows():
    rows, seen = [], set()
    for prim, example in (row.values for row in TABLE):
        if prim.name in seen:
            continue
        seen.add(prim.name)
        rows.append(pytest.param(prim, example, id=f"{prim.name}:{example.expr}"))
    return rows


@pytest.mark.parametrize("prim, example", _nested_rows())
def test_nested_vmap_equals_double_stacking(prim, example, example_dir):  # noqa: F811
    """vmap(vmap(f)) over two leading axes of the first argument equals stacking twice."""
    names, values, _, _ = _inputs(example)
    module = _example_module(example_dir, prim, example, names)
    rng = np.random.default_rng(_seed(example) + 6)
    first = names[0]
    args = [_draw(rng, (2, BATCH) + tuple(example.shapes[first]), example.domain)] + [values[n] for n in names[1:]]
    in_axes = (0,) + (None,) * (len(names) - 1)
    try:
        want = np.stack(
            [np.stack([np.asarray(module.raw(*([args[0][i, j]] + args[1:]))) for j in range(BATCH)]) for i in range(2)]
        )
    except (ValueError, IndexError, TypeError) as exc:
        pytest.skip(f"not mappable this way: {exc}")
    got = tp.vmap(tp.vmap(module.raw, in_axes=in_axes), in_axes=in_axes)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
