"""The public runtime helpers (`rt.*`) that have no Numba implementation yet, each with why.

Every other public function of `runtime` has one (an `overload` in this package), which
tests/runtime/test_numba_mirror.py checks; jit names a helper listed here when compiled code
calls it, and calls any other helper that Numba cannot type an internal error.
"""

from __future__ import annotations

_COLLECTIVES = "collectives over a named vmap axis are not compiled yet; between pmap's devices they are"
_CONTAINER_WRITES = "writing into a tuple, list or dict item (and its derivatives) is not compiled yet"
_PYTHON_SIDE = "run by the API around compiled code, or by other helpers, never by generated code"

NO_NUMBA_VERSION = {
    **dict.fromkeys(
        [
            "psum_batched", "pmean_batched", "pmax_batched", "pmin_batched", "all_gather_batched", "axis_index_batched",
            "ppermute_batched", "spread_batched", "extreme_batched_vjp", "extreme_batched_jvp", "gathered_vjp",
            "inverse_perm", "psum_scatter_batched", "all_to_all_batched", "axis_size_batched", "all_gather_batched_vjp",
            "psum_scatter_batched_vjp",
        ],
        _COLLECTIVES,
    ),
    **dict.fromkeys(
        [
            "process_batch_size_of", "process_batch_size_of_batched", "process_shared", "process_summed",
            "process_replicated", "process_replicated_vjp",
        ],
        "a pmap spanning MPI processes under a transform is a vmap, whose collectives are not compiled yet",
    ),
    **dict.fromkeys(
        ["batched_set", "batched_zero_region", "batched_region_vjp", "batched_put_region"],
        "the derivatives of vmapped in-place writes are not compiled yet",
    ),
    "bound_condition": "the derivative of vmap's select over a value bound on one branch is not compiled yet",
    **dict.fromkeys(
        [
            "with_item", "with_item_tangent", "without_item", "as_dict", "dict_values", "list_setslice",
            "list_setslice_items_vjp", "list_setslice_values_vjp",
        ],
        _CONTAINER_WRITES,
    ),
    **dict.fromkeys(
        ["sequence_vjp", "converted_tangent", "to_list_batched", "to_tuple_batched", "to_dict", "to_dict_vjp",
         "to_dict_tangent", "item_batched"],
        "list(x), tuple(x) and dict(d) of values not written out, their derivatives and vmap, and vmap of x.item(), "
        "are not compiled yet",
    ),
    **dict.fromkeys(
        ["block_of", "block_copy", "block_parts", "block_tangent"],
        "np.block is not compiled yet (Numba has none): tp.jit(f, fallback='numpy') runs it",
    ),
    "format_text": "a formatted message is formatted by tp.jit after the compiled code raised it",
    **dict.fromkeys(
        [
            "diff_edge_vjp", "trapezoid_points_vjp",
        ],
        "the derivatives of vmap of np.diff with prepend=/append= and of np.trapezoid with x= are not compiled yet",
    ),
    **dict.fromkeys(
        ["py_max", "py_min"], "generated code calls Python's max and min, which Numba compiles; these are aliases"
    ),
    **dict.fromkeys(
        ["py_select_tangent", "py_select_tangent_vjp", "sum_parts"],
        "the derivatives of Python's max, min and sum over mixed items are not compiled yet",
    ),
    **dict.fromkeys(
        [
            "einsum_part", "einsum_part_vjp", "einsum_part_vjp_out", "einsum_extend", "einsum_extend_one",
            "einsum_extend_vjp", "einsum_extended_layout", "einsum_spec",
        ],
        "derivatives of np.einsum past the second are not compiled yet",
    ),
    "check_cotangents": "tp.custom_vjp rules are not compiled yet",
    "custom_rule": "tp.custom_vjp and tp.custom_jvp rules under vmap are not compiled yet",
    **dict.fromkeys(
        ["check_cotangent", "formatted_exception", "float_leaves", "is_zero", "dtype_like", "batch_size"]
        + ["reduced_axes", "output_type_error"],
        _PYTHON_SIDE,
    ),
}  # fmt: skip


# NumPy modules whose functions Numba has no version of: jit names the function called (np.fft.fft) and why.
NOT_LOWERED_MODULES: dict[str, str] = {}  # np.fft: runtime/numba/fourier.py


def missing_numpy_message(module: str, name: str) -> str:
    """What jit says when compiled code calls `name` of NumPy's `module`, listed in NOT_LOWERED_MODULES."""
    short = "np." + module.removeprefix("numpy.")
    return f"{short}.{name} is not lowered yet ({NOT_LOWERED_MODULES[module]})"


def missing_message(helper: str) -> str:
    """What jit says when compiled code calls rt.<helper>, which Numba cannot type."""
    if helper in NO_NUMBA_VERSION:
        return f"the runtime helper rt.{helper} has no Numba implementation yet ({NO_NUMBA_VERSION[helper]})"
    return (
        f"Numba cannot type the runtime helper rt.{helper}, which runtime/numba/pending.py does not list as lacking "
        "a Numba implementation (an internal error: please report it)"
    )
