"""Aliasing of views: what each name of a normal-form function may refer to, and what calls share with arguments;
which lists and dicts each name is or holds."""

import math
import warnings

import numpy as np
import pytest
from support import load_module

from transpile.analyses.activity import walk_statements
from transpile.analyses.aliasing import Aliasing, Made, Summary, Vague, index_kinds, summaries
from transpile.analyses.containers import Containers
from transpile.frontend.desugar import desugar_program
from transpile.primitives import registry


def _analyzed(fn):
    program = desugar_program(fn)
    found = summaries(program)
    nf = program.functions[program.entry]
    return Aliasing(nf, found), nf, found


def _at_return(fn, name):
    alias, nf, _ = _analyzed(fn)
    return alias.refs(nf.body[-1], name), alias


def _kinds(alias, refs):
    """The step kinds of each path (or the reason it is vague), as a set."""
    return {path.why if isinstance(path, Vague) else tuple(alias.steps[s].kind for s in path) for _, path in refs}


def views_of_one_array(x):
    y = x.copy()
    v = y[1:]
    w = v[::2]
    r = y[0]
    t = y.T
    z = y
    return np.sum(v) + np.sum(w) + r + np.sum(t) + np.sum(z)


def test_views_and_names_refer_to_their_base():
    (y,), alias = _at_return(views_of_one_array, "y")
    for name, kinds in [("v", ("view",)), ("w", ("view", "view")), ("r", ("elem",)), ("t", ("view",)), ("z", ())]:
        refs = alias.refs(alias.fn.body[-1], name)
        assert {obj for obj, _ in refs} == {y[0]}, name
        assert _kinds(alias, refs) == {kinds}, name
    assert y[1] == () and y[0][0] == "new"


def copies_and_numbers(x):
    y = x * 2.0
    picked = y[[0, 2]]
    masked = y[y > 0.0]
    total = np.sum(y)
    fresh = y.copy()
    return np.sum(picked) + np.sum(masked) + total + np.sum(fresh)


def test_copies_share_nothing_with_their_source():
    (y,), alias = _at_return(copies_and_numbers, "y")
    for name in ("picked", "masked", "total", "fresh"):
        refs = alias.refs(alias.fn.body[-1], name)
        assert y[0] not in {obj for obj, _ in refs}, name


def uncertain(x, k):
    y = x.copy()
    flat = y.reshape(-1)
    maybe = y[k]
    pair = (y, x)
    first = pair[0]
    if k > 0:
        branch = y[:2]
    else:
        branch = y[2:]
    return np.sum(flat) + np.sum(maybe) + np.sum(first) + np.sum(branch)


def test_what_the_analysis_cannot_follow_is_vague_with_a_reason():
    alias, nf, _ = _analyzed(uncertain)
    ret = nf.body[-1]
    assert "memory layout" in " ".join(_kinds(alias, alias.refs(ret, "flat")) - {()})
    assert any("its index may be an integer" in str(k) for k in _kinds(alias, alias.refs(ret, "maybe")))
    assert {("param", "x"), next(iter(alias.refs(ret, "y")))[0]} <= {o for o, _ in alias.refs(ret, "first")}
    assert _kinds(alias, alias.refs(ret, "first")) == {"it is held in a tuple, list or dict"}
    assert _kinds(alias, alias.refs(ret, "branch")) == {("view",)} and len(alias.refs(ret, "branch")) == 2


def loop_views(x):
    rows = np.outer(x, x)
    total = 0.0
    keep = x
    for i in range(3):
        fresh = x * i
        row = rows[i]
        total = total + np.sum(row * fresh * keep)
        keep = fresh
    return total + np.sum(row) + np.sum(fresh)


def test_loops_age_earlier_values_and_rebinding_an_index_makes_a_view_vague():
    alias, nf, _ = _analyzed(loop_views)
    ret = nf.body[-1]
    assert {obj[0] for obj, _ in alias.refs(ret, "fresh")} == {"new"}
    loop = next(s for s in nf.body if s.__class__.__name__ == "For")
    assert {obj[0] for obj, _ in alias.refs(loop.body[1], "fresh")} == {"new"}
    assert {obj[0] for obj, _ in alias.refs(loop.body[1], "keep")} == {"param", "old"}  # x, or the trip before's
    # a trip's `row = rows[i]` is vague on the next trip, which binds i again; after the loop, i and row agree
    assert _kinds(alias, alias.refs(loop.body[0], "row")) == {"`i`, which its index reads, is bound again"}
    assert _kinds(alias, alias.refs(ret, "row")) == {("elem",)}


