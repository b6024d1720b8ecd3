"""Freed frame-stack chunks are reused: deep recursion stops mapping fresh pages, and other blocks keep their owner."""

import resource
import sys
import threading
import types

import pytest

from runtime.numba import stack_chunks

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="frames live on chunks from CPython 3.11 on")


def depth(n: int) -> int:
    return 0 if n == 0 else 1 + depth(n - 1)


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def test_installed_once_with_the_runtime():
    assert stack_chunks.installed()
    assert stack_chunks.install()
    assert stack_chunks.install()


def test_recursion_across_chunk_ends_reuses_the_freed_chunk():
    depth(400)  # 400 frames take several 16 KiB chunks; returning frees them to the list
    assert stack_chunks.kept() >= 1
    before = minor_faults()
    for _ in range(2000):
        assert depth(400) == 400
    # without reuse each round maps and faults in at least one new chunk: 4 pages, 8,000 faults in all
    assert minor_faults() - before < 500


def test_a_frame_larger_than_a_chunk_comes_from_the_previous_allocator():
    def wide():
        return depth(50)

    spare = tuple(f"unused_{i}" for i in range(5000))  # 40 KiB of locals: a chunk of 64 KiB, not a kept block
    code = wide.__code__
    code = code.replace(co_varnames=code.co_varnames + spare, co_nlocals=code.co_nlocals + len(spare))
    wider = types.FunctionType(code, globals())
    kept = stack_chunks.kept()
    for _ in range(100):
        assert wider() == 50
    assert stack_chunks.kept() == kept


def test_threads_recursing_at_once_each_get_their_own_chunks():
    results = []

    def work(n):
        results.append(sum(depth(n) for _ in range(200)))

    threads = [threading.Thread(target=work, args=(300 + 10 * i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [200 * (300 + 10 * i) for i in range(4)]
    assert stack_chunks.kept() <= stack_chunks.KEPT


def test_object_arenas_still_come_and_go():
    for _ in range(3):
        blocks = [[i] for i in range(300_000)]  # pymalloc's 1 MiB arenas, through the wrapped allocator
        assert sum(block[0] for block in blocks) == 299_999 * 300_000 // 2
        del blocks
