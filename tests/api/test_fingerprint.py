"""jit keys compiled code by the types and contents of what it compiles in: captured values (through every
container, in this process and in the next) and static arguments; what has no content to key by is refused."""

from __future__ import annotations

import collections
import textwrap

import numpy as np
import pytest
from support import runs_in_new_processes

import transpile as tp
from transpile.fingerprint import NoFingerprint, fingerprint, static_key

Pair = collections.namedtuple("Pair", "a b")


def differs_in_the_middle(value):
    """A 5,000-element array whose repr NumPy abbreviates: only element 2,500 is `value`."""
    array = np.zeros(5000)
    array[2500] = value
    return array


def test_values_compiled_code_can_tell_apart_have_different_fingerprints():
    values = [
        1, 1.0, True, np.float32(1), np.float64(1), np.int64(1), 1j, "1", b"1", None, -0.0, 0.0,
        (1,), [1], {"a": 1}, {"b": 1}, (1, 2), Pair(1, 2),
        np.ones(3), np.ones(3, np.float32), np.ones((3, 1)), np.arange(3.0),
        np.zeros(2, dtype=[("a", "f8"), ("b", "i4")]), np.dtype("f8"), np.dtype("f4"), np.float64, float, np.add,
    ]  # fmt: skip
    prints = [fingerprint(v) for v in values]
    assert len(set(prints)) == len(values)
    for container in (list, tuple, lambda a: {"w": a}, lambda a: ((a,), 1.0)):
        assert fingerprint(container(differs_in_the_middle(1.0))) != fingerprint(container(differs_in_the_middle(2.0)))


def test_equal_contents_have_equal_fingerprints():
    assert fingerprint(float("nan")) == fingerprint(float("nan"))
    assert fingerprint(np.ones((4, 3)).T) == fingerprint(np.ones((3, 4)))  # layout is not content
    assert fingerprint([differs_in_the_middle(1.0)]) == fingerprint([differs_in_the_middle(1.0)])


@pytest.mark.parametrize(
    "value, path",
    [(object(), ""), ([1.0, {"k": object()}], "[1]['k']"), ((np.array([1.0, None]),), "[0]"), ({1, 2}, "")],
    ids=["object", "nested object", "object array", "set"],
)
def test_values_without_content_to_fingerprint_are_refused(value, path):
    with pytest.raises(NoFingerprint) as info:
        fingerprint(value)
    assert info.value.path == path


# ------------------------------------------------------------------ captured values under jit


def make(weights):
    def f(x):
        return np.sum(x * weights[0][0]) + weights[1]

    return f


def test_closures_whose_large_captured_arrays_differ_in_the_middle_get_their_own_code():
    x = np.ones(5000)
    for value in (1.0, 2.0):
        weights = ((differs_in_the_middle(value),), 0.5)
        assert tp.jit(make(weights))(x) == value + 0.5


_PROCESS = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {directory!r})
    import numpy as np
    import transpile as tp
    import captured_model as model
    model.W[0][0][2500] = {value}  # the same file, other contents: only the values tell the processes apart
    print(json.dumps(float(tp.jit(model.f)(np.ones(5000)))))
    """
)

_MODEL = """\
import numpy as np

W = ((np.zeros(5000),), 2.0)


def f(x):
    return np.sum(x * W[0][0]) * W[1]
"""


def test_processes_sharing_a_cache_get_the_numbers_of_their_own_captured_arrays(tmp_path):
    (tmp_path / "captured_model.py").write_text(_MODEL)
    for value in (1.0, 3.0):
        script = _PROCESS.format(directory=str(tmp_path), value=value)
        assert runs_in_new_processes(script, tmp_path / "cache", times=1) == [2.0 * value]


OBJECTS = (np.array([1.0, 2.0], dtype=object),)


def reads_objects(x):
    return np.sum(x * OBJECTS[0])


def test_a_captured_value_without_content_to_fingerprint_is_refused_at_the_users_line():
    line = reads_objects.__code__.co_firstlineno + 1
    for fun in (reads_objects, tp.grad(reads_objects)):
        with pytest.raises(tp.TranspileError, match=r"`OBJECTS\[0\]` \(of type ndarray\)") as info:
            tp.jit(fun)(np.ones(2))
        assert f"{__file__}:{line}:" in str(info.value) and "pass it as an argument" in str(info.value)


# ------------------------------------------------------------------ static arguments


def times(x, s):
    return x * s


def test_static_keys_tell_values_apart_by_type_and_bits():
    keys = [static_key(v) for v in (1, 1.0, True, -0.0, 0.0, "1", None, (1,), (1.0,), ((True,),))]
    assert len(set(keys)) == len(keys)
    assert static_key(float("nan")) == static_key(float("nan"))


def test_static_values_are_told_apart_by_type_and_content():
    jitted = tp.jit(times, static_argnums=1)
    x = np.array([1.0, -1.0])
    statics = [1, 1.0, True, -0.0, 0.0, float("nan"), float("nan")]
    for s in statics:
        got, want = jitted(x, s), times(x, s)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        if s == s:  # -0.0 and 0.0 (a NaN's sign is not part of its value)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    ints = np.array([1, 2])
    for s in (1, True):
        assert jitted(ints, s).dtype == times(ints, s).dtype
    assert jitted.stats()["specializations"] == len(statics) - 1 + 2  # one module per static value: NaN is NaN
