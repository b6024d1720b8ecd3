"""Tuples, lists and dicts built, unpacked and indexed inside a function, and Python builtins on them."""

import builtins

import gast

import runtime

from .registry import by_name, defhelper, defprim


def _literal_items(node):
    """The items of a tuple or list written out (`(x, y)`, `[x, y]`), or None for anything else."""
    if isinstance(node, (gast.Tuple, gast.List)) and not any(isinstance(e, gast.Starred) for e in node.elts):
        return list(node.elts)
    return None


def _built(node, like):
    """`node`, a new expression standing for the call `like`, located at it (its operands keep their places)."""
    return gast.copy_location(node, like)


def _sequence_call(kind, helper):
    """`tuple(...)` / `list(...)` calls: of a sequence written out, the literal (`list((x, y))` is `[x, y]`); of
    any other value, a conversion (`helper`, whose rules follow the value: a tuple's, a list's or an array's)."""

    def canonical(args, keywords, error):
        if keywords or len(args) > 1:
            error((keywords[0].value if keywords else args[1]), f"`{kind.__name__}()` takes at most one argument")
        items = _literal_items(args[0]) if args else []
        if items is not None:
            node = gast.Tuple(elts=items, ctx=gast.Load()) if kind is tuple else gast.List(elts=items, ctx=gast.Load())
            return _built(node, args[0]) if args else node
        return by_name(helper), args, {}

    return canonical


def _dict_call(args, keywords, error):
    """`dict(a=x, b=y)` and `dict([("a", x), ("b", y)])` (pairs written out, constant keys) are the literal
    `{"a": x, "b": y}`; `dict(d)` of anything else (a dict, pairs not written out) is rt.to_dict(d)."""
    if len(args) > 1:
        error(args[1], "`dict()` takes at most one argument besides keyword arguments")
    written = _literal_items(args[0]) if args else []
    pairs = [None] if written is None else [_literal_items(pair) for pair in written]
    if not all(kv is not None and len(kv) == 2 and isinstance(kv[0], gast.Constant) for kv in pairs):
        if keywords:
            error(
                keywords[0].value,
                "`dict(d, key=value)` is not supported",
                "copy with `e = dict(d)`, then set `e[key] = value`",
            )
        return by_name("rt.to_dict"), args, {}
    keys = [kv[0] for kv in pairs] + [gast.Constant(value=k.arg, kind=None) for k in keywords]
    values = [kv[1] for kv in pairs] + [k.value for k in keywords]
    return gast.Dict(keys=keys, values=values)


defprim(
    "make_tuple",
    tuple,
    params=[],
    varargs="items",
    container=True,
    tangent_zeros="items",
    view="items",
    vjp={"items": "rt.get(g, i)"},
    jvp={"items": "ts"},
    canonical=_sequence_call(tuple, "rt.to_tuple"),
)
defprim(
    "make_list",
    list,
    params=[],
    varargs="items",
    container=True,
    tangent_zeros="items",
    view="items",
    as_index="array",
    vjp={"items": "rt.get(g, i)"},
    jvp={"items": "rt.as_list(ts)"},
    canonical=_sequence_call(list, "rt.to_list"),
)
defprim(
    "make_dict",
    dict,
    params=[],
    varargs="items",
    container=True,
    view="items",
    vjp={"items": "rt.get(g, i)"},
    jvp={"items": "rt.as_dict(keys, ts)"},
    canonical=_dict_call,
)
defprim(
    "unpack",
    object(),
    params=["x"],
    container=True,
    view="items",
    vjp={"x": "rt.pack_like(x, g)"},
    jvp={"x": "rt.split_tangent(t, n)"},
)
defprim(
    "len",
    builtins.len,
    batch="rt.batched_len(x)",
    batch_same=True,
    path="len",
    params=["x"],
    nondiff=True,
    as_index="int",
    python_number=True,
)
defprim(
    "range",
    builtins.range,
    path="range",
    params=[],
    varargs="bounds",
    nondiff=True,
    batch="rt.batched_range(bounds)",
    loop_trips=("bounds",),
)
defprim("min_int", runtime.min_int, path="rt.min_int", params=[], varargs="values", nondiff=True, as_index="int")
defprim(
    "list_append",
    runtime.list_append,
    path="rt.list_append",
    params=["items", "value"],
    container=True,
    view="adds",
    vjp={"items": "rt.get(g, slice(None, -1))", "value": "rt.get(g, -1)"},
    methods=["list.append"],
    jvp={
        "items": "rt.list_append(t, 0.0)",
        "value": "rt.list_append(rt.zero_tangents(items), t)",
        "*": "rt.list_append(t_items, t_value)",
    },
    batch="rt.list_append(items, value)",  # a batched list is a list of batched items
    batch_broadcast=("items", "value"),
)
defprim("isinstance", builtins.isinstance, path="isinstance", params=["obj", "cls"], nondiff=True)
defprim("int", builtins.int, path="int", params=["x"], nondiff=True, as_index="int", python_number=True)
defprim("bool", builtins.bool, path="bool", params=["x"], nondiff=True)
defprim(
    "float",
    builtins.float,
    path="float",
    params=["x"],
    vjp={"x": "rt.unbroadcast(g, x)"},
    jvp={"x": "float(t)"},
    python_number=True,
)
defhelper(
    runtime.with_item,
    params=["container", "key", "value"],
    container=True,
    view="adds",
    structural=("key",),
    vjp={"container": "rt.without_item(g, key)", "value": "rt.get(g, key)"},
    jvp={"container": "rt.with_item_tangent(t, ans, key, 0.0)", "value": "rt.with_item_tangent(0.0, ans, key, t)"},
)
defhelper(
    runtime.without_item,
    params=["v", "key"],
    container=True,
    structural=("key",),
    vjp={"v": "rt.without_item(g, key)"},
    jvp={"v": "rt.without_item(t, key)"},
)
defhelper(
    runtime.with_item_tangent,
    params=["container_t", "like", "key", "value_t"],
    container=True,
    structural=("like", "key"),
    vjp={"container_t": "rt.without_item(g, key)", "value_t": "rt.get(g, key)"},
    jvp={
        "container_t": "rt.with_item_tangent(t, like, key, 0.0)",
        "value_t": "rt.with_item_tangent(0.0, like, key, t)",
    },
)
# `xs[a:b] = values` on a list made here: a new list (of another length, maybe) in the name of the old one
defhelper(
    runtime.list_setslice,
    params=["items", "key", "values"],
    container=True,
    view="adds",
    structural=("key",),
    vjp={
        "items": "rt.list_setslice_items_vjp(g, items, key, values)",
        "values": "rt.list_setslice_values_vjp(g, items, key, values)",
    },
    jvp={
        "items": "rt.list_setslice(t, key, rt.zero_tangents(values))",
        "values": "rt.list_setslice(rt.zero_tangents(items), key, t)",
        "*": "rt.list_setslice(t_items, key, t_values)",
    },
    batch="rt.list_setslice(items, key, values)",
    batch_needs_same=("key",),
    batch_broadcast=("items", "values"),
)
for _vjp, _into in [
    (runtime.list_setslice_items_vjp, "rt.list_setslice(g, key, rt.zero_tangents(values))"),
    (runtime.list_setslice_values_vjp, "rt.list_setslice(rt.zero_tangents(items), key, g)"),
]:
    defhelper(
        _vjp,
        params=["v", "items", "key", "values"],
        container=True,
        structural=("items", "key", "values"),
        vjp={"v": _into},
        jvp={"v": f"rt.{_vjp.__name__}(t, items, key, values)"},
        batch=f"rt.{_vjp.__name__}(v, items, key, values)",
        batch_needs_same=("key",),
        batch_broadcast=("v",),
    )

