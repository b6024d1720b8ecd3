"""Machine code for a library compiled inside another compile only when something asks for it.

Numba compiles every helper a function calls (each ``overload`` implementation, each generated callee) as a
library of its own, makes machine code of it at once (its Python wrapper's address is asked for), and then links
its IR into the caller, whose machine code has the helper's again: the helper's own machine code is never run
unless the helper is called from Python.  bench/compile_time.py: 8 of the MLP gradient's 10 machine-code seconds.

``install()`` makes that machine code lazy for a library finalized while another function is compiling (on this
thread): its module is not handed to the JIT engine, and its Python entry point calls a shared trampoline that,
on the first call, makes the machine code and then calls the real wrapper.  The machine code is made as soon as
anything else needs it: a pointer to one of its functions, its object code (Numba's disk cache), a caller's
module that only declares one of its symbols, a recursion's reference left for Numba's runtime linker.  Its Numba
environment, which a caller holding a linked copy of its code reads through a symbol of that name, is set as soon
as any module defining that symbol gets machine code.  A library with references left for recursion is compiled
at once, as before.

A generated callee is then not written to Numba's disk cache either (linking.nested(), runtime/numba/promotion.py):
saving it would ask for its object code.  The caller's code changes a little: Numba linked in a helper's module
after making its machine code, which rewrites the module's IR in place (LLVM's CodeGenPrepare), and now links the
optimized IR itself (Lennard-Jones' cached caller 660 -> 517 KB of bitcode); the numbers are bit for bit the same
on bench/'s workloads.  Measured with bench/compile_time.py, cold compile of the MLP's jit(grad) 38.1 -> 25.8 CPU
seconds (machine code 10.7 -> 1.8), Lennard-Jones' 41.5 -> 31.7.  ``TRANSPILE_LAZY_CODE=0`` turns this off.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from dataclasses import dataclass

import llvmlite.ir as llvmir
from numba import _dynfunc
from numba.core import codegen, cpu
from numba.core.compiler_lock import global_compiler_lock

from . import linking

_UNRESOLVED = codegen.RuntimeLinker.PREFIX

_deferred_symbols: dict[str, codegen.JITCodeLibrary] = {}  # a symbol defined by a library without machine code
_loading = threading.local()  # nested: loading() reads libraries for a function being compiled
_environments: dict[str, object] = {}  # a deferred library's environment, by its symbol's name
_entries: dict[int, _Entry] = {}  # a lazy entry point's closure id -> what the trampoline calls
_trampoline: list = []  # its address and library, once made (under Numba's compiler lock, as all of this)


@dataclass
class _Entry:
    """What a lazy entry point stands for: a library's Python wrapper, made callable on first use."""

    library: codegen.JITCodeLibrary
    fndesc: object
    env: object
    lazy: object  # the entry point itself (keeps its closure, hence the closure's id, alive)
    real: object = None  # the wrapper made from machine code, once made


def _defers(library) -> bool:
    """Whether `library`'s machine code waits: a JIT library finalized inside another compile, with no references
    left for recursion (in it or pending)."""
    if not isinstance(library, codegen.JITCodeLibrary) or not getattr(library, "_transpile_nested", False):
        return False
    if library._codegen._rtlinker._unresolved:
        return False
    return not any(gv.name.startswith(_UNRESOLVED) for gv in library._final_module.global_variables)


def make_machine_code(library):
    """Hand `library`'s module to the JIT engine and compile it, if that waits (and first what it declares)."""
    if not getattr(library, "_transpile_deferred", False):
        return
    library._transpile_deferred = False
    for fn in library._final_module.functions:
        if fn.name in _deferred_symbols:
            del _deferred_symbols[fn.name]
    _declared_first(library._final_module)
    library._codegen._add_module(library._final_module)
    library._finalize_specific()


def _declared_first(module):
    """Make the machine code of the deferred libraries that define what `module` only declares."""
    for fn in module.functions:
        if fn.is_declaration and fn.name in _deferred_symbols:
            make_machine_code(_deferred_symbols[fn.name])


def _finalize_final_module(original):
    """`original`, leaving out the JIT engine for a library that `_defers`."""

    def finalize_final_module(library):
        if not hasattr(library, "_transpile_nested"):  # read from a disk cache, not compiled
            library._transpile_nested = getattr(_loading, "nested", False)
        if not _defers(library):
            _declared_first(library._final_module)
            return original(library)
        library._finalize_dynamic_globals()
        library._verify_declare_only_symbols()
        # as original() does: the object cache's hooks find the library through its module
        library._final_module._CPUCodeLibrary__library = weakref.proxy(library)
        library._transpile_deferred = True
        for fn in library._final_module.functions:
            if not fn.is_declaration:
                _deferred_symbols.setdefault(fn.name, library)
        library._finalized = True

    return finalize_final_module


@contextlib.contextmanager
def loading():
    """Libraries read from a disk cache in this block (runtime/numba/helper_cache.py) are treated as compiled here:
    read for a function being compiled, their machine code waits too."""
    _loading.nested = linking.depth() >= 1
    try:
        yield
    finally:
        _loading.nested = False


