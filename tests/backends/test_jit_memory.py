"""Compiled code's large arrays are advised to use huge pages, as NumPy's are, and the allocator still works."""

import ctypes
import sys

import numba
import numpy as np
import pytest

from runtime.numba import memory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise and /proc/self/smaps are Linux's")

raw_malloc = ctypes.pythonapi.PyMem_RawMalloc
raw_malloc.restype, raw_malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
raw_calloc = ctypes.pythonapi.PyMem_RawCalloc
raw_calloc.restype, raw_calloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t, ctypes.c_size_t]
raw_realloc = ctypes.pythonapi.PyMem_RawRealloc
raw_realloc.restype, raw_realloc.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t]
raw_free = ctypes.pythonapi.PyMem_RawFree
raw_free.argtypes = [ctypes.c_void_p]


def advised(address: int) -> bool:
    """Whether the mapping holding `address` carries the kernel's huge-page advice flag ("hg")."""
    mapping = None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                start, end = (int(part, 16) for part in head.split("-"))
                mapping = start <= address < end
            elif head == "VmFlags:" and mapping:
                return "hg" in line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


def test_the_hook_is_installed_once():
    assert memory.install()
    assert memory.install()


@pytest.mark.parametrize("size", [memory.THRESHOLD, 64 << 20])
def test_large_blocks_are_advised(size):
    block = raw_malloc(size)
    try:
        assert advised(block + size // 2)
    finally:
        raw_free(block)


def test_calloc_and_realloc_keep_their_contract():
    block = raw_calloc(5 << 20, 8)
    assert bytes((ctypes.c_char * 64).from_address(block + (20 << 20))) == b"\0" * 64
    assert advised(block + (20 << 20))
    ctypes.memset(block, 7, 16)
    grown = raw_realloc(block, 48 << 20)
    try:
        assert bytes((ctypes.c_char * 16).from_address(grown)) == b"\7" * 16
        assert advised(grown + (40 << 20))
    finally:
        raw_free(grown)


def test_arrays_made_by_compiled_code_are_advised():
    fused = numba.njit(lambda x: x * x + x * np.float32(2.0))
    x = np.ones((4000, 4000), np.float32)
    out = fused(x)
    assert advised(out.ctypes.data + out.nbytes // 2)
    np.testing.assert_array_equal(out, np.full_like(x, 3.0))
