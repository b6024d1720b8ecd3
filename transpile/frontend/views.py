"""Writes through views become writes into their base: NumPy's view semantics, made explicit in the normal form.

After `v = y[1:]`, NumPy's `v += 1.0` and `v[0] = 2.0` change `y`, and a later `y[2] = 5.0` changes what `v` shows.
Transforms follow values, not memory, so this pass rewrites every write that another live name can see into a
write into the array itself, then binds again the names that view it (analyses/aliasing.py says which):

    v = y[1:]                   v = y[1:]                 row = out[i]            row = out[i]
    v += 1.0            ->      _t1 = v + 1.0             row[j] = s       ->     out[i, j] = s
    return np.sum(y)            y[1:] = _t1
                                return np.sum(y)

A view that only rearranges its base (`y.T`, `np.flip(y)`) writes a new value back by its VJP, the inverse
permutation.  `y[i]` is a row of a 2-D array but a number of a 1-D one, and `s += 1.0` binds a number anew: such
writes and views run under `if rt.is_array(...)`.  Where the analysis cannot tell what a name is a view of, the
write raises a TranspileError at its line.  Modules transpile generated are left as they are: they write only into
arrays nothing else sees, and their tapes keep arrays by reference on purpose.
"""

from __future__ import annotations

import os

import gast

from .. import naming
from ..analyses.aliasing import Aliasing, Vague, component_kinds, itself, summaries
from ..analyses.containers import Containers
from ..codegen.emit import is_generated
from ..errors import TranspileError
from ..primitives import registry
from ..transforms.common import assign, call, dotted
from ..transforms.templates import instantiate
from .nodes import copy_tree, name_nodes
from .program import const, index_value, name

_HINT = "write into the array itself (e.g. `y[1:] += 1.0` instead of `v = y[1:]; v += 1.0`), or make `{0}` a copy"


def resolve_views(program):
    """Rewrite, in place, every user function of `program` so that no write goes through a view."""
    found = program.views = summaries(program, lambda fn: is_generated(fn.filename))
    for fn in program.functions.values():
        if fn is not None and not is_generated(fn.filename):
            _Rewriter(fn, Aliasing(fn, found), found, Containers(fn, found)).run()