def test_index_kinds():
    def f(x, k):
        n = len(x)
        m = x.shape[0] - 1
        total = 0.0
        for i in range(n):
            j = i + 1
            total = total + x[j % m]
        mask = x > 0
        picks = [0, 1]
        return total + k + np.sum(x[mask]) + np.sum(x[picks])

    nf = desugar_program(f).functions["f"]
    kinds = index_kinds(nf.body, nf.params)
    assert all(kinds[n] == "int" for n in ("n", "m", "i", "j"))
    assert kinds["mask"] == kinds["picks"] == "array"
    assert "k" not in kinds and "x" not in kinds and "total" not in kinds


def returns_a_row(a):
    return a[0]


def returns_new(a):
    return a * 2.0


def adds_in_place(a, b):
    a += b
    return np.sum(a)


def caller(x):
    y = np.outer(x, x)
    r = returns_a_row(y)
    s = returns_new(y)
    t = adds_in_place(s, x)
    return np.sum(r) + t


def test_summaries_say_what_calls_share_and_change():
    _, _, found = _analyzed(caller)
    assert found["returns_a_row"] == Summary(frozenset({0}))
    assert found["returns_new"] == Summary()
    assert found["adds_in_place"] == Summary(mutates=frozenset({0}))


def other_names(x):
    y = x * 2.0
    a = np.sum(np.sin(y))
    z = y
    v = y[1:]
    z[0] = 7.0
    return a + np.sum(v)


def test_sharers_and_liveness():
    alias, nf, _ = _analyzed(other_names)
    write = next(s for s in walk_statements(nf.body) if s.targets and s.targets[0].__class__.__name__ == "Subscript")
    assert {"y", "v"} <= alias.sharers(write, write.targets[0].value.id)
    assert "a" in alias.live_after[id(write)] and "x" not in alias.live_after[id(write)]


# ---------------------------------------------------------------- arrays held in tuples, lists and dicts
def _depths(refs, obj):
    """How deep (in lists) each reference of `refs` to `obj` holds it."""
    return {path.held if isinstance(path, Vague) else 0 for o, path in refs if o == obj}


def lists_of_arrays(x):
    y = x * 2.0
    xs = [y]
    first = xs[0]
    part = xs[1:]
    more = xs + [x]
    twice = xs * 2
    nested = [xs]
    inner = nested[0]
    copied = xs.copy()
    ys = [y]
    ys.append(x)
    d = {"a": y}
    value = d["a"]
    return np.sum(first) + len(part) + len(more) + len(twice) + len(inner) + len(copied) + len(ys) + np.sum(value)


def test_how_deep_a_list_holds_an_array():
    alias, nf, _ = _analyzed(lists_of_arrays)
    ret = nf.body[-1]
    ((y, _),) = alias.refs(ret, "y")
    expected = {"xs": {1}, "first": {0}, "part": {1}, "more": {1}, "twice": {1}, "nested": {2}, "inner": {1}}
    expected.update({"copied": {1}, "d": {1}, "value": {0}})
    for name, depths in expected.items():
        assert _depths(alias.refs(ret, name), y) == depths, name
    assert {o[0] for o, _ in alias.refs(ret, "more")} >= {"param"}  # x, held by `xs + [x]`
    assert _depths(alias.refs(ret, "ys"), ("param", "x")) == _depths(alias.refs(ret, "ys"), y) == {1}  # append


def made_by(x, k):
    zeros = np.zeros(())
    total = np.sum(x)
    copied = x.copy()
    lst = make_pair(x)
    flat = np.reshape(x, (-1,))
    return zeros + total + np.sum(copied) + len(lst) + np.sum(flat) + k


def make_pair(a):
    return [a, a]


def test_what_made_a_value():
    alias, nf, _ = _analyzed(made_by)
    ret = nf.body[-1]

    def made(name):
        (obj,) = {o for o, path in alias.refs(ret, name) if path == ()}
        return alias.made(obj)

    assert made("zeros").zero_d == "array" and not made("zeros").container  # np.zeros(()) is a 0-d array
    assert made("total").zero_d == ""  # a NumPy scalar
    assert made("copied").zero_d == "either" and made("copied").container  # x.copy() is what x is
    assert made("lst").container  # a user function's result
    assert made("flat").zero_d == "either"
    assert alias.made(("param", "k")).zero_d == "either"


def stores_into_a_list(x):
    y = x * 2.0
    out = np.zeros((2, 5))
    lst = make_pair(x)
    lst[0] = y  # a list holds y itself
    out[0] = y  # an array copies it
    return np.sum(out) + len(lst)


