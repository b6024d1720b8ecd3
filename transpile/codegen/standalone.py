"""Standalone modules: a generated module rewritten so that it runs, lints and reads without transpile.

`standalone_text(...)` takes a `Generated` (the module text the API imports, and the program it came
from) and returns the text the `transpile` command writes to a file:

- **standalone**: at run time it imports `math`, `numpy` and `runtime` only; every value the API
  would bind before each call (`program.captures`) becomes a real import from the user's module
  (`from model import W0`) or a module-level constant (`np_pi = np.pi`);
- **documented**: a header docstring says what is computed, with respect to which argument, from
  which file, how to regenerate it, the parameters and the return structure; the entry function's
  annotations mirror the original function's;
- **lint-clean and formatted**: imports are sorted by ruff's isort rules and the module laid out by
  `ruff format` (formatting.py), so that `ruff check` and `ruff format --check` with default settings
  pass; unused local bindings become `_` (the comments that copy source lines carry no lint
  directives: `emit.comment_text`);
- **deterministic**: no absolute paths, no cache key, no timestamps.
"""

from __future__ import annotations

import ast
import builtins
import re
import sys
import types
from dataclasses import dataclass, field

from runtime import syntax

from ..errors import Location, TranspileError
from ..frontend.methods import MADE_OBJECTS
from ..frontend.nodes import walk
from ..frontend.unwrap import read_function
from . import escape
from .formatting import LINE_WIDTH, format_text, sort_imports, wrap_docstrings

# ============================================================================ standalone modules


@dataclass
class Entry:
    """The entry function of an emitted module and how its header docstring describes it."""

    name: str  # the function a user calls, e.g. `grad_loss`
    title: str  # the docstring's first sentence, e.g. "Gradient of `loss` with respect to `params` (argument 0)"
    returns: str  # "Returns: ..." text
    params: list  # the entry function's parameters
    call: str = ""  # how the parameters relate to the original function's, e.g. "the arguments of `loss`"
    annotations: dict = field(default_factory=dict)  # entry parameter -> the original parameter it mirrors
    returns_like: object = None  # how to annotate the return: None, ("param", name), ("tuple", [...]) ...
    extra_text: str = ""  # source of functions to append (the entry of vjp and jvp modules)
    defaults: bool = True  # carry the original function's default argument values over to the entry


_DUMMY = re.compile(r"^(_+|_+\w*[^\W_])$")
_TYPING_BUILTINS = {
    "List": "list",
    "Dict": "dict",
    "Tuple": "tuple",
    "Set": "set",
    "FrozenSet": "frozenset",
    "Type": "type",
}


def _error(message, fn=None, hint=None):
    location = None
    if fn is not None:
        code = getattr(fn, "__code__", None)
        if code is not None:
            import linecache

            line = linecache.getline(code.co_filename, code.co_firstlineno)
            location = Location(code.co_filename, code.co_firstlineno, len(line) - len(line.lstrip()))
    return TranspileError(message, location, hint)


def _strip_generated_header(text):
    """The generated module's functions: from the first `def` to the end of its last statement (the cache key
    after it is no code)."""
    tree = syntax.parse(text)
    first = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))), None)
    if first is None:
        return ""
    lines = text.split("\n")
    start = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])])
    return "\n".join(lines[start - 1 : tree.body[-1].end_lineno]) + "\n"


# ---------------------------------------------------------------- captures become imports


