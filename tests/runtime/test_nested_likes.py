"""Likes under nested vmaps count their batch axes: stacked by an enclosing vmap's loop they gain one, one example
of them loses one, and a Like kept only for its shape (not batched) stays as it is."""

import numpy as np
import pytest

import runtime as rt
from runtime.batching import BatchError


def test_per_example_likes_stack_into_a_like_with_one_batch_axis_more():
    x = np.zeros((4, 3, 2), dtype=np.float32)  # 4 outer examples of 3 inner ones
    stacked = rt.per_example(rt.batched_like, (x,), (True,), 4)
    assert (stacked.shape, stacked.dtype, stacked.batched) == ((4, 3, 2), np.float32, 2)
    assert stacked.batched == rt.batched_like(x, 2).batched
    row = stacked[1]
    assert (row.shape, row.batched) == ((3, 2), 1)


def test_one_example_of_a_like_drops_its_leading_batch_axes():
    like = rt.batched_like(np.zeros((4, 3, 2)), 2)
    assert rt.example_like(like).shape == (3, 2) and rt.example_like(like).batched == 1
    assert rt.example_like(like, 2).shape == (2,) and rt.example_like(like, 2).batched == 0
    assert rt.example_like(np.zeros((4, 3, 2)), 2).shape == (2,)
    kept = rt.like(np.zeros((5, 5)))  # a residual riding in a batched tuple
    assert rt.example_like(kept) is kept


def test_common_example_reads_a_value_saved_batched_and_refuses_one_that_differs():
    axes = rt.to_batched((1, 0, 2), 3)
    assert list(rt.common_example(axes)) == [1, 0, 2]
    assert rt.inverse_axes(rt.common_example(axes), 3) == (1, 0, 2)
    assert rt.common_example((2, 5), batched=False) == (2, 5)
    with pytest.raises(BatchError, match="differs between the examples"):
        rt.common_example(np.array([[0, 1], [1, 0]]))


def test_align_puts_new_axes_after_the_enclosing_batch_axes():
    outer_inner = np.zeros((4, 3, 5))  # 4 outer examples, 3 inner ones, vectors of 5
    matrix = np.zeros((4, 2, 5))  # 4 outer examples of an unbatched (at the inner level) 2 x 5 matrix
    a, b = rt.align((outer_inner, matrix), (True, False), lead=1)
    assert a.shape == (4, 3, 1, 5) and b.shape == (4, 2, 5)
    for i in range(4):  # each outer example aligned as one vmap aligns it
        inner = rt.align((outer_inner[i], matrix[i]), (True, False))
        assert [p.shape for p in inner] == [a[i].shape, b[i].shape]