def _finalize(original):
    """`original`, noting first whether the library is finalized inside another compile."""

    def finalize(library):
        library._transpile_nested = linking.depth() >= 2
        return original(library)

    return finalize


def _finalize_specific(original):
    """`original`, then the deferred callees of a recursion it leaves unresolved and the environments it defines."""

    def finalize_specific(library):
        original(library)
        for name in list(library._codegen._rtlinker._unresolved):  # a recursion's callee defined by a deferred one
            if name in _deferred_symbols:
                make_machine_code(_deferred_symbols[name])
        for gv in library._final_module.global_variables:
            if gv.name in _environments and not gv.is_declaration:
                library._codegen.set_env(gv.name, _environments[gv.name])

    return finalize_specific


def _compiling_first(original):
    """`original`, after making the library's machine code if it waits."""

    def method(library, *args, **kwargs):
        library._ensure_finalized()
        make_machine_code(library)
        return original(library, *args, **kwargs)

    return method


def _get_executable(original):
    """`original`, or for a library whose machine code waits, an entry point calling the trampoline."""

    def get_executable(context, library, fndesc, env):
        library._ensure_finalized()
        if not getattr(library, "_transpile_deferred", False):
            return original(context, library, fndesc, env)
        _environments[context.get_env_name(fndesc)] = env
        doc = f"compiled wrapper for {fndesc.qualname!r} (machine code on first call)"
        name = fndesc.qualname.split(".")[-1]
        entry = _trampoline_address(library.codegen)
        lazy = _dynfunc.make_function(fndesc.lookup_module(), name, doc, entry, env, (library,))
        _entries[id(lazy.__self__)] = _Entry(library, fndesc, env, lazy)
        return lazy

    return get_executable


def _set_env(original):
    """`original`, or where no machine code defines the environment's symbol yet (a library read from a disk cache
    for a caller, its machine code waiting), the environment kept until some machine code does."""

    def set_env(jit, env_name, env):
        if jit._engine.get_global_value_address(env_name):
            return original(jit, env_name, env)
        _environments[env_name] = env

    return set_env


def _first_call(closure, args, kws=None):
    """The trampoline's target: the real wrapper of the entry point whose closure is `closure`, called."""
    entry = _entries[id(closure)]
    if entry.real is None:
        with global_compiler_lock:
            if entry.real is None:
                fnptr = entry.library.get_pointer_to_function(entry.fndesc.llvm_cpython_wrapper_name)
                module, name = entry.fndesc.lookup_module(), entry.fndesc.qualname.split(".")[-1]
                doc = f"compiled wrapper for {entry.fndesc.qualname!r}"
                entry.real = _dynfunc.make_function(module, name, doc, fnptr, entry.env, (entry.library,))
    return entry.real(*args, **(kws or {}))


def _trampoline_address(jit) -> int:
    """A C function with a Python wrapper's signature that calls `_first_call(closure, args[, kws])`."""
    if not _trampoline:
        pyobj = llvmir.IntType(8).as_pointer()
        module = llvmir.Module("transpile_lazy_entry")
        call = llvmir.Function(
            module, llvmir.FunctionType(pyobj, [pyobj], var_arg=True), "PyObject_CallFunctionObjArgs"
        )
        entry = llvmir.Function(module, llvmir.FunctionType(pyobj, [pyobj] * 3), "transpile_lazy_entry")
        builder = llvmir.IRBuilder(entry.append_basic_block())
        target = builder.inttoptr(llvmir.Constant(llvmir.IntType(64), id(_first_call)), pyobj)
        builder.ret(builder.call(call, [target, *entry.args, pyobj(None)]))
        library = jit.create_library("transpile_lazy_entry")
        library.add_ir_module(module)
        _trampoline.append(library.get_pointer_to_function("transpile_lazy_entry"))
        _trampoline.append(library)  # kept alive
    return _trampoline[0]


def install():
    """Defer the machine code of libraries finalized inside another compile (idempotent)."""
    if not linking.LAZY_CODE or getattr(codegen.CPUCodeLibrary.finalize, "__transpile_lazy__", False):
        return
    linking.count_compiles()
    patches = [
        (codegen.CPUCodeLibrary, "finalize", _finalize),
        (codegen.CPUCodeLibrary, "_finalize_final_module", _finalize_final_module),
        (codegen.JITCodeLibrary, "_finalize_specific", _finalize_specific),
        (codegen.JITCodeLibrary, "get_pointer_to_function", _compiling_first),
        (codegen.CodeLibrary, "_get_compiled_object", _compiling_first),
        (cpu.CPUContext, "get_executable", _get_executable),
        (codegen.JITCPUCodegen, "set_env", _set_env),
    ]
    for cls, name, wrap in patches:
        patched = wrap(getattr(cls, name))
        patched.__transpile_lazy__ = True
        setattr(cls, name, patched)
