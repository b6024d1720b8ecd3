"""Values into and out of Numba's compiled code: arguments as records and marked Python numbers, results as
NumPy returns them."""

from __future__ import annotations

import functools

import numpy as np

from runtime import pytree

from ...errors import TranspileError
from ...fingerprint import NoFingerprint, fingerprint
from ...frontend.locations import def_location

# Python's number types used as dtypes (`a.astype(int)`) as the NumPy types they stand for: Numba can keep those
# in a tuple of residuals and write them to its disk cache (a builtin class it cannot pickle).
_DTYPE_OF_BUILTIN = {int: np.int64, float: np.float64, bool: np.bool_, complex: np.complex128}


def captured_value(value):
    """A captured value as compiled code takes it: a Python number stays one (weakly typed, as NumPy types it)."""
    from runtime.numba.pynumbers import python_number

    if isinstance(value, type) and getattr(pytree.node_of_class(value), "data_fields", None) is not None:
        return pytree.dataclass_record_class(value)  # a registered dataclass, built in compiled code as its record
    return _DTYPE_OF_BUILTIN.get(value, value) if isinstance(value, type) else python_number(value)


def result_boxing(result_type, handed_over=False):
    """What turns a compiled result into the value NumPy code returns (None where it is that already); with
    `handed_over`, the result of an entry that returns its gradients uncopied, whose arrays that may share memory
    are copied (runtime/numba/handover.py)."""
    from numba import types

    as_numpy = _numpy_scalars(result_type)
    if any(isinstance(t, types.BaseNamedTuple) for t in _nested_types(result_type)):
        as_numpy = functools.partial(_as_dicts_of, as_numpy)
    if handed_over:
        from runtime.numba.handover import owned

        return owned if as_numpy is None else lambda value: owned(as_numpy(value))
    return as_numpy


def _as_dicts_of(as_numpy, value):
    return _as_dicts(as_numpy(value) if as_numpy else value)


def hands_over(entry) -> bool:
    """Whether the compiled entry returns gradients uncopied (transpile/backends/numba/lowering.py,
    `hand_over_results`): its code calls `jt.materialize_uncopied`."""
    return "materialize_uncopied" in entry.py_func.__code__.co_names


def _nested_types(ty):
    from numba import types

    yield ty
    for inner in getattr(ty, "types", ()) if isinstance(ty, types.BaseTuple) else ():
        yield from _nested_types(inner)
    if isinstance(ty, types.List):
        yield from _nested_types(ty.dtype)


def _numpy_scalars(result_type):
    """What turns the Python numbers Numba returns for NumPy scalars of `result_type` into NumPy scalars of
    their dtype, as NumPy returns them (np.float32 stays np.float32, np.int8 np.int8); None where nothing needs
    it.  A Python number of the compiled code (runtime/numba/pynumbers.py) comes back as one."""
    from numba import types

    from runtime.numba.pynumbers import is_python

    if isinstance(result_type, (types.Number, types.Boolean)) and not is_python(result_type):
        return np.dtype(str(types.unliteral(result_type))).type
    if isinstance(result_type, types.BaseTuple):
        parts = [_numpy_scalars(t) for t in result_type.types]
        if any(parts):
            return lambda values: _rebuilt(values, [f(v) if f else v for f, v in zip(parts, values)])
    if isinstance(result_type, types.List):
        item = _numpy_scalars(result_type.dtype)
        if item:
            return lambda values: [item(v) for v in values]
    return None


def _rebuilt(values, items):
    return values._make(items) if hasattr(values, "_make") else tuple(items)  # a namedtuple stays one