class _Imports:
    """The import block of an emitted module, grouped so that import sorting is stable anywhere."""

    def __init__(self):
        self.stdlib = set()  # `import math`
        self.numpy = set()  # lines of the numpy block
        self.runtime = False
        self.other = set()  # other third-party straight imports, one block each
        self.from_imports = {}  # module -> {(name, asname)}
        self.constants = {}  # name -> expression text

    def import_module(self, module_name, alias):
        line = f"import {module_name}" if alias == module_name else f"import {module_name} as {alias}"
        root = module_name.split(".")[0]
        if root == "numpy":
            self.numpy.add(line)
        elif root in sys.stdlib_module_names:
            self.stdlib.add(line)
        else:
            self.other.add(line)

    def import_from(self, module_name, name, asname=None):
        self.from_imports.setdefault(module_name, set()).add((name, asname if asname != name else None))

    def text(self):
        """The import blocks, each sorted by ruff's isort rules later (`formatting.sort_imports`)."""
        blocks = []
        first = sorted(self.stdlib) + sorted(self.numpy)
        numpy_from = {m: n for m, n in self.from_imports.items() if m.split(".")[0] == "numpy"}
        first += [_from_import_line(m, numpy_from[m]) for m in sorted(numpy_from)]
        if first:
            blocks.append("\n".join(first))
        if self.runtime:
            blocks.append("import runtime as rt")
        blocks += sorted(self.other)
        for module_name in sorted(m for m in self.from_imports if m.split(".")[0] != "numpy"):
            blocks.append(_from_import_line(module_name, self.from_imports[module_name]))
        # each block after the first is sorted on its own: whether `runtime` or the user's module count as
        # first- or third-party depends on where ruff runs, and a split keeps either reading sorted
        out = "\n\n# isort: split\n".join(blocks)
        if self.constants:
            out += "\n\n" + "\n".join(f"{name} = {self.constants[name]}" for name in self._constant_order())
        return out

    def _constant_order(self):
        """Constants by name, each after the constants its value reads."""
        order, placed = [], set()
        pending = sorted(self.constants)
        while pending:
            for name in pending:
                reads = {n.id for n in walk(syntax.parse(self.constants[name], mode="eval")) if isinstance(n, ast.Name)}
                if not (reads & (set(self.constants) - placed - {name})):
                    break
            else:
                name = pending[0]  # a cycle cannot happen; keep going anyway
            order.append(name)
            placed.add(name)
            pending.remove(name)
        return order


def _from_import_line(module_name, members):
    names = sorted(f"{n} as {a}" if a else n for n, a in members)
    return f"from {module_name} import {', '.join(names)}"


def _modules_by_namespace():
    return {id(vars(m)): m for m in list(sys.modules.values()) if isinstance(m, types.ModuleType)}


def _numpy_path(name, obj):
    """`np.pi`, `np.float32`, ... for an object numpy exports (as `np_pi`, or under its own name), else None."""
    import numpy as np

    for attr in (name[3:] if name.startswith("np_") else None, getattr(obj, "__name__", None)):
        if attr and getattr(np, attr, _MISSING) is obj:
            return f"np.{attr}"
    return None


