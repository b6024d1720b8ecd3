"""Tuples, lists and dicts built, unpacked and indexed inside a function, and Python builtins on them."""

import builtins

import runtime

from .registry import defhelper, defprim

defprim(
    "make_tuple", tuple, params=[], varargs="items", container=True, vjp={"items": "rt.get(g, i)"}, jvp={"items": "ts"}
)
defprim(
    "make_list",
    list,
    params=[],
    varargs="items",
    container=True,
    vjp={"items": "rt.get(g, i)"},
    jvp={"items": "rt.as_list(ts)"},
)
defprim(
    "make_dict",
    dict,
    params=[],
    varargs="items",
    container=True,
    jit="jt.make_record(keys, items)",
    vjp={"items": "rt.get(g, i)"},
    jvp={"items": "rt.as_dict(keys, ts)"},
)
defprim(
    "unpack",
    object(),
    params=["x"],
    container=True,
    vjp={"x": "rt.pack_like(x, g)"},
    jvp={"x": "rt.split_tangent(t, n)"},
)
defprim("len", builtins.len, batch="rt.batched_len(x)", batch_same=True, path="len", params=["x"], nondiff=True)
defprim(
    "range", builtins.range, path="range", params=[], varargs="bounds", nondiff=True, batch="rt.batched_range(bounds)"
)
defprim("min_int", runtime.min_int, path="rt.min_int", params=[], varargs="values", nondiff=True)
defprim(
    "list_append",
    runtime.list_append,
    path="rt.list_append",
    params=["items", "value"],
    container=True,
    vjp={"items": "rt.get(g, slice(None, -1))", "value": "rt.get(g, -1)"},
    methods=["list.append"],
    jvp={
        "items": "rt.list_append(t, 0.0)",
        "value": "rt.list_append(rt.zero_tangents(items), t)",
        "*": "rt.list_append(t_items, t_value)",
    },
)
defprim("isinstance", builtins.isinstance, path="isinstance", params=["obj", "cls"], nondiff=True)
defprim("int", builtins.int, path="int", params=["x"], nondiff=True)
defprim("bool", builtins.bool, path="bool", params=["x"], nondiff=True)
defprim("float", builtins.float, path="float", params=["x"], vjp={"x": "rt.unbroadcast(g, x)"}, jvp={"x": "float(t)"})
defhelper(
    runtime.with_item,
    params=["container", "key", "value"],
    container=True,
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
