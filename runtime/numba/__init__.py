"""What compiled (Numba) modules need beyond NumPy: the symbolic zero, helper overloads, and lowerings.

Importing this package registers the Numba implementations; generated code refers to it as ``jt``.

Files mirror runtime/: runtime/numba/X.py holds the Numba versions (``overload``s) of the helpers of runtime/X.py
and of no other file (tests/runtime/test_numba_mirror.py checks it); such a file may also hold the lowerings of the
NumPy functions those helpers serve.  The files with no counterpart in runtime/ hold what Numba itself lacks:
lowerings of NumPy functions (einsum_loops, index_tricks, lowered, numpy_loops, pad_computed, pad_rules,
rearranging_parts, rearranging_rules, selection_rules, shape_gaps, stacked_linalg), the fused loop nests (fused) and
their launcher from Python for the numba-kernels backend (kernels), dicts as records (records), Python numbers and
NumPy's type promotion (pynumbers, promotion), memory (memory, stack_chunks, native), optimizing linked code once,
in its caller (linking), no copy of a module to link it (linkable), machine code only when it is asked for
(lazy_code), the compiler's own costs (refcounts, collection, lock_events, flag_keys, impl_keys, ir_vars,
refreshes, shape_errors),
helpers kept on disk for later processes (helper_cache), helpers written as text kept in files so that they are kept
too (sources), disk-cache entries that concurrent writers cannot mix (cache_entries), one process at a time
compiling a function, the others loading it (compile_turns), gradients an entry returns uncopied and jit's copy of
what may share memory (handover), no unused C wrappers (wrappers), the symbolic zero (zero), what the helpers
share (helpers) and the helpers not compiled yet (pending).
"""

# importing these registers the Numba implementations of the runtime helpers generated code calls
from . import (  # noqa: F401
    adjoint,
    array_exprs,
    batching,
    batching_parts,
    binning,
    cache_entries,
    collection,
    collectives,
    compile_turns,
    complex_adjoints,
    constructors,
    copies,
    dead_globals,
    decompositions,
    dicts,
    differences,
    edits,
    einsum_loops,
    elementwise,
    examples,
    flag_keys,
    forward,
    fourier,
    fourier_adjoints,
    fused,
    handover,
    helper_cache,
    helpers,
    impl_keys,
    index_tricks,
    ir_vars,
    lazy_code,
    likeness,
    linalg,
    linalg_batching,
    linkable,
    linking,
    lock_events,
    lowered,
    lstsq_batching,
    memory,
    native,
    norm_batching,
    numpy_loops,
    pad_computed,
    pad_rules,
    padding,
    polynomials,
    promotion,
    pyforms,
    pyfuncs,
    pynumbers,
    pytree,
    random,
    ranges,
    rearranged_adjoints,
    rearranging,
    rearranging_batch,
    rearranging_parts,
    rearranging_rules,
    records,
    refcounts,
    refreshes,
    scans,
    selection_rules,
    shape_errors,
    shape_gaps,
    shapes,
    signals,
    sources,
    stack_chunks,
    stacked_linalg,
    statistics,
    tapes,
    tensor_products,
    tree,
    wrappers,
    zero,
)
from .batching_parts import select, trapezoid  # noqa: F401
from .binning import searchsorted  # noqa: F401
from .copies import column_stack, dstack  # noqa: F401
from .decompositions import eigvalsh, matrix_power, pinv  # noqa: F401
from .differences import gradient  # noqa: F401
from .edits import choose, compress, delete, unwrap  # noqa: F401
from .einsum_loops import einsum  # noqa: F401
from .elementwise import fix, heaviside  # noqa: F401
from .forward import copy_tangent, pop_tangent  # noqa: F401
from .fourier import *  # noqa: F401,F403
from .fused import kernel  # noqa: F401
from .handover import materialize_uncopied  # noqa: F401
from .index_tricks import ix_  # noqa: F401
from .lowered import *  # noqa: F401,F403
from .numpy_loops import *  # noqa: F401,F403
from .pad_computed import pad_modes  # noqa: F401
from .polynomials import polyval  # noqa: F401
from .promotion import njit  # noqa: F401
from .pynumbers import weak  # noqa: F401
from .rearranging import ediff1d, take  # noqa: F401
from .rearranging_parts import diff, pad  # noqa: F401
from .rearranging_rules import roll, rollaxis, sort, take_along_axis  # noqa: F401
from .records import loop_item, make_list, make_record  # noqa: F401
from .scans import cumprod, cumulative_prod, cumulative_sum, nancumprod  # noqa: F401
from .selection_rules import argpartition, partition  # noqa: F401
from .shape_gaps import atleast_1d, atleast_2d, atleast_3d, full, full_like  # noqa: F401
from .signals import (  # noqa: F401
    convolve,
    correlate,
    cross,
    geomspace,
    interp,
    interp_with_period,
    linspace,
    logspace,
    meshgrid,
)
from .stacked_linalg import cond  # noqa: F401
from .tapes import select_pushed  # noqa: F401
from .tensor_products import cholesky, kron, tensordot, vdot  # noqa: F401
from .zero import ZERO, ZeroType  # noqa: F401

memory.install()
stack_chunks.install()
array_exprs.install()
linking.install()
linkable.install()
dead_globals.install()
lazy_code.install()
wrappers.install()
refcounts.install()
collection.install()
lock_events.install()
shape_errors.install()
flag_keys.install()
impl_keys.install()
ir_vars.install()
refreshes.install()
helper_cache.install()