def _resolve_capture(name, cap, imports, namespaces, user_fn, depth=0):
    """Make capture `name` available in the emitted module: an import or a module-level constant."""
    import numpy as np

    identity = getattr(cap, "identity", None)
    if depth > 20 or identity is None:
        raise _error(
            f"`{name}` is a value from outside the transformed code that transpile cannot trace back to an import",
            user_fn,
            "make it a module-level constant of the file or pass it as an argument",
        )
    kind = identity[0]
    if kind == "name":
        globals_id, cell_id, dotted = identity[1:4]
        path = dotted.split(".")
        if cell_id != id(None) and len(identity) > 4:  # an attribute of the object a method is bound to
            raise _error(
                f"`{dotted}` is an attribute of an object no module-level name holds, which a standalone module "
                "cannot import",
                user_fn,
                "name the method of a module-level object (model.py:obj.method)",
            )
        if cell_id != id(None):
            raise _error(
                f"`{path[0]}` is a variable of an enclosing function (a closure), which a standalone module "
                "cannot import",
                user_fn,
                f"make `{path[0]}` a module-level name or pass it as an argument",
            )
        module = namespaces.get(globals_id)
        if module is None:
            raise _error(
                f"`{dotted}` comes from a namespace that is not an importable module",
                user_fn,
                "define the function and the values it uses in a module file",
            )
        inner = getattr(module, "__transpile_captures__", None)
        if inner is not None and path[0] in inner:  # a value a generated module was given: where it came from
            inner_name = path[0]
            if len(path) == 1 and inner_name == name:
                return _resolve_capture(name, inner[inner_name], imports, namespaces, user_fn, depth + 1)
            _resolve_capture(inner_name, inner[inner_name], imports, namespaces, user_fn, depth + 1)
            imports.constants[name] = ".".join(path)
            return None
        module_name = module.__name__
        if module_name == "__main__" or not escape.is_dotted_name(module_name):
            raise _error(
                f"`{dotted}` is a global of {module_name!r}, which is not importable by name",
                user_fn,
                "run transpile on a module file",
            )
        root_value = vars(module).get(path[0])
        made = MADE_OBJECTS.get(path[0]) if path[0] not in vars(module) else None
        if made is not None and made[1] == module_name:  # an object the command line built: built here too
            class_path = made[2]
            if not escape.is_dotted_name(class_path):
                raise _error(f"`{path[0]}` is an object of a class whose name cannot be written in Python", user_fn)
            imports.import_from(module_name, class_path.split(".")[0])
            imports.constants[path[0]] = f"{class_path}()"
            if name != path[0]:
                imports.constants[name] = dotted
            return None
        if isinstance(root_value, types.ModuleType) and not escape.is_dotted_name(root_value.__name__):
            raise _error(f"`{path[0]}` is a module whose name cannot be imported", user_fn)
        if isinstance(root_value, types.ModuleType):
            if root_value is np:
                imports.constants[name] = ".".join(["np", *path[1:]])
                return None
            imports.import_module(root_value.__name__, path[0])
            imports.constants[name] = dotted
            return None
        if len(path) == 1:
            imports.import_from(module_name, path[0], name)
        else:
            imports.import_from(module_name, path[0])
            imports.constants[name] = dotted
        return None
    if kind == "object":
        obj = cap.read()
        if getattr(builtins, name, None) is obj:
            return None
        if isinstance(obj, np.dtype):
            if obj.fields is not None:
                raise _error(f"`{name}` is a structured dtype, which a standalone module cannot spell", user_fn)
            imports.constants[name] = f"np.dtype({escape.literal(obj.str)})"
            return None
        path = _numpy_path(name, obj)
        if path is not None:
            imports.constants[name] = path
            return None
        if isinstance(obj, type) and getattr(builtins, obj.__name__, None) is obj:
            imports.constants[name] = obj.__name__
            return None
        module_name = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", "")
        importable = escape.is_dotted_name(module_name) and escape.is_dotted_name(qualname) and "." not in qualname
        if importable and getattr(sys.modules.get(module_name), qualname, None) is obj:
            imports.import_from(module_name, qualname, name)
            return None
        raise _error(
            f"`{name}` ({type(obj).__name__}) cannot be written as an import",
            user_fn,
            "use a module-level name or a NumPy attribute",
        )
    if kind == "default":
        value = cap.read()
        literal = escape.literal(value)
        if literal is None:
            raise _error(
                f"the default value of parameter `{identity[2]}` is a {type(value).__name__}, which a "
                "standalone module cannot spell",
                user_fn,
                "use a literal default (a number, string, tuple ...) or pass the argument explicitly",
            )
        imports.constants[name] = literal
        return None
    raise _error(f"`{name}` is a value transpile cannot trace back to an import", user_fn)


# ---------------------------------------------------------------- annotations


