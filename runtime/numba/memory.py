"""Arrays made by compiled code reuse freed memory and, when large, get huge pages, as NumPy's arrays do.

Numba allocates array memory through Python's raw allocator (``PyMem_RawMalloc``). NumPy asks the
kernel for transparent huge pages for its large blocks (``madvise(MADV_HUGEPAGE)``), and a fresh
64 MiB result then costs 32 page faults instead of 16,384; without the advice a Numba loop over a
large array spends most of its time in the kernel. ``install()`` wraps the raw allocator, as
Python's documentation allows for hooks (the previous functions do the work, the hook only advises),
with four tiny functions compiled by LLVM. Linux only; elsewhere, and where the kernel ignores the
advice, nothing changes.

glibc serves blocks from 128 KiB up with fresh ``mmap`` pages until its first free of such a block
raises the threshold (up to 32 MiB). Numba's pattern of frees can leave it low, and then every
megabyte-sized temporary of a gradient step is page-faulted in again (measured: half of an MLP
step). ``install()`` sets the values glibc's own adjustment ends at: blocks under 32 MiB come from
the heap, and up to 64 MiB of freed heap is kept for reuse. ``MALLOC_MMAP_THRESHOLD_`` or
``MALLOC_TRIM_THRESHOLD_`` in the environment leave glibc's settings to the user.
"""

from __future__ import annotations

import ctypes
import os
import sys

from .native import engine_for

MADV_HUGEPAGE = 14
HUGE_PAGE = 2 << 20
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)
MMAP_THRESHOLD = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit machines
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # what glibc sets along with a raised mmap threshold
# Only blocks with their own mapping are advised: advice on the heap makes later small blocks there
# fault in whole huge pages (measured: every other MLP step 2.7x slower).
THRESHOLD = MMAP_THRESHOLD
_RAW_DOMAIN = 0  # PYMEM_DOMAIN_RAW


class _Allocator(ctypes.Structure):
    """PyMemAllocatorEx."""

    _fields_ = [(name, ctypes.c_void_p) for name in ("ctx", "malloc", "calloc", "realloc", "free")]


_IR = """
define void @advise(i8* %p, i64 %n) {{
entry:
  %big = icmp uge i64 %n, {threshold}
  %some = icmp ne i8* %p, null
  %both = and i1 %big, %some
  br i1 %both, label %aligned, label %done
aligned:
  %at = ptrtoint i8* %p to i64
  %up = add i64 %at, {page_mask}
  %start = and i64 %up, -{page}
  %past = add i64 %at, %n
  %end = and i64 %past, -{page}
  %inside = icmp ugt i64 %end, %start
  br i1 %inside, label %call, label %done
call:
  %length = sub i64 %end, %start
  %from = inttoptr i64 %start to i8*
  %madvise = inttoptr i64 {madvise} to i32 (i8*, i64, i32)*
  %ignored = call i32 %madvise(i8* %from, i64 %length, i32 {advice})
  br label %done
done:
  ret void
}}

define i8* @hooked_malloc(i8* %ctx, i64 %n) {{
  %f = inttoptr i64 {malloc} to i8* (i8*, i64)*
  %p = call i8* %f(i8* %ctx, i64 %n)
  call void @advise(i8* %p, i64 %n)
  ret i8* %p
}}

define i8* @hooked_calloc(i8* %ctx, i64 %count, i64 %size) {{
  %f = inttoptr i64 {calloc} to i8* (i8*, i64, i64)*
  %p = call i8* %f(i8* %ctx, i64 %count, i64 %size)
  %n = mul i64 %count, %size
  call void @advise(i8* %p, i64 %n)
  ret i8* %p
}}

define i8* @hooked_realloc(i8* %ctx, i8* %old, i64 %n) {{
  %f = inttoptr i64 {realloc} to i8* (i8*, i8*, i64)*
  %p = call i8* %f(i8* %ctx, i8* %old, i64 %n)
  call void @advise(i8* %p, i64 %n)
  ret i8* %p
}}
"""

_installed: dict = {}  # keeps the compiled hooks and the previous allocator alive for the process's life


def install() -> bool:
    """Hook the raw allocator once per process; returns whether the hook is in place."""
    if _installed or not sys.platform.startswith("linux"):
        return bool(_installed)
    previous = _Allocator()
    ctypes.pythonapi.PyMem_GetAllocator(_RAW_DOMAIN, ctypes.byref(previous))
    madvise = ctypes.cast(ctypes.CDLL(None).madvise, ctypes.c_void_p).value
    source = _IR.format(
        threshold=THRESHOLD,
        page=HUGE_PAGE,
        page_mask=HUGE_PAGE - 1,
        madvise=madvise,
        advice=MADV_HUGEPAGE,
        malloc=previous.malloc,
        calloc=previous.calloc,
        realloc=previous.realloc,
    )
    engine = engine_for(source)
    hooked = _Allocator(
        previous.ctx,
        engine.get_function_address("hooked_malloc"),
        engine.get_function_address("hooked_calloc"),
        engine.get_function_address("hooked_realloc"),
        previous.free,
    )
    ctypes.pythonapi.PyMem_SetAllocator(_RAW_DOMAIN, ctypes.byref(hooked))
    _installed.update(engine=engine, previous=previous, hooked=hooked)
    _keep_freed_memory()
    return True


def _keep_freed_memory():
    """glibc's settings after its mmap threshold has grown to the maximum (see the module's docstring)."""
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallopt") or {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"} & set(os.environ):
        return
    libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
