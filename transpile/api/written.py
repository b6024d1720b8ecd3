"""The standalone modules the command line writes: the user's file loaded, the expression built, entries described."""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass

from .. import __version__
from ..codegen import escape
from ..frontend.unwrap import read_function
from .catalog import KINDS


class CLIError(Exception):
    """A user error the command reports in one paragraph, with exit code 2."""


# ============================================================================ loading the user's file


def load_module(path):
    """Import FILE.py under its module name (its directory, or its package root's parent, on sys.path)."""
    if not os.path.exists(path):
        raise CLIError(f"{path}: no such file")
    if not path.endswith(".py") or not os.path.isfile(path):
        raise CLIError(f"{path}: not a Python file (expected FILE.py)")
    full = os.path.abspath(path)
    directory, filename = os.path.split(full)
    parts = [filename[:-3]]
    while os.path.exists(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
    module_name = ".".join(parts)
    if not escape.is_dotted_name(module_name):
        module_name = "transpile_user_" + escape.file_stem(parts[-1])
    existing = sys.modules.get(module_name)
    if existing is not None:
        if os.path.abspath(getattr(existing, "__file__", "") or "") == full:
            return existing, module_name
        raise CLIError(f"{path}: its module name `{module_name}` is already taken by {existing!r}; rename the file")
    if directory not in sys.path:
        sys.path.insert(0, directory)
    if len(parts) > 1:
        importlib.import_module(".".join(parts[:-1]))
    spec = importlib.util.spec_from_file_location(module_name, full)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module, module_name


def user_function(module, name, path):
    """The function, method or callable object `name` (dotted: `Loss.value`, `model.loss`) names in `module`."""
    from ..frontend.methods import as_function, bound_method
    from .unbound import is_unbound

    fn = module
    for part in name.split("."):
        fn = getattr(fn, part, None)
    if bound_method(fn) is not None:  # an object's method, a classmethod, a callable object
        return as_function(fn)
    if fn is not None and is_unbound(fn):
        owner = name.rpartition(".")[0]
        made = _no_argument_object(module, owner, path)
        if made is not None:  # a class built without arguments: its method, bound to a new object
            return as_function(getattr(made, name.rpartition(".")[2]))
        raise CLIError(
            f"`{name}` is a method, which needs an object of `{owner}` to read its attributes from, and `{owner}` "
            "takes arguments, so transpile cannot build one: name the method "
            f"of a module-level object of {path} (e.g. `{owner.lower()}_ = {owner}(...)` there, then "
            f"{path}:{owner.lower()}_.{name.rpartition('.')[2]}), or make it a @staticmethod"
        )
    if fn is None or not inspect.isfunction(read_function(fn) if callable(fn) else fn):
        defined = sorted(
            n for n, v in vars(module).items() if inspect.isfunction(v) and v.__module__ == module.__name__
        )
        what = "no function" if fn is None else "no plain Python function"
        raise CLIError(
            f"{path} has {what} named `{name}`"
            + (f" (functions defined there: {', '.join(defined)})" if defined else "")
        )
    return fn


def _no_argument_object(module, owner, path):
    """An object of the class `owner` names, built with no arguments, or None where its constructor needs some
    (or the name is no class)."""
    cls = module
    for part in owner.split("."):
        cls = getattr(cls, part, None)
    if not isinstance(cls, type):
        return None
    try:
        inspect.signature(cls).bind()
    except (TypeError, ValueError):
        return None
    from ..frontend.methods import made_object

    try:
        obj, new = made_object(module.__name__, owner, cls)
    except Exception as exc:
        raise CLIError(f"{path}: `{owner}()` raised {type(exc).__name__}: {exc}") from None
    if new:
        print(
            f"transpile: `{owner}` takes no arguments: transforming the method of an object `{owner}()` (the "
            "generated module builds one the same way)",
            file=sys.stderr,
        )
    return obj


# ============================================================================ building the module


@dataclass
class Built:
    text: str
    entry: str
    origins: dict  # line of `text` -> (the user's file, its line, the statement there)


def _normalized(argnums, nparams, fn_name):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    out = []
    for n in nums:
        if not -nparams <= n < nparams:
            raise CLIError(f"argnums {n} is out of range: `{fn_name}` takes {nparams} argument(s)")
        out.append(n % nparams)
    return out[0] if isinstance(argnums, int) else tuple(out)


def build(spec, module, module_name, path, command):
    """The standalone module text for a transform expression over functions of `module`."""
    from ..codegen import linemap, standalone
    from . import common

    leaf = spec.leaf()
    fn = user_function(module, leaf.name, path)
    api = _api_objects(spec, module, path)
    inner_text = spec.inner.text()
    origin = f"{os.path.basename(path)}:{leaf.name} (line {read_function(fn).__code__.co_firstlineno})"
    kind = KINDS[spec.kind]
    if kind.takes_primals:
        target = common.generated_function(api[id(spec.inner)])
        text, program, entry = primal_module(kind, spec, target, inner_text)
    elif spec.kind == "jit":
        import transpile as tp

        from ..backends.numba.module import numba_module_text

        program = tp.jit(api[id(spec.inner)]).__transpile_jit__.program()
        # without fusion: a file has no tp.jit to rerun a call without it; with Numba's disk cache, whether or not
        # transpile's own cache can be written, except where the file imports values from the user's module: Numba
        # compiles them in, and would keep the first ones after they change
        imports_values = any(cap.identity[0] == "name" for cap in program.captures.values())
        text = numba_module_text(program, {}, fuse=False, disk_cache=not imports_values)
        entry = _jit_entry(spec.inner, api, program.entry, fn)
    else:
        generated = api[id(spec)].__transpile__.generated()
        text, program = generated.text, generated.program
        text = linemap.ModuleText(text, linemap.module_origins(generated.module.__file__))
        entry = _transform_entry(spec, api[id(spec)], inner_text)
    written = standalone.standalone_text(
        text,
        program,
        entry,
        user_function=fn,
        module_name=module_name,
        origin=origin,
        command=command,
        version=__version__,
    )
    return Built(written, entry.name, linemap.carried(text, getattr(text, "origins", {}), written))


def _transform_entry(spec, transformed, inner_text):
    """How the header describes the entry of a transform's module."""
    transform = transformed.__transpile__
    program = transform.generated().program
    params = list(program.functions[program.entry].params)
    name = transform.entry_name(program.entry)
    return KINDS[spec.kind].written_entry(spec, transform, name, params, inner_text)


def _jit_entry(inner, api, entry_name, user_fn):
    """The entry of a compiled module: the inner expression's description, compiled by Numba."""
    from dataclasses import replace

    from ..codegen.standalone import Entry

    if inner.kind is None:
        params = list(inspect.signature(user_fn).parameters)
        return Entry(
            name=entry_name,
            title=f"`{inner.name}` compiled by Numba",
            returns=f"what `{inner.name}` returns.",
            params=params,
            call=f"the arguments of `{inner.name}`",
            annotations={p: p for p in params},
        )
    described = _transform_entry(inner, api[id(inner)], inner.inner.text())
    return replace(described, name=entry_name, title=described.title + ", compiled by Numba")


def _api_objects(spec, module, path):
    """Evaluate the expression with the API (`tp.grad(...)`); returns {id(spec node): transformed function}."""
    out = {}

    def rec(node):
        if node.kind is None:
            out[id(node)] = user_function(module, node.name, path)
            return out[id(node)]
        inner = rec(node.inner)
        if node.kind == "jit" or KINDS[node.kind].takes_primals:
            return None
        if node.kind == "vmap":
            kwargs = dict(node.keywords)
        else:
            kwargs = {"has_aux": node.has_aux}
            if node.argnums is not None:
                kwargs["argnums"] = node.argnums
        out[id(node)] = KINDS[node.kind].entry(inner, **kwargs)
        return out[id(node)]

    rec(spec)
    return out


def _default_mask(fn, params, argnums, fn_name):
    """Which parameters vjp and jvp differentiate: argnums, or every parameter not annotated int or bool."""
    if argnums is not None:
        nums = _normalized(argnums, len(params), fn_name)
        nums = (nums,) if isinstance(nums, int) else nums
        return tuple(i in nums for i in range(len(params)))
    annotations = getattr(read_function(fn), "__annotations__", {})
    return tuple(annotations.get(p) not in (int, bool, "int", "bool") for p in params)


def primal_module(kind, spec, fun, inner_text):
    """vjp and jvp: the module the API builds (forward + adjoint sweeps, or the tangent function) plus an entry."""
    from ..frontend.desugar import desugar_program
    from .common import Names

    program = desugar_program(fun, differentiated=True)
    fn = program.functions[program.entry]
    params = list(fn.params)
    mask = _default_mask(fun, params, spec.argnums, fn.qualname)
    if not any(mask):
        raise CLIError(f"no argument of `{fn.qualname}` to differentiate; choose them with --argnums")
    fresh = Names(params + [program.entry])
    text, entry = kind.written_module(program, fn, params, mask, fresh, spec.has_aux, inner_text)
    return text, program, entry