def test_item_assignment_into_what_may_be_a_list_holds_the_value():
    alias, nf, _ = _analyzed(stores_into_a_list)
    ret = nf.body[-1]
    ((y, _),) = alias.refs(ret, "y")
    assert _depths(alias.refs(ret, "lst"), y) == {1}
    assert y not in {o for o, _ in alias.refs(ret, "out")}


# ---------------------------------------------------------------- lists and dicts changed in place
def builds_rows(x):
    out = []
    for i in range(3):
        row = []
        for j in range(2):
            row.append(x[i] * j)
        out.append(row)
    alias = out
    alias.append([x[0]])  # out, which still refers to the list, is not read again
    return alias


def test_containers_a_name_is_or_holds():
    program = desugar_program(builds_rows)
    nf = program.functions[program.entry]
    containers = Containers(nf, summaries(program))
    changes = [(s, containers.changed(s)) for s in walk_statements(nf.body)]
    changes = [(s, c) for s, c in changes if c is not None]
    assert [name for _, (name, _) in changes][:2] == ["row", "out"]
    (row_append, (_, rows)), (out_append, (_, outs)) = changes[:2]
    # a row of an earlier trip, which `out` holds, is not the row this trip appends to
    assert containers.sharing(row_append, rows, {"out"}) == []
    assert containers.sharing(out_append, outs, {"row"}) == []
    last, (name, mine) = changes[-1]
    assert name == "alias" and containers.sharing(last, mine, {"out"}) == ["out"]


# ---------------------------------------------------------------- what the registry says, against NumPy
def _leaves(value):
    return [leaf for item in value for leaf in _leaves(item)] if isinstance(value, (tuple, list)) else [value]


def _registry_examples():
    return [(prim, ex) for prim in registry.all_primitives() for ex in prim.examples]


def _results(example, shape=None):
    """The example's value for random arrays (all of `shape` if given), or None where NumPy refuses them."""
    rng = np.random.default_rng(5)
    values = {n: rng.uniform(0.5, 1.5, s if shape is None else shape) for n, s in example.shapes.items()}
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return values, _leaves(eval(example.expr, {"np": np, "math": math, **values}))
    except Exception:
        return values, None


def _primitives(tmp_path, example):
    names = sorted(example.shapes)
    text = f"import math\n\nimport numpy as np\n\n\ndef f({', '.join(names)}):\n    return {example.expr}\n"
    program = desugar_program(load_module(tmp_path, text).f)
    body = program.functions[program.entry].body
    return [s.value.prim for s in walk_statements(body) if getattr(getattr(s, "value", None), "prim", None)]


def test_every_example_that_shares_memory_uses_a_view(tmp_path):
    """Where NumPy's result shares memory with an argument, some primitive of the example says it may (view=)."""
    for prim, example in _registry_examples():
        values, results = _results(example)
        if results is None or not any(
            isinstance(r, np.ndarray) and np.shares_memory(r, v) for r in results for v in values.values()
        ):
            continue
        kinds = {p.view for p in _primitives(tmp_path, example)}
        assert kinds - {"", "shallow", "items"}, (prim.name, example.expr, kinds)


def test_every_example_that_makes_a_0d_array_says_so(tmp_path):
    """Where NumPy's result is a 0-d array (for 0-d arguments), some primitive of the example says it may be one
    (zero_d=): `v += 1` changes it in place, where it binds a number anew."""
    checked = 0
    for prim, example in _registry_examples():
        _, results = _results(example, shape=())
        if results is None or not any(isinstance(r, np.ndarray) and r.ndim == 0 for r in results):
            continue
        checked += 1
        kinds = {Made.of(p).zero_d for p in _primitives(tmp_path, example)}
        assert kinds - {""}, (prim.name, example.expr)
    assert checked > 5


ZERO_D_MAKERS = [
    "np.zeros(())",
    "np.ones(())",
    "np.empty(())",
    "np.full((), 2.0)",
    "np.zeros_like(np.float64(1.0))",
    "np.ones_like(np.float64(1.0))",
    "np.empty_like(np.float64(1.0))",
    "np.full_like(np.float64(1.0), 2.0)",
    "np.array(1.0)",
    "np.asarray(1.0)",
    "np.copy(1.0)",
    "np.where(True, 1.0, 2.0)",
]


@pytest.mark.parametrize("expr", ZERO_D_MAKERS)
def test_what_the_registry_says_makes_0d_arrays_does(expr):
    made = eval(expr, {"np": np})
    assert isinstance(made, np.ndarray) and made.ndim == 0
    function = eval(expr.partition("(")[0], {"np": np})
    assert registry.lookup(function).zero_d == "array"
