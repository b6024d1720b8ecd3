"""Python written around the math: list(x), tuple(x), dict(d), d.get(), x.item(), str.format and f-strings,
sorted(), and np.finfo / np.iinfo read at transform time."""

import builtins

import numpy as np

import runtime

from .registry import Example, defhelper, defprim, fold_at_transform

_SEQ = {"a": (3, 2)}

# list(x), tuple(x) of a value that is not written out (a tuple, a list, an array's rows, a dict's keys)
for _convert, _batched in [(runtime.to_list, runtime.to_list_batched), (runtime.to_tuple, runtime.to_tuple_batched)]:
    _kind = _convert.__name__[3:]
    defhelper(
        _convert,
        params=["x"],
        container=True,
        view="shallow",
        vjp={"x": "rt.sequence_vjp(g, x)"},
        jvp={"x": "rt.converted_tangent(t, x, ans)"},
        batch=f"rt.{_batched.__name__}(x)",
        examples=[
            Example(f"{_kind}(a)[2] - {_kind}((a[0], a[1]))[1]", _SEQ),
            Example(f"{_kind}(a)[1] * {_kind}(list(a))[0]", _SEQ),
        ],
    )
for _batched in (runtime.to_list_batched, runtime.to_tuple_batched):
    defhelper(
        _batched,
        params=["x", "axes=1"],
        batch=f"rt.{_batched.__name__}(x, axes + 1)",
        batch_needs_same=("axes",),
    )
defhelper(
    runtime.sequence_vjp,
    params=["bar", "x"],
    container=True,
    structural=("x",),
    vjp={"bar": "rt.converted_tangent(g, x, bar)"},
    jvp={"bar": "rt.sequence_vjp(t, x)"},
)
defhelper(
    runtime.converted_tangent,
    params=["t", "x", "ans"],
    container=True,
    structural=("x", "ans"),
    vjp={"t": "rt.sequence_vjp(g, x)"},
    jvp={"t": "rt.converted_tangent(t, x, ans)"},
)
defhelper(
    runtime.to_dict,
    params=["d"],
    container=True,
    view="shallow",
    vjp={"d": "rt.to_dict_vjp(g, d)"},
    jvp={"d": "rt.to_dict_tangent(t, d)"},
    batch="rt.to_dict(d)",
)
defhelper(
    runtime.to_dict_vjp,
    params=["bar", "d"],
    container=True,
    structural=("d",),
    vjp={"bar": "rt.to_dict_tangent(g, d)"},
    jvp={"bar": "rt.to_dict_vjp(t, d)"},
    batch="rt.to_dict_vjp(bar, d)",
)
defhelper(
    runtime.to_dict_tangent,
    params=["t", "d"],
    container=True,
    structural=("d",),
    vjp={"t": "rt.to_dict_vjp(g, d)"},
    jvp={"t": "rt.to_dict_tangent(t, d)"},
    batch="rt.to_dict_tangent(t, d)",
)

# d.get(key, default): d's item at key, or the default where d has no such key (a key is the same for every
# example: a dict's keys are its structure)
defhelper(
    runtime.dict_get,
    params=["d", "key", "default=None"],
    container=True,
    view="pick",
    structural=("key",),
    methods=["get"],
    vjp={"d": "rt.dict_get_vjp(g, d, key)", "default": "rt.dict_default_part(g, d, key)"},
    jvp={"d": "rt.dict_get_tangent(t, d, key)", "default": "rt.dict_default_part(t, d, key)"},
    batch="rt.dict_get(d, key, default)",
    batch_needs_same=("key",),
    batch_broadcast=("d", "default"),
)
defhelper(
    runtime.dict_get_vjp,
    params=["bar", "d", "key"],
    container=True,
    structural=("d", "key"),
    vjp={"bar": "rt.dict_get_tangent(g, d, key)"},
    jvp={"bar": "rt.dict_get_vjp(t, d, key)"},
)
defhelper(
    runtime.dict_get_tangent,
    params=["t", "d", "key"],
    container=True,
    structural=("d", "key"),
    vjp={"t": "rt.dict_get_vjp(g, d, key)"},
    jvp={"t": "rt.dict_get_tangent(t, d, key)"},
    batch="rt.dict_get_tangent(t, d, key)",
)
defhelper(
    runtime.dict_default_part,
    params=["part", "d", "key"],
    container=True,
    structural=("d", "key"),
    vjp={"part": "rt.dict_default_part(g, d, key)"},
    jvp={"part": "rt.dict_default_part(t, d, key)"},
    batch="rt.dict_default_part(part, d, key)",
)

# x.item(*index): one element read as a Python number; its derivative is the element's
defhelper(
    runtime.item,
    params=["x", "*index"],
    methods=["item"],
    structural=("index",),
    python_number=True,
    vjp={"x": "rt.item_vjp(g, x, index)"},
    jvp={"x": "rt.item_tangent(t, x, index)"},
    batch="rt.item_batched(x, index)",
    batch_needs_same=("index",),
    examples=[
        Example("a.item() * 3.0", {"a": (1,)}),
        Example("a.item(4) * a.item(1, 0) * a", {"a": (3, 2)}),
        Example("a.item(-1) ** 2", {"a": (3,)}),
    ],
)
defhelper(
    runtime.item_batched,
    params=["x", "index", "axes=1"],
    batch="rt.item_batched(x, index, axes + 1)",
    batch_needs_same=("index", "axes"),
)
defhelper(
    runtime.item_vjp,
    params=["bar", "x", "index"],
    structural=("x", "index"),
    vjp={"bar": "rt.item_tangent(g, x, index)"},
    jvp={"bar": "rt.item_vjp(t, x, index)"},
)
defhelper(
    runtime.item_tangent,
    params=["t", "x", "index"],
    structural=("x", "index"),
    vjp={"t": "rt.item_vjp(g, x, index)"},
    jvp={"t": "rt.item_tangent(t, x, index)"},
)

# template.format(...) and f-strings (the frontend writes f"{x:.3f}" as rt.format_text("{:.3f}", x)): text has no
# derivative; in an `assert` or `raise` message it is formatted only when the check fails
defhelper(
    runtime.format_text,
    params=["template", "*values"],
    nondiff=True,
    methods=["format"],
    batch="rt.format_text(template, *values)",
)

# sorted() of Python numbers or strings (keys, sizes, settings). Of differentiated values it has no rule (the order
# is chosen by the values): np.sort has one, for arrays
defprim("sorted", builtins.sorted, path="sorted", params=["iterable", "key=None", "reverse=False"])

# np.finfo(float).eps, np.iinfo(np.int32).max: read when the function is transformed (their arguments are types)
fold_at_transform(np.finfo, np.iinfo)