def as_records(target, pname, value):
    """The argument as Numba takes it: each dict becomes a record (runtime/numba/records.py), each Python number is
    marked as one (runtime/numba/pynumbers.py: weakly typed, as NumPy types it).  An array or NumPy scalar of a dtype
    Numba has no type for is refused (_NO_NUMBA_TYPE)."""
    if type(value) is np.ndarray and value.dtype not in _NO_NUMBA_TYPE:  # most leaves, as they are (every call
        return value  # walks its arguments)
    if type(value) in pytree._NODES:
        return _object_record(target, pname, value)
    if isinstance(value, dict):
        from runtime.numba import records

        if not records.can_be_record(value):
            raise TranspileError(
                f"argument `{pname}` of `{target.__name__}` is a dict with keys jit cannot take: {tuple(value)!r}",
                def_location(target),
                "jit takes dicts whose keys are identifier strings not starting with `_`; "
                "rename the keys or call the function without jit",
            )
        return records.record_class(tuple(value))(*(as_records(target, pname, v) for v in value.values()))
    if isinstance(value, list):
        return [as_records(target, pname, v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(as_records(target, pname, v) for v in value)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype in _NO_NUMBA_TYPE:
        _refuse_dtype(target, pname, value.dtype)
    from runtime.numba.pynumbers import python_number

    return python_number(value)


def _object_record(target, pname, value):
    """A registered pytree object under jit: a namedtuple of its data fields (its meta fields compiled in as
    constants), rebuilt as an object of its class on the way out."""
    name = type(value).__name__
    try:
        fields = pytree.as_fields(value)
    except pytree.PytreeError as exc:
        raise TranspileError(
            f"argument `{pname}` of `{target.__name__}`: {exc}", def_location(target), "or call it without jit"
        ) from None
    odd = [k for k in fields if not (isinstance(k, str) and k.isidentifier() and k[:1] != "_")]
    if odd:
        raise TranspileError(
            f"argument `{pname}` of `{target.__name__}` is a {name} whose data field `{odd[0]}` starts with `_`: "
            "jit takes NamedTuples and registered objects whose data fields do not",
            def_location(target),
            "rename the field, pass a NamedTuple (or a dict) of the arrays, or call the function without jit",
        )
    parts = []
    for attr, meta in fields.meta.items():
        try:
            parts.append((attr, fingerprint(meta)))
        except NoFingerprint as exc:
            raise TranspileError(
                f"argument `{pname}` of `{target.__name__}` is a {name} whose meta field `{attr}{exc.path}` holds "
                f"a value of type {type(exc.value).__name__}: jit compiles meta fields in as constants, keyed by "
                "their content",
                def_location(target),
                "meta fields under jit must be numbers, strings, NumPy arrays, or tuples, lists and dicts of them; "
                "make that attribute a data field, or call the function without jit",
            ) from None
    meta_key = fingerprint(parts) if parts else None
    record = pytree.object_record_class(fields.cls, tuple(fields), fields.meta, meta_key, fields.rebuild)
    return record(*(as_records(target, pname, v) for v in fields.values()))


# dtypes Numba has no type for on the CPU (not even to pass an array through), and the dtype to convert to;
# longdouble is one where it is wider than float64 (x86-64 Linux: float128)
_NO_NUMBA_TYPE = {np.dtype(np.float16): "float32"}
if np.dtype(np.longdouble).itemsize > 8:
    _NO_NUMBA_TYPE.update({np.dtype(np.longdouble): "float64", np.dtype(np.clongdouble): "complex128"})


def _refuse_dtype(target, pname, dtype):
    """float16, longdouble, clongdouble: Numba has no type for them on the CPU; say so, naming the argument."""
    raise TranspileError(
        f"argument `{pname}` of `{target.__name__}` holds {dtype} values, which Numba cannot take or compute with on "
        "the CPU",
        def_location(target),
        f"pass {_NO_NUMBA_TYPE[dtype]} (`x.astype(np.{_NO_NUMBA_TYPE[dtype]})`), or call the function without jit "
        "(jit(f, fallback='numpy') does that with a warning)",
    )


def _as_dicts(value):
    """Results with every record (see as_records) turned back into the dict it stands for."""
    from runtime.numba import records

    if records.is_record(value):
        return {k: _as_dicts(v) for k, v in zip(value._fields, value)}
    if type(value) in pytree.REBUILDS:
        return pytree.REBUILDS[type(value)]({k: _as_dicts(v) for k, v in zip(value._fields, value)})
    if isinstance(value, list):
        return [_as_dicts(v) for v in value]
    if isinstance(value, tuple):
        return _rebuilt(value, [_as_dicts(v) for v in value])
    return value


def type_name(numba_type) -> str:
    """A Numba argument type as the user knows it: `float` for a Python float, `array(float32, 1d, C)` as is."""
    python = getattr(numba_type, "python", None)
    return python.__name__ if python is not None else "bool" if str(numba_type) == "pybool" else str(numba_type)


_ARRAY_TYPES: dict = {}  # Numba's fingerprint of a plain numeric array (or of a plain argument) -> its Numba type
_INT64 = range(-(2**63), 2**63)  # Python ints Numba types as int64 (the fingerprint does not tell uint64 apart)
_SCALARS = (float, bool, complex, type(None))


@functools.cache
def _numba_typing():
    """(Numba's fingerprint of a value, Numba's typeof, its Purpose): imported once, when first needed, and from
    then on `numba.typeof` is _quick_typeof."""
    import numba
    from numba._dispatcher import compute_fingerprint
    from numba.core.typing.typeof import Purpose, typeof

    numba.typeof = _quick_typeof
    return compute_fingerprint, typeof, Purpose


def _quick_typeof(value, purpose=None):
    """numba.typeof, with the type of an argument that argument_type knows taken from its fingerprint.

    Compiled code that takes a list looks `numba.typeof` up when it is called, and types every item of the list
    with it, in Python, to check that all have the list's type: 100 us for a model's three (W, b) pairs, 10 us
    this way.  The types are the objects Numba's typeof gives (it interns them)."""
    _, typeof, purposes = _numba_typing()
    purpose = purposes.argument if purpose is None else purpose
    found = argument_type(value) if purpose is purposes.argument else None
    return typeof(value, purpose) if found is None else found


def array_type(value):
    """Numba's type of `value` where it is a plain, aligned array of numbers or bools in native byte order, from the
    fingerprint Numba's own dispatcher keys its types by (ndim, layout, writable, dtype number: a few bytes made in
    C), so that a call does not type its arrays again in Python; None for any other value (typed as Numba types it:
    the fingerprint does not tell `>f8` from `<f8`, nor one record dtype from another)."""
    return argument_type(value) if type(value) is np.ndarray else None


def argument_type(value):
    """Numba's type of a call's argument where its fingerprint determines it: a plain array (array_type), a
    Python float, bool, complex, None or int in int64's range, a numeric NumPy scalar, and tuples and non-empty
    lists of these (Numba types a list by its first item); None for any other value, typed as Numba types it.
    A list of tuples of arrays (a model's parameters) is typed in microseconds, not the 50 of Numba's typeof."""
    return _typed_by_fingerprint(value) if _fingerprinted(value) else None


def _fingerprinted(value) -> bool:
    """Whether values of `value`'s fingerprint all have its Numba type (see argument_type)."""
    kind = type(value)
    if kind is np.ndarray:
        dtype = value.dtype
        return dtype.kind in "biufc" and dtype.isnative and value.flags.aligned
    if kind in _SCALARS:
        return True
    if kind is int:
        return value in _INT64
    if kind is tuple:
        return all(_fingerprinted(item) for item in value)
    if kind is list:
        return len(value) > 0 and _fingerprinted(value[0])
    return isinstance(value, np.generic) and value.dtype.kind in "biufc"


def _typed_by_fingerprint(value):
    fingerprint_of, typeof, purposes = _numba_typing()
    key = fingerprint_of(value)
    found = _ARRAY_TYPES.get(key)
    if found is None:
        found = _ARRAY_TYPES[key] = typeof(value, purposes.argument)
    return found
