"""Freed chunks of CPython's frame stack are kept for reuse, so Numba's deep compile recursion stops mapping them anew.

CPython (3.11 on) keeps the frames of Python calls on a stack of chunks, 16 KiB each unless one frame needs more.
A call that does not fit in the current chunk gets a new one from the object arena allocator (``mmap``); when that
call returns, the chunk goes back (``munmap``). Numba compiles through recursion hundreds of frames deep that
crosses a chunk's end again and again: one cold compile of an MLP's gradient mapped and unmapped 200,000 chunks,
each then page-faulted in, most of its system time.

``install()`` wraps the arena allocator, as Python's documentation allows (``PyObject_SetArenaAllocator``), with
two tiny functions compiled by LLVM: a freed block of exactly one chunk's size joins a short list of ``KEPT``
blocks, and the next request of that size takes one from it. Every other size, and every block past the list,
goes to the previous allocator, so each block is still freed by the allocator that made it. The list is guarded
by a spin lock of its own: callers hold the GIL, except a thread state deleted through ``PyThreadState_Delete``,
which CPython documents as callable without it (and which frees that thread's chunks).
"""

from __future__ import annotations

import ctypes

from .native import engine_for

CHUNK = 16 * 1024  # DATA_STACK_CHUNK_SIZE in CPython's pystate.c
KEPT = 16  # blocks kept at most: 256 KiB


class _ArenaAllocator(ctypes.Structure):
    """PyObjectArenaAllocator."""

    _fields_ = [(name, ctypes.c_void_p) for name in ("ctx", "alloc", "free")]


_IR = """
@count = internal global i64 0
@kept = internal global [{kept} x i8*] zeroinitializer
@busy = internal global i32 0

define internal void @acquire() {{
entry:
  br label %spin
spin:
  %held = atomicrmw xchg i32* @busy, i32 1 acquire
  %got = icmp eq i32 %held, 0
  br i1 %got, label %done, label %spin
done:
  ret void
}}

define internal void @release() {{
  store atomic i32 0, i32* @busy release, align 4
  ret void
}}

define internal i64 @count_locked() {{
  call void @acquire()
  %n = load i64, i64* @count
  ret i64 %n
}}

define i8* @chunk_alloc(i8* %ctx, i64 %size) {{
entry:
  %chunk = icmp eq i64 %size, {chunk}
  br i1 %chunk, label %locked, label %previous
locked:
  %n = call i64 @count_locked()
  %some = icmp ne i64 %n, 0
  br i1 %some, label %take, label %none
take:
  %last = sub i64 %n, 1
  store i64 %last, i64* @count
  %slot = getelementptr [{kept} x i8*], [{kept} x i8*]* @kept, i64 0, i64 %last
  %block = load i8*, i8** %slot
  call void @release()
  ret i8* %block
none:
  call void @release()
  br label %previous
previous:
  %f = inttoptr i64 {alloc} to i8* (i8*, i64)*
  %fresh = call i8* %f(i8* inttoptr (i64 {ctx} to i8*), i64 %size)
  ret i8* %fresh
}}

define void @chunk_free(i8* %ctx, i8* %block, i64 %size) {{
entry:
  %chunk = icmp eq i64 %size, {chunk}
  br i1 %chunk, label %locked, label %previous
locked:
  %n = call i64 @count_locked()
  %room = icmp ult i64 %n, {kept}
  br i1 %room, label %put, label %full
put:
  %slot = getelementptr [{kept} x i8*], [{kept} x i8*]* @kept, i64 0, i64 %n
  store i8* %block, i8** %slot
  %more = add i64 %n, 1
  store i64 %more, i64* @count
  call void @release()
  ret void
full:
  call void @release()
  br label %previous
previous:
  %f = inttoptr i64 {free} to void (i8*, i8*, i64)*
  call void %f(i8* inttoptr (i64 {ctx} to i8*), i8* %block, i64 %size)
  ret void
}}

define i64 @kept_now() {{
  %n = call i64 @count_locked()
  call void @release()
  ret i64 %n
}}
"""

_installed: dict = {}  # keeps the compiled functions and the previous allocator alive for the process's life


def install() -> bool:
    """Wrap the arena allocator once per process; returns whether the wrapper is in place."""
    if _installed:
        return True
    previous = _ArenaAllocator()
    ctypes.pythonapi.PyObject_GetArenaAllocator(ctypes.byref(previous))
    source = _IR.format(chunk=CHUNK, kept=KEPT, ctx=previous.ctx or 0, alloc=previous.alloc, free=previous.free)
    engine = engine_for(source)
    wrapped = _ArenaAllocator(
        None, engine.get_function_address("chunk_alloc"), engine.get_function_address("chunk_free")
    )
    kept_now = ctypes.CFUNCTYPE(ctypes.c_int64)(engine.get_function_address("kept_now"))
    ctypes.pythonapi.PyObject_SetArenaAllocator(ctypes.byref(wrapped))
    _installed.update(engine=engine, previous=previous, wrapped=wrapped, kept_now=kept_now)
    return True


def installed() -> bool:
    """Whether the arena allocator in use now is this module's wrapper."""
    current = _ArenaAllocator()
    ctypes.pythonapi.PyObject_GetArenaAllocator(ctypes.byref(current))
    return bool(_installed) and current.alloc == _installed["wrapped"].alloc


def kept() -> int:
    """How many freed chunks wait for reuse now (0 before ``install()``)."""
    return _installed["kept_now"]() if _installed else 0
