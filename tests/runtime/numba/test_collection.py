"""While Numba compiles, the collector's first threshold is raised and what existed before is frozen; both are put
back when it ends."""

import gc
from unittest import mock

import numba
import numpy as np
import pytest
from numba.core import errors
from numba.extending import overload

from runtime.numba import collection

pytestmark = pytest.mark.first  # gc.get_freeze_count walks every frozen object: cheap only in a small process

seen = []  # the thresholds in force when a probe's call was typed
frozen = []  # how many objects were frozen then


def probe(x):
    return x


@overload(probe)
def _probe(x):
    seen.append(gc.get_threshold())
    frozen.append(gc.get_freeze_count())
    return lambda x: x + 1


@pytest.fixture
def thresholds(monkeypatch):
    monkeypatch.setattr(collection, "_freezer", collection._Freezer())  # nothing held: not the test's block
    gc.unfreeze()  # what tests/conftest.py froze for the test
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    seen.clear()
    frozen.clear()
    yield
    gc.set_threshold(*saved)


def test_raised_through_nested_compiles_and_put_back_after(thresholds):
    @numba.njit
    def twice(x):
        return probe(probe(x) * 1.5)  # the second call is typed after the first one's implementation compiled

    assert twice(1) == 4.0
    assert seen == [(collection.YOUNG, 10, 10)] * 2
    assert gc.get_threshold() == (700, 10, 10)


def test_put_back_when_the_compile_fails(thresholds):
    @numba.njit
    def fails(x):
        return probe(x) + "text"

    with pytest.raises(errors.TypingError):
        fails(1j)  # each test types the probe at types of its own: Numba keeps what it typed
    assert seen and all(t[0] == collection.YOUNG for t in seen)
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_of_the_users_is_kept(thresholds):
    gc.set_threshold(50_000, 5, 5)

    @numba.njit
    def once(x):
        return probe(x)

    assert once(np.float32(2)) == 3
    assert seen == [(50_000, 5, 5)]
    assert gc.get_threshold() == (50_000, 5, 5)


def test_what_existed_before_is_frozen_while_compiling_and_unfrozen_after(thresholds):
    before = []  # made before the compile, so frozen during it

    @numba.njit
    def once(x):
        return probe(x)

    assert gc.get_freeze_count() == 0
    assert once(np.int16(2)) == 3
    assert len(frozen) == 1 and frozen[0] > 1000  # the test process's modules, Numba's types, ...
    assert gc.get_freeze_count() == 0
    assert any(o is before for o in gc.get_objects(generation=2))  # back where a full collection sees it


def test_what_the_user_froze_stays_frozen(thresholds):
    @numba.njit
    def once(x):
        return probe(x)

    gc.freeze()
    try:
        count = gc.get_freeze_count()
        since = [[] for _ in range(10_000)]  # made after the user's freeze: frozen by nobody
        assert once(np.int8(2)) == 3 and since
        assert len(frozen) == 1 and count - 1000 < frozen[0] <= count  # (a frozen object may be freed meanwhile)
        assert count - 1000 < gc.get_freeze_count() <= count  # nothing unfrozen after it
    finally:
        gc.unfreeze()


def test_a_compile_in_a_frozen_block_freezes_nothing_more_and_counts_nothing(thresholds):
    @numba.njit
    def once(x):
        return probe(x)

    with collection.frozen():
        count = gc.get_freeze_count()
        since = [[] for _ in range(10_000)]  # made after the block's freeze
        with mock.patch.object(gc, "get_freeze_count", return_value=count) as asked:  # it walks every frozen object
            assert once(np.uint8(2)) == 3 and since
        assert frozen == [count] and asked.call_count == 1  # the probe's question only
        assert count - 1000 < gc.get_freeze_count() <= count  # still frozen after the compile
    assert gc.get_freeze_count() == 0