# Iterating over a dict: `d.keys()`, `d.values()`, `d.items()` are lists (runtime/dicts.py) whose adjoints come
# back as dicts with d's keys; a key has no derivative.  (Compiled by Numba for dicts whose values share a type.)
defhelper(
    runtime.dict_key_list, params=["d"], nondiff=True, methods=["keys"], batch="rt.dict_key_list(d)", batch_same=True
)
defhelper(
    runtime.dict_value_list,
    params=["d"],
    container=True,
    view="shallow",
    methods=["values"],
    vjp={"d": "rt.dict_value_list_vjp(g, d)"},
    jvp={"d": "rt.dict_value_list_tangent(t)"},
    batch="rt.dict_value_list(d)",
)
defhelper(
    runtime.dict_item_list,
    params=["d"],
    container=True,
    view="items",
    methods=["items"],
    vjp={"d": "rt.dict_item_list_vjp(g, d)"},
    jvp={"d": "rt.dict_item_list_tangent(t)"},
    batch="rt.dict_item_list(d)",
)
defhelper(
    runtime.dict_value_list_tangent,
    params=["t"],
    container=True,
    vjp={"t": "rt.dict_value_list_vjp(g, t)"},
    jvp={"t": "rt.dict_value_list_tangent(t)"},
    batch="rt.dict_value_list_tangent(t)",
)
defhelper(
    runtime.dict_item_list_tangent,
    params=["t"],
    container=True,
    vjp={"t": "rt.dict_item_list_vjp(g, t)"},
    jvp={"t": "rt.dict_item_list_tangent(t)"},
    batch="rt.dict_item_list_tangent(t)",
)
defhelper(
    runtime.dict_value_list_vjp,
    params=["values_bar", "d"],
    container=True,
    structural=("d",),
    vjp={"values_bar": "rt.dict_value_list_tangent(g)"},
    jvp={"values_bar": "rt.dict_value_list_vjp(t, d)"},
    batch="rt.dict_value_list_vjp(values_bar, d)",
)
defhelper(
    runtime.dict_item_list_vjp,
    params=["items_bar", "d"],
    container=True,
    structural=("d",),
    vjp={"items_bar": "rt.dict_item_list_tangent(g)"},
    jvp={"items_bar": "rt.dict_item_list_vjp(t, d)"},
    batch="rt.dict_item_list_vjp(items_bar, d)",
)
# `x.name` on a local value that is not an array attribute: a field of a NamedTuple, or of a registered pytree
# object (runtime/pytree.py: a Fields dict inside transformed code). Its adjoint goes back to that field.
# (Checked through the transforms over pytree arguments: tests/transforms/test_pytree_arguments.py.)
defhelper(
    runtime.field,
    params=["x", "name"],
    container=True,
    view="view",
    structural=("name",),
    vjp={"x": "rt.add_field(acc, x, name, g)"},
    jvp={"x": "rt.field_tangent(t, x, name)"},
    batch="rt.field(x, name)",
)