def _function_def(fn):
    """The `def` node of a user function, parsed from its source, or None."""
    import inspect
    import textwrap

    code = getattr(read_function(fn), "__code__", None)  # a code object: inspect.getsource unwraps functions
    try:
        source = textwrap.dedent(inspect.getsource(code))
        tree = syntax.parse(source)
    except (OSError, TypeError, SyntaxError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            return node
    return None


class _Annotations:
    """Annotations copied from the user's `def`, modernized (`X | None`, `list[...]`) and with their imports."""

    def __init__(self, fn, imports, taken, module_name):
        self.fn = fn
        self.imports = imports
        self.taken = taken
        self.module_name = module_name
        fdef = _function_def(fn) if fn is not None else None
        self.params = {}
        self.returns = None
        self.default_nodes = {}
        if fdef is not None:
            for arg in fdef.args.args:
                if arg.annotation is not None:
                    self.params[arg.arg] = arg.annotation
            self.returns = fdef.returns
            positional = fdef.args.args
            self.default_nodes = dict(
                zip([a.arg for a in positional[len(positional) - len(fdef.args.defaults) :]], fdef.args.defaults)
            )
        self.default_values = {}
        target = read_function(fn)
        code = getattr(target, "__code__", None)
        values = getattr(target, "__defaults__", None) or ()
        if code is not None and values:
            names = code.co_varnames[: code.co_argcount]
            self.default_values = dict(zip(names[len(names) - len(values) :], values))

    def default(self, name):
        """Source for the original default value of parameter `name`, or None."""
        if name not in self.default_values:
            return None
        value = self.default_values[name]
        if not isinstance(value, (list, dict, set)):  # mutable defaults would be flagged (B006)
            literal = escape.literal(value)
            if literal is not None:
                return literal
        node = self.default_nodes.get(name)
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.text(node)
        return None

    def resolve(self, node):
        """The object a name or attribute chain in an annotation refers to (or a sentinel)."""
        if isinstance(node, ast.Name):
            scope = getattr(self.fn, "__globals__", {})
            if node.id in scope:
                return scope[node.id]
            return getattr(builtins, node.id, _MISSING)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return _MISSING if base is _MISSING else getattr(base, node.attr, _MISSING)
        return _MISSING

    def convert(self, node):
        import typing

        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                return self.convert(syntax.parse(node.value, mode="eval").body)
            except SyntaxError:
                raise _Unsupported("string annotation") from None
        if isinstance(node, ast.Subscript):
            base = self.resolve(node.value)
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if base is typing.Optional:
                return ast.BinOp(self.convert(node.slice), ast.BitOr(), ast.Constant(None))
            if base is typing.Union:
                return _union([self.convert(i) for i in items])
            for typing_name, builtin_name in _TYPING_BUILTINS.items():
                if base is getattr(typing, typing_name):
                    return ast.Subscript(ast.Name(builtin_name), self.convert(node.slice))
            return ast.Subscript(self.convert(node.value), self.convert(node.slice))
        if isinstance(node, ast.Tuple):
            return ast.Tuple([self.convert(e) for e in node.elts])
        if isinstance(node, ast.List):
            return ast.List([self.convert(e) for e in node.elts])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return _union([self.convert(node.left), self.convert(node.right)])
        if isinstance(node, (ast.Name, ast.Attribute)):
            value = self.resolve(node)
            for typing_name, builtin_name in _TYPING_BUILTINS.items():
                if value is getattr(typing, typing_name):
                    return ast.Name(builtin_name)
            return self.import_root(node)
        if isinstance(node, ast.Constant) and (node.value is None or node.value is Ellipsis):
            return node
        raise _Unsupported(type(node).__name__)

    def import_root(self, node):
        import numpy as np

        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            raise _Unsupported("annotation")
        value = self.resolve(root)
        if value is _MISSING:
            raise _Unsupported("unknown name")
        if value is np:
            root.id = "np"
            return node
        if getattr(builtins, root.id, _MISSING) is value:
            return node
        if root.id in self.taken:
            raise _Unsupported("name clash")
        if isinstance(value, types.ModuleType):
            if not escape.is_dotted_name(value.__name__):
                raise _Unsupported("module name")
            self.imports.import_module(value.__name__, root.id)
            return node
        module_name = getattr(value, "__module__", None)
        if escape.is_dotted_name(module_name) and getattr(sys.modules.get(module_name), root.id, None) is value:
            self.imports.import_from(module_name, root.id)
        elif self.module_name:
            self.imports.import_from(self.module_name, root.id)
        else:
            raise _Unsupported("not importable")
        return node

    def text(self, node):
        """The annotation's source in the emitted module, or None when it cannot be carried over."""
        if node is None:
            return None
        saved = (
            set(self.imports.numpy),
            set(self.imports.stdlib),
            set(self.imports.other),
            {k: set(v) for k, v in self.imports.from_imports.items()},
        )
        try:
            return ast.unparse(self.convert(node))
        except _Unsupported:
            self.imports.numpy, self.imports.stdlib, self.imports.other, self.imports.from_imports = saved
            return None

    def param(self, name):
        return self.text(self.params.get(name))


_MISSING = object()


class _Unsupported(Exception):
    """An annotation the emitted module cannot carry over."""


def _union(items):
    """`A | B | ...`, without `int` beside `float` (or `float` beside `complex`), as ruff's PYI041 wants."""
    texts = [ast.unparse(i) for i in items]
    if "float" in texts or "complex" in texts:
        items = [i for i, t in zip(items, texts) if not (t == "int" or (t == "float" and "complex" in texts))]
    out = items[0]
    for item in items[1:]:
        out = ast.BinOp(out, ast.BitOr(), item)
    return out


# ---------------------------------------------------------------- lint fixes


def _rename_unused(text):
    """Bindings that are never read become `_` (ruff's F841 and RUF059 flag them otherwise)."""
    tree = syntax.parse(text)
    lines = text.split("\n")
    edits = []  # (line, start byte, end byte)
    for fdef in [n for n in walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        loaded, declared = set(), set()
        for node in walk(fdef):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
                loaded.add(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                declared.update(node.names)
        params = {a.arg for a in fdef.args.args}
        for node in _own_statements(fdef.body):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.For):
                targets = [node.target]
            for target in targets:
                simple = isinstance(target, ast.Name)
                for name_node in walk(target):
                    if not isinstance(name_node, ast.Name) or not isinstance(name_node.ctx, ast.Store):
                        continue
                    ident = name_node.id
                    if ident in loaded or ident in declared or ident in params or _DUMMY.match(ident):
                        continue
                    if simple and isinstance(node, ast.For):
                        continue  # an unused loop variable is not flagged by ruff's defaults
                    edits.append((name_node.lineno, name_node.col_offset, name_node.end_col_offset))
    for lineno, start, end in sorted(edits, reverse=True):
        raw = lines[lineno - 1].encode()
        lines[lineno - 1] = (raw[:start] + b"_" + raw[end:]).decode()
    return "\n".join(lines)


def _own_statements(body):
    """Statements of a function body, nested blocks included, nested functions excluded."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for attr in ("body", "orelse", "finalbody"):
            yield from _own_statements(getattr(stmt, attr, []) or [])


def _module_level_names(text):
    tree = syntax.parse(text)
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _undefined_names(text):
    """Names the module reads but never defines (a safety net: such a module would fail at run time)."""
    tree = syntax.parse(text)
    module_names = set(dir(builtins))
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module_names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            module_names.add(node.name)
        elif isinstance(node, ast.Assign):
            module_names.update(n.id for t in node.targets for n in walk(t) if isinstance(n, ast.Name))
    missing = set()

    def own_nodes(fdef):
        stack = list(fdef.body)
        while stack:
            node = stack.pop()
            yield node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                stack.extend(ast.iter_child_nodes(node))

    def check(fdef, enclosing):
        local = set(enclosing) | {a.arg for a in fdef.args.args}
        nested = []
        for node in own_nodes(fdef):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local.add(node.name)
                nested.append(node)
        for node in own_nodes(fdef):
            if (
                isinstance(node, ast.Name)
                and not isinstance(node.ctx, ast.Store)
                and node.id not in local
                and node.id not in module_names
            ):
                missing.add(node.id)
        for node in nested:
            check(node, local)

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            check(node, set())
    return sorted(missing)


def _loaded_names(text):
    return {n.id for n in walk(syntax.parse(text)) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}


# ---------------------------------------------------------------- the emitted module


def _annotate_entry(functions_text, entry, annotations):
    """Rewrite the entry function's `def` line with the original function's annotations."""
    tree = syntax.parse(functions_text)
    fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry.name), None)
    if fdef is None:
        return functions_text
    names = [arg.arg for arg in fdef.args.args]
    defaults = {}
    if entry.defaults:
        for name in reversed(names):  # only a trailing run of parameters can have defaults
            source_param = entry.annotations.get(name)
            value = annotations.default(source_param) if source_param else None
            if value is None:
                break
            defaults[name] = value
    params = []
    for name in names:
        source_param = entry.annotations.get(name)
        ann = annotations.param(source_param) if source_param else None
        param = f"{name}: {ann}" if ann else name
        if name in defaults:
            param += f" = {defaults[name]}" if ann else f"={defaults[name]}"
        params.append(param)
    returns = None
    like = entry.returns_like
    if like is not None:
        kind, value = like
        if kind == "param":
            returns = annotations.param(value)
        elif kind == "tuple":
            parts = [annotations.param(v) if isinstance(v, str) else annotations.text(v) for v in value]
            if all(parts):
                returns = f"tuple[{', '.join(parts)}]"
        elif kind == "returns":
            returns = annotations.text(annotations.returns)
        elif kind == "value_and":
            value_ann = annotations.text(annotations.returns)
            grad_kind, grad_value = value
            grad_ann = annotations.param(grad_value) if grad_kind == "param" else None
            if grad_kind == "tuple":
                parts = [annotations.param(v) for v in grad_value]
                grad_ann = f"tuple[{', '.join(parts)}]" if all(parts) else None
            if value_ann and grad_ann:
                returns = f"tuple[{value_ann}, {grad_ann}]"
    header = f"def {fdef.name}({', '.join(params)})" + (f" -> {returns}" if returns else "") + ":"
    lines = functions_text.split("\n")
    if fdef.body[0].lineno == fdef.lineno:
        return functions_text
    end = fdef.body[0].lineno - 1  # the comments just above the first statement name its line: they stay
    while end - 1 > fdef.lineno - 1 and lines[end - 1].lstrip().startswith("#"):
        end -= 1
    lines[fdef.lineno - 1 : end] = [header]
    return "\n".join(lines)


def standalone_text(generated_text, program, entry, *, user_function, module_name, origin, command, version):
    """The text of a standalone module for `entry` (see the module docstring).

    generated_text: a generated module (`Generated.text`, or `module_text(...)` for vjp and jvp);
    program: the frontend's Program it came from (its `captures` become imports);
    entry: an `Entry` describing the function users call;
    user_function: the user's original function (annotations are copied from it);
    module_name: the importable name of the user's module (captured globals are imported from it);
    origin: `file.py:function` as shown in the header; command: the command line that regenerates it.
    """
    functions = _strip_generated_header(generated_text)
    if entry.extra_text:
        functions = functions.rstrip("\n") + "\n\n\n" + entry.extra_text
    imports = _Imports()
    namespaces = _modules_by_namespace()
    for name in sorted(program.captures):
        _resolve_capture(name, program.captures[name], imports, namespaces, user_function)
    taken = _module_level_names(functions) | set(program.captures) | {"np", "rt", "math"}
    annotations = _Annotations(user_function, imports, taken, module_name)
    functions = _annotate_entry(functions, entry, annotations)
    functions = _rename_unused(functions)
    used = _loaded_names(functions) | _loaded_names("\n".join(imports.constants.values()) or "pass")
    if "math" in used:
        imports.stdlib.add("import math")
    if "np" in used:
        imports.numpy.add("import numpy as np")
    imports.runtime = "rt" in used
    if "numba" in used:
        imports.import_module("numba", "numba")
    if "jt" in used:
        imports.import_from("runtime", "numba", "jt")
    header = _header_docstring(entry, origin, command, version, program, imports, module_name)
    body = header + "\n\n" + imports.text() + "\n\n\n" + functions
    undefined = _undefined_names(body)
    if undefined:
        raise _error(
            "the generated code refers to " + ", ".join(f"`{n}`" for n in undefined) + ", defined nowhere "
            "in the module; this is a bug in transpile's code generation",
            user_function,
            "please report it with this function; the Python API would fail the same way at run time",
        )
    text_out = _shorten_comments(wrap_docstrings(format_text(sort_imports(body))))
    compile(text_out, "<standalone>", "exec")
    return text_out


def _shorten_comments(text):
    """Comments that copy long source lines are cut to the line width (E501, where a project enables it)."""
    out = []
    for line in text.split("\n"):
        if len(line) > LINE_WIDTH and line.lstrip().startswith("#"):
            line = line[: LINE_WIDTH - 3].rstrip() + "..."
        out.append(line)
    return "\n".join(out)


def _wrap(paragraph, width=84):
    import textwrap

    return textwrap.fill(escape.line(paragraph), width=width, break_long_words=False, break_on_hyphens=False)


_VALUE_OPTIONS = ("-o", "--output", "--argnums", "--in-axes", "--out-axes", "--axis-name", "--axis-size")


def _command_lines(command):
    """The command, split over lines with shell continuations when it is longer than the line width."""
    import shlex

    if len(command) + 4 <= LINE_WIDTH:
        return [f"    {escape.line(command)}"]
    words, units = shlex.split(command), []
    for word in words:  # an option stays on the line of its value
        if (
            units
            and units[-1].startswith("-")
            and " " not in units[-1]
            and not word.startswith("-")
            and units[-1] in _VALUE_OPTIONS
        ):
            units[-1] += " " + escape.line(shlex.quote(word))
        else:
            units.append(escape.line(shlex.quote(word)))
    lines, current = [], "   "
    for quoted in units:
        if len(current) + 1 + len(quoted) + 2 > LINE_WIDTH and current.strip():
            lines.append(current + " \\")
            current = "       "
        current += " " + quoted
    lines.append(current)
    return lines


def _header_docstring(entry, origin, command, version, program, imports, module_name):
    command_lines = _command_lines(command)
    parts = [_wrap(f"{entry.title}, generated by transpile {version} from {origin}."), ""]
    parts.append(_wrap("Do not edit by hand; regenerate it (or check that it is up to date by adding --check) with:"))
    parts += ["", *command_lines, ""]
    call = f"Call: {entry.name}({', '.join(entry.params)})"
    parts.append(_wrap(call + (f", {entry.call}." if entry.call else ".")))
    parts.append(_wrap("Returns: " + entry.returns))
    imported = sorted(a or m for m, a in imports.from_imports.get(module_name, ()))
    if module_name and imported:
        parts.append("")
        parts.append(
            _wrap(
                f"Module-level values of `{module_name}` are imported from it (it must be importable): "
                + ", ".join(f"`{n}`" for n in imported)
                + "."
            )
        )
    parts.append("")
    compiled = "import numba" in imports.other or ("numba", "jt") in imports.from_imports.get("runtime", ())
    needs = "NumPy" + (", Numba" if compiled else "")
    needs += " and the `runtime` package of transpile" + (f", and `{module_name}`" if imported else "")
    parts.append(_wrap(f"At run time this module needs {needs}; it never imports transpile itself."))
    value = "\n".join(parts)
    return escape.docstring(value, raw="\\" in value)  # a command's `\` line continuations read as they are