class _Rewriter:
    def __init__(self, fn, aliasing, found, containers):
        self.fn = fn
        self.alias = aliasing
        self.summaries = found
        self.containers = containers
        self.taken = {n.id for s in fn.body for n in name_nodes(s)} | set(fn.params)
        self.counter = 0

    def run(self):
        self.fn.body = self._block(self.fn.body)

    def _block(self, stmts):
        out = []
        for stmt in stmts:
            for field in ("body", "orelse"):
                if isinstance(stmt, (gast.If, gast.For, gast.While)):
                    setattr(stmt, field, self._block(getattr(stmt, field)))
            if isinstance(stmt, gast.Assign):
                self._check_container_change(stmt)
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
                out.extend(self._write(stmt, stmt.targets[0].value.id))
            elif isinstance(stmt, gast.Assign) and getattr(stmt, "in_place", False):
                out.extend(self._write(stmt, stmt.targets[0].id))
            else:
                if isinstance(stmt, gast.Assign) and getattr(stmt.value, "callee", None) is not None:
                    self._check_call(stmt)
                out.append(stmt)
        return out

    # ------------------------------------------------------------------ what a write changes
    def error(self, stmt, message, hint):
        raise TranspileError(message, self.fn.location(stmt), hint)

    def _seen_by(self, stmt, objects, exclude):
        """The names live after `stmt`, other than `exclude`, that may refer to one of `objects`."""
        state = self.alias.before[id(stmt)]
        return sorted(
            m
            for m in self.alias.live_after[id(stmt)]
            if m not in exclude and objects & {obj for obj, _ in state.get(m, ())}
        )

    def _check_container_change(self, stmt):
        """A list or dict changed in place (`xs.append(x)`, `d[k] = v`, `xs += ys`) is a new one in the normal form,
        which is NumPy's semantics only if no other name sees the old one."""
        changed = self.containers.changed(stmt)
        if changed is None:
            return
        name, containers = changed
        hint = f"build `{name}` completely before another name refers to it, or give that name a copy: `{name}.copy()`"
        if not containers:
            self.error(
                stmt,
                f"`{name}` is changed in place, but it was not built here (a function's argument, an item of "
                "another container), and transpile cannot tell which other names see it",
                f"build a new list or dict here (e.g. `{name} = {name} + [x]`, `{name} = {{**{name}, key: x}}`)",
            )
        others = self.alias.live_after[id(stmt)] - {name, stmt.targets[0].id}
        seen = self.containers.sharing(stmt, containers, others)
        if seen:
            self.error(
                stmt,
                f"`{name}` is changed in place, and `{seen[0]}` refers to it too (or to a tuple, list or dict "
                f"holding it); transpile changes a new copy of `{name}`, which `{seen[0]}` would not see",
                hint,
            )

    def _check_call(self, stmt):
        """A call of a function that writes into an argument in place (`a += 1.0` on an array) changes the caller's
        array; the generated code does not, so that array must be seen by no one after the call."""
        rhs = stmt.value
        callee = self.summaries[rhs.callee]
        objects = [
            {obj for obj, _ in self.alias.refs(stmt, arg.id)} if isinstance(arg, gast.Name) else set()
            for arg in rhs.args
        ]
        for position in sorted(callee.mutates):
            others = set().union(*(objs for k, objs in enumerate(objects) if k != position))
            if objects[position] & others:
                self.error(
                    stmt,
                    f"`{rhs.callee}` writes into its argument {position + 1} in place, and this call passes the same "
                    "array (or a view of it) as another argument, which would see the write",
                    "pass a copy (`.copy()`) as one of them",
                )
            seen = self._seen_by(stmt, objects[position], {stmt.targets[0].id})
            if seen:
                self.error(
                    stmt,
                    f"`{rhs.callee}` writes into its argument {position + 1} in place (an augmented assignment to "
                    f"an array argument), which `{seen[0]}` sees after this call; transpile does not follow that write",
                    "return the new value from the function instead of changing its argument "
                    "(e.g. `a = a + 1.0` and `return a`), or pass it a copy",
                )

    def _write(self, stmt, written):
        """The statements for `stmt`, a write into the array `written` holds (`written[index] = v`, or
        `written op= v`, which desugar marked `in_place` after computing the new value)."""
        setitem = isinstance(stmt.targets[0], gast.Subscript)
        refs = itself(self.alias.refs(stmt, written))
        objects = {obj for obj, _ in refs}
        seen = self._seen_by(stmt, objects, {written})
        outside = sorted(obj for obj in objects if obj[0] in ("param", "global"))
        if outside:
            return self._write_outside(stmt, written, outside[0], objects, seen, setitem)
        if not seen:
            return [stmt]  # nothing else sees the array: the write (or a new array for `op=`) is all there is
        obj, path = self._exact(stmt, written, refs, written)
        if any(self.alias.steps[sid].kind == "readonly" for sid in path):
            self.error(
                stmt,
                f"`{written}` is a read-only view: NumPy refuses to write into it",
                f"make `{written}` a copy with `.copy()`",
            )
        paths = {m: self._exact(stmt, m, self.alias.refs(stmt, m), written)[1] for m in seen}
        holder = written if not path else self._holder(stmt, obj)
        if holder is None:
            self.error(
                stmt,
                f"the array `{written}` is a view of has no name here any more (its name was bound again), yet "
                f"`{seen[0]}` sees it; transpile cannot write into it",
                "write into the array before binding its name again, or make the views copies with `.copy()`",
            )
        if path and written in self.alias.live_after[id(stmt)]:
            paths[written] = path
        paths.pop(holder, None)
        index = stmt.targets[0].slice if setitem else None
        if index is not None and (component_kinds(index, {}) == ["ellipsis"] or _is_full_slice(index)):
            index = None  # `v[...] = u` and `v[:] = u` write all of v
        out = []
        self._write_level(holder, path, len(path), index, stmt.value, stmt, out, {len(path): name(written)})
        # `v op= u` writes into v when v is an array, but binds v to a new number when it is one (`row = out[i]`
        # of a 1-D out, `s = np.sum(x)`): unless a view of it or what made it proves it an array, the write is
        # under a test, which says where v may be a 0-d array (vmap cannot tell one from a number)
        zero_d = self.alias.made(obj).zero_d if not path else ""
        number = not setitem and (self._maybe_number(path) or not path) and not self._proven_array(path, paths)
        number = number and zero_d != "array"
        out.extend(self._bind_again(holder, paths, stmt, {written} if setitem or number else set()))
        if not number:
            return out
        test_block = []
        where = self.fn.location(stmt)
        at = const(f"{os.path.basename(where.filename)}:{where.lineno}: `{written}` may be a 0-d array")
        template = "rt.is_array(v, at)" if zero_d == "either" else "rt.is_array(v)"
        test = self._flatten(instantiate(template, {"v": name(written), "at": at}), stmt, test_block)
        return test_block + [gast.copy_location(gast.If(test=test, body=out, orelse=[stmt]), stmt)]

    def _write_outside(self, stmt, written, source, objects, seen, setitem):
        """A write into an array from outside the function (`source`: an argument or a value of its module): an
        error, except `v op= u` which, as for a number, binds `v` anew when nothing else sees the array."""
        kind, label = source
        what = f"the argument `{label}`" if kind == "param" else f"`{label}`, a value of the function's module"
        message = f"`{written}` may be a view of {what}: writing into it would change data from outside the function"
        if seen:
            message += f", which `{seen[0]}` sees here (transpile binds `{written}` to a new array instead)"
        hint = f"write `{written} = {written} + ...` to make a new array, or copy it first: `{label}.copy()`"
        if setitem or (seen and self._views_prove_array(stmt, [written, *seen], objects)):
            self.error(stmt, message, hint)
        if not seen:
            return [stmt]
        # binding a number anew is what NumPy does; an array would have to change outside: that raises when it runs
        where = self.fn.location(stmt)
        text = f"{os.path.basename(where.filename)}:{where.lineno}: {message}; {hint}"
        out = []
        test = self._flatten(instantiate("rt.is_array(v)", {"v": name(written)}), stmt, out)
        error = gast.copy_location(gast.Raise(exc=call("ValueError", [const(text)]), cause=None), stmt)
        return out + [gast.copy_location(gast.If(test=test, body=[error], orelse=[]), stmt), stmt]

    def _exact(self, stmt, who, refs, written):
        """The one (object, path) `who` refers to at `stmt`, or a TranspileError saying why there is none."""
        effect = "goes through it" if who == written else f"into `{written}` changes it"
        vague = sorted((path for _, path in refs if isinstance(path, Vague)), key=lambda p: p.why)
        if vague:
            self.error(
                stmt,
                f"transpile cannot tell which part of which array `{who}` sees ({vague[0].why}), and this write "
                f"{effect}",
                (vague[0].hint or _HINT).format(who),
            )
        if len(refs) != 1:
            self.error(
                stmt,
                f"`{who}` may be a view of different arrays, or of different parts of one, depending on the path "
                f"taken (a branch or a loop), and this write {effect}",
                _HINT.format(who),
            )
        ((obj, path),) = refs
        if obj[0] == "old":
            self.error(
                stmt,
                f"`{who}` is a view of an array made on an earlier trip of the loop, and this write {effect}",
                _HINT.format(who),
            )
        if self._maybe_number(path) and self.alias.steps[path[-1]].kind != "elem":
            self.error(
                stmt,
                f"transpile cannot tell whether `{who}` is a view or a copy of a number (integer indices give a "
                f"number when they index every axis), and this write {effect}",
                _HINT.format(who),
            )
        return obj, path

    def _maybe_number(self, path):
        """Whether the value at the end of `path` may be a number rather than a view: an all-integer index
        (`y[i]`) not followed by an index that needs an array."""
        for sid in reversed(path):
            step = self.alias.steps[sid]
            if step.kind == "elem":
                return True
            if step.needs_array:
                return False
        return False

    def _views_prove_array(self, stmt, names, objects):
        """Whether one of `names` is an array viewing one of `objects`: through an index that would raise on a
        number, and no integer index after it."""
        for m in names:
            for obj, path in self.alias.refs(stmt, m):
                kinds = [] if isinstance(path, Vague) or obj not in objects else [self.alias.steps[s] for s in path]
                last = next((step for step in reversed(kinds) if step.kind == "elem" or step.needs_array), None)
                if last is not None and last.kind != "elem":
                    return True
        return False

    def _proven_array(self, path, paths):
        """Whether the value at the end of `path` must be an array: another name views it through an index that
        would raise on a number (`v = row[1:]`)."""
        return any(
            len(other) > len(path) and other[: len(path)] == path and self.alias.steps[other[len(path)]].needs_array
            for other in paths.values()
        )

    def _holder(self, stmt, obj):
        """A name bound to the array `obj` itself at `stmt` (a user's name rather than a temporary), or None."""
        state = self.alias.before[id(stmt)]
        names = [m for m, refs in state.items() if refs == frozenset({(obj, ())})]
        return min(names, key=lambda m: (m.startswith("_"), m), default=None)

    # ------------------------------------------------------------------ emitting the rewritten write
    def _fresh(self):
        while True:
            self.counter += 1
            candidate = f"{naming.TEMP_PREFIX}{self.counter}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate

    def _emit(self, out, target, rhs, origin):
        out.append(assign(target, rhs, origin))
        return name(target)

    def _setitem(self, array, index, value, origin):
        node = gast.Assign(
            targets=[gast.Subscript(value=name(array), slice=index, ctx=gast.Store())], value=value, type_comment=None
        )
        node.prim = registry.by_name("setitem")
        node.bound = {"x": name(array), "idx": index_value(index), "v": value}
        return gast.copy_location(node, origin)

    def _write_level(self, holder, path, level, index, value, origin, out, levels):
        """Write `value` into the view at `level` of `path` (0: the holder itself) at `index` (None: all of it);
        `levels` holds the names of views already made (the written name is the last level)."""
        if level == 0:
            out.append(self._setitem(holder, copy_tree(index) if index is not None else const(...), value, origin))
            return
        step = self.alias.steps[path[level - 1]]
        rhs = step.stmt.value
        if step.getitem and index is None:
            return self._write_level(holder, path, level - 1, copy_tree(rhs.slice), value, origin, out, levels)
        basic = {"int", "slice", "newaxis", "ellipsis"}
        if step.getitem and step.kind == "elem" and set(component_kinds(index, self.alias.index_kinds)) <= basic:
            parts = _components(copy_tree(rhs.slice)) + _components(copy_tree(index))
            composed = gast.Tuple(elts=parts, ctx=gast.Load())
            return self._write_level(holder, path, level - 1, composed, value, origin, out, levels)
        if not step.getitem and index is None:  # a permutation of its base: its VJP puts a value back in place
            prim = rhs.prim
            mapping = {p: v for p, v in rhs.bound.items() if not isinstance(v, tuple)}
            mapping[step.base] = self._level(holder, path, level - 1, origin, out, levels)
            mapping["g"] = value
            back = self._flatten(instantiate(prim.vjp[step.base], mapping), origin, out)
            return self._write_level(holder, path, level - 1, None, back, origin, out, levels)
        # any other write into a part of a view: copy the view, write into the copy, write the copy back
        current = self._level(holder, path, level, origin, out, levels)
        copied = call("rt.copy", [current])
        copied.prim, copied.bound = registry.by_path("rt.copy"), {"x": current}
        updated = self._emit(out, self._fresh(), copied, origin)
        out.append(self._setitem(updated.id, copy_tree(index), value, origin))
        self._write_level(holder, path, level, None, updated, origin, out, levels)

    def _level(self, holder, path, level, origin, out, levels):
        """A name holding the view at `level` of `path` before the write: one bound to it already, or one made from
        the holder."""
        if level == 0:
            return name(holder)
        obj = next(iter(self.alias.refs(origin, holder)))[0]
        bound = [m for m, refs in self.alias.before[id(origin)].items() if refs == frozenset({(obj, path[:level])})]
        if level not in levels and bound:
            levels[level] = name(min(bound, key=lambda m: (m.startswith("_"), m)))
        if level not in levels:
            base = self._level(holder, path, level - 1, origin, out, levels)
            levels[level] = self._emit(out, self._fresh(), self._replay(path[level - 1], base), origin)
        return levels[level]

    def _bind_again(self, holder, paths, origin, arrays):
        """Statements binding each name of `paths` again to its view of the (written) holder, shorter paths first so
        that longer ones start from them; a view that may be a number is bound again only if it is an array (as the
        names in `arrays` are known to be)."""
        out = []
        made = {(): name(holder)}
        for m, path in sorted(paths.items(), key=lambda item: (len(item[1]), item[0])):
            prefix = max((p for p in made if p == path[: len(p)]), key=len)
            block, base = [], made[prefix]
            for depth in range(len(prefix), len(path)):
                target = m if depth == len(path) - 1 else self._fresh()
                base = self._emit(block, target, self._replay(path[depth], base), origin)
                if not self._maybe_number(path[: depth + 1]):
                    made[path[: depth + 1]] = base
            if not path:
                self._emit(block, m, name(holder), origin)
            if self._maybe_number(path) and m not in arrays:
                test = self._flatten(instantiate("rt.is_array(v)", {"v": name(m)}), origin, out)
                block = [gast.copy_location(gast.If(test=test, body=block, orelse=[]), origin)]
            out.extend(block)
        return out

    def _replay(self, sid, base):
        """The right-hand side of view statement `sid`, taken of `base` instead of its own base."""
        step = self.alias.steps[sid]
        rhs = step.stmt.value
        old = rhs.bound[step.base]
        new = copy_tree(rhs)
        new.bound = {p: base if v is old else copy_tree(v) for p, v in rhs.bound.items()}
        if isinstance(rhs, (gast.Subscript, gast.Attribute)):
            new.value = base
        else:
            new.args = [base if a is old else b for a, b in zip(rhs.args, new.args)]
            for kw, new_kw in zip(rhs.keywords, new.keywords):
                if kw.value is old:
                    new_kw.value = base
        return new

    def _flatten(self, expr, origin, out):
        """An atom for the (rule template) expression `expr`, its calls and operators bound to temporaries."""
        if isinstance(expr, (gast.Name, gast.Constant)):
            return expr
        if isinstance(expr, gast.Call):
            prim = registry.by_path(dotted(expr.func))
            args = [self._flatten(a, origin, out) for a in expr.args]
            kwargs = {k.arg: self._flatten(k.value, origin, out) for k in expr.keywords}
            prim, (bound, _, _) = prim.binding(args, kwargs)
            bound.update({p: const(v) for p, v in prim.defaults.items() if p not in bound})
            node = gast.Call(
                func=expr.func, args=args, keywords=[gast.keyword(arg=k, value=v) for k, v in kwargs.items()]
            )
        else:  # an operator: `-k` in np.rot90's rule
            unary = isinstance(expr, gast.UnaryOp)
            syntax = ("UnaryOp" if unary else "BinOp", type(expr.op).__name__)
            prim = registry.by_name(next(n for n, written in registry.OPERATOR_SYNTAX.items() if written == syntax))
            atoms = [self._flatten(o, origin, out) for o in ([expr.operand] if unary else [expr.left, expr.right])]
            bound = dict(zip(prim.params, atoms))
            node = gast.UnaryOp(op=expr.op, operand=atoms[0]) if unary else gast.BinOp(atoms[0], expr.op, atoms[1])
        node.prim, node.bound = prim, bound
        return self._emit(out, self._fresh(), node, origin)


def _components(index):
    return list(index.elts) if isinstance(index, gast.Tuple) else [index]


def _is_full_slice(index):
    return isinstance(index, gast.Slice) and index.lower is None and index.upper is None and index.step is None
